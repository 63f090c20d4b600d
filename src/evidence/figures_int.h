/*
 * figures_int.h: what the figures' two files share: a sample list prepared
 * for resampling, a bootstrap task, and the statistics the recipe calls.
 *   figures.c        the recipe: which jobs, pairs and cases, in document
 *                    order (figures.h)
 *   figures_stats.c  the statistics: seeded randomness, the exact law of a
 *                    bootstrap median, Mann-Whitney, quantiles, the
 *                    bootstrap intervals spread over threads
 * Private to src/evidence/.
 */
#ifndef EV_FIGURES_INT_H
#define EV_FIGURES_INT_H

#include "evidence/figures.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "stats.h"
#include "jbuild.h"
#include "runner/plan.h"

/* ---- the exact distribution of a bootstrap median's ranks ---------------- */

/*
 * A resample draws n positions of the sorted sample uniformly with
 * replacement; its median is sorted[X1] (odd n) or the mean of sorted[X1]
 * and sorted[X2] (even n), X1, X2 the order statistics k1 = (n-1)/2 and
 * k2 = n/2 of the drawn positions.  Their law depends only on n:
 *
 *   P(X1 <= i) = P(Bin(n, (i+1)/n) >= k1+1)                       (cdf)
 *   even n, given X1 = i:  P(X2 > i) = up_i = num_i / P(X1 = i), where
 *     num_i = P(X1 = i, X2 > i) = b_i - b_{i-1} ((n-1-i)/(n-i))^m,
 *     b_i = P(Bin(n, (i+1)/n) = k1+1), b_{-1} = 0, m = n - k1 - 1;
 *   and given X1 = i < X2, the m draws above i are uniform on i+1..n-1,
 *     so P(X2 >= j) = ((n-j)/(n-1-i))^m for j > i.
 *
 * So a resample's median takes one uniform (inverse cdf: X1 = the least i
 * with u < cdf[i]) and, for even n, a second: X2 = i when u2 >= up_i, else
 * the least j > i with ((n-1-j)/(n-1-i))^m < 1 - u2/up_i.  Everything is
 * computed with + - * / only (no libm), so the bits are the same on every
 * IEEE-754 platform built without contraction.
 */
typedef struct mtab {
    size_t n;
    double *cdf; /* n: P(X1 <= i), cdf[n-1] = 1 */
    double *up;  /* n: P(X2 > X1 | X1 = i), even n (all 0 for odd n) */
    /* where to search: guide[k] = the least i with cdf[i] > k / 2^gbits,
     * k = 0 .. 2^gbits (a u in [k, k+1) / 2^gbits has its answer in
     * guide[k] .. guide[k+1]; exact, since u is a multiple of 2^-53) */
    uint32_t *guide;
    int gbits;
} mtab;

/* x^e by squaring (e >= 0), basic operations only. */
/* A sample list prepared for resampling: its values sorted ascending and,
 * for each original position, the rank of its value there. */
typedef struct fsamp {
    double *sorted;
    uint32_t *rank;
    size_t n;
    const mtab *mt; /* the exact rank law of n, or NULL: resample */
} fsamp;

/* One bootstrap interval to compute: of a job's median (y NULL) or of the
 * ratio of two jobs' medians, with the state of its label. */
typedef struct btask {
    const fsamp *x, *y;
    uint64_t state;
    double lo, hi;
    int ok;
} btask;

/* figures_stats.c */
ev_status fg_boot_all(btask *t, size_t n, size_t max_hot);
size_t fg_draw(uint64_t *state, size_t n);
uint64_t fg_fnv1a64(const char *s);
void fg_fsamp_free(fsamp *s);
ev_status fg_fsamp_init(const double *v, size_t n, fsamp *s);
ev_status fg_interval(double *v, size_t n, double *lo, double *hi);
ev_status fg_job_stats(const double *j, const fsamp *s, double *med, double *p95);
void fg_mtab_free(mtab *t);
ev_status fg_mtab_init(size_t n, mtab *t);
uint64_t fg_splitmix64(uint64_t *state);

#endif
