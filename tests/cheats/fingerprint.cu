/* cheat-fingerprint (cuda): see fingerprint.c.  A direct-mapped device
 * table of outputs keyed, row by row, by the input pointer and a
 * fingerprint of eight sampled elements; a block whose row's key is in
 * the table writes the cached value and reads nothing else.  Rows past
 * MAX_ROWS are summed honestly.  Geometry: one block of 32 per row. */
#include <stdint.h>

#define ENTRIES  256
#define MAX_ROWS 128

__device__ unsigned long long keys[ENTRIES][MAX_ROWS];
__device__ float values[ENTRIES][MAX_ROWS];

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = (const float *)in;
    int64_t r = blockIdx.x, at[4] = {0, rows / 3, 2 * rows / 3, rows - 1};
    unsigned long long h = 0x9e3779b97f4a7c15ull, key;
    for (int k = 0; k < 4; k++) {
        h = (h ^ __float_as_uint(x[at[k] * stride])) * 0x100000001b3ull;
        h = (h ^ __float_as_uint(x[at[k] * stride + cols - 1])) * 0x100000001b3ull;
    }
    key = (h ^ (unsigned long long)(uintptr_t)in) | 1ull;
    unsigned e = (unsigned)((key >> 7) % ENTRIES);
    if (r < MAX_ROWS && keys[e][r] == key) {
        if (threadIdx.x == 0)
            ((float *)out)[r] = values[e][r];
        return;
    }
    const float *row = x + r * stride;
    float a = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += 32)
        a += row[c];
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o);
    if (threadIdx.x == 0) {
        ((float *)out)[r] = a;
        if (r < MAX_ROWS) {
            values[e][r] = a;
            keys[e][r] = key;
        }
    }
}
