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
 *
 * Every function works on a copy sorted ascending (-0 before +0), and sums
 * (of logs) run in that sorted order, so a result depends only on the
 * values, not on the order they are given in.
 */
#ifndef EV_STATS_H
#define EV_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* Median of v[0..n) (not modified).  EV_EINVAL when n == 0 or a value is
 * NaN.  OUT: *out. */
ev_status ev_median(const double *v, size_t n, double *out);
/* Type-7 quantile, 0 <= p <= 1; EV_EINVAL when n == 0, a value is NaN, or
 * p is outside [0, 1] or NaN. */
ev_status ev_quantile(const double *v, size_t n, double p, double *out);
/* Geometric mean; EV_EINVAL when n == 0 or any value <= 0 or not finite. */
ev_status ev_geomean(const double *v, size_t n, double *out);
/* The estimate of one (case, arm) over its rounds, from the hot medians of
 * the rounds that completed: the median itself for one round, else their
 * geometric mean (ev_geomean, so the order of v does not matter).  The
 * fit's observations and the figures both use it.  EV_EINVAL as ev_geomean. */
ev_status ev_round_estimate(const double *v, size_t n, double *out);
/* The 0.975 quantile of Student's t with dof degrees of freedom (the
 * half-width factor of a two-sided 95% interval), 1 <= dof <= 63, from a
 * table of correctly rounded values.  EV_EINVAL outside. */
#define EV_T975_MAX_DOF 63
ev_status ev_t975(int64_t dof, double *out);
/* The 0.975 quantile of the standard normal: the factor of a 95% interval
 * read as normal (a within-process bootstrap interval). */
#define EV_Z975 1.959963984540054
/* The standard error of a log estimate read off its central 95% interval
 * [lo, hi] as a normal one: (log hi - log lo) / (2 EV_Z975).  EV_EINVAL
 * unless 0 < lo <= hi, both finite.  OUT: *se. */
ev_status ev_log_se95(double lo, double hi, double *se);
/* The half-width factor of a 95% interval on the difference of two
 * independent estimates with variances v_a, v_b (squared standard errors)
 * and degrees of freedom dof_a, dof_b (0: read as normal, infinite):
 * Welch-Satterthwaite's dof over the sides that have one (their sum when
 * both variances are 0), rounded down and held to 1..EV_T975_MAX_DOF, and
 * ev_t975 of it; EV_Z975 when neither side has degrees of freedom.  The
 * comparisons of two runs (verify-bundle --compare's agreement, evident
 * compare) use it. */
double ev_welch_t975(double v_a, double dof_a, double v_b, double dof_b);
/* Weighted geometric mean exp(sum w log x / sum w), pairs summed in order
 * of x (then w).  EV_EINVAL when n == 0, any x <= 0 or not finite, any w < 0
 * or not finite, or sum w == 0. */
ev_status ev_geomean_weighted(const double *v, const double *w, size_t n, double *out);
/* Sorts a copy ascending (total order, NaN refused) into out[n]; out may
 * equal v; n == 0 is fine.  EV_EINVAL (out untouched) for a NaN. */
ev_status ev_sort_doubles(const double *v, size_t n, double *out);
/* Positions of v[0..n) (n < 2^32, no NaN) in ascending order of value,
 * equal values (-0 and +0 among them) in order of position: order[r] is
 * the position of the value of rank r.  EV_EINVAL for a NaN or n >= 2^32;
 * EV_ENOMEM. */
ev_status ev_argsort_doubles(const double *v, size_t n, uint32_t *order);

#endif
