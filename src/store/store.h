/*
 * store.h: the evidence store (SQLite).  This module owns all SQL: no other
 * file runs a statement.  Every connection sets journal_mode=WAL,
 * synchronous=FULL, foreign_keys=ON, recursive_triggers=ON; opening runs
 * PRAGMA quick_check and applies db/schema.sql (embedded at build time) to
 * a new file, or migrations up to EV_STORE_VERSION to an older one.
 *
 * Writers insert rows; nothing is ever updated or deleted (the schema's
 * triggers refuse it, and refuse any insert whose key exists, so REPLACE
 * cannot delete a row even from a sqlite3 CLI session).  Each
 * ev_store_add_* call is its own transaction unless the caller wraps
 * several in ev_store_begin/commit, so a record is durable when the call
 * returns.  sqlite3 result codes are translated to ev_status here, once:
 * SQLITE_FULL -> EV_EFULL, SQLITE_READONLY -> EV_EREADONLY,
 * SQLITE_CORRUPT/NOTADB -> EV_ECORRUPT, SQLITE_CANTOPEN -> EV_EIO,
 * SQLITE_NOMEM -> EV_ENOMEM, others (constraints included) -> EV_EDB, with
 * the store's path and sqlite3_errmsg in err.  On failure, nothing of the
 * failed call is left behind (rollback).
 *
 * Doubles are stored bit for bit, except that NaN and -0.0 (which SQLite
 * would turn into NULL and +0.0) are refused with EV_EINVAL.  Text is
 * stored as given; a NULL pointer for a NOT NULL column fails with EV_EDB.
 *
 * Readers use named queries (ev_store_query) whose column lists are
 * documented below, so the bundle exporter and `evident fit --db` read the
 * store without writing SQL.
 */
#ifndef EV_STORE_H
#define EV_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "store/outcome.h"

#define EV_STORE_VERSION 7

typedef struct ev_store ev_store; /* opaque */

enum {
    EV_STORE_READONLY = 1 << 0, /* open with SQLITE_OPEN_READONLY */
    EV_STORE_CREATE = 1 << 1,   /* create the file if missing */
    EV_STORE_FULLCHECK = 1 << 2 /* PRAGMA integrity_check, not only quick_check (export, merge) */
};

/* Opens (and creates/migrates) the store at path.  OUT: *out.  A damaged
 * file, or one that is not a database, gives EV_ECORRUPT with err saying so
 * and what to do; a missing file without EV_STORE_CREATE EV_EIO; a schema
 * newer than EV_STORE_VERSION EV_EUNSUPPORTED; a SQLite database that is
 * not an evident store EV_EFORMAT; READONLY|CREATE EV_EINVAL.  A read-only
 * open needs an existing store (EV_EREADONLY for an empty file); an older
 * schema (version 1 to 3) is read as it is, without its later tables (no
 * shards before 2, no device records before 3, no sample checks before
 * 4), so committed stores are never rewritten by a reader. */
ev_status ev_store_open(const char *path, unsigned flags, ev_store **out, ev_err *err);
/* The schema version the store was opened at (user_version): below
 * EV_STORE_VERSION only for an older store opened read-only; 0 for NULL. */
int64_t ev_store_version(const ev_store *s);
void ev_store_close(ev_store *s); /* NULL-safe */

/*
 * One writer per store: takes an exclusive flock on the store's own file
 * (created empty when missing), so every name that reaches it (a symlink,
 * a hard link, a new name after a rename) meets the same lock, and no
 * lock file can be deleted from under it.  Held for as long as the
 * returned descriptor is open; the kernel drops it when its holder dies,
 * so a lock left by a SIGKILLed run is simply taken over.  flock and
 * SQLite's fcntl locks are independent (Linux, local file systems).
 * OUT: *fd (release with ev_store_writer_unlock, only after every
 * ev_store of this process on that file is closed: closing a descriptor
 * of a file drops the process's fcntl locks on it, SQLite's included).
 * A lock held by a live process gives EV_EUSAGE, err naming that holder's
 * pid and start time when /proc/locks shows it (nothing is changed); a
 * path that cannot be opened gives EV_EIO, one that is not a regular file
 * EV_EUSAGE.
 */
