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
#include "json.h"
#include "evidence/member.h"

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

/* Appends the process-record subjects of validation's attempts.
 * EV_EFORMAT (err says which) / EV_ENOMEM. */
static ev_status process_subjects(const cJSON *validation, ev_subjects *s, ev_err *err)
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
            if (!proc || cJSON_IsNull(proc))
                continue; /* no process row: nothing to sign */
            char hex[EV_SHA256_HEX_LEN + 1];
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

ev_status ev_raw_subjects(const ev_member_sha *m, size_t n, const cJSON *validation, ev_subjects *out,
                          ev_err *err)
{
    ev_subjects s = {0};
    ev_status rc = EV_OK;
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
        rc = process_subjects(validation, &s, err);
    if (rc) {
        ev_subjects_free(&s);
        return rc;
    }
    qsort(s.s, s.n, sizeof *s.s, subject_cmp);
    *out = s;
    return EV_OK;
}
