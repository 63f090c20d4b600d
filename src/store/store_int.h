/*
 * store_int.h: what the store's files share and nothing outside them sees:
 * the connection and row structures, and the helpers every part of the
 * store calls (the one translation of sqlite3 result codes, statement
 * preparation, the write transaction).  store.c opens, closes and holds
 * transactions; store_write.c inserts; store_merge.c copies a run between
 * stores; store_read.c runs the named queries and reads their rows.
 */
#ifndef EV_STORE_INT_H
#define EV_STORE_INT_H

#include <sqlite3.h>

#include "buf.h"
#include "store.h"

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

/* Fills err with a one-line reason for sqlite_rc met while doing `what` on
 * s and returns the translated status (store.c). */
ev_status store_fail(ev_store *s, int sqlite_rc, const char *what, ev_err *err);
/* Runs sql (no rows wanted).  EV_OK, or the failure with err saying `what`. */
ev_status store_exec(ev_store *s, const char *sql, const char *what, ev_err *err);
/* Prepares sql.  OUT: *st (finalized by the caller); untouched on failure. */
ev_status store_prepare(ev_store *s, const char *sql, sqlite3_stmt **st, const char *what, ev_err *err);
/* Runs a one-row statement whose first column is an integer.  OUT: *value.
 * EV_ENOTFOUND (err untouched) when it gives no row. */
ev_status store_int_query(ev_store *s, const char *sql, int64_t *value, const char *what, ev_err *err);
/* Appends to b the SQLite URI of path, then query, NUL-terminated.  EV_ENOMEM. */
ev_status store_uri(const char *path, const char *query, ev_buf *b);
/* 1 when the store at path must be read as immutable (read-only media). */
int store_needs_immutable(const char *path);
/* Rolls back whatever transaction the connection holds. */
void store_abort(ev_store *s);
/* Starts a write.  OUT: *own = 1 when this call opened its own transaction. */
ev_status store_tx_enter(ev_store *s, int *own, const char *what, ev_err *err);
/* Ends a write begun by store_tx_enter with status rc; returns rc or the
 * commit's failure. */
ev_status store_tx_leave(ev_store *s, int own, ev_status rc, const char *what, ev_err *err);

#endif
