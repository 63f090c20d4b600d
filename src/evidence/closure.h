/*
 * closure.h: the measurement closure (DESIGN.md "Receipts and bundle";
 * docs/runner.md "Provenance"), one definition for the runner's snapshot
 * (runner/snapshot.h: the bytes that ran) and the verifier's source check
 * (src/verify/verify_sources.c: the bytes in a source tree).  The roots are
 * kernels/, src/runner/, protocols/ and db/schema.sql, plus the files a
 * protocol adds (its external kernels' sources, ext_kernel.h).
 */
#ifndef EV_CLOSURE_H
#define EV_CLOSURE_H

#include <stddef.h>

#include "status.h"

/* The roots, NULL-terminated: directories walked recursively, or files. */
extern const char *const ev_closure_roots[];

/* Why an entry was left out of the list. */
typedef enum ev_closure_odd {
    EV_CLOSURE_NOT_REGULAR, /* not a regular file nor a directory: links are not followed */
    EV_CLOSURE_UNREADABLE,  /* a directory that cannot be listed, an entry that cannot be stat'ed */
    EV_CLOSURE_TOO_DEEP     /* nested deeper than 32 directories */
} ev_closure_odd;

/* 1 when relative path rel is under one of the roots (a file of a root
 * directory, or a root file itself), else 0: evident's own files, which a
 * kernel's build may read without declaring them (runner/ext_build.h). */
int ev_closure_in_roots(const char *rel);

/* Called for each entry left out, with its relative path and the reason
 * in words (errno's text included). */
typedef void (*ev_closure_odd_fn)(void *ctx, ev_closure_odd kind, const char *rel, const char *why);

/*
 * The closure under root: every regular file under each root and each of
 * extra[0..n_extra) (relative paths), as relative '/'-separated paths,
 * sorted bytewise, each once.  A root or extra file that does not exist
 * adds nothing; every other entry left out is reported to odd (when not
 * NULL).  OUT: *paths (ev_closure_free), *n.  EV_ENOMEM.
 */
ev_status ev_closure_list(const char *root, const char *const *extra, size_t n_extra, ev_closure_odd_fn odd,
                          void *ctx, char ***paths, size_t *n);

/* Frees a list from ev_closure_list; NULL-safe. */
void ev_closure_free(char **paths, size_t n);

#endif
