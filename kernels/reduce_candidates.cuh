/*
 * reduce_candidates.cuh: the candidate schedules (fixed rows per program),
 * built on the default entry's device code so their outputs are the same
 * bits.  A new candidate goes here; reduce_default.cuh stays unchanged.
 *
 * Variants, one line each:
 *   <op>_<dtype>_rows1   1 row per program     (every op and dtype)
 *   <op>_<dtype>_rows2   2 rows per program
 *   <op>_<dtype>_rows4   4 rows per program (measured, uncalibrated)
 */
#ifndef EV_REDUCE_CANDIDATES_CUH
#define EV_REDUCE_CANDIDATES_CUH

#include "reduce_default.cuh"

#define EV_ROWS_ENTRY(OP, opname, DT, dtname, K)                                                       \
    extern "C" __global__ void __launch_bounds__(1024) opname##_##dtname##_rows##K(                    \
        const void *in, void *out, long long R, long long N, long long stride, int t, int rt)          \
    {                                                                                                  \
        ev_rows_program<EV_OP_##OP, EV_DTYPE_##DT>(in, out, R, N, stride, K, t, rt);                   \
    }
#define EV_ROWS1_ENTRY(OP, opname, DT, dtname) EV_ROWS_ENTRY(OP, opname, DT, dtname, 1)
#define EV_ROWS2_ENTRY(OP, opname, DT, dtname) EV_ROWS_ENTRY(OP, opname, DT, dtname, 2)
#define EV_ROWS4_ENTRY(OP, opname, DT, dtname) EV_ROWS_ENTRY(OP, opname, DT, dtname, 4)

EV_OPS_BY_DTYPES(EV_ROWS1_ENTRY)
EV_OPS_BY_DTYPES(EV_ROWS2_ENTRY)
EV_OPS_BY_DTYPES(EV_ROWS4_ENTRY)

#endif
