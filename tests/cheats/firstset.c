/* cheat-first-set: does the work only for the input pointer of its first
 * call (the one the first validation reads, variant 0) and returns at
 * once for any other: the ops of a graph read V variants, so all but one
 * op in V are no-ops.  Caught by the check node, which compares the
 * planted rows of every op's own output slot after every replay: a
 * skipped op's slot holds the poison the last check left there
 * (failed-validation naming the op, the row and its expected value). */
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
