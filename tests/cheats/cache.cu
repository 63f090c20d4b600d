/* cheat-cache (cuda): computes the right sums in its first launch, then
 * every block returns at once when it sees the same input pointer again
 * (output caching keyed by address: GPU MODE kernelbot PR #501, tensara
 * PR #238).  The last block of the first launch to finish records the
 * pointer, so the first launch is whole and validates.  Caught by the
 * rotating inputs: part of the input is rewritten from a secret
 * per-attempt seed between timed replays, and the next timed replay's
 * output is validated against the new contents.  Geometry: one block of
 * 32 per row. */
#include <stdint.h>

__device__ const void *seen;
__device__ unsigned finished;

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = blockIdx.x;
    if (*(const void *volatile *)&seen == in)
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
        if (atomicAdd(&finished, 1u) + 1 == gridDim.x) {
            finished = 0;
            seen = in;
        }
    }
}
