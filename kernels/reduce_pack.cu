/*
 * reduce_pack.cu: the packed program's entries (reduce_pack.cuh), in a
 * unit of their own.
 */
extern "C" { /* the project's C headers (status.h carries no guards) */
#include "status.h"
#include "reduce_cpu.h"
}

#include "reduce_pack.cuh"

EV_OPS_BY_DTYPES(EV_PACK_ENTRY)
