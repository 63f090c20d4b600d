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
    const char *backend;      /* "cpu" | "cuda" */
    const char *db_path;
    int resume;
    const char *worker_path;     /* build/evident-worker */
    const char *source_root;     /* the repository root (snapshot, git) */
    const char *python;          /* python3 for torch-compile (unused on cpu) */
    volatile sig_atomic_t *stop; /* set by SIGINT/SIGTERM handlers; may be NULL */
    int stop_fd;                 /* readable when stop is set (self-pipe); -1: none */
    void (*progress)(void *ctx, const ev_progress *p);
    void *progress_ctx;
} ev_run_opts;

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
} ev_run_result;

/*
 * Runs (or with opts->resume continues) a run.  OUT: *res (also filled on
 * EV_EINTR).  EV_EINTR when stopped by a signal (children ended and
 * recorded interrupted, store consistent); EV_EUSAGE when --resume finds
 * no run or a different protocol; other statuses with err set.
 */
ev_status ev_run(const ev_run_opts *opts, ev_run_result *res, ev_err *err);

#endif
