/*
 * compare.h: two runs compared case by case and arm by arm (`evident
 * compare`, docs/results.md): the ratio B / A of each estimate, its 95%
 * interval and whether it is significant, computed from each bundle's raw
 * samples (samples.csv, through the figures rebuilt from it), and a summary.
 *
 * The interval: each side's estimate on the log scale with its standard
 * error (rp_arm_stat_get: over rounds the mean log of the rounds' medians,
 * sd / sqrt(k), k - 1 degrees of freedom; with one round the job's
 * percentile bootstrap interval of its median read as normal), combined by
 * Welch (ev_welch_t975), the method verify-bundle --compare's agreement
 * note uses.  B / A is "slower" when the interval lies above 1, "faster"
 * below 1, "not significant" when it holds 1.
 */
#ifndef EV_COMPARE_H
#define EV_COMPARE_H

#include <stddef.h>

#include "buf.h"
#include "status.h"
#include "evidence/member.h"

#define EV_COMPARE_FORMAT "evident-compare/1"

typedef struct ev_compare_opts {
    int json;           /* 1: JSON; 0: markdown */
    int gate;           /* 1: count significant slow-downs beyond fail_slower_pct */
    double fail_slower; /* percent: B / A > 1 + fail_slower / 100 */
} ev_compare_opts;

/*
 * Compares bundle b against bundle a (members as ev_members_read_zip gives
 * them) and appends the document to out.  OUT: *n_gated, the significant
 * slow-downs beyond opts->fail_slower (0 unless opts->gate).  EV_EFORMAT
 * with err naming the bundle ("A: ..." or "B: ...") and the member when
 * one cannot be read; EV_ENOMEM.
 */
ev_status ev_compare_write(const ev_member *a, size_t na, const ev_member *b, size_t nb,
                           const ev_compare_opts *opts, ev_buf *out, size_t *n_gated, ev_err *err);

#endif
