/*
 * compare.c: `evident compare A B` (compare.h): per case and arm the ratio
 * B / A, its interval and significance, from each bundle's figures rebuilt
 * from its samples.csv, written as markdown or JSON with a summary.
 *
 * Cases are matched by identity (op, shape, stride, dtype, B: the case
 * label), not by index, so two protocols that share cases compare on those;
 * arms by name.  Each bundle is read as the report reads it (report.c's
 * lookups), with validation.json's "figures" replaced by the ones rebuilt
 * from the raw samples, so a derived member that was edited cannot move a
 * comparison.
 */
#include "evidence/compare.h"

#include "report_int.h"

#include "sha256.h"
#include "evidence/figures.h"
#include "evidence/figures_rebuild.h"
#include "jbuild.h"

/* One bundle as the comparison reads it. */
typedef struct side {
    rep r;
    int loaded;
    char root[EV_SHA256_HEX_LEN + 1]; /* "" when the members hold no receipts.json */
} side;

/* One compared case and arm. */
typedef struct crow {
    const cJSON *c; /* A's case */
    const char *arm;
    rp_arm_stat a, b;
    int has_ratio, has_ci, gated;
    double ratio, lo, hi;
    const char *verdict, *basis, *why; /* why: no ratio, or no interval */
    char whybuf[300];
} crow;

/* Loads members m[0..n) into s with the figures rebuilt from samples.csv
 * (printed and parsed back, so every number is a plain number node).
 * EV_EFORMAT / EV_ENOMEM with err set. */
static ev_status side_load(const ev_member *m, size_t n, side *s, ev_err *err)
{
    cJSON *fig = NULL, *plain = NULL;
    ev_buf t = EV_BUF_INIT;
    const ev_member *rc_m = ev_member_find(m, n, "receipts.json");
    ev_status rc = ev_figures_rebuild(m, n, &fig, err);
    if (!rc && (rc = ev_json_print(fig, 0, &t)))
        ev_err_set(err, rc, "out of memory");
    if (!rc)
        rc = ev_json_parse(t.data, t.len, 0, &plain, err);
    cJSON_Delete(fig);
    ev_buf_free(&t);
    if (rc)
        return rc;
    s->root[0] = '\0';
    if (rc_m && ev_sha256_hex(rc_m->data ? rc_m->data : "", rc_m->len, s->root))
        s->root[0] = '\0';
    rc = rp_rep_load_with(m, n, plain, &s->r, err);
    s->loaded = 1;
    return rc;
}

/* B's case with the same identity as A's case c, or NULL. */
static const cJSON *find_case(const rep *b, const cJSON *c)
{
    char want[160], have[160];
    const cJSON *x;
    rp_case_label(c, want, sizeof want);
    cJSON_ArrayForEach(x, b->cases) if (!strcmp(rp_case_label(x, have, sizeof have), want)) return x;
    return NULL;
}

/* 1 when b's arm columns hold arm. */
static int has_arm(const rep *b, const char *arm)
{
    for (size_t i = 0; i < b->n_arms; i++)
        if (!strcmp(b->arms[i], arm))
            return 1;
    return 0;
}

/* Fills row w of A's case ca / B's case cb and arm. */
static void compare_one(const side *A, const side *B, const cJSON *ca, const cJSON *cb, const char *arm,
                        const ev_compare_opts *o, crow *w)
{
    memset(w, 0, sizeof *w);
    w->c = ca;
    w->arm = arm;
    rp_arm_stat_get(&A->r, rp_jint(ca, "case_index", -1), arm, &w->a);
    rp_arm_stat_get(&B->r, rp_jint(cb, "case_index", -1), arm, &w->b);
    w->verdict = "no ratio";
    if (!w->a.has_est || !w->b.has_est || !(w->a.est_us > 0) || !(w->b.est_us > 0)) {
        const side *x = !w->a.has_est || !(w->a.est_us > 0) ? A : B;
        const cJSON *cx = x == A ? ca : cb;
        const char *oc = "?";
        char reason[250] = "";
        rp_arm_outcome(&x->r, rp_jint(cx, "case_index", -1), arm, &oc, reason, sizeof reason);
        snprintf(w->whybuf, sizeof w->whybuf, "%s: %s%s%s", x == A ? "A" : "B", oc, reason[0] ? ", " : "",
                 reason);
        w->why = w->whybuf;
        return;
    }
    w->has_ratio = 1;
    w->ratio = w->b.est_us / w->a.est_us;
    w->basis = w->a.basis && w->b.basis && !strcmp(w->a.basis, w->b.basis) ? w->a.basis : "mixed";
    w->verdict = "not significant";
    if (!w->a.has_ci || !w->b.has_ci) {
        w->why = "no interval (too few usable rounds or samples)";
        return;
    }
    double va = w->a.log_se * w->a.log_se, vb = w->b.log_se * w->b.log_se;
    double t = ev_welch_t975(va, w->a.dof, vb, w->b.dof), half = t * sqrt(va + vb);
    double d = w->b.log_mean - w->a.log_mean;
    w->lo = exp(d - half);
    w->hi = exp(d + half);
    w->has_ci = isfinite(w->lo) && isfinite(w->hi);
    if (w->has_ci && w->lo > 1.0)
        w->verdict = "slower";
    else if (w->has_ci && w->hi < 1.0)
        w->verdict = "faster";
    w->gated = o->gate && !strcmp(w->verdict, "slower") && w->ratio > 1.0 + o->fail_slower / 100.0;
}

