/*
 * verify_derive.c: check 6, "rederive".  Every derived number of the bundle
 * is rebuilt from the raw records and compared exactly:
 *
 *  - samples.csv against validation.json: per_op_us recomputed from
 *    elapsed_ms, replays and ops_per_graph (bits); each row's job, case,
 *    attempt and outcomes equal the job's record; each attempt's sample
 *    counts equal its rows (rows dropped or added are caught here);
 *  - every job's hot and cold median from samples.csv (ev_median) equals
 *    validation.json to the bit; a job that did not complete claims none;
 *  - the summary counts and the drift table, recomputed;
 *  - the model refit, validation.json's figures and report.html, each
 *    recomputed by its one recipe (verify_refit.c);
 *  - the selector (kernels/selector.h): each auto attempt's plan recomputed
 *    from model.json's coefficients and its recorded binding, and each
 *    native-schedule attempt's plan, equal its graph receipts;
 *  - every output's SHA-256 and size equal its validation record, and every
 *    outputs/ member is named by exactly one record;
 *  - the source-tree hash and the kernel source list, recomputed from the
 *    sources/ members;
 */
#include "verify_derive_int.h"

#include "runner/plan.h"

/* 1 when two doubles have the same bits. */
static int vd_same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Rows of samples.csv against validation.json's jobs and attempts. */
static void vd_rows(vd_ctx *x)
{
    vb_bundle *b = x->b;
    ev_vreport *r = x->r;
    const vb_samples *t = &b->samples;
    size_t bad_per_op = 0;
    int64_t run_id = 0;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    if (ev_jr_i64(run, "run_id", &run_id))
        vr_fail(r, VR_REDERIVE, VV, "run.run_id is not an integer");
    for (size_t i = 0; i < t->n; i++) {
        const vb_sample *s = &t->rows[i];
        double want = NAN;
        if (ev_per_op_us(s->elapsed_ms, s->replays, s->ops_per_graph, &want))
            want = NAN;
        if (!vd_same_bits(want, s->per_op_us) && ++bad_per_op <= 20)
            vr_fail(r, VR_REDERIVE, VS,
                    "job %lld attempt %lld %s sample %lld: per_op_us %.17g, but "
                    "elapsed_ms*1000/(replays*ops_per_graph) = %.17g",
                    (long long)s->job_id, (long long)s->attempt, s->hot ? "hot" : "cold",
                    (long long)s->sample_index, s->per_op_us, want);
        if (i == 0 && s->run_id != run_id)
            vr_fail(r, VR_REDERIVE, VS, "run_id %lld is not validation.json's run %lld", (long long)s->run_id,
                    (long long)run_id);
    }
    if (bad_per_op > 20)
        vr_fail(r, VR_REDERIVE, VS, "%zu rows whose per_op_us is not recomputed exactly", bad_per_op);

    /* Job-level cells of each job's rows against its record. */
    for (size_t k = 0; k < t->n_jobs; k++) {
        const vb_sjob *sj = &t->jobs[k];
        const vb_vjob *v = vb_job_by_id(b, sj->job_id);
        if (!v) {
            vr_fail(r, VR_REDERIVE, VS, "%zu rows of job_id %lld, a job validation.json does not have",
                    sj->count, (long long)sj->job_id);
            continue;
        }
        if (strcmp(sj->job_key, v->key) || strcmp(sj->phase, v->phase) || strcmp(sj->arm, v->arm) ||
            strcmp(sj->label, v->label) || strcmp(sj->outcome, v->outcome))
            vr_fail(r, VR_REDERIVE, VS,
                    "job %lld: job_key, phase, arm, label or outcome differ from validation.json's %s",
                    (long long)sj->job_id, v->key);
        const cJSON *c = vb_case(b, v->case_index);
        if (v->case_index < 0) {
            if (sj->op[0])
                vr_fail(r, VR_REDERIVE, VS, "job %s has no case, yet its rows name one", v->key);
        } else {
            int64_t rows, cols, stride, dr;
            const char *op = ev_jr_str(c, "op"), *dt = ev_jr_str(c, "dtype"), *role = ev_jr_str(c, "role");
            if (!c || ev_jr_i64(c, "rows", &rows) || ev_jr_i64(c, "cols", &cols) ||
                ev_jr_i64(c, "stride", &stride) || ev_jr_i64(c, "default_rows", &dr) || !op || !dt || !role ||
                rows != sj->rows || cols != sj->cols || stride != sj->stride || dr != sj->default_rows ||
                strcmp(op, sj->op) || strcmp(dt, sj->dtype) || strcmp(role, sj->role))
                vr_fail(r, VR_REDERIVE, VS, "job %s: case cells differ from case %lld", v->key,
                        (long long)v->case_index);
        }
        /* Attempt cells. */
        for (size_t i = sj->first; i < sj->first + sj->count;) {
            const vb_sample *s = &t->rows[i];
            const cJSON *a = vb_attempt(v, s->attempt);
            int64_t aid;
            const char *aoc = ev_jr_str(a, "outcome");
            if (!a)
                vr_fail(r, VR_REDERIVE, VS,
                        "job %s: rows of attempt %lld, which validation.json does not have", v->key,
                        (long long)s->attempt);
            else if (ev_jr_i64(a, "attempt_id", &aid) || aid != s->attempt_id || !aoc ||
                     strcmp(aoc, ev_outcome_name((ev_outcome)s->attempt_outcome)))
                vr_fail(r, VR_REDERIVE, VS,
                        "job %s attempt %lld: attempt_id or attempt_outcome differ from validation.json",
                        v->key, (long long)s->attempt);
            int64_t att = s->attempt;
            while (i < sj->first + sj->count && t->rows[i].attempt == att)
                i++;
        }
    }
    /* Every attempt's counts equal its rows. */
    for (size_t k = 0; k < b->n_vjobs; k++) {
        const vb_vjob *v = &b->vjobs[k];
        const cJSON *a;
        cJSON_ArrayForEach(a, v->attempts)
        {
            int64_t att, hot, cold;
            size_t first, n_cold, n_hot;
            if (ev_jr_i64(a, "attempt", &att))
                continue;
            vb_rows_of(b, v->job_id, att, &first, &n_cold, &n_hot);
            if (ev_jr_i64(a, "hot_samples", &hot) || ev_jr_i64(a, "cold_samples", &cold) ||
                hot != (int64_t)n_hot || cold != (int64_t)n_cold)
                vr_fail(
                    r, VR_REDERIVE, VS,
                    "job %s attempt %lld: %zu hot and %zu cold rows, validation.json records %lld and %lld",
                    v->key, (long long)att, n_hot, n_cold,
                    (long long)(ev_jr_i64(a, "hot_samples", &hot) ? -1 : hot),
                    (long long)(ev_jr_i64(a, "cold_samples", &cold) ? -1 : cold));
        }
    }
}