ev_status ev_store_writer_lock(const char *path, int *fd, ev_err *err);
/* Releases what ev_store_writer_lock took; -1 is ignored. */
void ev_store_writer_unlock(int fd);

/*
 * Explicit transactions group several writes into one commit (one fsync).
 * Nesting is an error: ev_store_begin inside an open transaction returns
 * EV_EINVAL and leaves the open one as it was.  When an ev_store_add_*
 * fails inside the transaction, the whole transaction is rolled back at
 * once (all or nothing: none of the group's rows remain); further writes
 * then fail with EV_EINVAL until the caller ends the transaction, and
 * ev_store_commit returns the original failure's status and message.
 * ev_store_commit with no transaction open returns EV_EINVAL.
 * ev_store_rollback is NULL-safe and a no-op without a transaction.
 */
ev_status ev_store_begin(ev_store *s, ev_err *err);
ev_status ev_store_commit(ev_store *s, ev_err *err);
void ev_store_rollback(ev_store *s);

/* ---- writes ------------------------------------------------------------ */

typedef struct ev_run_row {
    const char *protocol_id; /* sha256 hex */
    const void *protocol_bytes;
    size_t protocol_len;
    const char *protocol_path;
    const char *backend; /* "cpu" | "cuda" */
    int64_t seed;
    const char *git_commit;
    int git_dirty;
    const char *source_tree_hash;
    int64_t created_ns;
} ev_run_row;
ev_status ev_store_add_run(ev_store *s, const ev_run_row *r, int64_t *run_id, ev_err *err);

ev_status ev_store_add_invocation(ev_store *s, int64_t run_id, int64_t started_ns, int resumed,
                                  const char *host_hash, int64_t *invocation_id, ev_err *err);
ev_status ev_store_add_source(ev_store *s, int64_t run_id, const char *path, const char *sha256_hex,
                              const void *bytes, size_t len, ev_err *err);
ev_status ev_store_add_environment(ev_store *s, int64_t invocation_id, const char *profile_id,
                                   const char *json, ev_err *err);

typedef struct ev_case_row {
    int64_t case_index;
    const char *op; /* an op, a dtype and a role of the vocabulary (src/common/vocab.h) */
    int64_t rows, cols, stride;
    const char *dtype;
    int64_t default_rows;
    const char *role;
} ev_case_row;
ev_status ev_store_add_case(ev_store *s, int64_t run_id, const ev_case_row *c, ev_err *err);

typedef struct ev_job_row {
    const char *job_key;
    const char *phase;  /* a phase of the vocabulary (src/common/vocab.h) */
    int64_t case_index; /* -1: none (reference arms) */
    const char *arm;
    const char *label;
    int64_t retry_of; /* job_id, or 0 for none */
    int64_t plan_order;
} ev_job_row;
ev_status ev_store_add_job(ev_store *s, int64_t run_id, const ev_job_row *j, int64_t *job_id, ev_err *err);

ev_status ev_store_add_attempt(ev_store *s, int64_t job_id, int64_t attempt, int64_t invocation_id,
                               int64_t started_ns, int64_t *attempt_id, ev_err *err);

typedef struct ev_process_row {
    int64_t pid;  /* -1: unknown */
    int has_exit; /* exit_code valid */
    int64_t exit_code;
    int has_signal; /* signal valid */
    int64_t signal;
    int timed_out, interrupted, skipped;
    const char *skip_reason; /* NULL unless skipped */
    int64_t record_count;
    int records_ok;
    const char *protocol_error; /* NULL when records_ok */
    const char *affinity;
    const char *stderr_tail; /* already redacted */
    int64_t ended_ns, wall_ns;
} ev_process_row;
ev_status ev_store_add_process(ev_store *s, int64_t attempt_id, const ev_process_row *p, ev_err *err);
/* The facts an outcome is derived from (store/outcome.h) of a process row
 * about to be written, as ev_row_attempt reads them back from the stored
 * row; validation_failed as EV_Q_VALIDATIONS would say it.  OUT: *out. */
