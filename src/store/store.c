/*
 * store.c: the evidence store over SQLite.  This file holds every SQL
 * statement of evident (the DDL itself lives in db/schema.sql, embedded at
 * build time as ev_schema_sql by src/store/module.mk).
 *
 * Opening sets the connection's pragmas, runs PRAGMA quick_check, then
 * creates or migrates the schema by user_version.  Writes are single-row
 * INSERTs (ev_store_add_samples: several rows), each in its own BEGIN
 * IMMEDIATE ... COMMIT unless the caller holds an explicit transaction;
 * with WAL and synchronous=FULL a committed row survives a crash or a
 * power loss.  A failed write rolls back, so nothing of it remains.
 * sqlite3 result codes become ev_status in store_status(), and nowhere else.
 */
#include "store.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
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
#include "sha256.h"
#include "vocab.h"

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

/* Milliseconds a connection waits for another writer's lock. */
#define STORE_BUSY_TIMEOUT_MS 30000

/* Migrations: entry k brings user_version k-1 to k.  Version 1 is
 * db/schema.sql applied to an empty file; later versions append here. */
typedef struct store_migration {
    int version;
    const char *sql;
} store_migration;

static const store_migration store_migrations[] = {
    {1, ev_schema_sql},   {2, ev_migrate2_sql}, {3, ev_migrate3_sql},
    {4, ev_migrate4_sql}, {5, ev_migrate5_sql}, {6, ev_migrate6_sql},
};

/* Transaction state of a connection (explicit ev_store_begin/commit). */
enum { TX_NONE, TX_OPEN, TX_FAILED };

struct ev_store {
    sqlite3 *db;
    char *path;
    int readonly;
    int64_t version; /* user_version as opened: < EV_STORE_VERSION only read-only */
    int tx;          /* TX_NONE, TX_OPEN or TX_FAILED */
    ev_status tx_rc; /* TX_FAILED: the failure that rolled it back */
    ev_err tx_err;   /* TX_FAILED: its message */
};

