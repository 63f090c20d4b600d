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

/*
 * Runs one job, writing every record to out, the end record last.  A peer
 * the backend cannot run (EV_EUNSUPPORTED at bind) writes a skip record
 * with the backend's reason, then end, and returns EV_OK.  Any other
 * failure returns its status with err set and writes no end record (the
 * caller exits non-zero).
 */
ev_status ev_worker_run(const ev_worker_args *a, ev_rec_out *out, ev_err *err);

/* Writes a hello record describing the backend's device only (the
 * supervisor's probe for the environment receipt), then end. */
ev_status ev_worker_probe(const ev_protocol *proto, const ev_backend_ops *ops, ev_rec_out *out, ev_err *err);

#endif
