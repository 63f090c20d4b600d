/*
 * reduce_split.cu: the split schedule of every op and dtype (reduce_split.cuh), in a unit of its
 * own so that the schedules compile side by side; kernels/reduce.cu's
 * table names them.
 */
extern "C" { /* the project's C headers (status.h carries no guards) */
#include "status.h"
#include "reduce_cpu.h"
}

#include "reduce_split.cuh"

EV_OPS_BY_DTYPES(EV_SPLIT_ENTRY)
