/* cheat-first-set (cuda): see firstset.c: the work only for the input
 * pointer of its first launch.  Caught by the check node as there. */
#include <stdint.h>

__device__ const void *first;
__device__ unsigned finished;

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = blockIdx.x;
    const void *f = *(const void *volatile *)&first;
    if (f != 0 && f != in)
        return;
    const float *row = (const float *)in + r * stride;
    float a = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += 32)
        a += row[c];
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o);
    if (threadIdx.x == 0) {
        ((float *)out)[r] = a;
        __threadfence();
        if (atomicAdd(&finished, 1u) + 1 == gridDim.x && f == 0)
            first = in;
    }
}
