/*
 * reduce_short.cuh: the schedule for many short rows (issue 18), built on
 * the default entry's device code so its outputs are the same bits.
 *
 * Variants, one line each:
 *   reduce_{sum,max}_{fp32,fp16,bf16}_short   p threads a row, 128 / p rows
 *                                             a program of 128 threads
 *
 * For rows of at most 32 chunks (ceil(N / V) <= 32, V = 16 / esize: rows
 * of at most 512 bytes): the thin program of reduce_default.cuh, p =
 * ev_short_threads(N, dtype) threads a row, with EV_SHORT_BLOCK / p rows a
 * program of EV_SHORT_BLOCK threads (where the default and rowsK programs
 * hold their own b rows).  How the thin program keeps the order, and so
 * every sum's bits: reduce_default.cuh, "the thin program".
 */
#ifndef EV_REDUCE_SHORT_CUH
#define EV_REDUCE_SHORT_CUH

#include "reduce_default.cuh"

#ifndef EV_SHORT_BLOCK
#define EV_SHORT_BLOCK 128 /* threads a program */
#endif

#define EV_SHORT_ENTRY(opname, dtname, OP, DT)                                                         \
    extern "C" __global__ void __launch_bounds__(EV_SHORT_BLOCK) reduce_##opname##_##dtname##_short(   \
        const void *in, void *out, long long R, long long N, long long stride, int p)                  \
    {                                                                                                  \
        ev_thin_program<OP, DT>(in, out, R, N, stride, EV_SHORT_BLOCK / p, p);                         \
    }

EV_SHORT_ENTRY(sum, fp32, EV_OP_SUM_, EV_DT_FP32_)
EV_SHORT_ENTRY(sum, fp16, EV_OP_SUM_, EV_DT_FP16_)
EV_SHORT_ENTRY(sum, bf16, EV_OP_SUM_, EV_DT_BF16_)
EV_SHORT_ENTRY(max, fp32, EV_OP_MAX_, EV_DT_FP32_)
EV_SHORT_ENTRY(max, fp16, EV_OP_MAX_, EV_DT_FP16_)
EV_SHORT_ENTRY(max, bf16, EV_OP_MAX_, EV_DT_BF16_)

#endif
