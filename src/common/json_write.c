/*
 * json_write.c: exact JSON writing on top of cJSON 1.7.15 (json.h): the
 * builders that refuse a duplicate key, doubles as the exact text of
 * snprintf("%.17g") in the C locale inserted raw (ev_json_format_double:
 * strtod reads back the same bits; cJSON's own printer would print
 * 0.1+0.2 as 0.3), integers as raw decimal text, the printer, and the
 * comparison of a tree with text as ev_json_print(tree, 1) would print it.
 */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing ---------------------------------------------------------- */

/* Returns EV_EINVAL when obj is not an object, key is NULL, or obj
 * already has a member named key (a duplicate the reader would refuse). */
static ev_status check_new_key(const cJSON *obj, const char *key)
{
    if (!cJSON_IsObject(obj) || !key)
        return EV_EINVAL;
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        return EV_EINVAL;
    return EV_OK;
}

/* Creates the item for double v: raw %.17g text, or null when not finite.
 * Returns NULL on allocation failure. */
static cJSON *double_item(double v)
{
    char text[32];
    if (ev_json_format_double(v, text))
        return cJSON_CreateNull();
    return cJSON_CreateRaw(text);
}

/* Creates the item for integer v: raw decimal when |v| <= 2^53, else a
 * string.  Returns NULL on allocation failure. */
cJSON *ev_json_i64(int64_t v)
{
    char text[32];
    snprintf(text, sizeof text, "%" PRId64, v);
    if (v >= -EV_JSON_INT_MAX && v <= EV_JSON_INT_MAX)
        return cJSON_CreateRaw(text);
    return cJSON_CreateString(text);
}

/* Adds item under key to obj (checked), taking ownership of item in every
 * case (it is deleted on failure). */
static ev_status add_item(cJSON *obj, const char *key, cJSON *item)
{
    ev_status rc = check_new_key(obj, key);
    if (!rc && !item)
        rc = EV_ENOMEM;
    if (!rc && !cJSON_AddItemToObject(obj, key, item))
        rc = EV_ENOMEM;
    if (rc)
        cJSON_Delete(item);
    return rc;
}

/* Appends item to array arr, taking ownership of item in every case. */
static ev_status push_item(cJSON *arr, cJSON *item)
{
    ev_status rc = EV_OK;
    if (!cJSON_IsArray(arr))
        rc = EV_EINVAL;
    else if (!item)
        rc = EV_ENOMEM;
    else if (!cJSON_AddItemToArray(arr, item))
        rc = EV_ENOMEM;
    if (rc)
        cJSON_Delete(item);
    return rc;
}

ev_status ev_json_add_double(cJSON *obj, const char *key, double v)
{
    return add_item(obj, key, double_item(v));
}

ev_status ev_json_push_double(cJSON *arr, double v)
{
    return push_item(arr, double_item(v));
}

ev_status ev_json_add_i64(cJSON *obj, const char *key, int64_t v)
{
    return add_item(obj, key, ev_json_i64(v));
}

ev_status ev_json_push_i64(cJSON *arr, int64_t v)
{
    return push_item(arr, ev_json_i64(v));
}

ev_status ev_json_add_i64_string(cJSON *obj, const char *key, int64_t v)
{
    char text[32];
    snprintf(text, sizeof text, "%" PRId64, v);
    return add_item(obj, key, cJSON_CreateString(text));
}

