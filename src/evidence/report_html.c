/*
 * report_html.c: report.html from the parsed members: the sections in
 * order (the run, failures, cases, the model, the figures' tables, jobs,
 * residuals, drift), plain HTML with fixed printf conversions; the top
 * of the page is report_head.c's, the charts report_svg.c's (report_int.h).
 */
#include "report_int.h"

#include "member.h"
#include "runner/protocol.h"
#include "plants.h" /* ev_plant_sites_at */
#include "runner/validate.h"

/* ---- writing helpers ------------------------------------------------------- */

/* Appends "<td>escaped s</td>" (class cls when non-NULL). */
static ev_status td(ev_buf *b, const char *cls, const char *s)
{
    ev_status rc = cls ? ev_buf_printf(b, "<td class=\"%s\">", cls) : ev_buf_puts(b, "<td>");
    if (!rc)
        rc = rp_put_esc(b, s);
    if (!rc)
        rc = ev_buf_puts(b, "</td>");
    return rc;
}

/* ---- html sections ------------------------------------------------------- */

static const char style[] = "body{font-family:sans-serif;margin:2em;color:#111}"
                            "table{border-collapse:collapse;margin:0.5em 0 1.5em 0}"
                            "th,td{border:1px solid #999;padding:0.2em 0.5em;text-align:left}"
                            "td.n{text-align:right;font-family:monospace}"
                            "td.bad{background:#fdd}td.ok{background:#dfd}"
                            "code{font-family:monospace}"
                            "div.alarm{background:#b00;color:#fff;padding:0.6em 1em;margin:0 0 1em 0;"
                            "font-size:1.1em}"
                            "table.head th{background:#f4f4f4;white-space:nowrap}"
                            "small{color:#444;white-space:nowrap}";

/* The run and provenance table. */
static ev_status sec_run(const rep *r, ev_buf *b)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r->val, "run");
    const char *st = ev_jr_str(run, "status"), *rs = ev_jr_str(run, "rescue_status");
    char t[64];
    ev_status rc = ev_buf_puts(b, "<h2>Run</h2>\n<table>\n");
    snprintf(t, sizeof t, "%" PRId64, rp_jint(run, "run_id", -1));
    if (!rc)
        rc = ev_buf_puts(b, "<tr><th>run</th>");
    if (!rc)
        rc = td(b, NULL, t);
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n<tr><th>backend</th>");
    if (!rc)
        rc = td(b, NULL, ev_jr_str(run, "backend"));
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n<tr><th>status</th>");
    if (!rc)
        rc = td(b, st && !strcmp(st, "completed") ? "ok" : "bad", st ? st : ev_jr_str(run, "status_reason"));
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n<tr><th>rescue status</th>");
    if (!rc)
        rc = td(b, rs ? (!strcmp(rs, "completed-after-rescue") ? "ok" : "bad") : NULL, rs ? rs : "none");
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n<tr><th>protocol id</th>");
    if (!rc)
        rc = td(b, NULL, ev_jr_str(run, "protocol_id"));
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n<tr><th>protocol path</th>");
    if (!rc)
        rc = td(b, NULL, ev_jr_str(run, "protocol_path"));
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n");
    if (r->prov && !rc) {
        static const char *const keys[] = {"git_commit", "source_tree_hash", "profile_id", "exporter"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0] && !rc; i++) {
            rc = ev_buf_printf(b, "<tr><th>%s</th>", keys[i]);
            if (!rc)
                rc = td(b, NULL, ev_jr_str(r->prov, keys[i]));
            if (!rc)
                rc = ev_buf_puts(b, "</tr>\n");
        }
        if (!rc)
            rc = ev_buf_puts(b, "<tr><th>git_dirty</th>");
        if (!rc)
            rc = td(b, NULL, rp_jtrue(r->prov, "git_dirty") ? "yes" : "no");
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    return rc;
}

/* Outcome counts, then every job that did not complete, with its reason. */
static ev_status sec_failures(const rep *r, ev_buf *b)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(r->val, "summary");
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(sum, "jobs_by_outcome"), *x;
    ev_status rc =
        ev_buf_puts(b, "<h2>Failures and skips</h2>\n<table>\n<tr><th>outcome</th><th>jobs</th></tr>\n");
    cJSON_ArrayForEach(x, by)
    {
        char t[32];
        snprintf(t, sizeof t, "%" PRId64, cJSON_IsNumber(x) ? (int64_t)x->valuedouble : 0);
        if (!rc)
            rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, x->string);
        if (!rc)
            rc = td(b, "n", t);
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    size_t n_bad = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, r->jobs)
    {
        const char *o = ev_jr_str(j, "outcome");
        if (!o || !strcmp(o, "completed") || rc)
            continue;
        if (n_bad++ == 0)
            rc = ev_buf_puts(b, "<table>\n<tr><th>job</th><th>outcome</th><th>attempts</th><th>reason</th>"
                                "<th>retry</th></tr>\n");
        char reason[600], att[32], retry[96];
        const cJSON *rj = rp_find_retry(r, ev_jr_str(j, "job_key"));
        snprintf(att, sizeof att, "%d", cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "attempts")));
        snprintf(retry, sizeof retry, "%s",
                 rj ? (ev_jr_str(rj, "outcome") ? ev_jr_str(rj, "outcome") : "?") : "-");
        if (!rc)
            rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, ev_jr_str(j, "job_key"));
        if (!rc)
            rc = td(b, "bad", o);
        if (!rc)
            rc = td(b, "n", att);
        if (!rc)
            rc = td(b, NULL, rp_failure_reason(r, j, reason, sizeof reason));
        if (!rc)
            rc = td(b, NULL, retry);
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, n_bad ? "</table>\n" : "<p>Every job completed.</p>\n");
    return rc;
}