/* The counts and geometric mean over rows v[0..n). */
typedef struct csum {
    size_t faster, slower, ns, none, gated, n_ratio;
    int has_geo;
    double geo;
} csum;

/* Sums v[0..n) into *s.  EV_ENOMEM. */
static ev_status summarise(const crow *v, size_t n, csum *s)
{
    double *r = malloc((n ? n : 1) * sizeof *r);
    memset(s, 0, sizeof *s);
    if (!r)
        return EV_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].has_ratio) {
            s->none++;
            continue;
        }
        r[s->n_ratio++] = v[i].ratio;
        s->faster += !strcmp(v[i].verdict, "faster");
        s->slower += !strcmp(v[i].verdict, "slower");
        s->ns += !strcmp(v[i].verdict, "not significant");
        s->gated += v[i].gated;
    }
    s->has_geo = s->n_ratio && !ev_geomean(r, s->n_ratio, &s->geo);
    free(r);
    return EV_OK;
}

/* The summary line (no newline). */
static ev_status put_summary(ev_buf *b, const csum *s, const ev_compare_opts *o)
{
    char t[48];
    ev_status rc = ev_buf_printf(
        b,
        "B / A over %zu case-arm pairs with a ratio: %zu faster, %zu slower, %zu not "
        "significant (95%% intervals); %zu without a ratio; geometric mean of B / A %s",
        s->n_ratio, s->faster, s->slower, s->ns, s->none, s->has_geo ? rp_fmt(t, s->geo, 4) : "-");
    if (!rc && o->gate)
        rc = ev_buf_printf(b, "; %zu significant slow-downs beyond %g%%", s->gated, o->fail_slower);
    return rc;
}

