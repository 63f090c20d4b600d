/*
 * cpulock.c: a host's measuring CPUs, taken in turns (cpulock.h).
 */
#include "cpulock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* While another run holds a lock: the poll's period. */
#define CPULOCK_POLL_NS 5000000

static int64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ev_cpulock_init(ev_cpulock *l)
{
    memset(l, 0, sizeof *l);
    l->wfd = -1;
}

/* Opens dir/name as a lock file (l->why says why not).  Returns the fd or -1. */
static int lock_file(ev_cpulock *l, const char *dir, const char *name)
{
    char path[200];
    struct stat sb;
    int fd;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    /* O_NOFOLLOW: a link another user put there is not followed;
     * read-only: flock needs no more, so a file another user made is
     * still taken; opened as it is first, created only where missing (a
     * sticky /tmp with fs.protected_regular refuses O_CREAT on another
     * user's file) */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT) {
        fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0 && errno == EEXIST) /* another run made it meanwhile */
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    }
    if (fd < 0 || fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        snprintf(l->why, sizeof l->why, "%.120s: %.120s", path,
                 fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (sb.st_uid == geteuid())
        fchmod(fd, 0644); /* readable by every user of the host, whatever the umask */
    return fd;
}

ev_status ev_cpulock_open(ev_cpulock *l, const cpu_set_t *cpus, const char *dir, ev_err *err)
{
    ev_cpulock_init(l);
    int want = CPU_COUNT(cpus);
    if (want <= 0)
        return EV_OK;
    l->fd = malloc((size_t)want * sizeof *l->fd);
    if (!l->fd)
        return ev_err_set(err, EV_ENOMEM, "out of memory for %d CPU locks", want);
    for (int c = 0; c < CPU_SETSIZE && l->n < (size_t)want; c++) {
        char name[64];
        int fd;
        if (!CPU_ISSET(c, cpus))
            continue;
        snprintf(name, sizeof name, "evident-cpu-%d.lock", c);
        if ((fd = lock_file(l, dir, name)) < 0) {
            ev_cpulock_close(l); /* l->why stays */
            return EV_OK;
        }
        l->fd[l->n++] = fd;
    }
    if ((l->wfd = lock_file(l, dir, "evident-cpu-waiters.lock")) < 0)
        ev_cpulock_close(l);
    return EV_OK;
}

int64_t ev_cpulock_take(ev_cpulock *l, int (*stop)(void *ctx), void *ctx)
{
    int64_t t0 = mono();
    int waited = 0, marked = 0;
    for (size_t i = 0; i < l->n; i++) {
        while (flock(l->fd[i], LOCK_EX | LOCK_NB)) {
            if (errno != EWOULDBLOCK && errno != EINTR) {
                /* a lock the kernel refuses: not another run's, so not
                 * waited for; the run says it measured without it */
                snprintf(l->why, sizeof l->why, "flock: %s", strerror(errno));
                break;
            }
            if (!marked) /* a holder giving back sees a waiter (until a holder's look lets it in) */
                marked = !flock(l->wfd, LOCK_SH | LOCK_NB);
            waited = 1;
            if (stop && stop(ctx)) {
                for (size_t k = 0; k < i; k++)
                    flock(l->fd[k], LOCK_UN);
                if (marked)
                    flock(l->wfd, LOCK_UN);
                return -1;
            }
            struct timespec p = {0, CPULOCK_POLL_NS};
            nanosleep(&p, NULL);
        }
    }
    l->held = 1;
    if (marked)
        flock(l->wfd, LOCK_UN);
    if (!waited)
        return 0;
    int64_t ns = mono() - t0;
    return ns > 0 ? ns : 1;
}

void ev_cpulock_give(ev_cpulock *l)
{
    if (!l->held)
        return;
    for (size_t i = 0; i < l->n; i++)
        flock(l->fd[i], LOCK_UN);
    l->held = 0;
    /* another run waits (it holds the waiters' file shared): four of its
     * polls' time before these CPUs are taken again */
    if (l->wfd < 0)
        return;
    if (!flock(l->wfd, LOCK_EX | LOCK_NB)) {
        flock(l->wfd, LOCK_UN);
    } else if (errno == EWOULDBLOCK) {
        struct timespec p = {0, 4 * CPULOCK_POLL_NS};
        nanosleep(&p, NULL);
    }
}

void ev_cpulock_close(ev_cpulock *l)
{
    ev_cpulock_give(l);
    for (size_t i = 0; i < l->n; i++)
        close(l->fd[i]);
    if (l->wfd >= 0)
        close(l->wfd);
    free(l->fd);
    l->fd = NULL;
    l->n = 0;
    l->wfd = -1;
}