/* Per case: every arm's hot median, the recheck, and the model's choice. */
static ev_status sec_cases(const rep *r, ev_buf *b)
{
    ev_status rc =
        ev_buf_puts(b, "<h2>Hot medians per case (microseconds per op)</h2>\n"
                       "<p>Median of the hot samples of the job's last attempt; with several "
                       "rounds the estimate over them (the geometric mean of the completed rounds' "
                       "medians) and how many rounds it stands on; only completed "
                       "jobs claim a median, others show their outcome.</p>\n"
                       "<table>\n<tr><th>#</th><th>case</th><th>role</th>");
    if (!rc)
        rc = rp_put_arm_headers(r, b);
    if (!rc)
        rc = ev_buf_puts(b, "<th>recheck</th><th>selected (full)</th><th>selected (LOGO)</th></tr>\n");
    const cJSON *c;
    cJSON_ArrayForEach(c, r->cases)
    {
        if (rc)
            break;
        int64_t idx = rp_jint(c, "case_index", -1);
        char t[200], lab[160];
        snprintf(t, sizeof t, "%" PRId64, idx);
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, "n", t);
        if (!rc)
            rc = td(b, NULL, rp_case_label(c, lab, sizeof lab));
        if (!rc)
            rc = td(b, NULL, ev_jr_str(c, "role"));
        for (size_t i = 0; i < r->n_arms && !rc; i++) {
            const cJSON *j = rp_find_job(r, idx, r->arms[i], rp_arm_phase(r->arms[i]));
            double v;
            rc = td(b, j && !rp_jnum(j, "median_us", &v) ? "bad" : "n",
                    rp_arm_cell(r, idx, r->arms[i], rp_arm_phase(r->arms[i]), t, sizeof t));
        }
        if (!rc)
            rc = td(b, "n",
                    rp_job_cell(
                        r,
                        rp_find_job(r, idx, ev_sched_name(EV_SCHED_DEFAULT), ev_phase_name(EV_PHASE_RECHECK)),
                        t, sizeof t));
        const cJSON *d = rp_find_decision(r, c);
        if (!rc)
            rc = td(b, NULL, d ? ev_jr_str(d, "selected") : NULL);
        if (!rc)
            rc = td(b, NULL, d ? ev_jr_str(d, "logo_selected") : NULL);
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");

    /* Reference arms: jobs without a case. */
    size_t n_ref = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, r->jobs)
    {
        if (rc || cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "case_index")))
            continue;
        char t[200];
        if (n_ref++ == 0)
            rc = ev_buf_puts(b, "<h3>Reference arms</h3>\n<table>\n<tr><th>arm</th><th>phase</th>"
                                "<th>hot median (us per op)</th></tr>\n");
        if (!rc)
            rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, ev_jr_str(j, "arm"));
        if (!rc)
            rc = td(b, NULL, ev_jr_str(j, "phase"));
        if (!rc)
            rc = td(b, "n", rp_job_cell(r, j, t, sizeof t));
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc && n_ref)
        rc = ev_buf_puts(b, "</table>\n");
    return rc;
}

/*
 * What the planted checks catch of each case (store schema 5;
 * runner/validate.h, ev_case_detection): the rows planted per op, the
 * fewest omitted elements per row a hot sample catches with a chance of
 * at least 0.999 (the detection resolution), and the chance bound for an
 * output that omits 1/16 of each row, from protocol.json.  Nothing for an
 * older bundle (its report keeps its bytes) or one whose protocol does
 * not parse (check 3 says why).
 */
