/*
 * stats.c: median, type-7 quantile, geometric means and sorting, exactly
 * as stats.h defines them.  Every function works on a sorted copy, so its
 * result depends only on the multiset of values (never on the order rows
 * came from the store or a CSV), and the verifier rebuilds the same bits.
 * The build passes -ffp-contract=off: no fused multiply-adds.
 */
#include "stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* Total order on non-NaN doubles for qsort: by value, -0 before +0. */
static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    if (a < b)
        return -1;
    if (a > b)
        return 1;
    return (signbit(b) != 0) - (signbit(a) != 0);
}

/*
 * The radix key of a non-NaN double: its bits with the sign bit flipped
 * when positive, all bits flipped when negative, so that unsigned order of
 * keys is cmp_double's order (-0 before +0).  With zero_tie, -0 takes +0's
 * key (they then tie, as == has them).
 */
static uint64_t radix_key(double d, int zero_tie)
{
    uint64_t b;
    if (zero_tie && d == 0)
        d = 0.0;
    memcpy(&b, &d, sizeof b);
    return b >> 63 ? ~b : b | (UINT64_C(1) << 63);
}

/*
 * Sorts key[0..n) ascending by a stable LSD radix sort over bytes (a pass
 * is skipped when every key shares that byte), moving pos[] along when
 * given.  tk and tp are scratch of n entries (tp when pos).  The result is
 * left in key/pos.
 */
static void radix_sort(uint64_t *key, uint32_t *pos, size_t n, uint64_t *tk, uint32_t *tp)
{
    for (int shift = 0; shift < 64; shift += 8) {
        size_t cnt[257] = {0};
        for (size_t i = 0; i < n; i++)
            cnt[((key[i] >> shift) & 0xffu) + 1]++;
        if (cnt[((key[0] >> shift) & 0xffu) + 1] == n)
            continue; /* every key has this byte: the pass changes nothing */
        for (int k = 0; k < 256; k++)
            cnt[k + 1] += cnt[k];
        for (size_t i = 0; i < n; i++) {
            size_t to = cnt[(key[i] >> shift) & 0xffu]++;
            tk[to] = key[i];
            if (pos)
                tp[to] = pos[i];
        }
        memcpy(key, tk, n * sizeof *key);
        if (pos)
            memcpy(pos, tp, n * sizeof *pos);
    }
}

/* Inputs this small are sorted with qsort (the radix passes cost more). */
#define RADIX_MIN 64

ev_status ev_sort_doubles(const double *v, size_t n, double *out)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (isnan(v[i]))
            return EV_EINVAL;
    if (n == 0)
        return EV_OK;
    size_t bytes;
    uint64_t *key = NULL;
    if (n > RADIX_MIN && !ev_size_mul(n, 2 * sizeof *key, &bytes))
        key = malloc(bytes);
    if (!key) { /* small, or no scratch: the same order by qsort */
        memmove(out, v, n * sizeof *v);
        qsort(out, n, sizeof *out, cmp_double);
        return EV_OK;
    }
    for (i = 0; i < n; i++)
        key[i] = radix_key(v[i], 0);
    radix_sort(key, NULL, n, key + n, NULL);
    for (i = 0; i < n; i++) { /* the key back to the double */
        uint64_t b = key[i] >> 63 ? key[i] & ~(UINT64_C(1) << 63) : ~key[i];
        memcpy(&out[i], &b, sizeof b);
    }
    free(key);
    return EV_OK;
}

ev_status ev_argsort_doubles(const double *v, size_t n, uint32_t *order)
{
    size_t bytes;
    if (n >= UINT32_MAX)
        return EV_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (isnan(v[i]))
            return EV_EINVAL;
    if (n == 0)
        return EV_OK;
    if (ev_size_mul(n, 2 * sizeof(uint64_t) + sizeof(uint32_t), &bytes))
        return EV_ENOMEM;
    uint64_t *key = malloc(bytes);
    if (!key)
        return EV_ENOMEM;
    uint32_t *tp = (uint32_t *)(key + 2 * n);
    for (size_t i = 0; i < n; i++) {
        key[i] = radix_key(v[i], 1);
        order[i] = (uint32_t)i;
    }
    radix_sort(key, order, n, key + n, tp);
    free(key);
    return EV_OK;
}

/* Returns a malloc'd sorted copy of v[0..n) in *out, or EV_EINVAL (n == 0
 * or a NaN) / EV_ENOMEM. */
static ev_status sorted_copy(const double *v, size_t n, double **out)
{
    size_t bytes;
    double *s;
    ev_status rc;

    if (n == 0)
        return EV_EINVAL;
    if (ev_size_mul(n, sizeof *s, &bytes))
        return EV_ENOMEM;
    s = malloc(bytes);
    if (!s)
        return EV_ENOMEM;
    rc = ev_sort_doubles(v, n, s);
    if (rc) {
        free(s);
        return rc;
    }
    *out = s;
    return EV_OK;
}

ev_status ev_median(const double *v, size_t n, double *out)
{
    double *s = NULL;
    ev_status rc = sorted_copy(v, n, &s);
    if (rc)
        return rc;
    if (n % 2)
        *out = s[n / 2];
    else {
        double a = s[n / 2 - 1], b = s[n / 2];
        *out = a + (b - a) / 2;
    }
    free(s);
    return EV_OK;
}

ev_status ev_quantile(const double *v, size_t n, double p, double *out)
{
    double *s = NULL, h, fl;
    size_t lo;
    ev_status rc;

    if (!(p >= 0 && p <= 1)) /* also refuses NaN */
        return EV_EINVAL;
    rc = sorted_copy(v, n, &s);
    if (rc)
        return rc;
    h = (double)(n - 1) * p;
    fl = floor(h);
    lo = (size_t)fl;
    if (lo >= n - 1)
        *out = s[n - 1];
    else
        *out = s[lo] + (h - fl) * (s[lo + 1] - s[lo]);
    free(s);
    return EV_OK;
}

