/* cheat-batch: batch-and-skip.  Counts its calls and does the work on one
 * call in every 100 (the protocol's ops per graph) and on the first; every
 * other call returns at once, so a graph of 100 ops costs one op's work
 * and 99 empty calls.  The output is right whenever all ops read the same
 * input, even after the rotated input (the next working call sees it).
 * Caught by the two input sets: the ops of a graph alternate between two
 * inputs (contents and addresses) with an output each, the last op on the
 * case's own set; the set whose ops are all skipped keeps the poison it
 * was given before the rotated sample, and its validation fails. */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

static uint64_t calls;

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    if (calls++ % 100 != 0)
        return 0;
    for (int64_t r = 0; r < rows; r++) {
        float a = 0;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    return 0;
}