/* Median of the per_op_us of rows[first..first+n) into *out (NaN when n
 * is 0).  Returns -1 on allocation failure. */
static int vd_median(const vb_samples *t, size_t first, size_t n, double *out)
{
    *out = NAN;
    if (n == 0)
        return 0;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = t->rows[first + i].per_op_us;
    double m;
    if (ev_median(v, n, &m) == EV_OK)
        *out = m;
    free(v);
    return 0;
}

/* Compares a recomputed median (NaN: none) with key / key_reason of job v. */
static void vd_check_median(ev_vreport *r, const vb_vjob *v, const char *key, double want,
                            const char *want_reason)
{
    double have;
    int is_null = 0;
    char rkey[48];
    snprintf(rkey, sizeof rkey, "%s_reason", key);
    if (ev_jr_dbl_null(v->j, key, &have, &is_null)) {
        vr_fail(r, VR_REDERIVE, VV, "job %s: %s is neither a number nor null", v->key, key);
        return;
    }
    if (isnan(want)) {
        const char *why = ev_jr_str(v->j, rkey);
        if (!is_null)
            vr_fail(r, VR_REDERIVE, VV, "job %s: claims %s %.17g, but %s", v->key, key, have, want_reason);
        else if (!why || strcmp(why, want_reason))
            vr_fail(r, VR_REDERIVE, VV, "job %s: %s is \"%s\", not \"%s\"", v->key, rkey,
                    why ? why : "(none)", want_reason);
        return;
    }
    if (is_null)
        vr_fail(r, VR_REDERIVE, VV, "job %s: %s is null, but samples.csv gives %.17g", v->key, key, want);
    else if (!vd_same_bits(have, want))
        vr_fail(r, VR_REDERIVE, VV, "job %s: %s %.17g, but samples.csv gives %.17g", v->key, key, have, want);
    else if (cJSON_GetObjectItemCaseSensitive(v->j, rkey))
        vr_fail(r, VR_REDERIVE, VV, "job %s: %s present beside a number", v->key, rkey);
}

/* Recomputes every job's medians and compares them.  Returns -1 on
 * allocation failure. */
static int vd_medians(vd_ctx *x)
{
    vb_bundle *b = x->b;
    x->hot_median = malloc((b->n_vjobs ? b->n_vjobs : 1) * sizeof(double));
    x->cold_median = malloc((b->n_vjobs ? b->n_vjobs : 1) * sizeof(double));
    if (!x->hot_median || !x->cold_median)
        return -1;
    for (size_t k = 0; k < b->n_vjobs; k++) {
        const vb_vjob *v = &b->vjobs[k];
        int64_t last = 0, hot_rec;
        int last_null = 1;
        size_t first = 0, n_cold = 0, n_hot = 0;
        x->hot_median[k] = x->cold_median[k] = NAN;
        if (!ev_jr_i64_null(v->j, "last_attempt", &last, &last_null) && !last_null)
            vb_rows_of(b, v->job_id, last, &first, &n_cold, &n_hot);
        if (ev_jr_i64(v->j, "hot_samples", &hot_rec) || hot_rec != (int64_t)n_hot)
            vr_fail(x->r, VR_REDERIVE, VV, "job %s: hot_samples is not the %zu hot rows of its last attempt",
                    v->key, n_hot);
        int completed = !strcmp(v->outcome, "completed");
        const char *hot_why = !completed ? v->outcome : "no hot samples";
        const char *cold_why = !completed ? v->outcome : "no cold samples";
        if (completed) {
            if (vd_median(&b->samples, first + n_cold, n_hot, &x->hot_median[k]) ||
                vd_median(&b->samples, first, n_cold, &x->cold_median[k]))
                return -1;
        }
        vd_check_median(x->r, v, "median_us", x->hot_median[k], hot_why);
        vd_check_median(x->r, v, "cold_median_us", x->cold_median[k], cold_why);
    }
    return 0;
}

