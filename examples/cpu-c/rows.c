/*
 * rows.c: a kernel of your own, for evident's cpu backend
 * (docs/external-kernels.md).  Each entry has the ABI of evident_kernel.h:
 * reduce `rows` rows of `cols` floats (row r starts at element r * stride
 * of in) into out[r].
 *   rows_sum: the FP32 sum of the row, in index order;
 *   rows_max: the row's maximum (a NaN gives the canonical quiet NaN, +0
 *             counts above -0, as the oracle orders them).
 * protocol.json beside it declares both; evident builds this file with cc
 * into a shared object, checks each output against its FP64 oracle and
 * measures it beside its own arms.
 */
#include <math.h>
#include <stdint.h>

#include "evident_kernel.h"

int rows_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);
int rows_max(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int rows_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in; /* in is (rows, stride) */
    float *y = out;      /* out is (rows) */
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * stride;
        float a = 0.0f;
        for (int64_t c = 0; c < cols; c++) /* every column */
            a += row[c];
        y[r] = a;
    }
    return 0;
}

int rows_max(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * stride;
        float m = -INFINITY;
        int nan = 0;
        for (int64_t c = 0; c < cols; c++) {
            float v = row[c];
            if (isnan(v))
                nan = 1;
            else if (v > m || (v == 0.0f && m == 0.0f && !signbit(v)))
                m = v;
        }
        y[r] = nan ? NAN : m;
    }
    return 0;
}