void ev_process_row_facts(const ev_process_row *p, int validation_failed, ev_process_facts *out);

typedef struct ev_binding_row {
    const char *op, *dtype;
    int64_t rows, cols, stride, in_span, out_span, in_align, out_align, threads;
} ev_binding_row;
ev_status ev_store_add_binding(ev_store *s, int64_t attempt_id, const ev_binding_row *b, ev_err *err);

typedef struct ev_sample_row {
    const char *timing; /* "hot" | "cold" */
    int64_t sample_index, replays, ops_per_graph;
    double elapsed_ms;
    int64_t sm_clock_mhz; /* -1: unavailable */
} ev_sample_row;
ev_status ev_store_add_sample(ev_store *s, int64_t attempt_id, const ev_sample_row *r, ev_err *err);
/* n samples of one attempt in one transaction: all of them or none. */
ev_status ev_store_add_samples(ev_store *s, int64_t attempt_id, const ev_sample_row *rows, size_t n,
                               ev_err *err);

ev_status ev_store_add_warmup(ev_store *s, int64_t attempt_id, double target_ms, double elapsed_ms,
                              int64_t replays, ev_err *err);
ev_status ev_store_add_calibration(ev_store *s, int64_t attempt_id, int64_t step, int64_t replays,
                                   double elapsed_ms, int chosen, double target_ms, ev_err *err);
ev_status ev_store_add_cold_timing(ev_store *s, int64_t attempt_id, const char *name, int64_t elapsed_ns,
                                   ev_err *err);
ev_status ev_store_add_flush(ev_store *s, int64_t attempt_id, int64_t flush_bytes, int64_t cache_bytes,
                             ev_err *err);

typedef struct ev_validation_row {
    const char *stage; /* "first" | "final" */
    int passed;
    double max_abs_err, bound;
    int64_t mismatches;
    const char *output_sha256;
    const void *output; /* may be NULL */
    size_t output_len;
} ev_validation_row;
ev_status ev_store_add_validation(ev_store *s, int64_t attempt_id, const ev_validation_row *v, ev_err *err);

/* An output check after a timed sample (db/migrate-4.sql): the output of
 * input set 0 or 1 after hot sample after_sample (-1: the last), with its
 * bytes, or NULL where an earlier check of the set holds the same bytes. */
typedef struct ev_sample_check_row {
    int64_t input_set, after_sample;
    int passed;
    double max_abs_err, bound;
    int64_t mismatches;
    const char *output_sha256;
    const void *output;
    size_t output_len;
} ev_sample_check_row;
/* Once per (attempt, input set, sample): a second is EV_EDB (the schema's
 * append-only trigger); a store below schema 4: EV_EREADONLY. */
ev_status ev_store_add_sample_check(ev_store *s, int64_t attempt_id, const ev_sample_check_row *c,
                                    ev_err *err);

/* The check tag of a cold or hot sample's replays (db/migrate-5.sql;
 * kernels/plants.h): the tag after replay_end replays, the sample's
 * replays and ops, the rows planted per op, the variants, and whether it
 * was the seed's tag for replay_end replays of every op right. */
typedef struct ev_op_check_row {
    const char *timing; /* "hot" | "cold" */
    int64_t sample_index, replay_end, replays, ops, rows, variants;
    const char *tag; /* 16 lowercase hex digits */
    int passed;
} ev_op_check_row;
/* Once per (attempt, timing, sample): a second is EV_EDB; a store below
 * schema 5: EV_EREADONLY. */
