/* cheat-cache: computes the right sums for an input pointer it has not
 * seen, then returns at once whenever it sees one of its (up to eight)
 * input pointers again (output caching keyed by address: GPU MODE
 * kernelbot PR #501, tensara PR #238; a table, so the two input sets that
 * alternate through a graph are both cached).  Every later op of a batch
 * is a no-op, so its time is the call's alone.  Caught by the rotating
 * inputs: between timed replays part of the input is rewritten from a
 * secret per-attempt seed, and the output of the next timed replay is
 * validated against the new contents. */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

static const void *seen[8];
static int n_seen;

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    for (int i = 0; i < n_seen; i++)
        if (seen[i] == in)
            return 0;
    for (int64_t r = 0; r < rows; r++) {
        float a = 0;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    seen[n_seen++ % 8] = in;
    if (n_seen > 8)
        n_seen = 8;
    return 0;
}