/* The fastest hot sample (us per op) of job v's last attempt; NaN when
 * it has none.  Preemption only lengthens a sample, so on a busy host
 * this, not the median, is what an empty launch costs. */
static double vd_fastest_hot(const vb_bundle *b, const vb_vjob *v)
{
    int64_t last = 0;
    int last_null = 1;
    size_t first = 0, n_cold = 0, n_hot = 0;
    double best = NAN;
    if (ev_jr_i64_null(v->j, "last_attempt", &last, &last_null) || last_null)
        return NAN;
    vb_rows_of(b, v->job_id, last, &first, &n_cold, &n_hot);
    for (size_t i = first + n_cold; i < first + n_cold + n_hot; i++) {
        double us = b->samples.rows[i].per_op_us;
        if (isfinite(us) && (isnan(best) || us < best))
            best = us;
    }
    return best;
}

/* Impossible timings (runner/sample_rules.h, ev_rule_impossible): no
 * completed job runs an op in under half the run's floor (the fastest
 * hot sample of its completed floor jobs, vd_fastest_hot).  (A median
 * faster than the run's ceilings allow is the plausibility rule: check 5
 * holds every attempt to it, and vd_plausibility checks each job's
 * statement of it.) */
static void vd_impossible(vd_ctx *x)
{
    const vb_bundle *b = x->b;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    const cJSON *shards = cJSON_GetObjectItemCaseSensitive(b->validation, "shards");
    const char *be = ev_jr_str(run, "backend");
    int floor_applies = ev_rule_floor_applies(be);
    int64_t n = 1;
    if (!floor_applies) {
        vr_note(x->r, VR_REDERIVE, VV, "%s", EV_RULE_FLOOR_NOT_APPLIED);
        return;
    }
    /* per shard (docs/runner.md, "Shards"): a case is held to the floor of
     * the device it ran on; an unsharded run has one */
    if (shards && (ev_jr_i64(shards, "count", &n) || n < 1 || n > EV_PLAN_MAX_SHARDS))
        n = 1; /* check 4 FAILs the listing */
    double *floor_us = malloc((size_t)n * sizeof *floor_us);
    if (!floor_us) {
        x->r->oom = 1;
        return;
    }
    for (int64_t s = 0; s < n; s++)
        floor_us[s] = NAN;
    for (size_t k = 0; k < b->n_vjobs; k++) {
        const vb_vjob *v = &b->vjobs[k];
        int64_t s = n > 1 ? ev_plan_job_shard(v->key, -1, n) : 0;
        double f;
        if (v->case_index >= 0 || s < 0 || !ev_is_arm(v->arm, EV_ARM_FLOOR) || !isfinite(x->hot_median[k]))
            continue;
        /* every completed floor job of the shard, in every phase and round:
         * a stall on a busy host can span one job's samples */
        f = vd_fastest_hot(b, v);
        if (isfinite(f) && (isnan(floor_us[s]) || f < floor_us[s]))
            floor_us[s] = f;
    }
    for (size_t k = 0; k < b->n_vjobs; k++) {
        const vb_vjob *v = &b->vjobs[k];
        const cJSON *c = vb_case(b, v->case_index);
        int64_t rows = 0, s = n > 1 ? ev_plan_shard_of(v->case_index, n) : 0;
        char why[400];
        if (v->case_index < 0 || !c || ev_jr_i64(c, "rows", &rows) || !isfinite(x->hot_median[k]))
            continue;
        if (ev_rule_impossible(x->hot_median[k], rows, floor_us[s], floor_applies, why, sizeof why)) {
            char note[64] = "";
            if (n > 1)
                snprintf(note, sizeof note, " (shard %lld of %lld)", (long long)s, (long long)n);
            vr_fail(x->r, VR_REDERIVE, VV, "job %s%s: %s", v->key, note, why);
        }
    }
    free(floor_us);
}

/* Each job's "plausibility" (docs/bundle-format.md) is what the bundle's
 * records give (runner/sample_rules.h, ev_rule_plausible_bound, on the
 * facts of verify_bound.c): null for a job without a case or not completed,
 * else its bytes, working set, cache, and per median the ceiling and the
 * bound.  A bundle exported before the member has none (noted). */
