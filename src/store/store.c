/*
 * store.c: the evidence store over SQLite: opening (pragmas, the check of
 * the file, the schema and its migrations), closing, transactions, the one
 * translation of sqlite3 result codes into ev_status, and the one-writer
 * lock.  The store's SQL lives in this folder only: store_write.c (the
 * inserts), store_merge.c (a run copied between stores) and store_read.c
 * (the named queries) beside this file, store_int.h what they share (the
 * DDL itself lives in db/schema.sql, embedded at build time as
 * ev_schema_sql by src/store/module.mk).
 *
 * Opening sets the connection's pragmas, runs PRAGMA quick_check, then
 * creates or migrates the schema by user_version.  Writes are single-row
 * INSERTs (ev_store_add_samples: several rows), each in its own BEGIN
 * IMMEDIATE ... COMMIT unless the caller holds an explicit transaction;
 * with WAL and synchronous=FULL a committed row survives a crash or a
 * power loss.  A failed write rolls back, so nothing of it remains.
 * sqlite3 result codes become ev_status in store_status(), and nowhere else.
 */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"

/* db/schema.sql as bytes plus a NUL (generated into $(BUILD)/gen/). */
extern const char ev_schema_sql[];
extern const size_t ev_schema_sql_len;
/* db/migrate-2.sql (version 1 -> 2: the shards table), likewise. */
extern const char ev_migrate2_sql[];
extern const size_t ev_migrate2_sql_len;
/* db/migrate-3.sql (version 2 -> 3: the attempt_devices table), likewise. */
extern const char ev_migrate3_sql[];
extern const size_t ev_migrate3_sql_len;

/* db/migrate-4.sql (version 3 -> 4: the sample_checks table), likewise. */
extern const char ev_migrate4_sql[];
extern const size_t ev_migrate4_sql_len;

/* db/migrate-5.sql (version 4 -> 5: op_checks and op_kept), likewise. */
extern const char ev_migrate5_sql[];
extern const size_t ev_migrate5_sql_len;

/* db/migrate-6.sql (version 5 -> 6: no table; the plan with the reference
 * arms first and ceiling-l2, the physical plausibility rule), likewise. */
extern const char ev_migrate6_sql[];
extern const size_t ev_migrate6_sql_len;

/* db/migrate-7.sql (version 6 -> 7: no table; a plant's secret count of
 * sites, kernels/plants.h), likewise. */
extern const char ev_migrate7_sql[];
extern const size_t ev_migrate7_sql_len;

/* Milliseconds a connection waits for another writer's lock. */
#define STORE_BUSY_TIMEOUT_MS 30000

/* Migrations: entry k brings user_version k-1 to k.  Version 1 is
 * db/schema.sql applied to an empty file; later versions append here. */
typedef struct store_migration {
    int version;
    const char *sql;
} store_migration;

static const store_migration store_migrations[] = {
    {1, ev_schema_sql},   {2, ev_migrate2_sql}, {3, ev_migrate3_sql}, {4, ev_migrate4_sql},
    {5, ev_migrate5_sql}, {6, ev_migrate6_sql}, {7, ev_migrate7_sql},
};

/* ---- status translation ------------------------------------------------ */

/* Returns the ev_status for a sqlite3 result code (primary or extended):
 * FULL -> EV_EFULL, READONLY -> EV_EREADONLY, CORRUPT/NOTADB ->
 * EV_ECORRUPT, CANTOPEN -> EV_EIO, NOMEM -> EV_ENOMEM, anything else
 * (constraint, busy, I/O ...) -> EV_EDB.  The one translation point. */
static ev_status store_status(int sqlite_rc)
{
    switch (sqlite_rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
        return EV_OK;
    case SQLITE_FULL:
        return EV_EFULL;
    case SQLITE_READONLY:
        return EV_EREADONLY;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return EV_ECORRUPT;
    case SQLITE_CANTOPEN:
        return EV_EIO;
    case SQLITE_NOMEM:
        return EV_ENOMEM;
    default:
        return EV_EDB;
    }
}

/* Fills err with a one-line reason for sqlite_rc met while doing `what` on
 * s (the message names the file and carries sqlite3_errmsg), and returns
 * the translated status.  Must be called before anything else runs on the
 * connection, which would replace the error message. */
