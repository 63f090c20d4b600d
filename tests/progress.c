/*
 * progress.c: srunner_run_all with progress (progress.h).  A
 * thread of the runner's process prints, every 10 s until the run ends,
 * "  <program>: N tests ended, T s" on stdout; N is read from a TAP log
 * (one line per ended test) that check writes as each test ends, in a
 * temporary file removed afterwards.  Test processes are forked from the
 * runner's thread only, so they carry no progress thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define EV_PROGRESS_S 10

typedef struct beat {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    char tap[64];
    struct timespec t0;
} beat;

/* Tests ended so far: the lines of the TAP log that start "ok" or "not ok". */
static size_t ended(const char *tap)
{
    FILE *f = fopen(tap, "r");
    char line[4096];
    size_t n = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        n += !strncmp(line, "ok", 2) || !strncmp(line, "not ok", 6);
    fclose(f);
    return n;
}

/* The progress thread: a line every EV_PROGRESS_S s until b->done. */
static void *beat_main(void *arg)
{
    beat *b = arg;
    struct timespec at = b->t0;

    pthread_mutex_lock(&b->mu);
    for (;;) {
        at.tv_sec += EV_PROGRESS_S;
        while (!b->done && pthread_cond_timedwait(&b->cv, &b->mu, &at) != ETIMEDOUT)
            ;
        if (b->done)
            break;
        fprintf(stdout, "  %s: %zu tests ended, %ld s\n", program_invocation_short_name, ended(b->tap),
                (long)(at.tv_sec - b->t0.tv_sec));
        fflush(stdout);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

void ev_check_run_all(SRunner *sr)
{
    beat b;
    pthread_t th;
    pthread_condattr_t ca;
    int fd, started;

    memset(&b, 0, sizeof b);
    snprintf(b.tap, sizeof b.tap, "/tmp/evident-check-tap-XXXXXX");
    fd = mkstemp(b.tap);
    if (fd >= 0) {
        close(fd);
        srunner_set_tap(sr, b.tap);
    }
    pthread_mutex_init(&b.mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b.cv, &ca);
    pthread_condattr_destroy(&ca);
    clock_gettime(CLOCK_MONOTONIC, &b.t0);
    fflush(stdout); /* nothing buffered is copied into the forked tests */
    started = pthread_create(&th, NULL, beat_main, &b) == 0;
    srunner_run_all(sr, CK_NORMAL);
    pthread_mutex_lock(&b.mu);
    b.done = 1;
    pthread_cond_signal(&b.cv);
    pthread_mutex_unlock(&b.mu);
    if (started)
        pthread_join(th, NULL);
    pthread_cond_destroy(&b.cv);
    pthread_mutex_destroy(&b.mu);
    if (fd >= 0)
        unlink(b.tap);
}

int ev_check_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;

    ev_check_run_all(sr);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed;
}
