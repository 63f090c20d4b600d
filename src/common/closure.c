/*
 * closure.c: the measurement closure's files under a root (closure.h):
 * the tree's list, or the legacy roots.
 */
#include "closure.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "names.h"
#include "strs.h"

const char *const ev_closure_legacy_roots[] = {"kernels", "src/runner", "protocols", "db/schema.sql", NULL};

#define MAX_DEPTH 32

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

/* Returns 1 when root/mk/closure.list exists (any kind: a link or a
 * directory there is then an odd entry of the list's reading). */
int ev_closure_has_list(const char *root)
{
    char path[4096];
    struct stat st;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", root, EV_CLOSURE_LIST) >= sizeof path)
        return 0;
    return lstat(path, &st) == 0;
}

/* Adds the list at root and every file it names (one relative path a
 * line) to l; a name that is not a relative path a bundle could hold, and
 * a named file the tree lacks, go to odd. */
static ev_status from_list(const char *root, ev_closure_odd_fn odd, void *ctx, ev_strs *l)
{
    char path[4096], why[160];
    ev_buf b = EV_BUF_INIT;
    ev_err e = {{0}};
    ev_status rc;

    snprintf(path, sizeof path, "%s/%s", root, EV_CLOSURE_LIST);
    if ((rc = ev_read_file_max(path, (size_t)1 << 20, &b, &e))) {
        if (rc == EV_ENOMEM)
            return rc;
        if (odd)
            odd(ctx, EV_CLOSURE_UNREADABLE, EV_CLOSURE_LIST, e.msg);
        return EV_OK;
    }
    rc = walk(root, EV_CLOSURE_LIST, 0, odd, ctx, l);
    for (char *line = b.data; !rc && line && *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (nl)
            *nl = '\0';
        if (len) {
            const char *bad = ev_name_problem(line, len, why, sizeof why);
            char full[4096];
            struct stat st;
            if (bad) {
                if (odd) {
                    snprintf(path, sizeof path, "%s names '%.200s', which is not a path in a tree: %s",
                             EV_CLOSURE_LIST, line, bad);
                    odd(ctx, EV_CLOSURE_UNREADABLE, EV_CLOSURE_LIST, path);
                }
            } else if ((size_t)snprintf(full, sizeof full, "%s/%s", root, line) < sizeof full &&
                       lstat(full, &st) && errno == ENOENT) {
                if (odd)
                    odd(ctx, EV_CLOSURE_MISSING, line,
                        "named by " EV_CLOSURE_LIST " but not in the tree (moved or removed: the build "
                        "writes the list; run make, and commit the list with the move)");
            } else {
                rc = walk(root, line, 0, odd, ctx, l);
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    ev_buf_free(&b);
    return rc;
}

ev_status ev_closure_list(const char *root, ev_closure_odd_fn odd, void *ctx, char ***paths, size_t *n)
{
    ev_strs l = EV_STRS_INIT;
    ev_status rc = EV_OK;
    size_t w = 0;

    *paths = NULL;
    *n = 0;
    if (ev_closure_has_list(root))
        rc = from_list(root, odd, ctx, &l);
    else
        for (size_t i = 0; !rc && ev_closure_legacy_roots[i]; i++)
            rc = walk(root, ev_closure_legacy_roots[i], 0, odd, ctx, &l);
    if (rc) {
        ev_closure_free(l.v, l.n);
        return rc;
    }
    qsort(l.v, l.n, sizeof *l.v, ev_strs_cmp);
    for (size_t i = 0; i < l.n; i++) { /* a file named twice (a root and a file under it): once */
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