ev_status ev_geomean(const double *v, size_t n, double *out)
{
    double *s = NULL, sum = 0;
    size_t i;
    ev_status rc;

    for (i = 0; i < n; i++)
        if (!isfinite(v[i]) || v[i] <= 0)
            return EV_EINVAL;
    rc = sorted_copy(v, n, &s);
    if (rc)
        return rc;
    for (i = 0; i < n; i++)
        sum += log(s[i]);
    *out = exp(sum / (double)n);
    free(s);
    return EV_OK;
}

ev_status ev_round_estimate(const double *v, size_t n, double *out)
{
    if (n == 1) {
        if (!isfinite(v[0]) || v[0] <= 0)
            return EV_EINVAL;
        *out = v[0];
        return EV_OK;
    }
    return n ? ev_geomean(v, n, out) : EV_EINVAL;
}

/* t_{0.975} for 1..63 degrees of freedom, computed once to 50 digits
 * (the regularized incomplete beta's root) and rounded to the nearest
 * double: a table, not a libm call, so every machine has the same bits. */
static const double t975[EV_T975_MAX_DOF] = {
    12.706204736174705, 4.3026527297494637, 3.1824463052837095, 2.7764451051977943, 2.5705818356363155,
    2.4469118511449701, 2.3646242515927853, 2.3060041352041667, 2.2621571627982053, 2.2281388519862748,
    2.2009851600916397, 2.1788128296672289, 2.1603686564627926, 2.1447866879178039, 2.1314495455597755,
    2.1199052992212546, 2.109815577833317,  2.1009220402410387, 2.0930240544083096, 2.0859634472658648,
    2.0796138447276804, 2.0738730679040263, 2.0686576104190486, 2.0638985616280259, 2.0595385527532977,
    2.0555294386428731, 2.0518305164802855, 2.048407141795245,  2.0452296421327043, 2.0422724563012382,
    2.0395134463964086, 2.036933343460102,  2.0345152974493388, 2.0322445093177191, 2.0301079282503434,
    2.0280940009804511, 2.0261924630291097, 2.0243941639119698, 2.0226909200367613, 2.0210753903062733,
    2.0195409704413763, 2.0180817028184448, 2.0166921992278244, 2.015367574443764,  2.0141033888808466,
    2.012895598919429,  2.0117405137297659, 2.0106347576242323, 2.0095752371292397, 2.0085591121007611,
    2.0075837703158359, 2.0066468050616884, 2.0057459953178691, 2.0048792881880568, 2.0040447832891459,
    2.0032407188478722, 2.0024654592910074, 2.0017174841452361, 2.0009953780882679, 2.0002978220142604,
    1.9996235849949398, 1.9989715170333791, 1.9983405425207417,
};

ev_status ev_t975(int64_t dof, double *out)
{
    if (dof < 1 || dof > EV_T975_MAX_DOF)
        return EV_EINVAL;
    *out = t975[dof - 1];
    return EV_OK;
}

ev_status ev_log_se95(double lo, double hi, double *se)
{
    if (!isfinite(lo) || !isfinite(hi) || !(lo > 0) || !(hi >= lo))
        return EV_EINVAL;
    *se = (log(hi) - log(lo)) / (2 * EV_Z975);
    return EV_OK;
}

double ev_welch_t975(double v_a, double dof_a, double v_b, double dof_b)
{
    double den = (dof_a > 0 ? v_a * v_a / dof_a : 0) + (dof_b > 0 ? v_b * v_b / dof_b : 0);
    double dof =
        den > 0 ? (v_a + v_b) * (v_a + v_b) / den : (dof_a > 0 ? dof_a : 0) + (dof_b > 0 ? dof_b : 0);
    double t = EV_Z975;
    if (!(dof > 0))
        return t;
    int64_t k = dof >= EV_T975_MAX_DOF ? EV_T975_MAX_DOF : (int64_t)floor(dof);
    ev_t975(k < 1 ? 1 : k, &t);
    return t;
}

/* A value and its weight, sorted together. */
typedef struct vw {
    double v, w;
} vw;

/* Orders pairs by value, then by weight (both non-NaN). */
static int cmp_vw(const void *pa, const void *pb)
{
    const vw *a = pa, *b = pb;
    int c = cmp_double(&a->v, &b->v);
    return c ? c : cmp_double(&a->w, &b->w);
}

ev_status ev_geomean_weighted(const double *v, const double *w, size_t n, double *out)
{
    vw *s = NULL;
    double sum = 0, wsum = 0;
    size_t i, bytes;

    if (n == 0)
        return EV_EINVAL;
    for (i = 0; i < n; i++)
        if (!isfinite(v[i]) || v[i] <= 0 || !isfinite(w[i]) || w[i] < 0)
            return EV_EINVAL;
    if (ev_size_mul(n, sizeof *s, &bytes))
        return EV_ENOMEM;
    s = malloc(bytes);
    if (!s)
        return EV_ENOMEM;
    for (i = 0; i < n; i++) {
        s[i].v = v[i];
        s[i].w = w[i];
    }
    qsort(s, n, sizeof *s, cmp_vw);
    for (i = 0; i < n; i++) {
        sum += s[i].w * log(s[i].v);
        wsum += s[i].w;
    }
    free(s);
    if (!(wsum > 0) || !isfinite(wsum))
        return EV_EINVAL;
    *out = exp(sum / wsum);
    return EV_OK;
}