struct ev_row {
    sqlite3_stmt *st;
    ev_query q; /* the named query the row is of (the typed readers check it) */
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
static ev_status store_fail(ev_store *s, int sqlite_rc, const char *what, ev_err *err)
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
static ev_status store_exec(ev_store *s, const char *sql, const char *what, ev_err *err)
{
    int src = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

    if (src != SQLITE_OK)
        return store_fail(s, src, what, err);
    return EV_OK;
}

/* Prepares sql.  OUT: *st (finalized by the caller).  On failure *st is
 * untouched and err says `what` failed. */
static ev_status store_prepare(ev_store *s, const char *sql, sqlite3_stmt **st, const char *what, ev_err *err)
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
static ev_status store_int_query(ev_store *s, const char *sql, int64_t *value, const char *what, ev_err *err)
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

/* ---- binding ----------------------------------------------------------- */

/* Binds parameters left to right, remembering the first failure. */
typedef struct binder {
    sqlite3_stmt *st;
    int idx;
    int rc;         /* first sqlite3_bind_* failure, SQLITE_OK until one */
    int bad_double; /* 1-based parameter of a NaN or -0.0, 0 if none */
} binder;

/* Records the result of one bind call and moves to the next parameter. */
static void b_note(binder *b, int src)
{
    if (b->rc == SQLITE_OK && src != SQLITE_OK)
        b->rc = src;
    b->idx++;
}

static void b_i64(binder *b, int64_t v) /* binds an integer */
{
    b_note(b, sqlite3_bind_int64(b->st, b->idx, v));
}

static void b_null(binder *b) /* binds SQL NULL */
{
    b_note(b, sqlite3_bind_null(b->st, b->idx));
}

/* Binds v when has is non-zero, SQL NULL otherwise. */
static void b_opt_i64(binder *b, int has, int64_t v)
{
    if (has)
        b_i64(b, v);
    else
        b_null(b);
}

/* Binds a REAL as given.  SQLite keeps every other double bit for bit but
 * turns NaN into NULL and -0.0 into +0.0 (stored as integer 0), so those
 * two are refused (noted in b->bad_double) rather than changed silently. */
static void b_double(binder *b, double v)
{
    if (v != v || (v == 0.0 && signbit(v))) {
        if (!b->bad_double)
            b->bad_double = b->idx;
        b_note(b, SQLITE_OK);
        return;
    }
    b_note(b, sqlite3_bind_double(b->st, b->idx, v));
}

/* Binds text (copied); NULL binds SQL NULL (a NOT NULL column refuses it). */
static void b_text(binder *b, const char *v)
{
    if (!v)
        b_null(b);
    else
        b_note(b, sqlite3_bind_text(b->st, b->idx, v, -1, SQLITE_TRANSIENT));
}

/* Binds len bytes at p (copied).  p == NULL binds SQL NULL when nullable,
 * an empty blob otherwise (a NOT NULL column may hold zero bytes). */
static void b_blob(binder *b, const void *p, size_t len, int nullable)
{
    if (!p && nullable)
        b_null(b);
    else if (!p || len == 0)
        b_note(b, sqlite3_bind_zeroblob(b->st, b->idx, 0));
    else if (len > INT_MAX)
        b_note(b, SQLITE_TOOBIG);
    else
        b_note(b, sqlite3_bind_blob(b->st, b->idx, p, (int)len, SQLITE_TRANSIENT));
}

/* ---- transactions ------------------------------------------------------ */

/* Rolls back whatever transaction the connection holds (SQLite may already
 * have done so itself after FULL or I/O errors). */
static void store_abort(ev_store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Starts a write.  OUT: *own = 1 when this call opened its own transaction
 * (the caller holds none), 0 inside the caller's.  Refuses writes while a
 * caller's transaction is in the failed state (EV_EINVAL). */
static ev_status tx_enter(ev_store *s, int *own, const char *what, ev_err *err)
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
static ev_status tx_leave(ev_store *s, int own, ev_status rc, const char *what, ev_err *err)
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
static ev_status store_uri(const char *path, const char *query, ev_buf *b)
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
static int store_needs_immutable(const char *path)
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

/* ---- writes ------------------------------------------------------------ */

/* Prepares one INSERT for `what`.  OUT: b->st ready for binding from 1. */
static ev_status ins_prepare(ev_store *s, const char *sql, binder *b, const char *what, ev_err *err)
{
    b->st = NULL;
    b->idx = 1;
    b->rc = SQLITE_OK;
    b->bad_double = 0;
    return store_prepare(s, sql, &b->st, what, err);
}

/* Steps a bound INSERT to completion.  OUT: *rowid (may be NULL) the new
 * row's rowid.  On failure err says why; the statement's effects are undone
 * by SQLite (statement journal) and by tx_leave. */
static ev_status ins_run(ev_store *s, binder *b, int64_t *rowid, const char *what, ev_err *err)
{
    int src;

    if (b->bad_double)
        return ev_err_set(err, EV_EINVAL,
                          "store %s: cannot %s: value %d is NaN or -0.0, which SQLite would not keep bit "
                          "for bit",
                          s->path, what, b->bad_double);
    if (b->rc != SQLITE_OK)
        return store_fail(s, b->rc, what, err);
    src = sqlite3_step(b->st);
    if (src != SQLITE_DONE)
        return store_fail(s, src, what, err);
    if (rowid)
        *rowid = sqlite3_last_insert_rowid(s->db);
    return EV_OK;
}

/* Refuses a NULL store or row pointer with EV_EINVAL. */
static ev_status check_args(const ev_store *s, const void *row, const char *what, ev_err *err)
{
    if (!s || !row)
        return ev_err_set(err, EV_EINVAL, "store: cannot %s: missing argument", what);
    return EV_OK;
}

/* One-row insert: the body shared by most ev_store_add_* functions.  bind
 * fills the parameters; OUT: *rowid when rowid is non-NULL.  Durable on
 * return (own transaction) or rolled back entirely on failure. */
typedef void (*bind_fn)(binder *b, const void *arg);

static ev_status insert_one(ev_store *s, const char *sql, bind_fn bind, const void *arg, int64_t *rowid,
                            const char *what, ev_err *err)
{
    binder b = {NULL, 1, SQLITE_OK, 0};
    int64_t id = 0;
    int own = 0;
    ev_status rc = tx_enter(s, &own, what, err);

    if (rc)
        return rc;
    rc = ins_prepare(s, sql, &b, what, err);
    if (rc == EV_OK) {
        bind(&b, arg);
        rc = ins_run(s, &b, &id, what, err);
    }
    sqlite3_finalize(b.st);
    rc = tx_leave(s, own, rc, what, err);
    if (rc == EV_OK && rowid)
        *rowid = id;
    return rc;
}

static void bind_run(binder *b, const void *arg) /* binds an ev_run_row */
{
    const ev_run_row *r = arg;
    b_text(b, r->protocol_id);
    b_blob(b, r->protocol_bytes, r->protocol_len, 0);
    b_text(b, r->protocol_path);
    b_text(b, r->backend);
    b_i64(b, r->seed);
    b_text(b, r->git_commit);
    b_i64(b, r->git_dirty);
    b_text(b, r->source_tree_hash);
    b_i64(b, r->created_ns);
}

/* Inserts a run.  OUT: *run_id (may be NULL). */
ev_status ev_store_add_run(ev_store *s, const ev_run_row *r, int64_t *run_id, ev_err *err)
{
    ev_status rc = check_args(s, r, "add a run", err);
    if (rc)
        return rc;
    return insert_one(s,
                      "INSERT INTO runs (protocol_id, protocol_bytes, protocol_path, backend, seed, "
                      "git_commit, git_dirty, source_tree_hash, created_ns) VALUES (?,?,?,?,?,?,?,?,?)",
                      bind_run, r, run_id, "add a run", err);
}

typedef struct inv_args {
    int64_t run_id, started_ns;
    int resumed;
    const char *host_hash;
} inv_args;

static void bind_inv(binder *b, const void *arg) /* binds inv_args */
{
    const inv_args *a = arg;
    b_i64(b, a->run_id);
    b_i64(b, a->started_ns);
    b_i64(b, a->resumed);
    b_text(b, a->host_hash);
}

/* Inserts an invocation of `evident run`.  OUT: *invocation_id. */
ev_status ev_store_add_invocation(ev_store *s, int64_t run_id, int64_t started_ns, int resumed,
                                  const char *host_hash, int64_t *invocation_id, ev_err *err)
{
    inv_args a = {run_id, started_ns, resumed, host_hash};
    ev_status rc = check_args(s, &a, "add an invocation", err);
    if (rc)
        return rc;
    return insert_one(s, "INSERT INTO invocations (run_id, started_ns, resumed, host_hash) VALUES (?,?,?,?)",
                      bind_inv, &a, invocation_id, "add an invocation", err);
}

typedef struct src_args {
    int64_t run_id;
    const char *path, *sha256_hex;
    const void *bytes;
    size_t len;
} src_args;

static void bind_src(binder *b, const void *arg) /* binds src_args */
{
    const src_args *a = arg;
    b_i64(b, a->run_id);
    b_text(b, a->path);
    b_text(b, a->sha256_hex);
    b_blob(b, a->bytes, a->len, 0);
}

/* Inserts one source member of the snapshot (bytes may be empty). */
ev_status ev_store_add_source(ev_store *s, int64_t run_id, const char *path, const char *sha256_hex,
                              const void *bytes, size_t len, ev_err *err)
{
    src_args a = {run_id, path, sha256_hex, bytes, len};
    ev_status rc = check_args(s, &a, "add a source", err);
    if (rc)
        return rc;
    return insert_one(s, "INSERT INTO sources (run_id, path, sha256, bytes) VALUES (?,?,?,?)", bind_src, &a,
                      NULL, "add a source", err);
}

typedef struct env_args {
    int64_t invocation_id;
    const char *profile_id, *json;
} env_args;

static void bind_env(binder *b, const void *arg) /* binds env_args */
{
    const env_args *a = arg;
    b_i64(b, a->invocation_id);
    b_text(b, a->profile_id);
    b_text(b, a->json);
}

/* Inserts the environment record of an invocation (once). */
ev_status ev_store_add_environment(ev_store *s, int64_t invocation_id, const char *profile_id,
                                   const char *json, ev_err *err)
{
    env_args a = {invocation_id, profile_id, json};
    ev_status rc = check_args(s, &a, "add an environment", err);
    if (rc)
        return rc;
    return insert_one(s, "INSERT INTO environments (invocation_id, profile_id, json) VALUES (?,?,?)",
                      bind_env, &a, NULL, "add an environment", err);
}

typedef struct case_args {
    int64_t run_id;
    const ev_case_row *c;
} case_args;

static void bind_case(binder *b, const void *arg) /* binds case_args */
{
    const case_args *a = arg;
    b_i64(b, a->run_id);
    b_i64(b, a->c->case_index);
    b_text(b, a->c->op);
    b_i64(b, a->c->rows);
    b_i64(b, a->c->cols);
    b_i64(b, a->c->stride);
    b_text(b, a->c->dtype);
    b_i64(b, a->c->default_rows);
    b_text(b, a->c->role);
}

/* 1 when the store's cases table still carries a CHECK on op (a store
 * created before the vocabulary owned that rule: db/schema.sql). */
static int cases_check_op(ev_store *s)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'cases'", -1,
                           &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        found = strstr((const char *)sqlite3_column_text(st, 0), "CHECK (op IN") != NULL;
    sqlite3_finalize(st);
    return found;
}

/* Inserts a case of the protocol.  Its op, dtype and role must be words of
 * the vocabulary (src/common/vocab.h: the one rule; the schema holds no
 * list of them): EV_EINVAL naming the word and the list otherwise. */
ev_status ev_store_add_case(ev_store *s, int64_t run_id, const ev_case_row *c, ev_err *err)
{
    case_args a = {run_id, c};
    ev_status rc = check_args(s, c, "add a case", err);
    ev_op op;
    ev_dtype dt;
    ev_role role;
    ev_err e2;

    if (rc)
        return rc;
    if (ev_op_parse(c->op, &op))
        return ev_err_set(err, EV_EINVAL, "store %s: cannot add case %lld: op '%.40s' is not one of %s",
                          s->path, (long long)c->case_index, c->op ? c->op : "(none)", ev_op_words());
    if (ev_dtype_parse(c->dtype, &dt))
        return ev_err_set(err, EV_EINVAL, "store %s: cannot add case %lld: dtype '%.40s' is not one of %s",
                          s->path, (long long)c->case_index, c->dtype ? c->dtype : "(none)",
                          ev_dtype_words());
    if (ev_role_parse(c->role, &role))
        return ev_err_set(err, EV_EINVAL, "store %s: cannot add case %lld: role '%.40s' is not one of %s",
                          s->path, (long long)c->case_index, c->role ? c->role : "(none)", ev_role_words());
    rc = insert_one(s,
                    "INSERT INTO cases (run_id, case_index, op, rows, cols, stride, dtype, default_rows, "
                    "role) VALUES (?,?,?,?,?,?,?,?,?)",
                    bind_case, &a, NULL, "add a case", &e2);
    if (rc == EV_EDB && cases_check_op(s))
        return ev_err_set(err, rc,
                          "store %s: cannot add case %lld (%s): the store was created by an evident that "
                          "did not know every op of this one (its schema lists its own): put this run in a "
                          "new store (%s)",
                          s->path, (long long)c->case_index, c->op, e2.msg);
    if (rc && err)
        *err = e2;
    return rc;
}

typedef struct job_args {
    int64_t run_id;
    const ev_job_row *j;
} job_args;

static void bind_job(binder *b, const void *arg) /* binds job_args */
{
    const job_args *a = arg;
    b_i64(b, a->run_id);
    b_text(b, a->j->job_key);
    b_text(b, a->j->phase);
    b_opt_i64(b, a->j->case_index >= 0, a->j->case_index);
    b_text(b, a->j->arm);
    b_text(b, a->j->label);
    b_opt_i64(b, a->j->retry_of > 0, a->j->retry_of);
    b_i64(b, a->j->plan_order);
}

/* Inserts a planned job (case_index -1 and retry_of 0 store NULL; a case
 * must exist before a job names it); its phase must be a phase of the
 * vocabulary (EV_EINVAL otherwise).  OUT: *job_id. */
ev_status ev_store_add_job(ev_store *s, int64_t run_id, const ev_job_row *j, int64_t *job_id, ev_err *err)
{
    job_args a = {run_id, j};
    ev_status rc = check_args(s, j, "add a job", err);
    ev_phase ph;
    if (rc)
        return rc;
    if (ev_phase_parse(j->phase, &ph))
        return ev_err_set(err, EV_EINVAL, "store %s: cannot add job %.80s: phase '%.40s' is not one of %s",
                          s->path, j->job_key ? j->job_key : "(none)", j->phase ? j->phase : "(none)",
                          ev_phase_words());
    return insert_one(s,
                      "INSERT INTO jobs (run_id, job_key, phase, case_index, arm, label, retry_of, "
                      "plan_order) VALUES (?,?,?,?,?,?,?,?)",
                      bind_job, &a, job_id, "add a job", err);
}

typedef struct att_args {
    int64_t job_id, attempt, invocation_id, started_ns;
} att_args;

static void bind_att(binder *b, const void *arg) /* binds att_args */
{
    const att_args *a = arg;
    b_i64(b, a->job_id);
    b_i64(b, a->attempt);
    b_i64(b, a->invocation_id);
    b_i64(b, a->started_ns);
}

/* Inserts an attempt of a job.  OUT: *attempt_id. */
ev_status ev_store_add_attempt(ev_store *s, int64_t job_id, int64_t attempt, int64_t invocation_id,
                               int64_t started_ns, int64_t *attempt_id, ev_err *err)
{
    att_args a = {job_id, attempt, invocation_id, started_ns};
    ev_status rc = check_args(s, &a, "add an attempt", err);
    if (rc)
        return rc;
    return insert_one(s, "INSERT INTO attempts (job_id, attempt, invocation_id, started_ns) VALUES (?,?,?,?)",
                      bind_att, &a, attempt_id, "add an attempt", err);
}

typedef struct proc_args {
    int64_t attempt_id;
    const ev_process_row *p;
} proc_args;

static void bind_proc(binder *b, const void *arg) /* binds proc_args */
{
    const proc_args *a = arg;
    const ev_process_row *p = a->p;
    b_i64(b, a->attempt_id);
    b_opt_i64(b, p->pid >= 0, p->pid);
    b_opt_i64(b, p->has_exit, p->exit_code);
    b_opt_i64(b, p->has_signal, p->signal);
    b_i64(b, p->timed_out);
    b_i64(b, p->interrupted);
    b_i64(b, p->skipped);
    b_text(b, p->skip_reason);
    b_i64(b, p->record_count);
    b_i64(b, p->records_ok);
    b_text(b, p->protocol_error);
    b_text(b, p->affinity);
    b_text(b, p->stderr_tail);
    b_i64(b, p->ended_ns);
    b_i64(b, p->wall_ns);
}

/* Inserts the process record of an attempt (once).  pid -1, has_exit 0
 * and has_signal 0 store NULL; flags must be 0 or 1. */
ev_status ev_store_add_process(ev_store *s, int64_t attempt_id, const ev_process_row *p, ev_err *err)
{
    proc_args a = {attempt_id, p};
    ev_status rc = check_args(s, p, "add a process record", err);
    if (rc)
        return rc;
    return insert_one(s,
                      "INSERT INTO processes (attempt_id, pid, exit_code, signal, timed_out, interrupted, "
                      "skipped, skip_reason, record_count, records_ok, protocol_error, affinity, "
                      "stderr_tail, ended_ns, wall_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                      bind_proc, &a, NULL, "add a process record", err);
}

typedef struct bind_args {
    int64_t attempt_id;
    const ev_binding_row *b;
} bind_args;

static void bind_binding(binder *b, const void *arg) /* binds bind_args */
{
    const bind_args *a = arg;
    b_i64(b, a->attempt_id);
    b_text(b, a->b->op);
    b_text(b, a->b->dtype);
    b_i64(b, a->b->rows);
    b_i64(b, a->b->cols);
    b_i64(b, a->b->stride);
    b_i64(b, a->b->in_span);
    b_i64(b, a->b->out_span);
    b_i64(b, a->b->in_align);
    b_i64(b, a->b->out_align);
    b_i64(b, a->b->threads);
}

/* Inserts the buffer binding of an attempt (once). */
ev_status ev_store_add_binding(ev_store *s, int64_t attempt_id, const ev_binding_row *b, ev_err *err)
{
    bind_args a = {attempt_id, b};
    ev_status rc = check_args(s, b, "add a binding", err);
    if (rc)
        return rc;
    return insert_one(s,
                      "INSERT INTO bindings (attempt_id, op, dtype, rows, cols, stride, in_span, out_span, "
                      "in_align, out_align, threads) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                      bind_binding, &a, NULL, "add a binding", err);
}

static const char sample_sql[] = "INSERT INTO samples (attempt_id, timing, sample_index, replays, "
                                 "ops_per_graph, elapsed_ms, sm_clock_mhz) VALUES (?,?,?,?,?,?,?)";

/* Binds one sample row after the attempt id. */
static void bind_sample_row(binder *b, int64_t attempt_id, const ev_sample_row *r)
{
    b_i64(b, attempt_id);
    b_text(b, r->timing);
    b_i64(b, r->sample_index);
    b_i64(b, r->replays);
    b_i64(b, r->ops_per_graph);
    b_double(b, r->elapsed_ms);
    b_opt_i64(b, r->sm_clock_mhz >= 0, r->sm_clock_mhz);
}

/* Inserts n samples of one attempt in one transaction (the caller's, or
 * its own): on return either all n rows are durable or none is stored. */
ev_status ev_store_add_samples(ev_store *s, int64_t attempt_id, const ev_sample_row *rows, size_t n,
                               ev_err *err)
{
    const char *what = "add samples";
    binder b = {NULL, 1, SQLITE_OK, 0};
    int own = 0;
    size_t i;
    ev_status rc = check_args(s, n ? (const void *)rows : (const void *)s, what, err);

    if (rc)
        return rc;
    rc = tx_enter(s, &own, what, err);
    if (rc)
        return rc;
    rc = ins_prepare(s, sample_sql, &b, what, err);
    for (i = 0; rc == EV_OK && i < n; i++) {
        sqlite3_reset(b.st);
        b.idx = 1;
        b.bad_double = 0;
        bind_sample_row(&b, attempt_id, &rows[i]);
        rc = ins_run(s, &b, NULL, what, err);
    }
    sqlite3_finalize(b.st);
    return tx_leave(s, own, rc, what, err);
}

/* Inserts one sample; durable when it returns EV_OK. */
ev_status ev_store_add_sample(ev_store *s, int64_t attempt_id, const ev_sample_row *r, ev_err *err)
{
    ev_status rc = check_args(s, r, "add a sample", err);
    if (rc)
        return rc;
    return ev_store_add_samples(s, attempt_id, r, 1, err);
}

typedef struct warm_args {
    int64_t attempt_id;
    double target_ms, elapsed_ms;
    int64_t replays;
} warm_args;

static void bind_warm(binder *b, const void *arg) /* binds warm_args */
{
    const warm_args *a = arg;
    b_i64(b, a->attempt_id);
    b_double(b, a->target_ms);
    b_double(b, a->elapsed_ms);
    b_i64(b, a->replays);
}

/* Inserts the warm-up receipt of an attempt (once). */
ev_status ev_store_add_warmup(ev_store *s, int64_t attempt_id, double target_ms, double elapsed_ms,
                              int64_t replays, ev_err *err)
{
    warm_args a = {attempt_id, target_ms, elapsed_ms, replays};
    ev_status rc = check_args(s, &a, "add a warm-up", err);
    if (rc)
        return rc;
    return insert_one(s, "INSERT INTO warmups (attempt_id, target_ms, elapsed_ms, replays) VALUES (?,?,?,?)",
                      bind_warm, &a, NULL, "add a warm-up", err);
}

typedef struct cal_args {
    int64_t attempt_id, step, replays;
    double elapsed_ms;
    int chosen;
    double target_ms;
} cal_args;

static void bind_cal(binder *b, const void *arg) /* binds cal_args */
{
    const cal_args *a = arg;
    b_i64(b, a->attempt_id);
    b_i64(b, a->step);
    b_i64(b, a->replays);
    b_double(b, a->elapsed_ms);
    b_i64(b, a->chosen);
    b_double(b, a->target_ms);
}

/* Inserts one calibration step of an attempt. */
ev_status ev_store_add_calibration(ev_store *s, int64_t attempt_id, int64_t step, int64_t replays,
                                   double elapsed_ms, int chosen, double target_ms, ev_err *err)
{
    cal_args a = {attempt_id, step, replays, elapsed_ms, chosen, target_ms};
    ev_status rc = check_args(s, &a, "add a calibration step", err);
    if (rc)
        return rc;
    return insert_one(s,
                      "INSERT INTO calibrations (attempt_id, step, replays, elapsed_ms, chosen, target_ms) "
                      "VALUES (?,?,?,?,?,?)",
                      bind_cal, &a, NULL, "add a calibration step", err);
}

typedef struct cold_args {
    int64_t attempt_id;
    const char *name;
    int64_t elapsed_ns;
} cold_args;

static void bind_cold(binder *b, const void *arg) /* binds cold_args */
{
    const cold_args *a = arg;
    b_i64(b, a->attempt_id);
    b_text(b, a->name);
    b_i64(b, a->elapsed_ns);
}

/* Inserts a named cold timing of an attempt (each name once). */
ev_status ev_store_add_cold_timing(ev_store *s, int64_t attempt_id, const char *name, int64_t elapsed_ns,
                                   ev_err *err)
{
    cold_args a = {attempt_id, name, elapsed_ns};
    ev_status rc = check_args(s, &a, "add a cold timing", err);
    if (rc)
        return rc;
    return insert_one(s, "INSERT INTO cold_timings (attempt_id, name, elapsed_ns) VALUES (?,?,?)", bind_cold,
                      &a, NULL, "add a cold timing", err);
}

typedef struct flush_args {
    int64_t attempt_id, flush_bytes, cache_bytes;
} flush_args;

static void bind_flush(binder *b, const void *arg) /* binds flush_args */
{
    const flush_args *a = arg;
    b_i64(b, a->attempt_id);
    b_i64(b, a->flush_bytes);
    b_i64(b, a->cache_bytes);
}

/* Inserts the cache-flush receipt of an attempt (once). */
ev_status ev_store_add_flush(ev_store *s, int64_t attempt_id, int64_t flush_bytes, int64_t cache_bytes,
                             ev_err *err)
{
    flush_args a = {attempt_id, flush_bytes, cache_bytes};
    ev_status rc = check_args(s, &a, "add a flush receipt", err);
    if (rc)
        return rc;
    return insert_one(s, "INSERT INTO flushes (attempt_id, flush_bytes, cache_bytes) VALUES (?,?,?)",
                      bind_flush, &a, NULL, "add a flush receipt", err);
}

typedef struct val_args {
    int64_t attempt_id;
    const ev_validation_row *v;
} val_args;

static void bind_val(binder *b, const void *arg) /* binds val_args */
{
    const val_args *a = arg;
    const ev_validation_row *v = a->v;
    b_i64(b, a->attempt_id);
    b_text(b, v->stage);
    b_i64(b, v->passed);
    b_double(b, v->max_abs_err);
    b_double(b, v->bound);
    b_i64(b, v->mismatches);
    b_text(b, v->output_sha256);
    b_blob(b, v->output, v->output_len, 1);
}

/* Inserts an output validation of an attempt (output NULL stores NULL). */
ev_status ev_store_add_validation(ev_store *s, int64_t attempt_id, const ev_validation_row *v, ev_err *err)
{
    val_args a = {attempt_id, v};
    ev_status rc = check_args(s, v, "add a validation", err);
    if (rc)
        return rc;
    return insert_one(s,
                      "INSERT INTO validations (attempt_id, stage, passed, max_abs_err, bound, mismatches, "
                      "output_sha256, output) VALUES (?,?,?,?,?,?,?,?)",
                      bind_val, &a, NULL, "add a validation", err);
}

typedef struct check_args_t {
    int64_t attempt_id;
    const ev_sample_check_row *c;
} check_args_t;

static void bind_check(binder *b, const void *arg) /* binds check_args_t */
{
    const check_args_t *a = arg;
    const ev_sample_check_row *c = a->c;
    b_i64(b, a->attempt_id);
    b_i64(b, c->input_set);
    b_i64(b, c->after_sample);
    b_i64(b, c->passed);
    b_double(b, c->max_abs_err);
    b_double(b, c->bound);
    b_i64(b, c->mismatches);
    b_text(b, c->output_sha256);
    b_blob(b, c->output, c->output_len, 1);
}

/* Inserts an output check after a timed sample (db/migrate-4.sql). */
ev_status ev_store_add_sample_check(ev_store *s, int64_t attempt_id, const ev_sample_check_row *c,
                                    ev_err *err)
{
    check_args_t a = {attempt_id, c};
    ev_status rc = check_args(s, c, "add a sample check", err);
    if (rc)
        return rc;
    if (s->version < 4)
        return ev_err_set(err, EV_EREADONLY, "store %s: schema version %lld has no sample checks", s->path,
                          (long long)s->version);
    return insert_one(s,
                      "INSERT INTO sample_checks (attempt_id, input_set, after_sample, passed, max_abs_err, "
                      "bound, mismatches, output_sha256, output) VALUES (?,?,?,?,?,?,?,?,?)",
                      bind_check, &a, NULL, "add a sample check", err);
}

typedef struct opcheck_args {
    int64_t attempt_id;
    const ev_op_check_row *c;
} opcheck_args;

static void bind_opcheck(binder *b, const void *arg) /* binds opcheck_args */
{
    const opcheck_args *a = arg;
    const ev_op_check_row *c = a->c;
    b_i64(b, a->attempt_id);
    b_text(b, c->timing);
    b_i64(b, c->sample_index);
    b_i64(b, c->replay_end);
    b_i64(b, c->replays);
    b_i64(b, c->ops);
    b_i64(b, c->rows);
    b_i64(b, c->variants);
    b_text(b, c->tag);
    b_i64(b, c->passed);
}

/* Inserts the check tag of a sample (db/migrate-5.sql). */
ev_status ev_store_add_op_check(ev_store *s, int64_t attempt_id, const ev_op_check_row *c, ev_err *err)
{
    opcheck_args a = {attempt_id, c};
    ev_status rc = check_args(s, c, "add an op check", err);
    if (rc)
        return rc;
    if (s->version < 5)
        return ev_err_set(err, EV_EREADONLY, "store %s: schema version %lld has no op checks", s->path,
                          (long long)s->version);
    return insert_one(
        s,
        "INSERT INTO op_checks (attempt_id, timing, sample_index, replay_end, replays, ops, rows, "
        "variants, tag, passed) VALUES (?,?,?,?,?,?,?,?,?,?)",
        bind_opcheck, &a, NULL, "add an op check", err);
}

typedef struct opkept_args {
    int64_t attempt_id;
    const ev_op_kept_row *k;
} opkept_args;

static void bind_opkept(binder *b, const void *arg) /* binds opkept_args */
{
    const opkept_args *a = arg;
    const ev_op_kept_row *k = a->k;
    b_i64(b, a->attempt_id);
    b_i64(b, k->op);
    b_i64(b, k->replay);
    b_i64(b, k->passed);
    b_double(b, k->max_abs_err);
    b_double(b, k->bound);
    b_i64(b, k->mismatches);
    b_text(b, k->output_sha256);
    b_blob(b, k->output, k->output_len, 0);
}

/* Inserts the kept output (db/migrate-5.sql). */
ev_status ev_store_add_op_kept(ev_store *s, int64_t attempt_id, const ev_op_kept_row *k, ev_err *err)
{
    opkept_args a = {attempt_id, k};
    ev_status rc = check_args(s, k, "add a kept output", err);
    if (rc)
        return rc;
    if (s->version < 5)
        return ev_err_set(err, EV_EREADONLY, "store %s: schema version %lld has no kept outputs", s->path,
                          (long long)s->version);
    return insert_one(s,
                      "INSERT INTO op_kept (attempt_id, op, replay, passed, max_abs_err, bound, mismatches, "
                      "output_sha256, output) VALUES (?,?,?,?,?,?,?,?,?)",
                      bind_opkept, &a, NULL, "add a kept output", err);
}

typedef struct node_args {
    int64_t attempt_id;
    const ev_node_row *n;
} node_args;

static void bind_node(binder *b, const void *arg) /* binds node_args */
{
    const node_args *a = arg;
    int i;
    b_i64(b, a->attempt_id);
    b_i64(b, a->n->node_index);
    b_text(b, a->n->function);
    for (i = 0; i < 3; i++)
        b_i64(b, a->n->grid[i]);
    for (i = 0; i < 3; i++)
        b_i64(b, a->n->block[i]);
}

/* Inserts a kernel node (or cpu entry) receipt of an attempt. */
ev_status ev_store_add_graph_node(ev_store *s, int64_t attempt_id, const ev_node_row *n, ev_err *err)
{
    node_args a = {attempt_id, n};
    ev_status rc = check_args(s, n, "add a graph node", err);
    if (rc)
        return rc;
    return insert_one(s,
                      "INSERT INTO graph_nodes (attempt_id, node_index, function, grid_x, grid_y, grid_z, "
                      "block_x, block_y, block_z) VALUES (?,?,?,?,?,?,?,?,?)",
                      bind_node, &a, NULL, "add a graph node", err);
}

typedef struct fit_args {
    int64_t run_id, created_ns;
    const char *model_json;
    const char *sha256_hex;
} fit_args;

static void bind_fit(binder *b, const void *arg) /* binds fit_args */
{
    const fit_args *a = arg;
    b_i64(b, a->run_id);
    b_i64(b, a->created_ns);
    b_text(b, a->model_json);
    b_text(b, a->sha256_hex);
}

/* Inserts a model fit with the SHA-256 of model_json's bytes.  OUT: *fit_id. */
ev_status ev_store_add_fit(ev_store *s, int64_t run_id, int64_t created_ns, const char *model_json,
                           int64_t *fit_id, ev_err *err)
{
    char hex[EV_SHA256_HEX_LEN + 1];
    fit_args a = {run_id, created_ns, model_json, hex};
    ev_status rc = check_args(s, model_json, "add a fit", err);

    if (rc)
        return rc;
    rc = ev_sha256_hex(model_json, strlen(model_json), hex);
    if (rc)
        return ev_err_set(err, rc, "store %s: cannot hash the model: %s", s->path, ev_strerror(rc));
    return insert_one(s, "INSERT INTO fits (run_id, created_ns, model_json, sha256) VALUES (?,?,?,?)",
                      bind_fit, &a, fit_id, "add a fit", err);
}

typedef struct status_args {
    int64_t run_id;
    const char *status, *rescue_status;
    int64_t finished_ns;
} status_args;

static void bind_status(binder *b, const void *arg) /* binds status_args */
{
    const status_args *a = arg;
    b_i64(b, a->run_id);
    b_text(b, a->status);
    b_text(b, a->rescue_status);
    b_i64(b, a->finished_ns);
}

/* Inserts the run status (once: a second call is refused, the first stays). */
ev_status ev_store_set_run_status(ev_store *s, int64_t run_id, const char *status, const char *rescue_status,
                                  int64_t finished_ns, ev_err *err)
{
    status_args a = {run_id, status, rescue_status, finished_ns};
    ev_status rc = check_args(s, status, "set the run status", err);
    if (rc)
        return rc;
    return insert_one(s,
                      "INSERT INTO run_status (run_id, status, rescue_status, finished_ns) VALUES (?,?,?,?)",
                      bind_status, &a, NULL, "set the run status", err);
}

typedef struct shard_args {
    int64_t invocation_id, shard_index, shard_count;
    const char *phase;
} shard_args;

static void bind_shard(binder *b, const void *arg) /* binds shard_args */
{
    const shard_args *a = arg;
    b_i64(b, a->invocation_id);
    b_i64(b, a->shard_index);
    b_i64(b, a->shard_count);
    b_text(b, a->phase);
}

/* Records which shard an invocation ran (db/migrate-2.sql). */
ev_status ev_store_add_shard(ev_store *s, int64_t invocation_id, int64_t shard_index, int64_t shard_count,
                             const char *phase, ev_err *err)
{
    shard_args a = {invocation_id, shard_index, shard_count, phase};
    ev_status rc = check_args(s, phase, "record a shard", err);
    if (rc)
        return rc;
    return insert_one(s,
                      "INSERT INTO shards (invocation_id, shard_index, shard_count, phase) VALUES (?,?,?,?)",
                      bind_shard, &a, NULL, "record a shard", err);
}

typedef struct device_args {
    int64_t attempt_id;
    const char *json;
} device_args;

static void bind_device(binder *b, const void *arg) /* binds device_args */
{
    const device_args *a = arg;
    b_i64(b, a->attempt_id);
    b_text(b, a->json);
}

/* Records an attempt's device record (db/migrate-3.sql): once per attempt,
 * a JSON object (the schema refuses anything else). */
ev_status ev_store_add_device(ev_store *s, int64_t attempt_id, const char *json, ev_err *err)
{
    device_args a = {attempt_id, json};
    ev_status rc = check_args(s, json, "record an attempt's device", err);
    if (rc)
        return rc;
    if (s->version < 3)
        return ev_err_set(err, EV_EREADONLY, "store %s: schema version %lld has no device records", s->path,
                          (long long)s->version);
    return insert_one(s, "INSERT INTO attempt_devices (attempt_id, json) VALUES (?,?)", bind_device, &a, NULL,
                      "record an attempt's device", err);
}

int64_t ev_store_version(const ev_store *s)
{
    return s ? s->version : 0;
}

/* ---- merge ------------------------------------------------------------- */

/* One INSERT ... SELECT of the copy: ?1 the source run, ?2 the target run,
 * ?3 the invocation offset, ?4 the job offset, ?5 the attempt offset.
 * Tables whose rows hang off an attempt share one form. */
#define ATT_FROM(t)                                                                                          \
    " FROM src." t " x JOIN src.attempts a ON a.attempt_id = x.attempt_id JOIN src.jobs j ON j.job_id = "    \
    "a.job_id WHERE j.run_id = ?1"
static const char *const copy_sql[] = {
    "INSERT INTO main.invocations (invocation_id, run_id, started_ns, resumed, host_hash) "
    "SELECT invocation_id + ?3, ?2, started_ns, resumed, host_hash FROM src.invocations WHERE run_id = ?1 "
    "ORDER BY invocation_id",
    "INSERT INTO main.environments (invocation_id, profile_id, json) SELECT e.invocation_id + ?3, "
    "e.profile_id, e.json FROM src.environments e JOIN src.invocations i ON i.invocation_id = "
    "e.invocation_id WHERE i.run_id = ?1 ORDER BY e.invocation_id",
    "INSERT INTO main.shards (invocation_id, shard_index, shard_count, phase) SELECT h.invocation_id + ?3, "
    "h.shard_index, h.shard_count, h.phase FROM src.shards h JOIN src.invocations i ON i.invocation_id = "
    "h.invocation_id WHERE i.run_id = ?1 ORDER BY h.invocation_id",
    "INSERT INTO main.jobs (job_id, run_id, job_key, phase, case_index, arm, label, retry_of, plan_order) "
    "SELECT job_id + ?4, ?2, job_key, phase, case_index, arm, label, retry_of + ?4, plan_order FROM src.jobs "
    "WHERE run_id = ?1 ORDER BY job_id",
    "INSERT INTO main.attempts (attempt_id, job_id, attempt, invocation_id, started_ns) SELECT a.attempt_id "
    "+ ?5, a.job_id + ?4, a.attempt, a.invocation_id + ?3, a.started_ns FROM src.attempts a JOIN src.jobs j "
    "ON j.job_id = a.job_id WHERE j.run_id = ?1 ORDER BY a.attempt_id",
    "INSERT INTO main.processes (attempt_id, pid, exit_code, signal, timed_out, interrupted, skipped, "
    "skip_reason, record_count, records_ok, protocol_error, affinity, stderr_tail, ended_ns, wall_ns) "
    "SELECT x.attempt_id + ?5, x.pid, x.exit_code, x.signal, x.timed_out, x.interrupted, x.skipped, "
    "x.skip_reason, x.record_count, x.records_ok, x.protocol_error, x.affinity, x.stderr_tail, x.ended_ns, "
    "x.wall_ns" ATT_FROM("processes") " ORDER BY x.attempt_id",
    "INSERT INTO main.bindings (attempt_id, op, dtype, rows, cols, stride, in_span, out_span, in_align, "
    "out_align, threads) SELECT x.attempt_id + ?5, x.op, x.dtype, x.rows, x.cols, x.stride, x.in_span, "
    "x.out_span, x.in_align, x.out_align, x.threads" ATT_FROM("bindings") " ORDER BY x.attempt_id",
    "INSERT INTO main.samples (attempt_id, timing, sample_index, replays, ops_per_graph, elapsed_ms, "
    "sm_clock_mhz) SELECT x.attempt_id + ?5, x.timing, x.sample_index, x.replays, x.ops_per_graph, "
    "x.elapsed_ms, x.sm_clock_mhz" ATT_FROM("samples") " ORDER BY "
                                                       "x.attempt_id, x.timing, x.sample_index",
    "INSERT INTO main.warmups (attempt_id, target_ms, elapsed_ms, replays) SELECT x.attempt_id + ?5, "
    "x.target_ms, x.elapsed_ms, x.replays" ATT_FROM("warmups") " ORDER "
                                                               "BY x.attempt_id",
    "INSERT INTO main.calibrations (attempt_id, step, replays, elapsed_ms, chosen, target_ms) SELECT "
    "x.attempt_id + ?5, x.step, x.replays, x.elapsed_ms, x.chosen, x.target_ms" ATT_FROM(
        "calibrations") " ORDER BY x.attempt_id, x.step",
    "INSERT INTO main.cold_timings (attempt_id, name, elapsed_ns) SELECT x.attempt_id + ?5, x.name, "
    "x.elapsed_ns" ATT_FROM("cold_timings") " ORDER BY x.attempt_id, "
                                            "x.name",
    "INSERT INTO main.flushes (attempt_id, flush_bytes, cache_bytes) SELECT x.attempt_id + ?5, "
    "x.flush_bytes, x.cache_bytes" ATT_FROM("flushes") " ORDER BY "
                                                       "x.attempt_id",
    "INSERT INTO main.validations (attempt_id, stage, passed, max_abs_err, bound, mismatches, "
    "output_sha256, output) SELECT x.attempt_id + ?5, x.stage, x.passed, x.max_abs_err, x.bound, "
    "x.mismatches, x.output_sha256, x.output" ATT_FROM("validations") " "
                                                                      "ORDER BY x.attempt_id, x.stage",
    "INSERT INTO main.graph_nodes (attempt_id, node_index, function, grid_x, grid_y, grid_z, block_x, "
    "block_y, block_z) SELECT x.attempt_id + ?5, x.node_index, x.function, x.grid_x, x.grid_y, x.grid_z, "
    "x.block_x, x.block_y, x.block_z" ATT_FROM("graph_nodes") " ORDER BY "
                                                              "x.attempt_id, x.node_index",
};

/* The device records (db/migrate-3.sql), copied only from a source that
 * has them (a version-2 shard store, read as it is, has none). */
static const char copy_devices_sql[] =
    "INSERT INTO main.attempt_devices (attempt_id, json) SELECT x.attempt_id + ?5, x.json" ATT_FROM(
        "attempt_devices") " ORDER BY x.attempt_id";

/* The sample checks (db/migrate-4.sql), likewise from a source that has
 * them. */
static const char copy_checks_sql[] =
    "INSERT INTO main.sample_checks (attempt_id, input_set, after_sample, passed, max_abs_err, bound, "
    "mismatches, output_sha256, output) SELECT x.attempt_id + ?5, x.input_set, x.after_sample, x.passed, "
    "x.max_abs_err, x.bound, x.mismatches, x.output_sha256, x.output" ATT_FROM(
        "sample_checks") " ORDER BY x.attempt_id, x.input_set, x.after_sample";

/* The op checks and kept outputs (db/migrate-5.sql), likewise from a
 * source that has them. */
static const char copy_opchecks_sql[] =
    "INSERT INTO main.op_checks (attempt_id, timing, sample_index, replay_end, replays, ops, rows, variants, "
    "tag, passed) SELECT x.attempt_id + ?5, x.timing, x.sample_index, x.replay_end, x.replays, x.ops, "
    "x.rows, "
    "x.variants, x.tag, x.passed" ATT_FROM("op_checks") " ORDER BY x.attempt_id, x.timing, x.sample_index";
static const char copy_opkept_sql[] =
    "INSERT INTO main.op_kept (attempt_id, op, replay, passed, max_abs_err, bound, mismatches, "
    "output_sha256, "
    "output) SELECT x.attempt_id + ?5, x.op, x.replay, x.passed, x.max_abs_err, x.bound, x.mismatches, "
    "x.output_sha256, x.output" ATT_FROM("op_kept") " ORDER BY x.attempt_id";

/* The run's own rows (run, sources, cases), copied from the first source
 * only: ?1 the source run, ?2 the target run. */
static const char *const copy_run_sql[] = {
    "INSERT INTO main.runs (run_id, protocol_id, protocol_bytes, protocol_path, backend, seed, git_commit, "
    "git_dirty, source_tree_hash, created_ns) SELECT ?2, protocol_id, protocol_bytes, protocol_path, "
    "backend, seed, git_commit, git_dirty, source_tree_hash, created_ns FROM src.runs WHERE run_id = ?1",
    "INSERT INTO main.sources (run_id, path, sha256, bytes) SELECT ?2, path, sha256, bytes FROM src.sources "
    "WHERE run_id = ?1 ORDER BY path",
    "INSERT INTO main.cases (run_id, case_index, op, rows, cols, stride, dtype, default_rows, role) SELECT "
    "?2, case_index, op, rows, cols, stride, dtype, default_rows, role FROM src.cases WHERE run_id = ?1 "
    "ORDER BY case_index",
};

/* Runs one statement of the copy with its five parameters (unused ones
 * are harmless).  EV_OK or the translated failure. */
static ev_status copy_step(ev_store *s, const char *sql, const int64_t p[5], ev_err *err)
{
    sqlite3_stmt *st = NULL;
    ev_status rc = store_prepare(s, sql, &st, "merge a store", err);
    int src = SQLITE_OK;

    if (rc)
        return rc;
    for (int i = 0; i < sqlite3_bind_parameter_count(st) && src == SQLITE_OK; i++)
        src = sqlite3_bind_int64(st, i + 1, p[i]);
    if (src == SQLITE_OK)
        src = sqlite3_step(st);
    if (src != SQLITE_DONE)
        rc = store_fail(s, src, "merge a store", err);
    sqlite3_finalize(st);
    return rc;
}

/* Reads MAX(col) of main.table (0 when empty) into *out. */
static ev_status max_id(ev_store *s, const char *table, const char *col, int64_t *out, ev_err *err)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT COALESCE(MAX(%s), 0) FROM main.%s", col, table);
    return store_int_query(s, sql, out, "merge a store", err);
}

/* See store.h. */
ev_status ev_store_copy_run(ev_store *s, int64_t dst_run, const char *src_path, int64_t src_run, int with_run,
                            ev_err *err)
{
    sqlite3_stmt *st = NULL;
    int64_t p[5] = {src_run, dst_run, 0, 0, 0}, has_devices = 0, has_checks = 0, has_opchecks = 0;
    ev_buf uri = EV_BUF_INIT;
    ev_status rc;
    int src, attached = 0;

    if (!s || !src_path || s->readonly || s->tx != TX_NONE)
        return ev_err_set(err, EV_EINVAL, "store: cannot merge: bad arguments or an open transaction");
    /* read-only (and immutable on read-only media), as ev_store_open reads it */
    if ((rc = store_uri(src_path, store_needs_immutable(src_path) ? "?mode=ro&immutable=1" : "?mode=ro",
                        &uri)))
        return ev_err_set(err, rc, "store: out of memory");
    rc = store_prepare(s, "ATTACH DATABASE ?1 AS src", &st, "attach a shard store", err);
    if (rc) {
        ev_buf_free(&uri);
        return rc;
    }
    src = sqlite3_bind_text(st, 1, uri.data, -1, SQLITE_TRANSIENT);
    ev_buf_free(&uri);
    if (src == SQLITE_OK)
        src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return store_fail(s, src, "attach a shard store", err);
    attached = 1;
    if ((rc = store_exec(s, "BEGIN IMMEDIATE", "merge a store", err)))
        goto out;
    if ((rc = max_id(s, "invocations", "invocation_id", &p[2], err)) ||
        (rc = max_id(s, "jobs", "job_id", &p[3], err)) ||
        (rc = max_id(s, "attempts", "attempt_id", &p[4], err)))
        goto fail;
    for (size_t i = 0; with_run && i < sizeof copy_run_sql / sizeof copy_run_sql[0]; i++)
        if ((rc = copy_step(s, copy_run_sql[i], p, err)))
            goto fail;
    for (size_t i = 0; i < sizeof copy_sql / sizeof copy_sql[0]; i++)
        if ((rc = copy_step(s, copy_sql[i], p, err)))
            goto fail;
    if ((rc = store_int_query(s, "SELECT COUNT(*) FROM src.sqlite_master WHERE name = 'attempt_devices'",
                              &has_devices, "merge a store", err)) ||
        (has_devices && (rc = copy_step(s, copy_devices_sql, p, err))))
        goto fail;
    if ((rc = store_int_query(s, "SELECT COUNT(*) FROM src.sqlite_master WHERE name = 'sample_checks'",
                              &has_checks, "merge a store", err)) ||
        (has_checks && (rc = copy_step(s, copy_checks_sql, p, err))))
        goto fail;
    if ((rc = store_int_query(s, "SELECT COUNT(*) FROM src.sqlite_master WHERE name = 'op_checks'",
                              &has_opchecks, "merge a store", err)) ||
        (has_opchecks &&
         ((rc = copy_step(s, copy_opchecks_sql, p, err)) || (rc = copy_step(s, copy_opkept_sql, p, err)))))
        goto fail;
    rc = store_exec(s, "COMMIT", "merge a store", err);
    if (!rc)
        goto out;
fail:
    store_abort(s);
out:
    if (attached)
        sqlite3_exec(s->db, "DETACH DATABASE src", NULL, NULL, NULL);
    return rc;
}

/* ---- reads ------------------------------------------------------------- */

/* The SQL of each named query (columns and order as store.h documents). */
static const char *const query_sql[EV_Q_COUNT] = {
    [EV_Q_RUNS] = "SELECT run_id, protocol_id, protocol_path, backend, seed, git_commit, git_dirty, "
                  "source_tree_hash, created_ns FROM runs ORDER BY run_id",
    [EV_Q_RUN] = "SELECT run_id, protocol_id, protocol_path, backend, seed, git_commit, git_dirty, "
                 "source_tree_hash, created_ns, protocol_bytes FROM runs WHERE run_id = ?1",
    [EV_Q_RUN_STATUS] = "SELECT status, rescue_status, finished_ns FROM run_status WHERE run_id = ?1",
    [EV_Q_INVOCATIONS] =
        "SELECT i.invocation_id, i.started_ns, i.resumed, i.host_hash, e.profile_id, e.json AS env_json "
        "FROM invocations i LEFT JOIN environments e ON e.invocation_id = i.invocation_id "
        "WHERE i.run_id = ?1 ORDER BY i.invocation_id",
    [EV_Q_SOURCES] = "SELECT path, sha256, bytes FROM sources WHERE run_id = ?1 ORDER BY path",
    [EV_Q_CASES] = "SELECT case_index, op, rows, cols, stride, dtype, default_rows, role FROM cases "
                   "WHERE run_id = ?1 ORDER BY case_index",
    [EV_Q_JOBS] = "SELECT job_id, job_key, phase, case_index, arm, label, retry_of, plan_order FROM jobs "
                  "WHERE run_id = ?1 ORDER BY job_id",
    [EV_Q_ATTEMPTS] =
        "SELECT a.attempt_id, a.job_id, a.attempt, a.invocation_id, a.started_ns, "
        "p.attempt_id IS NOT NULL AS has_process, p.pid, p.exit_code, p.signal, p.timed_out, p.interrupted, "
        "p.skipped, p.skip_reason, p.record_count, p.records_ok, p.protocol_error, p.affinity, "
        "p.stderr_tail, p.ended_ns, p.wall_ns "
        "FROM attempts a JOIN jobs j ON j.job_id = a.job_id "
        "LEFT JOIN processes p ON p.attempt_id = a.attempt_id "
        "WHERE j.run_id = ?1 ORDER BY a.job_id, a.attempt",
    [EV_Q_SAMPLES] =
        "SELECT s.attempt_id, s.timing, s.sample_index, s.replays, s.ops_per_graph, s.elapsed_ms, "
        "s.sm_clock_mhz FROM samples s JOIN attempts a ON a.attempt_id = s.attempt_id "
        "JOIN jobs j ON j.job_id = a.job_id WHERE j.run_id = ?1 "
        "ORDER BY s.attempt_id, s.timing, s.sample_index",
    [EV_Q_BINDINGS] = "SELECT b.attempt_id, b.op, b.dtype, b.rows, b.cols, b.stride, b.in_span, b.out_span, "
                      "b.in_align, b.out_align, b.threads FROM bindings b "
                      "JOIN attempts a ON a.attempt_id = b.attempt_id JOIN jobs j ON j.job_id = a.job_id "
                      "WHERE j.run_id = ?1 ORDER BY b.attempt_id",
    [EV_Q_WARMUPS] = "SELECT w.attempt_id, w.target_ms, w.elapsed_ms, w.replays FROM warmups w "
                     "JOIN attempts a ON a.attempt_id = w.attempt_id JOIN jobs j ON j.job_id = a.job_id "
                     "WHERE j.run_id = ?1 ORDER BY w.attempt_id",
    [EV_Q_CALIBRATIONS] = "SELECT c.attempt_id, c.step, c.replays, c.elapsed_ms, c.chosen, c.target_ms "
                          "FROM calibrations c JOIN attempts a ON a.attempt_id = c.attempt_id "
                          "JOIN jobs j ON j.job_id = a.job_id WHERE j.run_id = ?1 "
                          "ORDER BY c.attempt_id, c.step",
    [EV_Q_COLD] = "SELECT c.attempt_id, c.name, c.elapsed_ns FROM cold_timings c "
                  "JOIN attempts a ON a.attempt_id = c.attempt_id JOIN jobs j ON j.job_id = a.job_id "
                  "WHERE j.run_id = ?1 ORDER BY c.attempt_id, c.name",
    [EV_Q_FLUSHES] = "SELECT f.attempt_id, f.flush_bytes, f.cache_bytes FROM flushes f "
                     "JOIN attempts a ON a.attempt_id = f.attempt_id JOIN jobs j ON j.job_id = a.job_id "
                     "WHERE j.run_id = ?1 ORDER BY f.attempt_id",
    [EV_Q_VALIDATIONS] = "SELECT v.attempt_id, v.stage, v.passed, v.max_abs_err, v.bound, v.mismatches, "
                         "v.output_sha256, v.output FROM validations v "
                         "JOIN attempts a ON a.attempt_id = v.attempt_id JOIN jobs j ON j.job_id = a.job_id "
                         "WHERE j.run_id = ?1 ORDER BY v.attempt_id, v.stage",
    [EV_Q_GRAPH_NODES] = "SELECT g.attempt_id, g.node_index, g.function, g.grid_x, g.grid_y, g.grid_z, "
                         "g.block_x, g.block_y, g.block_z FROM graph_nodes g "
                         "JOIN attempts a ON a.attempt_id = g.attempt_id JOIN jobs j ON j.job_id = a.job_id "
                         "WHERE j.run_id = ?1 ORDER BY g.attempt_id, g.node_index",
    [EV_Q_FITS] = "SELECT fit_id, created_ns, model_json, sha256 FROM fits WHERE run_id = ?1 ORDER BY fit_id",
    [EV_Q_OUTCOMES] = "SELECT o.attempt_id, o.job_id, o.attempt, o.outcome FROM attempt_outcomes o "
                      "JOIN jobs j ON j.job_id = o.job_id WHERE j.run_id = ?1 ORDER BY o.attempt_id",
    [EV_Q_FAILURES] = "SELECT job_id, job_key, phase, case_index, arm, label, attempt, outcome FROM failures "
                      "WHERE run_id = ?1 ORDER BY job_id",
    [EV_Q_HOT_COUNTS] = "SELECT job_key, phase, case_index, arm, n, min_us, max_us FROM hot_sample_counts "
                        "WHERE run_id = ?1 ORDER BY job_key",
    [EV_Q_SHARDS] = "SELECT h.invocation_id, h.shard_index, h.shard_count, h.phase FROM shards h "
                    "JOIN invocations i ON i.invocation_id = h.invocation_id WHERE i.run_id = ?1 "
                    "ORDER BY h.invocation_id",
    [EV_Q_DEVICES] = "SELECT d.attempt_id, d.json FROM attempt_devices d "
                     "JOIN attempts a ON a.attempt_id = d.attempt_id JOIN jobs j ON j.job_id = a.job_id "
                     "WHERE j.run_id = ?1 ORDER BY d.attempt_id",
    [EV_Q_SAMPLE_CHECKS] =
        "SELECT c.attempt_id, c.input_set, c.after_sample, c.passed, c.max_abs_err, c.bound, "
        "c.mismatches, c.output_sha256, c.output FROM sample_checks c "
        "JOIN attempts a ON a.attempt_id = c.attempt_id JOIN jobs j ON j.job_id = a.job_id "
        "WHERE j.run_id = ?1 ORDER BY c.attempt_id, c.input_set, c.after_sample",
    [EV_Q_OP_CHECKS] =
        "SELECT c.attempt_id, c.timing, c.sample_index, c.replay_end, c.replays, c.ops, c.rows, c.variants, "
        "c.tag, c.passed FROM op_checks c JOIN attempts a ON a.attempt_id = c.attempt_id "
        "JOIN jobs j ON j.job_id = a.job_id WHERE j.run_id = ?1 ORDER BY c.attempt_id, c.timing, "
        "c.sample_index",
    [EV_Q_OP_KEPT] =
        "SELECT k.attempt_id, k.op, k.replay, k.passed, k.max_abs_err, k.bound, k.mismatches, "
        "k.output_sha256, k.output FROM op_kept k JOIN attempts a ON a.attempt_id = k.attempt_id "
        "JOIN jobs j ON j.job_id = a.job_id WHERE j.run_id = ?1 ORDER BY k.attempt_id",
};

/* Runs named query q (see store.h).  Callback statuses pass through. */
ev_status ev_store_query(ev_store *s, ev_query q, int64_t run_id, ev_row_fn fn, void *ctx, ev_err *err)
{
    sqlite3_stmt *st = NULL;
    ev_row row;
    ev_status rc;
    int src;

    if (!s || !fn || (int)q < 0 || q >= EV_Q_COUNT)
        return ev_err_set(err, EV_EINVAL, "store: bad query arguments");
    if (q == EV_Q_SHARDS && s->version < 2)
        return EV_OK; /* a version-1 store (read as it is) has no shards */
    if (q == EV_Q_DEVICES && s->version < 3)
        return EV_OK; /* nor an older store device records */
    if (q == EV_Q_SAMPLE_CHECKS && s->version < 4)
        return EV_OK; /* nor sample checks */
    if ((q == EV_Q_OP_CHECKS || q == EV_Q_OP_KEPT) && s->version < 5)
        return EV_OK; /* nor op checks and kept outputs */
    rc = store_prepare(s, query_sql[q], &st, "run a query", err);
    if (rc)
        goto out;
    if (sqlite3_bind_parameter_count(st) > 0) {
        src = sqlite3_bind_int64(st, 1, run_id);
        if (src != SQLITE_OK) {
            rc = store_fail(s, src, "run a query", err);
            goto out;
        }
    }
    row.st = st;
    row.q = q;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        rc = fn(ctx, &row);
        if (rc)
            goto out;
    }
    if (src != SQLITE_DONE)
        rc = store_fail(s, src, "run a query", err);
out:
    sqlite3_finalize(st);
    return rc;
}

/* The latest moment the run's records show.  OUT: *ns. */
ev_status ev_store_last_end_ns(ev_store *s, int64_t run_id, int64_t *ns, ev_err *err)
{
    char sql[400];
    int64_t v = 0;
    ev_status rc;

    if (!s || !ns)
        return ev_err_set(err, EV_EINVAL, "store: bad arguments");
    snprintf(sql, sizeof sql,
             "SELECT MAX(COALESCE((SELECT MAX(p.ended_ns) FROM processes p JOIN attempts a ON a.attempt_id = "
             "p.attempt_id JOIN jobs j ON j.job_id = a.job_id WHERE j.run_id = %lld), 0), (SELECT "
             "COALESCE(MAX(started_ns), 0) FROM invocations WHERE run_id = %lld))",
             (long long)run_id, (long long)run_id);
    rc = store_int_query(s, sql, &v, "find the run's last record", err);
    if (rc == EV_ENOTFOUND)
        rc = EV_OK;
    if (!rc)
        *ns = v;
    return rc;
}

/* Returns the newest run id.  OUT: *run_id.  EV_ENOTFOUND when no run. */
ev_status ev_store_last_run(ev_store *s, int64_t *run_id, ev_err *err)
{
    sqlite3_stmt *st = NULL;
    ev_status rc;
    int src;

    if (!s || !run_id)
        return ev_err_set(err, EV_EINVAL, "store: bad arguments");
    rc = store_prepare(s, "SELECT MAX(run_id) FROM runs", &st, "find the last run", err);
    if (rc)
        goto out;
    src = sqlite3_step(st);
    if (src != SQLITE_ROW) {
        rc = store_fail(s, src, "find the last run", err);
        goto out;
    }
    if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
        rc = ev_err_set(err, EV_ENOTFOUND, "store %s holds no run", s->path);
        goto out;
    }
    *run_id = sqlite3_column_int64(st, 0);
out:
    sqlite3_finalize(st);
    return rc;
}

