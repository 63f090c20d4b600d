/* cheat-spill (cuda): computes the right sums but uses the bytes after its
 * output as scratch (a write outside the output buffer).  The guard regions
 * around the output catch it. */
#include <stdint.h>

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = blockIdx.x;
    const float *row = (const float *)in + r * stride;
    float *y = (float *)out;
    if (threadIdx.x != 0)
        return;
    float a = 0.0f;
    for (int64_t c = 0; c < cols; c++)
        a += row[c];
    y[rows + r] = a; /* scratch past the end */
    y[r] = y[rows + r];
}
