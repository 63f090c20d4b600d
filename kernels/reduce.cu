/*
 * reduce.cu: the table of the CUDA reductions' entries (each schedule
 * defined in its .cuh and compiled in a unit of its own, below), the floor
 * and ceiling kernels, and their host launchers (reduce_cuda.h).
 *
 * Variants, one line each:
 *   reduce_<op>_<dtype>_default   b rows per program (reduce_default.cuh)
 *   reduce_<op>_<dtype>_rows{1,2,4}  (reduce_candidates.cuh)
 *   reduce_<op>_<dtype>_short     several short rows a warp (reduce_short.cuh)
 *   reduce_<op>_<dtype>_split     one long row over a cluster (reduce_split.cuh)
 *   reduce_<op>_<dtype>_pack      two lean rows a warp (reduce_pack.cuh; launch rule 2)
 *   ev_floor                      empty kernel: the per-op launch floor
 *   ev_ceiling                    streaming 16-byte reads: the read ceiling
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

extern "C" { /* the project's C headers (status.h carries no guards) */
#include "status.h"
#include "reduce_cpu.h"
#include "reduce_cuda.h"
}

#include "reduce_candidates.cuh"
#include "reduce_short.cuh"
#include "reduce_split.cuh"
#include "reduce_pack.cuh"

/* The entries, each schedule compiled in a unit of its own (kernels/
 * reduce_default.cu, reduce_rows{1,2,4}.cu, reduce_short.cu,
 * reduce_split.cu): their host stubs are what the table holds. */
EV_OPS_BY_DTYPES(EV_DEFAULT_DECL)
EV_OPS_BY_DTYPES(EV_ROWS_DECL)
EV_OPS_BY_DTYPES(EV_SHORT_DECL)
EV_OPS_BY_DTYPES(EV_SPLIT_DECL)
EV_OPS_BY_DTYPES(EV_PACK_DECL)

static_assert(EV_SHORT_BLOCK == EV_SHORT_PROGRAM, "the short program's size: reduce_short.cuh and reduce_cpu.h");
static_assert(EV_SPLIT_PROGRAMS >= 2 && EV_SPLIT_PROGRAMS <= 16 && EV_MAX_LANES % (32 * EV_SPLIT_PROGRAMS) == 0,
              "the split row's cluster: G blocks of whole warps, at most 16 (reduce_split.cuh, reduce_cpu.h)");

/* in is nothing, out is nothing: the launch floor. */
extern "C" __global__ void ev_floor(void)
{
}

/* in is (n16) uint4, sink is (gridDim.x): a grid-stride streaming read. */
extern "C" __global__ void ev_ceiling(const uint4 *in, long long n16, uint32_t *sink)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long step = (long long)gridDim.x * blockDim.x;
    uint32_t x0 = 0, x1 = 0, x2 = 0, x3 = 0;
    for (; i + 3 * step < n16; i += 4 * step) {
        uint4 a = __ldcs(in + i), b = __ldcs(in + i + step);
        uint4 c = __ldcs(in + i + 2 * step), d = __ldcs(in + i + 3 * step);
        x0 ^= a.x ^ a.y ^ a.z ^ a.w;
        x1 ^= b.x ^ b.y ^ b.z ^ b.w;
        x2 ^= c.x ^ c.y ^ c.z ^ c.w;
        x3 ^= d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n16; i += step) {
        uint4 a = __ldcs(in + i);
        x0 ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    x0 ^= x1 ^ x2 ^ x3;
    if (x0 == 0x9e3779b9u)
        sink[blockIdx.x] = x0;
}

typedef void (*ev_default_fn)(const void *, void *, long long, long long, long long, int, int, int);
typedef void (*ev_rows_fn)(const void *, void *, long long, long long, long long, int, int);
typedef void (*ev_short_fn)(const void *, void *, long long, long long, long long, int);
typedef void (*ev_split_fn)(const void *, void *, long long, long long, long long, int);
typedef void (*ev_pack_fn)(const void *, void *, long long, long long, long long, int);

