/*
 * cmd_run.c: `evident run --protocol FILE [--backend cuda|cpu] [--db FILE]
 * [--resume] [--strict]`.  Parses arguments, installs the SIGINT/SIGTERM
 * handlers (a flag and a self-pipe the supervisor polls), shows progress
 * on stderr (one updating line on a terminal, plain lines otherwise) and
 * turns the supervisor's status into the exit code: 0 the run finished
 * (whatever its status: failures are recorded evidence; with --strict,
 * only when every main and policy job completed, at once or after its
 * rescue), 1 the run could not finish (stopped by a signal, store or
 * process failure) or, with --strict, a job failed after rescue, 2 usage
 * or unreadable path.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle/export.h"
#include "evidence/report.h"
#include "cli.h"
#include "runner/supervisor.h"
#include "store/store.h"

static volatile sig_atomic_t stop_flag;
static int stop_pipe[2] = {-1, -1};

/* SIGINT/SIGTERM: ask the supervisor to stop (async-signal-safe). */
static void on_signal(int sig)
{
    int saved = errno;
    (void)sig;
    stop_flag = 1;
    if (stop_pipe[1] >= 0) {
        ssize_t w = write(stop_pipe[1], "x", 1);
        (void)w;
    }
    errno = saved;
}

typedef struct prog_ctx {
    int tty;
    size_t last_len;
} prog_ctx;

/* Prints progress: an updating line on a terminal, else a line per ended job. */
static void on_progress(void *ctx, const ev_progress *p)
{
    prog_ctx *c = ctx;
    char eta[32] = "?";

    if (p->eta_s >= 0)
        snprintf(eta, sizeof eta, "%.0fs", p->eta_s);
    if (c->tty) {
        char line[256];
        int n = snprintf(line, sizeof line, "evident run: %zu/%zu  %s %s  failures %zu  eta %s", p->done,
                         p->total, p->ended ? (p->outcome ? p->outcome : "") : "running", p->job_key,
                         p->failures, eta);
        size_t len = n > 0 ? (size_t)n : 0;
        fprintf(stderr, "\r%s%*s", line, c->last_len > len ? (int)(c->last_len - len) : 0, "");
        c->last_len = len;
    } else if (p->ended) {
        fprintf(stderr, "evident run: %zu/%zu %s %s (failures %zu, eta %s)\n", p->done, p->total, p->job_key,
                p->outcome ? p->outcome : "?", p->failures, eta);
    }
    fflush(stderr);
}

/* build/evident-worker next to this executable.  Returns 0 on success. */
static int worker_path(char *out, size_t cap)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash;

    if (n <= 0)
        return -1;
    self[n] = '\0';
    slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    if ((size_t)snprintf(out, cap, "%s/evident-worker", self) >= cap)
        return -1;
    return 0;
}

static const char usage[] =
    "usage: evident run --protocol FILE [--backend cuda|cpu] [--db FILE] [--resume]\n"
    "                   [--strict] [--cases SPEC] [--arms LIST [--model BUNDLE]] [--stage-ahead K]\n"
    "\n"
    "Runs every phase of a declared protocol (main, fit, policy, rescue, recheck),\n"
    "one worker process per job, and records everything in the store\n"
    "(default build/evidence/evidence.db).  --resume continues the store's last\n"
    "run (same protocol file) without repeating completed jobs.  SIGINT/SIGTERM\n"
    "stop it cleanly; --resume finishes it later (with the same options).\n"
    "--cases 0,3,5-7 and --arms rows1,cub run a subset of the protocol as a\n"
    "protocol of its own (it names the original by id; its bundle is the\n"
    "subset's, never the whole protocol's).  A subset has too few cases to fit\n"
    "a model: its auto arm is not planned, or with --model BUNDLE (an earlier\n"
    "run's delivery.zip of the whole protocol) uses that bundle's coefficients.\n"
    "--stage-ahead K starts the next job and the torch-compile jobs among the\n"
    "next K (0..16) before their turn; each waits, CPU work only, until the\n"
    "device is free (default 12 on cuda, 0 on cpu, where the CPU is measured).\n"
    "exit: 0 the run finished (its status says whether every job completed;\n"
    "with --strict: and every main and policy job completed, at once or after\n"
    "its rescue), 1 it could not finish (stopped, store or process failure) or,\n"
    "with --strict, a job failed after rescue, 2 usage.\n";

