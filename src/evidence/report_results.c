/*
 * report_results.c: the results as data (`evident results`, docs/results.md):
 * one row per case and arm with its estimate, the estimate's 95% interval,
 * bytes moved, GB/s and the fraction of the same run's streaming ceiling,
 * and the outcome with its reason; written as JSON or CSV (report.h).
 *
 * Every number is read from the members the report reads (report.c's
 * lookups: the figures' estimates over rounds, each job's bootstrap
 * interval, the ceiling's binding); what this file adds are the rules that
 * the report, the results and the comparison of two runs share: the bytes a
 * case moves (rp_case_bytes), the run's ceiling (rp_ceiling_bpus) and the
 * interval of one case and arm's estimate (rp_arm_stat_get).
 */
#include "report_int.h"

#include "dtype.h"
#include "evidence/figures.h"
#include "sha256.h"
#include "jbuild.h"

/* ---- the shared rules ------------------------------------------------------- */

/* Returns 1 and sets *bytes to the bytes one op of case c moves: every
 * element of the R x N input read once and one output per row written, in
 * the storage dtype (the kernels' benchmark counts the same); 0 when the
 * case lacks its shape or dtype. */
int rp_case_bytes(const cJSON *c, double *bytes)
{
    ev_dtype d;
    int64_t rows = rp_jint(c, "rows", -1), cols = rp_jint(c, "cols", -1);
    const char *dt = ev_jr_str(c, "dtype");
    if (rows < 0 || cols < 0 || !dt || ev_dtype_parse(dt, &d))
        return 0;
    *bytes = ((double)rows * (double)cols + (double)rows) * (double)ev_dtype_size(d);
    return 1;
}

/* Returns 1 and sets *bpus to the run's streaming ceiling in bytes per
 * microsecond (the bytes one ceiling op reads over its hot median; its
 * rescue retry when the original has no median), 0 when the run has none. */
int rp_ceiling_bpus(const rep *r, double *bpus)
{
    int used_retry;
    double us, bytes;
    const cJSON *j = rp_md_ref_job(r, ev_arm_kind_name(EV_ARM_CEILING), &used_retry);
    if (!rp_md_median(j, &us) || !(us > 0) || !rp_md_ceiling_bytes(j, &bytes))
        return 0;
    *bpus = bytes / us;
    return 1;
}

/* The figures' per-job object of job j, or NULL. */
static const cJSON *fig_job_of(const rep *r, const cJSON *j)
{
    char key[200];
    const char *k = j ? ev_jr_str(j, "job_key") : NULL;
    if (!k)
        return NULL;
    snprintf(key, sizeof key, "F|%s", k);
    return rp_ix_find(r, key);
}

/* Fills *s with the estimate of case idx and arm and its 95% interval
 * (rp_arm_stat in report_int.h says what each basis stands on).  Returns
 * 1 when there is an estimate (s->has_ci says whether there is an interval:
 * not with one usable round of several, nor without a bootstrap interval),
 * 0 when none (s zeroed but for the round counts). */
int rp_arm_stat_get(const rep *r, int64_t idx, const char *arm, rp_arm_stat *s)
{
    char key[200];
    const cJSON *a, *x;
    memset(s, 0, sizeof *s);
    snprintf(key, sizeof key, "A|%" PRId64 "|%s", idx, arm);
    a = rp_ix_find(r, key);
    s->has_est = rp_arm_estimate(r, idx, arm, rp_arm_phase(arm), &s->est_us);
    s->n_rounds = a ? rp_jint(a, "n_rounds", 1) : 1;
    s->n_usable = a ? rp_jint(a, "n_usable", 0) : s->has_est;
    if (!s->has_est)
        return 0;
    if (s->n_rounds <= 1) {
        /* one round: the job's percentile bootstrap interval of its median */
        const cJSON *f = fig_job_of(r, rp_find_job(r, idx, arm, rp_arm_phase(arm)));
        const cJSON *ci = f ? cJSON_GetObjectItemCaseSensitive(f, "median_ci") : NULL;
        s->basis = "within-process";
        if (rp_numv(cJSON_GetArrayItem(ci, 0), &s->lo) && rp_numv(cJSON_GetArrayItem(ci, 1), &s->hi) &&
            s->est_us > 0 && !ev_log_se95(s->lo, s->hi, &s->log_se)) {
            s->has_ci = 1;
            s->log_mean = log(s->est_us);
            s->dof = 0;
        }
        return 1;
    }
    /* rounds: a t interval on the mean log of the usable rounds' medians */
    double l[EV_FIG_MAX_ROUNDS], sum = 0, ss = 0, t, v;
    size_t m = 0;
    s->basis = "rounds";
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(a, "round_medians_us"))
    {
        if (rp_numv(x, &v) && v > 0 && m < EV_FIG_MAX_ROUNDS)
            l[m++] = log(v);
    }
    if (m < 2)
        return 1;
    for (size_t i = 0; i < m; i++)
        sum += l[i];
    s->log_mean = sum / (double)m;
    for (size_t i = 0; i < m; i++)
        ss += (l[i] - s->log_mean) * (l[i] - s->log_mean);
    s->log_se = sqrt(ss / (double)(m - 1)) / sqrt((double)m);
    s->dof = (double)(m - 1);
    if (ev_t975((int64_t)m - 1, &t))
        return 1;
    s->lo = exp(s->log_mean - t * s->log_se);
    s->hi = exp(s->log_mean + t * s->log_se);
    s->has_ci = isfinite(s->lo) && isfinite(s->hi);
    return 1;
}

