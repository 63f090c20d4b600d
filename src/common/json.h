/*
 * json.h: strict JSON reading and exact JSON writing on top of cJSON 1.7.15.
 *
 * Reading: a lexer walks the raw bytes first and refuses what cJSON would
 * let through (bad grammar, duplicate keys, trailing bytes, nesting deeper
 * than EV_JSON_MAX_DEPTH, "\u0000", leading zeros, numbers that overflow to
 * inf, invalid UTF-8); only then does cJSON build the tree.  With
 * EV_JSON_CANONICAL, every number must also be canonical: it reads back to
 * a double whose %.17g text is exactly the text written (bundle members);
 * without it any finite decimal is accepted (human-written protocol files).
 *
 * Writing: doubles go in as raw "%.17g" text (locale "C"), so they read back
 * to the same bits; NaN/Inf are never written (null, and the caller records
 * why); integers beyond 2^53 are written as strings.
 */
#ifndef EV_JSON_H
#define EV_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "status.h"

#define EV_JSON_MAX_DEPTH 64

enum {
    EV_JSON_CANONICAL = 1 << 0 /* numbers must be canonical %.17g text */
};

/* Checks raw bytes against the strict grammar; err names byte offset, line
 * and column of the first problem.  EV_EFORMAT on any violation. */
ev_status ev_json_check(const char *p, size_t n, unsigned flags, ev_err *err);

/* ev_json_check, then cJSON_ParseWithLengthOpts.  OUT: *out, a tree the
 * caller frees with cJSON_Delete; untouched on failure. */
ev_status ev_json_parse(const char *p, size_t n, unsigned flags, cJSON **out, ev_err *err);

/* Writes v as the shortest text of the form "%.17g" that round-trips; the
 * text is exactly what snprintf("%.17g") gives in the C locale.  buf must
 * hold 32 bytes.  Returns EV_ERANGE for NaN/Inf (buf untouched). */
ev_status ev_json_format_double(double v, char buf[32]);

/* Adds key: <double> as raw exact text, or null when v is not finite.
 * (Callers that must explain a null add their own "<key>_reason".) */
ev_status ev_json_add_double(cJSON *obj, const char *key, double v);
/* Appends a double (or null) to an array. */
ev_status ev_json_push_double(cJSON *arr, double v);
/* Adds an integer: a JSON number when |v| <= 2^53, else a decimal string. */
ev_status ev_json_add_i64(cJSON *obj, const char *key, int64_t v);
ev_status ev_json_push_i64(cJSON *arr, int64_t v);
/* Adds a string (copied); NULL s adds null. */
ev_status ev_json_add_str(cJSON *obj, const char *key, const char *s);

/* Reading helpers over a parsed tree; each fails with EV_EFORMAT and an err
 * naming the key when the member is missing or of the wrong type. */
ev_status ev_json_get_double(const cJSON *obj, const char *key, double *out, ev_err *err);
ev_status ev_json_get_i64(const cJSON *obj, const char *key, int64_t *out, ev_err *err);
ev_status ev_json_get_str(const cJSON *obj, const char *key, const char **out, ev_err *err);

/* Serialises a tree deterministically (cJSON_PrintUnformatted, or the
 * formatted printer when pretty) and appends it plus "\n" to out. */
ev_status ev_json_print(const cJSON *tree, int pretty, ev_buf *out);

#endif
