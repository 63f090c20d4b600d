/*
 * report_svg.c: the per-case charts of report.html, inline SVG drawn from
 * the figures (report_int.h).
 */
#include "report_int.h"

/* ---- figures (figures.h): the charts --------------------------------------------- */

/* The figures' per-job object of job_key, or NULL. */
static const cJSON *fig_job(const rep *r, const char *job_key)
{
    char key[200];
    if (!job_key)
        return NULL;
    snprintf(key, sizeof key, "F|%s", job_key);
    return rp_ix_find(r, key);
}

/* Reads median_us and median_ci of the figures job of j.  Returns 1 when
 * all three are numbers. */
static int job_interval(const rep *r, const cJSON *j, double *med, double *lo, double *hi)
{
    const cJSON *f = j ? fig_job(r, ev_jr_str(j, "job_key")) : NULL;
    const cJSON *ci = f ? cJSON_GetObjectItemCaseSensitive(f, "median_ci") : NULL;
    return f && rp_jnum(f, "median_us", med) && rp_numv(cJSON_GetArrayItem(ci, 0), lo) &&
           rp_numv(cJSON_GetArrayItem(ci, 1), hi);
}

/* A step of 1, 2 or 5 x 10^k for about five ticks over [0, span] (span >
 * 0), found with basic operations only, so every host draws the same
 * ticks. */
