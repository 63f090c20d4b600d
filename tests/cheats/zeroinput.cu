/* cheat-zero-input (cuda): zeroes its input and writes zeros, so that a
 * reference computed after the kernel would agree.  The input is read back
 * after every validated launch: the job fails. */
#include <stdint.h>

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = blockIdx.x;
    float *row = (float *)in + r * stride;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        row[c] = 0.0f;
    if (threadIdx.x == 0)
        ((float *)out)[r] = 0.0f;
}