/* Number of columns of the row's query. */
int ev_row_columns(const ev_row *r)
{
    return sqlite3_column_count(r->st);
}

/* Name of column col (as store.h documents it); NULL when out of range. */
const char *ev_row_name(const ev_row *r, int col)
{
    return sqlite3_column_name(r->st, col);
}

/* Column col as an integer (0 for NULL). */
int64_t ev_row_i64(const ev_row *r, int col)
{
    return sqlite3_column_int64(r->st, col);
}

/* Column col as a double, exactly as stored for REAL (0.0 for NULL). */
double ev_row_double(const ev_row *r, int col)
{
    return sqlite3_column_double(r->st, col);
}

/* 1 when column col is SQL NULL. */
int ev_row_is_null(const ev_row *r, int col)
{
    return sqlite3_column_type(r->st, col) == SQLITE_NULL;
}

/* Column col as NUL-terminated text (valid during the callback); NULL for
 * SQL NULL. */
const char *ev_row_text(const ev_row *r, int col)
{
    if (sqlite3_column_type(r->st, col) == SQLITE_NULL)
        return NULL;
    return (const char *)sqlite3_column_text(r->st, col);
}

/* Column col as bytes (valid during the callback).  OUT: *len.  NULL (len
 * 0) for SQL NULL; an empty blob gives a non-NULL pointer and len 0. */
