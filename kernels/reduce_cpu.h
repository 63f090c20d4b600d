/*
 * reduce_cpu.h: row-wise reduce_sum / reduce_max on the host (the cpu
 * backend, and the CPU twin every CUDA kernel is checked against), the
 * persistent thread pool that runs them, and the schedule receipt.
 *
 * Arithmetic is FP32 in one fixed order, the same order the CUDA kernels
 * use, so a CUDA output equals its CPU twin bit for bit:
 *   t = lanes per row = clamp(W * esize / 64, 32, 1024), W = pow2ceil(N)
 *   V = elements per 16-byte vector = 16 / esize, L = t * V partials
 *   partial[k] starts at the identity (-0.0 for sum, -Inf for max) and
 *   accumulates x[k], x[k+L], x[k+2L], ... in increasing index;
 *   then a tree: slots within a lane (offsets V/2 .. 1), lanes within a
 *   warp of 32 (offsets 16V .. V), warps (offsets (t/64)*32V .. 32V),
 *   each step p[i] = p[i] (+) p[i + offset].
 * MAX is exact, so its order is immaterial: NaN anywhere gives NaN, and
 * +0 is taken as larger than -0.  Outputs are stored in the storage dtype
 * with RNE and the canonical NaN (dtype.h).  The schedule (rows per task,
 * threads) never changes the bits: each row is reduced by one task.
 */
#ifndef EV_REDUCE_CPU_H
#define EV_REDUCE_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "binding.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most lanes per row of the fixed order. */
#define EV_MAX_LANES 1024
/* Bytes of the padded row a lane owns, 64 in the documented order: a
 * build may try another (16 or 32, kernel-bench's A/B of the v6 order,
 * docs/perf-notes.md); it changes the SUM bits, the CPU twin's with them. */
#ifndef EV_LANE_BYTES
#define EV_LANE_BYTES 64
#endif

/* Lanes per row t of the fixed order, for N columns of dtype d (32 ..
 * EV_MAX_LANES; kernels/lanes.c). */
int64_t ev_reduce_lanes(int64_t cols, ev_dtype d);
/* Elements per 16-byte vector V for dtype d (4 or 8). */
int64_t ev_reduce_vec(ev_dtype d);
/* The short schedule's threads a row (kernels/reduce_short.cuh): for rows
 * of at most 32 chunks (ceil(cols / V) <= 32), clamp(pow2ceil(chunks) /
 * EV_SHORT_CHUNKS, 1, 8), so that a thread reads at most four chunks; 0
 * for longer rows.  A short program has EV_SHORT_PROGRAM threads
 * (EV_SHORT_BLOCK in the .cuh; reduce.cu checks they agree), so
 * EV_SHORT_PROGRAM / p rows. */
int64_t ev_short_threads(int64_t cols, ev_dtype d);
#define EV_SHORT_PROGRAM 128
/* Chunks a thread of a short or thin row reads where the cap of 8 threads
 * allows (1, 2 or 4): 4 since short v1; an A/B build may try fewer
 * (-DEV_SHORT_CHUNKS=1: more threads a row, more programs; the same bits,
 * reduce_default.cuh, "the thin program"). */
#ifndef EV_SHORT_CHUNKS
#define EV_SHORT_CHUNKS 4
#endif
/* The split schedule's programs a row G (kernels/reduce_split.cuh): for
 * rows whose padded width W holds more than 64 KiB (t = EV_MAX_LANES
 * lanes, each folding several 64-byte blocks), EV_SPLIT_PROGRAMS blocks
 * of t / G threads (a thread block cluster of the portable size); 0 for
 * shorter rows, whose lanes fold one block each and gain nothing from a
 * split but its cluster barriers (docs/perf-notes.md, the split row). */
int64_t ev_split_programs(int64_t cols, ev_dtype d);
#ifndef EV_SPLIT_PROGRAMS /* a build may try another (a power of two, 2 .. 16) */
#define EV_SPLIT_PROGRAMS 8
#endif
/* The most threads a program of several rows (default, rows2, rows4) gets
 * where its grid fills the device (kernels/selector.c: P >= 2 S programs,
 * S the SM count): min(b t, max(t, EV_PROGRAM_THREADS)); elsewhere
 * min(b t, 1024).  The groups of t lanes a program cannot hold run as
 * passes of the same program, one row a group a pass, so a row's order is
 * unchanged.  Measured side by side (docs/perf-notes.md, "program
 * threads"): 8192x8192 fp32 default 71.2 -> 66.0 us, 16384x4096 bf16 B8
 * default 41.9 -> 34.4; on small grids (3x8191, 96x2048) the passes cost
 * 1.4-1.5x, hence the grid condition.  A power of two, 32 .. 1024. */
#ifndef EV_PROGRAM_THREADS
#define EV_PROGRAM_THREADS 256
#endif
/* The threads a row of a default or rowsK program on cuda (docs/perf-notes.md, v8,
 * the thin program of kernels/reduce_default.cuh): a row of at most 32
 * chunks is read by p = ev_short_threads(cols, d) threads, as in the short
 * program, so a program of b rows has b p threads, rounded up to whole
 * warps and at most 1024 (kernels/selector.c); 0 for longer rows, whose
 * programs keep t lanes a row.  EV_THIN 0: always 0 (v7's programs, for
 * measuring side by side). */