ev_status ev_store_add_op_check(ev_store *s, int64_t attempt_id, const ev_op_check_row *c, ev_err *err);

/* The kept output (db/migrate-5.sql): op `op`'s output in replay
 * `replay` (the last of the last hot sample), validated against its
 * planted input, with its bytes. */
typedef struct ev_op_kept_row {
    int64_t op, replay;
    int passed;
    double max_abs_err, bound;
    int64_t mismatches;
    const char *output_sha256;
    const void *output;
    size_t output_len;
} ev_op_kept_row;
/* Once per attempt: a second is EV_EDB; a store below schema 5:
 * EV_EREADONLY. */
ev_status ev_store_add_op_kept(ev_store *s, int64_t attempt_id, const ev_op_kept_row *k, ev_err *err);

typedef struct ev_node_row {
    int64_t node_index;
    const char *function;
    int64_t grid[3], block[3];
} ev_node_row;
ev_status ev_store_add_graph_node(ev_store *s, int64_t attempt_id, const ev_node_row *n, ev_err *err);

/* Stores model_json with its SHA-256 (hex, computed here).  OUT: *fit_id. */
ev_status ev_store_add_fit(ev_store *s, int64_t run_id, int64_t created_ns, const char *model_json,
                           int64_t *fit_id, ev_err *err);
/* Records that invocation_id ran shard shard_index of shard_count, phase
 * "main" or "rest" (db/migrate-2.sql; docs/runner.md "Shards"). */
ev_status ev_store_add_shard(ev_store *s, int64_t invocation_id, int64_t shard_index, int64_t shard_count,
                             const char *phase, ev_err *err);

/* Records attempt_id's device record, json a JSON object as the supervisor
 * checked and printed it (db/migrate-3.sql; docs/runner.md "Worker
 * records", device).  Once per attempt (a second: EV_EDB, the schema's
 * append-only trigger); not a JSON object: EV_EDB (the schema's CHECK). */
ev_status ev_store_add_device(ev_store *s, int64_t attempt_id, const char *json, ev_err *err);

/*
 * Merging (`evident merge`): copies run src_run of the store at src_path
 * into run dst_run of s, in one transaction: its invocations with their
 * environments and shard rows, its jobs, attempts and every row that hangs
 * off an attempt (processes, bindings, samples, warm-ups, calibrations,
 * cold timings, flushes, validations, graph nodes, device records and
 * sample checks where the source has them), each id shifted past
 * the largest already in s, so the union is key-disjoint by construction;
 * with with_run, first the run row (as dst_run), its sources and cases.
 * Fits and the run status are the caller's (the merge decides them).  A
 * job key already in dst_run is refused by the schema (EV_EDB) and
 * nothing of the call is left.  s must be writable, with no transaction
 * open; the source is attached read for the call and detached after.
 */
ev_status ev_store_copy_run(ev_store *s, int64_t dst_run, const char *src_path, int64_t src_run, int with_run,
                            ev_err *err);

/* Sets the run status once; a second call fails with EV_EDB (the schema's
 * append-only trigger: the row exists) and the first status stays. */
ev_status ev_store_set_run_status(ev_store *s, int64_t run_id, const char *status,
                                  const char *rescue_status /* NULL */, int64_t finished_ns, ev_err *err);

/* ---- reads ------------------------------------------------------------- */

/* A row of a named query: column accessors (0-based columns; readers
 * outside this module use the typed rows below instead). */
typedef struct ev_row ev_row;
int64_t ev_row_i64(const ev_row *r, int col);
double ev_row_double(const ev_row *r, int col);
int ev_row_is_null(const ev_row *r, int col);
const char *ev_row_text(const ev_row *r, int col);              /* NULL for SQL NULL */
const void *ev_row_blob(const ev_row *r, int col, size_t *len); /* NULL for SQL NULL */
int ev_row_columns(const ev_row *r);                            /* column count */
const char *ev_row_name(const ev_row *r, int col);              /* the documented column name */

