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

/* Each K's entries are defined in a unit of their own (kernels/
 * reduce_rows1.cu, reduce_rows2.cu, reduce_rows4.cu: EV_ROWSK_ENTRY), so
 * that they compile side by side, and declared where the launcher's table
 * names them (kernels/reduce.cu: EV_ROWS_DECL). */
#define EV_ROWS_SIG(opname, dtname, K)                                                                 \
    extern "C" __global__ void __launch_bounds__(1024) opname##_##dtname##_rows##K(                    \
        const void *in, void *out, long long R, long long N, long long stride, int t, int rt)
#define EV_ROWS_ENTRY(OP, opname, DT, dtname, K)                                                       \
    EV_ROWS_SIG(opname, dtname, K)                                                                     \
    {                                                                                                  \
        ev_rows_program<EV_OP_##OP, EV_DTYPE_##DT>(in, out, R, N, stride, K, t, rt);                   \
    }
#define EV_ROWS1_ENTRY(OP, opname, DT, dtname) EV_ROWS_ENTRY(OP, opname, DT, dtname, 1)
#define EV_ROWS2_ENTRY(OP, opname, DT, dtname) EV_ROWS_ENTRY(OP, opname, DT, dtname, 2)
#define EV_ROWS4_ENTRY(OP, opname, DT, dtname) EV_ROWS_ENTRY(OP, opname, DT, dtname, 4)
#define EV_ROWS_DECL(OP, opname, DT, dtname)                                                           \
    EV_ROWS_SIG(opname, dtname, 1);                                                                    \
    EV_ROWS_SIG(opname, dtname, 2);                                                                    \
    EV_ROWS_SIG(opname, dtname, 4);

#endif
