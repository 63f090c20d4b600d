/*
 * binding.h: the binding check shared by the cpu and cuda backends.
 *
 * A binding is one reduction's shape plus the actual buffers it will read
 * and write: op, dtype, R rows, N columns, row stride (elements), the input
 * pointer and span in bytes, the output pointer and span in bytes.  The
 * check refuses, with EV_EINVAL and a one-line reason, anything a kernel
 * must never be launched on: N = 0, stride < N, an input span too small for
 * (R-1)*stride+N elements, an output span too small for R elements, a
 * pointer not aligned to its element size, overlapping input and output
 * spans.  R = 0 is valid (nothing is launched).  Pointers are compared as
 * addresses only (never dereferenced), so device pointers work the same.
 */
#ifndef EV_BINDING_H
#define EV_BINDING_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "status.h"
#include "vocab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ops (ev_op, ev_op_name, ev_op_parse) are the vocabulary's
 * (src/common/vocab.h). */

/* A case's shape.  in is (rows, stride) with the first cols valid; out is (rows). */
typedef struct ev_shape {
    ev_op op;
    ev_dtype dtype;
    int64_t rows, cols, stride; /* stride in elements */
} ev_shape;

typedef struct ev_binding {
    ev_shape shape;
    const void *in;
    size_t in_span; /* bytes available at in */
    void *out;
    size_t out_span; /* bytes available at out */
    /* Written by ev_binding_check on success: */
    unsigned in_align;  /* largest power of two dividing in, capped at 256 */
    unsigned out_align; /* same for out */
    size_t in_need;     /* bytes the reduction reads: ((R-1)*stride+N)*esize, 0 if R=0 */
    size_t out_need;    /* bytes it writes: R*esize */
} ev_binding;

/*
 * Bytes to allocate for an input of len bytes: len rounded up to a 16-byte
 * boundary, at least 16.  The native kernels read whole aligned 16-byte
 * blocks that each hold at least one byte of a row (reduce_default.cuh,
 * EV_CHUNK_LOADS), so a buffer that starts and ends on 16 bytes holds
 * every byte they read.
 */
size_t ev_input_alloc_bytes(size_t len);

/* Largest power of two dividing the address p, capped at 256 (256 for NULL). */
unsigned ev_binding_align(const void *p);

/*
 * Checks b (shape, pointers and spans).  Returns EV_OK and fills in_align,
 * out_align, in_need and out_need; or EV_EINVAL with err naming the reason
 * (b's derived fields untouched).  The reasons, in the order checked:
 * unknown op or dtype; R < 0; N = 0 (or negative); stride < N; size
 * overflow; input span too small; output span too small; NULL pointer with
 * R > 0; misaligned input; misaligned output; overlapping spans.
 */
ev_status ev_binding_check(ev_binding *b, ev_err *err);

/* Sets b to shape s over in[in_span] and out[out_span], then checks it
 * (ev_binding_check): how a backend binds each of a job's input sets. */
ev_status ev_binding_make(ev_binding *b, const ev_shape *s, const void *in, size_t in_span, void *out,
                          size_t out_span, ev_err *err);

#ifdef __cplusplus
}
#endif

#endif