/* Callback per row; returning non-EV_OK stops the query with that status. */
typedef ev_status (*ev_row_fn)(void *ctx, const ev_row *row);

/*
 * Named queries.  All take the run id as their one parameter (except
 * EV_Q_RUNS, which ignores it).  Rows come in a fixed, documented order so
 * exports are deterministic.  Columns:
 *
 *  EV_Q_RUNS         run_id, protocol_id, protocol_path, backend, seed, git_commit,
 *                    git_dirty, source_tree_hash, created_ns        ORDER BY run_id
 *  EV_Q_RUN          same columns plus protocol_bytes (col 9), one row
 *  EV_Q_RUN_STATUS   status, rescue_status, finished_ns             (0 or 1 row)
 *  EV_Q_INVOCATIONS  invocation_id, started_ns, resumed, host_hash, profile_id, env_json
 *                                                                   ORDER BY invocation_id
 *  EV_Q_SOURCES      path, sha256, bytes                            ORDER BY path
 *  EV_Q_CASES        case_index, op, rows, cols, stride, dtype, default_rows, role
 *                                                                   ORDER BY case_index
 *  EV_Q_JOBS         job_id, job_key, phase, case_index (NULL), arm, label,
 *                    retry_of (NULL), plan_order                    ORDER BY job_id
 *  EV_Q_ATTEMPTS     attempt_id, job_id, attempt, invocation_id, started_ns,
 *                    then the process columns (NULL when missing): has_process,
 *                    pid, exit_code, signal, timed_out, interrupted, skipped,
 *                    skip_reason, record_count, records_ok, protocol_error,
 *                    affinity, stderr_tail, ended_ns, wall_ns       ORDER BY job_id, attempt
 *  EV_Q_SAMPLES      attempt_id, timing, sample_index, replays, ops_per_graph,
 *                    elapsed_ms, sm_clock_mhz (NULL)                ORDER BY attempt_id, timing, sample_index
 *  EV_Q_BINDINGS     attempt_id, op, dtype, rows, cols, stride, in_span, out_span,
 *                    in_align, out_align, threads                   ORDER BY attempt_id
 *  EV_Q_WARMUPS      attempt_id, target_ms, elapsed_ms, replays     ORDER BY attempt_id
 *  EV_Q_CALIBRATIONS attempt_id, step, replays, elapsed_ms, chosen, target_ms
 *                                                                   ORDER BY attempt_id, step
 *  EV_Q_COLD         attempt_id, name, elapsed_ns                   ORDER BY attempt_id, name
 *  EV_Q_FLUSHES      attempt_id, flush_bytes, cache_bytes           ORDER BY attempt_id
 *  EV_Q_VALIDATIONS  attempt_id, stage, passed, max_abs_err, bound, mismatches,
 *                    output_sha256, output (NULL)                   ORDER BY attempt_id, stage
 *  EV_Q_GRAPH_NODES  attempt_id, node_index, function, grid_x, grid_y, grid_z,
 *                    block_x, block_y, block_z                      ORDER BY attempt_id, node_index
 *  EV_Q_FITS         fit_id, created_ns, model_json, sha256         ORDER BY fit_id
 *  EV_Q_OUTCOMES     attempt_id, job_id, attempt, outcome           ORDER BY attempt_id
 *                    (the attempt_outcomes view: equals ev_outcome_derive)
 *  EV_Q_FAILURES     job_id, job_key, phase, case_index (NULL), arm, label, attempt,
 *                    outcome: jobs whose last attempt is not completed
 *                                                                   ORDER BY job_id
 *  EV_Q_HOT_COUNTS   job_key, phase, case_index (NULL), arm, n, min_us, max_us: hot
 *                    samples of the last attempt of each completed job
 *                                                                   ORDER BY job_key
 *  EV_Q_SHARDS       invocation_id, shard_index, shard_count, phase: the shard each
 *                    invocation ran (none for an unsharded run, or a version-1
 *                    store read as it is)                           ORDER BY invocation_id
 *  EV_Q_DEVICES      attempt_id, json: each attempt's device record (none in a
 *                    store of schema version below 3)             ORDER BY attempt_id
 *  EV_Q_SAMPLE_CHECKS attempt_id, input_set, after_sample, passed, max_abs_err,
 *                    bound, mismatches, output_sha256, output: the output checks
 *                    after timed samples (none below schema 4)
 *                                           ORDER BY attempt_id, input_set, after_sample
 *  EV_Q_OP_CHECKS    attempt_id, timing, sample_index, replay_end, replays, ops,
 *                    rows, variants, tag, passed: the check tags of the samples
 *                    (none below schema 5)      ORDER BY attempt_id, timing, sample_index
 *  EV_Q_OP_KEPT      attempt_id, op, replay, passed, max_abs_err, bound, mismatches,
 *                    output_sha256, output: the kept outputs (none below schema 5)
 *                                                                   ORDER BY attempt_id
 *
 * Integer columns that hold flags are 0/1; has_process is 1 when the
 * attempt has a process row.  Timing sorts as text ('cold' before 'hot').
 */
