/*
 * verify_lookup.c: the lookups in a loaded bundle every check uses: a
 * member by name, a case of validation.json by index (verify_int.h).  It
 * calls nothing of the verifier, so the loader (verify_bundle.c), the
 * samples reader and the checks all stand on it.
 */
#include <string.h>

#include "json.h"
#include "verify_int.h"

/* See verify_int.h. */
const vb_member *vb_find(const vb_bundle *b, const char *name)
{
    size_t lo = 0, hi = b ? b->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(b->m[mid].name, name);
        if (c == 0)
            return &b->m[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* See verify_int.h. */
const cJSON *vb_case(const vb_bundle *b, int64_t ci)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(b->validation, "cases");
    if (ci < 0 || !cJSON_IsArray(cases) || ci >= cJSON_GetArraySize(cases))
        return NULL;
    return cJSON_GetArrayItem(cases, (int)ci);
}

/* See verify_int.h. */
const cJSON *vb_attempt(const vb_vjob *v, int64_t att)
{
    const cJSON *a;
    cJSON_ArrayForEach(a, v->attempts)
    {
        int64_t n;
        if (!ev_jr_i64(a, "attempt", &n) && n == att)
            return a;
    }
    return NULL;
}
