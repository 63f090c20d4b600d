/*
 * job.h: what every job process shares, whether its kernel runs in the
 * worker (worker.c) or in the torch peer's python (torch_peer.c): the
 * case's input and the oracle's rows of it, validation and its record, the
 * cold-time records and the process's CPUs.  Both call it; it calls
 * neither (no circle between the worker and the peer).
 */
#ifndef EV_JOB_H
#define EV_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "binding.h"
#include "oracle.h"
#include "protocol.h"
#include "record.h"
#include "status.h"

/* Writes a cold record (name, elapsed_ns) when elapsed_ns >= 0. */
ev_status ev_job_cold(ev_rec_out *out, const char *name, int64_t elapsed_ns, ev_err *err);

/* The input bytes of case case_index of p (kernels/inputs.h, case key =
 * case index): ((R-1) x stride + N) elements, nothing when R = 0.
 * OUT: *shape, *buf (malloc'd, at least 1 byte), *len. */
ev_status ev_job_input(const ev_protocol *p, int64_t case_index, ev_shape *shape, void **buf, size_t *len,
                       ev_err *err);

/* Validates R outputs against the FP64 oracle (kernels/oracle.h), the SUM
 * bound widened by the protocol's sum_bound_factor when it is above 1;
 * rows: the oracle's rows of in (ev_job_expect), or NULL to compute
 * them from in.  OUT: *v (a shape the oracle refuses counts every row as a
 * mismatch). */
void ev_job_check(const ev_protocol *p, const ev_shape *s, const void *in, const ev_oracle_row *rows,
                  const void *out, ev_validation *v);

/* The oracle's rows of the input at in (ev_oracle_rows), for
 * ev_job_check's rows: a job computes them before its gate.  OUT:
 * *rows (malloc'd). */
ev_status ev_job_expect(const ev_shape *s, const void *in, ev_oracle_row **rows, ev_err *err);

/* Writes a validation record of stage "first" or "final" for the output
 * bytes (with their hex when with_bytes).  OUT: hash, their SHA-256 hex. */
ev_status ev_job_validation(ev_rec_out *out, const char *stage, const ev_validation *v, const void *bytes,
                            size_t len, int with_bytes, char hash[65], ev_err *err);

/* The CPUs this process may run on, as "0-3,8" (sched_getaffinity). */
void ev_job_affinity(char *buf, size_t cap);

#endif
