/*
 * outcome.h: the closed set of job outcomes and their derivation from the
 * raw process record.  This is the one definition: the supervisor, the
 * exporter and the verifier all call ev_outcome_derive, and the store's
 * attempt_outcomes view mirrors it for the sqlite3 CLI.
 */
#ifndef EV_OUTCOME_H
#define EV_OUTCOME_H

#include <stddef.h>
#include <stdint.h>

typedef enum ev_outcome {
    EV_OUT_COMPLETED,
    EV_OUT_FAILED_EXIT,
    EV_OUT_FAILED_SIGNAL,
    EV_OUT_FAILED_TIMEOUT,
    EV_OUT_FAILED_PROTOCOL,
    EV_OUT_FAILED_VALIDATION,
    EV_OUT_SKIPPED,
    EV_OUT_INTERRUPTED,
    EV_OUT_COUNT
} ev_outcome;

/* The raw facts an outcome is derived from. */
typedef struct ev_process_facts {
    int has_process; /* 0: no process row (supervisor died) */
    int has_exit;
    int64_t exit_code;
    int has_signal;
    int64_t signal;
    int timed_out, interrupted, skipped;
    int records_ok;
    int validation_failed; /* any validation row with passed = 0 */
} ev_process_facts;

/*
 * Precedence (first that holds): no process row or interrupted ->
 * interrupted; skipped with exit 0 -> skipped; timed out -> failed-timeout;
 * signal -> failed-signal; exit != 0 -> failed-exit; records not ok ->
 * failed-protocol; a failed validation -> failed-validation; else completed.
 */
ev_outcome ev_outcome_derive(const ev_process_facts *f);
const char *ev_outcome_name(ev_outcome o);
/* Parses a name; returns 0 and sets *out, or -1 when unknown. */
int ev_outcome_parse(const char *name, ev_outcome *out);
/* failed-exit, -signal, -timeout, -protocol: what rescue retries. */
int ev_outcome_retryable(ev_outcome o);

/*
 * What a job left running after it ended (runner/sup_reap.c: the
 * supervisor, a child subreaper, names, kills and reaps it) is recorded in
 * its process record: protocol_error is the attempt's own reason (a rule
 * breach, a malformed record, or none), then the leftover note,
 * "left running after it ended, outside its process group or not: comm
 * (pid N), ... (killed by the supervisor, a child subreaper)", and
 * records_ok is 0, so ev_outcome_derive gives failed-protocol (or the
 * failure the attempt already had).  One writer and one reader, so the
 * supervisor, the exporter and the verifier read the record alike:
 * ev_leftover_reason writes protocol_error from own (may be "") and left
 * (the list) into out[cap]; ev_protocol_error_own_len is the length of its
 * own reason (the part the verifier holds to the rules).
 */
#define EV_LEFTOVER_NOTE "left running after it ended, outside its process group or not: "
void ev_leftover_reason(const char *own, const char *left, char *out, size_t cap);
size_t ev_protocol_error_own_len(const char *protocol_error);

/*
 * Invariants of the raw records that every reader holds them to (the
 * exporter, the first reader, refuses a store that breaks one; the
 * verifier FAILs a bundle that does), one definition each:
 *
 * ev_validation_problem: a validation row's verdict follows from its
 * numbers as the worker sets it (the oracle passes a stage exactly when no
 * element is out of its bound; the final stage also needs the first
 * stage's output hash, replay determinism).  first_sha256 is the attempt's
 * first-stage hash, NULL when it has none.  Returns NULL when the row
 * holds, else the rule it breaks.
 */
const char *ev_validation_problem(int final_stage, int passed, int64_t mismatches, const char *sha256,
                                  const char *first_sha256);
/* A profile id is the SHA-256 of its environment record's bytes
 * (docs/bundle-format.md): 1 when id is that hash of json[0..len). */
int ev_profile_id_matches(const char *json, size_t len, const char *id);
/* 1 when o may be the last outcome of a job in a finished run: the status
 * is set only when every phase has run, and every missing or interrupted
 * attempt is run again before that, so a finished run has neither. */
int ev_outcome_final(ev_outcome o);
/* A completed attempt of a case validated its output in both stages (first
 * and final); n_stages is how many validation rows it has.  Returns NULL
 * when that holds (or the attempt is not a completed one of a case), else
 * the rule it breaks.  A deleted stage could otherwise turn a failed
 * validation into a completion. */
const char *ev_stages_problem(ev_outcome o, int has_case, int n_stages);
/* An output check after a timed sample (a sample check, an op check's tag,
 * the kept output) that failed is the attempt's failure (the worker also
 * writes it as a failed final validation): a completed attempt holds only
 * passed checks.  Returns NULL when that
 * holds, else the rule it breaks. */
const char *ev_check_problem(ev_outcome o, int check_passed);
/* A process whose records are not all well-formed says why: records_ok is
 * 0 exactly when protocol_error is set (the supervisor writes one reason
 * for every record problem, and none otherwise).  Returns NULL when that
 * holds, else the rule it breaks.  An erased reason cannot hide why an
 * attempt failed. */
const char *ev_process_problem(int records_ok, const char *protocol_error);
/* Every record the worker sent is counted (record_count) and kept as a
 * row: an attempt whose records are all well-formed (records_ok: its end
 * record seen, every record stored) counts its hello and end, its skip
 * when skipped, and one per row of its own (binding, warm-up,
 * calibrations, flush, cold timings but a rescue's backoff (the
 * supervisor's own: runner/sample_rules.h, ev_rule_cold_is_supervisors),
 * validations, sample checks, graph nodes, device record, hot and cold
 * samples): record_count == 2 +
 * skipped + rows.  records_ok: whether every record reached the store
 * (runner/sample_rules.h, ev_rule_all_stored: records ok, or a rule
 * breach found after the end record; not interrupted).  Returns NULL when
 * that holds (or records_ok is 0), else the rule it breaks.  A row deleted (a cold timing, a sample) cannot
 * pass unseen. */
const char *ev_record_count_problem(int records_ok, int skipped, int64_t record_count, int64_t rows);

#endif
