/*
 * outcome.c: the one derivation of a job attempt's outcome from its raw
 * process record (see outcome.h for the precedence).  The store's
 * attempt_outcomes view (db/schema.sql) mirrors this function; the store's
 * test builds every combination of facts and compares the two.
 */
#include "outcome.h"

#include <stdio.h>
#include <string.h>

#include "sha256.h"

static const char *const ev_outcome_names[EV_OUT_COUNT] = {
    [EV_OUT_COMPLETED] = "completed",
    [EV_OUT_FAILED_EXIT] = "failed-exit",
    [EV_OUT_FAILED_SIGNAL] = "failed-signal",
    [EV_OUT_FAILED_TIMEOUT] = "failed-timeout",
    [EV_OUT_FAILED_PROTOCOL] = "failed-protocol",
    [EV_OUT_FAILED_VALIDATION] = "failed-validation",
    [EV_OUT_SKIPPED] = "skipped",
    [EV_OUT_INTERRUPTED] = "interrupted",
};

/* Returns the outcome of the facts f, by the precedence of outcome.h (the
 * first rule that holds wins).  "exit != 0" needs an exit code: a record
 * with neither exit code nor signal (and no other flag) is judged on its
 * records and validations. */
ev_outcome ev_outcome_derive(const ev_process_facts *f)
{
    if (!f->has_process || f->interrupted)
        return EV_OUT_INTERRUPTED;
    if (f->skipped && f->has_exit && f->exit_code == 0)
        return EV_OUT_SKIPPED;
    if (f->timed_out)
        return EV_OUT_FAILED_TIMEOUT;
    if (f->has_signal)
        return EV_OUT_FAILED_SIGNAL;
    if (f->has_exit && f->exit_code != 0)
        return EV_OUT_FAILED_EXIT;
    if (!f->records_ok)
        return EV_OUT_FAILED_PROTOCOL;
    if (f->validation_failed)
        return EV_OUT_FAILED_VALIDATION;
    return EV_OUT_COMPLETED;
}

/* Returns the static name of o ("completed", "failed-exit", ...), or
 * "unknown" when o is out of range. */
const char *ev_outcome_name(ev_outcome o)
{
    if ((int)o < 0 || o >= EV_OUT_COUNT)
        return "unknown";
    return ev_outcome_names[o];
}

/* Returns 0 and writes *out when name is one of the outcome names (exact,
 * case-sensitive); returns -1 and leaves *out alone otherwise. */
int ev_outcome_parse(const char *name, ev_outcome *out)
{
    int i;

    if (!name)
        return -1;
    for (i = 0; i < EV_OUT_COUNT; i++) {
        if (!strcmp(name, ev_outcome_names[i])) {
            *out = (ev_outcome)i;
            return 0;
        }
    }
    return -1;
}

/* Returns 1 for the outcomes the rescue phase retries once (failed-exit,
 * -signal, -timeout, -protocol), 0 for the others. */
int ev_outcome_retryable(ev_outcome o)
{
    return o == EV_OUT_FAILED_EXIT || o == EV_OUT_FAILED_SIGNAL || o == EV_OUT_FAILED_TIMEOUT ||
           o == EV_OUT_FAILED_PROTOCOL;
}

const char *ev_validation_problem(int final_stage, int passed, int64_t mismatches, const char *sha256,
                                  const char *first_sha256)
{
    if (mismatches < 0)
        return "a negative mismatch count";
    if (passed && mismatches > 0)
        return "passed with mismatches (the oracle passes a stage only when every element is within its "
               "bound)";
    if (!final_stage && !passed && mismatches == 0)
        return "failed with no mismatch (the first stage fails only on a mismatch)";
    if (final_stage && first_sha256 && sha256) {
        int same = !strcmp(sha256, first_sha256);
        if (passed && !same)
            return "passed with an output hash that differs from the first stage's (replay determinism)";
        if (!passed && same && mismatches == 0)
            return "failed with no mismatch and the first stage's output hash";
    }
    return NULL;
}

const char *ev_check_problem(ev_outcome o, int check_passed)
{
    return o == EV_OUT_COMPLETED && !check_passed ? "completed with a failed check after a timed sample (a "
                                                    "failed check fails the attempt)"
                                                  : NULL;
}

int ev_profile_id_matches(const char *json, size_t len, const char *id)
{
    char hex[65];
    return json && id && ev_sha256_hex(json, len, hex) == 0 && !strcmp(hex, id);
}

int ev_outcome_final(ev_outcome o)
{
    return o != EV_OUT_INTERRUPTED && (int)o >= 0 && o < EV_OUT_COUNT;
}

const char *ev_stages_problem(ev_outcome o, int has_case, int n_stages)
{
    if (o != EV_OUT_COMPLETED || !has_case || n_stages == 2)
        return NULL;
    return "completed without both validation stages (first and final)";
}

void ev_leftover_reason(const char *own, const char *left, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s" EV_LEFTOVER_NOTE "%s (killed by the supervisor, a child subreaper)", own,
             own[0] ? "; " : "", left);
}

size_t ev_protocol_error_own_len(const char *protocol_error)
{
    const char *at = strstr(protocol_error, EV_LEFTOVER_NOTE);
    if (!at)
        return strlen(protocol_error);
    return at - protocol_error >= 2 ? (size_t)(at - protocol_error) - 2 : 0; /* less its "; " */
}

/* See outcome.h. */
const char *ev_process_problem(int records_ok, const char *protocol_error)
{
    int has_error = protocol_error && protocol_error[0];
    if (!records_ok && !has_error)
        return "a process whose records are not ok without a protocol_error saying why";
    if (records_ok && protocol_error)
        return "a process whose records are ok with a protocol_error";
    return NULL;
}

/* See outcome.h. */
const char *ev_record_count_problem(int records_ok, int skipped, int64_t record_count, int64_t rows)
{
    if (!records_ok || record_count == 2 + (skipped ? 1 : 0) + rows)
        return NULL;
    return "a process whose record_count is not its hello, end and skip plus one per row of the attempt "
           "(a record deleted, or added)";
}