static ev_status sec_detection(const rep *r, const ev_member *m, size_t n, ev_buf *b)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r->val, "run");
    const ev_member *pm = ev_member_find(m, n, EV_MEMBER_PROTOCOL);
    ev_protocol p;
    ev_err err = {""};
    ev_status rc = EV_OK;
    if (rp_jint(run, "store_schema", 0) < 5 || !pm ||
        ev_protocol_parse((const char *)pm->data, pm->len, &p, &err) != EV_OK)
        return EV_OK;
    p.plan_schema = rp_jint(run, "store_schema", 0); /* its plants' bounds (kernels/plants.h) */
    rc =
        ev_buf_printf(b,
                      "<h2>Detection resolution per case</h2>\n<p>Every op of every replay is checked on "
                      "input it cannot predict (%s, each moving its row past twice its bound). An output "
                      "that leaves out n of a row's N elements, at places fixed before the input is seen, "
                      "passes one op's check "
                      "with a chance of at most (1 - c n/N)^m (c = 1/2 for reduce_sum, 1 for reduce_max), "
                      "and a hot sample of %" PRId64 " ops that to the power %" PRId64
                      "; for a small reduce_sum case the case's own input refines the bound (docs/runner.md, "
                      "&ldquo;Checkable cases&rdquo;).</p>\n<table>\n<tr><th>#</th><th>case</th><th>rows "
                      "planted per op</th><th>resolution (omitted elements caught at 0.999)</th><th>1/16 "
                      "omitted: a hot sample passes with a chance of at most</th></tr>\n",
                      ev_plant_sites_at(p.plan_schema) > 1
                          ? "a secret plant in each of m strata of rows of its input, of a secret count of "
                            "elements in secret rows of the stratum"
                          : "secret plants in m rows of its input, one per stratum of rows",
                      p.ops_per_graph, p.ops_per_graph);
    for (size_t ci = 0; ci < p.n_cases && !rc; ci++) {
        const ev_proto_case *c = &p.cases[ci];
        ev_detection d;
        char t[160];
        if (c->rows < 1 || ev_case_detection(&p, ci, &d, &err) != EV_OK)
            continue;
        rc = ev_buf_printf(b, "<tr><td class=\"n\">%zu</td><td>%s %" PRId64 "x%" PRId64 " %s</td>", ci, c->op,
                           c->rows, c->cols, c->dtype);
        if (!rc)
            rc = ev_buf_printf(b, "<td class=\"n\">%" PRId64 "</td>", d.rows_planted);
        if (d.omit <= c->cols)
            snprintf(t, sizeof t, "%.3g%% (%" PRId64 " of %" PRId64 "%s)", 100.0 * d.resolution, d.omit,
                     c->cols, d.data ? ", its own input" : "");
        else
            snprintf(t, sizeof t, "none");
        if (!rc)
            rc = td(b, "n", t);
        snprintf(t, sizeof t, "%.3g", d.miss_hot);
        if (!rc)
            rc = td(b, "n", t);
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    ev_protocol_free(&p);
    return rc;
}

