/* cheat-table (cuda): the class of impossibly fast kernels (see table.c).
 * The first launch on an input pointer (one per input variant) computes
 * every row and keeps the sums in a device table; the last block of that
 * launch to finish records the pointer, so the table is whole before it
 * is used.  Every later launch on the pointer copies the table's row into
 * the op's own output slot, four bytes a block where an honest launch
 * reads the row.  Right on every unplanted row, so only the plants catch
 * it (failed-validation); its time would otherwise fail the physical
 * plausibility rule.  Geometry: one block of 32 per row. */
#include <stdint.h>

#define TABLE_PTRS 256
#define TABLE_ROWS 1024

__device__ const void *keys[TABLE_PTRS];
__device__ float table[TABLE_PTRS][TABLE_ROWS];
__device__ unsigned n_keys;
__device__ unsigned finished;

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = blockIdx.x;
    unsigned n = *(volatile unsigned *)&n_keys;
    for (unsigned k = 0; k < n && k < TABLE_PTRS; k++)
        if (*(const void *volatile *)&keys[k] == in && rows <= TABLE_ROWS) {
            if (threadIdx.x == 0)
                ((float *)out)[r] = table[k][r];
            return;
        }
    const float *row = (const float *)in + r * stride;
    float a = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += 32)
        a += row[c];
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o);
    if (threadIdx.x == 0) {
        ((float *)out)[r] = a;
        if (n < TABLE_PTRS && rows <= TABLE_ROWS)
            table[n][r] = a;
        __threadfence();
        if (atomicAdd(&finished, 1u) + 1 == gridDim.x) {
            finished = 0;
            if (n < TABLE_PTRS && rows <= TABLE_ROWS) {
                keys[n] = in;
                n_keys = n + 1;
            }
        }
    }
}
