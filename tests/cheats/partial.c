/* cheat-partial: reads only the first three quarters of each row and
 * returns their sum, so it moves 3/4 of the bytes the case needs.  On a
 * long row of mean-zero inputs the order-free SUM bound (gamma(N) sum|x|)
 * is wider than the sum itself: this kernel would pass it, which is why
 * such a case is refused unless the protocol declares tolerances.sum_depth
 * (docs/runner.md, "Checkable cases").  Under the declared depth the
 * missing quarter is far outside the bound, and a plant among the unread
 * quarter moves its row by more than twice it: failed-validation. */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    for (int64_t r = 0; r < rows; r++) {
        float a = 0.0f;
        for (int64_t c = 0; c < cols - cols / 4; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    return 0;
}
