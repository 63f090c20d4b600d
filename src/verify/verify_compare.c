/*
 * verify_compare.c: check 8, "compare" (--compare A B).  Both bundles are
 * first verified on their own (their failures are reported under A: and
 * B:); then they must share the same protocol (same protocol.json bytes),
 * and their plans (job keys), outcomes, entry/grid receipts (graph nodes
 * of each job's last attempt) and output hashes are compared job by job,
 * keyed by job_key.  Every strict difference FAILS.  Where two outputs
 * differ, the value differences are reported beside the bitwise one: the
 * count of differing elements and the largest absolute and relative
 * difference, decoding the elements in the case's storage dtype.  Timings
 * are compared as ratios of medians (B / A), reported, never gated.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "verify_int.h"
#include "vocab.h"

/* ---- do the two runs agree within their uncertainty? -------------------- */

/* A pair's log ratio and its standard error as figures give them: over
 * rounds, the mean log ratio, sd / sqrt(n) and n - 1 degrees of freedom;
 * within one round's processes, log(ratio) and the half-width of the log
 * bootstrap interval over 1.96 (normal, dof 0 meaning infinite).
 * Returns 1 when the pair has them. */
static int vc_pair_log(const cJSON *p, double *m, double *se, double *dof, int *rounds)
{
    const char *basis = ev_jr_str(p, "basis");
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(p, "interval");
    double ratio, sd, lo, hi;
    int64_t n;
    int null = 1;
    if (!basis || ev_jr_dbl(p, "ratio", &ratio) || !(ratio > 0) || ev_jr_i64(p, "n_rounds", &n))
        return 0;
    *rounds = !strcmp(basis, "rounds");
    if (*rounds) {
        if (n < 2 || ev_jr_dbl(p, "log_ratio_mean", m) || ev_jr_dbl_null(p, "log_ratio_sd", &sd, &null) ||
            null)
            return 0;
        *se = sd / sqrt((double)n);
        *dof = (double)(n - 1);
        return 1;
    }
    if (!cJSON_IsArray(iv) || !cJSON_IsNumber(cJSON_GetArrayItem(iv, 0)) ||
        !cJSON_IsNumber(cJSON_GetArrayItem(iv, 1)))
        return 0;
    lo = cJSON_GetArrayItem(iv, 0)->valuedouble;
    hi = cJSON_GetArrayItem(iv, 1)->valuedouble;
    if (ev_log_se95(lo, hi, se))
        return 0;
    *m = log(ratio);
    *dof = 0;
    return 1;
}

/* 1 when figures pair p is case ci's arm / against. */
static int vc_same_pair(const cJSON *p, int64_t ci, const char *arm, const char *against)
{
    int64_t c;
    const char *a = ev_jr_str(p, "arm"), *g = ev_jr_str(p, "against");
    return a && g && !ev_jr_i64(p, "case_index", &c) && c == ci && !strcmp(a, arm) && !strcmp(g, against);
}

/* Notes, for every pair in both bundles' figures, whether the two runs'
 * ratios agree within their combined 95% uncertainty: the interval of
 * log r_B - log r_A (Welch: se^2 = se_A^2 + se_B^2, dof from
 * Welch-Satterthwaite rounded down, t from ev_t975; normal when the
 * intervals are within-process) holds 0.  An honest 95% method agrees
 * about 95% of the time; reported, never gated (docs/intervals.md). */
