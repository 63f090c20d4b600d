/*
 * closure.h: the measurement closure (docs/runner.md "Provenance"), one
 * definition for the runner's snapshot (runner/snapshot.h: the bytes that
 * ran), the verifier's source check (src/verify/verify_sources.c: the
 * bytes in a source tree), `evident stamp` and make install.
 *
 * A tree's closure is the files its mk/closure.list names, and the list
 * itself: the build writes the list from its own dependency files (what
 * the worker and the kernels are built from: mk/closure.sh), so a file
 * moved to another folder stays in it.  A tree without the list (one
 * checked out at a commit from before it) is read as the closure was then
 * defined: every file under kernels/, src/runner/ and protocols/, and
 * db/schema.sql, so committed evidence still verifies against the commit
 * it measured.  A protocol's external kernels are not evident's: the
 * snapshot keeps them beside the closure under names of their own
 * (runner/ext_kernel.h, ev_ext_member_path).
 */
#ifndef EV_CLOSURE_H
#define EV_CLOSURE_H

#include <stddef.h>

#include "status.h"

/* The closure's list in a tree (written by the build). */
#define EV_CLOSURE_LIST "mk/closure.list"
/* A tree without the list: the roots the closure was read by before it,
 * NULL-terminated (directories walked recursively, or files). */
extern const char *const ev_closure_legacy_roots[];

/* 1 when the tree at root has a closure list (ev_closure_list reads it),
 * 0 when it is read by the legacy roots. */
int ev_closure_has_list(const char *root);

/* Why an entry was left out of the list. */
typedef enum ev_closure_odd {
    EV_CLOSURE_NOT_REGULAR, /* not a regular file nor a directory: links are not followed */
    EV_CLOSURE_UNREADABLE,  /* a directory that cannot be listed, an entry that cannot be stat'ed,
                               a list that cannot be read or names a path no tree holds */
    EV_CLOSURE_TOO_DEEP,    /* nested deeper than 32 directories */
    EV_CLOSURE_MISSING      /* named by the list, not in the tree */
} ev_closure_odd;

/* Called for each entry left out, with its relative path and the reason
 * in words (errno's text included). */
typedef void (*ev_closure_odd_fn)(void *ctx, ev_closure_odd kind, const char *rel, const char *why);

/*
 * The closure under root: every file its list names and the list (or,
 * without a list, every regular file under each legacy root), as relative
 * '/'-separated paths, sorted bytewise, each once.  A legacy root that
 * does not exist adds nothing; a listed file that does not is reported
 * (EV_CLOSURE_MISSING), as is every other entry left out, to odd (when
 * not NULL).  OUT: *paths (ev_closure_free), *n.  EV_ENOMEM.
 */
ev_status ev_closure_list(const char *root, ev_closure_odd_fn odd, void *ctx, char ***paths, size_t *n);

/* Frees a list from ev_closure_list; NULL-safe. */
void ev_closure_free(char **paths, size_t n);

#endif