/* The outcome of case idx and arm over its main and policy jobs (no
 * retries): "completed" when every one completed, else the first failed
 * one's outcome, with why into reason[cap] (rp_failure_reason, and its
 * rescue's outcome); reason is "" when completed.  Returns 1, or 0 (nothing
 * written) when the run planned no such job. */
int rp_arm_outcome(const rep *r, int64_t idx, const char *arm, const char **outcome, char *reason, size_t cap)
{
    const cJSON *j, *bad = NULL;
    size_t n = 0;
    cJSON_ArrayForEach(j, r->jobs)
    {
        const char *a = ev_jr_str(j, "arm"), *p = ev_jr_str(j, "phase"), *o = ev_jr_str(j, "outcome");
        if (!a || !p || strcmp(a, arm) || rp_jint(j, "case_index", -1) != idx || ev_jr_str(j, "retry_of") ||
            (!ev_is_phase(p, EV_PHASE_MAIN) && !ev_is_phase(p, EV_PHASE_POLICY)))
            continue;
        n++;
        if (!bad && (!o || strcmp(o, "completed")))
            bad = j;
    }
    if (!n)
        return 0;
    reason[0] = '\0';
    if (!bad) {
        *outcome = "completed";
        return 1;
    }
    *outcome = ev_jr_str(bad, "outcome") ? ev_jr_str(bad, "outcome") : "?";
    rp_failure_reason(r, bad, reason, cap);
    const cJSON *rj = rp_find_retry(r, ev_jr_str(bad, "job_key"));
    if (rj) {
        size_t l = strlen(reason);
        snprintf(reason + l, cap - l, " (retry-1: %s)",
                 ev_jr_str(rj, "outcome") ? ev_jr_str(rj, "outcome") : "?");
    }
    return 1;
}

/* ---- the rows ---------------------------------------------------------------- */

/* One row of the results. */
typedef struct rrow {
    const cJSON *c;
    const char *arm, *outcome;
    char reason[600];
    rp_arm_stat st;
    int has_bytes;
    double bytes;
} rrow;

/* The run's rows in case order, then arm column order.  OUT: *out (free),
 * *n.  EV_ENOMEM. */
static ev_status collect_rows(const rep *r, rrow **out, size_t *n)
{
    size_t cap = (size_t)cJSON_GetArraySize(r->cases) * (r->n_arms ? r->n_arms : 1) + 1, k = 0;
    rrow *v = calloc(cap, sizeof *v);
    const cJSON *c;
    if (!v)
        return EV_ENOMEM;
    cJSON_ArrayForEach(c, r->cases)
    {
        int64_t idx = rp_jint(c, "case_index", -1);
        for (size_t i = 0; i < r->n_arms && k < cap; i++) {
            rrow *w = &v[k];
            if (!rp_arm_outcome(r, idx, r->arms[i], &w->outcome, w->reason, sizeof w->reason))
                continue;
            w->c = c;
            w->arm = r->arms[i];
            rp_arm_stat_get(r, idx, r->arms[i], &w->st);
            w->has_bytes = rp_case_bytes(c, &w->bytes);
            k++;
        }
    }
    *out = v;
    *n = k;
    return EV_OK;
}

