/* cheat-zero-input: zeroes its input and writes zeros, so that a reference
 * computed afterwards from the same buffer would agree.  evident's oracle
 * is computed from the worker's own copy before the launch, and the input
 * is read back after it: the job fails. */
#include <stdint.h>
#include <string.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    if (rows > 0)
        memset((void *)in, 0, (size_t)((rows - 1) * stride + cols) * sizeof(float));
    memset(out, 0, (size_t)rows * sizeof(float));
    return 0;
}
