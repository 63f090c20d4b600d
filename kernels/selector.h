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
 * Launch rule 2 (EV_LAUNCH_RULE; docs/perf-notes.md, v11): on cuda a
 * default or rowsK program of a SUM of b >= 4 lean rows (rt = t = 32
 * lanes, whole chunks on 16 bytes, at most two chunks a lane), on a grid
 * of at least one program an SM (ceil(R / b) >= S), runs as
 * "<op>_<dtype>_pack" (reduce_pack.cuh) with half the block: two rows a
 * warp, the same bits.  Rule 1 is the plan without it; the verifier plans
 * a bundle by the rule its bundled code declares.
 * Launch rule 3 (docs/perf-notes.md, v12 experiment): on cuda a default or
 * rowsK program of b rows of at most 32 chunks that the thin program does
 * not take (ev_row_threads gives t lanes) runs thin at one chunk a thread,
 * q = min(8, pow2ceil(chunks)) threads a row, where b q >= 32: b q
 * threads (ev_row_threads_rule), the same bits; the packed program of
 * rule 2 then does not apply (it takes rows of 32 threads).
 * The decision among the schedules is the cost model's (model/select.h,
 * ev_selector_select), for any binding, among the protocol's declared
 * schedules; without coefficients the default is kept.
 */
#ifndef EV_SELECTOR_H
#define EV_SELECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "binding.h"
#include "dtype.h"
#include "status.h"
#include "vocab.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The launch rule this code plans by.  Its value is read back from the
 * bytes of this file as a bundle carries them (sources/, EV_LAUNCH_RULE_
 * SOURCE) by ev_launch_rule_declared: keep the line as it is, one
 * #define with a number; raise it with every change to a plan, so that the
 * verifier checks earlier bundles by their own rule.  1: before the packed
 * program (bundles whose code has no such line); 2: the packed program; 3:
 * the thin program at one chunk a thread (ev_row_threads_rule).
 */
#ifndef EV_LAUNCH_RULE /* -DEV_LAUNCH_RULE=1: an A/B build (tools/gpu/ab.sh), never a run's */
#define EV_LAUNCH_RULE 3
#endif
#define EV_LAUNCH_RULE_SOURCE "kernels/selector.h"

/*
 * The launch rule declared by text[0, n), the bytes of an EV_LAUNCH_RULE_
 * SOURCE: the number of its one line "#define EV_LAUNCH_RULE <n>", 1 where
 * it has none, -1 where that line is not a positive number or is there
 * twice.
 */
int ev_launch_rule_declared(const char *text, size_t n);

/*
 * 1 where the packed entry (kernels/reduce_pack.cuh) computes a program of
 * b rows of s with rt threads a row (ev_row_threads) bit for bit as the
 * lean program does: b >= 2 rows of t = rt = 32 lanes (not thin, not
 * paired), every row on 16 bytes and of whole chunks, at most two chunks
 * a lane; else 0.  The plan (launch rule 2) and the launcher ask it.
 */
int ev_pack_takes(const ev_shape *s, int64_t b, int64_t rt);

/*
 * The threads a row of a default or rowsK program of b rows of s on cuda
 * under launch rule `rule`: ev_row_threads (kernels/reduce_cpu.h) under
 * rules 1 and 2; from rule 3, where that gives t lanes to rows of at most
 * 32 chunks, q = min(8, pow2ceil(chunks)) where b q >= 32.  The plan and
 * the launcher (at EV_LAUNCH_RULE) ask it.
 */
int64_t ev_row_threads_rule(int rule, const ev_shape *s, int64_t b);

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
/* The same under launch rule `rule` (1..EV_LAUNCH_RULE; EV_EINVAL
 * otherwise): ev_selector_plan is this at EV_LAUNCH_RULE. */
ev_status ev_selector_plan_rule(int rule, ev_sel_backend be, const ev_shape *s, ev_sched sched, int64_t B,
                                int64_t threads, ev_launch_plan *out, ev_err *err);

#ifdef __cplusplus
}
#endif

#endif
