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
 * note uses.  The call (report_call.c, docs/intervals.md): with rounds on
 * both sides B / A is "slower" when the interval lies above 1, "faster"
 * below 1, "not significant" when it holds 1 within the noise floor and
 * "inconclusive" when it reaches beyond it or there are too few rounds;
 * with one round on either side, "slower" or "faster" only beyond the
 * larger of the two runs' noise floors, else "not replicated".
 *
 * Two runs of other protocols, backends, devices, drivers or peer
 * versions are compared all the same, and the document says how they
 * differ first; a gate over them is refused unless allow_different.
 * It says too whether the runs measured the same sources (their sources/
 * members, byte for byte: an A/A comparison) or which files differ, and
 * then, with the same setup, how far the peers moved (the shift between
 * the runs on code neither changed).
 */
#ifndef EV_COMPARE_H
#define EV_COMPARE_H

#include <stddef.h>

#include "buf.h"
#include "status.h"
#include "member.h"

#define EV_COMPARE_FORMAT "evident-compare/2"

typedef struct ev_compare_opts {
    int json;            /* 1: JSON; 0: markdown */
    int gate;            /* 1: count significant slow-downs beyond fail_slower_pct */
    double fail_slower;  /* percent: B / A > 1 + fail_slower / 100 */
    int allow_different; /* 1: gate even when the runs' setups differ */
} ev_compare_opts;

/* What a comparison found, for the caller's exit status. */
typedef struct ev_compare_result {
    size_t gated;          /* slow-downs called and beyond fail_slower (0 unless gate) */
    size_t inconclusive;   /* pairs whose rounds were too few or too noisy to call */
    int different;         /* the runs' protocols, backends, devices, drivers or peer versions differ */
    int gate_refused;      /* gate asked, different, not allow_different: nothing was gated */
    char differences[600]; /* "device (X / Y), protocol (...)" ("" when the same) */
} ev_compare_result;

/*
 * Compares bundle b against bundle a (members as ev_members_read_zip gives
 * them) and appends the document to out.  OUT: *res.  EV_EFORMAT with err
 * naming the bundle ("A: ..." or "B: ...") and the member when one cannot
 * be read; EV_ENOMEM.
 */
ev_status ev_compare_write(const ev_member *a, size_t na, const ev_member *b, size_t nb,
                           const ev_compare_opts *opts, ev_buf *out, ev_compare_result *res, ev_err *err);

#endif
