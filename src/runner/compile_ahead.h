/*
 * compile_ahead.h: torch-compile's cases compiled before the first timed
 * job (docs/runner.md, "Compile ahead").  A few python processes at once
 * (kernels/peer_torch.py --compile-cases), each compiling its share of the
 * cases from zeros of each case's shape and strides into the run's cache
 * (files only: inductor's FX graphs, Triton's kernels).  The timed torch
 * jobs then load from the cache; each records the case's cold compile
 * time as the cold timing `compile-ahead`, apart from its own warm-cache
 * `compile-first-call`.  The compiles create CUDA contexts, so they run
 * while no job is measured: before the main phase, never beside a job.
 */
#ifndef EV_COMPILE_AHEAD_H
#define EV_COMPILE_AHEAD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol.h"
#include "status.h"

/* The run's compile cache directory: "<db>.torch-cache-run<run_id>". */
void ev_torch_cache_path(const char *db_path, int64_t run_id, char *buf, size_t cap);

typedef struct ev_ahead_opts {
    const ev_protocol *proto;
    const int *need;             /* per case index: 1 when a torch-compile job of it is still to run */
    const char *python, *script; /* the interpreter and kernels/peer_torch.py */
    const char *cache;           /* ev_torch_cache_path */
    int parallel;                /* processes (>= 1; at most one per needed case) */
    volatile sig_atomic_t *stop; /* set on SIGINT/SIGTERM; may be NULL */
} ev_ahead_opts;

typedef struct ev_ahead_result {
    size_t cases, failed;    /* compiled; failed (the timed job compiles it itself) */
    int64_t wall_ns;         /* of the whole step */
    char first_failure[256]; /* the first failure's reason, "" when none */
} ev_ahead_result;

/*
 * Compiles every case with need[i] in at most o->parallel processes, each
 * bounded by the protocol's job_timeout_s per case it compiles.  OUT:
 * ns[i] = the case's compile (the fresh function's first call, from
 * torch.compile to its result; the imports are the process's, once) as
 * its process measured it, 0 where it failed or was not needed; *res.  A failed compile is not a failure of the run: the timed
 * job of that case compiles cold and records it.  EV_EINTR when stopped
 * (every compile process ended); EV_EPROC when none could be started.
 */
ev_status ev_compile_ahead(const ev_ahead_opts *o, int64_t *ns, ev_ahead_result *res, ev_err *err);

#endif
