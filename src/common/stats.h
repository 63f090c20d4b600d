/*
 * stats.h: the statistics every derived number uses.  Each function is
 * pure and deterministic (no FP contraction: the build sets
 * -ffp-contract=off), so the verifier rebuilds the same bits.
 *
 * Definitions:
 *   median: the middle value of the sorted values; for an even count, the
 *     mean of the two middle values computed as a + (b - a) / 2.
 *   quantile(p): Hyndman-Fan type 7 (numpy's default "linear"):
 *     h = (n - 1) p, result = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
 *   geometric mean: exp(mean of log x) over positive values.
 */
#ifndef EV_STATS_H
#define EV_STATS_H

#include <stddef.h>

#include "status.h"

/* Median of v[0..n) (not modified).  EV_EINVAL when n == 0 or a value is
 * NaN.  OUT: *out. */
ev_status ev_median(const double *v, size_t n, double *out);
/* Type-7 quantile, 0 <= p <= 1. */
ev_status ev_quantile(const double *v, size_t n, double p, double *out);
/* Geometric mean; EV_EINVAL when n == 0 or any value <= 0 or not finite. */
ev_status ev_geomean(const double *v, size_t n, double *out);
/* Weighted geometric mean exp(sum w log x / sum w). */
ev_status ev_geomean_weighted(const double *v, const double *w, size_t n, double *out);
/* Sorts a copy ascending (total order, NaN refused) into out[n]. */
ev_status ev_sort_doubles(const double *v, size_t n, double *out);

#endif