ev_status store_fail(ev_store *s, int sqlite_rc, const char *what, ev_err *err)
{
    ev_status rc = store_status(sqlite_rc);
    const char *msg = s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(sqlite_rc);

    if (rc == EV_OK)
        rc = EV_EDB; /* a step that should have finished did not */
    switch (rc) {
    case EV_EFULL:
        return ev_err_set(err, rc,
                          "store %s: cannot %s: disk or database full (nothing of it was written): %s",
                          s->path, what, msg);
    case EV_EREADONLY:
        return ev_err_set(err, rc, "store %s is read-only (opened read-only or not writable): cannot %s: %s",
                          s->path, what, msg);
    case EV_ECORRUPT:
        if ((sqlite_rc & 0xff) == SQLITE_NOTADB)
            return ev_err_set(err, rc,
                              "store %s is not a SQLite database (damaged, or another kind of file): give "
                              "the path of an evident store, or a new path to create one",
                              s->path);
        return ev_err_set(err, rc,
                          "store %s is damaged (%s; while trying to %s): do not trust it; restore it from a "
                          "copy (receipts/<host>/evidence.db is committed) or start a new store",
                          s->path, msg, what);
    default:
        return ev_err_set(err, rc, "store %s: cannot %s: %s", s->path, what, msg);
    }
}

/* Runs sql (one or more statements, no rows wanted).  EV_OK, or the
 * translated failure with err saying `what` failed. */
ev_status store_exec(ev_store *s, const char *sql, const char *what, ev_err *err)
{
    int src = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

    if (src != SQLITE_OK)
        return store_fail(s, src, what, err);
    return EV_OK;
}

/* Prepares sql.  OUT: *st (finalized by the caller).  On failure *st is
 * untouched and err says `what` failed. */
ev_status store_prepare(ev_store *s, const char *sql, sqlite3_stmt **st, const char *what, ev_err *err)
{
    sqlite3_stmt *p = NULL;
    int src = sqlite3_prepare_v2(s->db, sql, -1, &p, NULL);

    if (src != SQLITE_OK) {
        ev_status rc = store_fail(s, src, what, err);
        sqlite3_finalize(p);
        return rc;
    }
    *st = p;
    return EV_OK;
}

/* Runs a one-row statement whose first column is an integer (a PRAGMA or
 * a SELECT).  OUT: *value (0 when the column is NULL).  EV_ENOTFOUND (err
 * untouched) when the statement gives no row. */
ev_status store_int_query(ev_store *s, const char *sql, int64_t *value, const char *what, ev_err *err)
{
    sqlite3_stmt *st = NULL;
    ev_status rc = store_prepare(s, sql, &st, what, err);
    int src;

    if (rc)
        goto out;
    src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        *value = sqlite3_column_int64(st, 0);
    else if (src == SQLITE_DONE)
        rc = EV_ENOTFOUND;
    else
        rc = store_fail(s, src, what, err);
out:
    sqlite3_finalize(st);
    return rc;
}

/* ---- transactions ------------------------------------------------------ */

/* Rolls back whatever transaction the connection holds (SQLite may already
 * have done so itself after FULL or I/O errors). */
