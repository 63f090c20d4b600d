/*
 * cmd_run.c: `evident run --protocol FILE [--backend cuda|cpu] [--db FILE]
 * [--resume] [--strict]`.  Parses arguments, installs the SIGINT/SIGTERM
 * handlers (a flag and a self-pipe the supervisor polls), shows progress
 * on stderr (one updating line on a terminal, plain lines otherwise) and
 * turns the supervisor's status into the exit code: 0 the run finished
 * (whatever its status: failures are recorded evidence; with --strict,
 * only when every main and policy job completed, at once or after its
 * rescue), 1 the run could not finish (stopped by a signal, store or
 * process failure) or, with --strict, a job failed after rescue, 2 usage,
 * a path that cannot be read or written (checked before anything is
 * created: cli_args.c), a backend the worker was built without (nothing
 * is recorded), or what this host cannot run.  The worker, the peer
 * script and the measurement closure are found from this program's own
 * location (cli_paths.c): a build tree or an installation.
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
#include "runner/plan.h"
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

static const char usage[] =
    "usage: evident run --protocol FILE [--backend cuda|cpu] [--db FILE] [--resume]\n"
    "                   [--strict] [--cases SPEC] [--arms LIST [--model BUNDLE]] [--stage-ahead K]\n"
    "                   [--shard I/N --phase main|rest [--main MERGED.db]] [--gpus all|LIST]\n"
    "                   [--python PY]\n"
    "\n"
    "Runs every phase of a declared protocol (main, fit, policy, rescue, recheck),\n"
    "one worker process per job, and records everything in the store\n"
    "(default build/evidence/evidence.db).  --resume continues the store's last\n"
    "run (same protocol file) without repeating completed jobs.  SIGINT/SIGTERM\n"
    "stop it cleanly; --resume finishes it later (with the same options).\n"
    "The protocol may lie anywhere; a protocol of cases and kernels is enough\n"
    "(the rest takes the default profile).  Its \"kernels\" (C for cpu, CUDA C\n"
    "for cuda, their files relative to the protocol) are measured as arms beside\n"
    "ours: running a protocol runs its kernels' code.  The summary lists each\n"
    "failed job with its reason (docs/external-kernels.md).\n"
    "--cases 0,3,5-7 and --arms rows1,cub run a subset of the protocol as a\n"
    "protocol of its own (it names the original by id; its bundle is the\n"
    "subset's, never the whole protocol's).  A subset has too few cases to fit\n"
    "a model: its auto arm is not planned, or with --model BUNDLE (an earlier\n"
    "run's delivery.zip of the whole protocol) uses that bundle's coefficients.\n"
    "--stage-ahead K starts the next job and the torch-compile jobs among the\n"
    "next K (0..32) before their turn; each waits, CPU work only, until the\n"
    "device is free (default 32 on cuda, 0 on cpu, where the CPU is measured).\n"
    "--shard I/N runs shard I of N (the cases c with c mod N = I, and the floor\n"
    "and ceiling in every shard) into a store of its own, one phase at a time:\n"
    "--phase main, then, after 'evident merge' of every shard's main phase,\n"
    "--phase rest --main MERGED.db (policy with that fit, rescue, recheck).\n"
    "'--shard /N' takes I from SLURM_ARRAY_TASK_ID, else JOB_COMPLETION_INDEX.\n"
    "A shard's store is continued when run again (it appends, as --resume).\n"
    "--gpus all|0,1,... runs one shard per device of this host at once (each\n"
    "sees its device alone, on CPUs disjoint from the others'), then the merges,\n"
    "into --db (a new store; the shards' are <db>.shard-<I>.db).\n"
    "--python PY starts the run's python processes (Python arms, the torch-compile\n"
    "peer) with PY instead of the protocol's \"python\" (else python3 on PATH).\n"
    "exit: 0 the run finished (its status says whether every job completed;\n"
    "with --strict: and every main and policy job completed, at once or after\n"
    "its rescue), 1 it could not finish (stopped, store or process failure) or,\n"
    "with --strict, a job failed after rescue, 2 usage, a path that cannot be\n"
    "read or written, a backend this build lacks, or what this host cannot run.\n";

/* The host and the runner's adaptations to it (docs/runner.md, "A busy
 * host"): the priority the measured threads ran at, the load averages
 * seen, the re-calibrations and backoffs, then each attempt that broke a
 * sample rule with the rule, its figures, the likely cause and what to
 * do.  Nothing when no attempt recorded host facts. */
