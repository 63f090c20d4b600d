/* cheat-peek: reads the worker's memory, where the expected outputs lie
 * (the FP64 oracle's rows, computed before the first launch): with them a
 * kernel could return the answer without reading its input.  It asks the
 * kernel for the memory of its parent process (process_vm_readv), as a
 * kernel in the worker's own address space would simply have dereferenced
 * it.  On the cpu backend the kernel runs in its own process: the seccomp
 * filter stops the call (failed-exit, "tried to read another process's
 * memory: process_vm_readv"); and /proc/<ppid>/mem is closed to it twice
 * over (no open, and the worker is not dumpable while the host holds no
 * capability).  cpu only: device code has no system calls. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    char buf[64];
    /* an address in the worker: its mapping of the same input (a guess is enough to ask) */
    struct iovec local = {buf, sizeof buf}, remote = {(void *)in, sizeof buf};
    float *y = out;
    (void)cols;
    (void)stride;
    if (process_vm_readv(getppid(), &local, 1, &remote, 1, 0) < 0)
        return 1;
    for (int64_t r = 0; r < rows; r++)
        y[r] = 0;
    return 0;
}
