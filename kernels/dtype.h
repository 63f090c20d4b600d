/*
 * dtype.h: the storage dtypes of the reductions (fp32, fp16, bf16) and the
 * exact conversions between them and fp32.
 *
 * Every narrowing conversion rounds to nearest, ties to even (RNE), handles
 * subnormals and overflow to infinity, and turns any NaN into the dtype's one
 * canonical quiet NaN (positive sign, payload cleared), so that outputs can be
 * compared bit for bit across backends.  Widening conversions are exact; a
 * NaN widens to a quiet NaN with its payload kept.  The CUDA kernels carry a
 * device copy of these rules (kernels/reduce_default.cuh) and are checked
 * against this file bit for bit by build/kernel-bench.
 */
#ifndef EV_DTYPE_H
#define EV_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "vocab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The dtypes (ev_dtype, ev_dtype_name, ev_dtype_parse, ev_dtype_size)
 * are the vocabulary's (src/common/vocab.h). */

/* Canonical quiet NaN bit patterns, one per dtype. */
#define EV_FP32_QNAN 0x7fc00000u
#define EV_FP16_QNAN 0x7e00u
#define EV_BF16_QNAN 0x7fc0u

/* Bits of f and back (no conversion, no UB). */
uint32_t ev_f32_bits(float f);
float ev_f32_from_bits(uint32_t u);

/* fp16 (IEEE binary16) <-> fp32.  to_f32 is exact; from f32 is RNE. */
float ev_fp16_to_f32(uint16_t h);
uint16_t ev_f32_to_fp16(float f);
/* bf16 <-> fp32.  to_f32 is exact; from f32 is RNE. */
float ev_bf16_to_f32(uint16_t h);
uint16_t ev_f32_to_bf16(float f);
/* fp32 stored as itself, except that every NaN becomes EV_FP32_QNAN. */
uint32_t ev_f32_canonical(float f);

/* Element i of an array of dtype d at base, widened to fp32 (exact). */
float ev_dtype_load(ev_dtype d, const void *base, size_t i);
/* Stores v into element i of an array of dtype d (RNE, canonical NaN). */
void ev_dtype_store(ev_dtype d, void *base, size_t i, float v);
/* The fp32 value of v rounded to dtype d (RNE, canonical NaN), as float. */
float ev_dtype_round(ev_dtype d, float v);

#ifdef __cplusplus
}
#endif

#endif
