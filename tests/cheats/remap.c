/* cheat-remap: tries for a writable view of the shared memory the kernel
 * host maps its inputs from.  Its outputs are a read-write mapping of that
 * memory (the inputs are mapped read-only, from a read-only descriptor);
 * growing an output's page with mremap(MREMAP_MAYMOVE) would map the
 * memory's later offsets read-write at a new address, and a view grown
 * from the control block's page reaches every input: a kernel could then
 * write its input and restore it before anyone read it back.  The kernel
 * host refuses every mremap (EPERM: docs/defenses.md), so this one gets no
 * view and sums honestly.  Where the refusal is gone it shows the hole by
 * answering row 0 wrong (failed-validation), having moved its output page
 * back. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    int viewed = 0;
    void *page = (void *)((uintptr_t)out & ~(uintptr_t)4095), *w = mremap(page, 4096, 8192, MREMAP_MAYMOVE);
    if (w != MAP_FAILED) {
        viewed = 1;
        if (mremap(w, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, page) == MAP_FAILED)
            return 1;
    }
    for (int64_t r = 0; r < rows; r++) {
        float a = 0.0f;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a + (viewed && r == 0 ? 1000.0f : 0.0f);
    }
    return 0;
}
