/*
 * reduce_short.cu: the short schedule of every op and dtype (reduce_short.cuh), in a unit of its
 * own so that the schedules compile side by side; kernels/reduce.cu's
 * table names them.
 */
extern "C" { /* the project's C headers (status.h carries no guards) */
#include "status.h"
#include "reduce_cpu.h"
}

#include "reduce_short.cuh"

EV_OPS_BY_DTYPES(EV_SHORT_ENTRY)