static void print_host(const ev_run_result *r)
{
    if (r->host_attempts) {
        printf("host: %zu of %zu attempts' measured threads at real-time priority (SCHED_FIFO)",
               r->fifo_attempts, r->host_attempts);
        if (r->fifo_attempts < r->host_attempts)
            printf(", the others at normal priority (%s)", r->refused);
        printf("; load average %.2f-%.2f on %lld CPUs; %zu re-calibrations after a drifted sample; %zu "
               "rescues waited %.1f s first; %zu attempts waited %.1f s for another run on their CPUs\n",
               r->load_lo, r->load_hi, (long long)r->cpus, r->recalibrations, r->backoffs, r->backoff_s,
               r->cpulock_waits, r->cpulock_s);
    }
    if (r->cpulock_why[0])
        printf("host: measured without the CPUs' locks (%s): another run on this host's CPUs may have "
               "measured at the same time (docs/runner.md, \"Two runs on one host\")\n",
               r->cpulock_why);
    if (r->rule_failures) {
        const char *p = r->rule_lines;
        printf(
            "sample rules broken by %zu attempts (each one's rule and figures, the likely cause and what to "
            "do; every sample is in the store):\n",
            r->rule_failures);
        while (*p) {
            size_t n = strcspn(p, "\n");
            printf("  %.*s\n", (int)n, p);
            p += n + (p[n] == '\n');
        }
    }
}

/* The most failed jobs the summary lists (the report lists every one). */
#define RUN_FAILURES_SHOWN 20

/* Prints, from the bundle the exporter builds in memory (the report's
 * own reading): with failures, every failed job with its reason (the
 * stage, row, values and bound of a wrong output; the compiler's first
 * errors; a missing entry and the entries there are); with table, the
 * run's case table (the report's markdown: a protocol with external
 * kernels shows them beside our arms and the peers).  A failure to build
 * the views is a note, not the run's. */
static void print_views(const char *db, int64_t run_id, int failures, int table)
{
    ev_store *st = NULL;
    ev_bundle *b = NULL;
    ev_buf md = EV_BUF_INIT, bad = EV_BUF_INIT;
    ev_err err = {""};
    const ev_member *m = NULL;
    size_t n = 0;

    if (ev_store_open(db, EV_STORE_READONLY, &st, &err) || ev_export_build(st, run_id, &b, &err) ||
        !(m = ev_bundle_members(b, &n)) ||
        (failures && ev_report_failures(m, n, RUN_FAILURES_SHOWN, &bad, &err)) ||
        (table && ev_report_markdown(m, n, &md, &err))) {
        fprintf(stderr, "evident run: no %s: %s\n", table ? "case table" : "list of failures", err.msg);
    } else {
        if (bad.len)
            printf("failed jobs (each one's reason; every attempt is in the store, and 'evident report' "
                   "shows them all):\n%s",
                   bad.data);
        if (md.len)
            fwrite(md.data, 1, md.len, stdout);
    }
    ev_buf_free(&md);
    ev_buf_free(&bad);
    ev_bundle_free(b);
    ev_store_close(st);
}

/*
 * Reads --shard "I/N" (or "/N": I from SLURM_ARRAY_TASK_ID, else
 * JOB_COMPLETION_INDEX) into *index and *count.  Returns 0, or the usage
 * exit code after the one-line reason.
 */
static int parse_shard(const char *cmd, const char *v, int64_t *index, int64_t *count)
{
    const char *slash = strchr(v, '/'), *from = NULL, *iv;
    char *end;
    long long i, n;

    if (!slash)
        return ev_cli_usage(cmd,
                            "--shard must be I/N (or /N with the index from SLURM_ARRAY_TASK_ID or "
                            "JOB_COMPLETION_INDEX), not '%s'",
                            v);
    errno = 0;
    n = strtoll(slash + 1, &end, 10);
    if (errno || end == slash + 1 || *end || n < 1 || n > EV_PLAN_MAX_SHARDS)
        return ev_cli_usage(cmd, "--shard %s: N must be an integer from 1 to %d", v, EV_PLAN_MAX_SHARDS);
    if (slash == v) {
        from = getenv("SLURM_ARRAY_TASK_ID")    ? "SLURM_ARRAY_TASK_ID"
               : getenv("JOB_COMPLETION_INDEX") ? "JOB_COMPLETION_INDEX"
                                                : NULL;
        if (!from)
            return ev_cli_usage(cmd,
                                "--shard %s: no index given and neither SLURM_ARRAY_TASK_ID nor "
                                "JOB_COMPLETION_INDEX is set",
                                v);
        iv = getenv(from);
    } else {
        iv = v;
    }
    errno = 0;
    i = strtoll(iv, &end, 10);
    if (errno || end == iv || (from ? *end != '\0' : end != slash) || *iv == '-' || *iv == '+' || i < 0 ||
        i >= n)
        return ev_cli_usage(cmd, "--shard %s: the index%s%s%s must be an integer from 0 to %lld, not '%.*s'",
                            v, from ? " (" : "", from ? from : "", from ? ")" : "", n - 1,
                            from ? (int)strlen(iv) : (int)(slash - v), iv);
    *index = i;
    *count = n;
    return 0;
}

