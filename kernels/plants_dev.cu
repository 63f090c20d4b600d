/*
 * plants_dev.cu: the plant, check and intact kernels (plants_cuda.h) on the
 * rules of kernels/plants.h (one definition with the host's and the
 * verifier's).
 *
 * Variants, one line each:
 *   ev_plant_node   one block per variant, a thread per plant: restore, then plant its sites
 *   ev_check_node   one block per op (a thread per plant: its rows' check, keep, poison)
 *                   and copy blocks (the kept op's other rows); its last block
 *                   folds the mismatches into the tag
 *   ev_intact_node  variants against the base, 16 bytes a thread
 * Shapes: var and slot are device arrays of V and ops device pointers;
 * rows is (R) ev_plant_row; st one ev_plant_state.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "reduce_default.cuh"

extern "C" {
#include "plants_cuda.h"
}

/* Threads a block of the plant and check nodes: m rounded up to a warp. */
static unsigned ev_plant_threads(int64_t m)
{
    unsigned t = (unsigned)((m + 31) / 32 * 32);
    return t ? t : 32;
}

__device__ __forceinline__ void ev_p_put(int32_t d, void *p, int64_t i, uint32_t b)
{
    if (d == EV_DTYPE_FP32)
        ((uint32_t *)p)[i] = b;
    else
        ((uint16_t *)p)[i] = (uint16_t)b;
}

__global__ void ev_plant_node(ev_plant_cfg c, const ev_plant_row *rows, int64_t e, int prev_back,
                              int64_t prev_e, int plant, const void *base, void *const *var,
                              const ev_plant_state *st)
{
    int64_t j = blockIdx.x, k = threadIdx.x;
    uint64_t r = *(volatile const uint64_t *)&st->r_next, pr = r - (uint64_t)prev_back;
    void *v = var[j];
    if (k < c.m && pr >= 1) {
        int64_t row[EV_PLANT_SITES], col[EV_PLANT_SITES];
        int32_t own[EV_PLANT_SITES], n = ev_plant_sites(&c, pr, prev_e, j, k, row, col, own, NULL);
        for (int32_t s = 0; s < n; s++) {
            int64_t i = row[s] * c.stride + col[s];
            ev_p_put(c.dtype, v, i, ev_plant_elem(c.dtype, base, i));
        }
    }
    __syncthreads(); /* every restore of the variant before any plant (sites may meet) */
    if (k < c.m && plant) {
        ev_plant p;
        if (ev_plant_make(&c, rows, r, e, j, k, NULL, &p))
            for (int32_t s = 0; s < p.n; s++)
                if (p.own[s] >= 0)
                    ev_p_put(c.dtype, v, p.row[s] * c.stride + p.col[s], p.bits[s]);
    }
}

/* Records the attempt's first mismatch (one writer: the first to claim). */
__device__ void ev_first_miss(ev_plant_state *st, uint64_t r, int64_t op, int64_t row, int64_t kind,
                              double value, double expect, double bound)
{
    if (atomicCAS(&st->first_set, 0u, 1u) != 0u)
        return;
    st->first.replay = (int64_t)r;
    st->first.op = op;
    st->first.row = row;
    st->first.kind = kind;
    st->first.value = value;
    st->first.expect = expect;
    st->first.bound = bound;
}

