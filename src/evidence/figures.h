/*
 * figures.h: the run's statistics (intervals, ratios, pairs), computed from raw samples only, so
 * that the exporter writes them into validation.json ("figures") and the
 * verifier rebuilds them from samples.csv and compares, to the bit.
 *
 * Every figure is a pure function of the per-job sample lists (per_op_us of
 * the job's last attempt, in samples.csv order: the run's view,
 * model/run_view.h) and the protocol seed: no
 * clock, no host, no FP contraction.  docs/bundle-format.md ("figures")
 * states each definition; this header is the one implementation.
 *
 *  - per job: median and empirical P95 (type-7 quantile) of the hot
 *    samples, cold median / hot median, SM clock range where recorded;
 *  - per case and arm pair (rows1, rows2, rows4, auto against default; every
 *    native arm and auto against each peer): ratio of medians, a seeded
 *    percentile bootstrap interval over samples, the exact two-sided
 *    Mann-Whitney U p-value, the P95 ratio, and a tail disclosure when the
 *    median improves while the P95 regresses;
 *  - across cases, per arm pair: ratio of sums of per-case medians and
 *    geometric mean of per-case ratios, each with a seeded paired
 *    case-cluster bootstrap interval; wins, losses and ties.
 */
#ifndef EV_FIGURES_H
#define EV_FIGURES_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "status.h"
#include "member.h"
#include "model/run_view.h"

#define EV_FIG_RESAMPLES     2000 /* bootstrap resamples, every interval */
#define EV_FIG_LEVEL         0.95 /* central interval: quantiles 0.025, 0.975 */
#define EV_FIG_ALPHA         0.01 /* two-sided Mann-Whitney threshold */
#define EV_FIG_MWU_MAX_TOTAL 50   /* exact test only when n_a + n_b <= this */
#define EV_FIG_MAX_ROUNDS    64   /* rounds read per case and arm (the protocol's bound) */
#define EV_FIG_EXACT_MAX                                                                                     \
    4096 /* bootstrap medians drawn from the exact
                                     rank distribution for n <= this */

/*
 * Sets f->uncaptured from its last attempt's device record d (validation.json's
 * attempt "device"; NULL or null: none): 1 when its "capture" says the arm
 * could not be captured in a CUDA graph and ran in the timed loop
 * (runner/sample_rules.h, EV_RULE_NOT_CAPTURED).  Such a job is never ranked
 * against a captured one: their pair gets no ratio, its reason "not
 * graph-captured".  Each reader (the exporter, the verifier, the rebuild)
 * calls it.
 */
void ev_view_capture(ev_view_job *f, const cJSON *d);

/*
 * Builds the "figures" object of view v (its jobs and seed).  Numbers are raw exact text (cJSON raw
 * nodes), so ev_json_print gives the bytes the bundle holds.  OUT: *out
 * (caller frees with cJSON_Delete).  EV_ENOMEM, or EV_EINVAL for a NaN
 * sample (err names the job).
 */
ev_status ev_figures_build(const ev_run_view *v, cJSON **out, ev_err *err);

/* Re-writes every number node of tree as its exact %.17g raw text, so a
 * parsed "figures" object prints to the same bytes as a built one. */
ev_status ev_figures_canon(cJSON *tree);

/* The exact two-sided Mann-Whitney U test of a against b: U counts pairs
 * with a_i < b_j (ties 0.5).  OUT: *u, *p.  EV_ERANGE when
 * na + nb > EV_FIG_MWU_MAX_TOTAL or either is 0. */
ev_status ev_fig_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u, double *p);

/*
 * The exact distribution of the ranks of a bootstrap median of n values
 * (n draws with replacement of positions 0..n-1 of the sorted sample; X1,
 * X2 = the order statistics (n-1)/2 and n/2 of the drawn positions, equal
 * for odd n), as the figures draw it (docs/bundle-format.md, "figures").
 * OUT: p[i * n + j] = P(X1 = i, X2 = j), 0 for j < i and, for odd n, for
 * j != i.  EV_ERANGE when n is 0 or above EV_FIG_EXACT_MAX; EV_ENOMEM.
 */
ev_status ev_fig_median_dist(size_t n, double *p);

#endif
