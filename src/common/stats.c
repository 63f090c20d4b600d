/*
 * stats.c: median, type-7 quantile, geometric means and sorting, exactly
 * as stats.h defines them.  Every function works on a sorted copy, so its
 * result depends only on the multiset of values (never on the order rows
 * came from the store or a CSV), and the verifier rebuilds the same bits.
 * The build passes -ffp-contract=off: no fused multiply-adds.
 */
#include "stats.h"

#include <math.h>
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

ev_status ev_sort_doubles(const double *v, size_t n, double *out)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (isnan(v[i]))
            return EV_EINVAL;
    if (n == 0)
        return EV_OK;
    memmove(out, v, n * sizeof *v); /* n * 8 fits: v already holds n doubles */
    qsort(out, n, sizeof *out, cmp_double);
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
