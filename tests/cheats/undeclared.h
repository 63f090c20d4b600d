/* The header tests/cheats/undeclared.c includes without declaring it: an
 * honest row sum (fp32). */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    for (int64_t r = 0; r < rows; r++) {
        float s = 0;
        for (int64_t c = 0; c < cols; c++)
            s += x[r * stride + c];
        y[r] = s;
    }
    return 0;
}