/* The model: coefficients, decisions, policy score and held-out regret. */
static ev_status sec_model(const rep *r, ev_buf *b)
{
    char t[48];
    double v;
    ev_status rc = ev_buf_puts(b, "<h2>Cost model</h2>\n");
    if (!r->model)
        return rc ? rc : ev_buf_puts(b, "<p>No model.json.</p>\n");
    if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r->model, "fit"))) {
        if (!rc)
            rc = ev_buf_puts(b, "<p>The fit failed: ");
        if (!rc)
            rc = rp_put_esc(b, ev_jr_str(r->model, "fit_reason"));
        if (!rc)
            rc = ev_buf_puts(b, "</p>\n");
        return rc;
    }
    if (!rc)
        rc = ev_buf_puts(b, "<p><code>");
    if (!rc)
        rc = rp_put_esc(b, ev_jr_str(r->model, "model"));
    if (!rc)
        rc = ev_buf_printf(b, "</code>, S = %" PRId64 ", threshold %s</p>\n", rp_jint(r->model, "sms", 0),
                           rp_jnum(r->model, "threshold", &v) ? rp_fmt(t, v, 4) : "-");
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(r->model, "coefficients");
    if (!rc)
        rc = ev_buf_puts(b, "<table>\n<tr><th>a0</th><th>aP</th><th>aD</th></tr>\n<tr>");
    static const char *const names[3] = {"a0", "aP", "aD"};
    for (int k = 0; k < 3 && !rc; k++) {
        char e[48];
        if (rp_jnum(co, names[k], &v))
            snprintf(e, sizeof e, "%.6g", v);
        else
            snprintf(e, sizeof e, "-");
        rc = td(b, "n", e);
    }
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n</table>\n");
    if (!rc)
        rc = ev_buf_printf(
            b,
            "<p>Policy score (geometry-weighted geometric mean of observed selected / default): "
            "full fit %s, LOGO ",
            rp_jnum(r->model, "policy_geomean", &v) ? rp_fmt(t, v, 5) : "-");
    if (!rc)
        rc = ev_buf_printf(b, "%s.</p>\n",
                           rp_jnum(r->model, "policy_geomean_logo", &v) ? rp_fmt(t, v, 5) : "-");

    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(r->model, "excluded"), *x;
    if (!rc && cJSON_GetArraySize(ex) > 0) {
        rc = ev_buf_puts(
            b, "<h3>Cases left out of the fit</h3>\n<table>\n<tr><th>case</th><th>reason</th></tr>\n");
        cJSON_ArrayForEach(x, ex)
        {
            char lab[160];
            if (rc)
                break;
            rc = ev_buf_puts(b, "<tr>");
            if (!rc)
                rc = td(b, NULL, rp_case_label(x, lab, sizeof lab));
            if (!rc)
                rc = td(b, NULL, ev_jr_str(x, "reason"));
            if (!rc)
                rc = ev_buf_puts(b, "</tr>\n");
        }
        if (!rc)
            rc = ev_buf_puts(b, "</table>\n");
    }

    /* decisions against what was measured */
    const cJSON *decs = cJSON_GetObjectItemCaseSensitive(r->model, "decisions");
    if (!rc && cJSON_GetArraySize(decs) > 0) {
        rc = ev_buf_puts(b, "<h3>Decisions against measurements</h3>\n<table>\n<tr><th>case</th><th>role</th>"
                            "<th>selected</th><th>LOGO</th><th>predicted selected / default</th>"
                            "<th>observed selected / default</th><th>fastest observed</th></tr>\n");
        cJSON_ArrayForEach(x, decs)
        {
            /* the seed's three (a protocol's default model_schedules) */
            static const ev_sched sc[3] = {EV_SCHED_DEFAULT, EV_SCHED_ROWS1, EV_SCHED_ROWS2};
            const cJSON *pr = cJSON_GetObjectItemCaseSensitive(x, "predicted");
            const cJSON *ob = cJSON_GetObjectItemCaseSensitive(x, "observed");
            const char *sel = ev_jr_str(x, "selected");
            double ps = 0, pd = 0, os = 0, od = 0, best = 0;
            const char *fastest = NULL;
            char lab[160], u[48];
            for (int k = 0; k < 3; k++) {
                double v2;
                if (rp_jnum(ob, ev_sched_name(sc[k]), &v2) && (!fastest || v2 < best)) {
                    fastest = ev_sched_name(sc[k]);
                    best = v2;
                }
            }
            if (rc)
                break;
            rc = ev_buf_puts(b, "<tr>");
            if (!rc)
                rc = td(b, NULL, rp_case_label(x, lab, sizeof lab));
            if (!rc)
                rc = td(b, NULL, ev_jr_str(x, "role"));
            if (!rc)
                rc = td(b, NULL, sel);
            if (!rc)
                rc = td(b, NULL, ev_jr_str(x, "logo_selected"));
            if (!rc)
                rc = td(b, "n",
                        sel && rp_jnum(pr, sel, &ps) && rp_jnum(pr, ev_sched_name(EV_SCHED_DEFAULT), &pd)
                            ? rp_fmt(u, ps / pd, 4)
                            : "-");
            if (!rc) {
                int have = sel && rp_jnum(ob, sel, &os) && rp_jnum(ob, ev_sched_name(EV_SCHED_DEFAULT), &od);
                rc = td(b, have && os / od > 1.0 ? "n bad" : "n", have ? rp_fmt(u, os / od, 4) : "-");
            }
            if (!rc)
                rc = td(b, NULL, fastest);
            if (!rc)
                rc = ev_buf_puts(b, "</tr>\n");
        }
        if (!rc)
            rc = ev_buf_puts(b, "</table>\n");
    }

    const cJSON *hr = cJSON_GetObjectItemCaseSensitive(r->model, "holdout_regret");
    if (!rc)
        rc = ev_buf_puts(b, "<h3>Held-out regret</h3>\n");
    if (!rc && rp_jint(hr, "n", 0) == 0)
        rc = ev_buf_puts(b, "<p>No holdout cases.</p>\n");
    else if (!rc) {
        rc = ev_buf_puts(b, "<table>\n<tr><th>case</th><th>selected</th><th>regret</th></tr>\n");
        cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(hr, "cases"))
        {
            char lab[160];
            if (rc)
                break;
            rc = ev_buf_puts(b, "<tr>");
            if (!rc)
                rc = td(b, NULL, rp_case_label(x, lab, sizeof lab));
            if (!rc)
                rc = td(b, NULL, ev_jr_str(x, "selected"));
            if (!rc)
                rc = td(b, "n", rp_jnum(x, "regret", &v) ? rp_fmt(t, v, 5) : "-");
            if (!rc)
                rc = ev_buf_puts(b, "</tr>\n");
        }
        if (!rc)
            rc = ev_buf_printf(b, "</table>\n<p>Geometric mean %s, ",
                               rp_jnum(hr, "geomean", &v) ? rp_fmt(t, v, 5) : "-");
        if (!rc)
            rc = ev_buf_printf(b, "maximum %s.</p>\n", rp_jnum(hr, "max", &v) ? rp_fmt(t, v, 5) : "-");
    }
    return rc;
}

/* The pair auto / best peer of case idx (figures), or NULL. */
static const cJSON *auto_pair(const rep *r, int64_t idx)
{
    const char *peer;
    double v;
    return rp_md_best_peer(r, idx, &peer, &v) ? rp_fig_pair(r, idx, ev_arm_kind_name(EV_ARM_AUTO), peer)
                                              : NULL;
}

/* Reads a pair's interval [lo, hi].  Returns 1 when both are numbers. */
static int pair_interval(const cJSON *p, double *lo, double *hi)
{
    const cJSON *iv = p ? cJSON_GetObjectItemCaseSensitive(p, "interval") : NULL;
    return rp_numv(cJSON_GetArrayItem(iv, 0), lo) && rp_numv(cJSON_GetArrayItem(iv, 1), hi);
}