__global__ void ev_check_node(ev_plant_cfg c, const ev_plant_row *rows, int64_t n_ops, const void *base,
                              void *const *slot, void *kept, ev_plant_state *st)
{
    __shared__ unsigned int miss;
    __shared__ int last;
    uint64_t r = *(volatile uint64_t *)&st->r_next;
    int64_t b = blockIdx.x, k = threadIdx.x;
    if (k == 0)
        miss = 0;
    __syncthreads();
    if (b < n_ops) {
        int64_t e = b / c.variants, j = b % c.variants;
        if (k < c.m) {
            ev_plant p;
            int ok = ev_plant_make(&c, rows, r, e, j, k, base, &p);
            if (!ok) {
                atomicAdd(&miss, 1u);
                ev_first_miss(st, r, b, p.row[0], 1, 0.0, 0.0, 0.0);
            }
            for (int32_t s = 0; s < p.n; s++) { /* each planted row once, at its first site */
                int64_t row = p.row[s];
                if (p.own[s] != 1)
                    continue;
                if (ok) {
                    uint32_t y = ev_plant_elem(c.dtype, slot[b], row);
                    if (b == c.kept_op && kept)
                        ev_p_put(c.dtype, kept, row, y); /* as found, before the poison */
                    if (!ev_plant_ok(&c, &p, s, y, ev_plant_widen(c.dtype, y))) {
                        atomicAdd(&miss, 1u);
                        ev_first_miss(st, r, b, row, 0, ev_plant_widen(c.dtype, y), p.expect[s], p.bound[s]);
                    }
                }
                ev_p_put(c.dtype, slot[b], row, c.poison);
            }
        }
    } else if (kept && c.kept_op < n_ops) {
        /* the kept op's rows that hold no plant (the check block keeps those) */
        int64_t ke = c.kept_op / c.variants, kj = c.kept_op % c.variants, kk;
        int64_t stride = (int64_t)(gridDim.x - n_ops) * blockDim.x;
        for (int64_t row = (b - n_ops) * blockDim.x + k; row < c.rows; row += stride)
            if (!ev_plant_planted(&c, r, ke, kj, row, &kk))
                ev_p_put(c.dtype, kept, row, ev_plant_elem(c.dtype, slot[c.kept_op], row));
    }
    __syncthreads();
    if (k == 0) {
        if (miss)
            atomicAdd(&st->mism, (unsigned long long)miss);
        __threadfence();
        last = atomicAdd(&st->ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && k == 0) { /* every block has read r_next and added its count */
        unsigned long long m = atomicAdd(&st->mism, 0ull);
        st->tag = ev_plant_tag_step(st->tag, c.seed, r, m);
        st->mism = 0;
        st->ticket = 0;
        __threadfence();
        st->r_next = r + 1;
    }
}

__global__ void ev_intact_node(const void *base, void *const *var, int64_t variants, size_t chunks,
                               unsigned long long *first)
{
    size_t n = (size_t)variants * chunks;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < n;
         t += (size_t)gridDim.x * blockDim.x) {
        size_t j = t / chunks, c = t % chunks;
        uint4 a = ((const uint4 *)base)[c], v = ((const uint4 *)var[j])[c];
        if (a.x != v.x || a.y != v.y || a.z != v.z || a.w != v.w)
            atomicMin(first, (unsigned long long)j << 40 | (unsigned long long)c);
    }
}

/* EV_ECUDA with what and the launch's error, or EV_OK. */
static ev_status ev_launched(const char *what, ev_err *err)
{
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? EV_OK
                            : ev_err_set(err, EV_ECUDA, "%s: launch: %s", what, cudaGetErrorString(e));
}

extern "C" ev_status ev_cuda_plant_launch(const ev_plant_cfg *c, const ev_plant_row *rows, int64_t e,
                                          int prev_back, int64_t prev_e, int plant, const void *base,
                                          void *const *var, ev_plant_state *st, void *stream, ev_err *err)
{
    if (c->variants < 1)
        return EV_OK;
    ev_plant_node<<<(unsigned)c->variants, ev_plant_threads(c->m), 0, (cudaStream_t)stream>>>(
        *c, rows, e, prev_back, prev_e, plant, base, var, st);
    return ev_launched("plant node", err);
}

extern "C" ev_status ev_cuda_check_launch(const ev_plant_cfg *c, const ev_plant_row *rows, int64_t n_ops,
                                          const void *base, void *const *slot, void *kept, ev_plant_state *st,
                                          void *stream, ev_err *err)
{
    unsigned t = ev_plant_threads(c->m);
    int64_t copy = kept && c->kept_op < n_ops ? (c->rows + t - 1) / t : 0;
    if (copy > 64)
        copy = 64;
    ev_check_node<<<(unsigned)(n_ops + copy), t, 0, (cudaStream_t)stream>>>(*c, rows, n_ops, base, slot, kept,
                                                                            st);
    return ev_launched("check node", err);
}

extern "C" ev_status ev_cuda_intact_launch(const void *base, void *const *var, int64_t variants, size_t n,
                                           unsigned long long *first, void *stream, ev_err *err)
{
    size_t chunks = n / 16, total = (size_t)variants * chunks;
    unsigned blocks = (unsigned)(total / 256 + 1 > 4096 ? 4096 : total / 256 + 1);
    if (!total)
        return EV_OK;
    ev_intact_node<<<blocks, 256, 0, (cudaStream_t)stream>>>(base, var, variants, chunks, first);
    return ev_launched("input check", err);
}

extern "C" int ev_cuda_plants_which(const void *func)
{
    if (func == (const void *)ev_plant_node)
        return 1;
    if (func == (const void *)ev_check_node)
        return 2;
    return 0;
}