void store_abort(ev_store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Starts a write.  OUT: *own = 1 when this call opened its own transaction
 * (the caller holds none), 0 inside the caller's.  Refuses writes while a
 * caller's transaction is in the failed state (EV_EINVAL). */
ev_status store_tx_enter(ev_store *s, int *own, const char *what, ev_err *err)
{
    ev_status rc;

    if (s->tx == TX_FAILED)
        return ev_err_set(err, EV_EINVAL,
                          "store %s: cannot %s: the open transaction was rolled back after an earlier "
                          "failure; end it with ev_store_commit or ev_store_rollback",
                          s->path, what);
    if (s->tx == TX_OPEN) {
        *own = 0;
        return EV_OK;
    }
    rc = store_exec(s, "BEGIN IMMEDIATE", what, err);
    if (rc)
        return rc;
    *own = 1;
    return EV_OK;
}

/* Ends a write begun by tx_enter with status rc (err already set when rc
 * fails).  Own transaction: commits on success, rolls back on failure.
 * Caller's transaction: on failure rolls back all of it and marks it
 * failed.  Returns rc, or the commit's failure. */
ev_status store_tx_leave(ev_store *s, int own, ev_status rc, const char *what, ev_err *err)
{
    int src;

    if (rc == EV_OK && own) {
        src = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
        if (src == SQLITE_OK)
            return EV_OK;
        rc = store_fail(s, src, what, err);
    }
    if (rc == EV_OK)
        return EV_OK;
    store_abort(s);
    if (!own) {
        s->tx = TX_FAILED;
        s->tx_rc = rc;
        if (err)
            s->tx_err = *err;
        else
            ev_err_set(&s->tx_err, rc, "store %s: %s failed", s->path, what);
    }
    return rc;
}

/* Opens an explicit transaction (BEGIN IMMEDIATE: the write lock is taken
 * now).  EV_EINVAL when one is already open or failed (no nesting);
 * EV_EREADONLY on a store opened read-only. */
ev_status ev_store_begin(ev_store *s, ev_err *err)
{
    ev_status rc;

    if (!s)
        return ev_err_set(err, EV_EINVAL, "store: no store");
    if (s->tx != TX_NONE)
        return ev_err_set(err, EV_EINVAL,
                          "store %s: a transaction is already open (transactions do not nest)", s->path);
    if (s->readonly) /* SQLite would open it and refuse only the first write */
        return ev_err_set(err, EV_EREADONLY,
                          "store %s is read-only (opened read-only): cannot begin a write transaction",
                          s->path);
    rc = store_exec(s, "BEGIN IMMEDIATE", "begin a transaction", err);
    if (rc == EV_OK)
        s->tx = TX_OPEN;
    return rc;
}

/* Commits the explicit transaction: its rows are durable on EV_OK.  A
 * failed commit rolls back (nothing of the group remains).  A transaction
 * already rolled back by a failed write returns that failure. */
ev_status ev_store_commit(ev_store *s, ev_err *err)
{
    ev_status rc = EV_OK;
    int src;

    if (!s)
        return ev_err_set(err, EV_EINVAL, "store: no store");
    if (s->tx == TX_NONE)
        return ev_err_set(err, EV_EINVAL, "store %s: commit without an open transaction", s->path);
    if (s->tx == TX_FAILED) {
        rc = s->tx_rc;
        if (err)
            *err = s->tx_err;
        s->tx = TX_NONE;
        return rc;
    }
    src = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    if (src != SQLITE_OK) {
        rc = store_fail(s, src, "commit a transaction", err);
        store_abort(s);
    }
    s->tx = TX_NONE;
    return rc;
}

/* Rolls back the explicit transaction, if any; NULL-safe. */
void ev_store_rollback(ev_store *s)
{
    if (!s)
        return;
    if (s->tx == TX_OPEN)
        store_abort(s);
    s->tx = TX_NONE;
}

/* ---- opening ----------------------------------------------------------- */

/* Runs PRAGMA quick_check, or with full PRAGMA integrity_check (which also
 * holds every index to its table's rows).  EV_OK when it says "ok";
 * EV_ECORRUPT with err saying the file is damaged (or is no database),
 * its first finding, and what to do. */
static ev_status store_check(ev_store *s, int full, ev_err *err)
{
    const char *pragma = full ? "integrity_check" : "quick_check";
    char sql[40], what[64];
    sqlite3_stmt *st = NULL;
    ev_status rc;
    int src;

    snprintf(sql, sizeof sql, "PRAGMA %s", pragma);
    snprintf(what, sizeof what, "check the file (%s)", pragma);
    rc = store_prepare(s, sql, &st, what, err);
    if (rc)
        goto out;
    src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        const char *first = (const char *)sqlite3_column_text(st, 0);
        if (!first || strcmp(first, "ok") != 0)
            rc = ev_err_set(err, EV_ECORRUPT,
                            "store %s is damaged (%s: %s): do not trust it; restore it from a "
                            "copy (receipts/<host>/evidence.db is committed) or start a new store",
                            s->path, pragma, first ? first : "no answer");
    } else {
        rc = store_fail(s, src, what, err);
    }
out:
    sqlite3_finalize(st);
    return rc;
}

/* Sets the per-connection pragmas every connection needs (see store.h)
 * and checks the file (full: integrity_check).  Read-write connections
 * must end up in WAL mode (EV_EDB otherwise). */
