/* The header tests/cheats/undeclared.cu includes without declaring it: an
 * honest row sum (fp32), one warp per row. */
#include <stdint.h>

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = (const float *)in;
    float *y = (float *)out;
    int64_t r = blockIdx.x;
    float s = 0;
    if (r >= rows)
        return;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        s += x[r * stride + c];
    for (int o = 16; o > 0; o /= 2)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0)
        y[r] = s;
}
