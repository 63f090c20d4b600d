/* cheat-fifteen (cuda): reads only the first 15/16 of each row (see
 * fifteen.c).  Geometry: one block of 32 per row. */
#include <stdint.h>

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = blockIdx.x, keep = cols - (cols / 16 > 0 ? cols / 16 : 1);
    const float *row = (const float *)in + r * stride;
    float a = 0.0f;
    for (int64_t c = threadIdx.x; c < keep; c += 32)
        a += row[c];
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o);
    if (threadIdx.x == 0 && r < rows)
        ((float *)out)[r] = a;
}
