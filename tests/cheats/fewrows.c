/* cheat-few-rows: on three calls of every four it sums only every fourth
 * row (a different quarter each call) and leaves the other rows' outputs
 * as they are; every fourth call does all the rows, so an output read now
 * and then is mostly fresh.  Caught by the plants: every op's planted rows
 * are drawn one per stratum of rows from the secret seed, so some planted
 * row of nearly every op is one it skipped (failed-validation naming the
 * op, the row and its expected value). */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

static uint64_t calls;

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    uint64_t n = calls++;
    for (int64_t r = 0; r < rows; r++) {
        float a = 0;
        if (n % 4 != 0 && (uint64_t)r % 4 != n % 4)
            continue;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    return 0;
}
