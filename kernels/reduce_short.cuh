/*
 * reduce_short.cuh: the schedule for many short rows (docs/perf-notes.md), built on
 * the default entry's device code so its outputs are the same bits.
 *
 * Variants, one line each:
 *   <op>_<dtype>_short   p threads a row, 128 / p rows a program of 128
 *                        threads, for every op and dtype
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

#define EV_SHORT_ENTRY(OP, opname, DT, dtname)                                                         \
    extern "C" __global__ void __launch_bounds__(EV_SHORT_BLOCK) opname##_##dtname##_short(            \
        const void *in, void *out, long long R, long long N, long long stride, int p)                  \
    {                                                                                                  \
        ev_thin_program<EV_OP_##OP, EV_DTYPE_##DT>(in, out, R, N, stride, EV_SHORT_BLOCK / p, p);      \
    }

EV_OPS_BY_DTYPES(EV_SHORT_ENTRY)

#endif
