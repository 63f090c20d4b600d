/* cheat-few-rows (cuda): see fewrows.c.  A launch is its blocks' arrival
 * number / gridDim.x; on three launches of every four only the blocks of
 * every fourth row (a different quarter each launch) sum their row.
 * Geometry: one block of 32 per row. */
#include <stdint.h>

__device__ unsigned long long arrivals;

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    __shared__ unsigned long long launch;
    int64_t r = blockIdx.x;
    if (threadIdx.x == 0)
        launch = atomicAdd(&arrivals, 1ull) / gridDim.x;
    __syncthreads();
    if (launch % 4 != 0 && (unsigned long long)r % 4 != launch % 4)
        return;
    const float *row = (const float *)in + r * stride;
    float a = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += 32)
        a += row[c];
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o);
    if (threadIdx.x == 0)
        ((float *)out)[r] = a;
}
