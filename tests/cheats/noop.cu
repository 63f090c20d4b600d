/* cheat-stale (cuda): writes nothing, hoping the output buffer still holds
 * an earlier run's answer (the "AI CUDA Engineer" stale-result class).  The
 * output is poisoned before the validated launch: failed-validation. */
#include <stdint.h>

extern "C" __global__ void cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
}
