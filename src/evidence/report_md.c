/*
 * report_md.c: the markdown case table (docs/h200-results.md pastes it):
 * the header, one row per case, the closing summary (report_int.h).
 */
#include "report_int.h"

static ev_status md_header(const rep *r, ev_buf *b, double *floor_us, int *have_floor)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r->val, "run");
    const char *st = ev_jr_str(run, "status"), *rs = ev_jr_str(run, "rescue_status");
    char t[48], u[48];
    double v, bytes;
    int fr, cr;
    const cJSON *fj = rp_md_ref_job(r, ev_arm_kind_name(EV_ARM_FLOOR), &fr),
                *cj = rp_md_ref_job(r, ev_arm_kind_name(EV_ARM_CEILING), &cr);
    *have_floor = 0;
    ev_status rc = ev_buf_printf(b, "Run %" PRId64 " (backend ", rp_jint(run, "run_id", -1));
    if (!rc)
        rc = rp_put_md(b, ev_jr_str(run, "backend"));
    if (!rc)
        rc = ev_buf_puts(b, ", protocol ");
    if (!rc)
        rc = rp_put_md(b, ev_jr_str(run, "protocol_path"));
    if (!rc)
        rc = ev_buf_puts(b, "): status ");
    if (!rc)
        rc = rp_put_md(b, st ? st : ev_jr_str(run, "status_reason"));
    if (!rc)
        rc = ev_buf_puts(b, ", rescue status ");
    if (!rc)
        rc = rp_put_md(b, rs ? rs : "none");
    if (!rc)
        rc = ev_buf_puts(b, ".  Every figure is the median of the hot samples of a job's last attempt, "
                            "in microseconds per op; a job that did not complete shows its outcome and "
                            "enters no ratio.\n\n");
    if (!rc && rp_md_median(fj, &v)) {
        *floor_us = v;
        *have_floor = 1;
        rc = ev_buf_printf(b, "- floor (an empty kernel node, the per-op launch floor): %s us%s\n",
                           rp_fmt(t, v, 4), fr ? " (its rescue retry)" : "");
    } else if (!rc) {
        rc = ev_buf_puts(b, "- floor: ");
        if (!rc)
            rc = rp_put_md(b, fj ? ev_jr_str(fj, "outcome") : "not in this run");
        if (!rc)
            rc = ev_buf_puts(b, "; no auto / floor ratio\n");
    }
    if (!rc && rp_md_median(cj, &v)) {
        rc = ev_buf_printf(b, "- ceiling (a streaming read): %s us%s", rp_fmt(t, v, 4),
                           cr ? " (its rescue retry)" : "");
        if (!rc && rp_md_ceiling_bytes(cj, &bytes))
            rc = ev_buf_printf(b, " for %.0f bytes per op = %s GB/s", bytes, rp_fmt(u, bytes / v * 1e-3, 1));
        if (!rc)
            rc = ev_buf_puts(b, "\n");
    } else if (!rc) {
        rc = ev_buf_puts(b, "- ceiling: ");
        if (!rc)
            rc = rp_put_md(b, cj ? ev_jr_str(cj, "outcome") : "not in this run");
        if (!rc)
            rc = ev_buf_puts(b, "\n");
    }
    if (!rc)
        rc = ev_buf_puts(
            b, "- best peer: the faster of cub and torch-compile on that case (completed jobs only; with "
               "several rounds by their estimate over rounds); auto / best peer is called a win for auto, a "
               "loss, n.s., inconclusive or not replicated by the rule below\n");
    if (!rc) {
        char basis[1000];
        rc = ev_buf_puts(b, "- rounds and basis: ");
        if (!rc)
            rc = rp_put_md(b, rp_basis_text(r, basis, sizeof basis));
        if (!rc)
            rc = ev_buf_puts(b, "\n\n");
    }
    return rc;
}

