/*
 * cmd_gpus.c: `evident run --gpus all|LIST`: one shard per device of this
 * host, all at once, then the merges (docs/runner.md, "Shards", "One host,
 * several GPUs").  It runs this program again for each shard, the way a
 * job array would (`evident run --shard I/N --phase main|rest`), each in
 * its own process with CUDA_VISIBLE_DEVICES naming its one device (cuda)
 * and a CPU set disjoint from the others' (its slice of this process's
 * affinity); then `evident merge` of the main phase, the rest phase the
 * same way, and the merge of the whole run into --db.  Each shard's store
 * is <db>.shard-<I>.db, its output <db>.shard-<I>.log; run again, the
 * shards continue their stores.  On the cpu backend a "device" is only a
 * label: the shards differ in their CPUs, which is what the tests use.
 * The shards die with this process, however it dies (PR_SET_PDEATHSIG:
 * SIGTERM, which a shard takes as a stop), and SIGINT, SIGTERM and SIGHUP
 * sent to it are passed on to them: a scheduler that stops the run stops
 * every shard, and the same command run again continues.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "runner/merge.h"
#include "runner/plan.h"

/* The most devices --gpus takes. */
#define GPUS_MAX 64

/* Counts the devices `nvidia-smi -L` lists ("GPU <n>: ..."), or -1. */
static int count_cuda_devices(void)
{
    FILE *p = popen("nvidia-smi -L 2>/dev/null", "r");
    char line[512];
    int n = 0;
    if (!p)
        return -1;
    while (fgets(line, sizeof line, p))
        n += !strncmp(line, "GPU ", 4);
    return pclose(p) == 0 ? n : -1;
}

/* See cli.h. */
int ev_cli_gpus_parse(const char *cmd, const char *spec, const char *backend, int *dev_out, int *n)
{
    const char *p = spec;
    int k = 0, dev[GPUS_MAX];

    if (!strcmp(spec, "all")) {
        int c = strcmp(backend, "cuda") ? 1 : count_cuda_devices();
        if (c < 1)
            return ev_cli_usage(
                cmd, "--gpus all: nvidia-smi -L lists no device here: name the devices (--gpus 0,1)");
        if (c > GPUS_MAX)
            c = GPUS_MAX;
        for (k = 0; k < c; k++)
            dev_out[k] = k;
        *n = c;
        return 0;
    }
    while (*p) {
        char *end;
        long v;
        errno = 0;
        v = strtol(p, &end, 10);
        if (errno || end == p || *p == '-' || *p == '+' || v < 0 || v > 4095 || (*end && *end != ','))
            return ev_cli_usage(cmd, "--gpus must be all or a list of device numbers (0,1,3), not '%s'",
                                spec);
        if (k == GPUS_MAX)
            return ev_cli_usage(cmd, "--gpus: at most %d devices", GPUS_MAX);
        for (int i = 0; i < k; i++)
            if (dev[i] == (int)v)
                return ev_cli_usage(cmd, "--gpus %s: device %ld is named twice", spec, v);
        dev[k++] = (int)v;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return ev_cli_usage(cmd, "--gpus %s: a trailing comma", spec);
    }
    if (!k)
        return ev_cli_usage(cmd, "--gpus needs all or a list of device numbers");
    memcpy(dev_out, dev, (size_t)k * sizeof *dev);
    *n = k;
    return 0;
}

/* The shards of the phase running now (0: none or reaped), and the first
 * stopping signal this process got (0: none): the handler passes each such
 * signal on to every shard, which then stops as `evident run` does. */
static volatile pid_t gpus_pid[GPUS_MAX];
static volatile sig_atomic_t gpus_stopped;

/* SIGINT, SIGTERM, SIGHUP: forwarded to the running shards
 * (async-signal-safe: kill only). */
static void gpus_on_signal(int sig)
{
    int saved = errno;
    if (!gpus_stopped)
        gpus_stopped = sig;
    for (int i = 0; i < GPUS_MAX; i++)
        if (gpus_pid[i] > 0)
            kill(gpus_pid[i], sig);
    errno = saved;
}

/* The stopping signals, as a set. */
static void stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
}

/* Monotonic seconds. */
static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Prints the last lines of a shard's log (its reason) on stderr. */
static void log_tail(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024], keep[4][1024];
    size_t n = 0;
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        snprintf(keep[n++ % 4], sizeof keep[0], "%s", line);
    fclose(f);
    for (size_t i = n > 4 ? n - 4 : 0; i < n; i++)
        fprintf(stderr, "    %s", keep[i % 4]);
}

