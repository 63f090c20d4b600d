/*
 * selector.h: which entry, grid and block a binding launches (pure C, no
 * CUDA: the verifier recomputes every prediction with it).
 *
 * The launch of a schedule (cuda):
 *   entry  "<op>_<dtype>_<sched>", e.g. "reduce_sum_fp16_default",
 *          "reduce_max_bf16_rows2" (the kernels' extern "C" names)
 *   t      = ev_reduce_lanes(N, dtype)  (threads per row, from W)
 *   b      = rows per program, ev_sched_rows_of (B for default, K for
 *            rowsK; short: EV_SHORT_PROGRAM / ev_short_threads(N, dtype),
 *            and only for rows of at most 32 chunks: EV_EINVAL otherwise)
 *   block  = (min(b * t, 1024), 1, 1), or (min(b * t, max(t,
 *            EV_PROGRAM_THREADS)), 1, 1) where ceil(R / b) >= 2 S (S the
 *            SMs, reduce_cpu.h); default and rowsK on rows of at most
 *            32 chunks (p = ev_thin_threads(N, dtype) > 0) with b p >= 32
 *            (or b p >= 8 on rows the lean program does not take),
 *            and on rows of t = 64 lanes: b rt threads, rt =
 *            ev_row_threads(N, stride, dtype, b) (p, or 32: one warp a row),
 *            rounded up to a multiple of 32, capped as above; short:
 *            (EV_SHORT_PROGRAM, 1, 1);
 *            split: (t / G, 1, 1), G = ev_split_programs(N, dtype)
 *   grid   = (ceil(R / b) * G, 1, 1)   (G = 1 but for split; R = 0:
 *            nothing is launched); split launches clusters of G blocks
 * The cpu backend's receipt: the same entry name, grid = (tasks, 1, 1) and
 * block = (rows per task, 1, 1); split runs a row a task there (G = 1: a
 * host thread has no cluster to spread a row over).
 * The decision among the schedules is the cost model's (model/select.h,
 * ev_selector_select), for any binding, among the protocol's declared
 * schedules; without coefficients the default is kept.
 */
#ifndef EV_SELECTOR_H
#define EV_SELECTOR_H

#include <stdint.h>

#include "binding.h"
#include "dtype.h"
#include "status.h"
#include "vocab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows per program of s for a case whose default is B (0 for short and
 * an unknown schedule). */
int64_t ev_sched_rows(ev_sched s, int64_t default_rows);
/*
 * Rows per program b of s on a case of default rows B and N columns of
 * dtype dt: the one definition the fit's features, the decision and the
 * selector's plan use.  B for default, K for rowsK, and for short
 * EV_SHORT_PROGRAM / ev_short_threads(N, dt) (kernels/reduce_cpu.h), 1
 * for split (a program holds one G-th of one row).  0 where s does not
 * apply (short on rows of more than 32 chunks of 16 bytes, split on rows
 * of at most 64 KiB padded: ev_split_programs) or is unknown.
 */
int64_t ev_sched_rows_of(ev_sched s, int64_t B, int64_t N, ev_dtype dt);
/*
 * Programs a row of s takes, G: ev_split_programs(N, dt) for split (0
 * where it does not apply), 1 for every other schedule.  With b =
 * ev_sched_rows_of, a binding of R rows has P = ceil(R / b) * G programs
 * of b rows of W / G padded columns (docs/model.md).
 */
int64_t ev_sched_split_of(ev_sched s, int64_t N, ev_dtype dt);

typedef struct ev_launch_plan {
    char entry[64];
    int64_t grid[3], block[3];
    ev_sched sched;
    int64_t rows_per_program; /* b */
    int64_t lanes;            /* t */
    int64_t cluster;          /* G: blocks a row (split), 1 otherwise */
} ev_launch_plan;

/* Backends the plan is made for. */
typedef enum ev_sel_backend { EV_SEL_CUDA = 0, EV_SEL_CPU = 1 } ev_sel_backend;

/*
 * The launch of schedule sched for shape s with default rows B on backend
 * be (threads: cpu worker threads; on cuda the SM count S, which caps
 * the threads of a program of several rows where the grid fills the
 * device; 0: no cap).  OUT: *out.
 * EV_EINVAL for a bad shape, B < 1 or an unknown schedule.
 */
ev_status ev_selector_plan(ev_sel_backend be, const ev_shape *s, ev_sched sched, int64_t B, int64_t threads,
                           ev_launch_plan *out, ev_err *err);

#ifdef __cplusplus
}
#endif

#endif
