/*
 * work.c: two external kernels that differ only in how much work they do.
 * Both run one function, passes(), called through a volatile pointer so
 * that no compiler can inline or specialise it: the two arms execute the
 * same machine code at the same addresses, work5 with k = 5 and work6 with
 * k = 6 (1.2x the work).  A pass reduces a row with one chain of dependent
 * additions; the k passes over a row form one chain (float addition is not
 * associative, so they cannot be merged) whose end goes to a volatile
 * sink, and the row's first sum is the output.  The chain's latency, not
 * the host's caches or execution ports, sets the time: the case's rows
 * stay in the L1 cache.
 */
#include <stdint.h>

#include "evident_kernel.h"

int work5_sum_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);
int work6_sum_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

static volatile float chain_end;

/* k passes over each row of in (rows x cols, row stride stride); writes
 * each row's first sum to out.  Returns 0. */
static int passes(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride, int k)
{
    const float *x = in;
    float *y = out;
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * stride;
        float s = 0;
        for (int64_t c = 0; c < cols; c++)
            s += row[c];
        float t = s;
        for (int p = 1; p < k; p++)
            for (int64_t c = 0; c < cols; c++)
                t += row[c];
        chain_end = t;
        y[r] = s;
    }
    return 0;
}

static int (*volatile run_passes)(const void *, void *, int64_t, int64_t, int64_t, int) = passes;

int work5_sum_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    return run_passes(in, out, rows, cols, stride, 5);
}

int work6_sum_f32(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    return run_passes(in, out, rows, cols, stride, 6);
}