typedef enum ev_query {
    EV_Q_RUNS,
    EV_Q_RUN,
    EV_Q_RUN_STATUS,
    EV_Q_INVOCATIONS,
    EV_Q_SOURCES,
    EV_Q_CASES,
    EV_Q_JOBS,
    EV_Q_ATTEMPTS,
    EV_Q_SAMPLES,
    EV_Q_BINDINGS,
    EV_Q_WARMUPS,
    EV_Q_CALIBRATIONS,
    EV_Q_COLD,
    EV_Q_FLUSHES,
    EV_Q_VALIDATIONS,
    EV_Q_GRAPH_NODES,
    EV_Q_FITS,
    EV_Q_OUTCOMES,
    EV_Q_FAILURES,
    EV_Q_HOT_COUNTS,
    EV_Q_SHARDS,
    EV_Q_DEVICES,
    EV_Q_SAMPLE_CHECKS,
    EV_Q_OP_CHECKS,
    EV_Q_OP_KEPT,
    EV_Q_COUNT
} ev_query;

/* Runs query q for run_id, calling fn once per row (the row is valid only
 * during the call).  A callback's non-EV_OK status stops the query and is
 * returned as is; err is then left to the callback. */
ev_status ev_store_query(ev_store *s, ev_query q, int64_t run_id, ev_row_fn fn, void *ctx, ev_err *err);

/* ---- typed rows ----------------------------------------------------------
 *
 * A named query's row as a struct, filled by store_read.c, the one place
 * that knows each query's columns (the readers stand beside the SQL), so
 * no reader outside it names a column by its number.  Text and blob
 * pointers point into the row: valid only during the callback (copy what
 * is kept); SQL NULL text is NULL.  A nullable integer has a has_* flag
 * and reads 0 when NULL; a nullable double has a *_null flag and reads
 * 0.0.  Each reader asserts that the row is one of its query's.
 */

/* EV_Q_RUNS and EV_Q_RUN. */
typedef struct ev_run_rec {
    int64_t run_id, seed, created_ns;
    const char *protocol_id, *protocol_path, *backend, *git_commit, *source_tree_hash;
    int git_dirty;
    const void *protocol; /* EV_Q_RUN's protocol_bytes; NULL for EV_Q_RUNS or SQL NULL */
    size_t protocol_len;
} ev_run_rec;
void ev_row_run(const ev_row *r, ev_run_rec *out);

/* EV_Q_RUN_STATUS. */
typedef struct ev_run_status_rec {
    const char *status, *rescue_status; /* rescue_status may be NULL */
    int64_t finished_ns;
} ev_run_status_rec;
void ev_row_run_status(const ev_row *r, ev_run_status_rec *out);

