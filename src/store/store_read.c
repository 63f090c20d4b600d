/*
 * store_read.c: the store's named queries (ev_store_query: each query's
 * SQL, its columns as store.h documents them), the rows they give, and the
 * typed readers that turn a row into its record.
 */
#include "store_int.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
