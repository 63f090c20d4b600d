/*
 * export_members.c: the members written from a run: samples.csv,
 * validation.json, model.json, proof-receipts.json and provenance.json,
 * exactly as docs/bundle-format.md says (export_int.h).
 */
#include "export_int.h"
#include "runner/plan.h"
#include "member.h"

void ex_output_name(const xval *v, char *name, size_t cap)
{
    snprintf(name, cap, EV_MEMBER_OUTPUTS "%" PRId64 "-%" PRId64 ".bin", v->job_id, v->attempt);
}

void ex_check_name(const xcheck *c, char *name, size_t cap)
{
    if (c->r.after_sample < 0)
        snprintf(name, cap, EV_MEMBER_OUTPUTS "%" PRId64 "-%" PRId64 "-set%" PRId64 "-last.bin", c->job_id,
                 c->attempt, c->r.input_set);
    else
        snprintf(name, cap, EV_MEMBER_OUTPUTS "%" PRId64 "-%" PRId64 "-set%" PRId64 "-after%" PRId64 ".bin",
                 c->job_id, c->attempt, c->r.input_set, c->r.after_sample);
}

void ex_kept_name(const xopkept *k, char *name, size_t cap)
{
    snprintf(name, cap, EV_MEMBER_OUTPUTS "%" PRId64 "-%" PRId64 "-kept.bin", k->job_id, k->attempt);
}

/* Writes samples.csv into out. */
ev_status ex_write_samples_csv(const xload *L, ev_buf *out)
{
    ev_status rc = ev_samples_header(out);
    for (size_t i = 0; i < L->jobs.n && !rc; i++) {
        const xjob *j = ex_vec_at(&L->jobs, i);
        for (size_t k = 0; k < j->n_att && !rc; k++) {
            const xattempt *a = ex_vec_at(&L->atts, j->att0 + k);
            size_t b, e;
            ex_attempt_range(&L->samples, a->attempt_id, &b, &e);
            for (size_t si = b; si < e && !rc; si++) {
                const xsample *x = ex_vec_at(&L->samples, si);
                const xcase *c = j->c;
                if ((rc = ev_csv_put_i64(out, L->run.run_id, 0)) ||
                    (rc = ev_csv_put_i64(out, j->job_id, 0)) || (rc = ev_csv_put_i64(out, a->attempt, 0)))
                    break;
                if (c) {
                    if ((rc = ev_csv_put(out, c->op, 0)) || (rc = ev_csv_put_i64(out, c->rows, 0)) ||
                        (rc = ev_csv_put_i64(out, c->cols, 0)) || (rc = ev_csv_put_i64(out, c->stride, 0)) ||
                        (rc = ev_csv_put(out, c->dtype, 0)) ||
                        (rc = ev_csv_put_i64(out, c->default_rows, 0)) || (rc = ev_csv_put(out, c->role, 0)))
                        break;
                } else {
                    rc = ev_buf_puts(out, ",,,,,,,");
                    if (rc)
                        break;
                }
                if ((rc = ev_csv_put(out, j->arm, 0)) || (rc = ev_csv_put(out, j->phase, 0)) ||
                    (rc = ev_csv_put(out, j->label, 0)) ||
                    (rc = ev_csv_put(out, ev_outcome_name(j->outcome), 0)) ||
                    (rc = ev_csv_put(out, x->hot ? "hot" : "cold", 0)) ||
                    (rc = ev_csv_put_i64(out, x->sample_index, 0)) ||
                    (rc = ev_csv_put_i64(out, x->replays, 0)) ||
                    (rc = ev_csv_put_i64(out, x->ops_per_graph, 0)) ||
                    (rc = ev_csv_put_double(out, x->elapsed_ms, 0)) ||
                    (rc = ev_csv_put_double(out, x->per_op_us, 0)) || (rc = ev_csv_put(out, j->job_key, 0)) ||
                    (rc = ev_csv_put_i64(out, a->attempt_id, 0)) ||
                    (rc = ev_csv_put(out, ev_outcome_name(a->outcome), 0)))
                    break;
                rc = x->has_clock ? ev_csv_put_i64(out, x->sm_clock_mhz, 1) : ev_csv_put(out, "", 1);
            }
        }
    }
    return rc;
}

/* A validation's or a sample check's verdict, its numbers and its output
 * member (member NULL: none, and a null size), in the keys' order of
 * docs/bundle-format.md. */
