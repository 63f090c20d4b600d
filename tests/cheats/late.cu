/* cheat-late (cuda): the side stream.  Block 0 launches the real work as a
 * child grid on the device runtime's fire-and-forget stream and returns,
 * so the timed events would hold none of it.  A device-code-only external
 * kernel is built without relocatable device code and without the device
 * runtime, so this does not compile: the job is a recorded failure with
 * the compiler's message (docs/defenses.md).  Were it built, the
 * late-work rule would see the child grid on the wall clock around a
 * synchronised replay (cudaDeviceSynchronize waits for it). */
#include <stdint.h>

__global__ void rows_sum(const float *in, float *out, int64_t cols, int64_t stride)
{
    const float *row = in + blockIdx.x * stride;
    float a = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += 32)
        a += row[c];
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o);
    if (threadIdx.x == 0)
        out[blockIdx.x] = a;
}

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        rows_sum<<<(unsigned)rows, 32, 0, cudaStreamFireAndForget>>>((const float *)in, (float *)out, cols,
                                                                       stride);
}