const void *ev_row_blob(const ev_row *r, int col, size_t *len)
{
    static const char empty[1] = {0};
    const void *p;
    int n;

    if (sqlite3_column_type(r->st, col) == SQLITE_NULL) {
        if (len)
            *len = 0;
        return NULL;
    }
    p = sqlite3_column_blob(r->st, col);
    n = sqlite3_column_bytes(r->st, col);
    if (len)
        *len = n > 0 ? (size_t)n : 0;
    return p ? p : empty;
}

/* ---- typed rows (store.h): each query's columns, by their place in the
 * SQL above ---------------------------------------------------------------- */

/* Column c as an integer, and *has 1 unless it is SQL NULL (then 0). */
static int64_t row_i64_null(const ev_row *r, int c, int *has)
{
    *has = !ev_row_is_null(r, c);
    return ev_row_i64(r, c);
}

/* Column c as a double, and *null 1 when it is SQL NULL (then 0.0). */
static double row_double_null(const ev_row *r, int c, int *null)
{
    *null = ev_row_is_null(r, c);
    return ev_row_double(r, c);
}

void ev_row_run(const ev_row *r, ev_run_rec *o)
{
    assert(r->q == EV_Q_RUNS || r->q == EV_Q_RUN);
    memset(o, 0, sizeof *o);
    o->run_id = ev_row_i64(r, 0);
    o->protocol_id = ev_row_text(r, 1);
    o->protocol_path = ev_row_text(r, 2);
    o->backend = ev_row_text(r, 3);
    o->seed = ev_row_i64(r, 4);
    o->git_commit = ev_row_text(r, 5);
    o->git_dirty = (int)ev_row_i64(r, 6);
    o->source_tree_hash = ev_row_text(r, 7);
    o->created_ns = ev_row_i64(r, 8);
    if (r->q == EV_Q_RUN)
        o->protocol = ev_row_blob(r, 9, &o->protocol_len);
}