static void json_verdict(ev_jb *b, cJSON *p, int passed, int mae_null, double mae, int bound_null,
                         double bound, int64_t mismatches, const char *sha, const char *member, size_t len)
{
    ev_jb_bool(b, p, "passed", passed);
    ev_jb_dbl(b, p, "max_abs_err", !mae_null, mae, "null in store");
    ev_jb_dbl(b, p, "bound", !bound_null, bound, "null in store");
    ev_jb_i64(b, p, "mismatches", mismatches);
    ev_jb_str(b, p, "output_sha256", sha);
    if (member) {
        ev_jb_str(b, p, "output_member", member);
        ev_jb_i64(b, p, "output_size", (int64_t)len);
    } else {
        ev_jb_null(b, p, "output_member");
        ev_jb_null(b, p, "output_size");
    }
}

/* Adds job j's "plausibility" to o (docs/bundle-format.md): null for a job
 * without a case or not completed, else the facts of the physical
 * plausibility rule (runner/sample_rules.h) and, for the hot and the cold
 * median, the ceiling that bounds it and the bound in bytes per us (null:
 * none applies).  verify-bundle derives the same from the bundle. */
static void json_plausibility(ev_jb *b, cJSON *o, const xjob *j)
{
    if (!j->has_bound) {
        ev_jb_null(b, o, "plausibility");
        return;
    }
    cJSON *p = ev_jb_obj(b, o, "plausibility");
    ev_jb_num(b, p, "bytes", j->bound.bytes);
    ev_jb_num(b, p, "working_bytes", j->bound.working_bytes);
    ev_jb_i64(b, p, "cache_bytes", j->bound.cache_bytes);
    for (int hot = 1; hot >= 0; hot--) {
        cJSON *h = ev_jb_obj(b, p, hot ? "hot" : "cold");
        ev_rule_ceiling c = hot ? j->hot_ceiling : j->cold_ceiling;
        ev_jb_str(b, h, "bound_by", ev_rule_ceiling_name(c));
        ev_jb_dbl(b, h, "bound_bpus", c != EV_RULE_CEIL_NONE, hot ? j->hot_bound_bpus : j->cold_bound_bpus,
                  "no ceiling applies");
    }
}

/* Adds an attempt's "process": its process record, or null (none yet). */
static void json_process(ev_jb *b, const xattempt *a, cJSON *o)
{
    if (a->facts.has_process) {
        cJSON *p = ev_jb_obj(b, o, "process");
        ev_jb_i64n(b, p, "pid", a->has_pid, a->pid);
        ev_jb_i64n(b, p, "exit_code", a->facts.has_exit, a->facts.exit_code);
        ev_jb_i64n(b, p, "signal", a->facts.has_signal, a->facts.signal);
        ev_jb_bool(b, p, "timed_out", a->facts.timed_out);
        ev_jb_bool(b, p, "interrupted", a->facts.interrupted);
        ev_jb_bool(b, p, "skipped", a->facts.skipped);
        ev_jb_str(b, p, "skip_reason", a->skip_reason);
        ev_jb_i64(b, p, "record_count", a->record_count);
        ev_jb_bool(b, p, "records_ok", a->facts.records_ok);
        ev_jb_str(b, p, "protocol_error", a->protocol_error);
        ev_jb_str(b, p, "affinity", a->affinity);
        ev_jb_str(b, p, "stderr_tail", a->stderr_tail);
        ev_jb_ns(b, p, "ended_ns", a->ended_ns);
        ev_jb_ns(b, p, "wall_ns", a->wall_ns);
    } else {
        ev_jb_null(b, o, "process");
    }
}

/* Adds an attempt's receipts: its binding, warm-up, calibration steps,
 * flush and cold timings (null or empty where it has none). */
