/*
 * reduce_cuda.h: C interface to the CUDA kernels (kernels/reduce.cu):
 * launch a selector plan on a stream, the floor and ceiling kernels, and
 * the name of a kernel function pointer read back from a graph node.
 * Streams are passed as void * (a cudaStream_t) so C code can hold them.
 * Every launch checks the launch error; none synchronises.
 */
#ifndef EV_REDUCE_CUDA_H
#define EV_REDUCE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "binding.h"
#include "selector.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Launches plan p on a checked binding (device pointers).  R = 0 launches
 * nothing.  EV_EINVAL for an unknown entry or a plan that does not match
 * the binding; EV_ECUDA with the CUDA error text otherwise. */
ev_status ev_cuda_reduce_launch(const ev_launch_plan *p, const ev_binding *b, void *stream, ev_err *err);

/* The floor: the empty kernel "ev_floor" on (1, 1, 1) x (32, 1, 1). */
ev_status ev_cuda_floor_launch(void *stream, ev_err *err);
/* The ceiling: "ev_ceiling" streams n bytes (16-byte aligned buffer, n a
 * multiple of 16) with grid (sms * 4) x 512 threads; the xor of the data
 * goes to sink (one uint32 per block, written only if it is 0x9e3779b9,
 * so the reads cannot be removed). */
ev_status ev_cuda_ceiling_launch(const void *buf, size_t n, int sms, uint32_t *sink, void *stream,
                                 ev_err *err);

/* The name of one of our kernels from its host function pointer (as a
 * graph kernel node's params give it), or NULL when it is not ours. */
const char *ev_cuda_kernel_name(const void *func);

#ifdef __cplusplus
}
#endif

#endif
