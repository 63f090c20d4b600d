/*
 * jbuild.h: a JSON tree builder with a sticky status, shared by the
 * exporter, the figures, the report's results and model.json.  The first failure sticks in b->rc and every
 * later call does nothing, so a member is built as a straight list of
 * calls and checked once at the end (ev_jb_finish).  Doubles go in as
 * exact %.17g raw text (json.h); a missing or non-finite double becomes
 * null plus "<key>_reason".  Each call works on an object (under key) or
 * an array (key ignored).
 */
#ifndef EV_JBUILD_H
#define EV_JBUILD_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "status.h"

typedef struct ev_jb {
    ev_status rc; /* EV_OK until the first failure */
} ev_jb;

/* Adds item under key (or appends to an array parent).  Returns item, or
 * NULL with item freed and b->rc set (EV_ENOMEM) on failure or when b has
 * already failed. */
cJSON *ev_jb_put(ev_jb *b, cJSON *parent, const char *key, cJSON *item);
/* A new empty object / array under key; NULL on failure. */
cJSON *ev_jb_obj(ev_jb *b, cJSON *parent, const char *key);
cJSON *ev_jb_arr(ev_jb *b, cJSON *parent, const char *key);
/* A string (s NULL: null). */
void ev_jb_str(ev_jb *b, cJSON *o, const char *key, const char *s);
void ev_jb_null(ev_jb *b, cJSON *o, const char *key);
void ev_jb_bool(ev_jb *b, cJSON *o, const char *key, int v);
/* An integer: a number within +-2^53, else a decimal string (json.h). */
void ev_jb_i64(ev_jb *b, cJSON *o, const char *key, int64_t v);
/* An integer, or null when !has. */
void ev_jb_i64n(ev_jb *b, cJSON *o, const char *key, int has, int64_t v);
/* A *_ns field: always a decimal string. */
void ev_jb_ns(ev_jb *b, cJSON *o, const char *key, int64_t v);
/* A double, or (when !has or not finite) null plus, in an object,
 * "<key>_reason": reason, or "not finite". */
void ev_jb_dbl(ev_jb *b, cJSON *o, const char *key, int has, double v, const char *reason);
/* A double as exact %.17g raw text, NaN or Inf as a bare null (no reason
 * key): model.json's numbers (ev_json_add_double). */
void ev_jb_num(ev_jb *b, cJSON *o, const char *key, double v);
/* Prints tree (pretty) into out and frees it; returns b->rc first, and
 * EV_ENOMEM when tree is NULL. */
ev_status ev_jb_finish(ev_jb *b, cJSON *tree, ev_buf *out);

#endif
