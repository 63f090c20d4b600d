/* cheat-fs: reaches the file system, to keep answers across calls and
 * jobs (a cache file: memoised outputs keyed by the input's first bytes),
 * or to read the run's own store where earlier jobs' outputs lie.  The
 * sums are right the first time.  On the cpu backend the kernel runs in
 * its own process, which may open nothing once its shared object is
 * loaded: the seccomp filter stops the open (failed-exit, "tried to reach
 * the file system: openat(\"/tmp/evident-cheat-fs.cache\")"); while it is
 * loaded, its constructors may open only the object itself (Landlock).
 * cpu only: device code has no file system. */
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    int fd = open("/tmp/evident-cheat-fs.cache", O_RDWR | O_CREAT, 0600);
    for (int64_t r = 0; r < rows; r++) {
        float a = 0;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    if (fd >= 0) {
        (void)!write(fd, y, (size_t)rows * sizeof *y);
        close(fd);
    }
    return 0;
}