static void vd_plausibility(vd_ctx *x)
{
    const vb_bundle *b = x->b;
    const char *be = ev_jr_str(cJSON_GetObjectItemCaseSensitive(b->validation, "run"), "backend");
    vb_ceilings ceil;
    size_t absent = 0;
    if (!b->proto)
        return;
    if (vb_ceilings_get(b, &ceil)) {
        x->r->oom = 1;
        return;
    }
    for (size_t k = 0; k < b->n_vjobs; k++) {
        const vb_vjob *v = &b->vjobs[k];
        const cJSON *pl = cJSON_GetObjectItemCaseSensitive(v->j, "plausibility");
        const cJSON *a =
            v->attempts ? cJSON_GetArrayItem(v->attempts, cJSON_GetArraySize(v->attempts) - 1) : NULL;
        ev_rule_bound bd;
        int has = a && !strcmp(v->outcome, "completed") && vb_bound_of(b, v, a, &ceil, &bd);
        char want[600], got[600];
        if (!pl) {
            absent++;
            continue;
        }
        if (!has) {
            if (!cJSON_IsNull(pl))
                vr_fail(x->r, VR_REDERIVE, VV,
                        "job %s: plausibility is not null, but the job has no case or did not complete",
                        v->key);
            continue;
        }
        double hb = 0, cb = 0, x_bytes, x_work;
        int64_t x_cache;
        ev_rule_ceiling hc = ev_rule_plausible_bound(be, 1, &bd, &hb),
                        cc = ev_rule_plausible_bound(be, 0, &bd, &cb);
        snprintf(want, sizeof want,
                 "bytes %.17g, working_bytes %.17g, cache_bytes %lld, hot %s %.17g, cold %s %.17g", bd.bytes,
                 bd.working_bytes, (long long)bd.cache_bytes, ev_rule_ceiling_name(hc), hb,
                 ev_rule_ceiling_name(cc), cb);
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(pl, "hot"),
                    *c = cJSON_GetObjectItemCaseSensitive(pl, "cold");
        const char *hn = ev_jr_str(h, "bound_by"), *cn = ev_jr_str(c, "bound_by");
        double hv = 0, cv = 0;
        int null_h, null_c;
        if (ev_jr_dbl(pl, "bytes", &x_bytes) || ev_jr_dbl(pl, "working_bytes", &x_work) ||
            ev_jr_i64(pl, "cache_bytes", &x_cache) || !hn || !cn ||
            ev_jr_dbl_null(h, "bound_bpus", &hv, &null_h) || ev_jr_dbl_null(c, "bound_bpus", &cv, &null_c)) {
            vr_fail(x->r, VR_REDERIVE, VV, "job %s: plausibility lacks a member, or one of another type",
                    v->key);
            continue;
        }
        snprintf(got, sizeof got,
                 "bytes %.17g, working_bytes %.17g, cache_bytes %lld, hot %s %.17g, cold %s %.17g", x_bytes,
                 x_work, (long long)x_cache, hn, null_h ? 0.0 : hv, cn, null_c ? 0.0 : cv);
        if (strcmp(want, got))
            vr_fail(x->r, VR_REDERIVE, VV,
                    "job %s: plausibility says %s; the bundle's records give %s (the ceilings of its run: "
                    "memory %.17g, l2 %.17g bytes per us)",
                    v->key, got, want, bd.memory_bpus, bd.l2_bpus);
    }
    if (absent)
        vr_note(x->r, VR_REDERIVE, VV,
                "%zu jobs state no plausibility (a bundle exported before it): their medians are held to the "
                "rule by check 5 alone",
                absent);
    vb_ceilings_free(&ceil);
}

/* Index of the job (phase, case, arm) with no retry_of, or -1. */
static ptrdiff_t vd_find_job(const vb_bundle *b, const char *phase, int64_t ci, const char *arm)
{
    for (size_t k = 0; k < b->n_vjobs; k++) {
        const vb_vjob *v = &b->vjobs[k];
        if (v->case_index == ci && !v->retry_of && !strcmp(v->phase, phase) && !strcmp(v->arm, arm))
            return (ptrdiff_t)k;
    }
    return -1;
}

/* Compares a double-or-null key of o with want (NaN: null). */
static void vd_check_dbl(ev_vreport *r, const cJSON *o, const char *key, double want, const char *where)
{
    double have;
    int is_null = 0;
    if (ev_jr_dbl_null(o, key, &have, &is_null) ||
        (isnan(want) ? !is_null : (is_null || !vd_same_bits(have, want))))
        vr_fail(r, VR_REDERIVE, VV, "%s: %s is not the recomputed %.17g", where, key, want);
}

/* store_fit: the fit the runner stored is described, not shown; what the
 * bundle can show is held: no fit means null id, digest and comparison;
 * with a fit, equals_model_json says whether its digest is model.json's. */
static void vd_store_fit(vd_ctx *x)
{
    vb_bundle *b = x->b;
    const cJSON *sf = cJSON_GetObjectItemCaseSensitive(b->validation, "store_fit");
    const cJSON *eq = cJSON_GetObjectItemCaseSensitive(sf, "equals_model_json");
    const vb_member *mj = vb_find(b, EV_MEMBER_MODEL);
    const char *sha = ev_jr_str(sf, "sha256");
    int64_t fits, id;
    int id_null = 0;
    if (ev_jr_i64(sf, "fits", &fits) || fits < 0 || ev_jr_i64_null(sf, "fit_id", &id, &id_null)) {
        vr_fail(x->r, VR_REDERIVE, VV, "store_fit lacks fits or fit_id of the documented types");
        return;
    }
    if (!fits) {
        if (!id_null || !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(sf, "sha256")) || !cJSON_IsNull(eq))
            vr_fail(x->r, VR_REDERIVE, VV,
                    "store_fit: no fit stored, yet fit_id, sha256 or equals_model_json is set");
        return;
    }
    if (id_null || !sha || !cJSON_IsBool(eq) || !mj) {
        vr_fail(x->r, VR_REDERIVE, VV,
                "store_fit: a fit stored, yet fit_id, sha256 or equals_model_json is null");
        return;
    }
    if (cJSON_IsTrue(eq) != !strcmp(sha, mj->sha_hex))
        vr_fail(x->r, VR_REDERIVE, VV,
                "store_fit: equals_model_json is %s, but its sha256 %s model.json's (%s)",
                cJSON_IsTrue(eq) ? "true" : "false", strcmp(sha, mj->sha_hex) ? "is not" : "is", mj->sha_hex);
}

