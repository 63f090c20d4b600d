/*
 * store_merge.c: one run copied from another store into this one, every
 * table of it, with its ids offset past this store's (what `evident merge`
 * stands on: src/runner/merge.c).  The source is attached read-only for
 * the call and detached after.
 */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

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