static double tick_step(double span)
{
    double raw = span / 5, p = 1;
    while (p * 10 <= raw)
        p *= 10;
    while (p > raw)
        p /= 10;
    double f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* Appends the x axis from L to R for [0, vmax] at y: its line and ticks
 * labelled in us. */
static ev_status put_axis(ev_buf *b, int L, int R, double vmax, double y)
{
    double step = tick_step(vmax);
    ev_status rc =
        ev_buf_printf(b, "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"#999\"/>\n", L, y, R, y);
    for (int k = 0; !rc && k <= 12 && k * step <= vmax; k++) {
        double x = L + (R - L) * (k * step) / vmax;
        rc = ev_buf_printf(b,
                           "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#999\"/>"
                           "<text x=\"%.2f\" y=\"%.2f\" font-size=\"10\" text-anchor=\"middle\">%g</text>\n",
                           x, y, x, y + 4, x, y + 14, k * step);
    }
    if (!rc)
        rc = ev_buf_printf(
            b, "<text x=\"%d\" y=\"%.2f\" font-size=\"10\" text-anchor=\"end\">us per op</text>\n", R + 40,
            y + 14);
    return rc;
}

/* Per case: a chart of every arm's hot median and its interval, the floor
 * and the time one op would take at the run's ceiling marked (x axis
 * linear from 0, ticks in us). */
ev_status rp_sec_case_charts(const rep *r, ev_buf *b)
{
    const int W = 640, L = 120, R = 600, H = 18;
    double floor_us = 0;
    const cJSON *fj = NULL, *j;
    cJSON_ArrayForEach(j, r->jobs)
    {
        const char *a = ev_jr_str(j, "arm");
        if (ev_is_arm(a, EV_ARM_FLOOR))
            fj = j;
    }
    int have_floor = fj && rp_jnum(fj, "median_us", &floor_us);
    double bpus = 0;
    int have_ceil = rp_ceiling_bpus(r, &bpus);
    ev_status rc =
        ev_buf_puts(b, "<h2>Hot medians with 95% bootstrap intervals, per case</h2>\n"
                       "<p>Dot: median of the hot samples (us per op); bar: its percentile bootstrap "
                       "interval (validation.json figures); red dashed line: the per-op launch floor; green "
                       "dashed line: the time one op of the case would take at the run's streaming ceiling "
                       "(its bytes over the ceiling's bandwidth).</p>\n");
    const cJSON *c;
    cJSON_ArrayForEach(c, r->cases)
    {
        int64_t idx = rp_jint(c, "case_index", -1);
        /* a sharded run: the floor of the case's own shard, the device it ran on */
        double case_floor = floor_us;
        int have_case_floor = have_floor, retried;
        const cJSON *cf = rp_case_floor(r, idx, &retried);
        if (cf)
            have_case_floor = rp_jnum(cf, "median_us", &case_floor);
        double vmax = have_case_floor ? case_floor : 0, bytes = 0, ceil_us = 0;
        int show_ceil = have_ceil && rp_case_bytes(c, &bytes) && bytes > 0;
        if (show_ceil && (ceil_us = bytes / bpus) > vmax)
            vmax = ceil_us;
        size_t rows = 0;
        for (size_t i = 0; i < r->n_arms; i++) {
            double m, lo, hi;
            if (job_interval(r, rp_find_job(r, idx, r->arms[i], rp_arm_phase(r->arms[i])), &m, &lo, &hi)) {
                rows++;
                if (hi > vmax)
                    vmax = hi;
            }
        }
        char lab[160];
        if (rc)
            break;
        rc = ev_buf_puts(b, "<h3>");
        if (!rc)
            rc = rp_put_esc(b, rp_case_label(c, lab, sizeof lab));
        if (!rc)
            rc = ev_buf_puts(b, "</h3>\n");
        if (rc || !rows || !(vmax > 0)) {
            if (!rc)
                rc = ev_buf_puts(b, "<p>No completed arm.</p>\n");
            continue;
        }
        vmax *= 1.1;
        int h = (int)rows * H + 56;
        rc = ev_buf_printf(b,
                           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                           "role=\"img\">\n",
                           W + 40, h);
        size_t row = 0;
        for (size_t i = 0; i < r->n_arms && !rc; i++) {
            double m, lo, hi;
            if (!job_interval(r, rp_find_job(r, idx, r->arms[i], rp_arm_phase(r->arms[i])), &m, &lo, &hi))
                continue;
            double y = 10.0 + (double)row * H + H / 2.0;
            double x0 = L + (R - L) * lo / vmax, x1 = L + (R - L) * hi / vmax, xm = L + (R - L) * m / vmax;
            rc = ev_buf_printf(b, "<text x=\"4\" y=\"%.2f\" font-size=\"12\">", y + 4);
            if (!rc)
                rc = rp_put_esc(b, r->arms[i]);
            if (!rc)
                rc = ev_buf_printf(
                    b,
                    "</text><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                    "stroke=\"#333\" stroke-width=\"2\"/><circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" "
                    "fill=\"#1f77b4\"/><text x=\"%.2f\" y=\"%.2f\" font-size=\"10\">%.4f</text>\n",
                    x0, y, x1, y, xm, y, x1 + 4, y + 4, m);
            row++;
        }
        double axis = 10.0 + (double)rows * H;
        if (!rc)
            rc = put_axis(b, L, R, vmax, axis);
        if (!rc && have_case_floor) {
            double xf = L + (R - L) * case_floor / vmax;
            rc = ev_buf_printf(b,
                               "<line x1=\"%.2f\" y1=\"4\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#d62728\" "
                               "stroke-dasharray=\"4 3\"/><text x=\"%.2f\" y=\"%.2f\" font-size=\"10\" "
                               "fill=\"#d62728\">floor %.4g us</text>\n",
                               xf, xf, axis, xf + 4, axis + 26, case_floor);
        }
        if (!rc && show_ceil) {
            double xc = L + (R - L) * ceil_us / vmax;
            rc = ev_buf_printf(b,
                               "<line x1=\"%.2f\" y1=\"4\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#2ca02c\" "
                               "stroke-dasharray=\"2 2\"/><text x=\"%.2f\" y=\"%.2f\" font-size=\"10\" "
                               "fill=\"#2ca02c\" text-anchor=\"end\">ceiling %.4g us</text>\n",
                               xc, xc, axis, xc - 4, axis + 38, ceil_us);
        }
        if (!rc)
            rc = ev_buf_puts(b, "</svg>\n");
    }
    return rc;
}

/* The pair object (figures) of case idx, arm and against, or NULL. */