/* The drift table, recomputed from the medians. */
static void vd_drift(vd_ctx *x)
{
    vb_bundle *b = x->b;
    const cJSON *drift = cJSON_GetObjectItemCaseSensitive(b->validation, "drift");
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(drift, "cases");
    if (!cJSON_IsArray(cases)) {
        vr_fail(x->r, VR_REDERIVE, VV, "drift.cases is not an array");
        return;
    }
    int64_t n_cases = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(b->validation, "cases"));
    const cJSON *d = cases->child;
    double mn = NAN, mx = NAN;
    for (int64_t ci = 0; ci < n_cases; ci++) {
        ptrdiff_t rk = vd_find_job(b, ev_phase_name(EV_PHASE_RECHECK), ci, ev_sched_name(EV_SCHED_DEFAULT));
        if (rk < 0)
            continue;
        ptrdiff_t mk = vd_find_job(b, ev_phase_name(EV_PHASE_MAIN), ci, ev_sched_name(EV_SCHED_DEFAULT));
        char where[64];
        snprintf(where, sizeof where, "drift of case %lld", (long long)ci);
        if (!d) {
            vr_fail(x->r, VR_REDERIVE, VV, "%s is missing", where);
            return;
        }
        int64_t dci;
        double mm = mk >= 0 ? x->hot_median[mk] : NAN, rm = x->hot_median[rk], dv = NAN;
        char why[64] = "";
        if (mk < 0)
            snprintf(why, sizeof why, "no main job");
        else if (strcmp(b->vjobs[mk].outcome, "completed"))
            snprintf(why, sizeof why, "main %s", b->vjobs[mk].outcome);
        else if (strcmp(b->vjobs[rk].outcome, "completed"))
            snprintf(why, sizeof why, "recheck %s", b->vjobs[rk].outcome);
        if (!why[0] && !isnan(mm) && !isnan(rm))
            dv = rm / mm - 1.0;
        const char *have_why = ev_jr_str(d, "drift_reason");
        if (why[0] ? (!have_why || strcmp(have_why, why))
                   : cJSON_GetObjectItemCaseSensitive(d, "drift_reason") != NULL)
            vr_fail(x->r, VR_REDERIVE, VV, "%s: drift_reason is not \"%s\"", where,
                    why[0] ? why : "(absent)");
        if (ev_jr_i64(d, "case_index", &dci) || dci != ci)
            vr_fail(x->r, VR_REDERIVE, VV, "%s: case_index differs", where);
        const cJSON *mkey = cJSON_GetObjectItemCaseSensitive(d, "main_job_key");
        const char *rkey = ev_jr_str(d, "recheck_job_key");
        if (mk >= 0 ? !cJSON_IsString(mkey) || strcmp(mkey->valuestring, b->vjobs[mk].key)
                    : !cJSON_IsNull(mkey))
            vr_fail(x->r, VR_REDERIVE, VV, "%s: main_job_key is not %s", where,
                    mk >= 0 ? b->vjobs[mk].key : "null");
        if (!rkey || strcmp(rkey, b->vjobs[rk].key))
            vr_fail(x->r, VR_REDERIVE, VV, "%s: recheck_job_key is not %s", where, b->vjobs[rk].key);
        vd_check_dbl(x->r, d, "main_median_us", mm, where);
        vd_check_dbl(x->r, d, "recheck_median_us", rm, where);
        vd_check_dbl(x->r, d, "drift", dv, where);
        if (!isnan(dv)) {
            mn = isnan(mn) || dv < mn ? dv : mn;
            mx = isnan(mx) || dv > mx ? dv : mx;
        }
        d = d->next;
    }
    if (d)
        vr_fail(x->r, VR_REDERIVE, VV, "drift.cases has entries for cases without a recheck job");
    vd_check_dbl(x->r, drift, "min", mn, "drift");
    vd_check_dbl(x->r, drift, "max", mx, "drift");
}

/* Summary counts, recomputed. */
static void vd_summary(vd_ctx *x)
{
    vb_bundle *b = x->b;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(b->validation, "summary");
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(s, "jobs_by_outcome");
    int64_t counts[EV_OUT_COUNT] = {0}, attempts = 0, hot = 0, cold = 0, outputs = 0, v;
    for (size_t k = 0; k < b->n_vjobs; k++) {
        ev_outcome oc;
        if (!ev_outcome_parse(b->vjobs[k].outcome, &oc))
            counts[oc]++;
        attempts += cJSON_GetArraySize(b->vjobs[k].attempts);
    }
    for (size_t i = 0; i < b->samples.n; i++)
        b->samples.rows[i].hot ? hot++ : cold++;
    for (size_t i = 0; i < b->n; i++)
        outputs += ev_member_is_output(b->m[i].name);
    if (ev_jr_i64(s, "planned_jobs", &v) || v != (int64_t)b->n_vjobs)
        vr_fail(x->r, VR_REDERIVE, VV, "summary.planned_jobs is not the %zu jobs", b->n_vjobs);
    for (int o = 0; o < EV_OUT_COUNT; o++)
        if (ev_jr_i64(by, ev_outcome_name((ev_outcome)o), &v) || v != counts[o])
            vr_fail(x->r, VR_REDERIVE, VV,
                    "summary.jobs_by_outcome.%s is not the %lld jobs with that outcome",
                    ev_outcome_name((ev_outcome)o), (long long)counts[o]);
    if (ev_jr_i64(s, "attempts", &v) || v != attempts)
        vr_fail(x->r, VR_REDERIVE, VV, "summary.attempts is not %lld", (long long)attempts);
    if (ev_jr_i64(s, "samples", &v) || v != (int64_t)b->samples.n)
        vr_fail(x->r, VR_REDERIVE, VV, "summary.samples is not the %zu rows of samples.csv", b->samples.n);
    if (ev_jr_i64(s, "hot_samples", &v) || v != hot)
        vr_fail(x->r, VR_REDERIVE, VV, "summary.hot_samples is not %lld", (long long)hot);
    if (ev_jr_i64(s, "cold_samples", &v) || v != cold)
        vr_fail(x->r, VR_REDERIVE, VV, "summary.cold_samples is not %lld", (long long)cold);
    if (ev_jr_i64(s, "outputs", &v) || v != outputs)
        vr_fail(x->r, VR_REDERIVE, VV, "summary.outputs is not the %lld outputs/ members",
                (long long)outputs);
}