/* Markdown: the two runs, the table, the summary. */
static ev_status put_markdown(ev_buf *b, const side *A, const side *B, const crow *v, size_t n, const csum *s,
                              const ev_compare_opts *o)
{
    static const char *const who[2] = {"A", "B"};
    const side *sd[2] = {A, B};
    char t[48], u[48], w[48], lab[160];
    ev_status rc = ev_buf_puts(b, "# evident compare\n\n");
    for (int k = 0; k < 2 && !rc; k++) {
        const cJSON *run = cJSON_GetObjectItemCaseSensitive(sd[k]->r.val, "run");
        rc = ev_buf_printf(b, "- %s: run %" PRId64 ", backend ", who[k], rp_jint(run, "run_id", -1));
        if (!rc)
            rc = rp_put_md(b, ev_jr_str(run, "backend"));
        if (!rc)
            rc = ev_buf_puts(b, ", protocol ");
        if (!rc)
            rc = rp_put_md(b, ev_jr_str(run, "protocol_id"));
        if (!rc)
            rc = ev_buf_printf(b, ", %" PRId64 " round(s), root %s\n", rp_rounds_of(&sd[k]->r),
                               sd[k]->root[0] ? sd[k]->root : "-");
    }
    if (!rc)
        rc = ev_buf_puts(b,
                         "\nB / A of each estimate (us per op) from the bundles' raw samples; 95% interval: "
                         "Welch on the log scale over rounds, or from each job's bootstrap interval with "
                         "one round (within-process: it does not cover run-to-run variation); slower / "
                         "faster when the interval excludes 1.\n\n| case | arm | A us | B us | B / A | 95% "
                         "interval | basis | verdict |\n|---|---|---:|---:|---:|---:|---|---|\n");
    for (size_t i = 0; i < n && !rc; i++) {
        rc = ev_buf_puts(b, "| ");
        if (!rc)
            rc = rp_put_md(b, rp_case_label(v[i].c, lab, sizeof lab));
        if (!rc)
            rc = ev_buf_puts(b, " | ");
        if (!rc)
            rc = rp_put_md(b, v[i].arm);
        if (!rc)
            rc = ev_buf_printf(b, " | %s | %s | ", v[i].a.has_est ? rp_fmt(t, v[i].a.est_us, 4) : "-",
                               v[i].b.has_est ? rp_fmt(u, v[i].b.est_us, 4) : "-");
        if (!rc && v[i].has_ratio)
            rc = ev_buf_printf(b, "%s", rp_fmt(t, v[i].ratio, 4));
        else if (!rc)
            rc = ev_buf_puts(b, "-");
        if (!rc && v[i].has_ci)
            rc = ev_buf_printf(b, " | [%s, %s] | ", rp_fmt(u, v[i].lo, 4), rp_fmt(w, v[i].hi, 4));
        else if (!rc)
            rc = ev_buf_puts(b, " | - | ");
        if (!rc)
            rc = rp_put_md(b, v[i].basis);
        if (!rc)
            rc = ev_buf_printf(b, " | %s%s%s%s |\n", v[i].verdict, v[i].gated ? " (beyond the gate)" : "",
                               v[i].why ? ": " : "", v[i].why ? v[i].why : "");
    }
    if (!rc)
        rc = ev_buf_puts(b, "\n");
    if (!rc)
        rc = put_summary(b, s, o);
    if (!rc)
        rc = ev_buf_puts(b, ".\n");
    return rc;
}

/* JSON: the two runs, the method, the rows, the summary. */
static ev_status put_json(ev_buf *b, const side *A, const side *B, const crow *v, size_t n, const csum *s,
                          const ev_compare_opts *o)
{
    ev_jb jb = {EV_OK};
    ev_buf line = EV_BUF_INIT;
    cJSON *root = cJSON_CreateObject();
    const side *sd[2] = {A, B};
    static const char *const who[2] = {"a", "b"};
    if (!root)
        jb.rc = EV_ENOMEM;
    ev_jb_str(&jb, root, "format", EV_COMPARE_FORMAT);
    for (int k = 0; k < 2; k++) {
        const cJSON *run = cJSON_GetObjectItemCaseSensitive(sd[k]->r.val, "run");
        cJSON *x = ev_jb_obj(&jb, root, who[k]);
        ev_jb_i64(&jb, x, "run_id", rp_jint(run, "run_id", -1));
        ev_jb_str(&jb, x, "backend", ev_jr_str(run, "backend"));
        ev_jb_str(&jb, x, "protocol_id", ev_jr_str(run, "protocol_id"));
        ev_jb_i64(&jb, x, "rounds", rp_rounds_of(&sd[k]->r));
        ev_jb_str(&jb, x, "root", sd[k]->root[0] ? sd[k]->root : NULL);
    }
    ev_jb_str(&jb, root, "method",
              "B / A of the estimates from raw samples; 95% interval exp(d -+ t se), d the difference of the "
              "log estimates, se^2 the sum of their squared standard errors, t from Welch-Satterthwaite's "
              "degrees of freedom (normal for a within-process side)");
    ev_jb_dbl(&jb, root, "fail_slower_pct", o->gate, o->fail_slower, "not given");
    cJSON *arr = ev_jb_arr(&jb, root, "rows");
    for (size_t i = 0; i < n && !jb.rc; i++) {
        char lab[160];
        cJSON *x = ev_jb_obj(&jb, arr, NULL);
        ev_jb_str(&jb, x, "case", rp_case_label(v[i].c, lab, sizeof lab));
        ev_jb_i64(&jb, x, "case_index", rp_jint(v[i].c, "case_index", -1));
        ev_jb_str(&jb, x, "arm", v[i].arm);
        ev_jb_dbl(&jb, x, "a_us", v[i].a.has_est, v[i].a.est_us, "no estimate");
        ev_jb_dbl(&jb, x, "b_us", v[i].b.has_est, v[i].b.est_us, "no estimate");
        ev_jb_dbl(&jb, x, "ratio", v[i].has_ratio, v[i].ratio, v[i].why);
        if (v[i].has_ci) {
            cJSON *ci = ev_jb_arr(&jb, x, "interval");
            ev_jb_dbl(&jb, ci, NULL, 1, v[i].lo, NULL);
            ev_jb_dbl(&jb, ci, NULL, 1, v[i].hi, NULL);
        } else {
            ev_jb_dbl(&jb, x, "interval", 0, 0, v[i].why ? v[i].why : "no interval");
        }
        ev_jb_str(&jb, x, "basis", v[i].basis);
        ev_jb_str(&jb, x, "verdict", v[i].verdict);
        ev_jb_bool(&jb, x, "beyond_gate", v[i].gated);
    }
    cJSON *su = ev_jb_obj(&jb, root, "summary");
    ev_jb_i64(&jb, su, "pairs", (int64_t)s->n_ratio);
    ev_jb_i64(&jb, su, "faster", (int64_t)s->faster);
    ev_jb_i64(&jb, su, "slower", (int64_t)s->slower);
    ev_jb_i64(&jb, su, "not_significant", (int64_t)s->ns);
    ev_jb_i64(&jb, su, "without_ratio", (int64_t)s->none);
    ev_jb_dbl(&jb, su, "geomean_ratio", s->has_geo, s->geo, "no ratio");
    ev_jb_i64(&jb, su, "beyond_gate", (int64_t)s->gated);
    if (!jb.rc && (jb.rc = put_summary(&line, s, o)) == EV_OK && (jb.rc = ev_buf_puts(&line, "")) == EV_OK)
        ev_jb_str(&jb, su, "line", line.data);
    ev_buf_free(&line);
    return ev_jb_finish(&jb, root, b);
}