/*
 * Runs one phase of every shard at once: this program again with
 * `run --shard I/N --phase PHASE` (and --main for the rest), shard I with
 * its CPU slice and device.  Returns 0 when every shard exited 0, else
 * EV_EXIT_FAIL after naming each that did not and the tail of its log.
 */
static int run_phase(const char *cmd, const ev_gpus_run *g, const char *phase, const char *main_db,
                     const cpu_set_t *slices)
{
    pid_t pid[GPUS_MAX];
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    int failed = 0;

    if (sl <= 0) {
        fprintf(stderr, "%s: cannot find this program (/proc/self/exe): %s\n", cmd, strerror(errno));
        return EV_EXIT_FAIL;
    }
    self[sl] = '\0';
    for (int i = 0; i < g->n; i++) {
        char shard[32], db[4200], logp[4200], devs[16];
        snprintf(shard, sizeof shard, "%d/%d", i, g->n);
        snprintf(db, sizeof db, "%s.shard-%d.db", g->db, i);
        snprintf(logp, sizeof logp, "%s.shard-%d.log", g->db, i);
        snprintf(devs, sizeof devs, "%d", g->dev[i]);
        sigset_t stops, old;
        pid_t parent = getpid();
        stop_signals(&stops);
        /* blocked across the fork: a stop comes either before (no shard
         * started) or after the shard's pid is known to the handler */
        sigprocmask(SIG_BLOCK, &stops, &old);
        if (gpus_stopped) {
            sigprocmask(SIG_SETMASK, &old, NULL);
            pid[i] = 0;
            failed = 1;
            continue;
        }
        pid[i] = fork();
        if (pid[i] < 0) {
            fprintf(stderr, "%s: fork: %s\n", cmd, strerror(errno));
            pid[i] = 0;
            failed = 1;
            sigprocmask(SIG_SETMASK, &old, NULL);
            continue;
        }
        if (pid[i] == 0) {
            const char *argv[24];
            int a = 0, fd;
            struct sigaction dfl;
            /* the shard dies with this process, however it dies (SIGKILL
             * included): SIGTERM, which `evident run` takes as a stop */
            if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
                _exit(1);
            memset(&dfl, 0, sizeof dfl);
            dfl.sa_handler = SIG_DFL;
            sigaction(SIGINT, &dfl, NULL);
            sigaction(SIGTERM, &dfl, NULL);
            sigaction(SIGHUP, &dfl, NULL);
            sigprocmask(SIG_SETMASK, &old, NULL);
            fd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
                _exit(126);
            if (sched_setaffinity(0, sizeof slices[i], &slices[i]))
                _exit(125);
            if (!strcmp(g->backend, "cuda"))
                setenv("CUDA_VISIBLE_DEVICES", devs, 1);
            argv[a++] = self;
            argv[a++] = "run";
            argv[a++] = "--protocol";
            argv[a++] = g->protocol;
            argv[a++] = "--backend";
            argv[a++] = g->backend;
            argv[a++] = "--shard";
            argv[a++] = shard;
            argv[a++] = "--phase";
            argv[a++] = phase;
            argv[a++] = "--db";
            argv[a++] = db;
            if (main_db) {
                argv[a++] = "--main";
                argv[a++] = main_db;
            }
            if (g->stage) {
                argv[a++] = "--stage-ahead";
                argv[a++] = g->stage;
            }
            if (g->python) {
                argv[a++] = "--python";
                argv[a++] = g->python;
            }
            argv[a] = NULL;
            execv(self, (char *const *)argv);
            _exit(127);
        }
        gpus_pid[i] = pid[i];
        sigprocmask(SIG_SETMASK, &old, NULL);
    }
    for (int i = 0; i < g->n; i++) {
        int st;
        char logp[4200];
        if (!pid[i])
            continue;
        while (waitpid(pid[i], &st, 0) < 0 && errno == EINTR)
            ;
        gpus_pid[i] = 0;
        snprintf(logp, sizeof logp, "%s.shard-%d.log", g->db, i);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) {
            fprintf(stderr, "%s: shard %d/%d (device %d, phase %s) %s %d; its output, %s, ends:\n", cmd, i,
                    g->n, g->dev[i], phase, WIFEXITED(st) ? "exited" : "was killed by signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), logp);
            log_tail(logp);
            failed = 1;
        }
    }
    if (gpus_stopped)
        fprintf(stderr,
                "%s: stopped by signal %d, passed on to the shards, which stopped too; the same command run "
                "again continues their stores\n",
                cmd, (int)gpus_stopped);
    return failed || gpus_stopped ? EV_EXIT_FAIL : 0;
}

