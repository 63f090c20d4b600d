/*
 * plants_cuda.h: C interface to the plant, check and intact kernels
 * (kernels/plants_dev.cu), for the cuda backend and for the torch peer's
 * library (build/libevident_ops.so: kernels/ops_lib.cu).  Streams are
 * void * (a cudaStream_t); device pointers are void *.  Every launch
 * checks the launch error; none synchronises.
 */
#ifndef EV_PLANTS_CUDA_H
#define EV_PLANTS_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "plants.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The plant node: in each of the V variants (var: a device array of V
 * device pointers), restores from base the elements that replay
 * st->r_next - prev_back planted in epoch prev_e (nothing for replay 0),
 * then, when plant is 1, plants epoch e of replay st->r_next.  One block
 * per variant.  rows: the device's copy of the R rows' figures; st: the
 * device's check state.
 */
ev_status ev_cuda_plant_launch(const ev_plant_cfg *c, const ev_plant_row *rows, int64_t e, int prev_back,
                               int64_t prev_e, int plant, const void *base, void *const *var,
                               ev_plant_state *st, void *stream, ev_err *err);

/*
 * The check node: ops 0 .. n_ops-1 of replay st->r_next (slot: a device
 * array of the ops' output pointers), every planted row against its
 * plant, copying slot[kept_op] to kept first (its planted rows as found);
 * poisons the rows it checked; its last block folds the mismatches into
 * st->tag and advances st->r_next.  One block per op, and copy blocks.
 */
ev_status ev_cuda_check_launch(const ev_plant_cfg *c, const ev_plant_row *rows, int64_t n_ops,
                               const void *base, void *const *slot, void *kept, ev_plant_state *st,
                               void *stream, ev_err *err);

/*
 * Compares each of the V variants (n bytes each, a multiple of 16, 16-byte
 * aligned) with base; *first (a device word, set to UINT64_MAX first)
 * becomes the least variant x 2^40 + 16-byte chunk that differs.
 */
ev_status ev_cuda_intact_launch(const void *base, void *const *var, int64_t variants, size_t n,
                                unsigned long long *first, void *stream, ev_err *err);

/* 1 when func (a graph kernel node's host function) is the plant node's
 * kernel, 2 the check node's, 0 otherwise. */
int ev_cuda_plants_which(const void *func);

#ifdef __cplusplus
}
#endif

#endif
