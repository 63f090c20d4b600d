/*
 * closure.c: the measurement closure's files under a root (closure.h).
 */
#include "closure.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "strs.h"

const char *const ev_closure_roots[] = {"kernels", "src/runner", "protocols", "db/schema.sql", NULL};

#define MAX_DEPTH 32

int ev_closure_in_roots(const char *rel)
{
    for (size_t i = 0; ev_closure_roots[i]; i++) {
        size_t n = strlen(ev_closure_roots[i]);
        if (!strncmp(rel, ev_closure_roots[i], n) && (rel[n] == '\0' || rel[n] == '/'))
            return 1;
    }
    return 0;
}

/* Reports rel to odd with errno's text. */
static void odd_errno(ev_closure_odd_fn odd, void *ctx, ev_closure_odd kind, const char *rel,
                      const char *what, int e)
{
    char why[256];
    if (!odd)
        return;
    snprintf(why, sizeof why, "%s: %s", what, strerror(e));
    odd(ctx, kind, rel, why);
}

/* Adds root/rel: a regular file, or every regular file under a directory. */
static ev_status walk(const char *root, const char *rel, int depth, ev_closure_odd_fn odd, void *ctx,
                      ev_strs *l)
{
    char full[4096], child[4096];
    struct stat st;
    struct dirent *e;
    ev_status rc = EV_OK;
    DIR *d;

    if ((size_t)snprintf(full, sizeof full, "%s/%s", root, rel) >= sizeof full) {
        if (odd)
            odd(ctx, EV_CLOSURE_UNREADABLE, rel, "path too long");
        return EV_OK;
    }
    if (lstat(full, &st)) {
        if (errno != ENOENT)
            odd_errno(odd, ctx, EV_CLOSURE_UNREADABLE, rel, "cannot stat", errno);
        return EV_OK;
    }
    if (S_ISREG(st.st_mode))
        return ev_strs_push(l, rel);
    if (!S_ISDIR(st.st_mode)) {
        if (odd)
            odd(ctx, EV_CLOSURE_NOT_REGULAR, rel,
                "not a regular file in the measurement closure (links are not followed)");
        return EV_OK;
    }
    if (depth > MAX_DEPTH) {
        if (odd)
            odd(ctx, EV_CLOSURE_TOO_DEEP, rel, "directory nesting deeper than 32 levels");
        return EV_OK;
    }
    if (!(d = opendir(full))) {
        odd_errno(odd, ctx, EV_CLOSURE_UNREADABLE, rel, "cannot list the directory", errno);
        return EV_OK;
    }
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if ((size_t)snprintf(child, sizeof child, "%s/%s", rel, e->d_name) >= sizeof child) {
            if (odd)
                odd(ctx, EV_CLOSURE_UNREADABLE, rel, "an entry's path is too long");
            continue;
        }
        rc = walk(root, child, depth + 1, odd, ctx, l);
    }
    closedir(d);
    return rc;
}

ev_status ev_closure_list(const char *root, const char *const *extra, size_t n_extra, ev_closure_odd_fn odd,
                          void *ctx, char ***paths, size_t *n)
{
    ev_strs l = EV_STRS_INIT;
    ev_status rc = EV_OK;
    size_t w = 0;

    *paths = NULL;
    *n = 0;
    for (size_t i = 0; !rc && ev_closure_roots[i]; i++)
        rc = walk(root, ev_closure_roots[i], 0, odd, ctx, &l);
    for (size_t i = 0; !rc && i < n_extra; i++)
        rc = walk(root, extra[i], 0, odd, ctx, &l);
    if (rc) {
        ev_closure_free(l.v, l.n);
        return rc;
    }
    qsort(l.v, l.n, sizeof *l.v, ev_strs_cmp);
    for (size_t i = 0; i < l.n; i++) { /* an extra file already under a root: once */
        if (w && !strcmp(l.v[w - 1], l.v[i])) {
            free(l.v[i]);
            continue;
        }
        l.v[w++] = l.v[i];
    }
    *paths = l.v;
    *n = w;
    return EV_OK;
}

void ev_closure_free(char **paths, size_t n)
{
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
}
