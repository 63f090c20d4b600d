/*
 * rows.cu: a kernel of your own, for evident's cuda backend
 * (docs/external-kernels.md).  Device code only: evident compiles this
 * file to a cubin (nvcc -cubin, pinned flags, recorded), loads it and
 * launches each entry itself with the ABI's arguments (evident_kernel.h)
 * and the geometry protocol.json declares: blocks of 256 threads, one
 * warp per row, cdiv(rows, 8) blocks.
 *   rows_sum: the FP32 sum of the row (each lane a strided share, then
 *             the warp's shuffles);
 *   rows_max: the row's maximum (a NaN gives the canonical quiet NaN, +0
 *             counts above -0, as the oracle orders them).
 */
#include <stdint.h>

#include "evident_kernel.h"

#define WARPS 8 /* per 256-thread block: the protocol's grid is cdiv(rows, 8) */

/* The row this warp reduces, or -1 past the last row. */
__device__ static int64_t warp_row(int64_t rows)
{
    int64_t r = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32;
    return r < rows ? r : -1;
}

/* The larger of a and b in the oracle's order: +0 above -0. */
__device__ static float max2(float a, float b)
{
    if (b > a || (b == 0.0f && a == 0.0f && (__float_as_uint(b) >> 31) == 0))
        return b;
    return a;
}

extern "C" __global__ void rows_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = warp_row(rows);
    if (r < 0)
        return;
    const float *row = (const float *)in + r * stride; /* in is (rows, stride), out is (rows) */
    float a = 0.0f;
    for (int64_t c = threadIdx.x % 32; c < cols; c += 32) /* every column */
        a += row[c];
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o);
    if (threadIdx.x % 32 == 0)
        ((float *)out)[r] = a;
}

extern "C" __global__ void rows_max(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = warp_row(rows);
    if (r < 0)
        return;
    const float *row = (const float *)in + r * stride;
    float m = __uint_as_float(0xff800000u); /* -inf */
    int nan = 0;
    for (int64_t c = threadIdx.x % 32; c < cols; c += 32) {
        float v = row[c];
        if (v != v)
            nan = 1;
        else
            m = max2(m, v);
    }
    for (int o = 16; o > 0; o >>= 1)
        m = max2(m, __shfl_xor_sync(0xffffffffu, m, o));
    nan = __any_sync(0xffffffffu, nan);
    if (threadIdx.x % 32 == 0)
        ((uint32_t *)out)[r] = nan ? 0x7fc00000u : __float_as_uint(m);
}
