/*
 * worker.h: the per-job measurement protocol (docs/runner.md, "Worker
 * records"), run inside build/evident-worker on one backend, streaming
 * records (record.h) to a file descriptor.  It never opens the database.
 * Fault injection that must end the process (exit, signal, hang, stop
 * after k samples) is the caller's hook: library code never exits.
 */
#ifndef EV_WORKER_H
#define EV_WORKER_H

#include <stdint.h>

#include "backend.h"
#include "job.h"
#include "protocol.h"
#include "record.h"
#include "status.h"

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