/* The output member record rec names (a validation or a sample check of
 * job v), counted in named[]: an outputs/ member, named once, with the
 * record's SHA-256 and size.  No member (null) is fine. */
static void vd_output_member(vd_ctx *x, const vb_vjob *v, const cJSON *rec, const char *sha,
                             unsigned char *named)
{
    vb_bundle *b = x->b;
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(rec, "output_member");
    if (cJSON_IsNull(mem))
        return;
    const vb_member *m = cJSON_IsString(mem) ? vb_find(b, mem->valuestring) : NULL;
    int64_t size;
    if (!m || !ev_member_is_output(m->name)) {
        vr_fail(x->r, VR_REDERIVE, VV, "job %s: output_member %s is not an outputs/ member", v->key,
                cJSON_IsString(mem) ? mem->valuestring : "(not a string)");
        return;
    }
    if (named[m - b->m]++)
        vr_fail(x->r, VR_REDERIVE, m->name, "named by more than one record");
    if (strcmp(m->sha_hex, sha))
        vr_fail(x->r, VR_REDERIVE, m->name, "SHA-256 %s, but job %s records output_sha256 %s", m->sha_hex,
                v->key, sha);
    if (ev_jr_i64(rec, "output_size", &size) || size != (int64_t)m->len)
        vr_fail(x->r, VR_REDERIVE, m->name, "%zu bytes, but job %s records another output_size", m->len,
                v->key);
}

/* Output members against the validation records and the sample checks;
 * replay determinism; a completed attempt holds no failed check. */
static void vd_outputs(vd_ctx *x)
{
    vb_bundle *b = x->b;
    unsigned char *named = calloc(b->n ? b->n : 1, 1);
    if (!named) {
        x->r->oom = 1;
        return;
    }
    for (size_t k = 0; k < b->n_vjobs; k++) {
        const vb_vjob *v = &b->vjobs[k];
        const cJSON *a;
        cJSON_ArrayForEach(a, v->attempts)
        {
            const cJSON *vals = cJSON_GetObjectItemCaseSensitive(a, "validations"), *val;
            const char *first_sha = NULL, *final_sha = NULL;
            cJSON_ArrayForEach(val, vals)
            {
                const char *stage = ev_jr_str(val, "stage"), *sha = ev_jr_str(val, "output_sha256");
                if (!stage || !sha) {
                    vr_fail(x->r, VR_REDERIVE, VV, "job %s: a validation lacks stage or output_sha256",
                            v->key);
                    continue;
                }
                if (!strcmp(stage, "first"))
                    first_sha = sha;
                else if (!strcmp(stage, "final"))
                    final_sha = sha;
                vd_output_member(x, v, val, sha, named);
            }
            const char *aoc = ev_jr_str(a, "outcome");
            ev_outcome aout;
            cJSON_ArrayForEach(val, cJSON_GetObjectItemCaseSensitive(a, "sample_checks"))
            {
                const char *sha = ev_jr_str(val, "output_sha256"), *why;
                int passed = 0;
                if (!sha || ev_jr_bool(val, "passed", &passed)) {
                    vr_fail(x->r, VR_REDERIVE, VV, "job %s: a sample check lacks passed or output_sha256",
                            v->key);
                    continue;
                }
                vd_output_member(x, v, val, sha, named);
                if (aoc && !ev_outcome_parse(aoc, &aout) && (why = ev_check_problem(aout, passed)))
                    vr_fail(x->r, VR_REDERIVE, VV, "job %s: an attempt %s", v->key, why);
            }
            /* the check tags and the kept output (schema 5): its bytes are
             * an outputs/ member; a completed attempt holds no failed one */
            const cJSON *kept = cJSON_GetObjectItemCaseSensitive(a, "op_kept");
            cJSON_ArrayForEach(val, cJSON_GetObjectItemCaseSensitive(a, "op_checks"))
            {
                int passed = 0;
                const char *why;
                if (ev_jr_bool(val, "passed", &passed))
                    vr_fail(x->r, VR_REDERIVE, VV, "job %s: an op check lacks passed", v->key);
                else if (aoc && !ev_outcome_parse(aoc, &aout) && (why = ev_check_problem(aout, passed)))
                    vr_fail(x->r, VR_REDERIVE, VV, "job %s: an attempt %s", v->key, why);
            }
            if (cJSON_IsObject(kept)) {
                const char *sha = ev_jr_str(kept, "output_sha256"), *why;
                int passed = 0;
                if (!sha || ev_jr_bool(kept, "passed", &passed)) {
                    vr_fail(x->r, VR_REDERIVE, VV, "job %s: a kept output lacks passed or output_sha256",
                            v->key);
                } else {
                    vd_output_member(x, v, kept, sha, named);
                    if (aoc && !ev_outcome_parse(aoc, &aout) && (why = ev_check_problem(aout, passed)))
                        vr_fail(x->r, VR_REDERIVE, VV, "job %s: an attempt %s", v->key, why);
                }
            }
            if (aoc && !strcmp(aoc, "completed") && first_sha && final_sha && strcmp(first_sha, final_sha))
                vr_fail(x->r, VR_REDERIVE, VV,
                        "job %s: completed, yet its final output hash differs from the first "
                        "(replay not deterministic)",
                        v->key);
        }
    }
    for (size_t i = 0; i < b->n; i++)
        if (ev_member_is_output(b->m[i].name) && !named[i])
            vr_fail(x->r, VR_REDERIVE, b->m[i].name,
                    "no validation record, sample check or kept output names this output");
    free(named);
}

