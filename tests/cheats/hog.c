/* cheat-hog: asks its process for 64 GiB of memory (reserved only:
 * MAP_NORESERVE, never touched, so the test takes nothing from its host).
 * A kernel that touched what it got would take the memory of the worker,
 * the supervisor and the jobs after it, and the kernel out of memory might
 * kill any of them.  The kernel host's address space is limited to its
 * shared memory, its program's and the kernel's memory_mb (4096 MiB by
 * default: src/runner/khost.h), so the mapping fails and this kernel sums
 * honestly; where the limit is gone it shows the hole by answering row 0
 * wrong (failed-validation). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    size_t big = (size_t)64 << 30;
    void *p = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int got = p != MAP_FAILED;
    if (got)
        munmap(p, big);
    for (int64_t r = 0; r < rows; r++) {
        float a = 0.0f;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a + (got && r == 0 ? 1000.0f : 0.0f);
    }
    return 0;
}
