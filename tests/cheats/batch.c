/* cheat-batch: batch-and-skip.  Counts its calls and does the work on one
 * call in every 100 (the protocol's ops per graph) and on the first; every
 * other call returns at once, so a graph of 100 ops costs one op's work
 * and 99 empty calls.  The output is right whenever all ops read the same
 * input.  Caught by the check node: every op reads a variant of its own
 * and writes an output slot of its own, and the planted rows of every
 * slot are compared after every replay; a skipped op's slot holds the
 * poison the last check left there (failed-validation naming the op, the
 * row and its expected value). */
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
