/*
 * progress.c: srunner_run_all with progress (progress.h).  A beat
 * process, forked from the runner before any test runs, prints every 10 s
 * until the run ends "  <program>: N tests ended, T s" on stdout; N is read
 * from a TAP log (one line per ended test) that check writes as each test
 * ends, in a temporary file removed afterwards.
 *
 * A process and not a thread: check forks every test from the runner, and
 * a fork from a process with a second thread copies whatever lock that
 * thread held at the instant of the fork.  Under AddressSanitizer a test
 * forked while the thread was starting (or in fopen) inherited a held
 * allocator lock and hung until its timeout (CI, 2026-12-01: check_bundle,
 * check_results, check_runner and check_stats).  The runner stays single
 * threaded, so every forked test starts clean.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define EV_PROGRESS_S 10

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

/* The beat process: a line every EV_PROGRESS_S s from t0 on.  The runner
 * ends it with SIGTERM; should the runner die first, the kernel sends it
 * SIGKILL (PR_SET_PDEATHSIG; the getppid test covers a runner that died
 * before the prctl). */
static void beat_main(const char *tap, pid_t runner, struct timespec t0)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != runner)
        _exit(0);
    for (long s = EV_PROGRESS_S;; s += EV_PROGRESS_S) {
        struct timespec at = {t0.tv_sec + s, t0.tv_nsec};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
            ;
        fprintf(stdout, "  %s: %zu tests ended, %ld s\n", program_invocation_short_name, ended(tap), s);
        fflush(stdout);
    }
}

void ev_check_run_all(SRunner *sr)
{
    char tap[64];
    int fd;
    pid_t runner = getpid(), beat;
    struct timespec t0;

    snprintf(tap, sizeof tap, "%s/evident-check-tap-XXXXXX", ev_test_tmp());
    fd = mkstemp(tap);
    if (fd >= 0) {
        close(fd);
        srunner_set_tap(sr, tap);
    }
    fflush(stdout); /* nothing buffered is copied into the beat or the tests */
    fflush(stderr);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    beat = fork();
    if (beat == 0)
        beat_main(tap, runner, t0); /* does not return */
    srunner_run_all(sr, CK_NORMAL);
    if (beat > 0) {
        kill(beat, SIGTERM);
        while (waitpid(beat, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (fd >= 0)
        unlink(tap);
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

const char *ev_test_tmp(void)
{
    const char *t = getenv("TMPDIR");
    return t && t[0] ? t : "/tmp";
}