void ev_row_run_status(const ev_row *r, ev_run_status_rec *o)
{
    assert(r->q == EV_Q_RUN_STATUS);
    o->status = ev_row_text(r, 0);
    o->rescue_status = ev_row_text(r, 1);
    o->finished_ns = ev_row_i64(r, 2);
}

void ev_row_invocation(const ev_row *r, ev_invocation_rec *o)
{
    assert(r->q == EV_Q_INVOCATIONS);
    o->invocation_id = ev_row_i64(r, 0);
    o->started_ns = ev_row_i64(r, 1);
    o->resumed = (int)ev_row_i64(r, 2);
    o->host_hash = ev_row_text(r, 3);
    o->profile_id = ev_row_text(r, 4);
    o->env_json = ev_row_text(r, 5);
}

void ev_row_shard(const ev_row *r, ev_shard_rec *o)
{
    assert(r->q == EV_Q_SHARDS);
    o->invocation_id = ev_row_i64(r, 0);
    o->shard_index = ev_row_i64(r, 1);
    o->shard_count = ev_row_i64(r, 2);
    o->phase = ev_row_text(r, 3);
}

void ev_row_sample_check(const ev_row *r, ev_sample_check_rec *o)
{
    assert(r->q == EV_Q_SAMPLE_CHECKS);
    o->attempt_id = ev_row_i64(r, 0);
    o->input_set = ev_row_i64(r, 1);
    o->after_sample = ev_row_i64(r, 2);
    o->passed = ev_row_i64(r, 3) != 0;
    o->max_abs_err = row_double_null(r, 4, &o->mae_null);
    o->bound = row_double_null(r, 5, &o->bound_null);
    o->mismatches = ev_row_i64(r, 6);
    o->output_sha256 = ev_row_text(r, 7);
    o->has_output = !ev_row_is_null(r, 8);
    o->output = ev_row_blob(r, 8, &o->output_len);
}