static void json_receipts(ev_jb *b, const xload *L, const xattempt *a, cJSON *o)
{
    size_t lo, hi;

    ex_attempt_range(&L->bindings, a->attempt_id, &lo, &hi);
    if (lo < hi) {
        const xbinding *x = ex_vec_at(&L->bindings, lo);
        cJSON *p = ev_jb_obj(b, o, "binding");
        ev_jb_str(b, p, "op", x->op);
        ev_jb_str(b, p, "dtype", x->dtype);
        ev_jb_i64(b, p, "rows", x->rows);
        ev_jb_i64(b, p, "cols", x->cols);
        ev_jb_i64(b, p, "stride", x->stride);
        ev_jb_i64(b, p, "in_span", x->in_span);
        ev_jb_i64(b, p, "out_span", x->out_span);
        ev_jb_i64(b, p, "in_align", x->in_align);
        ev_jb_i64(b, p, "out_align", x->out_align);
        ev_jb_i64(b, p, "threads", x->threads);
    } else {
        ev_jb_null(b, o, "binding");
    }

    ex_attempt_range(&L->warmups, a->attempt_id, &lo, &hi);
    if (lo < hi) {
        const xwarmup *x = ex_vec_at(&L->warmups, lo);
        cJSON *p = ev_jb_obj(b, o, "warmup");
        ev_jb_dbl(b, p, "target_ms", !x->target_null, x->target_ms, "null in store");
        ev_jb_dbl(b, p, "elapsed_ms", !x->elapsed_null, x->elapsed_ms, "null in store");
        ev_jb_i64(b, p, "replays", x->replays);
    } else {
        ev_jb_null(b, o, "warmup");
    }

    cJSON *cals = ev_jb_arr(b, o, "calibrations");
    ex_attempt_range(&L->cals, a->attempt_id, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const xcal *x = ex_vec_at(&L->cals, i);
        cJSON *p = ev_jb_obj(b, cals, NULL);
        ev_jb_i64(b, p, "step", x->step);
        ev_jb_i64(b, p, "replays", x->replays);
        ev_jb_dbl(b, p, "elapsed_ms", !x->elapsed_null, x->elapsed_ms, "null in store");
        ev_jb_bool(b, p, "chosen", x->chosen);
        ev_jb_dbl(b, p, "target_ms", !x->target_null, x->target_ms, "null in store");
    }

    ex_attempt_range(&L->flushes, a->attempt_id, &lo, &hi);
    if (lo < hi) {
        const xflush *x = ex_vec_at(&L->flushes, lo);
        cJSON *p = ev_jb_obj(b, o, "flush");
        ev_jb_i64(b, p, "flush_bytes", x->flush_bytes);
        ev_jb_i64(b, p, "cache_bytes", x->cache_bytes);
    } else {
        ev_jb_null(b, o, "flush");
    }

    cJSON *colds = ev_jb_arr(b, o, "cold_timings");
    ex_attempt_range(&L->colds, a->attempt_id, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const xcold *x = ex_vec_at(&L->colds, i);
        cJSON *p = ev_jb_obj(b, colds, NULL);
        ev_jb_str(b, p, "name", x->name);
        ev_jb_ns(b, p, "elapsed_ns", x->elapsed_ns);
    }
}

/* Adds an attempt's checks: its validations, and where the store can hold
 * them the output checks after timed samples (schema 4), every sample's
 * check tags and the kept output (schema 5). */
