/*
 * attempt.c: one attempt's record read once (attempt.h).
 */
#include "evidence/attempt.h"
#include "evidence/raw_subjects.h"
#include "runner/sample_rules.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "jread.h"

/* See attempt.h. */
int ev_attempt_read(const cJSON *a, ev_attempt_rec *out, const char **why)
{
    ev_process_facts *f = &out->facts;
    memset(out, 0, sizeof *out);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(a, "process");
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(a, "validations");
    if (!cJSON_IsArray(vals)) {
        *why = "validations is not an array";
        return -1;
    }
    const cJSON *v;
    const char *first_sha = NULL;
    int n_first = 0, n_final = 0;
    cJSON_ArrayForEach(v, vals)
    {
        const char *st = ev_jr_str(v, "stage");
        if (st && !strcmp(st, "first"))
            first_sha = ev_jr_str(v, "output_sha256");
        n_first += st && !strcmp(st, "first");
        n_final += st && !strcmp(st, "final");
        if (!st || (strcmp(st, "first") && strcmp(st, "final"))) {
            *why = "a validation's stage is neither first nor final";
            return -1;
        }
    }
    if (n_first > 1 || n_final > 1) {
        *why = "a validation stage appears twice (one first and one final per attempt)";
        return -1;
    }
    out->stages = n_first + n_final;
    cJSON_ArrayForEach(v, vals)
    {
        int passed;
        int64_t mism;
        const char *st = ev_jr_str(v, "stage"), *sha = ev_jr_str(v, "output_sha256"), *bad;
        if (ev_jr_bool(v, "passed", &passed) || ev_jr_i64(v, "mismatches", &mism) || !st || !sha) {
            *why = "a validation lacks passed, mismatches, stage or output_sha256";
            return -1;
        }
        /* The verdict follows from the numbers (store/outcome.h, the
         * exporter's rule too): a flipped verdict is not an outcome. */
        if ((bad = ev_validation_problem(!strcmp(st, "final"), passed, mism, sha, first_sha))) {
            static _Thread_local char text[300];
            snprintf(text, sizeof text, "its %s validation is %s", st, bad);
            *why = text;
            return -1;
        }
        if (!passed) {
            f->validation_failed = 1;
            out->mismatches += mism;
        }
    }
    if (cJSON_IsNull(p)) {
        f->has_process = 0;
    } else if (cJSON_IsObject(p)) {
        int null_exit = 0, null_sig = 0;
        f->has_process = 1;
        if (ev_jr_i64_null(p, "exit_code", &f->exit_code, &null_exit) ||
            ev_jr_i64_null(p, "signal", &f->signal, &null_sig) || ev_jr_bool(p, "timed_out", &f->timed_out) ||
            ev_jr_bool(p, "interrupted", &f->interrupted) || ev_jr_bool(p, "skipped", &f->skipped) ||
            ev_jr_bool(p, "records_ok", &f->records_ok)) {
            *why = "process record lacks exit_code, signal, timed_out, interrupted, skipped or records_ok";
            return -1;
        }
        f->has_exit = !null_exit;
        f->has_signal = !null_sig;
        if (f->has_exit && f->has_signal) {
            *why = "process record has both an exit_code and a signal (waitpid gives one or the other)";
            return -1;
        }
        out->skip_reason = ev_jr_str(p, "skip_reason");
        out->stderr_tail = ev_jr_str(p, "stderr_tail");
        out->protocol_error = ev_jr_str(p, "protocol_error");
        /* One reason per record problem, and every record a row
         * (store/outcome.h, the exporter's rules too). */
        const char *bad = ev_process_problem(f->records_ok, out->protocol_error);
        int64_t count;
        if (!bad && !ev_jr_i64(p, "record_count", &count))
            bad = ev_record_count_problem(
                ev_rule_all_stored(f->records_ok, f->interrupted, out->protocol_error), f->skipped, count,
                ev_attempt_rows(a));
        if (bad) {
            *why = bad;
            return -1;
        }
        int64_t ns;
        if (ev_jr_ns(p, "ended_ns", &ns) || ev_jr_ns(p, "wall_ns", &ns)) {
            *why = "process record's ended_ns or wall_ns is not a decimal string";
            return -1;
        }
    } else {
        *why = "process is neither an object nor null";
        return -1;
    }
    return 0;
}

/* The worker's own last line in stderr tail s ("evident-worker: WHY",
 * which it writes as it exits with a failure): WHY and its length, or
 * NULL when there is none. */
static const char *worker_line(const char *s, int *len)
{
    static const char pre[] = "evident-worker: ";
    const char *last = NULL;
    for (const char *p = s; p && *p;) {
        const char *nl = strchr(p, '\n');
        if (!strncmp(p, pre, sizeof pre - 1))
            last = p;
        p = nl ? nl + 1 : NULL;
    }
    if (!last)
        return NULL;
    last += sizeof pre - 1;
    *len = (int)strcspn(last, "\n");
    return *len ? last : NULL;
}

/* See attempt.h. */
const char *ev_attempt_reason(const ev_attempt_rec *r, const char *outcome, char *t, size_t cap)
{
    const ev_process_facts *f = &r->facts;
    const char *o = outcome ? outcome : "";
    if (!f->has_process)
        snprintf(t, cap, "no process record");
    else if (!strcmp(o, "skipped"))
        snprintf(t, cap, "%s", r->skip_reason ? r->skip_reason : "skipped");
    else if (f->timed_out)
        snprintf(t, cap, "watchdog timeout");
    else if (f->has_signal)
        snprintf(t, cap, "signal %" PRId64, f->signal);
    else if (f->has_exit && f->exit_code != 0) {
        int n = 0;
        const char *w = worker_line(r->stderr_tail, &n);
        if (w)
            snprintf(t, cap, "exit code %" PRId64 ": %.*s", f->exit_code, n, w);
        else
            snprintf(t, cap, "exit code %" PRId64, f->exit_code);
    } else if (r->protocol_error)
        snprintf(t, cap, "%s", r->protocol_error);
    else if (!strcmp(o, "failed-validation"))
        snprintf(t, cap, "output does not match the oracle (%" PRId64 " mismatches)", r->mismatches);
    else if (f->interrupted)
        snprintf(t, cap, "interrupted");
    else
        snprintf(t, cap, "-");
    return t;
}
