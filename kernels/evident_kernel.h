/*
 * evident_kernel.h: the ABI of an external kernel (docs/external-kernels.md).
 * A protocol declares a kernel by its source file per backend and one entry
 * point per (op, dtype) it implements; the arm named after it is measured
 * like our own arms: the same inputs, protocol, validation, receipts and
 * verification.  This header is the whole contract; the argument layout is
 * versioned by EVIDENT_KERNEL_ABI, which a source may check at compile time.
 *
 * Every entry reduces `rows` rows of `cols` elements each, row r starting
 * at element r * stride of `in` (stride >= cols, in elements of the
 * storage dtype), into out[r], one element of the same dtype per row:
 *   reduce_sum: the sum, computed in FP32 arithmetic or better;
 *   reduce_max: the maximum (any NaN in the row gives NaN; +0 above -0);
 *   reduce_min: the minimum (any NaN in the row gives NaN; -0 below +0);
 *   reduce_mean: the sum, computed in FP32 arithmetic or better, over cols;
 *   every op of src/common/vocab.h, each checked as kernels/oracle.h says.
 * Storage: fp32 is IEEE binary32; fp16 is IEEE binary16 and bf16 is
 * bfloat16, both as uint16_t bits.  The output is checked against evident's
 * FP64 oracle (kernels/oracle.h) after the first launch and after the last
 * hot sample, and the bytes around the output buffer are checked too: a
 * write outside out[0..rows) fails the job.
 *
 * cpu (a .c file, compiled by cc into a shared object evident loads):
 *   int ENTRY(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);
 *   returns 0, or non-zero for a failure (the job fails, with that status).
 *   It runs on the calling thread, once per op; nothing else of it runs.
 *
 * cuda (a .cu file of device code only, compiled by nvcc to a cubin evident
 * loads and launches itself, with the grid and block the protocol declares):
 *   extern "C" __global__ void ENTRY(const void *in, void *out, int64_t rows,
 *                                    int64_t cols, int64_t stride);
 */
#ifndef EVIDENT_KERNEL_H
#define EVIDENT_KERNEL_H

#include <stdint.h>

#define EVIDENT_KERNEL_ABI 1

/* The cpu entry's type. */
typedef int (*evident_cpu_entry)(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

#endif