static void vc_agreement(const vb_bundle *a, const vb_bundle *b, ev_vreport *r)
{
    const cJSON *fa = cJSON_GetObjectItemCaseSensitive(a->validation, "figures");
    const cJSON *fb = cJSON_GetObjectItemCaseSensitive(b->validation, "figures");
    const cJSON *pa, *pb, *next_b = NULL;
    size_t n = 0, agree = 0, shown = 0, n_rounds = 0;
    char why[5][240];
    cJSON_ArrayForEach(pa, cJSON_GetObjectItemCaseSensitive(fa, "pairs"))
    {
        int64_t ci;
        const char *arm = ev_jr_str(pa, "arm"), *ag = ev_jr_str(pa, "against");
        double m1, s1, d1, m2, s2, d2;
        int r1, r2;
        if (!arm || !ag || ev_jr_i64(pa, "case_index", &ci) || !vc_pair_log(pa, &m1, &s1, &d1, &r1))
            continue;
        /* same protocol, same pair order: B's next pair is A's, else search */
        pb = next_b && vc_same_pair(next_b, ci, arm, ag) ? next_b : NULL;
        if (!pb)
            cJSON_ArrayForEach(
                pb, cJSON_GetObjectItemCaseSensitive(fb, "pairs")) if (vc_same_pair(pb, ci, arm, ag)) break;
        next_b = pb ? pb->next : NULL;
        if (!pb || !vc_pair_log(pb, &m2, &s2, &d2, &r2) || r1 != r2)
            continue;
        double v1 = s1 * s1, v2 = s2 * s2, se = sqrt(v1 + v2), d = m2 - m1;
        double t = ev_welch_t975(v1, d1, v2, d2);
        n_rounds += r1;
        n++;
        int ok = fabs(d) <= t * se;
        agree += ok;
        if (!ok && shown < 5)
            snprintf(
                why[shown++], sizeof why[0],
                "case %lld %s / %s: ratio %.6g in A, %.6g in B; log difference %.4g, half-width %.4g (%s)",
                (long long)ci, arm, ag, exp(m1), exp(m2), d, t * se,
                r1 ? "over rounds" : "within-process intervals");
    }
    if (n)
        vr_note(
            r, VR_COMPARE, "agreement",
            "%zu of %zu pairs agree within their combined 95%% uncertainty (fraction %.3f; an honest 95%% "
            "method gives about 0.95); %s",
            agree, n, (double)agree / (double)n,
            n_rounds == n ? "intervals over rounds"
            : n_rounds    ? "some intervals over rounds, some within-process"
                          : "within-process intervals only (one round)");
    for (size_t i = 0; i < shown; i++)
        vr_note(r, VR_COMPARE, "agreement", "disagree: %s", why[i]);
}

/* The job with this key in b, or NULL (linear scan over the index). */
static const vb_vjob *vc_job_by_key(const vb_bundle *b, const char *key)
{
    for (size_t i = 0; i < b->n_vjobs; i++)
        if (!strcmp(b->vjobs[i].key, key))
            return &b->vjobs[i];
    return NULL;
}

/* The last attempt object of job v, or NULL. */
static const cJSON *vc_last_attempt(const vb_vjob *v)
{
    const cJSON *a = v->attempts ? v->attempts->child : NULL, *last = NULL;
    for (; a; a = a->next)
        last = a;
    return last;
}

/* The "first" validation of attempt a, or NULL. */
static const cJSON *vc_first_validation(const cJSON *a)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(a, "validations"))
    {
        const char *st = ev_jr_str(v, "stage");
        if (st && !strcmp(st, "first"))
            return v;
    }
    return NULL;
}

/* Decodes element i of an output in dtype d to double (little-endian
 * bytes). */
static double vc_elem(const unsigned char *p, ev_dtype d, size_t i)
{
    if (d == EV_DTYPE_FP32) {
        uint32_t u = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
                     (uint32_t)p[4 * i + 3] << 24;
        float f;
        memcpy(&f, &u, sizeof f);
        return (double)f;
    }
    uint32_t h = (uint32_t)p[2 * i] | (uint32_t)p[2 * i + 1] << 8;
    if (d == EV_DTYPE_BF16) {
        uint32_t u = h << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return (double)f;
    }
    /* fp16 */
    int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f;
    double mant = (double)(h & 0x3ff);
    double v = exp == 0    ? ldexp(mant, -24)
               : exp == 31 ? (mant ? NAN : INFINITY)
                           : ldexp(mant + 1024.0, exp - 25);
    return sign ? -v : v;
}

