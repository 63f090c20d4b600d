/*
 * raw_subjects.c: the raw-member rule and the subject list of a signed
 * bundle (raw_subjects.h).
 */
#include "evidence/raw_subjects.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jread.h"
#include "json.h"
#include "member.h"
#include "runner/record.h"
#include "runner/sample_rules.h"

/* The place of each record kind in a bundle (raw_subjects.h), indexed by
 * ev_rec_type: one entry per kind of runner/record.c's table. */
static const char *const rec_place[EV_REC_COUNT] = {
    [EV_REC_HELLO] = "process",   /* counted in record_count */
    [EV_REC_SKIP] = "process",    /* skipped, skip_reason */
    [EV_REC_BINDING] = "binding", /* */
    [EV_REC_VALIDATION] = "validations",
    [EV_REC_COLD] = "cold_timings",
    [EV_REC_FLUSH] = "flush",
    [EV_REC_NODE] = "graph_nodes",
    [EV_REC_WARMUP] = "warmup",
    [EV_REC_CALIBRATION] = "calibrations",
    [EV_REC_SAMPLE] = EV_MEMBER_SAMPLES,
    [EV_REC_CHECK] = "sample_checks",
    [EV_REC_OPCHECK] = "op_checks",
    [EV_REC_DEVICE] = "device",
    [EV_REC_OPKEPT] = "op_kept",
    [EV_REC_END] = "process", /* records_ok, record_count */
};

const char *ev_raw_record_place(int t)
{
    return t >= 0 && t < EV_REC_COUNT ? rec_place[t] : NULL;
}

int64_t ev_attempt_rows(const cJSON *attempt)
{
    int64_t rows = 0;
    for (int t = 0; t < EV_REC_COUNT; t++) {
        const char *place = rec_place[t];
        if (!place || !strcmp(place, "process"))
            continue;
        if (!strcmp(place, EV_MEMBER_SAMPLES)) {
            const cJSON *h = cJSON_GetObjectItemCaseSensitive(attempt, "hot_samples");
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(attempt, "cold_samples");
            rows += (cJSON_IsNumber(h) ? (int64_t)h->valuedouble : 0) +
                    (cJSON_IsNumber(c) ? (int64_t)c->valuedouble : 0);
            continue;
        }
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(attempt, place), *e;
        rows += cJSON_IsArray(v) ? cJSON_GetArraySize(v) : cJSON_IsObject(v) ? 1 : 0;
        if (t == EV_REC_COLD && cJSON_IsArray(v))
            cJSON_ArrayForEach(e, v) rows -= ev_rule_cold_is_supervisors(ev_jr_str(e, "name"));
    }
    return rows;
}

const char *const ev_raw_attempt_keys[] = {
    "attempt",      "attempt_id", "invocation_id", "started_ns",  "binding",       "warmup",
    "calibrations", "flush",      "cold_timings",  "validations", "sample_checks", "graph_nodes",
    "device",       "op_checks",  "op_kept",       NULL,
};

int ev_member_is_raw(const char *name)
{
    return !strcmp(name, EV_MEMBER_PROTOCOL) || !strcmp(name, EV_MEMBER_SAMPLES) ||
           ev_member_is_source(name) || ev_member_is_output(name);
}

void ev_subjects_free(ev_subjects *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->s[i].name);
    free(s->s);
    memset(s, 0, sizeof *s);
}

/* Appends (name, hex) to s, copying name.  EV_ENOMEM. */
static ev_status subjects_push(ev_subjects *s, const char *name, const char *hex)
{
    char *nm;
    if (ev_grow((void **)&s->s, &s->cap, s->n, sizeof *s->s) || !(nm = strdup(name)))
        return EV_ENOMEM;
    s->s[s->n].name = nm;
    memcpy(s->s[s->n].sha256_hex, hex, EV_SHA256_HEX_LEN);
    s->s[s->n].sha256_hex[EV_SHA256_HEX_LEN] = '\0';
    s->n++;
    return EV_OK;
}

/* qsort comparator: subjects by name, bytewise. */
static int subject_cmp(const void *a, const void *b)
{
    return strcmp(((const ev_subject *)a)->name, ((const ev_subject *)b)->name);
}

/* Appends the environment-record subjects of validation's invocations.
 * EV_EFORMAT (err says which) / EV_ENOMEM. */
static ev_status env_subjects(const cJSON *validation, ev_subjects *s, ev_err *err)
{
    const cJSON *invs = cJSON_GetObjectItemCaseSensitive(validation, "invocations");
    if (!cJSON_IsArray(invs))
        return ev_err_set(err, EV_EFORMAT, "validation.json: invocations is not an array");
    for (const cJSON *inv = invs->child; inv; inv = inv->next) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(inv, "invocation_id");
        const cJSON *rec = cJSON_GetObjectItemCaseSensitive(inv, "environment_record");
        if (!cJSON_IsNumber(id))
            return ev_err_set(err, EV_EFORMAT,
                              "validation.json: an invocation without a numeric invocation_id");
        if (cJSON_IsNull(rec))
            continue; /* no environment row was stored: nothing to sign */
        if (!cJSON_IsString(rec))
            return ev_err_set(err, EV_EFORMAT,
                              "validation.json: invocation %.0f: environment_record is not a string",
                              id->valuedouble);
        char name[96], hex[EV_SHA256_HEX_LEN + 1];
        snprintf(name, sizeof name, "validation.json#environment/%.0f", id->valuedouble);
        ev_status rc = ev_sha256_hex(rec->valuestring, strlen(rec->valuestring), hex);
        if (!rc)
            rc = subjects_push(s, name, hex);
        if (rc)
            return ev_err_set(err, rc, "out of memory");
    }
    return EV_OK;
}

