/*
 * strs.h: a growable list of owned strings (the closure's paths, the
 * verifier's changed files and their reasons), one definition for every
 * such list: each string pushed is copied, and the list frees its copies.
 */
#ifndef EV_STRS_H
#define EV_STRS_H

#include <stddef.h>

#include "status.h"

typedef struct ev_strs {
    char **v; /* v[0..n): owned copies */
    size_t n, cap;
} ev_strs;

#define EV_STRS_INIT                                                                                         \
    {                                                                                                        \
        NULL, 0, 0                                                                                           \
    }

/* Appends a copy of s.  EV_ENOMEM (list unchanged). */
ev_status ev_strs_push(ev_strs *l, const char *s);

/* Frees the copies and the array; NULL-safe; leaves l as EV_STRS_INIT. */
void ev_strs_free(ev_strs *l);

/* The qsort / bsearch comparator of a list's elements (char *): bytewise. */
int ev_strs_cmp(const void *a, const void *b);

#endif
