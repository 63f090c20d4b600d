/*
 * reduce_rows1.cu: the rows1 candidate of every op and dtype (reduce_candidates.cuh), in units of its
 * own so that the schedules (and, kernels/build.mk, the dtypes) compile side by side; kernels/reduce.cu's
 * table names them.
 */
extern "C" { /* the project's C headers (status.h carries no guards) */
#include "status.h"
#include "reduce_cpu.h"
}

#include "reduce_candidates.cuh"

/* one dtype's entries a unit where kernels/build.mk says which
 * (-DEV_UNIT_DTYPE=FP16 -DEV_UNIT_DTNAME=fp16: the dtypes compile side by
 * side), else every dtype's */
#ifdef EV_UNIT_DTYPE
EV_OPS_OF_DTYPE(EV_ROWS1_ENTRY, EV_UNIT_DTYPE, EV_UNIT_DTNAME)
#else
EV_OPS_BY_DTYPES(EV_ROWS1_ENTRY)
#endif
