/*
 * attempt.h: one attempt of validation.json ("jobs"[].attempts[]: its
 * process record and its validations), read once.  The verifier derives
 * the attempt's outcome from what it reads (ev_outcome_derive, the
 * supervisor's and the exporter's rule); the report says why a job
 * failed from the same reading.
 */
#ifndef EV_ATTEMPT_H
#define EV_ATTEMPT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "store/outcome.h"

typedef struct ev_attempt_rec {
    ev_process_facts facts;                   /* what ev_outcome_derive needs */
    int stages;                               /* validation stages: 0..2 */
    int64_t mismatches;                       /* summed over the failed validations */
    const char *skip_reason, *protocol_error; /* the process record's, NULL: none (borrowed) */
    const char *stderr_tail;                  /* the process record's, NULL: none (borrowed) */
} ev_attempt_rec;

/*
 * Reads attempt a into *out.  Returns 0, or -1 when the record is
 * malformed, with the rule it breaks in *why: a stage other than first or
 * final, or one twice; a validation whose verdict does not follow from its
 * numbers (ev_validation_problem); a process record lacking a field, with
 * both an exit code and a signal, or whose ended_ns or wall_ns is not a
 * decimal string; a process neither an object nor null (null: the
 * supervisor died before writing it).
 */
int ev_attempt_read(const cJSON *a, ev_attempt_rec *out, const char **why);

/*
 * Why an attempt ended as it did, in words, into t[cap] (returns t), for
 * the job's recorded outcome name: "no process record", the skip reason,
 * "watchdog timeout", "signal N", "exit code N" (with the worker's own
 * last line of its stderr tail, "evident-worker: WHY", when there is one:
 * a kernel that did not compile, an entry it lacks, a fault), the
 * protocol error, the oracle's mismatches, "interrupted", or "-" for a
 * completion.
 */
const char *ev_attempt_reason(const ev_attempt_rec *r, const char *outcome, char *t, size_t cap);

#endif
