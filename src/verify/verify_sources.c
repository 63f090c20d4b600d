/*
 * verify_sources.c: check 7, "sources" (--source-tree DIR).  Each sources/
 * member must equal the file of the same path in DIR byte for byte, and
 * every file of DIR's measurement closure must be in the bundle: evidence
 * measured with other kernel or runner bytes is stale, and the failure
 * lists the changed files.
 *
 * The measurement closure (src/common/closure.h, ev_closure_list: the
 * runner's own reading): the files DIR's mk/closure.list names and the
 * list itself (the build writes it from what the worker and the kernels
 * are built from; DIR needs no build: the list is a member, so a list
 * that differs from the bundle's is a changed file), or, in a tree without
 * the list (a commit from before it), every regular file under kernels/,
 * src/runner/ and protocols/ and db/schema.sql; and the protocol's
 * external kernel sources.  A listed file DIR lacks, symbolic links and
 * other kinds (not followed; the runner skips them, so they are not part
 * of the evidence) and unreadable directories FAIL here.  Paths are
 * '/'-separated, relative to DIR, compared bytewise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "closure.h"
#include "strs.h"
#include "runner/protocol.h"
#include "verify_int.h"

/* Joins dir "/" rel into buf (heap).  NULL on allocation failure. */
static char *vs_join(const char *dir, const char *rel)
{
    size_t a = strlen(dir), b = strlen(rel);
    char *s = malloc(a + b + 2);
    if (!s)
        return NULL;
    memcpy(s, dir, a);
    s[a] = '/';
    memcpy(s + a + 1, rel, b + 1);
    return s;
}

/* Reports an entry the closure walk left out (closure.h) under check 7. */
static void on_odd(void *ctx, ev_closure_odd kind, const char *rel, const char *why)
{
    (void)kind;
    vr_fail(ctx, VR_SOURCES, rel, "%s", why);
}

ev_status vc_sources(vb_bundle *b, const char *dir, ev_vreport *r, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_strs tree = EV_STRS_INIT, changed = EV_STRS_INIT, why = EV_STRS_INIT;
    (void)err;
    vr_use(r, VR_SOURCES);

    {
        /* the closure's roots, and the protocol's external kernel sources
         * (ext_kernel.h's closure rule): one walk, the runner's */
        const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
        const char *pp = ev_jr_str(run, "protocol_path"), *be = ev_jr_str(run, "backend");
        ev_strs ex = EV_STRS_INIT;
        if (b->proto && pp && be)
            rc = ev_ext_closure(b->proto->kernels, b->proto->n_kernels, pp, be, &ex);
        if (!rc)
            rc = ev_closure_list(dir, (const char *const *)ex.v, ex.n, on_odd, r, &tree.v, &tree.n);
        ev_strs_free(&ex);
        if (rc)
            goto out;
        tree.cap = tree.n;
    }

    /* Every sources/ member against the tree.  Per-file reasons are held in
     * `why` (parallel to `changed`) so the summary with the list of changed
     * files is recorded first and names the failure on the last stderr line. */
    size_t n_sources = 0;
    for (size_t i = 0; i < b->n; i++) {
        const vb_member *m = &b->m[i];
        if (!ev_member_is_source(m->name))
            continue;
        n_sources++;
        const char *rel = m->name + 8;
        const char *key = rel;
        if (!bsearch(&key, tree.v, tree.n, sizeof *tree.v, ev_strs_cmp)) {
            if ((rc = ev_strs_push(&changed, rel)) ||
                (rc = ev_strs_push(
                     &why, "in the bundle but not in DIR's measurement closure (removed, or outside it)")))
                goto out;
            continue;
        }
        char *abs = vs_join(dir, rel);
        ev_buf file = EV_BUF_INIT;
        ev_err ferr = {{0}};
        if (!abs) {
            rc = EV_ENOMEM;
            goto out;
        }
        ev_status frc = ev_read_file(abs, &file, &ferr);
        free(abs);
        if (frc == EV_ENOMEM) {
            rc = frc;
            goto out;
        }
        if (frc) {
            vr_fail(r, VR_SOURCES, m->name, "cannot read the tree's file: %s", ferr.msg);
        } else if (file.len != m->len || memcmp(file.data ? file.data : "", m->data, m->len)) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "differs from the source tree's file (%zu bytes there, %zu in the bundle)", file.len,
                     m->len);
            if (!(rc = ev_strs_push(&changed, rel)))
                rc = ev_strs_push(&why, msg);
        }
        ev_buf_free(&file);
        if (rc)
            goto out;
    }
    /* Every closure file must be a member. */
    for (size_t i = 0; i < tree.n; i++) {
        char *name = vs_join("sources", tree.v[i]);
        if (!name) {
            rc = EV_ENOMEM;
            goto out;
        }
        const vb_member *m = vb_find(b, name);
        free(name);
        if (!m && ((rc = ev_strs_push(&changed, tree.v[i])) ||
                   (rc = ev_strs_push(&why, "in DIR's measurement closure but not in the bundle"))))
            goto out;
    }
    if (changed.n > 0) {
        ev_buf list = EV_BUF_INIT;
        for (size_t i = 0; i < changed.n && !rc; i++)
            rc = ev_buf_printf(&list, "%s%s", i ? ", " : "", changed.v[i]);
        if (!rc)
            vr_fail(r, VR_SOURCES, EV_MEMBER_SOURCES, "stale evidence: %zu changed files: %s", changed.n,
                    list.data);
        ev_buf_free(&list);
        for (size_t i = 0; i < changed.n && !rc; i++)
            vr_fail(r, VR_SOURCES, changed.v[i], "%s", why.v[i]);
        if (rc)
            goto out;
    } else {
        vr_note(r, VR_SOURCES, EV_MEMBER_SOURCES,
                "%zu source members equal DIR's measurement closure of %zu files", n_sources, tree.n);
    }
out:
    ev_strs_free(&tree);
    ev_strs_free(&changed);
    ev_strs_free(&why);
    return rc;
}
