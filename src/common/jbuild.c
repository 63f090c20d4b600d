/*
 * jbuild.c: the sticky-status JSON builder of jbuild.h.
 */
#include "jbuild.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "json.h"

/* See jbuild.h. */
cJSON *ev_jb_put(ev_jb *b, cJSON *parent, const char *key, cJSON *item)
{
    if (b->rc || !parent || !item) {
        if (!b->rc)
            b->rc = EV_ENOMEM;
        cJSON_Delete(item);
        return NULL;
    }
    cJSON_bool ok =
        cJSON_IsArray(parent) ? cJSON_AddItemToArray(parent, item) : cJSON_AddItemToObject(parent, key, item);
    if (!ok) {
        cJSON_Delete(item);
        b->rc = EV_ENOMEM;
        return NULL;
    }
    return item;
}

/* See jbuild.h. */
cJSON *ev_jb_obj(ev_jb *b, cJSON *parent, const char *key)
{
    return ev_jb_put(b, parent, key, b->rc ? NULL : cJSON_CreateObject());
}

/* See jbuild.h. */
cJSON *ev_jb_arr(ev_jb *b, cJSON *parent, const char *key)
{
    return ev_jb_put(b, parent, key, b->rc ? NULL : cJSON_CreateArray());
}

/* See jbuild.h.  In an object, ev_json_add_str (which refuses a key the
 * object already has); in an array, a plain string item. */
void ev_jb_str(ev_jb *b, cJSON *o, const char *key, const char *s)
{
    if (b->rc || !o)
        return;
    if (cJSON_IsArray(o))
        ev_jb_put(b, o, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
    else
        b->rc = ev_json_add_str(o, key, s);
}

/* See jbuild.h. */
void ev_jb_null(ev_jb *b, cJSON *o, const char *key)
{
    ev_jb_put(b, o, key, b->rc ? NULL : cJSON_CreateNull());
}

/* See jbuild.h. */
void ev_jb_bool(ev_jb *b, cJSON *o, const char *key, int v)
{
    ev_jb_put(b, o, key, b->rc ? NULL : cJSON_CreateBool(v ? 1 : 0));
}

/* See jbuild.h. */
void ev_jb_i64(ev_jb *b, cJSON *o, const char *key, int64_t v)
{
    if (!b->rc && o)
        b->rc = cJSON_IsArray(o) ? ev_json_push_i64(o, v) : ev_json_add_i64(o, key, v);
}

/* See jbuild.h. */
void ev_jb_i64n(ev_jb *b, cJSON *o, const char *key, int has, int64_t v)
{
    if (has)
        ev_jb_i64(b, o, key, v);
    else
        ev_jb_null(b, o, key);
}

/* See jbuild.h. */
void ev_jb_ns(ev_jb *b, cJSON *o, const char *key, int64_t v)
{
    char t[32];
    snprintf(t, sizeof t, "%" PRId64, v);
    ev_jb_str(b, o, key, t);
}

/* See jbuild.h. */
void ev_jb_dbl(ev_jb *b, cJSON *o, const char *key, int has, double v, const char *reason)
{
    if (b->rc || !o)
        return;
    if (has && isfinite(v)) {
        b->rc = cJSON_IsArray(o) ? ev_json_push_double(o, v) : ev_json_add_double(o, key, v);
        return;
    }
    ev_jb_null(b, o, key);
    if (!cJSON_IsArray(o)) {
        char rk[96];
        snprintf(rk, sizeof rk, "%s_reason", key);
        ev_jb_str(b, o, rk, has ? "not finite" : reason);
    }
}

/* See jbuild.h. */
void ev_jb_num(ev_jb *b, cJSON *o, const char *key, double v)
{
    if (!b->rc && o)
        b->rc = cJSON_IsArray(o) ? ev_json_push_double(o, v) : ev_json_add_double(o, key, v);
}

/* See jbuild.h. */
ev_status ev_jb_finish(ev_jb *b, cJSON *tree, ev_buf *out)
{
    ev_status rc = b->rc;
    if (!rc && !tree)
        rc = EV_ENOMEM;
    if (!rc)
        rc = ev_json_print(tree, 1, out);
    cJSON_Delete(tree);
    return rc;
}