/* Reports the value differences of two differing outputs of job key, in
 * the case's dtype (a dtype of the vocabulary: refused before). */
static void vc_values(const vb_member *ma, const vb_member *mb, const char *dtype, const char *key,
                      ev_vreport *r)
{
    ev_dtype d = EV_DTYPE_FP32;
    (void)ev_dtype_parse(dtype, &d);
    size_t es = ev_dtype_size(d);
    if (ma->len != mb->len || ma->len % es) {
        vr_fail(r, VR_COMPARE, mb->name, "job %s: outputs differ bitwise and in size (%zu vs %zu bytes)", key,
                ma->len, mb->len);
        return;
    }
    size_t n = ma->len / es, ndiff = 0;
    double max_abs = 0, max_rel = 0;
    for (size_t i = 0; i < n; i++) {
        double x = vc_elem(ma->data, d, i), y = vc_elem(mb->data, d, i);
        if (memcmp(ma->data + i * es, mb->data + i * es, es) == 0)
            continue;
        ndiff++;
        double diff = fabs(x - y);
        if (isnan(diff)) {
            max_abs = max_rel = INFINITY;
            continue;
        }
        if (diff > max_abs)
            max_abs = diff;
        double den = fmax(fabs(x), fabs(y));
        if (den > 0 && diff / den > max_rel)
            max_rel = diff / den;
    }
    vr_fail(
        r, VR_COMPARE, mb->name,
        "job %s: outputs differ bitwise; values: %zu of %zu %s elements differ, max abs %.17g, max rel %.17g",
        key, ndiff, n, dtype, max_abs, max_rel);
}

/* Compares the graph nodes of two attempts; returns 1 when equal. */
static int vc_nodes_equal(const cJSON *a, const cJSON *b)
{
    const cJSON *na = cJSON_GetObjectItemCaseSensitive(a, "graph_nodes");
    const cJSON *nb = cJSON_GetObjectItemCaseSensitive(b, "graph_nodes");
    if (!na || !nb)
        return na == nb;
    return cJSON_Compare(na, nb, 1);
}