/* The root digest (SHA-256 of receipts.json) into hex, or 0 when the
 * members hold no receipts.json. */
static int root_of(const ev_member *m, size_t n, char hex[EV_SHA256_HEX_LEN + 1])
{
    const ev_member *x = ev_member_find(m, n, "receipts.json");
    return x && !ev_sha256_hex(x->data ? x->data : "", x->len, hex);
}

/* 1 when the estimate's interval stands on rounds (two or more usable). */
static int replicated(const rp_arm_stat *st)
{
    return st->basis && !strcmp(st->basis, "rounds") && st->has_ci;
}

/* See report_int.h. */
void rp_floor_json(ev_jb *jb, cJSON *o, const rp_floor *f)
{
    char t[300];
    cJSON *x = ev_jb_obj(jb, o, "noise_floor");
    ev_jb_bool(jb, x, "measured", f->measured);
    ev_jb_dbl(jb, x, "pct", f->measured, f->pct, "no case has both a main and a recheck default job");
    ev_jb_dbl(jb, x, "factor", 1, RP_FLOOR_FACTOR, NULL);
    ev_jb_dbl(jb, x, "min_pct", 1, RP_FLOOR_MIN_PCT, NULL);
    ev_jb_dbl(jb, x, "max_recheck_drift_pct", f->measured, 100.0 * expm1(f->max_drift), "none measured");
    ev_jb_i64n(jb, x, "case_index", f->measured, f->case_index);
    ev_jb_i64(jb, x, "n_cases", (int64_t)f->n_cases);
    ev_jb_str(jb, x, "text", rp_floor_text(f, t, sizeof t));
}

/* Adds the run's facts to the results' top level: the device (driver
 * included), the host and the peer versions, whether the intervals are
 * replicated and how ratios are called (the noise floor), and the notes
 * on what this bundle's format kept from those checks. */
static void put_run_facts(ev_jb *jb, cJSON *o, const rep *r, const ev_member *m, size_t n)
{
    rp_facts fx;
    rp_notes notes;
    char basis[1000];
    rp_facts_get(r, &fx);
    rp_facts_json(jb, o, r, &fx);
    ev_jb_bool(jb, o, "replicated", rp_rounds_of(r) > 1);
    ev_jb_str(jb, o, "basis", rp_basis_text(r, basis, sizeof basis));
    rp_floor_json(jb, o, &r->floor);
    rp_format_notes(r, m, n, &notes);
    cJSON *arr = ev_jb_arr(jb, o, "format_notes");
    for (size_t i = 0; i < notes.n; i++)
        ev_jb_str(jb, arr, NULL, notes.v[i]);
}

/* Adds "pairs": every figures pair (arm / against within a case) with its
 * ratio, interval and call (rp_pair_call): what the report's tables show. */
static void put_pairs(ev_jb *jb, cJSON *o, const rep *r)
{
    const cJSON *p;
    cJSON *arr = ev_jb_arr(jb, o, "pairs");
    cJSON_ArrayForEach(
        p, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r->val, "figures"), "pairs"))
    {
        rp_ratio x;
        char lab[200];
        int has = rp_pair_ratio(p, &x);
        cJSON *q = ev_jb_obj(jb, arr, NULL);
        ev_jb_i64(jb, q, "case_index", rp_jint(p, "case_index", -1));
        ev_jb_str(jb, q, "case", rp_case_name(r, rp_jint(p, "case_index", -1), lab, sizeof lab));
        ev_jb_str(jb, q, "arm", ev_jr_str(p, "arm"));
        ev_jb_str(jb, q, "against", ev_jr_str(p, "against"));
        ev_jb_str(jb, q, "basis", x.replicated ? "rounds" : "within-process");
        ev_jb_i64(jb, q, "n_rounds", rp_jint(p, "n_rounds", 0));
        ev_jb_dbl(jb, q, "ratio", has, x.ratio,
                  ev_jr_str(p, "ratio_reason") ? ev_jr_str(p, "ratio_reason") : "no ratio");
        if (x.has_ci) {
            cJSON *ci = ev_jb_arr(jb, q, "interval");
            ev_jb_dbl(jb, ci, NULL, 1, x.lo, NULL);
            ev_jb_dbl(jb, ci, NULL, 1, x.hi, NULL);
        } else {
            ev_jb_dbl(jb, q, "interval", 0, 0, has ? "too few paired rounds, or not finite" : "no ratio");
        }
        ev_jb_str(jb, q, "call", rp_call_word(rp_pair_call(r, p), 0));
    }
}