/* Prints the run's case table (the report's markdown, from the bundle the
 * exporter builds in memory): a protocol with external kernels shows them
 * beside our arms and the peers.  A failure is a note, not the run's. */
static void print_table(const char *db, int64_t run_id)
{
    ev_store *st = NULL;
    ev_bundle *b = NULL;
    ev_buf md = EV_BUF_INIT;
    ev_err err = {""};
    const ev_member *m;
    size_t n;

    if (ev_store_open(db, EV_STORE_READONLY, &st, &err) || ev_export_build(st, run_id, &b, &err) ||
        !(m = ev_bundle_members(b, &n)) || ev_report_markdown(m, n, &md, &err))
        fprintf(stderr, "evident run: no case table: %s\n", err.msg);
    else
        fwrite(md.data, 1, md.len, stdout);
    ev_buf_free(&md);
    ev_bundle_free(b);
    ev_store_close(st);
}

int ev_cmd_run(int argc, char **argv)
{
    ev_run_opts o;
    ev_run_result res;
    ev_err err = {""};
    prog_ctx pc = {0, 0};
    char wpath[PATH_MAX];
    const char *db = "build/evidence/evidence.db";
    struct sigaction sa;
    ev_status rc;
    int strict = 0;
    long stage = -1;

    memset(&o, 0, sizeof o);
    o.backend = "cpu";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return EV_EXIT_OK;
        } else if (!strcmp(a, "--version")) {
            printf("evident run %s\n", EV_VERSION);
            return EV_EXIT_OK;
        } else if (!strcmp(a, "--resume")) {
            o.resume = 1;
        } else if (!strcmp(a, "--strict")) {
            strict = 1;
        } else if (!v) {
            fprintf(stderr, "evident run: %s needs a value (try --help)\n", a);
            return EV_EXIT_USAGE;
        } else if (!strcmp(a, "--protocol")) {
            o.protocol_path = v, i++;
        } else if (!strcmp(a, "--backend")) {
            o.backend = v, i++;
        } else if (!strcmp(a, "--db")) {
            db = v, i++;
        } else if (!strcmp(a, "--cases")) {
            o.cases = v, i++;
        } else if (!strcmp(a, "--arms")) {
            o.arms = v, i++;
        } else if (!strcmp(a, "--model")) {
            o.model_bundle = v, i++;
        } else if (!strcmp(a, "--stage-ahead")) {
            char *end;
            errno = 0;
            stage = strtol(v, &end, 10);
            if (errno || end == v || *end || stage < 0 || stage > EV_MAX_STAGE_AHEAD) {
                fprintf(stderr, "evident run: --stage-ahead must be an integer from 0 to %d, not '%s'\n",
                        EV_MAX_STAGE_AHEAD, v);
                return EV_EXIT_USAGE;
            }
            i++;
        } else {
            fprintf(stderr, "evident run: unknown argument '%s' (try --help)\n", a);
            return EV_EXIT_USAGE;
        }
    }
    if (!o.protocol_path) {
        fprintf(stderr, "evident run: --protocol FILE is required (try --help)\n");
        return EV_EXIT_USAGE;
    }
    if (o.model_bundle && !o.cases && !o.arms) {
        fprintf(stderr, "evident run: --model is for a subset's auto arm: give --cases or --arms too\n");
        return EV_EXIT_USAGE;
    }
    if (strcmp(o.backend, "cpu") && strcmp(o.backend, "cuda")) {
        fprintf(stderr, "evident run: --backend must be cuda or cpu, not '%s'\n", o.backend);
        return EV_EXIT_USAGE;
    }
    if (access(o.protocol_path, R_OK)) {
        fprintf(stderr, "evident run: cannot read %s: %s\n", o.protocol_path, strerror(errno));
        return EV_EXIT_USAGE;
    }
    if (worker_path(wpath, sizeof wpath) || access(wpath, X_OK)) {
        fprintf(stderr, "evident run: build/evident-worker is missing beside this program (run make)\n");
        return EV_EXIT_USAGE;
    }
    if (access("db/schema.sql", R_OK)) {
        fprintf(stderr, "evident run: run it from the repository root (db/schema.sql not found)\n");
        return EV_EXIT_USAGE;
    }
    /* The default store's directory is created; a given --db must be in an existing one. */
    if (!strcmp(db, "build/evidence/evidence.db")) {
        mkdir("build", 0777);
        mkdir("build/evidence", 0777);
    }
    if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK)) {
        fprintf(stderr, "evident run: pipe: %s\n", strerror(errno));
        return EV_EXIT_FAIL;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    pc.tty = isatty(2);
    o.db_path = db;
    o.worker_path = wpath;
    o.source_root = ".";
    o.python = "python3";
    o.stop = &stop_flag;
    o.stop_fd = stop_pipe[0];
    o.progress = on_progress;
    o.progress_ctx = &pc;
    o.stage_ahead = stage >= 0 ? (int)stage : ev_run_stage_default(o.backend);
    rc = ev_run(&o, &res, &err);
    if (pc.tty && pc.last_len)
        fputc('\n', stderr);
    if (res.fit_note[0])
        fprintf(stderr, "evident run: %s\n", res.fit_note);
    if (rc == EV_EINTR) {
        fprintf(stderr,
                "evident run: stopped by a signal; run %lld is incomplete (%zu jobs this time); "
                "'evident run --resume' finishes it\n",
                (long long)res.run_id, res.jobs_run);
        return EV_EXIT_FAIL;
    }
    if (rc) {
        fprintf(stderr, "evident run: %s: %s\n", ev_strerror(rc), err.msg);
        return rc == EV_EUSAGE || rc == EV_EFORMAT ? EV_EXIT_USAGE : EV_EXIT_FAIL;
    }
    printf(
        "run %lld: %s%s%s (%zu jobs this invocation, %zu failed, %zu skipped; wall %.2f s, demanded %.2f s, "
        "ratio %.3f)\n",
        (long long)res.run_id, res.status, res.rescue_status[0] ? ", " : "", res.rescue_status, res.jobs_run,
        res.failures, res.skipped, res.wall_s, res.demanded_s,
        res.demanded_s > 0 ? res.wall_s / res.demanded_s : 0.0);
    {
        /* where the wall went (docs/runner.md, "Where a run's time goes") */
        double beyond = res.jobs_s - res.demanded_s;
        double sup = res.wall_s - res.jobs_s - res.ahead_s - res.env_s - res.fit_s;
        printf("time: protocol %.2f s; job processes %.2f s (%.2f s beyond the protocol: device open %.2f s, "
               "compile %.2f s, the rest %.2f s); ",
               res.demanded_s, res.jobs_s, beyond, res.open_s, res.compile_s,
               beyond - res.open_s - res.compile_s);
        if (res.ahead_cases)
            printf("compile ahead %.2f s (%zu cases, %zu failed); ", res.ahead_s, res.ahead_cases,
                   res.ahead_failed);
        printf("environment %.2f s; fit %.2f s; supervisor %.2f s\n", res.env_s, res.fit_s, sup);
        if (res.ahead_failed)
            printf("compile ahead: %s (that case's torch jobs compile cold and record it)\n", res.ahead_note);
    }
    if ((o.cases || o.arms) && !o.model_bundle)
        printf(
            "subset: auto is not planned (a subset has too few cases for a fit of its own); --model BUNDLE "
            "(an earlier run's delivery.zip of the whole protocol) measures it with that bundle's model\n");
    if (res.skipped) {
        /* A skip is not a failure, and it is never silent. */
        const char *p = res.skips;
        printf("skipped (cannot run on this host; not failures; every reason is in the store and "
               "validation.json):\n");
        while (*p) {
            size_t n = strcspn(p, "\n");
            printf("  %.*s\n", (int)n, p);
            p += n + (p[n] == '\n');
        }
    }
    if (res.n_kernels && res.finished)
        print_table(db, res.run_id);
    if (strict && strcmp(res.status, "completed") && strcmp(res.rescue_status, "completed-after-rescue")) {
        fprintf(stderr,
                "evident run: --strict: run %lld is %s%s%s: a job failed after its rescue (every attempt and "
                "its reason is in the store)\n",
                (long long)res.run_id, res.status, res.rescue_status[0] ? ", " : "", res.rescue_status);
        return EV_EXIT_FAIL;
    }
    return EV_EXIT_OK;
}