void vc_compare(vb_bundle *a, vb_bundle *b, ev_vreport *r)
{
    vr_use(r, VR_COMPARE);
    const vb_member *pa = vb_find(a, EV_MEMBER_PROTOCOL), *pb = vb_find(b, EV_MEMBER_PROTOCOL);
    if (!pa || !pb) {
        vr_not_run(r, VR_COMPARE, "a bundle has no protocol.json");
        return;
    }
    if (strcmp(pa->sha_hex, pb->sha_hex)) {
        vr_fail(r, VR_COMPARE, EV_MEMBER_PROTOCOL,
                "the bundles ran different protocols (%s vs %s): not comparable", pa->sha_hex, pb->sha_hex);
        return;
    }
    if (!a->vjobs || !b->vjobs) {
        vr_not_run(r, VR_COMPARE, "a bundle's jobs could not be read (checks 3, 4)");
        return;
    }
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(a->validation, "run");
    const cJSON *rb = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    const char *ba = ev_jr_str(ra, "backend"), *bb = ev_jr_str(rb, "backend");
    if (!ba || !bb || strcmp(ba, bb))
        vr_fail(r, VR_COMPARE, EV_MEMBER_VALIDATION, "backends differ (%s vs %s)", ba ? ba : "?",
                bb ? bb : "?");

    /* Timing summary first (notes are capped; the summary must survive). */
    size_t n_ratio = 0;
    double log_sum = 0, rmin = INFINITY, rmax = -INFINITY;
    for (size_t i = 0; i < a->n_vjobs; i++) {
        const vb_vjob *jb = vc_job_by_key(b, a->vjobs[i].key);
        double x, y;
        int nx = 1, ny = 1;
        if (jb && !ev_jr_dbl_null(a->vjobs[i].j, "median_us", &x, &nx) &&
            !ev_jr_dbl_null(jb->j, "median_us", &y, &ny) && !nx && !ny && x > 0 && y > 0) {
            n_ratio++;
            log_sum += log(y / x);
            rmin = fmin(rmin, y / x);
            rmax = fmax(rmax, y / x);
        }
    }
    if (n_ratio)
        vr_note(r, VR_COMPARE, "timings",
                "%zu jobs with medians in both: B/A geometric mean %.6f, min %.6f, max %.6f (reported, not "
                "gated)",
                n_ratio, exp(log_sum / (double)n_ratio), rmin, rmax);

    vc_agreement(a, b, r);

    for (size_t i = 0; i < a->n_vjobs; i++) {
        const vb_vjob *ja = &a->vjobs[i];
        const vb_vjob *jb = vc_job_by_key(b, ja->key);
        if (!jb) {
            vr_fail(r, VR_COMPARE, EV_MEMBER_VALIDATION, "job %s is in A only", ja->key);
            continue;
        }
        if (strcmp(ja->outcome, jb->outcome))
            vr_fail(r, VR_COMPARE, EV_MEMBER_VALIDATION, "job %s: outcome %s in A, %s in B", ja->key,
                    ja->outcome, jb->outcome);
        const cJSON *la = vc_last_attempt(ja), *lb = vc_last_attempt(jb);
        if (la && lb && !vc_nodes_equal(la, lb))
            vr_fail(r, VR_COMPARE, EV_MEMBER_VALIDATION, "job %s: entry/grid receipts (graph nodes) differ",
                    ja->key);
        const cJSON *va = vc_first_validation(la), *vb = vc_first_validation(lb);
        const char *ha = ev_jr_str(va, "output_sha256"), *hb = ev_jr_str(vb, "output_sha256");
        if ((ha != NULL) != (hb != NULL)) {
            vr_fail(r, VR_COMPARE, EV_MEMBER_VALIDATION, "job %s: an output hash in one bundle only",
                    ja->key);
        } else if (ha && strcmp(ha, hb)) {
            const char *na = ev_jr_str(va, "output_member"), *nb = ev_jr_str(vb, "output_member");
            const vb_member *ma = na ? vb_find(a, na) : NULL, *mb = nb ? vb_find(b, nb) : NULL;
            const cJSON *cs = cJSON_GetObjectItemCaseSensitive(a->validation, "cases");
            const char *dtype =
                ja->case_index >= 0 ? ev_jr_str(cJSON_GetArrayItem(cs, (int)ja->case_index), "dtype") : NULL;
            ev_dtype dt;
            if (ma && mb && !ev_dtype_parse(dtype, &dt))
                vc_values(ma, mb, dtype, ja->key, r);
            else
                vr_fail(r, VR_COMPARE, EV_MEMBER_VALIDATION, "job %s: output hashes differ (%s vs %s)",
                        ja->key, ha, hb);
        }
        double ma_us, mb_us;
        int na = 1, nb = 1;
        if (!ev_jr_dbl_null(ja->j, "median_us", &ma_us, &na) &&
            !ev_jr_dbl_null(jb->j, "median_us", &mb_us, &nb) && !na && !nb && ma_us > 0 && mb_us > 0) {
            double ratio = mb_us / ma_us;
            vr_note(r, VR_COMPARE, ja->key, "median B/A = %.6f (%.17g us vs %.17g us)", ratio, mb_us, ma_us);
        }
    }
    for (size_t i = 0; i < b->n_vjobs; i++)
        if (!vc_job_by_key(a, b->vjobs[i].key))
            vr_fail(r, VR_COMPARE, EV_MEMBER_VALIDATION, "job %s is in B only", b->vjobs[i].key);
}