static void json_checks(ev_jb *b, const xload *L, const xattempt *a, cJSON *o)
{
    size_t lo, hi;

    cJSON *vals = ev_jb_arr(b, o, "validations");
    ex_attempt_range(&L->vals, a->attempt_id, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const xval *x = ex_vec_at(&L->vals, i);
        cJSON *p = ev_jb_obj(b, vals, NULL);
        ev_jb_str(b, p, "stage", x->stage);
        char name[96];
        if (x->has_output && !strcmp(x->stage, "first"))
            ex_output_name(x, name, sizeof name);
        json_verdict(b, p, x->passed, x->mae_null, x->max_abs_err, x->bound_null, x->bound, x->mismatches,
                     x->sha256, x->has_output && !strcmp(x->stage, "first") ? name : NULL, x->output_len);
    }

    /* The output checks after timed samples (schema 4; docs/bundle-format.md):
     * only a store that can hold them writes the key, so an older store's
     * bundle keeps its bytes. */
    if (L->store_version >= 4) {
        cJSON *checks = ev_jb_arr(b, o, "sample_checks");
        char name[96];
        ex_attempt_range(&L->checks, a->attempt_id, &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            const xcheck *c = ex_vec_at(&L->checks, i);
            const ev_sample_check_rec *x = &c->r;
            cJSON *p = ev_jb_obj(b, checks, NULL);
            ev_jb_i64(b, p, "input_set", x->input_set);
            ev_jb_i64(b, p, "after_sample", x->after_sample);
            if (x->has_output)
                ex_check_name(c, name, sizeof name);
            json_verdict(b, p, x->passed, x->mae_null, x->max_abs_err, x->bound_null, x->bound, x->mismatches,
                         x->output_sha256, x->has_output ? name : NULL, x->output_len);
        }
    }

    /* The check tags of every sample and the kept output (schema 5;
     * docs/bundle-format.md): only a store that can hold them writes the
     * keys, so an older store's bundle keeps its bytes. */
    if (L->store_version >= 5) {
        cJSON *ops = ev_jb_arr(b, o, "op_checks");
        char name[96];
        ex_attempt_range(&L->opchecks, a->attempt_id, &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            const ev_op_check_rec *x = &((const xopcheck *)ex_vec_at(&L->opchecks, i))->r;
            cJSON *p = ev_jb_obj(b, ops, NULL);
            ev_jb_str(b, p, "timing", x->timing);
            ev_jb_i64(b, p, "sample_index", x->sample_index);
            ev_jb_i64(b, p, "replay_end", x->replay_end);
            ev_jb_i64(b, p, "replays", x->replays);
            ev_jb_i64(b, p, "ops", x->ops);
            ev_jb_i64(b, p, "rows", x->rows);
            ev_jb_i64(b, p, "variants", x->variants);
            ev_jb_str(b, p, "tag", x->tag);
            ev_jb_bool(b, p, "passed", x->passed);
        }
        ex_attempt_range(&L->opkept, a->attempt_id, &lo, &hi);
        if (lo < hi) {
            const xopkept *k = ex_vec_at(&L->opkept, lo);
            cJSON *p = ev_jb_obj(b, o, "op_kept");
            ev_jb_i64(b, p, "op", k->r.op);
            ev_jb_i64(b, p, "replay", k->r.replay);
            ex_kept_name(k, name, sizeof name);
            json_verdict(b, p, k->r.passed, k->r.mae_null, k->r.max_abs_err, k->r.bound_null, k->r.bound,
                         k->r.mismatches, k->r.output_sha256, name, k->r.output_len);
        } else {
            ev_jb_null(b, o, "op_kept");
        }
    }
}

/* Adds one attempt's object (with every receipt) to the array arr. */
static void json_attempt(ev_jb *b, const xload *L, const xattempt *a, cJSON *arr)
{
    cJSON *o = ev_jb_obj(b, arr, NULL);
    size_t lo, hi;
    ev_jb_i64(b, o, "attempt", a->attempt);
    ev_jb_i64(b, o, "attempt_id", a->attempt_id);
    ev_jb_i64(b, o, "invocation_id", a->invocation_id);
    ev_jb_ns(b, o, "started_ns", a->started_ns);
    ev_jb_str(b, o, "outcome", ev_outcome_name(a->outcome));
    json_process(b, a, o);
    json_receipts(b, L, a, o);
    json_checks(b, L, a, o);

    cJSON *nodes = ev_jb_arr(b, o, "graph_nodes");
    ex_attempt_range(&L->nodes, a->attempt_id, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const xnode *x = ex_vec_at(&L->nodes, i);
        cJSON *p = ev_jb_obj(b, nodes, NULL);
        ev_jb_i64(b, p, "node_index", x->node_index);
        ev_jb_str(b, p, "function", x->function);
        cJSON *g = ev_jb_arr(b, p, "grid");
        cJSON *k = ev_jb_arr(b, p, "block");
        for (int d = 0; d < 3; d++) {
            ev_jb_i64(b, g, NULL, x->grid[d]);
            ev_jb_i64(b, k, NULL, x->block[d]);
        }
    }

    ex_attempt_range(&L->samples, a->attempt_id, &lo, &hi);
    int64_t nh = 0, nc = 0;
    for (size_t i = lo; i < hi; i++) {
        if (((const xsample *)ex_vec_at(&L->samples, i))->hot)
            nh++;
        else
            nc++;
    }
    ev_jb_i64(b, o, "hot_samples", nh);
    ev_jb_i64(b, o, "cold_samples", nc);

    /* The device record (schema 3; docs/bundle-format.md): as the
     * supervisor checked and stored it, or null; an older store's attempts
     * have no member, so its bundle keeps its bytes. */
    if (L->store_version >= 3 && L->devices.n > 0) {
        ex_attempt_range(&L->devices, a->attempt_id, &lo, &hi);
        cJSON *d = lo < hi ? cJSON_Parse(((const xdevice *)ex_vec_at(&L->devices, lo))->json) : NULL;
        if (d)
            ev_jb_put(b, o, "device", d);
        else
            ev_jb_null(b, o, "device");
    }
}