typedef struct ev_entry {
    const char *name;
    const void *func;
    int rows; /* 0: default entry (runtime b); -1 floor, ceiling; -2 short (b from the row); -3 split;
               * -4 packed (a default or rowsK program's b rows, two a warp) */
} ev_entry;

/* Every op x dtype of the vocabulary (src/common/vocab.h), each schedule. */
#define EV_E(OP, op, DT, dt)                                                                           \
    {#op "_" #dt "_default", (const void *)op##_##dt##_default, 0},                                    \
        {#op "_" #dt "_rows1", (const void *)op##_##dt##_rows1, 1},                                    \
        {#op "_" #dt "_rows2", (const void *)op##_##dt##_rows2, 2},                                    \
        {#op "_" #dt "_rows4", (const void *)op##_##dt##_rows4, 4},                                    \
        {#op "_" #dt "_short", (const void *)op##_##dt##_short, -2},                                   \
        {#op "_" #dt "_split", (const void *)op##_##dt##_split, -3},                                   \
        {#op "_" #dt "_pack", (const void *)op##_##dt##_pack, -4},

static const ev_entry ev_entries[] = {
    EV_OPS_BY_DTYPES(EV_E)
    {"ev_floor", (const void *)ev_floor, -1},
    {"ev_ceiling", (const void *)ev_ceiling, -1},
};

/* Returns the table entry called name, or NULL. */
static const ev_entry *ev_entry_find(const char *name)
{
    for (size_t i = 0; i < sizeof ev_entries / sizeof ev_entries[0]; i++)
        if (strcmp(ev_entries[i].name, name) == 0)
            return &ev_entries[i];
    return NULL;
}

extern "C" const char *ev_cuda_kernel_name(const void *func)
{
    for (size_t i = 0; i < sizeof ev_entries / sizeof ev_entries[0]; i++)
        if (ev_entries[i].func == func)
            return ev_entries[i].name;
    return NULL;
}

/* Returns EV_OK, or EV_ECUDA with what for the launch error cudaGetLastError reports. */
static ev_status ev_launch_status(const char *what, ev_err *err)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return ev_err_set(err, EV_ECUDA, "%s: launch: %s", what, cudaGetErrorString(e));
    return EV_OK;
}

extern "C" ev_status ev_cuda_reduce_launch(const ev_launch_plan *p, const ev_binding *b, void *stream,
                                           ev_err *err)
{
    const ev_entry *e = ev_entry_find(p->entry);
    cudaStream_t s = (cudaStream_t)stream;
    const ev_shape *sh = &b->shape;
    dim3 grid((unsigned)p->grid[0]), block((unsigned)p->block[0]);

    if (e == NULL || e->rows == -1)
        return ev_err_set(err, EV_EINVAL, "cuda launch: unknown entry %s", p->entry);
    int64_t sp = ev_short_threads(sh->cols, sh->dtype); /* the short entry's threads a row */
    int64_t g = e->rows == -3 ? ev_split_programs(sh->cols, sh->dtype) : 1; /* programs a row */
    int64_t tp = e->rows >= 0 || e->rows == -4
                     ? ev_row_threads_rule(EV_LAUNCH_RULE, sh, p->rows_per_program)
                     : 0; /* a row's threads */
    if (e->rows == -4 && (!ev_pack_takes(sh, p->rows_per_program, tp) || ((uintptr_t)b->in & 15u) != 0))
        return ev_err_set(err, EV_EINVAL,
                          "cuda launch: plan %s: the packed program needs b >= 2 lean rows of 32 lanes, at "
                          "most two 16-byte chunks a lane (kernels/selector.h, ev_pack_takes), and an input "
                          "on 16 bytes",
                          p->entry);
    if ((e->rows == -2 && (sp < 1 || p->rows_per_program != EV_SHORT_PROGRAM / sp ||
                           p->block[0] != EV_SHORT_PROGRAM)) ||
        (e->rows == -3 && (g < 1 || p->rows_per_program != 1 || p->block[0] != p->lanes / g)) ||
        p->cluster != g || (e->rows > 0 && e->rows != p->rows_per_program) ||
        p->lanes != ev_reduce_lanes(sh->cols, sh->dtype) ||
        p->grid[0] != (sh->rows / p->rows_per_program + (sh->rows % p->rows_per_program != 0)) * g ||
        p->grid[0] > 0x7fffffff || p->block[0] < 32 || p->block[0] > 1024 ||
        p->block[0] % (e->rows == -4 ? 32 : tp > 0 ? (tp < 32 ? 32 : tp) : p->lanes / g) != 0)
        return ev_err_set(err, EV_EINVAL, "cuda launch: plan %s does not match the binding", p->entry);
    if (sh->rows == 0)
        return EV_OK;
    (void)cudaGetLastError(); /* clear a stale error so the check below is this launch's */
    if (e->rows == -3) {
        /* a cluster of g blocks a row: a launch attribute, captured into
         * the graph's kernel node like the launch itself */
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute at[1] = {};
        cfg.gridDim = grid;
        cfg.blockDim = block;
        cfg.stream = s;
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = (unsigned)g;
        at[0].val.clusterDim.y = 1;
        at[0].val.clusterDim.z = 1;
        cfg.attrs = at;
        cfg.numAttrs = 1;
        cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
        if (g > 8 && cudaStreamIsCapturing(s, &cap) == cudaSuccess && cap == cudaStreamCaptureStatusNone) {
            /* more than the portable 8 blocks a cluster: allowed per
             * function, set outside a capture (the first, validated launch
             * of every job is not captured) */
            cudaError_t ae = cudaFuncSetAttribute(e->func, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
            if (ae != cudaSuccess)
                return ev_err_set(err, EV_ECUDA, "%s: cluster of %lld: %s", p->entry, (long long)g,
                                  cudaGetErrorString(ae));
        }
        cudaError_t ce = cudaLaunchKernelEx(&cfg, (ev_split_fn)e->func, b->in, b->out, (long long)sh->rows,
                                            (long long)sh->cols, (long long)sh->stride, (int)p->lanes);
        if (ce != cudaSuccess)
            return ev_err_set(err, EV_ECUDA, "%s: launch: %s", p->entry, cudaGetErrorString(ce));
    }
    else if (e->rows == -4)
        ((ev_pack_fn)e->func)<<<grid, block, 0, s>>>(b->in, b->out, sh->rows, sh->cols, sh->stride,
                                                     (int)p->rows_per_program);
    else if (e->rows == -2)
        ((ev_short_fn)e->func)<<<grid, block, 0, s>>>(b->in, b->out, sh->rows, sh->cols, sh->stride, (int)sp);
    else if (e->rows == 0)
        ((ev_default_fn)e->func)<<<grid, block, 0, s>>>(b->in, b->out, sh->rows, sh->cols, sh->stride,
                                                       (int)p->rows_per_program, (int)p->lanes, (int)tp);
    else
        ((ev_rows_fn)e->func)<<<grid, block, 0, s>>>(b->in, b->out, sh->rows, sh->cols, sh->stride,
                                                    (int)p->lanes, (int)tp);
    return ev_launch_status(p->entry, err);
}

extern "C" ev_status ev_cuda_floor_launch(void *stream, ev_err *err)
{
    (void)cudaGetLastError();
    ev_floor<<<1, 32, 0, (cudaStream_t)stream>>>();
    return ev_launch_status("ev_floor", err);
}

extern "C" ev_status ev_cuda_ceiling_launch(const void *buf, size_t n, int sms, uint32_t *sink, void *stream,
                                            ev_err *err)
{
    if (((uintptr_t)buf & 15u) != 0 || n % 16 != 0 || sms < 1)
        return ev_err_set(err, EV_EINVAL, "ceiling: buffer must be 16-byte aligned and sized");
    (void)cudaGetLastError();
    ev_ceiling<<<sms * 4, 512, 0, (cudaStream_t)stream>>>((const uint4 *)buf, (long long)(n / 16), sink);
    return ev_launch_status("ev_ceiling", err);
}