/* See report.h. */
ev_status ev_results_write(const ev_member *m, size_t n, int csv, ev_buf *out, ev_err *err)
{
    rep r;
    rrow *rows = NULL;
    size_t n_rows = 0;
    ev_buf b = EV_BUF_INIT;
    double ceil_bpus = 0;
    char root[EV_SHA256_HEX_LEN + 1];
    ev_status rc = rp_rep_open(m, n, NULL, &r, err);
    if (rc)
        return rc;
    if ((rc = collect_rows(&r, &rows, &n_rows)))
        goto out;
    int have_ceil = rp_ceiling_bpus(&r, &ceil_bpus), have_root = root_of(m, n, root);
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r.val, "run");
    if (csv) {
        rc = ev_buf_puts(&b, "format,case_index,op,rows,cols,stride,dtype,default_rows,role,arm,outcome,"
                             "reason,basis,n_rounds,n_usable,median_us,ci_low_us,ci_high_us,bytes_per_op,"
                             "gb_per_s,ceiling_gb_per_s,ceiling_pct,replicated\n");
        for (size_t i = 0; i < n_rows && !rc; i++) {
            const rrow *w = &rows[i];
            const char *fields[4] = {ev_jr_str(w->c, "op"), ev_jr_str(w->c, "dtype"), ev_jr_str(w->c, "role"),
                                     w->arm};
            rc = ev_buf_printf(
                &b,
                EV_RESULTS_FORMAT ",%" PRId64 ",%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%s,%" PRId64
                                  ",%s,%s,%s,",
                rp_jint(w->c, "case_index", -1), fields[0] ? fields[0] : "", rp_jint(w->c, "rows", -1),
                rp_jint(w->c, "cols", -1), rp_jint(w->c, "stride", -1), fields[1] ? fields[1] : "",
                rp_jint(w->c, "default_rows", -1), fields[2] ? fields[2] : "", fields[3], w->outcome);
            /* the reason: a quoted CSV field ("" doubles a quote) */
            if (!rc && w->reason[0]) {
                rc = ev_buf_puts(&b, "\"");
                for (const char *p = w->reason; *p && !rc; p++)
                    rc = *p == '"' ? ev_buf_puts(&b, "\"\"") : ev_buf_append(&b, p, 1);
                if (!rc)
                    rc = ev_buf_puts(&b, "\"");
            }
            if (!rc)
                rc = ev_buf_printf(&b, ",%s,%" PRId64 ",%" PRId64 ",", w->st.basis ? w->st.basis : "",
                                   w->st.n_rounds, w->st.n_usable);
            double gbps =
                w->st.has_est && w->has_bytes && w->st.est_us > 0 ? w->bytes / w->st.est_us / 1e3 : 0;
            if (!rc && w->st.has_est)
                rc = ev_buf_printf(&b, "%.17g", w->st.est_us);
            if (!rc && w->st.has_ci)
                rc = ev_buf_printf(&b, ",%.17g,%.17g,", w->st.lo, w->st.hi);
            else if (!rc)
                rc = ev_buf_puts(&b, ",,,");
            if (!rc && w->has_bytes)
                rc = ev_buf_printf(&b, "%.17g", w->bytes);
            if (!rc)
                rc = ev_buf_puts(&b, ",");
            if (!rc && gbps > 0)
                rc = ev_buf_printf(&b, "%.17g", gbps);
            if (!rc)
                rc = ev_buf_puts(&b, ",");
            if (!rc && have_ceil)
                rc = ev_buf_printf(&b, "%.17g", ceil_bpus / 1e3);
            if (!rc)
                rc = ev_buf_puts(&b, ",");
            if (!rc && have_ceil && gbps > 0)
                rc = ev_buf_printf(&b, "%.17g", 100.0 * gbps / (ceil_bpus / 1e3));
            if (!rc)
                rc = ev_buf_puts(&b, replicated(&w->st) ? ",true\n" : ",false\n");
        }
    } else {
        ev_jb jb = {EV_OK};
        cJSON *root_o = cJSON_CreateObject();
        if (!root_o)
            jb.rc = EV_ENOMEM;
        ev_jb_str(&jb, root_o, "format", EV_RESULTS_FORMAT);
        ev_jb_i64(&jb, root_o, "run_id", rp_jint(run, "run_id", -1));
        ev_jb_str(&jb, root_o, "backend", ev_jr_str(run, "backend"));
        ev_jb_str(&jb, root_o, "protocol_id", ev_jr_str(run, "protocol_id"));
        ev_jb_str(&jb, root_o, "status", ev_jr_str(run, "status"));
        ev_jb_str(&jb, root_o, "root", have_root ? root : NULL);
        ev_jb_i64(&jb, root_o, "rounds", rp_rounds_of(&r));
        ev_jb_dbl(&jb, root_o, "ceiling_gb_per_s", have_ceil, ceil_bpus / 1e3, "no completed ceiling arm");
        cJSON *arr = ev_jb_arr(&jb, root_o, "rows");
        for (size_t i = 0; i < n_rows && !jb.rc; i++) {
            const rrow *w = &rows[i];
            cJSON *o = ev_jb_obj(&jb, arr, NULL);
            double gbps =
                w->st.has_est && w->has_bytes && w->st.est_us > 0 ? w->bytes / w->st.est_us / 1e3 : 0;
            ev_jb_i64(&jb, o, "case_index", rp_jint(w->c, "case_index", -1));
            ev_jb_str(&jb, o, "op", ev_jr_str(w->c, "op"));
            ev_jb_i64(&jb, o, "rows", rp_jint(w->c, "rows", -1));
            ev_jb_i64(&jb, o, "cols", rp_jint(w->c, "cols", -1));
            ev_jb_i64(&jb, o, "stride", rp_jint(w->c, "stride", -1));
            ev_jb_str(&jb, o, "dtype", ev_jr_str(w->c, "dtype"));
            ev_jb_i64(&jb, o, "default_rows", rp_jint(w->c, "default_rows", -1));
            ev_jb_str(&jb, o, "role", ev_jr_str(w->c, "role"));
            ev_jb_str(&jb, o, "arm", w->arm);
            ev_jb_str(&jb, o, "outcome", w->outcome);
            ev_jb_str(&jb, o, "reason", w->reason[0] ? w->reason : NULL);
            ev_jb_str(&jb, o, "basis", w->st.basis);
            ev_jb_i64(&jb, o, "n_rounds", w->st.n_rounds);
            ev_jb_i64(&jb, o, "n_usable", w->st.n_usable);
            ev_jb_dbl(&jb, o, "median_us", w->st.has_est, w->st.est_us, "no completed round");
            cJSON *ci = w->st.has_ci ? ev_jb_arr(&jb, o, "ci_us") : NULL;
            if (ci) {
                ev_jb_dbl(&jb, ci, NULL, 1, w->st.lo, NULL);
                ev_jb_dbl(&jb, ci, NULL, 1, w->st.hi, NULL);
            } else {
                ev_jb_dbl(&jb, o, "ci_us", 0, 0,
                          w->st.has_est ? "too few usable rounds or samples" : "no estimate");
            }
            ev_jb_dbl(&jb, o, "bytes_per_op", w->has_bytes, w->bytes, "no shape");
            ev_jb_dbl(&jb, o, "gb_per_s", gbps > 0, gbps, "no estimate");
            ev_jb_dbl(&jb, o, "ceiling_pct", have_ceil && gbps > 0, 100.0 * gbps / (ceil_bpus / 1e3),
                      have_ceil ? "no estimate" : "no completed ceiling arm");
            ev_jb_bool(&jb, o, "replicated", replicated(&w->st));
        }
        put_run_facts(&jb, root_o, &r, m, n);
        put_pairs(&jb, root_o, &r);
        rc = ev_jb_finish(&jb, root_o, &b);
    }
    if (rc) {
        ev_err_set(err, rc, "results: out of memory");
        goto out;
    }
    rc = ev_buf_append(out, b.data ? b.data : "", b.len);
    if (rc)
        ev_err_set(err, rc, "results: out of memory");
out:
    free(rows);
    ev_buf_free(&b);
    rp_rep_free(&r);
    return rc;
}