/* auto / best peer per case (log scale, the 1.0 line drawn). */
static ev_status sec_auto_vs_peer(const rep *r, ev_buf *b)
{
    const int W = 640, L = 170, R = 600, H = 18;
    double lo_all = 0.5, hi_all = 2.0;
    size_t rows = 0;
    const cJSON *c;
    ev_status rc =
        ev_buf_puts(b, "<h2>auto / best peer per case</h2>\n<p>Ratio of auto to the fastest completed "
                       "peer of the case, with its 95% interval (over rounds; with one round within the two "
                       "processes only), and its call (the headline's rounds and basis say how): green a "
                       "win, red a loss, grey anything else (n.s., inconclusive, not replicated).  Log "
                       "scale.</p>\n");
    /* first pass: the range */
    cJSON_ArrayForEach(c, r->cases)
    {
        const cJSON *p = auto_pair(r, rp_jint(c, "case_index", -1));
        double lo, hi;
        if (pair_interval(p, &lo, &hi) && lo > 0) {
            rows++;
            lo_all = lo < lo_all ? lo : lo_all;
            hi_all = hi > hi_all ? hi : hi_all;
        }
    }
    if (rc || !rows)
        return rc ? rc : ev_buf_puts(b, "<p>No case has both auto and a peer completed on this host.</p>\n");
    double l0 = log(lo_all / 1.1), l1 = log(hi_all * 1.1);
    rc = ev_buf_printf(b,
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\">\n",
                       W, (int)rows * H + 30);
    size_t row = 0;
    cJSON_ArrayForEach(c, r->cases)
    {
        int64_t idx = rp_jint(c, "case_index", -1);
        double lo, hi, m;
        const cJSON *p = auto_pair(r, idx);
        if (rc || !pair_interval(p, &lo, &hi) || !rp_jnum(p, "ratio", &m) || !(lo > 0))
            continue;
        char lab[200], cl[160];
        rp_call call = rp_pair_call(r, p);
        snprintf(lab, sizeof lab, "%s vs %s (%s)", rp_case_label(c, cl, sizeof cl), ev_jr_str(p, "against"),
                 rp_call_word(call, 0));
        double y = 10.0 + (double)row * H + H / 2.0;
        double x0 = L + (R - L) * (log(lo) - l0) / (l1 - l0), x1 = L + (R - L) * (log(hi) - l0) / (l1 - l0),
               xm = L + (R - L) * (log(m) - l0) / (l1 - l0);
        rc = ev_buf_printf(b, "<text x=\"4\" y=\"%.2f\" font-size=\"10\">", y + 4);
        if (!rc)
            rc = rp_put_esc(b, lab);
        if (!rc)
            rc = ev_buf_printf(b,
                               "</text><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\" "
                               "stroke-width=\"2\"/><circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\"/>\n",
                               x0, y, x1, y, xm, y,
                               call == RP_CALL_BELOW   ? "#2ca02c"
                               : call == RP_CALL_ABOVE ? "#d62728"
                                                       : "#888888");
        row++;
    }
    double x1 = L + (R - L) * (0.0 - l0) / (l1 - l0), axis = 10.0 + (double)rows * H;
    if (!rc)
        rc = ev_buf_printf(
            b,
            "<line x1=\"%.2f\" y1=\"4\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#999\" "
            "stroke-dasharray=\"4 3\"/><text x=\"%.2f\" y=\"%.2f\" font-size=\"10\">1.0</text>\n"
            "</svg>\n",
            x1, x1, axis, x1 - 8, axis + 12);
    return rc;
}