void ev_row_op_check(const ev_row *r, ev_op_check_rec *o)
{
    assert(r->q == EV_Q_OP_CHECKS);
    o->attempt_id = ev_row_i64(r, 0);
    o->timing = ev_row_text(r, 1);
    o->sample_index = ev_row_i64(r, 2);
    o->replay_end = ev_row_i64(r, 3);
    o->replays = ev_row_i64(r, 4);
    o->ops = ev_row_i64(r, 5);
    o->rows = ev_row_i64(r, 6);
    o->variants = ev_row_i64(r, 7);
    o->tag = ev_row_text(r, 8);
    o->passed = ev_row_i64(r, 9) != 0;
}

void ev_row_op_kept(const ev_row *r, ev_op_kept_rec *o)
{
    assert(r->q == EV_Q_OP_KEPT);
    o->attempt_id = ev_row_i64(r, 0);
    o->op = ev_row_i64(r, 1);
    o->replay = ev_row_i64(r, 2);
    o->passed = ev_row_i64(r, 3) != 0;
    o->max_abs_err = row_double_null(r, 4, &o->mae_null);
    o->bound = row_double_null(r, 5, &o->bound_null);
    o->mismatches = ev_row_i64(r, 6);
    o->output_sha256 = ev_row_text(r, 7);
    o->output = ev_row_blob(r, 8, &o->output_len);
}