/* Compares member name's bytes with what projections.h prints into want;
 * one failure naming the first differing byte. */
static void vd_same_member(vd_ctx *x, const char *name, const ev_buf *want)
{
    const vb_member *m = vb_find(x->b, name);
    size_t i = 0;
    if (!m)
        return; /* check 2 reports a missing member */
    while (i < m->len && i < want->len && ((const char *)m->data)[i] == want->data[i])
        i++;
    if (i < m->len || i < want->len)
        vr_fail(x->r, VR_REDERIVE, name,
                "differs from its regeneration from validation.json and the sources/ members (first "
                "difference at byte %zu): a field was edited on its own",
                i);
}

/* proof-receipts.json and provenance.json regenerated by their one writer
 * (evidence/projections.h) from validation.json's run and invocations, the
 * sources/ members (tree hash tree_hex) and provenance.json's own claims
 * (git commit and dirty flag, the runner's recorded tree hash, the
 * exporter), then compared byte for byte. */
static void vd_projections(vd_ctx *x, const char *tree_hex)
{
    vb_bundle *b = x->b;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    const cJSON *invs = cJSON_GetObjectItemCaseSensitive(b->validation, "invocations"), *iv;
    size_t n_inv = cJSON_IsArray(invs) ? (size_t)cJSON_GetArraySize(invs) : 0, k = 0, ns = 0;
    ev_proj_source *src = calloc(b->n + 1, sizeof *src);
    const char **ids = calloc(n_inv + 1, sizeof *ids);
    ev_buf out = EV_BUF_INIT;
    int64_t run_id, seed, created;
    const char *backend = ev_jr_str(run, "backend"), *pid = ev_jr_str(run, "protocol_id");
    if (!src || !ids) {
        x->r->oom = 1;
        goto out;
    }
    if (!backend || !pid || ev_jr_i64(run, "run_id", &run_id) || ev_jr_i64(run, "seed", &seed) ||
        ev_jr_ns(run, "created_ns", &created))
        goto out; /* check 4 reports a malformed run object */
    for (size_t i = 0; i < b->n; i++)
        if (ev_member_is_source(b->m[i].name))
            src[ns++] = (ev_proj_source){b->m[i].name + 8, b->m[i].sha_hex, b->m[i].len};
    cJSON_ArrayForEach(iv, invs)
    {
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(iv, "profile_id");
        ids[k++] = cJSON_IsString(pr) ? pr->valuestring : NULL;
    }
    if (b->proof) {
        const cJSON *rec =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(invs, 0), "environment_record");
        const char **envs = calloc(n_inv + 1, sizeof *envs);
        size_t ne = 0;
        cJSON_ArrayForEach(iv, invs)
        {
            const cJSON *er = cJSON_GetObjectItemCaseSensitive(iv, "environment_record");
            if (envs)
                envs[ne++] = cJSON_IsString(er) ? er->valuestring : NULL;
        }
        ev_proof_in in = {backend, cJSON_IsString(rec) ? rec->valuestring : NULL, envs, ne, src, ns,
                          tree_hex};
        if (!envs || ev_proof_build(&in, &out))
            x->r->oom = 1;
        else
            vd_same_member(x, EV_MEMBER_PROOF, &out);
        free(envs);
        ev_buf_reset(&out);
    }
    if (b->provenance) {
        const cJSON *dirty = cJSON_GetObjectItemCaseSensitive(b->provenance, "git_dirty");
        const char *commit = ev_jr_str(b->provenance, "git_commit"),
                   *rec = ev_jr_str(b->provenance, "recorded_source_tree_hash"),
                   *exporter = ev_jr_str(b->provenance, "exporter");
        if (!commit || !rec || !exporter || !cJSON_IsBool(dirty)) {
            vr_fail(x->r, VR_REDERIVE, EV_MEMBER_PROVENANCE,
                    "git_commit, git_dirty, recorded_source_tree_hash or exporter is missing or of the wrong "
                    "type");
            goto out;
        }
        ev_prov_in in = {run_id,  commit,  cJSON_IsTrue(dirty), tree_hex, rec, pid, ids, n_inv, backend, seed,
                         created, exporter};
        if (ev_provenance_build(&in, &out))
            x->r->oom = 1;
        else
            vd_same_member(x, EV_MEMBER_PROVENANCE, &out);
    }
