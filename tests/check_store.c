/*
 * check_store.c: tests of the evidence store (src/store) and of the outcome
 * derivation (src/store/outcome.c), on real SQLite files in a fresh mkdtemp
 * directory per test.  Raw sqlite3 calls appear here only to play an
 * outside party (a sqlite3 CLI user trying to change evidence, a damaged
 * disk); every evident write goes through the store API.
 */
#include <check.h>

#include "progress.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "store/outcome.h"
#include "store/store.h"

extern const char ev_schema_sql[];
extern const size_t ev_schema_sql_len;
extern const char ev_migrate2_sql[];
extern const size_t ev_migrate2_sql_len;
extern const char ev_migrate3_sql[];
extern const size_t ev_migrate3_sql_len;
extern const char ev_migrate4_sql[];
extern const size_t ev_migrate4_sql_len;
extern const char ev_migrate5_sql[];
extern const size_t ev_migrate5_sql_len;

static char tmpdir[256];
static char dbpath[300];

/* Fixture: a fresh directory and the store path inside it. */
static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/check_store.XXXXXX", ev_test_tmp());
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    snprintf(dbpath, sizeof dbpath, "%s/evidence.db", tmpdir);
}

/* Removes every file of the fixture directory, then the directory. */
static void teardown(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    char p[600];

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(tmpdir);
}

/* xorshift64*: the tests' seeded generator. */
static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717ULL;
}

/* Opens (creating) the test store or fails the test. */
static ev_store *open_rw(void)
{
    ev_store *s = NULL;
    ev_err e = {{0}};
    ev_status rc = ev_store_open(dbpath, EV_STORE_CREATE, &s, &e);
    ck_assert_msg(rc == EV_OK, "open: %s", e.msg);
    return s;
}

#define OK(call)                                                                                             \
    do {                                                                                                     \
        ev_err e_ = {{0}};                                                                                   \
        ev_status rc_ = (call);                                                                              \
        (void)e_;                                                                                            \
        ck_assert_msg(rc_ == EV_OK, "%s: %s", #call, e_.msg);                                                \
    } while (0)

/* Adds a run, an invocation with its environment and two cases.  OUT:
 * *run, *inv. */
static void add_base(ev_store *s, int64_t *run, int64_t *inv)
{
    static const char proto[] = "{\"seed\": 7}\0tail";
    ev_run_row r = {"ab12", proto,  sizeof proto, "protocols/quick.json", "cpu", 7, "unknown",
                    1,      "cd34", 1000};
    ev_case_row c0 = {0, "reduce_sum", 64, 256, 256, "fp32", 2, "calibration"};
    ev_case_row c1 = {1, "reduce_max", 32, 128, 160, "bf16", 4, "holdout"};
    ev_err e = {{0}};

    ck_assert_int_eq(ev_store_add_run(s, &r, run, &e), EV_OK);
    ck_assert_int_eq(ev_store_add_invocation(s, *run, 2000, 0, "hosthash", inv, &e), EV_OK);
    ck_assert_int_eq(ev_store_add_environment(s, *inv, "prof", "{\"cpu\":1}", &e), EV_OK);
    ck_assert_int_eq(ev_store_add_case(s, *run, &c0, &e), EV_OK);
    ck_assert_int_eq(ev_store_add_case(s, *run, &c1, &e), EV_OK);
}

/* Adds a job.  OUT: the job id (returned). */
static int64_t add_job(ev_store *s, int64_t run, const char *key, const char *phase, int64_t case_index,
                       const char *arm, const char *label, int64_t retry_of, int64_t order)
{
    ev_job_row j = {key, phase, case_index, arm, label, retry_of, order};
    int64_t id = 0;
    ev_err e = {{0}};
    ck_assert_msg(ev_store_add_job(s, run, &j, &id, &e) == EV_OK, "add_job: %s", e.msg);
    return id;
}

/* Adds an attempt.  OUT: the attempt id (returned). */
static int64_t add_attempt(ev_store *s, int64_t job, int64_t n, int64_t inv)
{
    int64_t id = 0;
    ev_err e = {{0}};
    ck_assert_msg(ev_store_add_attempt(s, job, n, inv, 3000 + n, &id, &e) == EV_OK, "add_attempt: %s", e.msg);
    return id;
}

/* A process row that exited 0 with good records. */
static ev_process_row proc_ok(void)
{
    ev_process_row p = {1234, 1, 0, 0, 0, 0, 0, 0, NULL, 9, 1, NULL, "0-3", "", 5000, 4000};
    return p;
}

/* Adds a process row and (when validation >= 0) a 'first' validation with
 * passed = validation. */
static void add_proc(ev_store *s, int64_t att, const ev_process_row *p, int validation)
{
    ev_err e = {{0}};
    ck_assert_msg(ev_store_add_process(s, att, p, &e) == EV_OK, "add_process: %s", e.msg);
    if (validation >= 0) {
        ev_validation_row v = {"first", validation, 0.0, 1e-3, validation ? 0 : 5, "00ff", NULL, 0};
        ck_assert_msg(ev_store_add_validation(s, att, &v, &e) == EV_OK, "add_validation: %s", e.msg);
    }
}

/* Adds a hot sample. */
static void add_hot(ev_store *s, int64_t att, int64_t index, int64_t replays, int64_t ops, double ms)
{
    ev_sample_row r = {"hot", index, replays, ops, ms, -1};
    ev_err e = {{0}};
    ck_assert_msg(ev_store_add_sample(s, att, &r, &e) == EV_OK, "add_sample: %s", e.msg);
}

/* Opens a raw sqlite3 connection on the test store. */
static sqlite3 *raw_open(void)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
    return db;
}