/* Adds the drift object to root. */
static void json_drift(ev_jb *b, const xload *L, cJSON *root)
{
    cJSON *d = ev_jb_obj(b, root, "drift");
    cJSON *arr = ev_jb_arr(b, d, "cases");
    int have = 0;
    double mn = 0, mx = 0;
    /* in case order: the recheck jobs' job_id order is case order in one
     * run's store, not in a merge of shards (docs/runner.md, "Shards") */
    for (size_t i = 0, k = 0; i < L->cases.n; i++) {
        const xcase *c = ex_vec_at(&L->cases, i);
        const xjob *r = NULL;
        for (; !r && k < L->jobs.n; k++) {
            const xjob *x = ex_vec_at(&L->jobs, k);
            if (ev_is_phase(x->phase, EV_PHASE_RECHECK) && ev_is_sched(x->arm, EV_SCHED_DEFAULT) &&
                x->has_case && x->case_index == c->case_index)
                r = x;
        }
        for (size_t q = 0; !r && q < L->jobs.n; q++) {
            const xjob *x = ex_vec_at(&L->jobs, q);
            if (ev_is_phase(x->phase, EV_PHASE_RECHECK) && ev_is_sched(x->arm, EV_SCHED_DEFAULT) &&
                x->has_case && x->case_index == c->case_index)
                r = x;
        }
        if (!r)
            continue;
        const xjob *m = ex_main_job(L, r->case_index, ev_sched_name(EV_SCHED_DEFAULT));
        cJSON *o = ev_jb_obj(b, arr, NULL);
        char reason[64];
        ev_jb_i64(b, o, "case_index", r->case_index);
        ev_jb_str(b, o, "main_job_key", m ? m->job_key : NULL);
        ev_jb_str(b, o, "recheck_job_key", r->job_key);
        ev_jb_dbl(b, o, "main_median_us", m && m->has_median, m ? m->median_us : 0,
                  m ? m->median_reason : "no main job");
        ev_jb_dbl(b, o, "recheck_median_us", r->has_median, r->median_us, r->median_reason);
        if (!m) {
            ev_jb_dbl(b, o, "drift", 0, 0, "no main job");
        } else if (!m->has_median) {
            snprintf(reason, sizeof reason, "main %s", m->median_reason);
            ev_jb_dbl(b, o, "drift", 0, 0, reason);
        } else if (!r->has_median) {
            snprintf(reason, sizeof reason, "recheck %s", r->median_reason);
            ev_jb_dbl(b, o, "drift", 0, 0, reason);
        } else {
            double v = r->median_us / m->median_us - 1.0;
            ev_jb_dbl(b, o, "drift", 1, v, NULL);
            if (isfinite(v)) {
                if (!have || v < mn)
                    mn = v;
                if (!have || v > mx)
                    mx = v;
                have = 1;
            }
        }
    }
    ev_jb_dbl(b, d, "min", have, mn, "no drift values");
    ev_jb_dbl(b, d, "max", have, mx, "no drift values");
}

/* Adds "figures" (src/evidence/figures.h) to root: the figures of the
 * run's view (every job's last-attempt hot and cold per_op_us, in
 * samples.csv order). */
static void json_figures(ev_jb *b, const ex_view *xv, cJSON *root, ev_err *err)
{
    cJSON *fig = NULL;
    if (b->rc)
        return;
    ev_status rc = ev_figures_build(&xv->v, &fig, err);
    if (rc)
        b->rc = rc;
    else
        ev_jb_put(b, root, "figures", fig);
}

/* Adds "run": the run's identity, status and rescue status (null with a
 * reason while it is not finished). */
