/* cheat-cache: computes the right sums on its first call, then returns at
 * once whenever it sees the same input pointer again (output caching keyed
 * by address: GPU MODE kernelbot PR #501, tensara PR #238).  Every later
 * op of a batch is a no-op, so its time is the call's alone.  Caught by
 * the rotating inputs: between timed replays part of the input is
 * rewritten from a secret per-attempt seed, and the output of the next
 * timed replay is validated against the new contents. */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

static const void *seen;

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    if (in == seen)
        return 0;
    for (int64_t r = 0; r < rows; r++) {
        float a = 0;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    seen = in;
    return 0;
}
