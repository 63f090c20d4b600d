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

/* 2^53: the largest magnitude below which every integer is a double. */
#define EV_JSON_INT_MAX 9007199254740992LL

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
 * and column of the first problem, as "offset O (line L, column C): reason"
 * (0-based offset; 1-based line and column, columns counted in bytes).
 * EV_EFORMAT on any violation.  Also refused: a UTF-8 BOM, NUL bytes, control
 * characters in strings, lone surrogate escapes, and number tokens longer
 * than 63 characters (cJSON would misread them). */
ev_status ev_json_check(const char *p, size_t n, unsigned flags, ev_err *err);

/* ev_json_check, then cJSON_ParseWithLengthOpts.  OUT: *out, a tree the
 * caller frees with cJSON_Delete; untouched on failure.  For text evident
 * wrote itself: text from anyone goes through ev_json_parse_bounded. */
ev_status ev_json_parse(const char *p, size_t n, unsigned flags, cJSON **out, ev_err *err);

/* ev_json_check and ev_json_parse with bounds: a document of more than
 * b->max_nodes values (every array, object, string, number and literal
 * counts one), or with a string or key longer than b->max_string bytes,
 * is refused by the lexer (EV_EFORMAT, err saying so) before any tree is
 * built, so a tree costs at most max_nodes cJSON nodes whatever the bytes
 * hold (a wide array of "0," would otherwise cost about 40 times its
 * text), and its strings at most the text's bytes.  OUT: *nodes (may be
 * NULL), the values counted, on success only. */
typedef struct ev_json_bounds {
    size_t max_nodes;  /* values (SIZE_MAX: any number) */
    size_t max_string; /* bytes of one string or key as written (SIZE_MAX: any) */
    int nul_after;     /* p[n] is readable and '\0': cJSON reads p itself, no copy is made */
} ev_json_bounds;
ev_status ev_json_check_bounded(const char *p, size_t n, unsigned flags, const ev_json_bounds *b,
                                size_t *nodes, ev_err *err);
ev_status ev_json_parse_bounded(const char *p, size_t n, unsigned flags, const ev_json_bounds *b,
                                size_t *nodes, cJSON **out, ev_err *err);

/* Parses the JSON file at path (ev_read_file + ev_json_parse); err is
 * prefixed with the path.  OUT: *out. */
ev_status ev_json_parse_file(const char *path, unsigned flags, cJSON **out, ev_err *err);

/* Writes v as exactly the text snprintf("%.17g") gives in the C locale
 * (17 significant digits, trailing zeros dropped, e.g. "0.10000000000000001",
 * "7", "-0", "1e+100"); strtod reads it back to the same bits.  Not the
 * shortest round-trip text.  buf must hold 32 bytes (24 are ever used).
 * Returns EV_ERANGE for NaN/Inf (buf untouched). */
ev_status ev_json_format_double(double v, char buf[32]);

/* Reads s[0..n) (not NUL-terminated) as one JSON number token: RFC 8259
 * syntax (no leading zeros, '+', spaces, hex, inf or nan), at most 63
 * characters, finite; with EV_JSON_CANONICAL also exactly the %.17g text of
 * its value.  OUT: *out.  EV_EFORMAT with a reason (no position) in err.
 * CSV double cells use the same rule. */
ev_status ev_json_read_number(const char *s, size_t n, unsigned flags, double *out, ev_err *err);

/* Every ev_json_add_* refuses (EV_EINVAL) a key obj already holds, since
 * the strict reader refuses duplicate keys; EV_ENOMEM when cJSON cannot
 * allocate.
 *
 * Adds key: <double> as raw exact text, or null when v is not finite.
 * (Callers that must explain a null add their own "<key>_reason".) */
ev_status ev_json_add_double(cJSON *obj, const char *key, double v);
/* Appends a double (or null) to an array. */
ev_status ev_json_push_double(cJSON *arr, double v);
/* An integer item with its exact text: a JSON number when |v| <= 2^53,
 * else a decimal string.  NULL when out of memory. */
cJSON *ev_json_i64(int64_t v);
/* Adds an integer: a JSON number when |v| <= 2^53, else a decimal string. */
ev_status ev_json_add_i64(cJSON *obj, const char *key, int64_t v);
ev_status ev_json_push_i64(cJSON *arr, int64_t v);
/* Adds an integer always as a decimal string (ns timestamps). */
ev_status ev_json_add_i64_string(cJSON *obj, const char *key, int64_t v);
/* Adds a string (copied); NULL s adds null. */
ev_status ev_json_add_str(cJSON *obj, const char *key, const char *s);
/* Adds true (v != 0) or false. */
ev_status ev_json_add_bool(cJSON *obj, const char *key, int v);

/* Reading helpers over a parsed tree; each fails with EV_EFORMAT and an err
 * naming the key when the member is missing or of the wrong type (null is a
 * wrong type).  OUT parameters are written only on success.
 * get_double: a finite number.
 * get_i64: a number that is an exact integer within +-2^53, or a string of
 *   decimal digits -?(0|[1-9][0-9]*) within int64 (not "-0"; EV_EFORMAT
 *   beyond either range too).
 * get_str, get_object, get_array: pointers into the tree. */
ev_status ev_json_get_double(const cJSON *obj, const char *key, double *out, ev_err *err);
ev_status ev_json_get_i64(const cJSON *obj, const char *key, int64_t *out, ev_err *err);
ev_status ev_json_get_str(const cJSON *obj, const char *key, const char **out, ev_err *err);
ev_status ev_json_get_bool(const cJSON *obj, const char *key, int *out, ev_err *err);
ev_status ev_json_get_object(const cJSON *obj, const char *key, const cJSON **out, ev_err *err);
ev_status ev_json_get_array(const cJSON *obj, const char *key, const cJSON **out, ev_err *err);

/* Serialises a tree deterministically (cJSON_PrintUnformatted, or the
 * formatted printer when pretty) and appends it plus "\n" to out.  Number
 * items (a parsed tree has them) are printed as %.17g text too, non-finite
 * ones as null, so a parsed tree re-prints canonical; raw items verbatim. */
ev_status ev_json_print(const cJSON *tree, int pretty, ev_buf *out);

/* 1 when text[0..n) is exactly what ev_json_print(tree, 1, out) writes
 * (cJSON's formatted printer, numbers as exact %.17g text, one final
 * newline), else 0; compared as it is walked, so nothing is copied or
 * printed (a tree as large as validation.json's is checked without a
 * second tree or its text).  OUT: *at (may be NULL), the offset of the
 * first byte that differs (n when text ends early or goes on). */
int ev_json_print_equals(const cJSON *tree, const char *text, size_t n, size_t *at);

/* Replaces every number item of tree, recursively, by raw text holding
 * its exact %.17g form, so a parsed tree prints canonically.  EV_EFORMAT
 * for a non-finite number, EV_ENOMEM; the tree may be partly converted on
 * failure. */
ev_status ev_json_canon_numbers(cJSON *tree);

#endif
