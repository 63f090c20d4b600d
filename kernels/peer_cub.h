/*
 * peer_cub.h: the `cub` peer: cub::DeviceSegmentedReduce over the rows with
 * FP32 accumulation (transform iterators convert the storage dtype to
 * float on load and float to the dtype, RNE and canonical NaN, on store).
 * Temporary storage is sized and allocated in ev_cub_peer_new, outside any
 * graph; ev_cub_peer_launch only enqueues the reduction (capturable).
 */
#ifndef EV_PEER_CUB_H
#define EV_PEER_CUB_H

#include "binding.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ev_cub_peer ev_cub_peer;

/* Prepares the peer for a checked binding (device pointers).  OUT: *out.
 * EV_ECUDA when the temp-storage query or allocation fails. */
ev_status ev_cub_peer_new(const ev_binding *b, ev_cub_peer **out, ev_err *err);
/* Enqueues one reduction on stream (a cudaStream_t); R = 0 enqueues nothing. */
ev_status ev_cub_peer_launch(ev_cub_peer *p, void *stream, ev_err *err);
/* The same on binding b, of the shape the peer was prepared for (its
 * temporary storage serves every binding of the shape: a job's input
 * variants and output slots, backend.h). */
ev_status ev_cub_peer_launch_on(ev_cub_peer *p, const ev_binding *b, void *stream, ev_err *err);
/* Frees the temp storage; NULL-safe. */
void ev_cub_peer_free(ev_cub_peer *p);
/* The CUB this peer was compiled with: CUB_VERSION as
 * "major.minor.subminor" (a static string; the store keeps it). */
const char *ev_cub_peer_version(void);

#ifdef __cplusplus
}
#endif

#endif
