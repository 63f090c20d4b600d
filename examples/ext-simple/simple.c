/*
 * simple.c: a worked external kernel for evident's cpu backend
 * (examples/ext-simple/README.md).  Each entry follows the ABI of
 * kernels/evident_kernel.h: reduce rows x cols (row r at element r *
 * stride of in) into out[r].  Sums accumulate in four FP32 lanes; the max
 * keeps NaN (as the canonical quiet NaN) and +0 above -0, as the oracle
 * does.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "evident_kernel.h"

#if EVIDENT_KERNEL_ABI != 1
#error "simple.c is written for evident kernel ABI 1"
#endif

int ex_sum_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);
int ex_max_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);
int ex_sum_bf16(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

/* The FP32 sum of n floats, four lanes then their pairwise sum. */
static float sum4(const float *x, int64_t n)
{
    float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int64_t c = 0;
    for (; c + 4 <= n; c += 4) {
        a0 += x[c];
        a1 += x[c + 1];
        a2 += x[c + 2];
        a3 += x[c + 3];
    }
    for (; c < n; c++)
        a0 += x[c];
    return (a0 + a1) + (a2 + a3);
}

int ex_sum_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    for (int64_t r = 0; r < rows; r++)
        y[r] = sum4(x + r * stride, cols);
    return 0;
}

int ex_max_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * stride;
        float m = -INFINITY;
        int nan = 0;
        for (int64_t c = 0; c < cols; c++) {
            float v = row[c];
            if (v != v)
                nan = 1;
            else if (v > m || (v == 0 && m == 0 && !signbit(v)))
                m = v;
        }
        if (nan) {
            uint32_t q = 0x7fc00000u; /* the canonical quiet NaN */
            memcpy(&y[r], &q, sizeof q);
        } else {
            y[r] = m;
        }
    }
    return 0;
}

/* bfloat16 bits to float, and float to bfloat16 rounding to nearest even. */
static float bf16_load(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint16_t bf16_round(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fc0; /* NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

int ex_sum_bf16(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const uint16_t *x = in;
    uint16_t *y = out;
    for (int64_t r = 0; r < rows; r++) {
        const uint16_t *row = x + r * stride;
        float a = 0;
        for (int64_t c = 0; c < cols; c++)
            a += bf16_load(row[c]);
        y[r] = bf16_round(a);
    }
    return 0;
}
