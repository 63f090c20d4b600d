/*
 * jread.c: the strict typed JSON readers of jread.h.
 */
#include "jread.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* 2^53: the largest integer every double holds exactly. */
#define JR_MAX_EXACT 9007199254740992.0

/* See jread.h. */
int ev_jr_i64(const cJSON *o, const char *key, int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return -1;
    double d = v->valuedouble;
    if (!(d >= -JR_MAX_EXACT && d <= JR_MAX_EXACT) || d != floor(d))
        return -1;
    *out = (int64_t)d;
    return 0;
}

/* See jread.h. */
int ev_jr_i64_null(const cJSON *o, const char *key, int64_t *out, int *is_null)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNull(v)) {
        *is_null = 1;
        return 0;
    }
    if (ev_jr_i64(o, key, out))
        return -1;
    *is_null = 0;
    return 0;
}

/* See jread.h. */
int ev_jr_dbl(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return -1;
    *out = v->valuedouble;
    return 0;
}

/* See jread.h. */
int ev_jr_dbl_null(const cJSON *o, const char *key, double *out, int *is_null)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNull(v)) {
        *is_null = 1;
        return 0;
    }
    if (ev_jr_dbl(o, key, out))
        return -1;
    *is_null = 0;
    return 0;
}

/* See jread.h. */
int ev_jr_bool(const cJSON *o, const char *key, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsBool(v))
        return -1;
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return 0;
}

/* See jread.h. */
const char *ev_jr_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* See jread.h. */
int ev_jr_ns(const cJSON *o, const char *key, int64_t *out)
{
    const char *s = ev_jr_str(o, key);
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