/* The combinations of run's options that make no run, each refused in one
 * line.  Returns 0, or the usage exit code after the reason. */
static int check_options(const char *cmd, const ev_run_opts *o)
{
    if (o->model_bundle && !o->cases && !o->arms)
        return ev_cli_usage(cmd, "--model is for a subset's auto arm: give --cases or --arms too");
    if (o->shard_count && !o->shard_phase)
        return ev_cli_usage(cmd,
                            "--shard needs --phase main or --phase rest (a shard runs one phase at a time)");
    if (o->shard_phase && !o->shard_count)
        return ev_cli_usage(cmd, "--phase is for a shard: give --shard I/N too");
    if (o->shard_phase && !ev_is_phase(o->shard_phase, EV_PHASE_MAIN) && strcmp(o->shard_phase, "rest"))
        return ev_cli_usage(cmd, "--phase must be main or rest, not '%s'", o->shard_phase);
    if (o->shard_phase && !strcmp(o->shard_phase, "rest") && !o->main_db)
        return ev_cli_usage(
            cmd, "--phase rest needs --main MERGED.db (evident merge of every shard's main phase)");
    if (o->main_db && !(o->shard_phase && !strcmp(o->shard_phase, "rest")))
        return ev_cli_usage(cmd, "--main is for --phase rest");
    if (strcmp(o->backend, "cpu") && strcmp(o->backend, "cuda"))
        return ev_cli_usage(cmd, "--backend must be cuda or cpu, not '%s'", o->backend);
    return 0;
}

/* --gpus: one shard per device at once (ev_cli_run_gpus), with the
 * options that apply to it.  Returns the exit code. */
static int run_gpus(const char *cmd, const ev_run_opts *o, const char *db, const char *gpus,
                    const char *stage_arg, int strict)
{
    int code;
    ev_gpus_run g;
    if (o->shard_count || o->resume || o->cases || o->arms)
        return ev_cli_usage(cmd,
                            "--gpus makes its own shards: not with --shard, --resume, --cases or --arms");
    if ((code = ev_cli_output(cmd, "--db", db)))
        return code;
    memset(&g, 0, sizeof g);
    g.protocol = o->protocol_path;
    g.backend = o->backend;
    g.db = db;
    g.stage = stage_arg;
    g.python = o->python;
    g.strict = strict;
    if ((code = ev_cli_gpus_parse(cmd, gpus, o->backend, g.dev, &g.n)))
        return code;
    return ev_cli_run_gpus(cmd, &g);
}

/* Prints the run's summary line, where its wall went, the subset note and
 * every skip with its reason. */