/* Pair tables: per case, then across cases, then tail disclosures. */
static ev_status sec_pairs(const rep *r, ev_buf *b)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(r->val, "figures"), *p;
    char t[48], u[48], w[48];
    double v, lo, hi;
    ev_status rc =
        ev_buf_puts(b, "<h2>Arm comparisons</h2>\n<p>Ratio (arm / against) with its 95% interval and "
                       "call: over rounds (paired by round, a t interval on the mean log ratio) when the "
                       "run has several, else the ratio of hot medians with its percentile bootstrap "
                       "interval within the two processes only.  The call follows the headline's rounds and "
                       "basis: a win or a loss, n.s. (no difference beyond the noise floor), inconclusive "
                       "(too few or too noisy rounds) or not replicated (one round, within the noise "
                       "floor).  Beside it, within the first paired "
                       "round: the bootstrap interval, the exact two-sided Mann-Whitney p (7 against 7 "
                       "samples cannot go below 2/3432) and the ratio of empirical P95s (descriptive "
                       "only).</p>\n<table>\n<tr><th>case</th><th>arm</th><th>against</th><th>rounds</th>"
                       "<th>ratio</th><th>interval</th><th>call</th><th>within-process interval</th>"
                       "<th>p</th><th>P95 ratio</th></tr>\n");
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(f, "pairs"))
    {
        if (rc)
            break;
        char cn[200];
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, rp_case_name(r, rp_jint(p, "case_index", -1), cn, sizeof cn));
        if (!rc)
            rc = td(b, NULL, ev_jr_str(p, "arm"));
        if (!rc)
            rc = td(b, NULL, ev_jr_str(p, "against"));
        snprintf(t, sizeof t, "%" PRId64, rp_jint(p, "n_rounds", 0));
        if (!rc)
            rc = td(b, "n", t);
        if (!rp_jnum(p, "ratio", &v)) {
            if (!rc)
                rc = ev_buf_puts(b, "<td colspan=\"6\">");
            if (!rc)
                rc = rp_put_esc(b, ev_jr_str(p, "ratio_reason"));
            if (!rc)
                rc = ev_buf_puts(b, "</td></tr>\n");
            continue;
        }
        rp_call call = rp_pair_call(r, p);
        const char *vd = rp_call_word(call, 0);
        const char *cls = call == RP_CALL_BELOW ? "n ok" : call == RP_CALL_ABOVE ? "n bad" : "n";
        const cJSON *wi = cJSON_GetObjectItemCaseSensitive(p, "within");
        if (!rc)
            rc = td(b, cls, rp_fmt(t, v, 4));
        if (!rc && pair_interval(p, &lo, &hi)) {
            char iv[100];
            snprintf(iv, sizeof iv, "[%s, %s]", rp_fmt(u, lo, 4), rp_fmt(w, hi, 4));
            rc = td(b, "n", iv);
        } else if (!rc) {
            rc = td(b, "n", "-");
        }
        if (!rc)
            rc = td(b, cls, vd);
        if (!rc && rp_jnum(wi, "ci_low", &lo) && rp_jnum(wi, "ci_high", &hi)) {
            char iv[100];
            snprintf(iv, sizeof iv, "[%s, %s]", rp_fmt(u, lo, 4), rp_fmt(w, hi, 4));
            rc = td(b, "n", iv);
        } else if (!rc) {
            rc = td(b, "n", "-");
        }
        if (!rc) {
            if (rp_jnum(wi, "mwu_p", &v))
                snprintf(t, sizeof t, "%.4g", v);
            else
                snprintf(t, sizeof t, "-");
            rc = td(b, "n", t);
        }
        if (!rc)
            rc = td(b, rp_jtrue(p, "tail_disclosure") ? "n bad" : "n",
                    rp_jnum(wi, "p95_ratio", &v) ? rp_fmt(t, v, 4) : "-");
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n<h3>Across cases</h3>\n<table>\n<tr><th>arm</th><th>against</th>"
                            "<th>cases</th><th>ratio of sums</th><th>interval</th><th>geomean ratio</th>"
                            "<th>interval</th><th>calls of its cases</th></tr>\n");
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(f, "across"))
    {
        if (rc)
            break;
        snprintf(t, sizeof t, "%" PRId64, rp_jint(p, "n_cases", 0));
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, ev_jr_str(p, "arm"));
        if (!rc)
            rc = td(b, NULL, ev_jr_str(p, "against"));
        if (!rc)
            rc = td(b, "n", t);
        static const char *const keys[2][2] = {{"ratio_of_sums", "ratio_of_sums_ci"},
                                               {"geomean_ratio", "geomean_ratio_ci"}};
        for (int k = 0; k < 2 && !rc; k++) {
            const cJSON *ci = cJSON_GetObjectItemCaseSensitive(p, keys[k][1]);
            rc = td(b, "n", rp_jnum(p, keys[k][0], &v) ? rp_fmt(t, v, 4) : "-");
            if (!rc && rp_numv(cJSON_GetArrayItem(ci, 0), &lo) && rp_numv(cJSON_GetArrayItem(ci, 1), &hi)) {
                char iv[100];
                snprintf(iv, sizeof iv, "[%s, %s]", rp_fmt(u, lo, 4), rp_fmt(w, hi, 4));
                rc = td(b, "n", iv);
            } else if (!rc) {
                rc = td(b, "n", "-");
            }
        }
        rp_counts k;
        char calls[200];
        rp_count_calls(r, ev_jr_str(p, "arm") ? ev_jr_str(p, "arm") : "",
                       ev_jr_str(p, "against") ? ev_jr_str(p, "against") : "", &k);
        if (!rc)
            rc = td(b, "n", rp_counts_text(&k, calls, sizeof calls));
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n<h3>Tail disclosures</h3>\n");
    const cJSON *tails = cJSON_GetObjectItemCaseSensitive(f, "tail_disclosures");
    if (!rc && cJSON_GetArraySize(tails) == 0)
        return ev_buf_puts(b, "<p>No case whose median improves while its empirical P95 regresses.</p>\n");
    if (!rc)
        rc = ev_buf_puts(b, "<p>The median improves but the empirical P95 regresses (descriptive only):</p>\n"
                            "<table>\n<tr><th>case</th><th>arm</th><th>against</th><th>ratio</th>"
                            "<th>P95 ratio</th></tr>\n");
    cJSON_ArrayForEach(p, tails)
    {
        if (rc)
            break;
        char cn[200];
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, rp_case_name(r, rp_jint(p, "case_index", -1), cn, sizeof cn));
        if (!rc)
            rc = td(b, NULL, ev_jr_str(p, "arm"));
        if (!rc)
            rc = td(b, NULL, ev_jr_str(p, "against"));
        if (!rc)
            rc = td(b, "n", rp_jnum(p, "ratio", &v) ? rp_fmt(u, v, 4) : "-");
        if (!rc)
            rc = td(b, "n bad", rp_jnum(p, "p95_ratio", &v) ? rp_fmt(u, v, 4) : "-");
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    return rc;
}

