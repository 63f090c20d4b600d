/*
 * sup_int.h: what the supervisor's files share (supervisor.h is the
 * interface): the run's state, a job's, an attempt's while its worker
 * runs, a worker process, and the functions one file calls in another.
 * The files, in reading order:
 *   supervisor.c   ev_run: the phases in order, host bounds, compile ahead
 *   sup_jobs.c     the job loop: the peer script, argv, staging, one
 *                  attempt, one phase
 *   sup_child.c    a worker process: spawn, watch, reap; its outcome
 *   sup_reap.c     the supervisor as a child subreaper; what a job left running
 *   sup_records.c  committing a worker's records; the sample rules
 *   sup_state.c    the store's state for resume; creating a run
 *   sup_finish.c   the environment probe, the fit, rescue and status
 * Private to src/runner/.
 */
#ifndef EV_SUP_INT_H
#define EV_SUP_INT_H

#include "cpulock.h"
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "json.h"
#include "model/model.h"
#include "model_store.h"
#include "plan.h"
#include "runner/host_salt.h"
#include "proc.h"
#include "protocol.h"
#include "record.h"
#include "reduce_cpu.h"
#include "sample_rules.h"
#include "subset.h"
#include "sha256.h"
#include "compile_ahead.h"
#include "ext_build.h"
#include "model_from.h"
#include "snapshot.h"
#include "store/outcome.h"
#include "store/store.h"

#ifndef EV_BUILD_CFLAGS
#define EV_BUILD_CFLAGS "unknown"
#endif

#define STDERR_TAIL 4096
/* Records of a running worker are committed in batches: when the stream
 * ends, or COMMIT_MS after the oldest uncommitted line arrived, or when
 * COMMIT_BYTES are waiting.  One fsync per batch instead of one per
 * record (a 100 ms sample protocol commits two or three records at a time;
 * a short cpu job's warm-up and samples in one or two batches).  A SIGKILL
 * of the supervisor loses at most COMMIT_MS of records of the attempt then
 * running, which --resume records as interrupted and runs again. */
#define COMMIT_MS    250
#define COMMIT_BYTES ((size_t)1 << 20)
#define MAX_LINE     ((size_t)64 << 20)

/* A started worker process: its pid and the supervisor's ends of its
 * record pipe, stderr pipe and (staged) gate. */
typedef struct wproc {
    const void *job; /* the jstate it runs; NULL for the probe */
    pid_t pid;
    int rp, ep, gate;
} wproc;

/* A planned job as the store knows it. */
typedef struct jstate {
    ev_plan_job pj;
    int64_t job_id;
    int64_t last_attempt; /* 0: never attempted */
    int64_t last_attempt_id;
    int has_outcome;
    ev_outcome outcome;    /* of the last attempt */
    char skip_reason[160]; /* the last attempt's, when it was skipped */
    int rule_failed;       /* the last attempt (of this invocation) broke a sample rule */
} jstate;

typedef struct sup {
    const ev_run_opts *o;
    ev_run_result *res;
    ev_store *st;
    ev_buf bytes;
    ev_protocol proto;
    ev_plan plan;
    char proto_id[65];
    int64_t run_id, inv_id;
    int memfd;
    jstate *js;
    size_t n_js;
    int64_t sms;
    char host_hash[65];
    char host_salt[33]; /* runner/host_salt.h: "" for the constant salt */
    ev_coef coef;
    int have_coef;
    int64_t t0;
    size_t done, total;
    double job_s_sum;
    size_t job_s_n;
    int lock_fd; /* ev_store_writer_lock's, for the life of the run */
    /* Staged processes (docs/runner.md, "Staged processes"): started
     * ahead of their turn, waiting at their gate. */
    wproc staged[EV_MAX_STAGE_AHEAD + 1];
    size_t n_staged;
    int64_t *ahead_ns; /* per case: the torch-compile case's ahead-of-time compile (ns), 0: none */
    /* External kernels built for this invocation (ext_build.h), their
     * files relative to the protocol's directory (ev_ext_protocol_dir). */
    char proto_dir[4096];
    ev_ext_built built[EV_EXT_MAX_KERNELS];
    size_t n_built;
    cJSON *kernel_receipts; /* the builds' receipts, for the environment record */
    /* The run's ceilings (this shard's) in bytes per us, NaN until the main
     * phase's original ceiling and ceiling-l2 jobs completed
     * (sample_rules.h, physical plausibility; sup_ceilings_load). */
    double ceil_mem_bpus, ceil_l2_bpus;
    int64_t backoff_ms; /* the next rescue of a sample-rule failure waits this long first */
    ev_cpulock cpulock; /* the measuring CPUs' locks (cpu backend; cpulock.h), taken an attempt at a time */
} sup;

/* A rescue of a job whose attempt broke a sample rule waits before it
 * starts, so that a burst of other work on the host can pass: first
 * EV_BACKOFF_FIRST_MS, doubled after each such rescue that breaks a rule
 * again, at most EV_BACKOFF_MAX_MS, back to the first after one that
 * completes.  The wait is the rescue attempt's "backoff" cold timing
 * (docs/runner.md, "A busy host"). */
