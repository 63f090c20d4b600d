/*
 * reduce_candidates.cuh: the candidate schedules (fixed rows per program),
 * built on the default entry's device code so their outputs are the same
 * bits.  A new candidate goes here; reduce_default.cuh stays unchanged.
 *
 * Variants, one line each:
 *   reduce_{sum,max}_{fp32,fp16,bf16}_rows1   1 row per program
 *   reduce_{sum,max}_{fp32,fp16,bf16}_rows2   2 rows per program
 *   reduce_{sum,max}_{fp32,fp16,bf16}_rows4   4 rows per program (measured, uncalibrated)
 */
#ifndef EV_REDUCE_CANDIDATES_CUH
#define EV_REDUCE_CANDIDATES_CUH

#include "reduce_default.cuh"

#define EV_ROWS_ENTRY(opname, dtname, OP, DT, K)                                                       \
    extern "C" __global__ void __launch_bounds__(1024) reduce_##opname##_##dtname##_rows##K(                                  \
        const void *in, void *out, long long R, long long N, long long stride, int t, int rt)          \
    {                                                                                                  \
        ev_rows_program<OP, DT>(in, out, R, N, stride, K, t, rt);                                      \
    }

#define EV_ROWS_ENTRIES(K)                                                                             \
    EV_ROWS_ENTRY(sum, fp32, EV_OP_SUM_, EV_DT_FP32_, K)                                               \
    EV_ROWS_ENTRY(sum, fp16, EV_OP_SUM_, EV_DT_FP16_, K)                                               \
    EV_ROWS_ENTRY(sum, bf16, EV_OP_SUM_, EV_DT_BF16_, K)                                               \
    EV_ROWS_ENTRY(max, fp32, EV_OP_MAX_, EV_DT_FP32_, K)                                               \
    EV_ROWS_ENTRY(max, fp16, EV_OP_MAX_, EV_DT_FP16_, K)                                               \
    EV_ROWS_ENTRY(max, bf16, EV_OP_MAX_, EV_DT_BF16_, K)

EV_ROWS_ENTRIES(1)
EV_ROWS_ENTRIES(2)
EV_ROWS_ENTRIES(4)

#endif