/* EV_Q_INVOCATIONS. */
typedef struct ev_invocation_rec {
    int64_t invocation_id, started_ns;
    int resumed;
    const char *host_hash, *profile_id, *env_json; /* the last two NULL without an environment row */
} ev_invocation_rec;
void ev_row_invocation(const ev_row *r, ev_invocation_rec *out);

/* EV_Q_SHARDS. */
typedef struct ev_shard_rec {
    int64_t invocation_id, shard_index, shard_count;
    const char *phase;
} ev_shard_rec;
void ev_row_shard(const ev_row *r, ev_shard_rec *out);

/* EV_Q_SAMPLE_CHECKS. */
typedef struct ev_sample_check_rec {
    int64_t attempt_id, input_set, after_sample, mismatches;
    int passed, has_output;
    int mae_null, bound_null;
    double max_abs_err, bound;
    const char *output_sha256;
    const void *output;
    size_t output_len;
} ev_sample_check_rec;
void ev_row_sample_check(const ev_row *r, ev_sample_check_rec *out);

/* EV_Q_OP_CHECKS. */
typedef struct ev_op_check_rec {
    int64_t attempt_id, sample_index, replay_end, replays, ops, rows, variants;
    const char *timing, *tag;
    int passed;
} ev_op_check_rec;
void ev_row_op_check(const ev_row *r, ev_op_check_rec *out);

/* EV_Q_OP_KEPT. */
typedef struct ev_op_kept_rec {
    int64_t attempt_id, op, replay, mismatches;
    int passed, mae_null, bound_null;
    double max_abs_err, bound;
    const char *output_sha256;
    const void *output;
    size_t output_len;
} ev_op_kept_rec;
void ev_row_op_kept(const ev_row *r, ev_op_kept_rec *out);

/* EV_Q_DEVICES. */
typedef struct ev_device_rec {
    int64_t attempt_id;
    const char *json;
} ev_device_rec;
void ev_row_device(const ev_row *r, ev_device_rec *out);

/* EV_Q_SOURCES. */
typedef struct ev_source_rec {
    const char *path, *sha256;
    const void *bytes; /* NULL for SQL NULL; an empty blob is non-NULL with len 0 */
    size_t len;
} ev_source_rec;
void ev_row_source(const ev_row *r, ev_source_rec *out);

/* EV_Q_CASES. */
typedef struct ev_case_rec {
    int64_t case_index, rows, cols, stride, default_rows;
    const char *op, *dtype, *role;
} ev_case_rec;
void ev_row_case(const ev_row *r, ev_case_rec *out);

/* EV_Q_JOBS. */
typedef struct ev_job_rec {
    int64_t job_id, plan_order;
    const char *job_key, *phase, *arm, *label;
    int has_case;
    int64_t case_index; /* -1 when NULL (reference arms) */
    int has_retry;
    int64_t retry_of; /* 0 when NULL */
} ev_job_rec;
void ev_row_job(const ev_row *r, ev_job_rec *out);

/*
 * EV_Q_ATTEMPTS: the attempt and its process record.  facts holds the
 * raw process facts an outcome is derived from (store/outcome.h), read
 * here once for every reader of the store; validation_failed is left 0
 * (it comes from EV_Q_VALIDATIONS).  Without a process row
 * (facts.has_process 0) every process field is 0 or NULL.
 */
typedef struct ev_attempt_rec {
    int64_t attempt_id, job_id, attempt, invocation_id, started_ns;
    ev_process_facts facts;
    int has_pid;
    int64_t pid, record_count, ended_ns, wall_ns;
    const char *skip_reason, *protocol_error, *affinity, *stderr_tail; /* NULL when NULL */
} ev_attempt_rec;
void ev_row_attempt(const ev_row *r, ev_attempt_rec *out);