/* Merges the shards' stores into out (ev_merge); prints its line. */
static int merge_into(const char *cmd, const ev_gpus_run *g, const char *out, ev_merge_result *res)
{
    const char *paths[GPUS_MAX];
    char store[GPUS_MAX][4200];
    ev_err err = {""};
    ev_status rc;

    for (int i = 0; i < g->n; i++) {
        snprintf(store[i], sizeof store[i], "%s.shard-%d.db", g->db, i);
        paths[i] = store[i];
    }
    rc = ev_merge(paths, (size_t)g->n, out, res, &err);
    if (rc) {
        fprintf(stderr, "%s: merge: %s\n", cmd, err.msg[0] ? err.msg : ev_strerror(rc));
        return rc == EV_EUSAGE ? EV_EXIT_USAGE : EV_EXIT_FAIL;
    }
    printf("merged %d shards (%s phase) into %s in %.3f s\n", g->n,
           res->rest ? "rest" : ev_phase_name(EV_PHASE_MAIN), out, res->wall_s);
    return 0;
}

/* See cli.h. */
int ev_cli_run_gpus(const char *cmd, const ev_gpus_run *g)
{
    cpu_set_t mine, slices[GPUS_MAX];
    int cpus[CPU_SETSIZE], n_cpus = 0, code;
    char main_db[4200];
    struct stat sb;
    ev_merge_result res;
    double t0 = mono_s();

    if (stat(g->db, &sb) == 0) {
        fprintf(
            stderr,
            "%s: --db %s exists: --gpus merges into a new store (the shards' stores are %s.shard-<I>.db)\n",
            cmd, g->db, g->db);
        return EV_EXIT_USAGE;
    }
    if (sched_getaffinity(0, sizeof mine, &mine)) {
        fprintf(stderr, "%s: sched_getaffinity: %s\n", cmd, strerror(errno));
        return EV_EXIT_FAIL;
    }
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mine))
            cpus[n_cpus++] = c;
    if (n_cpus < g->n) {
        fprintf(stderr, "%s: --gpus: %d shards need %d CPUs for disjoint CPU sets, this process may use %d\n",
                cmd, g->n, g->n, n_cpus);
        return EV_EXIT_USAGE;
    }
    /* shard i: the i-th contiguous slice of this process's CPUs */
    for (int i = 0; i < g->n; i++) {
        CPU_ZERO(&slices[i]);
        for (int c = i * n_cpus / g->n; c < (i + 1) * n_cpus / g->n; c++)
            CPU_SET(cpus[c], &slices[i]);
    }
    printf("--gpus: %d shards at once", g->n);
    for (int i = 0; i < g->n; i++) {
        printf("%s shard %d: device %d, CPUs", i ? ";" : ":", i, g->dev[i]);
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &slices[i]))
                printf(" %d", c);
    }
    printf("\n");
    fflush(stdout);
    {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = gpus_on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
    }
    snprintf(main_db, sizeof main_db, "%s.main.db", g->db);
    if ((code = run_phase(cmd, g, ev_phase_name(EV_PHASE_MAIN), NULL, slices)))
        return code;
    if (stat(main_db, &sb) == 0)
        printf("the main phase's merge %s exists (an earlier --gpus run): its rest runs with it\n", main_db);
    else if ((code = merge_into(cmd, g, main_db, &res)))
        return code;
    if ((code = run_phase(cmd, g, "rest", main_db, slices)) || (code = merge_into(cmd, g, g->db, &res)))
        return code;
    printf("run: %s%s%s (%d shards, one per device; wall %.2f s); the whole run is %s\n", res.status,
           res.rescue[0] ? ", " : "", res.rescue, g->n, mono_s() - t0, g->db);
    if (g->strict && strcmp(res.status, "completed") && strcmp(res.rescue, "completed-after-rescue")) {
        fprintf(stderr, "%s: --strict: the run is %s%s%s: a job failed after its rescue\n", cmd, res.status,
                res.rescue[0] ? ", " : "", res.rescue);
        return EV_EXIT_FAIL;
    }
    return EV_EXIT_OK;
}
