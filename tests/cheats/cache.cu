/* cheat-cache (cuda): computes the right sums for an input pointer it has
 * not seen, then every block returns at once when it sees one of its (up
 * to 256) input pointers again (output caching keyed by address: GPU
 * MODE kernelbot PR #501, tensara PR #238; a table larger than the input
 * variants a graph's ops read).  The last block of a launch to finish
 * records the pointer, so that launch is whole and validates.  Caught by
 * the plants (see cache.c).  Geometry: one block of 32 per row. */
#include <stdint.h>

__device__ const void *seen[256];
__device__ unsigned n_seen;
__device__ unsigned finished;

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = blockIdx.x;
    unsigned n = *(volatile unsigned *)&n_seen;
    for (unsigned i = 0; i < n && i < 256; i++)
        if (*(const void *volatile *)&seen[i] == in)
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
            seen[n_seen % 256] = in;
            n_seen = n_seen + 1;
        }
    }
}
