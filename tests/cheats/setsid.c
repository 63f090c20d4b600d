/* cheat-setsid: leaves a process of its own running after the job.  The
 * first call forks a child that starts a session of its own (setsid: the
 * watchdog's kill of the job's process group would miss it) and spins,
 * taking CPU from every arm measured after this one; the sums are right.
 * On the cpu backend the kernel runs in its own process whose seccomp
 * filter stops the fork: failed-exit, "tried to start a process or thread:
 * clone".  Had it run in the worker, the supervisor, a child subreaper,
 * would find the orphan after the job and fail the job naming it.  cpu
 * only: device code cannot start a process. */
#include <stdint.h>
#include <unistd.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    static int started;
    const float *x = in;
    float *y = out;
    if (!started++ && fork() == 0) {
        setsid();
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    for (int64_t r = 0; r < rows; r++) {
        float a = 0;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    return 0;
}
