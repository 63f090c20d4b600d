/*
 * kref.h: TEMPORARY stand-ins for the kernels module's C code (dtype
 * conversions, seeded inputs, the FP64 oracle and the row reduction) so
 * the runner works end to end before kernels/{dtype,inputs,oracle,
 * reduce_cpu}.h land on main.  The worker and the cpu backend call only
 * these entry points; switching to kernels/ replaces this file, nothing
 * else.  Not a measurement claim: the kernels module's versions are the
 * ones tested exhaustively.
 */
#ifndef EV_KREF_H
#define EV_KREF_H

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"
#include "status.h"

/* Bytes per element of "fp32" (4), "fp16", "bf16" (2). */
size_t ev_kref_dtype_size(const char *dtype);

/* The input bytes of case c: rows x stride elements (the last row ends at
 * cols), values from the seeded generator, padding filled with a sentinel
 * that would spoil any sum that reads it.  OUT: *buf (malloc'd), *len. */
ev_status ev_kref_input(const ev_proto_case *c, int64_t seed, int64_t case_index, void **buf, size_t *len,
                        ev_err *err);

/* Reduces rows [r0, r1) of case c from in to out (FP32 arithmetic, output
 * rounded to the storage dtype, NaN propagating). */
void ev_kref_reduce_rows(const ev_proto_case *c, const void *in, void *out, int64_t r0, int64_t r1);

typedef struct ev_kref_check {
    int passed;
    double max_abs_err;
    double bound;       /* largest per-row SUM bound; 0 for MAX (bitwise) */
    int64_t mismatches; /* rows outside the bound (SUM) or not bit-equal (MAX) */
} ev_kref_check;

/* Validates out against the FP64 oracle.  SUM bound per row:
 * factor x (N x 2^-24 x sum|x| + 2^-p x |ref|), p = 24, 11, 8 for fp32,
 * fp16, bf16; MAX: bit for bit.  NaN rows must be NaN.  OUT: *res. */
void ev_kref_validate(const ev_proto_case *c, const void *in, const void *out, double factor,
                      ev_kref_check *res);

#endif