/* Appends the attempt subject of attempt a (number no) of job key to s:
 * the object of a's raw keys (ev_raw_attempt_keys, those present, in that
 * order: an older bundle's attempt lacks some), printed compact.  name and
 * text are scratch.  EV_ENOMEM. */
static ev_status attempt_subject(const char *key, double no, const cJSON *a, ev_buf *name, ev_buf *text,
                                 ev_subjects *s)
{
    char hex[EV_SHA256_HEX_LEN + 1];
    ev_status rc = EV_OK;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return EV_ENOMEM;
    for (size_t k = 0; ev_raw_attempt_keys[k] && !rc; k++) {
        /* (cast: a reference item points at v and never changes it) */
        cJSON *v = (cJSON *)cJSON_GetObjectItemCaseSensitive(a, ev_raw_attempt_keys[k]);
        /* a reference: the record is printed, never copied or changed */
        if (v && !cJSON_AddItemReferenceToObject(o, ev_raw_attempt_keys[k], v))
            rc = EV_ENOMEM;
    }
    ev_buf_reset(name);
    ev_buf_reset(text);
    if (!rc && !(rc = ev_buf_printf(name, "validation.json#attempt/%s/%.0f", key, no)) &&
        !(rc = ev_json_print(o, 0, text)) && !(rc = ev_sha256_hex(text->data, text->len, hex)))
        rc = subjects_push(s, name->data, hex);
    cJSON_Delete(o);
    return rc;
}

/* Appends the process-record subjects of validation's attempts, and under
 * rule 2 their attempt subjects.  EV_EFORMAT (err says which) / EV_ENOMEM. */
static ev_status process_subjects(const cJSON *validation, int rule, ev_subjects *s, ev_err *err)
{
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(validation, "jobs");
    if (!cJSON_IsArray(jobs))
        return ev_err_set(err, EV_EFORMAT, "validation.json: jobs is not an array");
    ev_buf name = EV_BUF_INIT, text = EV_BUF_INIT;
    ev_status rc = EV_OK;
    for (const cJSON *j = jobs->child; j && !rc; j = j->next) {
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(j, "job_key");
        const cJSON *atts = cJSON_GetObjectItemCaseSensitive(j, "attempts");
        if (!cJSON_IsString(key) || !cJSON_IsArray(atts)) {
            rc = ev_err_set(err, EV_EFORMAT,
                            "validation.json: a job without a string job_key and an attempts array");
            break;
        }
        for (const cJSON *a = atts->child; a && !rc; a = a->next) {
            const cJSON *no = cJSON_GetObjectItemCaseSensitive(a, "attempt");
            const cJSON *proc = cJSON_GetObjectItemCaseSensitive(a, "process");
            if (!cJSON_IsNumber(no)) {
                rc = ev_err_set(err, EV_EFORMAT, "validation.json: job %s: an attempt without a number",
                                key->valuestring);
                break;
            }
            char hex[EV_SHA256_HEX_LEN + 1];
            if (rule >= 2 && (rc = attempt_subject(key->valuestring, no->valuedouble, a, &name, &text, s)))
                ev_err_set(err, rc, "out of memory");
            if (rc || !proc || cJSON_IsNull(proc))
                continue; /* no process row: nothing to sign */
            ev_buf_reset(&name);
            ev_buf_reset(&text);
            if ((rc = ev_buf_printf(&name, "validation.json#process/%s/%.0f", key->valuestring,
                                    no->valuedouble)) ||
                (rc = ev_json_print(proc, 0, &text)) || (rc = ev_sha256_hex(text.data, text.len, hex)) ||
                (rc = subjects_push(s, name.data, hex)))
                ev_err_set(err, rc, "out of memory");
        }
    }
    ev_buf_free(&name);
    ev_buf_free(&text);
    return rc;
}

ev_status ev_raw_subjects(const ev_member_sha *m, size_t n, const cJSON *validation, int rule,
                          ev_subjects *out, ev_err *err)
{
    ev_subjects s = {0};
    ev_status rc = EV_OK;
    if (rule != 1 && rule != 2)
        return ev_err_set(err, EV_EINVAL, "subject rule %d is not one this evident knows (1 or 2)", rule);
    for (size_t i = 0; i < n && !rc; i++)
        if (ev_member_is_raw(m[i].name) && (rc = subjects_push(&s, m[i].name, m[i].sha256_hex)))
            ev_err_set(err, rc, "out of memory");
    if (!rc && !validation)
        rc = ev_err_set(err, EV_EFORMAT,
                        "validation.json is missing or unreadable: its raw records cannot be listed");
    if (!rc && !cJSON_IsObject(validation))
        rc = ev_err_set(err, EV_EFORMAT, "validation.json is not a JSON object");
    if (!rc)
        rc = env_subjects(validation, &s, err);
    if (!rc)
        rc = process_subjects(validation, rule, &s, err);
    if (rc) {
        ev_subjects_free(&s);
        return rc;
    }
    qsort(s.s, s.n, sizeof *s.s, subject_cmp);
    *out = s;
    return EV_OK;
}