int64_t ev_thin_threads(int64_t cols, ev_dtype d);
/* The thin program's threads a row at one chunk a thread where ev_thin_
 * threads applies: min(8, pow2ceil(chunks)); 0 where it does not (launch
 * rule 3, kernels/selector.h: ev_row_threads_rule). */
int64_t ev_thin_one_chunk_threads(int64_t cols, ev_dtype d);
#ifndef EV_THIN
#define EV_THIN 1
#endif
/* The threads a row of a default or rowsK program of b rows on cuda: the
 * thin program's p where ev_thin_threads > 0 and either the b rows fill a
 * warp (b p >= 32) or the lean program does not take the rows (a partial
 * chunk, or rows not on 16 bytes) and b p >= 8 (EV_THIN_RULE 2); 32 for
 * rows of t = 64 lanes (EV_PAIR: one warp a row, two lanes a thread,
 * kernels/reduce_default.cuh "paired lanes"); t otherwise.  Measured side
 * by side on the H200 (docs/perf-notes.md v8, v9): thinner programs on
 * lean rows ran 1.06-1.22 slower than t lanes a row on 8 of 12 programs
 * (256x128 bf16 rows1/2/4, 2048x64 fp16 default/rows1/rows2), the
 * lean program being the faster there; on 1000x100 fp16 (a partial
 * chunk) the thin program read 0.91-0.92 of t lanes at b p = 8 and 16
 * and 1.05 at b p = 4.  kernels/selector.c plans b times this (whole
 * warps), the launcher passes it to the entry. */
int64_t ev_row_threads(int64_t cols, int64_t stride, ev_dtype d, int64_t b);
/* EV_THIN_RULE (docs/perf-notes.md, v9; 2 is the default): 1 keeps v8's rule (the
 * thin program only where b p >= 32), for measuring side by side. */
#ifndef EV_THIN_RULE
#define EV_THIN_RULE 2
#endif
#ifndef EV_PAIR
#define EV_PAIR 1
#endif

/*
 * Reduces rows [r0, r1) of a checked binding on the calling thread (host
 * pointers).  The shape must have passed ev_binding_check.
 */
void ev_reduce_rows(const ev_binding *b, int64_t r0, int64_t r1);

/* ---- persistent thread pool -------------------------------------------- */

typedef struct ev_cpu_pool ev_cpu_pool;

/*
 * Starts a pool of `threads` (1..1024) threads: the caller's thread counts
 * as thread 0 and threads-1 workers wait on a condition variable.  Create
 * it once per process so that timings never include thread creation.
 * OUT: *out.  EV_EINVAL for a bad count, EV_EPROC if a thread cannot start.
 */
ev_status ev_cpu_pool_new(int threads, ev_cpu_pool **out, ev_err *err);
/* Stops and joins the workers; NULL-safe. */
void ev_cpu_pool_free(ev_cpu_pool *p);
/* Returns the pool's thread count. */
int ev_cpu_pool_threads(const ev_cpu_pool *p);

/* A task body: runs task index `task` of a batch. */
typedef void (*ev_cpu_task_fn)(void *ctx, int64_t task);
/*
 * Runs tasks 0..n-1: thread k runs tasks k, k+T', k+2T', ... with
 * T' = min(T, n) threads (static, so the partition is a receipt), and
 * returns when all are done.  Not reentrant: one batch at a time.
 */
void ev_cpu_pool_run(ev_cpu_pool *p, int64_t n, ev_cpu_task_fn fn, void *ctx);

/* ---- schedules and receipts -------------------------------------------- */

/* The schedule receipt: entry name and task partition. */
typedef struct ev_cpu_receipt {
    char entry[64];        /* e.g. "reduce_sum_fp16_rows2", "reduce_max_bf16_default" */
    int64_t tasks;         /* P = ceil(R / rows_per_task) */
    int64_t rows_per_task; /* b */
    int64_t threads;       /* min(pool threads, P) */
    int64_t lanes;         /* t of the fixed order */
} ev_cpu_receipt;

/*
 * Plans (pure, no pool needed) the schedule `label` ("default", "rows1",
 * "rows2", "rows4", ...) with b rows per task on `threads` threads.
 * OUT: *out.  EV_EINVAL for b < 1, threads < 1, a bad shape or label.
 */
ev_status ev_reduce_cpu_plan(const ev_shape *s, const char *label, int64_t rows_per_task, int64_t threads,
                             ev_cpu_receipt *out, ev_err *err);
/*
 * Runs a checked binding (host pointers) with the planned partition.
 * R = 0 runs nothing.  EV_EINVAL when the plan does not fit the pool.
 */
ev_status ev_reduce_cpu_run(ev_cpu_pool *pool, const ev_binding *b, const ev_cpu_receipt *plan, ev_err *err);

/* ---- reference arms ----------------------------------------------------- */

/* The floor: one batch of T empty tasks through the pool. */
void ev_cpu_floor(ev_cpu_pool *pool);
/*
 * The ceiling: reads n bytes at buf (8-byte aligned, n a multiple of 8)
 * split over the pool's threads, and returns a checksum so the reads stay.
 */
uint64_t ev_cpu_stream_read(ev_cpu_pool *pool, const void *buf, size_t n);
/* Last-level cache size in bytes (sysconf), or 32 MiB when unknown. */
size_t ev_cpu_llc_bytes(void);
/* One core's L2 cache in bytes (sysconf), or 256 KiB when unknown: the
 * L2-resident ceiling (ceiling-l2) streams half of it per pool thread. */
size_t ev_cpu_l2_bytes(void);

#ifdef __cplusplus
}
#endif

#endif