static void print_summary(const ev_run_opts *o, const ev_run_result *res)
{
    printf(
        "run %lld: %s%s%s (%zu jobs this invocation, %zu failed, %zu skipped; wall %.2f s, demanded %.2f s, "
        "ratio %.3f)\n",
        (long long)res->run_id, res->status, res->rescue_status[0] ? ", " : "", res->rescue_status,
        res->jobs_run, res->failures, res->skipped, res->wall_s, res->demanded_s,
        res->demanded_s > 0 ? res->wall_s / res->demanded_s : 0.0);
    {
        /* where the wall went (docs/runner.md, "Where a run's time goes") */
        double beyond = res->jobs_s - res->demanded_s;
        double sup = res->wall_s - res->jobs_s - res->ahead_s - res->env_s - res->fit_s;
        printf("time: protocol %.2f s; job processes %.2f s (%.2f s beyond the protocol: device open %.2f s, "
               "compile %.2f s, the rest %.2f s); ",
               res->demanded_s, res->jobs_s, beyond, res->open_s, res->compile_s,
               beyond - res->open_s - res->compile_s);
        if (res->ahead_cases)
            printf("compile ahead %.2f s (%zu cases, %zu failed); ", res->ahead_s, res->ahead_cases,
                   res->ahead_failed);
        printf("environment %.2f s; fit %.2f s; supervisor %.2f s\n", res->env_s, res->fit_s, sup);
        if (res->ahead_failed)
            printf("compile ahead: %s (that case's torch jobs compile cold and record it)\n",
                   res->ahead_note);
    }
    if ((o->cases || o->arms) && !o->model_bundle)
        printf(
            "subset: auto is not planned (a subset has too few cases for a fit of its own); --model BUNDLE "
            "(an earlier run's delivery.zip of the whole protocol) measures it with that bundle's model\n");
    if (res->skipped) {
        /* A skip is not a failure, and it is never silent. */
        const char *p = res->skips;
        printf("skipped (cannot run on this host; not failures; every reason is in the store and "
               "validation.json):\n");
        while (*p) {
            size_t n = strcspn(p, "\n");
            printf("  %.*s\n", (int)n, p);
            p += n + (p[n] == '\n');
        }
    }
}

/* What run says when ev_run returned rc with res: a stop, a refusal or a
 * failure in one line on stderr, else the summary (a shard's phase in
 * one line), the host, the case table of a run with external kernels, and
 * with --strict a job failed after its rescue.  Returns the exit code. */
static int report_run(const ev_run_opts *o, ev_status rc, const ev_run_result *res, const ev_err *err,
                      const char *db, int strict, const prog_ctx *pc)
{
    if (pc->tty && pc->last_len)
        fputc('\n', stderr);
    if (res->fit_note[0])
        fprintf(stderr, "evident run: %s\n", res->fit_note);
    if (rc == EV_EINTR) {
        fprintf(stderr,
                "evident run: stopped by a signal; run %lld is incomplete (%zu jobs this time); "
                "'evident run --resume' finishes it\n",
                (long long)res->run_id, res->jobs_run);
        return EV_EXIT_FAIL;
    }
    if (rc == EV_EUNSUPPORTED) {
        fprintf(stderr, "evident run: %s\n", err->msg);
        return EV_EXIT_USAGE;
    }
    if (rc) {
        fprintf(stderr, "evident run: %s: %s\n", ev_strerror(rc), err->msg);
        return rc == EV_EUSAGE || rc == EV_EFORMAT || rc == EV_EUNSUPPORTED ? EV_EXIT_USAGE : EV_EXIT_FAIL;
    }
    if (o->shard_count && !res->finished) {
        printf("run %lld: shard %lld/%lld, phase %s done (%zu jobs of its partition so far, %zu this "
               "invocation, "
               "%zu failed; wall %.2f s, demanded %.2f s)\n",
               (long long)res->run_id, (long long)o->shard_index, (long long)o->shard_count, o->shard_phase,
               res->shard_jobs, res->jobs_run, res->failures, res->wall_s, res->demanded_s);
        return EV_EXIT_OK;
    }
    print_summary(o, res);
    print_host(res);
    if (res->finished && (res->failures || res->n_kernels))
        print_views(db, res->run_id, res->failures > 0, res->n_kernels > 0);
    if (strict && strcmp(res->status, "completed") && strcmp(res->rescue_status, "completed-after-rescue")) {
        fprintf(stderr,
                "evident run: --strict: run %lld is %s%s%s: a job failed after its rescue (every attempt and "
                "its reason is in the store)\n",
                (long long)res->run_id, res->status, res->rescue_status[0] ? ", " : "", res->rescue_status);
        return EV_EXIT_FAIL;
    }
    return EV_EXIT_OK;
}