static ev_status store_pragmas(ev_store *s, int full, ev_err *err)
{
    sqlite3_stmt *st = NULL;
    ev_status rc;
    int src;

    sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
    rc = store_exec(s, "PRAGMA foreign_keys = ON; PRAGMA recursive_triggers = ON", "set pragmas", err);
    if (rc)
        goto out;
    rc = store_check(s, full, err);
    if (rc)
        goto out;
    rc = store_prepare(s, "PRAGMA journal_mode = WAL", &st, "set journal_mode=WAL", err);
    if (rc)
        goto out;
    src = sqlite3_step(st);
    if (src != SQLITE_ROW) {
        rc = store_fail(s, src, "set journal_mode=WAL", err);
        goto out;
    }
    if (!s->readonly && strcmp((const char *)sqlite3_column_text(st, 0), "wal") != 0) {
        rc = ev_err_set(err, EV_EDB, "store %s: journal_mode stays '%s', WAL is required", s->path,
                        (const char *)sqlite3_column_text(st, 0));
        goto out;
    }
    rc = store_exec(s, "PRAGMA synchronous = FULL", "set synchronous=FULL", err);
out:
    sqlite3_finalize(st);
    return rc;
}

/* Brings the schema to EV_STORE_VERSION: an empty file gets db/schema.sql,
 * an older one each later migration, all in one IMMEDIATE transaction with
 * user_version set inside it.  Refuses a newer version (EV_EUNSUPPORTED),
 * a database with tables but user_version 0 (EV_EFORMAT: not ours), and
 * any migration on a read-only connection (EV_EREADONLY). */
static ev_status store_migrate(ev_store *s, ev_err *err)
{
    int64_t version = 0, objects = 0;
    ev_status rc;
    size_t i;
    char sql[64];
    int in_tx = 0;

    rc = store_int_query(s, "PRAGMA user_version", &version, "read user_version", err);
    if (rc)
        goto out;
    s->version = version;
    if (version == EV_STORE_VERSION)
        goto out;
    if (version > EV_STORE_VERSION || version < 0) {
        rc = ev_err_set(err, EV_EUNSUPPORTED,
                        "store %s has schema version %lld, newer than this evident knows (%d): use the "
                        "evident that wrote it, or a newer one",
                        s->path, (long long)version, EV_STORE_VERSION);
        goto out;
    }
    if (s->readonly && version >= 1)
        goto out; /* an older schema is read as it is (no shards before 2, no device records before 3) */
    if (s->readonly) {
        rc =
            ev_err_set(err, EV_EREADONLY,
                       version == 0 ? "store %s has no evident schema (version %lld) and is opened read-only"
                                    : "store %s has schema version %lld and needs a migration, but is opened "
                                      "read-only: open it writable once",
                       s->path, (long long)version);
        goto out;
    }
    rc = store_exec(s, "BEGIN IMMEDIATE", "start the schema migration", err);
    if (rc)
        goto out;
    in_tx = 1;
    /* Another connection may have migrated while we waited for the lock. */
    rc = store_int_query(s, "PRAGMA user_version", &version, "read user_version", err);
    if (rc)
        goto out;
    if (version == 0) {
        rc = store_int_query(s, "SELECT COUNT(*) FROM sqlite_master", &objects, "inspect the file", err);
        if (rc)
            goto out;
        if (objects > 0) {
            rc = ev_err_set(err, EV_EFORMAT,
                            "store %s is a SQLite database but not an evident store (tables present, "
                            "user_version 0)",
                            s->path);
            goto out;
        }
    }
    for (i = 0; i < sizeof store_migrations / sizeof store_migrations[0]; i++) {
        const store_migration *m = &store_migrations[i];
        if (m->version <= version)
            continue;
        rc = store_exec(s, m->sql, "apply the schema", err);
        if (rc)
            goto out;
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", m->version);
        rc = store_exec(s, sql, "set user_version", err);
        if (rc)
            goto out;
    }
    rc = store_exec(s, "COMMIT", "commit the schema", err);
    if (rc == EV_OK) {
        in_tx = 0;
        s->version = EV_STORE_VERSION;
    }
out:
    if (in_tx)
        store_abort(s);
    return rc;
}

/* Appends to b the SQLite URI of path ("file:" and the path with '%', '?'
 * and '#' escaped, and a leading "//" kept from reading as an authority),
 * then query (e.g. "?mode=ro"), NUL-terminated.  EV_ENOMEM. */
