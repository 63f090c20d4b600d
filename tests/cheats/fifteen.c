/* cheat-fifteen: reads only the first 15/16 of each row and returns their
 * sum, at positions fixed before it sees any input (the last 1/16 is never
 * read): 1/16 less work than the case needs.  A case is run only when an
 * output that omits 1/16 of each row fails a hot sample's planted checks
 * with a chance of at least 0.999 (docs/runner.md, "Checkable cases"): a
 * plant lands among the omitted elements of a planted row with a chance
 * of 1/16 and then moves the row's expected output by more than twice its
 * bound (failed-validation naming the op, the row and its expected value). */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    int64_t keep = cols - (cols / 16 > 0 ? cols / 16 : 1);
    for (int64_t r = 0; r < rows; r++) {
        float a = 0.0f;
        for (int64_t c = 0; c < keep; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    return 0;
}
