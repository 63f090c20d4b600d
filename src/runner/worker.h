/*
 * worker.h: the per-job measurement protocol (DESIGN.md "Measurement
 * protocol"), run inside build/evident-worker on one backend, streaming
 * records (record.h) to a file descriptor.  It never opens the database.
 * Fault injection that must end the process (exit, signal, hang, stop
 * after k samples) is the caller's hook: library code never exits.
 */
#ifndef EV_WORKER_H
#define EV_WORKER_H

#include <stdint.h>

#include "backend.h"
#include "oracle.h"
#include "model/model.h"
#include "protocol.h"
#include "record.h"
#include "status.h"

/* Where a fault hook is called. */
typedef enum ev_fault_stage {
    EV_STAGE_VALIDATED = 0, /* after the first validation record */
    EV_STAGE_WARMUP,        /* when the warm-up starts */
    EV_STAGE_SAMPLE         /* after hot sample n (n = 1..samples) */
} ev_fault_stage;

typedef struct ev_worker_args {
    const ev_protocol *proto;
    const ev_backend_ops *ops;
    int64_t case_index; /* -1 for floor and ceiling */
    const char *arm;
    const char *job_key;         /* echoed in hello */
    const ev_coef *coef;         /* auto: coefficients, or NULL (no fit: default) */
    const ev_proto_fault *fault; /* the active fault, or NULL */
    /* Called at each stage when fault is set; may end the process. */
    void (*fault_hook)(void *ctx, const ev_proto_fault *f, ev_fault_stage stage, int64_t n);
    void *fault_ctx;
    const char *python;      /* torch-compile: the interpreter ("python3") */
    const char *peer_script; /* torch-compile: kernels/peer_torch.py */
    const char *torch_cache; /* torch-compile: the run's compile cache directory, or NULL */
    /* Staging (docs/runner.md, "Staged processes"): the job does its
     * CPU-only preparation, then blocks reading one byte from gate_fd
     * before it touches the device; -1: no gate. */
    int gate_fd;
    int64_t spawn_ns;         /* CLOCK_REALTIME when the supervisor forked it; 0: unknown */
    int64_t entered_ns;       /* CLOCK_REALTIME when main() began */
    int64_t compile_ahead_ns; /* torch-compile: the case's ahead-of-time compile, 0: none */
    const char *kernel_lib;   /* external arm: the built kernel, or NULL */
    const char
        *kernel_error; /* external arm: a file holding the compiler's message (the build failed), or NULL */
} ev_worker_args;

/*
 * Waits at the gate (a->gate_fd; returns at once when it is -1).  OUT:
 * *waited_ns, the time spent blocked.  EV_EINTR when the gate was closed
 * without the byte that releases the job (the supervisor does not need
 * it: it exits without a record).
 */
ev_status ev_worker_gate(const ev_worker_args *a, int64_t *waited_ns, ev_err *err);

/* Writes a cold record (name, elapsed_ns) when elapsed_ns >= 0. */
ev_status ev_worker_cold(ev_rec_out *out, const char *name, int64_t elapsed_ns, ev_err *err);

/*
 * Runs one job, writing every record to out, the end record last.  A peer
 * the backend cannot run (EV_EUNSUPPORTED at bind) writes a skip record
 * with the backend's reason, then end, and returns EV_OK.  Any other
 * failure returns its status with err set and writes no end record (the
 * caller exits non-zero).
 */
ev_status ev_worker_run(const ev_worker_args *a, ev_rec_out *out, ev_err *err);

/*
 * The torch-compile job (src/runner/torch_peer.c): writes the case's input
 * bytes (ev_worker_input) to a file in a fresh temporary directory, runs
 * `python peer_script` as a child in this process's group (so the
 * supervisor's watchdog and stop end it too), relays its records byte for
 * byte, then validates the two output files it wrote (--out-first,
 * --out-final) with ev_worker_check and writes the validation records and
 * the end record.  A peer that cannot run here (torch does not import, no
 * CUDA device, the cpu backend) writes hello, skip (the host's own error
 * text) and end; so does an interpreter that cannot be started.  Returns
 * EV_OK after the end record; otherwise a failure with err set (the peer's
 * own exit status or signal named) and no end record.
 */
ev_status ev_worker_torch(const ev_worker_args *a, ev_rec_out *out, ev_err *err);

/*
 * Sets the torch peer's environment in a child about to exec python: the
 * run's compile cache under cache (cuda only; NULL: none) and one inductor
 * compile thread.  The one place both the timed job and the ahead-of-time
 * compile (compile_ahead.h) take it from, so their cache keys agree.
 * Returns 0, or -1 when setenv failed.
 */
int ev_torch_env(const char *cache, const char *backend);

/* The input bytes of case case_index of p (kernels/inputs.h, case key =
 * case index): ((R-1) x stride + N) elements, nothing when R = 0.
 * OUT: *shape, *buf (malloc'd, at least 1 byte), *len. */
ev_status ev_worker_input(const ev_protocol *p, int64_t case_index, ev_shape *shape, void **buf, size_t *len,
                          ev_err *err);

/* Validates R outputs against the FP64 oracle (kernels/oracle.h), the SUM
 * bound widened by the protocol's sum_bound_factor when it is above 1;
 * rows: the oracle's rows of in (ev_worker_expect), or NULL to compute
 * them from in.  OUT: *v (a shape the oracle refuses counts every row as a
 * mismatch). */
void ev_worker_check(const ev_protocol *p, const ev_shape *s, const void *in, const ev_oracle_row *rows,
                     const void *out, ev_validation *v);

/* The oracle's rows of the input at in (ev_oracle_rows), for
 * ev_worker_check's rows: a job computes them before its gate.  OUT:
 * *rows (malloc'd). */
ev_status ev_worker_expect(const ev_shape *s, const void *in, ev_oracle_row **rows, ev_err *err);

/* Writes a validation record of stage "first" or "final" for the output
 * bytes (with their hex when with_bytes).  OUT: hash, their SHA-256 hex. */
ev_status ev_worker_validation(ev_rec_out *out, const char *stage, const ev_validation *v, const void *bytes,
                               size_t len, int with_bytes, char hash[65], ev_err *err);

/* The CPUs this process may run on, as "0-3,8" (sched_getaffinity). */
void ev_worker_affinity(char *buf, size_t cap);

/* Writes a hello record describing the backend's device only (the
 * supervisor's probe for the environment receipt), then end. */
ev_status ev_worker_probe(const ev_protocol *proto, const ev_backend_ops *ops, ev_rec_out *out, ev_err *err);

#endif
