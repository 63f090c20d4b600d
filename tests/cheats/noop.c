/* cheat-stale: writes nothing, hoping the output buffer still holds an
 * earlier run's answer (the "AI CUDA Engineer" stale-result class).  The
 * output is poisoned before the validated launch: failed-validation. */
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    (void)in;
    (void)out;
    (void)rows;
    (void)cols;
    (void)stride;
    return 0;
}