void ev_row_device(const ev_row *r, ev_device_rec *o)
{
    assert(r->q == EV_Q_DEVICES);
    o->attempt_id = ev_row_i64(r, 0);
    o->json = ev_row_text(r, 1);
}

void ev_row_source(const ev_row *r, ev_source_rec *o)
{
    assert(r->q == EV_Q_SOURCES);
    o->path = ev_row_text(r, 0);
    o->sha256 = ev_row_text(r, 1);
    o->bytes = ev_row_blob(r, 2, &o->len);
}

void ev_row_case(const ev_row *r, ev_case_rec *o)
{
    assert(r->q == EV_Q_CASES);
    o->case_index = ev_row_i64(r, 0);
    o->op = ev_row_text(r, 1);
    o->rows = ev_row_i64(r, 2);
    o->cols = ev_row_i64(r, 3);
    o->stride = ev_row_i64(r, 4);
    o->dtype = ev_row_text(r, 5);
    o->default_rows = ev_row_i64(r, 6);
    o->role = ev_row_text(r, 7);
}

void ev_row_job(const ev_row *r, ev_job_rec *o)
{
    assert(r->q == EV_Q_JOBS);
    o->job_id = ev_row_i64(r, 0);
    o->job_key = ev_row_text(r, 1);
    o->phase = ev_row_text(r, 2);
    o->case_index = row_i64_null(r, 3, &o->has_case);
    if (!o->has_case)
        o->case_index = -1;
    o->arm = ev_row_text(r, 4);
    o->label = ev_row_text(r, 5);
    o->retry_of = row_i64_null(r, 6, &o->has_retry);
    o->plan_order = ev_row_i64(r, 7);
}

