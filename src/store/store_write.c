/*
 * store_write.c: the store's inserts, one function per table (store.h
 * lists them).  Each binds its row's columns left to right (the binder
 * below: doubles bit for bit, NaN and -0.0 refused rather than changed) and
 * runs as its own transaction unless the caller holds one (store.c).
 */
#include "store_int.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "vocab.h"

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
    ev_status rc = store_tx_enter(s, &own, what, err);

    if (rc)
        return rc;
    rc = ins_prepare(s, sql, &b, what, err);
    if (rc == EV_OK) {
        bind(&b, arg);
        rc = ins_run(s, &b, &id, what, err);
    }
    sqlite3_finalize(b.st);
    rc = store_tx_leave(s, own, rc, what, err);
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
    rc = store_tx_enter(s, &own, what, err);
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
    return store_tx_leave(s, own, rc, what, err);
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
