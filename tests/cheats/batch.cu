/* cheat-batch (cuda): batch-and-skip.  Every block counts itself in a
 * device global; a block's launch is its arrival number / gridDim.x, and
 * only launches 0, 100, 200, ... (one in every graph of the protocol's 100
 * ops) do the work, every block of the others returning at once.  The
 * output is right whenever all ops read the same input.  Caught by the
 * check node (see batch.c).  Geometry: one block of 32 per row. */
#include <stdint.h>

__device__ unsigned long long arrivals;

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    __shared__ unsigned long long launch;
    int64_t r = blockIdx.x;
    if (threadIdx.x == 0)
        launch = atomicAdd(&arrivals, 1ull) / gridDim.x;
    __syncthreads();
    if (launch % 100 != 0)
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