void ev_process_row_facts(const ev_process_row *p, int validation_failed, ev_process_facts *o)
{
    memset(o, 0, sizeof *o);
    o->has_process = 1;
    o->has_exit = p->has_exit;
    o->exit_code = p->exit_code;
    o->has_signal = p->has_signal;
    o->signal = p->signal;
    o->timed_out = p->timed_out != 0;
    o->interrupted = p->interrupted != 0;
    o->skipped = p->skipped != 0;
    o->records_ok = p->records_ok != 0;
    o->validation_failed = validation_failed != 0;
}

void ev_row_attempt(const ev_row *r, ev_attempt_rec *o)
{
    ev_process_facts *f = &o->facts;

    assert(r->q == EV_Q_ATTEMPTS);
    memset(o, 0, sizeof *o);
    o->attempt_id = ev_row_i64(r, 0);
    o->job_id = ev_row_i64(r, 1);
    o->attempt = ev_row_i64(r, 2);
    o->invocation_id = ev_row_i64(r, 3);
    o->started_ns = ev_row_i64(r, 4);
    f->has_process = !ev_row_is_null(r, 5) && ev_row_i64(r, 5) != 0;
    if (!f->has_process)
        return;
    o->pid = row_i64_null(r, 6, &o->has_pid);
    f->exit_code = row_i64_null(r, 7, &f->has_exit);
    f->signal = row_i64_null(r, 8, &f->has_signal);
    f->timed_out = ev_row_i64(r, 9) != 0;
    f->interrupted = ev_row_i64(r, 10) != 0;
    f->skipped = ev_row_i64(r, 11) != 0;
    o->skip_reason = ev_row_text(r, 12);
    o->record_count = ev_row_i64(r, 13);
    f->records_ok = ev_row_i64(r, 14) != 0;
    o->protocol_error = ev_row_text(r, 15);
    o->affinity = ev_row_text(r, 16);
    o->stderr_tail = ev_row_text(r, 17);
    o->ended_ns = ev_row_i64(r, 18);
    o->wall_ns = ev_row_i64(r, 19);
}

void ev_row_sample(const ev_row *r, ev_sample_rec *o)
{
    assert(r->q == EV_Q_SAMPLES);
    o->attempt_id = ev_row_i64(r, 0);
    o->timing = ev_row_text(r, 1);
    o->sample_index = ev_row_i64(r, 2);
    o->replays = ev_row_i64(r, 3);
    o->ops_per_graph = ev_row_i64(r, 4);
    o->elapsed_ms = row_double_null(r, 5, &o->elapsed_null);
    o->sm_clock_mhz = row_i64_null(r, 6, &o->has_clock);
}

void ev_row_binding(const ev_row *r, ev_binding_rec *o)
{
    assert(r->q == EV_Q_BINDINGS);
    o->attempt_id = ev_row_i64(r, 0);
    o->op = ev_row_text(r, 1);
    o->dtype = ev_row_text(r, 2);
    o->rows = ev_row_i64(r, 3);
    o->cols = ev_row_i64(r, 4);
    o->stride = ev_row_i64(r, 5);
    o->in_span = ev_row_i64(r, 6);
    o->out_span = ev_row_i64(r, 7);
    o->in_align = ev_row_i64(r, 8);
    o->out_align = ev_row_i64(r, 9);
    o->threads = ev_row_i64(r, 10);
}

void ev_row_warmup(const ev_row *r, ev_warmup_rec *o)
{
    assert(r->q == EV_Q_WARMUPS);
    o->attempt_id = ev_row_i64(r, 0);
    o->target_ms = row_double_null(r, 1, &o->target_null);
    o->elapsed_ms = row_double_null(r, 2, &o->elapsed_null);
    o->replays = ev_row_i64(r, 3);
}

void ev_row_calibration(const ev_row *r, ev_calibration_rec *o)
{
    assert(r->q == EV_Q_CALIBRATIONS);
    o->attempt_id = ev_row_i64(r, 0);
    o->step = ev_row_i64(r, 1);
    o->replays = ev_row_i64(r, 2);
    o->elapsed_ms = row_double_null(r, 3, &o->elapsed_null);
    o->chosen = ev_row_i64(r, 4) != 0;
    o->target_ms = row_double_null(r, 5, &o->target_null);
}

void ev_row_cold(const ev_row *r, ev_cold_rec *o)
{
    assert(r->q == EV_Q_COLD);
    o->attempt_id = ev_row_i64(r, 0);
    o->name = ev_row_text(r, 1);
    o->elapsed_ns = ev_row_i64(r, 2);
}

void ev_row_flush(const ev_row *r, ev_flush_rec *o)
{
    assert(r->q == EV_Q_FLUSHES);
    o->attempt_id = ev_row_i64(r, 0);
    o->flush_bytes = ev_row_i64(r, 1);
    o->cache_bytes = ev_row_i64(r, 2);
}

void ev_row_validation(const ev_row *r, ev_validation_rec *o)
{
    assert(r->q == EV_Q_VALIDATIONS);
    o->attempt_id = ev_row_i64(r, 0);
    o->stage = ev_row_text(r, 1);
    o->passed = ev_row_i64(r, 2) != 0;
    o->max_abs_err = row_double_null(r, 3, &o->mae_null);
    o->bound = row_double_null(r, 4, &o->bound_null);
    o->mismatches = ev_row_i64(r, 5);
    o->output_sha256 = ev_row_text(r, 6);
    o->has_output = !ev_row_is_null(r, 7);
    o->output = ev_row_blob(r, 7, &o->output_len);
}

void ev_row_graph_node(const ev_row *r, ev_graph_node_rec *o)
{
    assert(r->q == EV_Q_GRAPH_NODES);
    o->attempt_id = ev_row_i64(r, 0);
    o->node_index = ev_row_i64(r, 1);
    o->function = ev_row_text(r, 2);
    for (int k = 0; k < 3; k++) {
        o->grid[k] = ev_row_i64(r, 3 + k);
        o->block[k] = ev_row_i64(r, 6 + k);
    }
}

void ev_row_fit(const ev_row *r, ev_fit_rec *o)
{
    assert(r->q == EV_Q_FITS);
    o->fit_id = ev_row_i64(r, 0);
    o->created_ns = ev_row_i64(r, 1);
    o->model_json = ev_row_text(r, 2);
    o->sha256 = ev_row_text(r, 3);
}

void ev_row_outcome(const ev_row *r, ev_outcome_rec *o)
{
    assert(r->q == EV_Q_OUTCOMES);
    o->attempt_id = ev_row_i64(r, 0);
    o->job_id = ev_row_i64(r, 1);
    o->attempt = ev_row_i64(r, 2);
    o->outcome = ev_row_text(r, 3);
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
