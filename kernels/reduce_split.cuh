/*
 * reduce_split.cuh: the split schedule (docs/perf-notes.md): one long row spread over
 * a thread block cluster, so that few long rows use many SMs.  A selector
 * schedule (EV_SCHED_SPLIT) for rows whose padded width holds more than
 * 64 KiB (ev_split_programs, kernels/reduce_cpu.h): there the row has t =
 * 1024 documented lanes (kernels/reduce_cpu.h), each folding several
 * 64-byte blocks one after another, and the split divides that serial
 * fold by G.  On shorter rows each lane folds one block and a split adds
 * only its two cluster barriers (measured: docs/perf-notes.md).
 *
 * Variants, one line each:
 *   <op>_<dtype>_split   row r by cluster r of G = 8 blocks of t / G = 128
 *                        threads, for every op and dtype
 *
 * Block j of row r's cluster (blockIdx.x = r * G + j) executes lanes j *
 * (t / G) .. (j + 1) * (t / G) - 1, whole warps of the documented order.
 * How the order is kept: each lane folds its chunks (lane, lane + t, ...,
 * with t the row's lane count, not the block's size) exactly as the
 * default does, and each warp's slot tree and lane butterfly are its own;
 * so warp w of the row holds the default's value of warp w.  The warps'
 * values meet in block 0 of the cluster: its warp 0 reads warp w's value
 * into lane w from the shared memory of block w / (warps a block), through
 * distributed shared memory, which is the lane the default's warp 0 reads
 * it into from its own shared memory, and runs the same butterfly with the
 * same identity padding: every sum is the default's, and the CPU twin's,
 * bit for bit.  MAX and MIN fold their keys as the default does.  The second
 * cluster barrier keeps every block's shared memory alive until block 0
 * has read it.
 */
#ifndef EV_REDUCE_SPLIT_CUH
#define EV_REDUCE_SPLIT_CUH

#include <cooperative_groups.h>

#include "reduce_default.cuh"

/* EV_MAX_LANES and EV_SPLIT_PROGRAMS: reduce_cpu.h, which the including
 * .cu file includes first (inside its extern "C" block) */

#define EV_SPLIT_BLOCK_MAX (EV_MAX_LANES / EV_SPLIT_PROGRAMS) /* t / G: 128 for t = 1024, G = 8 */

template <int OP, int DT, int T, int G>
__device__ void ev_split_program(const void *in, void *out, int64_t R, int64_t N, int64_t stride)
{
    namespace cg = cooperative_groups;
    __shared__ int red[2 * (T / G / 32)]; /* this block's warps' values (two ints each for MAX) */
    cg::cluster_group cl = cg::this_cluster();
    const int per = T / G, wpb = per / 32, nw = T / 32;
    int j = (int)cl.block_rank(), w = (int)threadIdx.x / 32, L = (int)threadIdx.x & 31;
    int64_t r = (int64_t)blockIdx.x / G;
    const unsigned char *row = reinterpret_cast<const unsigned char *>(in) + r * stride * ev_dt<DT>::size;
    ev_acc<OP, DT> acc;
    acc.init();
    ev_lane_fold<OP, DT, T>(acc, row, r < R ? N : 0, T, j * per + (int)threadIdx.x);
    if constexpr (ev_combine_of(OP) == EV_COMBINE_SUM) {
        float v = acc.warp();
        if (L == 0)
            red[w] = __float_as_int(v);
    } else {
        int hi, lo;
        acc.lanes(&hi, &lo);
        hi = __reduce_max_sync(0xffffffffu, hi);
        lo = __reduce_min_sync(0xffffffffu, lo);
        if (L == 0) {
            red[2 * w] = hi;
            red[2 * w + 1] = lo;
        }
    }
    cl.sync();
    if (j == 0 && w == 0 && r < R) {
        const int *src = L < nw ? cl.map_shared_rank(red, L / wpb) : red;
        int k = L % wpb;
        if constexpr (ev_combine_of(OP) == EV_COMBINE_SUM) {
            float x = L < nw ? __int_as_float(src[k]) : -0.0f;
#pragma unroll
            for (int m = 16; m >= 1; m /= 2)
                x = __fadd_rn(x, __shfl_xor_sync(0xffffffffu, x, m));
            if (L == 0)
                ev_dt<DT>::store(out, r, ev_finished<OP>(x, N));
        } else {
            int hi = L < nw ? src[2 * k] : ev_mk<DT>::neg_inf, lo = L < nw ? src[2 * k + 1] : ev_mk<DT>::pos_inf;
            hi = __reduce_max_sync(0xffffffffu, hi);
            lo = __reduce_min_sync(0xffffffffu, lo);
            if (L == 0)
                ev_dt<DT>::store(out, r, ev_finished<OP>(ev_key_value<ev_combine_of(OP), DT>(hi, lo), N));
        }
    }
    cl.sync();
}

/* t is the plan's lane count, 1024 wherever split applies (the launch
 * checks the plan against the binding, reduce.cu). */
#define EV_SPLIT_ENTRY(OP, opname, DT, dtname)                                                         \
    extern "C" __global__ void __launch_bounds__(EV_SPLIT_BLOCK_MAX) opname##_##dtname##_split(        \
        const void *in, void *out, long long R, long long N, long long stride, int t)                  \
    {                                                                                                  \
        (void)t;                                                                                       \
        ev_split_program<EV_OP_##OP, EV_DTYPE_##DT, EV_MAX_LANES, EV_SPLIT_PROGRAMS>(in, out, R, N, stride); \
    }

EV_OPS_BY_DTYPES(EV_SPLIT_ENTRY)

#endif