static void json_run(ev_jb *b, const xload *L, cJSON *root)
{
    cJSON *run = ev_jb_obj(b, root, "run");
    ev_jb_i64(b, run, "run_id", L->run.run_id);
    ev_jb_str(b, run, "protocol_id", L->run.protocol_id);
    ev_jb_str(b, run, "protocol_path", L->run.protocol_path);
    ev_jb_str(b, run, "backend", L->run.backend);
    ev_jb_i64(b, run, "seed", L->run.seed);
    ev_jb_ns(b, run, "created_ns", L->run.created_ns);
    if (L->store_version >= 3 && L->devices.n > 0) /* a run stored with device records: every completed
                                                      attempt has one (older bundles keep their bytes) */
        ev_jb_i64(b, run, "store_schema", L->store_version);
    if (L->status.have) {
        ev_jb_str(b, run, "status", L->status.status);
    } else {
        ev_jb_null(b, run, "status");
        ev_jb_str(b, run, "status_reason", "run not finished");
    }
    ev_jb_str(b, run, "rescue_status", L->status.have ? L->status.rescue_status : NULL);
    if (L->status.have)
        ev_jb_ns(b, run, "finished_ns", L->status.finished_ns);
    else
        ev_jb_null(b, run, "finished_ns");
}

/* Adds "invocations", each with its environment (projected) and shard,
 * and for a sharded run "shards": each shard's invocations. */
static void json_invocations(ev_jb *b, const xload *L, cJSON *root)
{
    cJSON *invs = ev_jb_arr(b, root, "invocations");
    for (size_t i = 0; i < L->invs.n; i++) {
        const xinv *x = ex_vec_at(&L->invs, i);
        cJSON *o = ev_jb_obj(b, invs, NULL);
        ev_jb_i64(b, o, "invocation_id", x->invocation_id);
        ev_jb_ns(b, o, "started_ns", x->started_ns);
        ev_jb_bool(b, o, "resumed", x->resumed);
        ev_jb_str(b, o, "host_hash", x->host_hash);
        ev_jb_str(b, o, "profile_id", x->profile_id);
        ev_jb_str(b, o, "environment_record", x->env_json);
        cJSON *env = NULL;
        char why[sizeof((ev_err *)0)->msg];
        if (ev_proj_environment(x->env_json, &env, why, sizeof why) && !b->rc)
            b->rc = EV_ENOMEM;
        if (env) {
            ev_jb_put(b, o, "environment", env);
        } else {
            ev_jb_null(b, o, "environment");
            ev_jb_str(b, o, "environment_reason", why);
        }
        if (x->has_shard) {
            /* the shard this invocation ran (its environment is the shard's identity) */
            cJSON *sh = ev_jb_obj(b, o, "shard");
            ev_jb_i64(b, sh, "index", x->shard_index);
            ev_jb_i64(b, sh, "count", x->shard_count);
            ev_jb_str(b, sh, "phase", x->shard_phase);
        }
    }
    if (L->shard_count > 0) {
        /* the bundle's shards: only a sharded run has the member (old bundles keep their bytes) */
        cJSON *shs = ev_jb_obj(b, root, "shards");
        ev_jb_i64(b, shs, "count", L->shard_count);
        ev_jb_str(b, shs, "partition",
                  "case: shard = case_index mod count; floor and ceiling in every shard");
        cJSON *list = ev_jb_arr(b, shs, "list");
        for (int64_t k = 0; k < L->shard_count; k++) {
            cJSON *one = ev_jb_obj(b, list, NULL);
            ev_jb_i64(b, one, "index", k);
            cJSON *ids = ev_jb_arr(b, one, "invocations");
            for (size_t i = 0; i < L->invs.n; i++) {
                const xinv *x = ex_vec_at(&L->invs, i);
                if (x->has_shard && x->shard_index == k)
                    ev_jb_i64(b, ids, NULL, x->invocation_id);
            }
        }
    }
}

/* Adds "store_fit": the store's last fit, and whether it equals the
 * bundle's model.json byte for byte. */
static void json_store_fit(ev_jb *b, const xload *L, const ev_buf *model_json, cJSON *root)
{
    cJSON *sf = ev_jb_obj(b, root, "store_fit");
    ev_jb_i64(b, sf, "fits", (int64_t)L->fits.n);
    if (L->fits.n) {
        const xfit *f = ex_vec_at(&L->fits, L->fits.n - 1);
        size_t flen = strlen(f->model_json);
        ev_jb_i64(b, sf, "fit_id", f->fit_id);
        ev_jb_str(b, sf, "sha256", f->sha256);
        ev_jb_bool(b, sf, "equals_model_json",
                   flen == model_json->len && !memcmp(f->model_json, model_json->data, flen));
    } else {
        ev_jb_null(b, sf, "fit_id");
        ev_jb_null(b, sf, "sha256");
        ev_jb_null(b, sf, "equals_model_json");
    }
}

