/*
 * jread.h: typed reading of parsed JSON, the strict kind: a missing key or
 * a value of the wrong type is an answer (-1), never a crash, so a hostile
 * member is reported and not trusted.  The verifier reads every member
 * with these; the shared readers of evidence/ (an attempt's record) too.
 */
#ifndef EV_JREAD_H
#define EV_JREAD_H

#include <stdint.h>

#include <cjson/cJSON.h>

/* Each returns 0 and sets *out, or -1 when the key is missing or of the
 * wrong type (integers must be integral and within +-2^53; *_ns fields
 * are decimal strings: ev_jr_ns). */
int ev_jr_i64(const cJSON *o, const char *key, int64_t *out);
/* As ev_jr_i64, but null is accepted: *is_null = 1 and *out untouched. */
int ev_jr_i64_null(const cJSON *o, const char *key, int64_t *out, int *is_null);
/* A finite number. */
int ev_jr_dbl(const cJSON *o, const char *key, double *out);
int ev_jr_dbl_null(const cJSON *o, const char *key, double *out, int *is_null);
int ev_jr_bool(const cJSON *o, const char *key, int *out);
/* The string value of key, or NULL when missing or not a string. */
const char *ev_jr_str(const cJSON *o, const char *key);
/* A decimal-string integer without leading zeros (the *_ns fields). */
int ev_jr_ns(const cJSON *o, const char *key, int64_t *out);

#endif