ev_status store_uri(const char *path, const char *query, ev_buf *b)
{
    ev_status rc = ev_buf_puts(b, "file:");
    for (size_t i = 0; path[i] && !rc; i++) {
        char c = path[i];
        if (c == '%' || c == '?' || c == '#' || (i == 1 && c == '/' && path[0] == '/'))
            rc = ev_buf_printf(b, "%%%02X", (unsigned)(unsigned char)c);
        else
            rc = ev_buf_append(b, &c, 1);
    }
    return rc ? rc : ev_buf_puts(b, query);
}

/* Returns 1 when the store at path must be read as immutable: it lies on
 * read-only media (a read-only file system, or a directory this process
 * cannot write, where SQLite cannot make the -shm file a WAL store's
 * readers need) and has no write-ahead log with content (which an
 * immutable open would not read).  0 otherwise: a normal read-only open. */
int store_needs_immutable(const char *path)
{
    struct statvfs vfs;
    struct stat wal;
    char *dir = NULL, side[4200];
    int ro = 0;

    if (!statvfs(path, &vfs) && (vfs.f_flag & ST_RDONLY))
        ro = 1;
    if (!ro) {
        const char *slash = strrchr(path, '/');
        dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
        ro = dir && access(dir, W_OK) != 0;
        free(dir);
    }
    if ((size_t)snprintf(side, sizeof side, "%s-wal", path) >= sizeof side)
        return 0;
    return ro && !(stat(side, &wal) == 0 && wal.st_size > 0);
}

/* Opens the store at path (see store.h).  OUT: *out.  Failures: EV_EIO when
 * the file cannot be opened (missing without EV_STORE_CREATE), EV_ECORRUPT
 * for a damaged file or one that is not a database, EV_EUNSUPPORTED for a
 * newer schema, EV_EFORMAT for a foreign database; nothing is left open. */