/* Writes validation.json into out; model_json is the bundle's model.json
 * (for store_fit.equals_model_json). */
ev_status ex_write_validation(const xload *L, const ex_view *xv, const ev_buf *model_json, ev_buf *out,
                              ev_err *err)
{
    ev_jb b = {EV_OK};
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return EV_ENOMEM;
    ev_jb_str(&b, root, "format", "evident-validation/1");

    json_run(&b, L, root);

    json_invocations(&b, L, root);

    cJSON *cases = ev_jb_arr(&b, root, "cases");
    for (size_t i = 0; i < L->cases.n; i++) {
        const xcase *c = ex_vec_at(&L->cases, i);
        cJSON *o = ev_jb_obj(&b, cases, NULL);
        ev_jb_i64(&b, o, "case_index", c->case_index);
        ev_jb_str(&b, o, "op", c->op);
        ev_jb_i64(&b, o, "rows", c->rows);
        ev_jb_i64(&b, o, "cols", c->cols);
        ev_jb_i64(&b, o, "stride", c->stride);
        ev_jb_str(&b, o, "dtype", c->dtype);
        ev_jb_i64(&b, o, "default_rows", c->default_rows);
        ev_jb_str(&b, o, "role", c->role);
    }

    int64_t by_outcome[EV_OUT_COUNT] = {0};
    int64_t n_hot = 0, n_cold = 0, n_outputs = 0;
    cJSON *jobs = ev_jb_arr(&b, root, "jobs");
    for (size_t i = 0; i < L->jobs.n; i++) {
        const xjob *j = ex_vec_at(&L->jobs, i);
        by_outcome[j->outcome]++;
        cJSON *o = ev_jb_obj(&b, jobs, NULL);
        ev_jb_i64(&b, o, "job_id", j->job_id);
        ev_jb_str(&b, o, "job_key", j->job_key);
        ev_jb_str(&b, o, "phase", j->phase);
        ev_jb_i64n(&b, o, "case_index", j->has_case, j->case_index);
        ev_jb_str(&b, o, "arm", j->arm);
        ev_jb_str(&b, o, "label", j->label);
        ev_jb_i64(&b, o, "plan_order", j->plan_order);
        ev_jb_str(&b, o, "retry_of", j->orig ? j->orig->job_key : NULL);
        ev_jb_i64n(&b, o, "retry_of_job_id", j->has_retry, j->retry_of);
        if (L->shard_count > 0)
            ev_jb_i64(&b, o, "shard",
                      ev_plan_job_shard(j->job_key, j->has_case ? j->case_index : -1, L->shard_count));
        ev_jb_str(&b, o, "outcome", ev_outcome_name(j->outcome));
        ev_jb_i64n(&b, o, "last_attempt", j->n_att > 0,
                   j->n_att ? ((const xattempt *)ex_vec_at(&L->atts, j->att0 + j->n_att - 1))->attempt : 0);
        ev_jb_dbl(&b, o, "median_us", j->has_median, j->median_us, j->median_reason);
        ev_jb_i64(&b, o, "hot_samples", j->hot_n);
        ev_jb_dbl(&b, o, "cold_median_us", j->has_cold_median, j->cold_median_us, j->cold_reason);
        json_plausibility(&b, o, j);
        cJSON *atts = ev_jb_arr(&b, o, "attempts");
        for (size_t k = 0; k < j->n_att; k++)
            json_attempt(&b, L, ex_vec_at(&L->atts, j->att0 + k), atts);
    }
    for (size_t i = 0; i < L->samples.n; i++) {
        if (((const xsample *)ex_vec_at(&L->samples, i))->hot)
            n_hot++;
        else
            n_cold++;
    }
    for (size_t i = 0; i < L->vals.n; i++) {
        const xval *v = ex_vec_at(&L->vals, i);
        if (v->has_output && !strcmp(v->stage, "first"))
            n_outputs++;
    }
    for (size_t i = 0; i < L->checks.n; i++)
        n_outputs += ((const xcheck *)ex_vec_at(&L->checks, i))->r.has_output;
    n_outputs += (int64_t)L->opkept.n;

    json_drift(&b, L, root);

    json_store_fit(&b, L, model_json, root);

    cJSON *sum = ev_jb_obj(&b, root, "summary");
    ev_jb_i64(&b, sum, "planned_jobs", (int64_t)L->jobs.n);
    cJSON *bo = ev_jb_obj(&b, sum, "jobs_by_outcome");
    for (int k = 0; k < EV_OUT_COUNT; k++)
        ev_jb_i64(&b, bo, ev_outcome_name((ev_outcome)k), by_outcome[k]);
    ev_jb_i64(&b, sum, "attempts", (int64_t)L->atts.n);
    ev_jb_i64(&b, sum, "samples", (int64_t)L->samples.n);
    ev_jb_i64(&b, sum, "hot_samples", n_hot);
    ev_jb_i64(&b, sum, "cold_samples", n_cold);
    ev_jb_i64(&b, sum, "outputs", n_outputs);
    json_figures(&b, xv, root, err);
    return ev_jb_finish(&b, root, out);
}

