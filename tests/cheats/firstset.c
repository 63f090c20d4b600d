/* cheat-first-set: does the work only for the input pointer of its first
 * call (the one the first validation reads) and returns at once for any
 * other: half the ops of a graph whose ops alternate between two input
 * sets are no-ops.  Caught by the second input set's validation: its
 * output, poisoned before the rotated sample, is never written. */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

static const void *first;

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    if (!first)
        first = in;
    if (in != first)
        return 0;
    for (int64_t r = 0; r < rows; r++) {
        float a = 0;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    return 0;
}
