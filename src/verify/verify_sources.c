/*
 * verify_sources.c: check 7, "sources", against the trees a caller names.
 *
 * --source-tree DIR (evident's tree): each sources/ member that is not a
 * protocol's kernel file must equal the file of the same path in DIR byte
 * for byte, and every file of DIR's measurement closure must be in the
 * bundle: evidence measured with other kernel or runner bytes is stale,
 * and the failure lists the changed files.
 *
 * The measurement closure (src/common/closure.h, ev_closure_list: the
 * runner's own reading): the files DIR's mk/closure.list names and the
 * list itself (the build writes it from what the worker and the kernels
 * are built from; DIR needs no build: the list is a member, so a list
 * that differs from the bundle's is a changed file), or, in a tree without
 * the list (a commit from before it), every regular file under kernels/,
 * src/runner/ and protocols/ and db/schema.sql.  A listed file DIR lacks,
 * symbolic links and other kinds (not followed; the runner skips them, so
 * they are not part of the evidence) and unreadable directories FAIL here.
 * Paths are '/'-separated, relative to DIR, compared bytewise.
 *
 * --kernel-tree DIR (the user's, the protocol's directory): each file the
 * protocol's kernels declare for the run's backend (the members
 * sources/external/<arm>/<file>, runner/ext_kernel.h) must equal DIR/<file>
 * byte for byte, reached without a symbolic link as the runner reads it,
 * and protocol.json the protocol file of the name the run recorded.
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
    ev_strs tree = EV_STRS_INIT, changed = EV_STRS_INIT, why = EV_STRS_INIT, ext = EV_STRS_INIT;
    (void)err;
    vr_use(r, VR_SOURCES);

    {
        /* DIR's closure (the runner's reading), and the protocol's kernel
         * files (ext_kernel.h), which are the user's, not DIR's */
        const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
        const char *be = ev_jr_str(run, "backend");
        if (b->proto && be)
            rc = ev_ext_closure(b->proto->kernels, b->proto->n_kernels, be, NULL, &ext, NULL);
        if (!rc)
            rc = ev_closure_list(dir, on_odd, r, &tree.v, &tree.n);
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
        const char *rel = m->name + 8;
        const char *key = rel;
        int kernel = 0;
        for (size_t k = 0; k < ext.n && !kernel; k++)
            kernel = !strcmp(ext.v[k], rel);
        if (kernel)
            continue; /* the user's file: --kernel-tree's */
        n_sources++;
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
    ev_strs_free(&ext);
    return rc;
}

/* Member m against the file at path (the user's), under check 7: a
 * failure naming what differs.  Returns 1 when they differ or the file
 * cannot be read, 0 when equal; -1 out of memory. */
static int vk_differs(ev_vreport *r, const vb_member *m, const char *path, const char *shown)
{
    ev_buf file = EV_BUF_INIT;
    ev_err ferr = {{0}};
    ev_status frc = ev_read_file(path, &file, &ferr);
    int bad = 0;
    if (frc == EV_ENOMEM)
        bad = -1;
    else if (frc) {
        vr_fail(r, VR_SOURCES, m->name, "cannot read the kernel tree's %s: %s", shown, ferr.msg);
        bad = 1;
    } else if (file.len != m->len || memcmp(file.data ? file.data : "", m->data, m->len)) {
        vr_fail(r, VR_SOURCES, m->name,
                "differs from the kernel tree's %s (%zu bytes there, %zu in the bundle)", shown, file.len,
                m->len);
        bad = 1;
    }
    ev_buf_free(&file);
    return bad;
}

ev_status vc_kernel_tree(vb_bundle *b, const char *dir, ev_vreport *r, ev_err *err)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    const char *be = ev_jr_str(run, "backend"), *pp = ev_jr_str(run, "protocol_path");
    ev_strs names = EV_STRS_INIT, paths = EV_STRS_INIT, changed = EV_STRS_INIT;
    ev_status rc = EV_OK;
    ev_err why = {""};
    size_t equal = 0;
    int compared = 0;
    (void)err;
    vr_use(r, VR_SOURCES);

    if (!b->proto || !be) {
        vr_not_run(r, VR_SOURCES, "--kernel-tree: protocol.json or the run's backend could not be read");
        return EV_OK;
    }
    if (!b->proto->n_kernels) {
        vr_note(r, VR_SOURCES, EV_MEMBER_PROTOCOL, "--kernel-tree: the protocol declares no kernels");
        return EV_OK;
    }
    if ((rc = ev_ext_closure(b->proto->kernels, b->proto->n_kernels, be, dir, &names, &paths)))
        goto out;
    /* the runner's refusals: a file missing, not regular, or reached through a link */
    if (ev_ext_check_sources(dir, b->proto->kernels, b->proto->n_kernels, be, &why))
        vr_fail(r, VR_SOURCES, EV_MEMBER_PROTOCOL, "--kernel-tree %s: %s", dir, why.msg);
    for (size_t i = 0; i < names.n && !why.msg[0]; i++) {
        char member[EV_EXT_MEMBER_MAX + 16];
        const vb_member *m;
        int d;
        snprintf(member, sizeof member, EV_MEMBER_SOURCES "%s", names.v[i]);
        if (!(m = vb_find(b, member)))
            continue; /* check 4 names it */
        if ((d = vk_differs(r, m, paths.v[i], paths.v[i] + strlen(dir) + 1)) < 0) {
            rc = EV_ENOMEM;
            goto out;
        }
        if (d && (rc = ev_strs_push(&changed, paths.v[i] + strlen(dir) + 1)))
            goto out;
        equal += !d;
    }
    /* the protocol file, by the name the run recorded (relative as given,
     * or "<path>/NAME") */
    {
        const char *base = pp ? strrchr(pp, '/') : NULL;
        const vb_member *m = vb_find(b, EV_MEMBER_PROTOCOL);
        char path[4400];
        base = base ? base + 1 : pp;
        if (!base || !*base || !strcmp(base, "<path>"))
            vr_note(r, VR_SOURCES, EV_MEMBER_PROTOCOL,
                    "--kernel-tree: protocol.json not compared: the run recorded no file name for it");
        else if (m && (size_t)snprintf(path, sizeof path, "%s/%s", dir, base) < sizeof path) {
            int d = vk_differs(r, m, path, base);
            if (d < 0) {
                rc = EV_ENOMEM;
                goto out;
            }
            if (d && (rc = ev_strs_push(&changed, base)))
                goto out;
            compared = !d;
        }
    }
    if (changed.n) {
        ev_buf list = EV_BUF_INIT;
        for (size_t i = 0; i < changed.n && !rc; i++)
            rc = ev_buf_printf(&list, "%s%s", i ? ", " : "", changed.v[i]);
        if (!rc)
            vr_fail(r, VR_SOURCES, EV_MEMBER_SOURCES "external/",
                    "the kernel tree differs from the bundle: %zu changed files: %s", changed.n, list.data);
        ev_buf_free(&list);
    } else if (!why.msg[0]) {
        vr_note(r, VR_SOURCES, EV_MEMBER_SOURCES "external/", "%zu kernel files equal the kernel tree's%s",
                equal, compared ? ", and protocol.json its protocol file" : "");
    }
out:
    ev_strs_free(&names);
    ev_strs_free(&paths);
    ev_strs_free(&changed);
    return rc;
}