/* Per job: median, interval, P95, cold / hot, SM clock range. */
static ev_status sec_jobs(const rep *r, ev_buf *b)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(r->val, "figures"), *j;
    char t[48], u[48], w[48];
    double v, lo, hi;
    ev_status rc =
        ev_buf_puts(b, "<h2>Per job</h2>\n<table>\n<tr><th>job</th><th>hot samples</th><th>median</th>"
                       "<th>interval</th><th>P95</th><th>cold / hot</th><th>SM clock (MHz)</th></tr>\n");
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(f, "jobs"))
    {
        if (rc)
            break;
        snprintf(t, sizeof t, "%" PRId64, rp_jint(j, "n_hot", 0));
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, ev_jr_str(j, "job_key"));
        if (!rc)
            rc = td(b, "n", t);
        if (!rc)
            rc = td(b, "n", rp_jnum(j, "median_us", &v) ? rp_fmt(t, v, 4) : ev_jr_str(j, "median_us_reason"));
        const cJSON *ci = cJSON_GetObjectItemCaseSensitive(j, "median_ci");
        if (!rc && rp_numv(cJSON_GetArrayItem(ci, 0), &lo) && rp_numv(cJSON_GetArrayItem(ci, 1), &hi)) {
            char iv[100];
            snprintf(iv, sizeof iv, "[%s, %s]", rp_fmt(u, lo, 4), rp_fmt(w, hi, 4));
            rc = td(b, "n", iv);
        } else if (!rc) {
            rc = td(b, "n", "-");
        }
        if (!rc)
            rc = td(b, "n", rp_jnum(j, "p95_us", &v) ? rp_fmt(t, v, 4) : "-");
        if (!rc)
            rc = td(b, "n", rp_jnum(j, "cold_over_hot", &v) ? rp_fmt(t, v, 3) : "-");
        if (!rc) {
            double a, c;
            if (rp_jnum(j, "sm_clock_min_mhz", &a) && rp_jnum(j, "sm_clock_max_mhz", &c))
                snprintf(t, sizeof t, "%.0f - %.0f", a, c);
            else
                snprintf(t, sizeof t, "not recorded");
            rc = td(b, "n", t);
        }
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    return rc;
}

/* The model's residuals: observed against predicted (full fit), y = x drawn. */
static ev_status sec_residuals(const rep *r, ev_buf *b)
{
    const cJSON *res = r->model ? cJSON_GetObjectItemCaseSensitive(r->model, "residuals") : NULL;
    const cJSON *obs = cJSON_GetObjectItemCaseSensitive(res, "observations"), *o;
    const int S = 360, M = 40;
    double vmax = 0, x, y;
    cJSON_ArrayForEach(o, obs)
    {
        if (rp_jnum(o, "observed", &x) && rp_jnum(o, "predicted", &y)) {
            vmax = x > vmax ? x : vmax;
            vmax = y > vmax ? y : vmax;
        }
    }
    if (!(vmax > 0))
        return EV_OK;
    vmax *= 1.05;
    ev_status rc =
        ev_buf_printf(b,
                      "<h3>Residuals (full fit)</h3>\n<p>Each observation's predicted against "
                      "observed median (us per op); blue: fitted, orange: held out; the diagonal is "
                      "a perfect prediction.</p>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"%d\" height=\"%d\" role=\"img\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
                      "y2=\"%d\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n<rect x=\"%d\" y=\"%d\" "
                      "width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
                      S + 2 * M, S + 2 * M, M, S + M, S + M, M, M, M, S, S);
    cJSON_ArrayForEach(o, obs)
    {
        if (rc)
            break;
        if (!rp_jnum(o, "observed", &x) || !rp_jnum(o, "predicted", &y))
            continue;
        rc = ev_buf_printf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n", M + S * x / vmax,
                           M + S - S * y / vmax, rp_jtrue(o, "fitted") ? "#1f77b4" : "#ff7f0e");
    }
    if (!rc)
        rc = ev_buf_printf(b,
                           "<text x=\"%d\" y=\"%d\" font-size=\"11\">observed (max %.4g)</text>"
                           "<text x=\"4\" y=\"%d\" font-size=\"11\">predicted</text>\n</svg>\n",
                           M, S + M + 28, vmax, M - 8);
    return rc;
}

