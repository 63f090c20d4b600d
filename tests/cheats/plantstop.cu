/* cheat-plant-stop (cuda): reads each row only up to its plant (see
 * plantstop.c).  Device code keeps the rows it saw without a plant in
 * memory of its own (at most 1 << 22 elements, 1 << 12 rows); a kept row
 * is read 32 elements a step until a step holds an element past 1 in
 * magnitude.  Geometry: one block of 32 per row. */
#include <stdint.h>

#define KEEP_ELEMS (1 << 22)
#define KEEP_ROWS  (1 << 12)
__device__ float kept[KEEP_ELEMS];
__device__ double kept_sum[KEEP_ROWS];
__device__ int have[KEEP_ROWS];

__device__ static int big(float v)
{
    return (__float_as_uint(v) & 0x7fffffffu) > 0x3f800000u;
}

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t r = blockIdx.x, lane = threadIdx.x;
    const float *row = (const float *)in + r * stride;
    int keeping = rows <= KEEP_ROWS && rows * cols <= KEEP_ELEMS;
    if (r >= rows)
        return;
    if (keeping && have[r]) {
        for (int64_t c0 = 0; c0 < cols; c0 += 32) {
            int64_t c = c0 + lane;
            float v = c < cols ? row[c] : 0.0f;
            unsigned hit = __ballot_sync(0xffffffffu, c < cols && big(v));
            if (hit) {
                int at = __ffs(hit) - 1;
                if (lane == at)
                    ((float *)out)[r] = (float)(kept_sum[r] - kept[r * cols + c] + v);
                return;
            }
        }
        if (lane == 0)
            ((float *)out)[r] = (float)kept_sum[r];
        return;
    }
    double a = 0.0;
    int planted = 0;
    for (int64_t c = lane; c < cols; c += 32) {
        a += row[c];
        planted |= big(row[c]);
        if (keeping)
            kept[r * cols + c] = row[c];
    }
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o);
    planted = __any_sync(0xffffffffu, planted);
    if (lane == 0) {
        if (keeping && !planted) {
            kept_sum[r] = a;
            __threadfence();
            have[r] = 1;
        }
        ((float *)out)[r] = (float)a;
    }
}