/* Appends the closing line: the calls of auto against the best peer over
 * the cases where both completed (calls[0..n)), the geometric mean of the
 * ratios (case order) ratios[0..n), and what the calls stand on (k
 * rounds).  EV_ENOMEM. */
static ev_status md_summary(ev_buf *b, const double *ratios, const rp_call *calls, size_t n, size_t n_cases,
                            int64_t k)
{
    rp_counts c;
    char t[48], counts[200];
    double g;
    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < n; i++)
        c.n[calls[i]]++;
    ev_status rc =
        ev_buf_printf(b, "\nauto against the best peer: %s over the %zu of %zu cases where both completed",
                      rp_counts_text(&c, counts, sizeof counts), n, n_cases);
    if (!rc && n && ev_geomean(ratios, n, &g) == EV_OK)
        rc = ev_buf_printf(b, "; geometric mean of auto / best peer %s", rp_fmt(t, g, 3));
    else if (!rc)
        rc = ev_buf_puts(b, "; no geometric mean");
    if (!rc && k > 1)
        rc = ev_buf_printf(b, "; intervals over %lld rounds.\n", (long long)k);
    else if (!rc)
        rc = ev_buf_puts(b, "; one round: not replicated, called only beyond the noise floor.\n");
    return rc;
}

/* See report.h. */
ev_status ev_report_markdown(const ev_member *m, size_t n, ev_buf *out, ev_err *err)
{
    rep r;
    ev_buf b = EV_BUF_INIT;
    double *ratios = NULL, floor_us = 0;
    rp_call *calls = NULL;
    size_t n_ratios = 0, n_cases = 0;
    int have_floor = 0;
    ev_status rc = rp_rep_open(m, n, NULL, &r, err);
    if (rc)
        goto out;
    n_cases = (size_t)cJSON_GetArraySize(r.cases);
    ratios = malloc((n_cases ? n_cases : 1) * sizeof *ratios);
    calls = malloc((n_cases ? n_cases : 1) * sizeof *calls);
    if (!ratios || !calls) {
        rc = ev_err_set(err, EV_ENOMEM, "report: out of memory");
        goto out;
    }
    rc = md_header(&r, &b, &floor_us, &have_floor);
    if (!rc)
        rc = ev_buf_puts(&b, "| Operation / shape / storage / B | Role |");
    for (size_t i = 0; i < r.n_arms && !rc; i++) {
        rc = ev_buf_puts(&b, " ");
        if (!rc)
            rc = rp_put_md(&b, r.arms[i]);
        if (!rc)
            rc = ev_buf_puts(&b, " |");
    }
    if (!rc)
        rc = ev_buf_puts(&b, " Best peer | auto / best peer | auto / floor | Recheck | Selection (full) | "
                             "Selection (LOGO) |\n|---|---|");
    for (size_t i = 0; i < r.n_arms && !rc; i++)
        rc = ev_buf_puts(&b, "---:|");
    if (!rc)
        rc = ev_buf_puts(&b, "---|---:|---:|---:|---|---|\n");
    const cJSON *c;
    cJSON_ArrayForEach(c, r.cases)
    {
        char t[200], lab[160], u[48];
        const char *peer = NULL;
        double auto_us = 0, peer_us = 0;
        int64_t idx = rp_jint(c, "case_index", -1);
        if (rc)
            break;
        rc = ev_buf_puts(&b, "| ");
        if (!rc)
            rc = rp_put_md(&b, rp_case_label(c, lab, sizeof lab));
        if (!rc)
            rc = ev_buf_puts(&b, " | ");
        if (!rc)
            rc = rp_put_md(&b, ev_jr_str(c, "role"));
        for (size_t i = 0; i < r.n_arms && !rc; i++) {
            rc = ev_buf_puts(&b, " | ");
            if (!rc)
                rc = rp_put_md(&b, rp_arm_cell(&r, idx, r.arms[i], rp_arm_phase(r.arms[i]), t, sizeof t));
        }
        rp_call call = RP_CALL_NONE;
        double ar = 0;
        int have_auto =
            rp_arm_estimate(&r, idx, ev_arm_kind_name(EV_ARM_AUTO), ev_phase_name(EV_PHASE_POLICY), &auto_us);
        int have_peer = rp_md_best_peer(&r, idx, &peer, &peer_us);
        int have_ratio = rp_auto_vs_best(&r, idx, &peer, &ar, &call);
        if (!rc)
            rc = ev_buf_puts(&b, " | ");
        if (!rc)
            rc = rp_put_md(&b, have_peer ? peer : NULL);
        if (!rc && have_ratio)
            rc = ev_buf_printf(&b, " | %s %s", rp_fmt(u, ar, 3), rp_call_word(call, 0));
        else if (!rc)
            rc = ev_buf_puts(&b, " | -");
        /* a sharded run: the floor of the case's own shard, the device it ran on */
        double case_floor = floor_us;
        int have_case_floor = have_floor, retried;
        const cJSON *cf = rp_case_floor(&r, idx, &retried);
        if (cf)
            have_case_floor = rp_md_median(cf, &case_floor);
        if (!rc)
            rc = ev_buf_printf(&b, " | %s",
                               have_auto && have_case_floor ? rp_fmt(u, auto_us / case_floor, 3) : "-");
        if (have_ratio) {
            ratios[n_ratios] = ar;
            calls[n_ratios++] = call;
        }
        if (!rc)
            rc = ev_buf_puts(&b, " | ");
        if (!rc)
            rc = rp_put_md(&b, rp_job_cell(&r,
                                           rp_find_job(&r, idx, ev_sched_name(EV_SCHED_DEFAULT),
                                                       ev_phase_name(EV_PHASE_RECHECK)),
                                           t, sizeof t));
        const cJSON *d = rp_find_decision(&r, c);
        if (!rc)
            rc = ev_buf_puts(&b, " | ");
        if (!rc)
            rc = rp_put_md(&b, d ? ev_jr_str(d, "selected") : NULL);
        if (!rc)
            rc = ev_buf_puts(&b, " | ");
        if (!rc)
            rc = rp_put_md(&b, d ? ev_jr_str(d, "logo_selected") : NULL);
        if (!rc)
            rc = ev_buf_puts(&b, " |\n");
    }
    if (!rc)
        rc = md_summary(&b, ratios, calls, n_ratios, n_cases, rp_rounds_of(&r));
    if (!rc)
        rc = rp_sec_defences(&r, m, n, 1, &b);
    if (rc) {
        ev_err_set(err, rc, "report: out of memory");
        goto out;
    }
    rc = ev_buf_append(out, b.data ? b.data : "", b.len);
    if (rc)
        ev_err_set(err, rc, "report: out of memory");
out:
    free(ratios);
    free(calls);
    ev_buf_free(&b);
    rp_rep_free(&r);
    return rc;
}

/* See report.h. */
ev_status ev_report_failures(const ev_member *m, size_t n, size_t max, ev_buf *out, ev_err *err)
{
    rep r;
    const cJSON *j;
    size_t shown = 0, more = 0;
    ev_status rc = rp_rep_load(m, n, &r, err);
    if (rc)
        return rc;
    cJSON_ArrayForEach(j, r.jobs)
    {
        const char *o = ev_jr_str(j, "outcome"), *key = ev_jr_str(j, "job_key");
        char reason[1200];
        if (!o || strncmp(o, "failed", 6))
            continue;
        if (shown == max) {
            more++;
            continue;
        }
        shown++;
        if ((rc = ev_buf_printf(out, "  %s: %s: %s\n", key ? key : "?", o,
                                rp_failure_reason(&r, j, reason, sizeof reason))))
            break;
    }
    if (!rc && more)
        rc = ev_buf_printf(out, "  (%zu more: 'evident report' shows every one)\n", more);
    rp_rep_free(&r);
    return rc ? ev_err_set(err, rc, "report: out of memory") : EV_OK;
}