/* EV_Q_SAMPLES. */
typedef struct ev_sample_rec {
    int64_t attempt_id, sample_index, replays, ops_per_graph;
    const char *timing; /* "hot" or "cold" as the schema allows; NULL for SQL NULL */
    int elapsed_null;
    double elapsed_ms;
    int has_clock;
    int64_t sm_clock_mhz;
} ev_sample_rec;
void ev_row_sample(const ev_row *r, ev_sample_rec *out);

/* EV_Q_BINDINGS. */
typedef struct ev_binding_rec {
    int64_t attempt_id, rows, cols, stride, in_span, out_span, in_align, out_align, threads;
    const char *op, *dtype;
} ev_binding_rec;
void ev_row_binding(const ev_row *r, ev_binding_rec *out);

/* EV_Q_WARMUPS. */
typedef struct ev_warmup_rec {
    int64_t attempt_id, replays;
    int target_null, elapsed_null;
    double target_ms, elapsed_ms;
} ev_warmup_rec;
void ev_row_warmup(const ev_row *r, ev_warmup_rec *out);

/* EV_Q_CALIBRATIONS. */
typedef struct ev_calibration_rec {
    int64_t attempt_id, step, replays;
    int chosen;
    int elapsed_null, target_null;
    double elapsed_ms, target_ms;
} ev_calibration_rec;
void ev_row_calibration(const ev_row *r, ev_calibration_rec *out);

/* EV_Q_COLD. */
typedef struct ev_cold_rec {
    int64_t attempt_id, elapsed_ns;
    const char *name;
} ev_cold_rec;
void ev_row_cold(const ev_row *r, ev_cold_rec *out);

/* EV_Q_FLUSHES. */
typedef struct ev_flush_rec {
    int64_t attempt_id, flush_bytes, cache_bytes;
} ev_flush_rec;
void ev_row_flush(const ev_row *r, ev_flush_rec *out);

/* EV_Q_VALIDATIONS. */
typedef struct ev_validation_rec {
    int64_t attempt_id, mismatches;
    const char *stage, *output_sha256;
    int passed;
    int mae_null, bound_null;
    double max_abs_err, bound;
    int has_output;
    const void *output; /* NULL when NULL */
    size_t output_len;
} ev_validation_rec;
void ev_row_validation(const ev_row *r, ev_validation_rec *out);

/* EV_Q_GRAPH_NODES. */
typedef struct ev_graph_node_rec {
    int64_t attempt_id, node_index, grid[3], block[3];
    const char *function;
} ev_graph_node_rec;
void ev_row_graph_node(const ev_row *r, ev_graph_node_rec *out);

/* EV_Q_FITS. */
typedef struct ev_fit_rec {
    int64_t fit_id, created_ns;
    const char *model_json, *sha256;
} ev_fit_rec;
void ev_row_fit(const ev_row *r, ev_fit_rec *out);

/* EV_Q_OUTCOMES: an attempt's outcome as the attempt_outcomes view names it. */
typedef struct ev_outcome_rec {
    int64_t attempt_id, job_id, attempt;
    const char *outcome;
} ev_outcome_rec;
void ev_row_outcome(const ev_row *r, ev_outcome_rec *out);

/* The latest time (ns) the run's records show: the last process end of
 * any of its attempts, or its last invocation's start when no process
 * ended (0 for none).  OUT: *ns.  What a merge records as the run's
 * finish, so that the same shards give the same store. */
ev_status ev_store_last_end_ns(ev_store *s, int64_t run_id, int64_t *ns, ev_err *err);

/* The newest run id (OUT: *run_id); EV_ENOTFOUND when the store is empty. */
ev_status ev_store_last_run(ev_store *s, int64_t *run_id, ev_err *err);

/* For tests: lets the file grow by at most extra_pages pages from now on
 * (SQLite's max_page_count on this connection), so a full disk can be
 * simulated without filling one.  Writes beyond it fail with EV_EFULL. */
ev_status ev_store_limit_growth(ev_store *s, int64_t extra_pages, ev_err *err);

#endif
