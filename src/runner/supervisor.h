/*
 * supervisor.h: `evident run` without its command line.  The supervisor
 * owns the store: it records the run, the source snapshot and the
 * environment before any measurement, runs every phase (main, fit, policy,
 * rescue, recheck) as one worker process per job, commits each worker
 * record as it arrives and then the process record, and sets the run
 * status once.  It never prints: progress goes through a callback.
 */
#ifndef EV_SUPERVISOR_H
#define EV_SUPERVISOR_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct ev_progress {
    const char *phase;
    const char *job_key;     /* the job starting or just ended */
    int ended;               /* 0: starting, 1: ended */
    const char *outcome;     /* when ended */
    size_t done, total;      /* jobs finished / planned in this invocation's view */
    size_t failures;         /* jobs ended in a failed-* outcome so far */
    double elapsed_s, eta_s; /* eta_s < 0: unknown */
} ev_progress;

typedef struct ev_run_opts {
    const char *protocol_path;
    const char *cases, *arms; /* --cases SPEC, --arms LIST: run a subset (runner/subset.h); NULL: all */
    const char *
        model_bundle; /* --model BUNDLE: a subset's auto uses its coefficients (model_from.h); NULL: no auto */
    const char *backend; /* "cpu" | "cuda" */
    const char *db_path;
    int resume;
    const char *worker_path;     /* build/evident-worker */
    const char *source_root;     /* the repository root (snapshot, git) */
    const char *python;          /* --python: the interpreter of the run's python processes; NULL: the
                                    protocol's "python", else python3 (ev_protocol_python) */
    const char *peer_script;     /* peer_torch.py; NULL: source_root/kernels/peer_torch.py */
    volatile sig_atomic_t *stop; /* set by SIGINT/SIGTERM handlers; may be NULL */
    int stop_fd;                 /* readable when stop is set (self-pipe); -1: none */
    void (*progress)(void *ctx, const ev_progress *p);
    void *progress_ctx;
    /* Staged processes (docs/runner.md): the next job and the
     * torch-compile jobs among the next stage_ahead are started ahead of
     * their turn and released when the device is free; 0: none (every
     * job starts at its turn).  ev_run_stage_default gives the backend's. */
    int stage_ahead;
    /* Shards (docs/runner.md, "Shards"): shard_count 0 runs the whole
     * protocol; N >= 1 runs shard shard_index of N (ev_plan_shard_of), one
     * phase per invocation: shard_phase "main" (the main phase, then it
     * stops) or "rest" (policy, rescue, recheck, with the fit of main_db:
     * the merged main-phase stores of all N shards).  A store that holds
     * the shard's run is continued (as --resume), never replaced. */
    int64_t shard_index, shard_count;
    const char *shard_phase;
    const char *main_db;
} ev_run_opts;

/* The most jobs staged at once, and the most stage_ahead accepts. */
#define EV_MAX_STAGE_AHEAD 32

/* The default stage_ahead of a backend: 32 on cuda, the most (CPU work of
 * other processes may overlap a GPU job's timed windows; a torch-compile
 * job's imports take about 11 s on the H100 host: 12 jobs ahead released
 * half of them before their imports were done, 24 ahead 20 of 150:
 * docs/runner.md, "Staged processes"); 0 on cpu (it may not: there the
 * CPU is what is measured). */
int ev_run_stage_default(const char *backend);

typedef struct ev_run_result {
    int64_t run_id;
    int resumed;
    int finished;           /* the run status is set */
    char status[32];        /* "completed" | "failed" | "" */
    char rescue_status[32]; /* "completed-after-rescue" | "failed-after-rescue" | "" */
    size_t jobs_run;        /* attempts started by this invocation */
    size_t failures;
    char fit_note[256]; /* why there is no fit, or "" */
    size_t skipped;     /* main and policy jobs whose outcome is skipped (peers that
                           cannot run here: not failures, never silent) */
    char skips[1024];   /* one line per distinct "arm: reason" of those, "" when none */
    double wall_s;      /* this invocation */
    double demanded_s;  /* warm-ups + samples the protocol demanded of the jobs run */
    /* Where the wall went (the run summary's breakdown; docs/runner.md,
     * "Where a run's time goes").  The per-job figures are in the store
     * (processes.wall_ns, cold_timings). */
    double jobs_s;    /* the job processes, each from its release to its exit */
    double compile_s; /* of which the compile-first-call cold timings */
    double open_s;    /* of which device-open and cuda-init */
    double env_s;     /* the environment probe */
    double fit_s;     /* the fit phase */
    double ahead_s;   /* the compile-ahead step */
    size_t ahead_cases, ahead_failed;
    char ahead_note[256]; /* the first compile-ahead failure, "" when none */
    size_t n_kernels;     /* the protocol's external kernels (ext_kernel.h) */
    size_t shard_jobs;    /* a shard: the jobs of its partition in the phases it ran */
    /* The host and the runner's adaptations to it, this invocation
     * (docs/runner.md, "A busy host"; every one is in the store): */
    size_t host_attempts;    /* attempts whose device record holds host facts */
    size_t fifo_attempts;    /* of which the measured threads ran at real-time priority */
    char refused[160];       /* why not, the first such attempt's own words ("" when none) */
    double load_lo, load_hi; /* the load averages seen (valid when host_attempts) */
    int64_t cpus;            /* CPUs online */
    size_t recalibrations;   /* re-calibrations after a drifted sample */
    size_t backoffs;         /* rescues of a sample-rule failure that waited first */
    double backoff_s;        /* their waits */
    size_t cpulock_waits;    /* attempts that waited for another run to leave their CPUs (cpulock.h) */
    double cpulock_s;        /* their waits */
    char cpulock_why[256];   /* "" or why the run measured without the CPU locks */
    size_t rule_failures;    /* attempts that broke a sample rule */
    char rule_lines[4096];   /* the first of them: "job attempt N: rule\n  cause\n" each */
} ev_run_result;

/*
 * Runs (or with opts->resume continues) a run.  OUT: *res (also filled on
 * EV_EINTR).  EV_EINTR when stopped by a signal (children ended and
 * recorded interrupted, store consistent); EV_EUSAGE when --resume finds
 * no run or a different protocol; EV_EUNSUPPORTED when the worker was
 * built without opts->backend (nothing is created); other statuses with
 * err set.
 */
ev_status ev_run(const ev_run_opts *opts, ev_run_result *res, ev_err *err);

#endif