out:
    ev_buf_free(&out);
    free(src);
    free(ids);
}

/* Source-tree hash (the runner's ev_tree_hash over the sources/ members,
 * against provenance.json's source_tree_hash and the runner's recorded one
 * and proof-receipts.json's), the kernel source list and the default
 * entry's source digest, from the sources/ members. */
static void vd_sources(vd_ctx *x)
{
    vb_bundle *b = x->b;
    ev_source_file *files = calloc(b->n ? b->n : 1, sizeof *files);
    size_t nf = 0;
    char hex[EV_SHA256_HEX_LEN + 1];
    const vb_member *des = vb_find(b, EV_MEMBER_SOURCES EV_BUNDLE_DEFAULT_ENTRY_SOURCE);
    size_t before = ev_vreport_failures(x->r);
    if (!files) {
        x->r->oom = 1;
        return;
    }
    for (size_t i = 0; i < b->n; i++)
        if (ev_member_is_source(b->m[i].name)) {
            files[nf].path = (char *)(b->m[i].name + 8); /* read only */
            memcpy(files[nf].sha256, b->m[i].sha_hex, 65);
            nf++;
        }
    if (ev_tree_hash(files, nf, hex)) {
        x->r->oom = 1;
        goto out;
    }
    if (b->provenance) {
        const char *h = ev_jr_str(b->provenance, "recorded_source_tree_hash");
        if (!h || strcmp(h, hex))
            vr_fail(x->r, VR_REDERIVE, EV_MEMBER_PROVENANCE,
                    "recorded_source_tree_hash (the runner's, taken before measuring) is not %s, the hash of "
                    "the sources/ members: the sources are not the snapshot the run hashed",
                    hex);
    }
    if (b->proof) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(b->proof, "default_entry_source");
        const char *dp = ev_jr_str(d, "path"), *ds = ev_jr_str(d, "sha256");
        if (des ? (!dp || !ds || strcmp(dp, EV_BUNDLE_DEFAULT_ENTRY_SOURCE) || strcmp(ds, des->sha_hex))
                : !cJSON_IsNull(d))
            vr_fail(x->r, VR_REDERIVE, EV_MEMBER_PROOF,
                    "default_entry_source is not {%s, %s}, the SHA-256 of the sources/ member",
                    EV_BUNDLE_DEFAULT_ENTRY_SOURCE, des ? des->sha_hex : "null: no such member");
    }
    if (b->provenance) {
        const char *h = ev_jr_str(b->provenance, "source_tree_hash");
        if (!h || strcmp(h, hex))
            vr_fail(x->r, VR_REDERIVE, EV_MEMBER_PROVENANCE,
                    "source_tree_hash is not %s, the hash of the sources/ members", hex);
    }
    if (b->proof) {
        const char *h = ev_jr_str(b->proof, "source_tree_hash");
        if (!h || strcmp(h, hex))
            vr_fail(x->r, VR_REDERIVE, EV_MEMBER_PROOF, "source_tree_hash is not %s", hex);
        const cJSON *ks = cJSON_GetObjectItemCaseSensitive(b->proof, "kernel_sources");
        const cJSON *e = cJSON_IsArray(ks) ? ks->child : NULL;
        for (size_t i = 0; i < b->n; i++) {
            const vb_member *m = &b->m[i];
            if (strncmp(m->name, "sources/kernels/", 16))
                continue;
            const char *p = ev_jr_str(e, "path"), *s = ev_jr_str(e, "sha256");
            int64_t size;
            if (!e || !p || !s || ev_jr_i64(e, "size", &size) || strcmp(p, m->name + 8) ||
                strcmp(s, m->sha_hex) || size != (int64_t)m->len) {
                vr_fail(x->r, VR_REDERIVE, EV_MEMBER_PROOF, "kernel_sources does not list %s as it is",
                        m->name);
                goto out;
            }
            e = e->next;
        }
        if (e)
            vr_fail(x->r, VR_REDERIVE, EV_MEMBER_PROOF, "kernel_sources lists files that are not members");
    }
    /* the whole members, when no field-level check has objected above */
    if (ev_vreport_failures(x->r) == before)
        vd_projections(x, hex);
out:
    free(files);
}

void vc_rederive(vb_bundle *b, ev_vreport *r)
{
    vd_ctx x;
    memset(&x, 0, sizeof x);
    x.b = b;
    x.r = r;
    vr_use(r, VR_REDERIVE);
    vd_report(&x);
    if (!b->validation || !b->vjobs_ok) {
        vr_not_run(r, VR_REDERIVE, "validation.json's jobs could not be read (checks 3, 4)");
        return;
    }
    if (!b->samples_ok) {
        vr_not_run(r, VR_REDERIVE, "samples.csv failed check 3");
        return;
    }
    vd_rows(&x);
    if (vd_medians(&x) || vd_view(&x)) {
        r->oom = 1;
        goto out;
    }
    vd_summary(&x);
    vd_impossible(&x);
    vd_plausibility(&x);
    vd_drift(&x);
    vd_store_fit(&x);
    vd_outputs(&x);
    vd_revalidate(&x);
    vd_sources(&x);
    if (b->proto)
        vd_model(&x);
    else
        vr_not_run(r, VR_REDERIVE, "protocol.json could not be parsed: no refit");
    vd_selector(&x);
    vd_figures(&x);
out:
    vd_view_free(&x);
    free(x.hot_median);
    free(x.cold_median);
}