/* Drift of the recheck default against the main default, per case. */
static ev_status sec_drift(const rep *r, ev_buf *b)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(r->val, "drift"), *x;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(d, "cases");
    char t[48];
    double v;
    ev_status rc = ev_buf_puts(b, "<h2>Drift (recheck / main - 1, default arm)</h2>\n");
    if (!rc && cJSON_GetArraySize(cs) == 0)
        return ev_buf_puts(b, "<p>No recheck jobs.</p>\n");
    if (!rc)
        rc = ev_buf_puts(b, "<table>\n<tr><th>case</th><th>main</th><th>recheck</th><th>drift</th></tr>\n");
    cJSON_ArrayForEach(x, cs)
    {
        if (rc)
            break;
        char cn[200];
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, rp_case_name(r, rp_jint(x, "case_index", -1), cn, sizeof cn));
        if (!rc)
            rc = td(b, "n",
                    rp_jnum(x, "main_median_us", &v) ? rp_fmt(t, v, 4)
                                                     : ev_jr_str(x, "main_median_us_reason"));
        if (!rc)
            rc = td(b, "n",
                    rp_jnum(x, "recheck_median_us", &v) ? rp_fmt(t, v, 4)
                                                        : ev_jr_str(x, "recheck_median_us_reason"));
        if (!rc) {
            if (rp_jnum(x, "drift", &v)) {
                snprintf(t, sizeof t, "%+.3f%%", v * 100.0);
                rc = td(b, "n", t);
            } else {
                rc = td(b, "bad", ev_jr_str(x, "drift_reason"));
            }
        }
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    if (!rc && rp_jnum(d, "min", &v)) {
        rc = ev_buf_printf(b, "<p>Drift ranged from %+.3f%%", v * 100.0);
        if (!rc && rp_jnum(d, "max", &v))
            rc = ev_buf_printf(b, " to %+.3f%%.</p>\n", v * 100.0);
    }
    return rc;
}

static ev_status report_html(rep *r, const ev_member *m, size_t n, const char *problem, ev_buf *out,
                             ev_err *err);

ev_status ev_report_html(const ev_member *m, size_t n, ev_buf *out, ev_err *err)
{
    return ev_report_html_flagged(m, n, NULL, out, err);
}

/* See report.h. */
ev_status ev_report_html_flagged(const ev_member *m, size_t n, const char *problem, ev_buf *out, ev_err *err)
{
    rep r;
    ev_status rc = rp_rep_open(m, n, NULL, &r, err);
    if (!rc)
        rc = report_html(&r, m, n, problem, out, err);
    rp_rep_free(&r);
    return rc;
}

/* See report.h. */
ev_status ev_report_html_trees(cJSON *val, cJSON *model, cJSON *prov, const ev_member *m, size_t n,
                               ev_buf *out, ev_err *err)
{
    rep r;
    ev_status rc = rp_rep_borrow(val, model, prov, &r, err);
    if (!rc) {
        r.m = m;
        r.n_m = n;
        rp_floor_get(&r, &r.floor); /* as rp_rep_open measures it */
        rc = report_html(&r, m, n, NULL, out, err);
    }
    rp_rep_free(&r);
    return rc;
}

/* Writes report.html of r (with problem's notice when non-NULL) to out;
 * the detection and defences sections read the members m[0..n) (the
 * protocol, the proof receipts). */
static ev_status report_html(rep *r, const ev_member *m, size_t n, const char *problem, ev_buf *out,
                             ev_err *err)
{
    ev_buf b = EV_BUF_INIT;
    ev_status rc = EV_OK;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r->val, "run");
    rc = ev_buf_printf(&b,
                       "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<title>evident report: run %" PRId64 "</title>\n<style>%s</style>\n</head>\n<body>\n"
                       "<h1>evident report: run %" PRId64 "</h1>\n"
                       "<p>Generated by <code>evident report</code> from this bundle's other members only; "
                       "<code>verify-bundle</code> regenerates it byte for byte.</p>\n",
                       rp_jint(run, "run_id", -1), style, rp_jint(run, "run_id", -1));
    if (!rc)
        rc = rp_sec_headline(r, problem, &b);
    if (!rc)
        rc = rp_sec_matrix(r, &b);
    if (!rc)
        rc = sec_run(r, &b);
    if (!rc)
        rc = sec_failures(r, &b);
    if (!rc)
        rc = sec_cases(r, &b);
    if (!rc)
        rc = sec_detection(r, m, n, &b);
    if (!rc)
        rc = rp_sec_defences(r, m, n, 0, &b);
    if (!rc)
        rc = rp_sec_case_charts(r, &b);
    if (!rc)
        rc = sec_auto_vs_peer(r, &b);
    if (!rc)
        rc = sec_pairs(r, &b);
    if (!rc)
        rc = sec_model(r, &b);
    if (!rc)
        rc = sec_residuals(r, &b);
    if (!rc)
        rc = sec_drift(r, &b);
    if (!rc)
        rc = sec_jobs(r, &b);
    if (!rc)
        rc = ev_buf_puts(&b, "</body>\n</html>\n");
    if (rc) {
        ev_err_set(err, rc, "report: out of memory");
        goto out;
    }
    rc = ev_buf_append(out, b.data, b.len);
    if (rc)
        ev_err_set(err, rc, "report: out of memory");
out:
    ev_buf_free(&b);
    return rc;
}