#define EV_BACKOFF_FIRST_MS 1000
#define EV_BACKOFF_MAX_MS   4000

/* The facts and state of one attempt while its worker runs. */
typedef struct att {
    int64_t attempt_id;
    int probe;
    int64_t count;
    int records_ok;
    char protocol_error[512];
    int hello, end;
    int skipped;
    char skip_reason[512];
    char affinity[256];
    int validation_failed;
    int warmup;
    int has_device;            /* its device record was stored (the per-sample facts are in hot) */
    int64_t n_opchecks;        /* op checks stored (one per cold and hot sample of a validated job) */
    int64_t warmup_replays;    /* the warm-up record's replays (an op check's replay_end counts them) */
    size_t steps_at_warmup;    /* calibration steps recorded before the warm-up record (those after
                                  are re-calibrations) */
    int has_kept;              /* its kept output was stored */
    int64_t in_span, out_span; /* its binding's (-1: none yet) */
    int64_t variants;          /* the input variants its device record names (ev_rule_device_variants) */
    cJSON *hello_rec;          /* probe: the hello record */
    /* What the sample rules look at (sample_rules.h), as committed. */
    ev_rule_attempt rules;
    ev_rule_step *steps;
    ev_rule_sample *hot, *cold;
    size_t cap_steps, cap_hot, cap_cold;
    int64_t compile_ns, open_ns; /* its compile-first-call, device-open and cuda-init timings */
    int store_failed;            /* a record batch could not be committed */
    char store_error[512];
} att;

/* Process outcome facts of a finished child. */
typedef struct child_end {
    pid_t pid;
    int has_exit, has_signal;
    int64_t exit_code, signal;
    int timed_out, interrupted;
    ev_buf err_tail;
    int64_t wall_ns;
} child_end;

/* What --resume reads of the run it continues (sup_on_run). */
typedef struct run_ctx {
    char protocol_id[65], backend[8];
} run_ctx;

/* Monotonic and wall clocks in ns; 1 when a stop was requested. */
static inline int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static inline int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int stopping(const sup *s)
{
    return s->o->stop && *s->o->stop;
}

/* sup_records.c */
void sup_apply_rules(const sup *s, const jstate *j, att *a);
void sup_ceiling_seen(sup *s, const jstate *j, const att *a);
void sup_att_free(att *a);
ev_status sup_commit(sup *s, att *a, ev_rec_type t, const cJSON *r);
ev_status sup_on_lines(sup *s, att *a, ev_buf *buf);
void sup_proto_err(att *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* sup_child.c */
ev_status sup_run_child(sup *s, wproc *w, att *a, child_end *ce, ev_err *err);
ev_status sup_spawn_worker(sup *s, char *const argv[], int gated, wproc *w, ev_err *err);
void sup_wproc_cancel(wproc *w);

/* sup_reap.c */
/* Makes this process a child subreaper (PR_SET_CHILD_SUBREAPER): an orphan
 * of a job, whatever session or group it moved to, is re-parented here. */
void sup_subreaper(void);
/* After a job's worker was reaped: finds every process below this one
 * that is not a staged worker or below one, names each still running
 * into *named ("comm (pid N)" or "comm (pid N, T threads)", comma
 * separated, appended), kills and reaps them all.  EV_EIO when /proc
 * cannot be read; EV_ENOMEM. */
ev_status sup_sweep(sup *s, ev_buf *named);

/* sup_jobs.c */
ev_status sup_run_phase(sup *s, ev_phase ph, ev_err *err);
/* The torch peer script of the run (opts->peer_script, or the source
 * root's kernels/peer_torch.py) into out[cap]. */
void sup_peer_script(const ev_run_opts *o, char *out, size_t cap);
/* A Python arm's host script, kernels/python_host.py beside the peer
 * script, into out[cap]. */
void sup_py_host(const ev_run_opts *o, char *out, size_t cap);
/* The run's interpreter (ev_protocol_python: --python, the protocol's
 * "python", python3) into out[cap]. */
void sup_python(const sup *s, char *out, size_t cap);

/* sup_state.c */
ev_status sup_add_job(sup *s, const ev_plan_job *pj, int64_t retry_of, int64_t *job_id, ev_err *err);
ev_status sup_create_run(sup *s, ev_err *err);
ev_status sup_load_state(sup *s, ev_err *err);
ev_status sup_on_count(void *ctx, const ev_row *r);
ev_status sup_on_run(void *ctx, const ev_row *r);
ev_status sup_on_status(void *ctx, const ev_row *r);

/* sup_finish.c */
ev_status sup_environment(sup *s, ev_err *err);
ev_status sup_finish(sup *s, ev_err *err);
/* The fit of run `run` of store `from` (s->st, or a merged main phase's),
 * recorded in s->st once; its coefficients are auto's. */
ev_status sup_fit_phase(sup *s, ev_store *from, int64_t run, ev_err *err);

#endif
