/*
 * work.c: two external kernels that differ only in how much work they do:
 * each reduces every row PASSES times (the passes cannot be merged: each
 * goes through a volatile function pointer) and writes the first sum.
 */
#include <stdint.h>

#include "evident_kernel.h"

int work4_sum_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);
int work5_sum_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

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

static float (*volatile row_sum)(const float *, int64_t) = sum4;

static int passes(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride, int k)
{
    const float *x = in;
    float *y = out;
    for (int64_t r = 0; r < rows; r++) {
        float s = row_sum(x + r * stride, cols);
        for (int p = 1; p < k; p++)
            (void)row_sum(x + r * stride, cols);
        y[r] = s;
    }
    return 0;
}

int work4_sum_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    return passes(in, out, rows, cols, stride, 4);
}

int work5_sum_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    return passes(in, out, rows, cols, stride, 5);
}