/* ---- the model ------------------------------------------------------------- */

/* Builds model.json into out: the view's observations (ev_view_observe),
 * fit, print. */
ev_status ex_write_model(const ex_view *xv, ev_buf *out, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_view_obs o;
    ev_fit *fit = NULL;
    ev_err ferr;
    ferr.msg[0] = '\0';
    ev_status frc = ev_view_observe(&xv->v, &o, &ferr);
    if (!frc) {
        ev_fit_input in = ev_view_fit_input(&xv->v, &o);
        frc = ev_model_fit(&in, &fit, &ferr);
    }
    if (frc == EV_ENOMEM) {
        rc = ev_err_set(err, frc, "export: out of memory fitting the model");
        goto out;
    }
    if (!frc) {
        rc = ev_fit_to_json(fit, out, err);
        goto out;
    }
    /* A failed fit is evidence too: say why, exactly. */
    rc = ev_fit_failed_json(frc, ferr.msg, out);
    if (rc)
        ev_err_set(err, rc, "export: writing model.json failed");
out:
    ev_fit_free(fit);
    ev_view_obs_free(&o);
    return rc;
}

/* ---- proof receipts and provenance ------------------------------------------ */

/* The snapshot rows as the projections see them (path order, as the
 * store query returns them). */
static ev_status proj_sources(const xload *L, ev_proj_source **out)
{
    ev_proj_source *v = calloc(L->sources.n + 1, sizeof *v);
    if (!v)
        return EV_ENOMEM;
    for (size_t i = 0; i < L->sources.n; i++) {
        const xsource *x = ex_vec_at(&L->sources, i);
        v[i] = (ev_proj_source){x->path, x->sha256, x->len};
    }
    *out = v;
    return EV_OK;
}

/* Writes proof-receipts.json into out (evidence/projections.h). */
ev_status ex_write_proof(const xload *L, const char *tree_hash, ev_buf *out)
{
    const xinv *first = L->invs.n ? ex_vec_at(&L->invs, 0) : NULL;
    ev_proj_source *src = NULL;
    ev_status rc = proj_sources(L, &src);
    if (rc)
        return rc;
    const char **envs = calloc(L->invs.n + 1, sizeof *envs);
    if (!envs) {
        free(src);
        return EV_ENOMEM;
    }
    for (size_t i = 0; i < L->invs.n; i++)
        envs[i] = ((const xinv *)ex_vec_at(&L->invs, i))->env_json;
    ev_proof_in in = {L->run.backend, first ? first->env_json : NULL, envs, L->invs.n, src, L->sources.n,
                      tree_hash};
    rc = ev_proof_build(&in, out);
    free(envs);
    free(src);
    return rc;
}

/* Writes provenance.json into out (evidence/projections.h). */
ev_status ex_write_provenance(const xload *L, const char *tree_hash, ev_buf *out)
{
    const char **ids = calloc(L->invs.n + 1, sizeof *ids);
    if (!ids)
        return EV_ENOMEM;
    for (size_t i = 0; i < L->invs.n; i++)
        ids[i] = ((const xinv *)ex_vec_at(&L->invs, i))->profile_id;
    ev_prov_in in = {L->run.run_id,
                     L->run.git_commit,
                     L->run.git_dirty,
                     tree_hash,
                     L->run.source_tree_hash,
                     L->run.protocol_id,
                     ids,
                     L->invs.n,
                     L->run.backend,
                     L->run.seed,
                     L->run.created_ns,
                     "evident " EV_VERSION};
    ev_status rc = ev_provenance_build(&in, out);
    free(ids);
    return rc;
}