/* See compare.h. */
ev_status ev_compare_write(const ev_member *a, size_t na, const ev_member *b, size_t nb,
                           const ev_compare_opts *opts, ev_buf *out, size_t *n_gated, ev_err *err)
{
    side A, B;
    crow *rows = NULL;
    size_t n = 0, cap;
    csum s;
    ev_buf t = EV_BUF_INIT;
    ev_status rc;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    if ((rc = side_load(a, na, &A, err))) {
        ev_err_prefix(err, "A");
        goto out;
    }
    if ((rc = side_load(b, nb, &B, err))) {
        ev_err_prefix(err, "B");
        goto out;
    }
    cap = (size_t)cJSON_GetArraySize(A.r.cases) * (A.r.n_arms ? A.r.n_arms : 1) + 1;
    if (!(rows = calloc(cap, sizeof *rows))) {
        rc = ev_err_set(err, EV_ENOMEM, "compare: out of memory");
        goto out;
    }
    const cJSON *ca;
    cJSON_ArrayForEach(ca, A.r.cases)
    {
        const cJSON *cb = find_case(&B.r, ca);
        int64_t ia = rp_jint(ca, "case_index", -1), ib = cb ? rp_jint(cb, "case_index", -1) : -1;
        for (size_t i = 0; cb && i < A.r.n_arms && n < cap; i++) {
            const char *oc;
            char reason[8];
            /* only the arms both runs planned for this case */
            if (has_arm(&B.r, A.r.arms[i]) &&
                rp_arm_outcome(&A.r, ia, A.r.arms[i], &oc, reason, sizeof reason) &&
                rp_arm_outcome(&B.r, ib, A.r.arms[i], &oc, reason, sizeof reason))
                compare_one(&A, &B, ca, cb, A.r.arms[i], opts, &rows[n++]);
        }
    }
    if ((rc = summarise(rows, n, &s)) ||
        (rc = opts->json ? put_json(&t, &A, &B, rows, n, &s, opts)
                         : put_markdown(&t, &A, &B, rows, n, &s, opts)) ||
        (rc = ev_buf_append(out, t.data ? t.data : "", t.len))) {
        ev_err_set(err, rc, "compare: out of memory");
        goto out;
    }
    *n_gated = s.gated;
out:
    free(rows);
    ev_buf_free(&t);
    if (A.loaded)
        rp_rep_free(&A.r);
    if (B.loaded)
        rp_rep_free(&B.r);
    return rc;
}