ev_status ev_json_add_str(cJSON *obj, const char *key, const char *s)
{
    return add_item(obj, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

ev_status ev_json_add_bool(cJSON *obj, const char *key, int v)
{
    return add_item(obj, key, cJSON_CreateBool(v != 0));
}

/* Returns 1 when tree holds a cJSON number item anywhere, else 0. */
static int has_number(const cJSON *tree)
{
    const cJSON *c;
    if (cJSON_IsNumber(tree))
        return 1;
    for (c = tree->child; c; c = c->next)
        if (has_number(c))
            return 1;
    return 0;
}

/* Turns every number item under tree into a raw item holding its %.17g
 * text ("null" when not finite), in place.  EV_ENOMEM may leave some
 * converted (the caller discards the tree then). */
static ev_status numbers_to_raw(cJSON *tree)
{
    cJSON *c;
    if (cJSON_IsNumber(tree)) {
        char text[32];
        size_t len;
        char *copy;
        if (ev_json_format_double(tree->valuedouble, text))
            memcpy(text, "null", 5);
        len = strlen(text) + 1;
        copy = cJSON_malloc(len);
        if (!copy)
            return EV_ENOMEM;
        memcpy(copy, text, len);
        tree->type = (tree->type & ~0xff) | cJSON_Raw;
        tree->valuestring = copy;
        return EV_OK;
    }
    for (c = tree->child; c; c = c->next)
        if (numbers_to_raw(c))
            return EV_ENOMEM;
    return EV_OK;
}

ev_status ev_json_print(const cJSON *tree, int pretty, ev_buf *out)
{
    ev_status rc = EV_OK;
    cJSON *copy = NULL;
    char *text = NULL;

    if (!tree)
        return EV_EINVAL;
    /* cJSON's own number printer is not %.17g (it prints 0.1 as "0.1"):
     * number items (from a parsed tree) are printed from a copy in which
     * they are raw %.17g text. */
    if (has_number(tree)) {
        copy = cJSON_Duplicate(tree, 1);
        if (!copy || numbers_to_raw(copy)) {
            rc = EV_ENOMEM;
            goto out;
        }
        tree = copy;
    }
    text = pretty ? cJSON_Print(tree) : cJSON_PrintUnformatted(tree);
    if (!text) {
        rc = EV_ENOMEM;
        goto out;
    }
    rc = ev_buf_puts(out, text);
    if (!rc)
        rc = ev_buf_append(out, "\n", 1);
out:
    cJSON_free(text);
    cJSON_Delete(copy);
    return rc;
}

/* ---- comparing a tree with text, as ev_json_print(tree, 1) would print it ---- */

/* The comparison's state: the text and how far it matched. */
typedef struct pcmp {
    const char *t;
    size_t n, at;
    int differs;
} pcmp;

/* Matches s[0..len) at the current position; records a difference. */
static void pc_put(pcmp *c, const char *s, size_t len)
{
    if (c->differs)
        return;
    for (size_t i = 0; i < len; i++) {
        if (c->at >= c->n || c->t[c->at] != s[i]) {
            c->differs = 1;
            return;
        }
        c->at++;
    }
}

/* Matches k tab characters. */
static void pc_tabs(pcmp *c, size_t k)
{
    for (size_t i = 0; i < k && !c->differs; i++)
        pc_put(c, "\t", 1);
}

/* Matches a string as cJSON's print_string_ptr writes it: quotes, the
 * escapes \" \\ \b \f \n \r \t, \u00XX for other controls, the rest raw. */
static void pc_string(pcmp *c, const char *s)
{
    pc_put(c, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && !c->differs; p++) {
        char e[8];
        switch (*p) {
        case '"':
            pc_put(c, "\\\"", 2);
            break;
        case '\\':
            pc_put(c, "\\\\", 2);
            break;
        case '\b':
            pc_put(c, "\\b", 2);
            break;
        case '\f':
            pc_put(c, "\\f", 2);
            break;
        case '\n':
            pc_put(c, "\\n", 2);
            break;
        case '\r':
            pc_put(c, "\\r", 2);
            break;
        case '\t':
            pc_put(c, "\\t", 2);
            break;
        default:
            if (*p < 32) {
                snprintf(e, sizeof e, "\\u%04x", *p);
                pc_put(c, e, 6);
            } else {
                pc_put(c, (const char *)p, 1);
            }
        }
    }
    pc_put(c, "\"", 1);
}

/* Matches item at depth (the objects and arrays around it), formatted. */
static void pc_value(pcmp *c, const cJSON *it, size_t depth)
{
    char num[32];
    if (c->differs)
        return;
    if (cJSON_IsNull(it)) {
        pc_put(c, "null", 4);
    } else if (cJSON_IsFalse(it)) {
        pc_put(c, "false", 5);
    } else if (cJSON_IsTrue(it)) {
        pc_put(c, "true", 4);
    } else if (cJSON_IsNumber(it)) {
        if (ev_json_format_double(it->valuedouble, num))
            memcpy(num, "null", 5);
        pc_put(c, num, strlen(num));
    } else if (cJSON_IsRaw(it)) {
        pc_put(c, it->valuestring ? it->valuestring : "", it->valuestring ? strlen(it->valuestring) : 0);
    } else if (cJSON_IsString(it)) {
        pc_string(c, it->valuestring);
    } else if (cJSON_IsArray(it)) {
        pc_put(c, "[", 1);
        /* cJSON counts an array as a level too (its objects indent so) */
        for (const cJSON *e = it->child; e && !c->differs; e = e->next) {
            pc_value(c, e, depth + 1);
            if (e->next)
                pc_put(c, ", ", 2);
        }
        pc_put(c, "]", 1);
    } else if (cJSON_IsObject(it)) {
        pc_put(c, "{\n", 2);
        for (const cJSON *e = it->child; e && !c->differs; e = e->next) {
            pc_tabs(c, depth + 1);
            pc_string(c, e->string);
            pc_put(c, ":\t", 2);
            pc_value(c, e, depth + 1);
            if (e->next)
                pc_put(c, ",", 1);
            pc_put(c, "\n", 1);
        }
        pc_tabs(c, depth);
        pc_put(c, "}", 1);
    } else {
        c->differs = 1; /* no other kind is ever printed */
    }
}

/* See json.h. */
int ev_json_print_equals(const cJSON *tree, const char *text, size_t n, size_t *at)
{
    pcmp c = {text, n, 0, 0};
    pc_value(&c, tree, 0);
    pc_put(&c, "\n", 1);
    if (!c.differs && c.at != n)
        c.differs = 1;
    if (at)
        *at = c.at;
    return !c.differs;
}
