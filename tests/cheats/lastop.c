/* cheat-last-op: counts its calls modulo the protocol's ops per graph and
 * does the work only where a check followed before the plants (the first
 * launch, each cold sample, and the last op of each replay, whose output
 * was the only one a validation read); every other op returns at once.
 * Written against the protocol of tests/cheats/cheats.json (one cold
 * sample, 100 ops per graph).  Caught by the check node: it compares the
 * planted rows of every op's own output slot after every replay, and a
 * skipped op's slot holds the poison the last check left in those rows
 * (failed-validation naming the op, the row and its expected value). */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

static uint64_t calls;

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    uint64_t n = calls++;
    if (n >= 2 && (n - 2) % 100 != 99)
        return 0;
    for (int64_t r = 0; r < rows; r++) {
        float a = 0;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    return 0;
}
