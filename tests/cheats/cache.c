/* cheat-cache: computes the right sums for an input pointer it has not
 * seen, then returns at once whenever it sees one of its (up to 256)
 * input pointers again (output caching keyed by address: GPU MODE
 * kernelbot PR #501, tensara PR #238; a table larger than the input
 * variants a graph's ops read, so every variant is cached after one
 * replay).  Every later op of a batch is a no-op.  Caught by the plants:
 * before each epoch of every replay secret elements of every variant are
 * planted from the attempt's seed, and the check after the replay finds
 * the planted rows of every op's slot stale (failed-validation naming the
 * op, the row and its expected value). */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

static const void *seen[256];
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
    seen[n_seen++ % 256] = in;
    if (n_seen > 256)
        n_seen = 256;
    return 0;
}