ev_status ev_store_open(const char *path, unsigned flags, ev_store **out, ev_err *err)
{
    ev_store *s = NULL;
    ev_buf uri = EV_BUF_INIT;
    ev_status rc = EV_OK;
    int oflags, src;
    size_t n;

    if (!path || !out)
        return ev_err_set(err, EV_EINVAL, "store: no path given");
    if ((flags & EV_STORE_READONLY) && (flags & EV_STORE_CREATE))
        return ev_err_set(err, EV_EINVAL, "store %s: cannot create a store read-only", path);
    s = calloc(1, sizeof *s);
    n = strlen(path) + 1;
    if (s)
        s->path = malloc(n);
    if (!s || !s->path) {
        rc = ev_err_set(err, EV_ENOMEM, "store %s: out of memory", path);
        goto out;
    }
    memcpy(s->path, path, n);
    s->readonly = (flags & EV_STORE_READONLY) != 0;
    oflags = (s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_URI;
    if (flags & EV_STORE_CREATE)
        oflags |= SQLITE_OPEN_CREATE;
    /* Always a URI, so that no path is read as one by accident; a store on
     * read-only media is opened immutable (no -shm needed, nothing written). */
    if ((rc = store_uri(path, s->readonly && store_needs_immutable(path) ? "?immutable=1" : "", &uri))) {
        rc = ev_err_set(err, rc, "store %s: out of memory", path);
        goto out;
    }
    src = sqlite3_open_v2(uri.data, &s->db, oflags, NULL);
    if (src != SQLITE_OK) {
        rc = store_fail(s, src, "open", err);
        goto out;
    }
    sqlite3_extended_result_codes(s->db, 1);
    rc = store_pragmas(s, (flags & EV_STORE_FULLCHECK) != 0, err);
    if (rc)
        goto out;
    rc = store_migrate(s, err);
out:
    ev_buf_free(&uri);
    if (rc) {
        ev_store_close(s);
        return rc;
    }
    *out = s;
    return EV_OK;
}

/* Closes the store, rolling back an open transaction; NULL-safe.  The last
 * connection to close checkpoints the WAL into the main file. */
void ev_store_close(ev_store *s)
{
    if (!s)
        return;
    if (s->db) {
        store_abort(s);
        sqlite3_close_v2(s->db);
    }
    free(s->path);
    free(s);
}

/* Limits growth to extra_pages pages beyond the current page count (a test
 * hook that simulates a full disk).  EV_EINVAL for a negative count. */
ev_status ev_store_limit_growth(ev_store *s, int64_t extra_pages, ev_err *err)
{
    int64_t pages = 0, set = 0;
    char sql[80];
    ev_status rc;

    if (!s || extra_pages < 0)
        return ev_err_set(err, EV_EINVAL, "store: bad page limit");
    rc = store_int_query(s, "PRAGMA page_count", &pages, "read the page count", err);
    if (rc)
        return rc;
    snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld", (long long)(pages + extra_pages));
    return store_int_query(s, sql, &set, "set max_page_count", err);
}

int64_t ev_store_version(const ev_store *s)
{
    return s ? s->version : 0;
}

/* ---- one writer ------------------------------------------------------- */

/* The pid of the process holding a flock on the file (dev, ino), from
 * /proc/locks (Linux: "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE ..."),
 * or -1 when it is not listed there. */
static long lock_holder(dev_t dev, ino_t ino)
{
    FILE *f = fopen("/proc/locks", "re");
    char line[256];
    long pid = -1;

    if (!f)
        return -1;
    while (pid < 0 && fgets(line, sizeof line, f)) {
        char kind[16], mode[16];
        unsigned maj, mnr;
        unsigned long long inode;
        long p;
        const char *rest = strchr(line, ':');
        if (!rest)
            continue;
        if (sscanf(rest + 1, " %15s %*s %15s %ld %x:%x:%llu", kind, mode, &p, &maj, &mnr, &inode) == 6 &&
            !strcmp(kind, "FLOCK") && !strcmp(mode, "WRITE") && maj == major(dev) && mnr == minor(dev) &&
            inode == (unsigned long long)ino)
            pid = p;
    }
    fclose(f);
    return pid;
}

/* Writes "pid P, started T" for process pid into out[cap] (T its start in
 * UTC, from /proc/P/stat and the boot time), or "holder unknown". */
static void describe_holder(long pid, char *out, size_t cap)
{
    char path[64], buf[1024];
    long long btime = -1, ticks = -1;
    FILE *f;

    snprintf(out, cap, "holder unknown");
    if (pid < 0)
        return;
    snprintf(out, cap, "pid %ld", pid);
    if ((f = fopen("/proc/stat", "re"))) {
        while (fgets(buf, sizeof buf, f))
            if (sscanf(buf, "btime %lld", &btime) == 1)
                break;
        fclose(f);
    }
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if ((f = fopen(path, "re"))) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        /* field 22 (starttime), counted after the ')' that ends field 2 */
        char *p = strrchr(buf, ')');
        for (int field = 2; p && field < 22; field++)
            p = strchr(p + 1, ' ');
        if (p)
            ticks = strtoll(p + 1, NULL, 10);
        fclose(f);
    }
    long hz = sysconf(_SC_CLK_TCK);
    if (btime >= 0 && ticks >= 0 && hz > 0) {
        time_t t = (time_t)(btime + ticks / hz);
        struct tm tm;
        char when[32];
        if (gmtime_r(&t, &tm) && strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
            snprintf(out, cap, "pid %ld, started %s", pid, when);
    }
}

ev_status ev_store_writer_lock(const char *path, int *out, ev_err *err)
{
    char held[160];
    struct stat sb;
    int fd;

    /* The store's own file (created empty when missing: SQLite takes an
     * empty file as a new database), whatever name reaches it. */
    fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0)
        return ev_err_set(err, EV_EIO, "cannot open the store %s to lock it: %s", path, strerror(errno));
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ev_err_set(err, EV_EUSAGE, "%s is not a regular file: a store is one", path);
    }
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        int e = errno;
        close(fd); /* no SQLite connection of ours is open on it yet */
        if (e == EWOULDBLOCK) {
            describe_holder(lock_holder(sb.st_dev, sb.st_ino), held, sizeof held);
            return ev_err_set(
                err, EV_EUSAGE,
                "%s is being written by another run (%s): one writer per store; wait for it, or "
                "stop it (SIGINT) and then --resume",
                path, held);
        }
        return ev_err_set(err, EV_EIO, "cannot lock %s: %s", path, strerror(e));
    }
    *out = fd;
    return EV_OK;
}

void ev_store_writer_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* drops the flock (and, POSIX says, this process's fcntl locks on the file) */
}
