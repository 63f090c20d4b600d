/*
 * simple.cu: the cuda variant of simple.c (examples/ext-simple/README.md).
 * Device code only: evident compiles this file to a cubin with pinned flags
 * (nvcc -cubin -O3 -std=c++17 -arch=sm_90, recorded), loads it and
 * launches each entry itself with the ABI's arguments
 * (kernels/evident_kernel.h) and the geometry the protocol declares:
 * block 256 (eight warps), grid cdiv(rows, 8), one warp per row.
 *
 * Each lane accumulates its strided share of the row in FP32, then the
 * warp combines the 32 partial results with shuffles.  The max keeps NaN
 * (written as the canonical quiet NaN) and +0 above -0, as the oracle does.
 */
#include <stdint.h>

#include "evident_kernel.h"

#if EVIDENT_KERNEL_ABI != 1
#error "simple.cu is written for evident kernel ABI 1"
#endif

#define ROWS_PER_BLOCK 8 /* warps of a 256-thread block: the protocol's cdiv(rows, 8) */

__device__ static float bf16_load(uint16_t h)
{
    return __uint_as_float((uint32_t)h << 16);
}

__device__ static uint16_t bf16_round(float f)
{
    uint32_t u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fc0; /* NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* The row this warp reduces, or -1 past the last row. */
__device__ static int64_t warp_row(int64_t rows)
{
    int64_t r = (int64_t)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32;
    return r < rows ? r : -1;
}

__device__ static float warp_sum(float a)
{
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o);
    return a;
}

/* The larger of a and b under the oracle's order: +0 above -0. */
__device__ static float max2(float a, float b)
{
    if (b > a || (b == 0.0f && a == 0.0f && (__float_as_uint(b) >> 31) == 0))
        return b;
    return a;
}

extern "C" __global__ void ex_sum_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = warp_row(rows);
    if (r < 0)
        return;
    const float *row = (const float *)in + r * stride;
    float a = 0.0f;
    for (int64_t c = threadIdx.x % 32; c < cols; c += 32)
        a += row[c];
    a = warp_sum(a);
    if (threadIdx.x % 32 == 0)
        ((float *)out)[r] = a;
}

extern "C" __global__ void ex_max_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
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

extern "C" __global__ void ex_sum_bf16(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = warp_row(rows);
    if (r < 0)
        return;
    const uint16_t *row = (const uint16_t *)in + r * stride;
    float a = 0.0f;
    for (int64_t c = threadIdx.x % 32; c < cols; c += 32)
        a += bf16_load(row[c]);
    a = warp_sum(a);
    if (threadIdx.x % 32 == 0)
        ((uint16_t *)out)[r] = bf16_round(a);
}