/* Returns the integer answer of a one-row statement on a raw connection. */
static int64_t raw_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v;
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Writes the text answer of a one-row statement into out. */
static void raw_text(sqlite3 *db, const char *sql, char *out, size_t n)
{
    sqlite3_stmt *st = NULL;
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

/* Asserts that sql is refused on db with the append-only message. */
static void raw_refused(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    ck_assert_msg(rc != SQLITE_OK, "not refused: %s", sql);
    ck_assert_msg(msg && strstr(msg, "append-only"), "%s: unexpected message %s", sql, msg ? msg : "(none)");
    sqlite3_free(msg);
}

/* ---- a row collector for queries --------------------------------------- */

typedef struct collect {
    ev_buf text; /* rows as "a|b|c\n" */
    int rows;
    int ncols;
    char names[512];
} collect;

/* Appends the row as text: NULL as "NULL", blobs as "blob:<len>". */
static ev_status collect_row(void *ctx, const ev_row *r)
{
    collect *c = ctx;
    int i, n = ev_row_columns(r);

    if (c->rows == 0) {
        size_t at = 0;
        c->ncols = n;
        for (i = 0; i < n; i++)
            at += (size_t)snprintf(c->names + at, sizeof c->names - at, "%s%s", i ? "," : "",
                                   ev_row_name(r, i));
    }
    for (i = 0; i < n; i++) {
        const char *name = ev_row_name(r, i);
        if (i)
            ev_buf_puts(&c->text, "|");
        if (ev_row_is_null(r, i)) {
            ev_buf_puts(&c->text, "NULL");
        } else if (!strcmp(name, "protocol_bytes") || !strcmp(name, "bytes") || !strcmp(name, "output")) {
            size_t len = 0;
            ck_assert_ptr_nonnull(ev_row_blob(r, i, &len));
            ev_buf_printf(&c->text, "blob:%zu", len);
        } else {
            ev_buf_puts(&c->text, ev_row_text(r, i));
        }
    }
    ev_buf_puts(&c->text, "\n");
    c->rows++;
    return EV_OK;
}

/* Runs query q for run into a fresh collector (freed by the caller). */
static void run_query(ev_store *s, ev_query q, int64_t run, collect *c)
{
    ev_err e = {{0}};
    memset(c, 0, sizeof *c);
    ck_assert_msg(ev_store_query(s, q, run, collect_row, c, &e) == EV_OK, "query %d: %s", (int)q, e.msg);
}

/* Counts the samples of attempt att through the store's own query. */
typedef struct count_ctx {
    int64_t attempt_id;
    int64_t n;
    int64_t max_index;
} count_ctx;

static ev_status count_row(void *ctx, const ev_row *r)
{
    count_ctx *c = ctx;
    if (ev_row_i64(r, 0) == c->attempt_id) {
        c->n++;
        if (ev_row_i64(r, 2) > c->max_index)
            c->max_index = ev_row_i64(r, 2);
    }
    return EV_OK;
}

/* Returns the number of samples of att in run (OUT: *max_index). */
static int64_t count_samples(ev_store *s, int64_t run, int64_t att, int64_t *max_index)
{
    count_ctx c = {att, 0, -1};
    ev_err e = {{0}};
    ck_assert_msg(ev_store_query(s, EV_Q_SAMPLES, run, count_row, &c, &e) == EV_OK, "%s", e.msg);
    if (max_index)
        *max_index = c.max_index;
    return c.n;
}

/* Reads a whole file into a buffer (freed by the caller). */
static void slurp(const char *path, ev_buf *b)
{
    FILE *f = fopen(path, "rb");
    char chunk[4096];
    size_t n;

    ck_assert_ptr_nonnull(f);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ck_assert_int_eq(ev_buf_append(b, chunk, n), EV_OK);
    fclose(f);
}

/* ---- opening, schema, versions ----------------------------------------- */

START_TEST(test_new_store_gets_the_current_schema_version_in_wal_mode)
{
    ev_store *s = open_rw();
    sqlite3 *db;
    char mode[16];

    ev_store_close(s);
    db = raw_open();
    ck_assert_int_eq(raw_int(db, "PRAGMA user_version"), EV_STORE_VERSION);
    raw_text(db, "PRAGMA journal_mode", mode, sizeof mode);
    ck_assert_str_eq(mode, "wal");
    ck_assert_int_eq(raw_int(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"), 23);
    sqlite3_close(db);
    s = open_rw(); /* reopening an existing store migrates nothing */
    ev_store_close(s);
}
END_TEST

START_TEST(test_embedded_schema_equals_db_schema_sql)
{
    ev_buf b = EV_BUF_INIT;
    slurp("db/schema.sql", &b);
    ck_assert_uint_eq(b.len, ev_schema_sql_len);
    ck_assert_int_eq(memcmp(b.data, ev_schema_sql, b.len), 0);
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_embedded_migrations_equal_db_migrate_sql)
{
    static const struct {
        const char *path, *sql;
        const size_t *len;
    } m[] = {
        {"db/migrate-2.sql", ev_migrate2_sql, &ev_migrate2_sql_len},
        {"db/migrate-3.sql", ev_migrate3_sql, &ev_migrate3_sql_len},
        {"db/migrate-4.sql", ev_migrate4_sql, &ev_migrate4_sql_len},
        {"db/migrate-5.sql", ev_migrate5_sql, &ev_migrate5_sql_len},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        ev_buf b = EV_BUF_INIT;
        slurp(m[i].path, &b);
        ck_assert_msg(b.len == *m[i].len && !memcmp(b.data, m[i].sql, b.len), "%s", m[i].path);
        ev_buf_free(&b);
    }
}
END_TEST

/* Counts rows (an ev_store_query callback; ctx: an int). */
static ev_status count_any(void *ctx, const ev_row *r)
{
    (void)r;
    (*(int *)ctx)++;
    return EV_OK;
}

/* A version-1 store (db/schema.sql alone, as every store before shards):
 * read-only it is read as it is, byte for byte unchanged, with no shards;
 * opened writable it is migrated to the current version in one step, its
 * rows kept. */
START_TEST(test_a_version_1_store_is_read_as_it_is_and_migrated_when_opened_writable)
{
    sqlite3 *db;
    ev_store *s = NULL;
    ev_err e = {{0}};
    ev_buf before = EV_BUF_INIT, after = EV_BUF_INIT;
    int rows = 0;
    int64_t run = 0;

    ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, ev_schema_sql, NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_eq(
        sqlite3_exec(db,
                     "PRAGMA user_version = 1; INSERT INTO runs VALUES (1, 'p', x'7b7d', 'p.json', "
                     "'cpu', 1, 'unknown', 1, 't', 5); INSERT INTO invocations VALUES (1, 1, 6, 0, "
                     "'h')",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    slurp(dbpath, &before);
    ck_assert_int_eq(ev_store_open(dbpath, EV_STORE_READONLY, &s, &e), EV_OK);
    ck_assert_int_eq(ev_store_last_run(s, &run, &e), EV_OK);
    ck_assert_int_eq(run, 1);
    ck_assert_int_eq(ev_store_query(s, EV_Q_SHARDS, 1, count_any, &rows, &e), EV_OK);
    ck_assert_int_eq(rows, 0);
    ck_assert_int_eq(ev_store_query(s, EV_Q_INVOCATIONS, 1, count_any, &rows, &e), EV_OK);
    ck_assert_int_eq(rows, 1);
    ev_store_close(s);
    slurp(dbpath, &after);
    ck_assert_uint_eq(before.len, after.len);
    ck_assert_int_eq(memcmp(before.data, after.data, before.len), 0);

    ck_assert_int_eq(ev_store_open(dbpath, 0, &s, &e), EV_OK);
    ck_assert_int_eq(ev_store_add_shard(s, 1, 0, 2, "main", &e), EV_OK);
    ck_assert_int_eq(ev_store_add_shard(s, 1, 1, 2, "main", &e), EV_EDB); /* once per invocation */
    ck_assert_int_eq(ev_store_add_shard(s, 2, 0, 2, "main", &e), EV_EDB); /* no such invocation */
    rows = 0;
    ck_assert_int_eq(ev_store_query(s, EV_Q_SHARDS, 1, count_any, &rows, &e), EV_OK);
    ck_assert_int_eq(rows, 1);
    ev_store_close(s);
    db = raw_open();
    ck_assert_int_eq(raw_int(db, "PRAGMA user_version"), EV_STORE_VERSION);
    ck_assert_int_eq(raw_int(db, "SELECT COUNT(*) FROM runs"), 1);
    ck_assert_int_eq(sqlite3_exec(db, "UPDATE shards SET shard_index = 1", NULL, NULL, NULL),
                     SQLITE_CONSTRAINT);
    ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO shards VALUES (1, 3, 2, 'main')", NULL, NULL, NULL),
                     SQLITE_CONSTRAINT);
    sqlite3_close(db);
    ev_buf_free(&before);
    ev_buf_free(&after);
}
END_TEST

/* A version-2 store (schema.sql and migrate-2.sql, as every store before
 * device records): read-only it is read as it is, byte for byte
 * unchanged, with no device records (and none can be added); opened
 * writable it is migrated to version 3, and its device records are one
 * JSON object per attempt, append-only. */
START_TEST(test_a_version_2_store_is_read_as_it_is_and_gets_device_records_when_migrated)
{
    sqlite3 *db;
    ev_store *s = NULL;
    ev_err e = {{0}};
    ev_buf before = EV_BUF_INIT, after = EV_BUF_INIT;
    int rows = 0;
    int64_t run = 0, inv = 0, job, att, att2;

    s = open_rw();
    add_base(s, &run, &inv);
    job = add_job(s, run, "main/0/default/default", "main", 0, "default", "default", 0, 0);
    att = add_attempt(s, job, 1, inv);
    att2 = add_attempt(s, job, 2, inv);
    ev_store_close(s);
    db = raw_open(); /* back to version 2: the table as migrate-3.sql did not yet make it */
    ck_assert_int_eq(
        sqlite3_exec(db,
                     "DROP TABLE attempt_devices; DROP TABLE sample_checks; DROP TABLE op_checks; DROP TABLE "
                     "op_kept; PRAGMA user_version = 2",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    slurp(dbpath, &before);
    ck_assert_int_eq(ev_store_open(dbpath, EV_STORE_READONLY, &s, &e), EV_OK);
    ck_assert_int_eq(ev_store_version(s), 2);
    ck_assert_int_eq(ev_store_query(s, EV_Q_DEVICES, run, count_any, &rows, &e), EV_OK);
    ck_assert_int_eq(rows, 0);
    ck_assert_int_eq(ev_store_add_device(s, att, "{}", &e), EV_EREADONLY);
    ev_store_close(s);
    slurp(dbpath, &after);
    ck_assert_uint_eq(before.len, after.len);
    ck_assert_int_eq(memcmp(before.data, after.data, before.len), 0);

    ck_assert_int_eq(ev_store_open(dbpath, 0, &s, &e), EV_OK);
    ck_assert_int_eq(ev_store_version(s), EV_STORE_VERSION);
    ck_assert_int_eq(ev_store_add_device(s, att, "{\"rotation\":null}", &e), EV_OK);
    ck_assert_int_eq(ev_store_add_device(s, att, "{}", &e), EV_EDB);       /* once per attempt */
    ck_assert_int_eq(ev_store_add_device(s, att2, "[1]", &e), EV_EDB);     /* not an object */
    ck_assert_int_eq(ev_store_add_device(s, att2, "{\"a\":", &e), EV_EDB); /* not JSON */
    ck_assert_int_eq(ev_store_add_device(s, att + 99, "{}", &e), EV_EDB);  /* no such attempt */
    rows = 0;
    ck_assert_int_eq(ev_store_query(s, EV_Q_DEVICES, run, count_any, &rows, &e), EV_OK);
    ck_assert_int_eq(rows, 1);
    ev_store_close(s);
    db = raw_open();
    ck_assert_int_eq(raw_int(db, "PRAGMA user_version"), EV_STORE_VERSION);
    ck_assert_int_eq(sqlite3_exec(db, "UPDATE attempt_devices SET json = '{}'", NULL, NULL, NULL),
                     SQLITE_CONSTRAINT);
    ck_assert_int_eq(sqlite3_exec(db, "DELETE FROM attempt_devices", NULL, NULL, NULL), SQLITE_CONSTRAINT);
    ck_assert_int_eq(
        sqlite3_exec(db, "INSERT OR REPLACE INTO attempt_devices VALUES (1, '{}')", NULL, NULL, NULL),
        SQLITE_CONSTRAINT);
    sqlite3_close(db);
    ev_buf_free(&before);
    ev_buf_free(&after);
}
END_TEST

/* Schema 4 (db/migrate-4.sql): a version-3 store read as it is has no
 * sample checks and is not rewritten; opened writable it is migrated;
 * the checks are append-only, once per (attempt, set, sample), of set 0
 * or 1, with their bytes. */
START_TEST(test_a_version_3_store_is_read_as_it_is_and_migrated_to_sample_checks)
{
    ev_store *s;
    sqlite3 *db;
    ev_err e = {{0}};
    ev_buf before = EV_BUF_INIT, after = EV_BUF_INIT;
    int rows = 0;
    int64_t run = 0, inv = 0, job, att;
    static const unsigned char out[4] = {1, 2, 3, 4};
    ev_sample_check_row ck = {0, 2, 1, 0.0, 0.5, 0, "cc77", out, sizeof out};

    s = open_rw();
    add_base(s, &run, &inv);
    job = add_job(s, run, "main/0/default/default", "main", 0, "default", "default", 0, 0);
    att = add_attempt(s, job, 1, inv);
    ev_store_close(s);
    db = raw_open(); /* back to version 3: the table as migrate-4.sql did not yet make it */
    ck_assert_int_eq(
        sqlite3_exec(db,
                     "DROP TABLE sample_checks; DROP TABLE op_checks; DROP TABLE op_kept; PRAGMA "
                     "user_version = 3",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    slurp(dbpath, &before);
    ck_assert_int_eq(ev_store_open(dbpath, EV_STORE_READONLY, &s, &e), EV_OK);
    ck_assert_int_eq(ev_store_version(s), 3);
    ck_assert_int_eq(ev_store_query(s, EV_Q_SAMPLE_CHECKS, run, count_any, &rows, &e), EV_OK);
    ck_assert_int_eq(rows, 0);
    ck_assert_int_eq(ev_store_add_sample_check(s, att, &ck, &e), EV_EREADONLY);
    ev_store_close(s);
    slurp(dbpath, &after);
    ck_assert_uint_eq(before.len, after.len);
    ck_assert_int_eq(memcmp(before.data, after.data, before.len), 0);

    ck_assert_int_eq(ev_store_open(dbpath, 0, &s, &e), EV_OK);
    ck_assert_int_eq(ev_store_version(s), EV_STORE_VERSION);
    ck_assert_msg(ev_store_add_sample_check(s, att, &ck, &e) == EV_OK, "%s", e.msg);
    ck_assert_int_eq(ev_store_add_sample_check(s, att, &ck, &e), EV_EDB); /* once per (set, sample) */
    ck.input_set = 1;
    ck_assert_int_eq(ev_store_add_sample_check(s, att, &ck, &e), EV_OK);
    ck.input_set = 2;
    ck_assert_int_eq(ev_store_add_sample_check(s, att, &ck, &e), EV_EDB); /* sets 0 and 1 only */
    ck.input_set = 0;
    ck.after_sample = -2;
    ck_assert_int_eq(ev_store_add_sample_check(s, att, &ck, &e), EV_EDB); /* -1 is the last sample */
    ck.after_sample = 5;
    ck_assert_int_eq(ev_store_add_sample_check(s, att + 99, &ck, &e), EV_EDB); /* no such attempt */
    rows = 0;
    ck_assert_int_eq(ev_store_query(s, EV_Q_SAMPLE_CHECKS, run, count_any, &rows, &e), EV_OK);
    ck_assert_int_eq(rows, 2);
    ev_store_close(s);
    db = raw_open();
    ck_assert_int_eq(raw_int(db, "PRAGMA user_version"), EV_STORE_VERSION);
    ck_assert_int_eq(sqlite3_exec(db, "UPDATE sample_checks SET passed = 0", NULL, NULL, NULL),
                     SQLITE_CONSTRAINT);
    ck_assert_int_eq(sqlite3_exec(db, "DELETE FROM sample_checks", NULL, NULL, NULL), SQLITE_CONSTRAINT);
    ck_assert_int_eq(
        sqlite3_exec(db,
                     "INSERT OR REPLACE INTO sample_checks VALUES (1, 0, 2, 0, 0.0, 0.5, 3, 'x', "
                     "x'00')",
                     NULL, NULL, NULL),
        SQLITE_CONSTRAINT);
    sqlite3_close(db);
    ev_buf_free(&before);
    ev_buf_free(&after);
}
END_TEST

/* Schema 5 (db/migrate-5.sql): a version-4 store read as it is has no op
 * checks or kept outputs and is not rewritten (none can be added);
 * opened writable it is migrated; an op check is once per (attempt,
 * timing, sample), of a hot or cold sample; a kept output once per
 * attempt, with its bytes; both append-only. */
START_TEST(test_a_version_4_store_is_read_as_it_is_and_migrated_to_op_checks)
{
    ev_store *s;
    sqlite3 *db;
    ev_err e = {{0}};
    ev_buf before = EV_BUF_INIT, after = EV_BUF_INIT;
    int rows = 0;
    int64_t run = 0, inv = 0, job, att;
    static const unsigned char out[4] = {1, 2, 3, 4};
    ev_op_check_row oc = {"hot", 0, 12, 3, 100, 17, 100, "0123456789abcdef", 1};
    ev_op_kept_row ok = {7, 12, 1, 0.0, 0.5, 0, "cc77", out, sizeof out};

    s = open_rw();
    add_base(s, &run, &inv);
    job = add_job(s, run, "main/0/default/default", "main", 0, "default", "default", 0, 0);
    att = add_attempt(s, job, 1, inv);
    ev_store_close(s);
    db = raw_open(); /* back to version 4: the tables as migrate-5.sql did not yet make them */
    ck_assert_int_eq(sqlite3_exec(db, "DROP TABLE op_checks; DROP TABLE op_kept; PRAGMA user_version = 4",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    slurp(dbpath, &before);
    ck_assert_int_eq(ev_store_open(dbpath, EV_STORE_READONLY, &s, &e), EV_OK);
    ck_assert_int_eq(ev_store_version(s), 4);
    ck_assert_int_eq(ev_store_query(s, EV_Q_OP_CHECKS, run, count_any, &rows, &e), EV_OK);
    ck_assert_int_eq(ev_store_query(s, EV_Q_OP_KEPT, run, count_any, &rows, &e), EV_OK);
    ck_assert_int_eq(rows, 0);
    ck_assert_int_eq(ev_store_add_op_check(s, att, &oc, &e), EV_EREADONLY);
    ck_assert_int_eq(ev_store_add_op_kept(s, att, &ok, &e), EV_EREADONLY);
    ev_store_close(s);
    slurp(dbpath, &after);
    ck_assert_uint_eq(before.len, after.len);
    ck_assert_int_eq(memcmp(before.data, after.data, before.len), 0);

    ck_assert_int_eq(ev_store_open(dbpath, 0, &s, &e), EV_OK);
    ck_assert_int_eq(ev_store_version(s), EV_STORE_VERSION); /* 4 -> 5 -> 6 (no table: plan.h) */
    ck_assert_msg(ev_store_add_op_check(s, att, &oc, &e) == EV_OK, "%s", e.msg);
    ck_assert_int_eq(ev_store_add_op_check(s, att, &oc, &e), EV_EDB); /* once per (timing, sample) */
    oc.timing = "cold";
    ck_assert_int_eq(ev_store_add_op_check(s, att, &oc, &e), EV_OK);
    oc.timing = "warm";
    ck_assert_int_eq(ev_store_add_op_check(s, att, &oc, &e), EV_EDB); /* hot or cold only */
    oc.timing = "hot";
    oc.sample_index = 1;
    oc.replays = 0;
    ck_assert_int_eq(ev_store_add_op_check(s, att, &oc, &e), EV_EDB); /* a sample runs a replay at least */
    oc.replays = 3;
    ck_assert_int_eq(ev_store_add_op_check(s, att + 99, &oc, &e), EV_EDB); /* no such attempt */
    ck_assert_msg(ev_store_add_op_kept(s, att, &ok, &e) == EV_OK, "%s", e.msg);
    ck_assert_int_eq(ev_store_add_op_kept(s, att, &ok, &e), EV_EDB); /* once per attempt */
    rows = 0;
    ck_assert_int_eq(ev_store_query(s, EV_Q_OP_CHECKS, run, count_any, &rows, &e), EV_OK);
    ck_assert_int_eq(rows, 2);
    rows = 0;
    ck_assert_int_eq(ev_store_query(s, EV_Q_OP_KEPT, run, count_any, &rows, &e), EV_OK);
    ck_assert_int_eq(rows, 1);
    ev_store_close(s);
    db = raw_open();
    ck_assert_int_eq(raw_int(db, "PRAGMA user_version"), EV_STORE_VERSION);
    ck_assert_int_eq(sqlite3_exec(db, "UPDATE op_checks SET passed = 0", NULL, NULL, NULL),
                     SQLITE_CONSTRAINT);
    ck_assert_int_eq(sqlite3_exec(db, "DELETE FROM op_checks", NULL, NULL, NULL), SQLITE_CONSTRAINT);
    ck_assert_int_eq(sqlite3_exec(db, "UPDATE op_kept SET passed = 0", NULL, NULL, NULL), SQLITE_CONSTRAINT);
    ck_assert_int_eq(sqlite3_exec(db, "DELETE FROM op_kept", NULL, NULL, NULL), SQLITE_CONSTRAINT);
    ck_assert_int_eq(
        sqlite3_exec(db, "INSERT OR REPLACE INTO op_kept VALUES (1, 7, 12, 1, 0.0, 0.5, 0, 'x', x'00')", NULL,
                     NULL, NULL),
        SQLITE_CONSTRAINT);
    sqlite3_close(db);
    ev_buf_free(&before);
    ev_buf_free(&after);
}
END_TEST

START_TEST(test_newer_schema_version_is_refused)
{
    ev_store *s = open_rw();
    sqlite3 *db;
    ev_err e = {{0}};

    ev_store_close(s);
    db = raw_open();
    char sql[64], want[32];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", EV_STORE_VERSION + 1);
    snprintf(want, sizeof want, "version %d", EV_STORE_VERSION + 1);
    ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    s = NULL;
    ck_assert_int_eq(ev_store_open(dbpath, 0, &s, &e), EV_EUNSUPPORTED);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(e.msg, want) && strstr(e.msg, "newer"), "%s", e.msg);
}
END_TEST

START_TEST(test_foreign_database_is_refused)
{
    sqlite3 *db = NULL;
    ev_store *s = NULL;
    ev_err e = {{0}};

    ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE t (x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    ck_assert_int_eq(ev_store_open(dbpath, EV_STORE_CREATE, &s, &e), EV_EFORMAT);
    ck_assert_msg(strstr(e.msg, "not an evident store"), "%s", e.msg);
}
END_TEST

START_TEST(test_missing_file_without_create_is_an_io_error)
{
    ev_store *s = NULL;
    ev_err e = {{0}};
    ck_assert_int_eq(ev_store_open(dbpath, 0, &s, &e), EV_EIO);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(e.msg, dbpath), "%s", e.msg);
    ck_assert_int_eq(access(dbpath, F_OK), -1);
}
END_TEST

START_TEST(test_foreign_keys_are_enforced)
{
    ev_store *s = open_rw();
    int64_t run, inv, id = 0;
    ev_job_row j = {"main/9/default/default", "main", 9, "default", "default", 0, 0};
    ev_err e = {{0}};

    add_base(s, &run, &inv);
    ck_assert_int_eq(ev_store_add_job(s, run, &j, &id, &e), EV_EDB); /* case 9 does not exist */
    ck_assert_msg(strstr(e.msg, "FOREIGN KEY"), "%s", e.msg);
    ck_assert_int_eq(id, 0);
    ck_assert_int_eq(ev_store_add_attempt(s, 77, 1, inv, 1, &id, &e), EV_EDB);
    ev_store_close(s);
}
END_TEST

/* The store's writer holds the vocabulary's rule (no CHECK lists it in the
 * schema): a case's op, dtype or role and a job's phase outside it are
 * refused with the word and the list, and nothing is written. */
START_TEST(test_a_word_outside_the_vocabulary_is_refused_by_the_writer)
{
    ev_store *s = open_rw();
    int64_t run, inv, id = 0;
    ev_case_row bad_op = {2, "reduce_prod", 8, 8, 8, "fp32", 2, "calibration"};
    ev_case_row bad_dt = {2, "reduce_sum", 8, 8, 8, "fp64", 2, "calibration"};
    ev_case_row bad_role = {2, "reduce_sum", 8, 8, 8, "fp32", 2, "training"};
    ev_job_row bad_phase = {"warmup/0/default/initial", "warmup", 0, "default", "initial", 0, 0};
    ev_err e = {{0}};

    add_base(s, &run, &inv);
    ck_assert_int_eq(ev_store_add_case(s, run, &bad_op, &e), EV_EINVAL);
    ck_assert_msg(strstr(e.msg, "op 'reduce_prod' is not one of reduce_sum, reduce_max"), "%s", e.msg);
    ck_assert_int_eq(ev_store_add_case(s, run, &bad_dt, &e), EV_EINVAL);
    ck_assert_msg(strstr(e.msg, "dtype 'fp64' is not one of fp32, fp16, bf16"), "%s", e.msg);
    ck_assert_int_eq(ev_store_add_case(s, run, &bad_role, &e), EV_EINVAL);
    ck_assert_msg(strstr(e.msg, "role 'training'"), "%s", e.msg);
    ck_assert_int_eq(ev_store_add_job(s, run, &bad_phase, &id, &e), EV_EINVAL);
    ck_assert_msg(strstr(e.msg, "phase 'warmup' is not one of main, policy, rescue, recheck"), "%s", e.msg);
    ck_assert_int_eq(id, 0);
    ev_store_close(s);

    sqlite3 *db = raw_open();
    ck_assert_int_eq(raw_int(db, "SELECT COUNT(*) FROM cases"), 2);
    ck_assert_int_eq(raw_int(db, "SELECT COUNT(*) FROM jobs"), 0);
    /* and the schema spells no word of the vocabulary: the writer's rule is the one */
    ck_assert_int_eq(raw_int(db,
                             "SELECT COUNT(*) FROM sqlite_master WHERE sql LIKE '%reduce_sum%' OR sql LIKE "
                             "'%''fp32''%' OR sql LIKE '%''holdout''%' OR sql LIKE '%''recheck''%'"),
                     0);
    sqlite3_close(db);
}
END_TEST

/* A store created before the vocabulary held the rule (a committed one,
 * whose schema still lists the two ops it knew in a CHECK) takes the words
 * it knew, and refuses an op it did not know with what to do, not with
 * SQLite's words alone. */
START_TEST(test_a_store_created_before_an_op_existed_refuses_it_with_what_to_do)
{
    char cmd[700];
    ev_store *s = NULL;
    ev_err e = {{0}};
    int64_t run = 0, inv;
    snprintf(cmd, sizeof cmd, "cp receipts/h200-gpus/evidence.db '%s'", dbpath);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_msg(ev_store_open(dbpath, 0, &s, &e) == EV_OK, "open: %s", e.msg); /* migrated in the copy */
    static const char proto[] = "{\"seed\": 7}";
    ev_run_row r = {"ab12", proto, sizeof proto - 1, "p.json", "cpu", 7, "unknown", 1, "cd34", 1000};
    ev_case_row sum = {0, "reduce_sum", 8, 8, 8, "fp32", 2, "calibration"};
    ev_case_row min = {1, "reduce_min", 8, 8, 8, "fp32", 2, "calibration"};
    ck_assert_int_eq(ev_store_add_run(s, &r, &run, &e), EV_OK);
    ck_assert_int_eq(ev_store_add_invocation(s, run, 2000, 0, "h", &inv, &e), EV_OK);
    ck_assert_msg(ev_store_add_case(s, run, &sum, &e) == EV_OK, "%s", e.msg);
    ck_assert_int_eq(ev_store_add_case(s, run, &min, &e), EV_EDB);
    ck_assert_msg(strstr(e.msg, "did not know every op") && strstr(e.msg, "new store"), "%s", e.msg);
    ev_store_close(s);
}
END_TEST

/* ---- append-only ------------------------------------------------------- */

/* Builds a store with one job, attempt, process, sample and run status. */
static void build_small(int64_t *run_out)
{
    ev_store *s = open_rw();
    int64_t run, inv, job, att;
    ev_process_row p = proc_ok();
    ev_err e = {{0}};

    add_base(s, &run, &inv);
    job = add_job(s, run, "main/0/default/default", "main", 0, "default", "default", 0, 0);
    att = add_attempt(s, job, 1, inv);
    add_proc(s, att, &p, 1);
    add_hot(s, att, 0, 10, 100, 2.5);
    ck_assert_int_eq(ev_store_set_run_status(s, run, "completed", NULL, 9000, &e), EV_OK);
    ev_store_close(s);
    if (run_out)
        *run_out = run;
}

START_TEST(test_update_on_samples_is_refused)
{
    sqlite3 *db;
    build_small(NULL);
    db = raw_open();
    raw_refused(db, "UPDATE samples SET elapsed_ms = 1.0");
    ck_assert_int_eq(raw_int(db, "SELECT COUNT(*) FROM samples WHERE elapsed_ms = 2.5"), 1);
    sqlite3_close(db);
}
END_TEST

START_TEST(test_delete_on_samples_is_refused)
{
    sqlite3 *db;
    build_small(NULL);
    db = raw_open();
    raw_refused(db, "DELETE FROM samples");
    ck_assert_int_eq(raw_int(db, "SELECT COUNT(*) FROM samples WHERE elapsed_ms = 2.5"), 1);
    sqlite3_close(db);
}
END_TEST

START_TEST(test_insert_or_replace_on_samples_is_refused_with_or_without_recursive_triggers)
{
    sqlite3 *db;
    int pass;

    build_small(NULL);
    db = raw_open();
    for (pass = 0; pass < 2; pass++) {
        /* pass 0: a plain sqlite3 CLI session (recursive_triggers off). */
        if (pass == 1)
            ck_assert_int_eq(sqlite3_exec(db, "PRAGMA recursive_triggers = ON", NULL, NULL, NULL), SQLITE_OK);
        raw_refused(db, "INSERT OR REPLACE INTO samples VALUES (1, 'hot', 0, 10, 100, 9.0, NULL)");
        raw_refused(db, "REPLACE INTO samples VALUES (1, 'hot', 0, 10, 100, 9.0, NULL)");
        raw_refused(db, "INSERT INTO samples VALUES (1, 'hot', 0, 10, 100, 9.0, NULL) "
                        "ON CONFLICT DO UPDATE SET elapsed_ms = 9.0");
        raw_refused(db, "UPDATE OR REPLACE samples SET sample_index = 0");
        ck_assert_int_eq(raw_int(db, "SELECT COUNT(*) FROM samples"), 1);
        ck_assert_int_eq(raw_int(db, "SELECT COUNT(*) FROM samples WHERE elapsed_ms = 2.5"), 1);
    }
    sqlite3_close(db);
}
END_TEST

START_TEST(test_jobs_processes_and_run_status_refuse_update_delete_and_replace)
{
    sqlite3 *db;
    build_small(NULL);
    db = raw_open();
    raw_refused(db, "UPDATE jobs SET label = 'x'");
    raw_refused(db, "DELETE FROM jobs");
    raw_refused(db, "INSERT OR REPLACE INTO jobs VALUES (1, 1, 'other', 'main', 0, 'a', 'l', NULL, 5)");
    raw_refused(db,
                "INSERT OR REPLACE INTO jobs VALUES (7, 1, 'main/0/default/default', 'main', 0, 'a', 'l', "
                "NULL, 5)"); /* conflicts on the UNIQUE job_key only */
    raw_refused(db, "UPDATE processes SET exit_code = 1");
    raw_refused(db, "DELETE FROM processes");
    raw_refused(db,
                "INSERT OR REPLACE INTO processes VALUES (1, 1, 3, NULL, 0, 0, 0, NULL, 0, 1, NULL, '', '', "
                "0, 0)");
    raw_refused(db, "UPDATE run_status SET status = 'failed'");
    raw_refused(db, "DELETE FROM run_status");
    raw_refused(db, "INSERT OR REPLACE INTO run_status VALUES (1, 'failed', NULL, 1)");
    raw_refused(db, "DELETE FROM runs");
    ck_assert_int_eq(raw_int(db, "SELECT COUNT(*) FROM jobs WHERE label = 'default' AND plan_order = 0"), 1);
    ck_assert_int_eq(raw_int(db, "SELECT exit_code FROM processes"), 0);
    ck_assert_int_eq(raw_int(db, "SELECT COUNT(*) FROM run_status WHERE status = 'completed'"), 1);
    sqlite3_close(db);
}
END_TEST

START_TEST(test_run_status_cannot_be_set_twice)
{
    int64_t run;
    ev_store *s;
    ev_err e = {{0}};
    collect c;

    build_small(&run);
    s = open_rw();
    ck_assert_int_eq(ev_store_set_run_status(s, run, "failed", "failed-after-rescue", 9999, &e), EV_EDB);
    ck_assert_msg(strstr(e.msg, "append-only"), "%s", e.msg);
    run_query(s, EV_Q_RUN_STATUS, run, &c);
    ck_assert_str_eq(c.text.data, "completed|NULL|9000\n");
    ev_buf_free(&c.text);
    ev_store_close(s);
}
END_TEST

/* ---- outcomes ---------------------------------------------------------- */

typedef struct outcome_case {
    int64_t attempt_id;
    ev_process_facts f;
} outcome_case;

typedef struct outcome_check {
    const outcome_case *cases;
    int n, seen;
    int classes[EV_OUT_COUNT];
} outcome_check;

/* Compares one row of EV_Q_OUTCOMES with ev_outcome_derive of its facts. */
static ev_status outcome_row(void *ctx, const ev_row *r)
{
    outcome_check *c = ctx;
    const outcome_case *k = &c->cases[c->seen];
    ev_outcome o = ev_outcome_derive(&k->f), parsed;

    ck_assert_int_lt(c->seen, c->n);
    ck_assert_int_eq(ev_row_i64(r, 0), k->attempt_id);
    ck_assert_msg(!strcmp(ev_row_text(r, 3), ev_outcome_name(o)),
                  "attempt %lld: view says %s, ev_outcome_derive says %s (exit %d/%lld sig %d to %d int %d "
                  "skip %d rec %d val %d proc %d)",
                  (long long)k->attempt_id, ev_row_text(r, 3), ev_outcome_name(o), k->f.has_exit,
                  (long long)k->f.exit_code, k->f.has_signal, k->f.timed_out, k->f.interrupted, k->f.skipped,
                  k->f.records_ok, k->f.validation_failed, k->f.has_process);
    ck_assert_int_eq(ev_outcome_parse(ev_row_text(r, 3), &parsed), 0);
    ck_assert_int_eq(parsed, o);
    c->classes[o]++;
    c->seen++;
    return EV_OK;
}

START_TEST(test_attempt_outcomes_view_agrees_with_ev_outcome_derive_for_every_combination)
{
    enum { EXIT_STATES = 4 }; /* exit 0, exit 3, signal 9, neither */
    outcome_case cases[1 + EXIT_STATES * 32];
    ev_store *s = open_rw();
    int64_t run, inv, job;
    int n = 0, st, bits, i;
    outcome_check chk;
    ev_err e = {{0}};

    add_base(s, &run, &inv);
    OK(ev_store_begin(s, &e_));
    job = add_job(s, run, "main/0/default/default", "main", 0, "default", "default", 0, 0);
    /* No process row at all (a supervisor crash). */
    cases[n].attempt_id = add_attempt(s, job, 1, inv);
    memset(&cases[n].f, 0, sizeof cases[n].f);
    n++;
    for (st = 0; st < EXIT_STATES; st++) {
        for (bits = 0; bits < 32; bits++) {
            ev_process_row p = proc_ok();
            ev_process_facts *f = &cases[n].f;
            memset(f, 0, sizeof *f);
            f->has_process = 1;
            f->has_exit = p.has_exit = st <= 1;
            f->exit_code = p.exit_code = st == 1 ? 3 : 0;
            f->has_signal = p.has_signal = st == 2;
            f->signal = p.signal = st == 2 ? 9 : 0;
            f->timed_out = p.timed_out = bits & 1;
            f->interrupted = p.interrupted = (bits >> 1) & 1;
            f->skipped = p.skipped = (bits >> 2) & 1;
            f->records_ok = p.records_ok = (bits >> 3) & 1;
            f->validation_failed = (bits >> 4) & 1;
            p.skip_reason = p.skipped ? "no torch here" : NULL;
            p.protocol_error = p.records_ok ? NULL : "no end record";
            cases[n].attempt_id = add_attempt(s, job, n + 1, inv);
            add_proc(s, cases[n].attempt_id, &p, f->validation_failed ? 0 : 1);
            if (f->validation_failed) { /* a passing 'final' beside the failing 'first' */
                ev_validation_row v = {"final", 1, 0.0, 1e-3, 0, "00ff", NULL, 0};
                OK(ev_store_add_validation(s, cases[n].attempt_id, &v, &e_));
            }
            n++;
        }
    }
    OK(ev_store_commit(s, &e_));
    memset(&chk, 0, sizeof chk);
    chk.cases = cases;
    chk.n = n;
    ck_assert_int_eq(ev_store_query(s, EV_Q_OUTCOMES, run, outcome_row, &chk, &e), EV_OK);
    ck_assert_int_eq(chk.seen, n);
    for (i = 0; i < EV_OUT_COUNT; i++)
        ck_assert_msg(chk.classes[i] > 0, "no attempt of class %s", ev_outcome_name((ev_outcome)i));
    printf("check_store: %d attempts compared view vs ev_outcome_derive\n", n);
    ev_store_close(s);
}
END_TEST

START_TEST(test_outcome_names_parse_and_retryable_set)
{
    ev_outcome o;
    int i;
    for (i = 0; i < EV_OUT_COUNT; i++) {
        ck_assert_int_eq(ev_outcome_parse(ev_outcome_name((ev_outcome)i), &o), 0);
        ck_assert_int_eq(o, i);
    }
    ck_assert_int_eq(ev_outcome_parse("Completed", &o), -1);
    ck_assert_int_eq(ev_outcome_parse(NULL, &o), -1);
    ck_assert_str_eq(ev_outcome_name(EV_OUT_COUNT), "unknown");
    ck_assert_int_eq(ev_outcome_retryable(EV_OUT_FAILED_EXIT), 1);
    ck_assert_int_eq(ev_outcome_retryable(EV_OUT_FAILED_SIGNAL), 1);
    ck_assert_int_eq(ev_outcome_retryable(EV_OUT_FAILED_TIMEOUT), 1);
    ck_assert_int_eq(ev_outcome_retryable(EV_OUT_FAILED_PROTOCOL), 1);
    ck_assert_int_eq(ev_outcome_retryable(EV_OUT_FAILED_VALIDATION), 0);
    ck_assert_int_eq(ev_outcome_retryable(EV_OUT_SKIPPED), 0);
    ck_assert_int_eq(ev_outcome_retryable(EV_OUT_INTERRUPTED), 0);
    ck_assert_int_eq(ev_outcome_retryable(EV_OUT_COMPLETED), 0);
}
END_TEST

/* What a job left running is written after the attempt's own reason and
 * read back apart from it: the supervisor writes protocol_error with
 * ev_leftover_reason, the verifier holds only the own part to the sample
 * rules (ev_protocol_error_own_len). */
START_TEST(test_a_leftover_note_follows_the_attempts_own_reason_and_is_read_apart_from_it)
{
    char out[512];
    static const char rule[] = "protocol rule: 1 hot samples outside the wide band [5, 80] ms";
    ev_leftover_reason(rule, "ev-orphan (pid 12)", out, sizeof out);
    ck_assert_msg(!strncmp(out, rule, strlen(rule)) && strstr(out, EV_LEFTOVER_NOTE "ev-orphan (pid 12)"),
                  "%s", out);
    ck_assert_uint_eq(ev_protocol_error_own_len(out), strlen(rule));
    ev_leftover_reason("", "sleep (pid 7, 3 threads)", out, sizeof out);
    ck_assert_msg(!strncmp(out, EV_LEFTOVER_NOTE, strlen(EV_LEFTOVER_NOTE)), "%s", out);
    ck_assert_uint_eq(ev_protocol_error_own_len(out), 0);
    ck_assert_uint_eq(ev_protocol_error_own_len(rule), strlen(rule));
}
END_TEST

/* ---- durability -------------------------------------------------------- */

/* The crash test's writer: commits samples 0, 1, 2, ... of attempt att
 * through the store and reports each committed index on fd.  Never
 * returns. */
static void crash_writer(int64_t att, int fd)
{
    ev_store *s = NULL;
    ev_err e;
    int64_t i;

    if (ev_store_open(dbpath, 0, &s, &e) != EV_OK)
        _exit(3);
    for (i = 0; i < 1000000; i++) {
        ev_sample_row r = {"hot", i, 1 + i, 100, 0.5 + (double)i, -1};
        if (ev_store_add_sample(s, att, &r, &e) != EV_OK)
            _exit(4);
        if (write(fd, &i, sizeof i) != (ssize_t)sizeof i)
            _exit(5);
    }
    _exit(0);
}

/* Busy-waits ns nanoseconds on the monotonic clock (timing, not sleeping). */
static void spin_ns(int64_t ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < ns);
}

START_TEST(test_committed_samples_survive_sigkill_at_random_moments)
{
    enum { TRIALS = 60 };
    uint64_t rng = 0x5eed5eedULL;
    ev_store *s = open_rw();
    int64_t run, inv, job, reported_total = 0;
    int trial, killed_mid = 0;

    add_base(s, &run, &inv);
    job = add_job(s, run, "main/0/default/default", "main", 0, "default", "default", 0, 0);
    ev_store_close(s);
    for (trial = 0; trial < TRIALS; trial++) {
        int fds[2], status;
        int64_t att, reported = -1, idx, stored, max_index, want = (int64_t)(rng_next(&rng) % 12);
        int64_t delay = (int64_t)(rng_next(&rng) % 3000000);
        pid_t pid;
        sqlite3 *db;
        char ok[64];

        s = open_rw();
        att = add_attempt(s, job, trial + 1, inv);
        ev_store_close(s);
        ck_assert_int_eq(pipe(fds), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            close(fds[0]);
            crash_writer(att, fds[1]);
        }
        close(fds[1]);
        /* Wait for a random number of reported commits, then a random delay. */
        while (reported < want && read(fds[0], &idx, sizeof idx) == (ssize_t)sizeof idx) {
            ck_assert_int_eq(idx, reported + 1);
            reported = idx;
        }
        spin_ns(delay);
        kill(pid, SIGKILL);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "writer ended otherwise: %d",
                      status);
        while (read(fds[0], &idx, sizeof idx) == (ssize_t)sizeof idx) {
            ck_assert_int_eq(idx, reported + 1);
            reported = idx;
        }
        close(fds[0]);
        /* Every reported sample is there; at most one more (committed, not yet reported). */
        s = open_rw();
        stored = count_samples(s, run, att, &max_index);
        ev_store_close(s);
        ck_assert_msg(stored >= reported + 1 && stored <= reported + 2,
                      "trial %d: reported 0..%lld, stored %lld", trial, (long long)reported,
                      (long long)stored);
        ck_assert_int_eq(max_index, stored - 1);
        if (stored == reported + 2)
            killed_mid++;
        reported_total += reported + 1;
        db = raw_open();
        raw_text(db, "PRAGMA integrity_check", ok, sizeof ok);
        ck_assert_str_eq(ok, "ok");
        sqlite3_close(db);
    }
    printf("check_store: crash test: %d SIGKILL trials, %lld reported commits all present, %d kills between "
           "commit and report\n",
           TRIALS, (long long)reported_total, killed_mid);
}
END_TEST

START_TEST(test_full_disk_gives_efull_and_leaves_no_partial_record)
{
    enum { BATCH = 40 };
    ev_store *s = open_rw();
    int64_t run, inv, job, att, before, after, batches = 0;
    ev_sample_row rows[BATCH];
    ev_status rc = EV_OK;
    ev_err e = {{0}};
    sqlite3 *db;
    char ok[64];
    int i;

    add_base(s, &run, &inv);
    job = add_job(s, run, "main/0/default/default", "main", 0, "default", "default", 0, 0);
    att = add_attempt(s, job, 1, inv);
    ck_assert_int_eq(ev_store_limit_growth(s, 4, &e), EV_OK);
    while (batches < 10000) {
        for (i = 0; i < BATCH; i++) {
            rows[i].timing = "hot";
            rows[i].sample_index = batches * BATCH + i;
            rows[i].replays = 1000;
            rows[i].ops_per_graph = 100;
            rows[i].elapsed_ms = 100.0 + i;
            rows[i].sm_clock_mhz = 1980;
        }
        rc = ev_store_add_samples(s, att, rows, BATCH, &e);
        if (rc)
            break;
        batches++;
    }
    ck_assert_int_eq(rc, EV_EFULL);
    ck_assert_int_gt(batches, 0);
    ck_assert_msg(strstr(e.msg, "full") && strstr(e.msg, "add samples") && strstr(e.msg, dbpath), "%s",
                  e.msg);
    before = count_samples(s, run, att, NULL);
    ck_assert_int_eq(before, batches * BATCH); /* the failed batch left nothing */
    /* A single sample fails the same way and the store stays readable. */
    rows[0].sample_index = 999999;
    rc = ev_store_add_sample(s, att, &rows[0], &e);
    if (rc != EV_OK) /* it may still fit in a partly filled page */
        ck_assert_int_eq(rc, EV_EFULL);
    ev_store_close(s);
    s = open_rw();
    after = count_samples(s, run, att, NULL);
    ck_assert_int_eq(after, before + (rc == EV_OK));
    ev_store_close(s);
    db = raw_open();
    raw_text(db, "PRAGMA integrity_check", ok, sizeof ok);
    ck_assert_str_eq(ok, "ok");
    ck_assert_int_eq(raw_int(db, "SELECT COUNT(*) FROM samples WHERE sample_index >= "
                                 "0"),
                     after);
    sqlite3_close(db);
    printf("check_store: full disk after %lld batches of %d samples\n", (long long)batches, BATCH);
}
END_TEST

START_TEST(test_read_only_store_refuses_writes_and_changes_nothing)
{
    int64_t run;
    ev_store *s = NULL;
    ev_buf before = EV_BUF_INIT, after = EV_BUF_INIT;
    ev_sample_row r = {"hot", 5, 10, 100, 1.0, -1};
    ev_err e = {{0}};

    build_small(&run);
    slurp(dbpath, &before);
    ck_assert_int_eq(ev_store_open(dbpath, EV_STORE_READONLY, &s, &e), EV_OK);
    memset(&e, 0, sizeof e);
    ck_assert_int_eq(ev_store_add_sample(s, 1, &r, &e), EV_EREADONLY);
    ck_assert_msg(strstr(e.msg, "read-only") && strstr(e.msg, "add samples"), "%s", e.msg);
    ck_assert_int_eq(ev_store_set_run_status(s, run, "failed", NULL, 1, &e), EV_EREADONLY);
    ck_assert_int_eq(ev_store_add_fit(s, run, 1, "{}", NULL, &e), EV_EREADONLY);
    ck_assert_int_eq(ev_store_begin(s, &e), EV_EREADONLY);
    ck_assert_msg(strstr(e.msg, "read-only"), "%s", e.msg);
    ck_assert_int_eq(count_samples(s, run, 1, NULL), 1);
    ev_store_close(s);
    slurp(dbpath, &after);
    ck_assert_uint_eq(before.len, after.len);
    ck_assert_int_eq(memcmp(before.data, after.data, before.len), 0);
    ev_buf_free(&before);
    ev_buf_free(&after);
    /* Creating read-only is refused before touching anything. */
    ck_assert_int_eq(ev_store_open(dbpath, EV_STORE_READONLY | EV_STORE_CREATE, &s, &e), EV_EINVAL);
}
END_TEST

START_TEST(test_damaged_store_is_reported_with_what_to_do)
{
    ev_store *s = open_rw();
    int64_t run, inv, job, att;
    ev_sample_row rows[200];
    struct stat sb;
    char junk[4096];
    off_t page;
    int fd, i;
    ev_err e = {{0}};

    add_base(s, &run, &inv);
    job = add_job(s, run, "main/0/default/default", "main", 0, "default", "default", 0, 0);
    att = add_attempt(s, job, 1, inv);
    for (i = 0; i < 200; i++) {
        ev_sample_row r = {"hot", i, 10, 100, 1.0 + i, 1500};
        rows[i] = r;
    }
    for (i = 0; i < 10; i++) {
        int k;
        for (k = 0; k < 200; k++)
            rows[k].sample_index = i * 200 + k;
        OK(ev_store_add_samples(s, att, rows, 200, &e_));
    }
    ev_store_close(s); /* checkpoints the WAL into the file */
    ck_assert_int_eq(stat(dbpath, &sb), 0);
    ck_assert_int_gt(sb.st_size, 16 * 4096);
    page = (sb.st_size / 4096 / 2) * 4096;
    memset(junk, 0xA5, sizeof junk);
    fd = open(dbpath, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, junk, sizeof junk, page), (ssize_t)sizeof junk);
    close(fd);
    s = NULL;
    ck_assert_int_eq(ev_store_open(dbpath, 0, &s, &e), EV_ECORRUPT);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(e.msg, "damaged") && strstr(e.msg, "restore it from a copy"), "%s", e.msg);
    ck_assert_int_eq(ev_store_open(dbpath, EV_STORE_READONLY, &s, &e), EV_ECORRUPT);
}
END_TEST

START_TEST(test_text_file_is_reported_as_not_a_database_and_left_alone)
{
    static const char text[] = "this is a protocol, not a database\n"
                               "{ \"seed\": 7, \"cases\": [] }\n";
    ev_buf b = EV_BUF_INIT;
    ev_store *s = NULL;
    ev_err e = {{0}};
    FILE *f = fopen(dbpath, "wb");
    int i;

    ck_assert_ptr_nonnull(f);
    for (i = 0; i < 100; i++)
        fputs(text, f);
    fclose(f);
    ck_assert_int_eq(ev_store_open(dbpath, EV_STORE_CREATE, &s, &e), EV_ECORRUPT);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(e.msg, "not a SQLite database") && strstr(e.msg, "give the path"), "%s", e.msg);
    slurp(dbpath, &b);
    ck_assert_uint_eq(b.len, 100 * strlen(text));
    ck_assert_int_eq(memcmp(b.data, text, strlen(text)), 0);
    ev_buf_free(&b);
}
END_TEST

/* ---- transactions ------------------------------------------------------ */

START_TEST(test_transactions_do_not_nest_and_a_failure_rolls_back_the_group)
{
    ev_store *s = open_rw();
    int64_t run, inv, job, att;
    ev_sample_row r = {"hot", 0, 10, 100, 1.0, -1};
    ev_err e = {{0}};

    add_base(s, &run, &inv);
    job = add_job(s, run, "main/0/default/default", "main", 0, "default", "default", 0, 0);
    att = add_attempt(s, job, 1, inv);
    ck_assert_int_eq(ev_store_commit(s, &e), EV_EINVAL);
    OK(ev_store_begin(s, &e_));
    ck_assert_int_eq(ev_store_begin(s, &e), EV_EINVAL);
    ck_assert_msg(strstr(e.msg, "do not nest"), "%s", e.msg);
    OK(ev_store_add_sample(s, att, &r, &e_)); /* the open transaction still works */
    r.sample_index = 1;
    OK(ev_store_add_sample(s, att, &r, &e_));
    r.sample_index = 0;                                            /* duplicate key */
    ck_assert_int_eq(ev_store_add_sample(s, att, &r, &e), EV_EDB); /* rolls back all three */
    r.sample_index = 2;
    ck_assert_int_eq(ev_store_add_sample(s, att, &r, &e), EV_EINVAL); /* refused until ended */
    ck_assert_int_eq(ev_store_commit(s, &e), EV_EDB);                 /* reports the failure */
    ck_assert_msg(strstr(e.msg, "append-only"), "%s", e.msg);
    ck_assert_int_eq(count_samples(s, run, att, NULL), 0);
    /* A rolled-back group leaves nothing; a committed one all. */
    OK(ev_store_begin(s, &e_));
    OK(ev_store_add_sample(s, att, &r, &e_));
    ev_store_rollback(s);
    ck_assert_int_eq(count_samples(s, run, att, NULL), 0);
    OK(ev_store_begin(s, &e_));
    OK(ev_store_add_sample(s, att, &r, &e_));
    r.sample_index = 3;
    OK(ev_store_add_sample(s, att, &r, &e_));
    OK(ev_store_commit(s, &e_));
    ev_store_rollback(NULL);
    ev_store_close(s);
    s = open_rw();
    ck_assert_int_eq(count_samples(s, run, att, NULL), 2);
    ev_store_close(s);
    ev_store_close(NULL);
}
END_TEST

typedef struct bits_ctx {
    const double *want;
    int n, seen;
} bits_ctx;

/* Checks each sample's elapsed_ms against the written bits. */
static ev_status bits_row(void *ctx, const ev_row *r)
{
    bits_ctx *c = ctx;
    double got = ev_row_double(r, 5);
    ck_assert_int_lt(c->seen, c->n);
    ck_assert_int_eq(ev_row_i64(r, 2), c->seen);
    ck_assert_msg(memcmp(&got, &c->want[c->seen], sizeof got) == 0, "sample %d: %a read back as %a", c->seen,
                  c->want[c->seen], got);
    c->seen++;
    return EV_OK;
}

START_TEST(test_doubles_round_trip_bit_for_bit_and_nan_and_negative_zero_are_refused)
{
    enum { N = 2000 };
    static double want[N];
    uint64_t rng = 12345, bits;
    ev_store *s = open_rw();
    int64_t run, inv, job, att;
    ev_sample_row r = {"hot", 0, 1, 1, 0.0, -1};
    bits_ctx c = {want, N, 0};
    ev_err e = {{0}};
    int i;

    add_base(s, &run, &inv);
    job = add_job(s, run, "main/0/default/default", "main", 0, "default", "default", 0, 0);
    att = add_attempt(s, job, 1, inv);
    OK(ev_store_begin(s, &e_));
    for (i = 0; i < N; i++) {
        double d;
        do {
            bits = rng_next(&rng);
            if (i < 8) /* extremes: subnormals, max, inf, +0, 1 */
                bits = (uint64_t[]){1,
                                    0x000fffffffffffffULL,
                                    0x7fefffffffffffffULL,
                                    0x7ff0000000000000ULL,
                                    0xfff0000000000000ULL,
                                    0,
                                    0x3ff0000000000000ULL,
                                    0x8000000000000001ULL}[i];
            memcpy(&d, &bits, sizeof d);
        } while (d != d || bits == 0x8000000000000000ULL);
        want[i] = d;
        r.sample_index = i;
        r.elapsed_ms = d;
        OK(ev_store_add_sample(s, att, &r, &e_));
    }
    OK(ev_store_commit(s, &e_));
    ev_store_close(s);
    s = open_rw();
    ck_assert_int_eq(ev_store_query(s, EV_Q_SAMPLES, run, bits_row, &c, &e), EV_OK);
    ck_assert_int_eq(c.seen, N);
    r.sample_index = N;
    r.elapsed_ms = -0.0;
    ck_assert_int_eq(ev_store_add_sample(s, att, &r, &e), EV_EINVAL);
    ck_assert_msg(strstr(e.msg, "NaN or -0.0"), "%s", e.msg);
    r.elapsed_ms = __builtin_nan("");
    ck_assert_int_eq(ev_store_add_sample(s, att, &r, &e), EV_EINVAL);
    ck_assert_int_eq(count_samples(s, run, att, NULL), N);
    ev_store_close(s);
}
END_TEST

/* ---- views and queries ------------------------------------------------- */

/* A small hand-built run: see the comments for each job's story.  OUT:
 * *run_out. */
static void build_story(int64_t *run_out)
{
    ev_store *s = open_rw();
    int64_t run, inv, inv2, j1, j2, j3, j4, j5, j6, a;
    ev_process_row p;
    static const unsigned char out_bytes[4] = {1, 0, 2, 0};
    ev_validation_row v = {"first", 1, 0.25, 0.5, 0, "aa55", out_bytes, sizeof out_bytes};
    ev_binding_row b = {"reduce_sum", "fp32", 64, 256, 256, 65536, 256, 256, 128, 8};
    ev_node_row n = {0, "reduce_rows2", {32, 1, 1}, {256, 1, 1}};
    ev_sample_row cold = {"cold", 0, 1, 1, 0.125, 1410};

    add_base(s, &run, &inv);
    OK(ev_store_add_source(s, run, "kernels/reduce.c", "11aa", "int x;\n", 7, &e_));
    OK(ev_store_add_source(s, run, "db/schema.sql", "22bb", NULL, 0, &e_));
    OK(ev_store_add_invocation(s, run, 2500, 1, "hosthash2", &inv2, &e_));
    /* j1: main default of case 0, completed, 3 hot + 1 cold sample. */
    j1 = add_job(s, run, "main/0/default/default", "main", 0, "default", "default", 0, 0);
    a = add_attempt(s, j1, 1, inv);
    p = proc_ok();
    add_proc(s, a, &p, -1);
    OK(ev_store_add_validation(s, a, &v, &e_));
    add_hot(s, a, 0, 10, 100, 2.0);
    add_hot(s, a, 1, 10, 100, 3.0);
    add_hot(s, a, 2, 20, 100, 5.0);
    OK(ev_store_add_sample(s, a, &cold, &e_));
    OK(ev_store_add_binding(s, a, &b, &e_));
    OK(ev_store_add_warmup(s, a, 500.0, 512.5, 4000, &e_));
    OK(ev_store_add_calibration(s, a, 0, 100, 10.0, 0, 100.0, &e_));
    OK(ev_store_add_calibration(s, a, 1, 1000, 99.5, 1, 100.0, &e_));
    OK(ev_store_add_cold_timing(s, a, "first-launch", 1234567, &e_));
    OK(ev_store_add_flush(s, a, 100663296, 52428800, &e_));
    OK(ev_store_add_device(s, a, "{\"seed\":\"00ff\"}", &e_));
    {
        ev_sample_check_row ck = {1, 3, 1, 0.125, 0.5, 0, "bb66", out_bytes, sizeof out_bytes};
        OK(ev_store_add_sample_check(s, a, &ck, &e_));
        ck.after_sample = -1;
        OK(ev_store_add_sample_check(s, a, &ck, &e_));
    }
    OK(ev_store_add_graph_node(s, a, &n, &e_));
    /* j2: main rows1 of case 0, exits 2: a failure. */
    j2 = add_job(s, run, "main/0/rows1/rows1", "main", 0, "rows1", "rows1", 0, 1);
    a = add_attempt(s, j2, 1, inv);
    p = proc_ok();
    p.exit_code = 2;
    add_proc(s, a, &p, -1);
    /* j3: main floor (no case): interrupted once, then completed on resume. */
    j3 = add_job(s, run, "main/-/floor/floor", "main", -1, "floor", "floor", 0, 2);
    a = add_attempt(s, j3, 1, inv);
    add_hot(s, a, 0, 10, 100, 50.0); /* the interrupted attempt's sample must not count */
    a = add_attempt(s, j3, 2, inv2);
    p = proc_ok();
    add_proc(s, a, &p, -1);
    add_hot(s, a, 0, 10, 100, 1.0);
    add_hot(s, a, 1, 10, 100, 1.5);
    /* j4: policy auto of case 1: wrong output (failed-validation), timings kept. */
    j4 = add_job(s, run, "policy/1/auto/auto", "policy", 1, "auto", "auto", 0, 0);
    a = add_attempt(s, j4, 1, inv2);
    p = proc_ok();
    add_proc(s, a, &p, 0);
    add_hot(s, a, 0, 10, 100, 4.0);
    /* j5: the rescue of j2, completed. */
    j5 = add_job(s, run, "rescue/0/rows1/retry-1", "rescue", 0, "rows1", "retry-1", j2, 0);
    a = add_attempt(s, j5, 1, inv2);
    p = proc_ok();
    add_proc(s, a, &p, 1);
    add_hot(s, a, 0, 4, 50, 8.0);
    /* j6: recheck peer skipped on this host. */
    j6 = add_job(s, run, "recheck/1/cub/recheck", "recheck", 1, "cub", "recheck", 0, 0);
    a = add_attempt(s, j6, 1, inv2);
    p = proc_ok();
    p.skipped = 1;
    p.skip_reason = "no CUDA device";
    add_proc(s, a, &p, -1);
    (void)j6;
    OK(ev_store_add_fit(s, run, 7777, "{\"a0\":0.9}", NULL, &e_));
    OK(ev_store_set_run_status(s, run, "failed", "completed-after-rescue", 9000, &e_));
    ev_store_close(s);
    *run_out = run;
}

START_TEST(test_failures_and_hot_sample_counts_views_give_the_expected_rows)
{
    int64_t run;
    ev_store *s;
    collect c;

    build_story(&run);
    s = open_rw();
    run_query(s, EV_Q_FAILURES, run, &c);
    ck_assert_str_eq(c.names, "job_id,job_key,phase,case_index,arm,label,attempt,outcome");
    ck_assert_str_eq(c.text.data, "2|main/0/rows1/rows1|main|0|rows1|rows1|1|failed-exit\n"
                                  "4|policy/1/auto/auto|policy|1|auto|auto|1|failed-validation\n"
                                  "6|recheck/1/cub/recheck|recheck|1|cub|recheck|1|skipped\n");
    ev_buf_free(&c.text);
    run_query(s, EV_Q_HOT_COUNTS, run, &c);
    ck_assert_str_eq(c.names, "job_key,phase,case_index,arm,n,min_us,max_us");
    /* per_op_us = elapsed_ms * 1000 / (replays * ops_per_graph). */
    ck_assert_str_eq(c.text.data, "main/-/floor/floor|main|NULL|floor|2|1.0|1.5\n"
                                  "main/0/default/default|main|0|default|3|2.0|3.0\n"
                                  "rescue/0/rows1/retry-1|rescue|0|rows1|1|40.0|40.0\n");
    ev_buf_free(&c.text);
    run_query(s, EV_Q_OUTCOMES, run, &c);
    ck_assert_str_eq(c.names, "attempt_id,job_id,attempt,outcome");
    ck_assert_str_eq(c.text.data, "1|1|1|completed\n2|2|1|failed-exit\n3|3|1|interrupted\n4|3|2|completed\n"
                                  "5|4|1|failed-validation\n6|5|1|completed\n7|6|1|skipped\n");
    ev_buf_free(&c.text);
    ev_store_close(s);
}
END_TEST

/* One expected query answer: its column names and rows as text. */
typedef struct query_expect {
    ev_query q;
    const char *names;
    const char *rows;
} query_expect;

START_TEST(test_every_query_returns_the_documented_columns_in_order)
{
    static const query_expect want[] = {
        {EV_Q_RUNS,
         "run_id,protocol_id,protocol_path,backend,seed,git_commit,git_dirty,source_tree_hash,created_ns",
         "1|ab12|protocols/quick.json|cpu|7|unknown|1|cd34|1000\n"},
        {EV_Q_RUN,
         "run_id,protocol_id,protocol_path,backend,seed,git_commit,git_dirty,source_tree_hash,created_ns,"
         "protocol_bytes",
         "1|ab12|protocols/quick.json|cpu|7|unknown|1|cd34|1000|blob:17\n"},
        {EV_Q_RUN_STATUS, "status,rescue_status,finished_ns", "failed|completed-after-rescue|9000\n"},
        {EV_Q_INVOCATIONS, "invocation_id,started_ns,resumed,host_hash,profile_id,env_json",
         "1|2000|0|hosthash|prof|{\"cpu\":1}\n2|2500|1|hosthash2|NULL|NULL\n"},
        {EV_Q_SOURCES, "path,sha256,bytes", "db/schema.sql|22bb|blob:0\nkernels/reduce.c|11aa|blob:7\n"},
        {EV_Q_CASES, "case_index,op,rows,cols,stride,dtype,default_rows,role",
         "0|reduce_sum|64|256|256|fp32|2|calibration\n1|reduce_max|32|128|160|bf16|4|holdout\n"},
        {EV_Q_JOBS, "job_id,job_key,phase,case_index,arm,label,retry_of,plan_order",
         "1|main/0/default/default|main|0|default|default|NULL|0\n"
         "2|main/0/rows1/rows1|main|0|rows1|rows1|NULL|1\n"
         "3|main/-/floor/floor|main|NULL|floor|floor|NULL|2\n"
         "4|policy/1/auto/auto|policy|1|auto|auto|NULL|0\n"
         "5|rescue/0/rows1/retry-1|rescue|0|rows1|retry-1|2|0\n"
         "6|recheck/1/cub/recheck|recheck|1|cub|recheck|NULL|0\n"},
        {EV_Q_ATTEMPTS,
         "attempt_id,job_id,attempt,invocation_id,started_ns,has_process,pid,exit_code,signal,timed_out,"
         "interrupted,skipped,skip_reason,record_count,records_ok,protocol_error,affinity,stderr_tail,ended_"
         "ns,"
         "wall_ns",
         "1|1|1|1|3001|1|1234|0|NULL|0|0|0|NULL|9|1|NULL|0-3||5000|4000\n"
         "2|2|1|1|3001|1|1234|2|NULL|0|0|0|NULL|9|1|NULL|0-3||5000|4000\n"
         "3|3|1|1|3001|0|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL\n"
         "4|3|2|2|3002|1|1234|0|NULL|0|0|0|NULL|9|1|NULL|0-3||5000|4000\n"
         "5|4|1|2|3001|1|1234|0|NULL|0|0|0|NULL|9|1|NULL|0-3||5000|4000\n"
         "6|5|1|2|3001|1|1234|0|NULL|0|0|0|NULL|9|1|NULL|0-3||5000|4000\n"
         "7|6|1|2|3001|1|1234|0|NULL|0|0|1|no CUDA device|9|1|NULL|0-3||5000|4000\n"},
        {EV_Q_SAMPLES, "attempt_id,timing,sample_index,replays,ops_per_graph,elapsed_ms,sm_clock_mhz",
         "1|cold|0|1|1|0.125|1410\n1|hot|0|10|100|2.0|NULL\n1|hot|1|10|100|3.0|NULL\n1|hot|2|20|100|5.0|"
         "NULL\n"
         "3|hot|0|10|100|50.0|NULL\n4|hot|0|10|100|1.0|NULL\n4|hot|1|10|100|1.5|NULL\n"
         "5|hot|0|10|100|4.0|NULL\n6|hot|0|4|50|8.0|NULL\n"},
        {EV_Q_BINDINGS, "attempt_id,op,dtype,rows,cols,stride,in_span,out_span,in_align,out_align,threads",
         "1|reduce_sum|fp32|64|256|256|65536|256|256|128|8\n"},
        {EV_Q_WARMUPS, "attempt_id,target_ms,elapsed_ms,replays", "1|500.0|512.5|4000\n"},
        {EV_Q_CALIBRATIONS, "attempt_id,step,replays,elapsed_ms,chosen,target_ms",
         "1|0|100|10.0|0|100.0\n1|1|1000|99.5|1|100.0\n"},
        {EV_Q_COLD, "attempt_id,name,elapsed_ns", "1|first-launch|1234567\n"},
        {EV_Q_FLUSHES, "attempt_id,flush_bytes,cache_bytes", "1|100663296|52428800\n"},
        {EV_Q_VALIDATIONS, "attempt_id,stage,passed,max_abs_err,bound,mismatches,output_sha256,output",
         "1|first|1|0.25|0.5|0|aa55|blob:4\n5|first|0|0.0|0.001|5|00ff|NULL\n"
         "6|first|1|0.0|0.001|0|00ff|NULL\n"},
        {EV_Q_GRAPH_NODES, "attempt_id,node_index,function,grid_x,grid_y,grid_z,block_x,block_y,block_z",
         "1|0|reduce_rows2|32|1|1|256|1|1\n"},
        {EV_Q_DEVICES, "attempt_id,json", "1|{\"seed\":\"00ff\"}\n"},
        {EV_Q_SAMPLE_CHECKS,
         "attempt_id,input_set,after_sample,passed,max_abs_err,bound,mismatches,output_sha256,output",
         "1|1|-1|1|0.125|0.5|0|bb66|blob:4\n1|1|3|1|0.125|0.5|0|bb66|blob:4\n"},
        {EV_Q_FITS, "fit_id,created_ns,model_json,sha256",
         "1|7777|{\"a0\":0.9}|" /* sha256 of {"a0":0.9} */
         "dd4bdf618b51b99b1219343557c1fc1301126db4e95d97bf6f0992855f1d3f9d\n"},
    };
    int64_t run, last = 0;
    ev_store *s;
    collect c;
    size_t i;
    ev_err e = {{0}};

    build_story(&run);
    s = open_rw();
    ck_assert_int_eq(ev_store_last_run(s, &last, &e), EV_OK);
    ck_assert_int_eq(last, run);
    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        run_query(s, want[i].q, run, &c);
        ck_assert_msg(!strcmp(c.names, want[i].names), "query %d columns: %s", (int)want[i].q, c.names);
        ck_assert_msg(!strcmp(c.text.data, want[i].rows), "query %d rows:\n%s", (int)want[i].q, c.text.data);
        ev_buf_free(&c.text);
    }
    /* Another run id gives no rows (EV_Q_RUNS ignores it). */
    run_query(s, EV_Q_SAMPLES, run + 1, &c);
    ck_assert_int_eq(c.rows, 0);
    ev_buf_free(&c.text);
    run_query(s, EV_Q_RUNS, run + 1, &c);
    ck_assert_int_eq(c.rows, 1);
    ev_buf_free(&c.text);
    ck_assert_int_eq(ev_store_query(s, EV_Q_COUNT, run, collect_row, &c, &e), EV_EINVAL);
    ev_store_close(s);
}
END_TEST

/* Stops a query at its first row with EV_ENOTFOUND. */
static ev_status stop_row(void *ctx, const ev_row *r)
{
    (void)r;
    ++*(int *)ctx;
    return EV_ENOTFOUND;
}

START_TEST(test_a_callback_status_stops_the_query_and_empty_store_has_no_last_run)
{
    int64_t run, last = -5;
    ev_store *s;
    int calls = 0;
    ev_err e = {{0}};

    s = open_rw();
    ck_assert_int_eq(ev_store_last_run(s, &last, &e), EV_ENOTFOUND);
    ck_assert_int_eq(last, -5);
    ev_store_close(s);
    build_story(&run);
    s = open_rw();
    ck_assert_int_eq(ev_store_query(s, EV_Q_SAMPLES, run, stop_row, &calls, &e), EV_ENOTFOUND);
    ck_assert_int_eq(calls, 1);
    ev_store_close(s);
}
END_TEST

/* Takes the writer lock through path, expecting it refused (EV_EUSAGE)
 * with err naming this process (the holder) by pid. */
static void lock_refused(const char *path, const char *how)
{
    ev_err e = {{0}};
    char want[64];
    int fd = -1;
    ck_assert_msg(ev_store_writer_lock(path, &fd, &e) == EV_EUSAGE, "%s: a second writer was let in", how);
    ck_assert_int_eq(fd, -1);
    snprintf(want, sizeof want, "(pid %ld, started ", (long)getpid());
    ck_assert_msg(strstr(e.msg, "being written by another run") && strstr(e.msg, want), "%s: %s", how, e.msg);
}

/* The lock is on the store's file itself, not on its name: a second writer
 * through a symlink, a hard link or a new name of the same file, or after
 * a lock file beside it was deleted, is refused while the first holds it;
 * released, the store can be locked again. */
START_TEST(test_the_writer_lock_holds_the_file_through_links_renames_and_deleted_lock_files)
{
    char sym[400], hard[400], moved[400], side[400];
    ev_store *s = open_rw();
    int fd = -1, fd2 = -1;

    ev_store_close(s);
    OK(ev_store_writer_lock(dbpath, &fd, &e_));
    ck_assert_int_ge(fd, 0);
    lock_refused(dbpath, "the same path");
    snprintf(sym, sizeof sym, "%s/sym.db", tmpdir);
    ck_assert_int_eq(symlink(dbpath, sym), 0);
    lock_refused(sym, "a symlink");
    snprintf(hard, sizeof hard, "%s/hard.db", tmpdir);
    ck_assert_int_eq(link(dbpath, hard), 0);
    lock_refused(hard, "a hard link");
    snprintf(side, sizeof side, "%s.lock", dbpath);
    unlink(side); /* a lock file beside the store, if any, is gone */
    lock_refused(dbpath, "a deleted lock file");
    snprintf(moved, sizeof moved, "%s/moved.db", tmpdir);
    ck_assert_int_eq(rename(dbpath, moved), 0);
    lock_refused(moved, "a renamed store");
    ck_assert_int_eq(rename(moved, dbpath), 0);
    /* the lock is the store's: the store stays readable and writable by its holder */
    s = open_rw();
    ev_store_close(s);
    ev_store_writer_unlock(fd);
    OK(ev_store_writer_lock(hard, &fd2, &e_));
    ev_store_writer_unlock(fd2);
    unlink(sym);
    unlink(hard);
}
END_TEST

/* Rewrites the definition of index attempts_by_job in the schema without
 * rebuilding it (an outside party with writable_schema): the index then
 * no longer holds what its table does, which quick_check does not see. */
static void corrupt_index(void)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db,
                                  "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE INDEX "
                                  "attempts_by_job ON attempts(started_ns)' WHERE name = 'attempts_by_job'; "
                                  "PRAGMA writable_schema = OFF",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
}

/* A store whose index disagrees with its table passes quick_check (every
 * open) but not the full integrity check that export and merge ask for
 * (EV_STORE_FULLCHECK): EV_ECORRUPT naming what is wrong, file untouched. */
START_TEST(test_a_full_check_finds_an_index_that_quick_check_lets_through)
{
    int64_t run;
    ev_store *s = NULL;
    ev_err e = {{0}};

    build_story(&run);
    corrupt_index();
    OK(ev_store_open(dbpath, EV_STORE_READONLY, &s, &e_));
    ev_store_close(s);
    s = NULL;
    ck_assert_int_eq(ev_store_open(dbpath, EV_STORE_READONLY | EV_STORE_FULLCHECK, &s, &e), EV_ECORRUPT);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(e.msg, "integrity_check") && strstr(e.msg, "attempts_by_job"), "%s", e.msg);
}
END_TEST

static Suite *store_suite(void)
{
    Suite *su = suite_create("store");
    TCase *tc = tcase_create("store");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_new_store_gets_the_current_schema_version_in_wal_mode);
    tcase_add_test(tc, test_embedded_schema_equals_db_schema_sql);
    tcase_add_test(tc, test_embedded_migrations_equal_db_migrate_sql);
    tcase_add_test(tc, test_a_version_2_store_is_read_as_it_is_and_gets_device_records_when_migrated);
    tcase_add_test(tc, test_a_version_1_store_is_read_as_it_is_and_migrated_when_opened_writable);
    tcase_add_test(tc, test_newer_schema_version_is_refused);
    tcase_add_test(tc, test_a_version_3_store_is_read_as_it_is_and_migrated_to_sample_checks);
    tcase_add_test(tc, test_a_version_4_store_is_read_as_it_is_and_migrated_to_op_checks);
    tcase_add_test(tc, test_foreign_database_is_refused);
    tcase_add_test(tc, test_missing_file_without_create_is_an_io_error);
    tcase_add_test(tc, test_foreign_keys_are_enforced);
    tcase_add_test(tc, test_a_word_outside_the_vocabulary_is_refused_by_the_writer);
    tcase_add_test(tc, test_a_store_created_before_an_op_existed_refuses_it_with_what_to_do);
    tcase_add_test(tc, test_update_on_samples_is_refused);
    tcase_add_test(tc, test_delete_on_samples_is_refused);
    tcase_add_test(tc, test_insert_or_replace_on_samples_is_refused_with_or_without_recursive_triggers);
    tcase_add_test(tc, test_jobs_processes_and_run_status_refuse_update_delete_and_replace);
    tcase_add_test(tc, test_run_status_cannot_be_set_twice);
    tcase_add_test(tc, test_attempt_outcomes_view_agrees_with_ev_outcome_derive_for_every_combination);
    tcase_add_test(tc, test_outcome_names_parse_and_retryable_set);
    tcase_add_test(tc, test_a_leftover_note_follows_the_attempts_own_reason_and_is_read_apart_from_it);
    tcase_add_test(tc, test_full_disk_gives_efull_and_leaves_no_partial_record);
    tcase_add_test(tc, test_read_only_store_refuses_writes_and_changes_nothing);
    tcase_add_test(tc, test_damaged_store_is_reported_with_what_to_do);
    tcase_add_test(tc, test_text_file_is_reported_as_not_a_database_and_left_alone);
    tcase_add_test(tc, test_transactions_do_not_nest_and_a_failure_rolls_back_the_group);
    tcase_add_test(tc, test_doubles_round_trip_bit_for_bit_and_nan_and_negative_zero_are_refused);
    tcase_add_test(tc, test_failures_and_hot_sample_counts_views_give_the_expected_rows);
    tcase_add_test(tc, test_every_query_returns_the_documented_columns_in_order);
    tcase_add_test(tc, test_a_callback_status_stops_the_query_and_empty_store_has_no_last_run);
    tcase_add_test(tc, test_the_writer_lock_holds_the_file_through_links_renames_and_deleted_lock_files);
    tcase_add_test(tc, test_a_full_check_finds_an_index_that_quick_check_lets_through);
    suite_add_tcase(su, tc);

    tc = tcase_create("crash");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 900); /* 60 trials of fsync'd commits; x5 for ASan */
    tcase_add_test(tc, test_committed_samples_survive_sigkill_at_random_moments);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    int failed = ev_check_suite(store_suite());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
