/*
 * verify_json.c: typed reading of the parsed JSON members for the checks:
 * a missing key or a value of the wrong type is an answer (-1), never a
 * crash, so hostile members are reported as failures.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify_int.h"

/* 2^53: the largest integer every double holds exactly. */
#define VJ_MAX_EXACT 9007199254740992.0

int vj_i64(const cJSON *o, const char *key, int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return -1;
    double d = v->valuedouble;
    if (!(d >= -VJ_MAX_EXACT && d <= VJ_MAX_EXACT) || d != floor(d))
        return -1;
    *out = (int64_t)d;
    return 0;
}

int vj_i64_null(const cJSON *o, const char *key, int64_t *out, int *is_null)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNull(v)) {
        *is_null = 1;
        return 0;
    }
    if (vj_i64(o, key, out))
        return -1;
    *is_null = 0;
    return 0;
}

int vj_dbl(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return -1;
    *out = v->valuedouble;
    return 0;
}

int vj_dbl_null(const cJSON *o, const char *key, double *out, int *is_null)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNull(v)) {
        *is_null = 1;
        return 0;
    }
    if (vj_dbl(o, key, out))
        return -1;
    *is_null = 0;
    return 0;
}

int vj_bool(const cJSON *o, const char *key, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsBool(v))
        return -1;
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return 0;
}

const char *vj_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int vj_ns(const cJSON *o, const char *key, int64_t *out)
{
    const char *s = vj_str(o, key);
    if (!s || !*s || (s[0] == '0' && s[1]) || (s[0] == '-' && (s[1] == '0' || !s[1])))
        return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = (int64_t)v;
    return 0;
}

const vb_vjob *vb_job_by_id(const vb_bundle *b, int64_t job_id)
{
    size_t lo = 0, hi = b->n_vjobs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->vjobs[mid].job_id == job_id)
            return &b->vjobs[mid];
        if (b->vjobs[mid].job_id < job_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void vb_rows_of(const vb_bundle *b, int64_t job_id, int64_t attempt, size_t *first, size_t *n_cold,
                size_t *n_hot)
{
    const vb_samples *t = &b->samples;
    size_t lo = 0, hi = t->n_jobs;
    *first = 0;
    *n_cold = *n_hot = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->jobs[mid].job_id == job_id) {
            const vb_sjob *j = &t->jobs[mid];
            size_t i = j->first, end = j->first + j->count;
            while (i < end && t->rows[i].attempt < attempt)
                i++;
            *first = i;
            while (i < end && t->rows[i].attempt == attempt && !t->rows[i].hot) {
                (*n_cold)++;
                i++;
            }
            while (i < end && t->rows[i].attempt == attempt && t->rows[i].hot) {
                (*n_hot)++;
                i++;
            }
            return;
        }
        if (t->jobs[mid].job_id < job_id)
            lo = mid + 1;
        else
            hi = mid;
    }
}
