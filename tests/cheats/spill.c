/* cheat-spill: computes the right sums but uses the bytes after its output
 * as scratch (a write outside the output buffer).  The guard regions
 * around the output catch it. */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    for (int64_t r = 0; r < rows; r++) {
        float a = 0;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[rows] = a; /* scratch past the end */
        y[r] = y[rows];
    }
    return 0;
}