int ev_cmd_run(int argc, char **argv)
{
    ev_run_opts o;
    ev_run_result res;
    ev_err err = {""};
    prog_ctx pc = {0, 0};
    static const char default_db[] = "build/evidence/evidence.db";
    enum {
        OPT_PROTOCOL,
        OPT_BACKEND,
        OPT_DB,
        OPT_RESUME,
        OPT_STRICT,
        OPT_CASES,
        OPT_ARMS,
        OPT_MODEL,
        OPT_STAGE,
        OPT_SHARD,
        OPT_PHASE,
        OPT_MAIN,
        OPT_GPUS,
        OPT_PYTHON
    };
    static const ev_cli_opt opts[] = {{"--protocol", 1},    {"--backend", 1}, {"--db", 1},    {"--resume", 0},
                                      {"--strict", 0},      {"--cases", 1},   {"--arms", 1},  {"--model", 1},
                                      {"--stage-ahead", 1}, {"--shard", 1},   {"--phase", 1}, {"--main", 1},
                                      {"--gpus", 1},        {"--python", 1}};
    ev_cli cli;
    ev_cli_paths paths;
    const char *v = NULL;
    const char *db = default_db;
    int k, code;
    struct sigaction sa;
    ev_status rc;
    int strict = 0;
    long stage = -1;
    const char *gpus = NULL, *stage_arg = NULL;

    memset(&o, 0, sizeof o);
    o.backend = "cpu";
    ev_cli_init(&cli, "evident run", opts, sizeof opts / sizeof opts[0], argc, argv);
    while ((k = ev_cli_step(&cli, usage, &v, &code)) != EV_CLI_END) {
        switch (k) {
        case EV_CLI_EXIT:
            return code;
        case EV_CLI_POSITIONAL:
            return ev_cli_unexpected(&cli, v);
        case OPT_PROTOCOL:
            o.protocol_path = v;
            break;
        case OPT_BACKEND:
            o.backend = v;
            break;
        case OPT_DB:
            db = v;
            break;
        case OPT_RESUME:
            o.resume = 1;
            break;
        case OPT_STRICT:
            strict = 1;
            break;
        case OPT_CASES:
            o.cases = v;
            break;
        case OPT_ARMS:
            o.arms = v;
            break;
        case OPT_MODEL:
            o.model_bundle = v;
            break;
        case OPT_SHARD:
            if ((code = parse_shard(cli.cmd, v, &o.shard_index, &o.shard_count)))
                return code;
            break;
        case OPT_PHASE:
            o.shard_phase = v;
            break;
        case OPT_MAIN:
            o.main_db = v;
            break;
        case OPT_GPUS:
            gpus = v;
            break;
        case OPT_PYTHON:
            if (!v[0])
                return ev_cli_usage(cli.cmd, "--python needs an interpreter's name or path");
            o.python = v;
            break;
        case OPT_STAGE: {
            char *end;
            stage_arg = v;
            errno = 0;
            stage = strtol(v, &end, 10);
            if (errno || end == v || *end || stage < 0 || stage > EV_MAX_STAGE_AHEAD)
                return ev_cli_usage(cli.cmd, "--stage-ahead must be an integer from 0 to %d, not '%s'",
                                    EV_MAX_STAGE_AHEAD, v);
            break;
        }
        }
    }
    if (!o.protocol_path)
        return ev_cli_usage(cli.cmd, "--protocol FILE is required");
    if ((code = check_options(cli.cmd, &o)))
        return code;
    if (ev_cli_is_std(o.protocol_path) || (o.model_bundle && ev_cli_is_std(o.model_bundle)) ||
        (o.main_db && ev_cli_is_std(o.main_db)) || ev_cli_is_std(db))
        return ev_cli_usage(cli.cmd, "'-' is not a file here: the protocol, --model and --db are files");
    if ((code = ev_cli_input(cli.cmd, "--protocol", o.protocol_path)) ||
        (o.model_bundle && (code = ev_cli_input(cli.cmd, "--model", o.model_bundle))) ||
        (o.main_db && (code = ev_cli_input(cli.cmd, "--main", o.main_db))) ||
        (code = ev_cli_find_paths(cli.cmd, &paths)))
        return code;
    /* The default store's directory is created; a given --db must be in an existing one. */
    if (!strcmp(db, default_db)) {
        mkdir("build", 0777);
        mkdir("build/evidence", 0777);
    }
    if (gpus)
        return run_gpus(cli.cmd, &o, db, gpus, stage_arg, strict);
    if ((code = ev_cli_store_rw(cli.cmd, "--db", db)))
        return code;
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
    o.worker_path = paths.worker;
    o.source_root = paths.source_root;
    o.peer_script = paths.peer_script;
    o.stop = &stop_flag;
    o.stop_fd = stop_pipe[0];
    o.progress = on_progress;
    o.progress_ctx = &pc;
    o.stage_ahead = stage >= 0 ? (int)stage : ev_run_stage_default(o.backend);
    rc = ev_run(&o, &res, &err);
    return report_run(&o, rc, &res, &err, db, strict, &pc);
}
