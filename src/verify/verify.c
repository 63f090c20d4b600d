/*
 * verify.c: the verifier's driver.  It loads the bundle (verify_bundle.c:
 * the file read into memory, the only file it opens besides --source-tree's
 * and --kernel-tree's files, and the hardened reader, check 1), then runs checks 2 to 7 in order over
 * the members held in memory, each recording every failure it finds in the
 * report.  A check whose input failed an earlier check is reported NOT RUN
 * with the reason, never PASS.  --compare verifies both bundles, then
 * compares them (check 8).
 */
#include "verify.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/protocol.h"
#include "verify_int.h"
#include "zipread.h"

/* EV_EIO (err says why, naming option opt) unless dir is a directory we
 * can list. */
static ev_status vb_check_dir(const char *opt, const char *dir, ev_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return ev_err_set(err, EV_EIO, "%s '%s': %s", opt, dir, strerror(errno));
    closedir(d);
    return EV_OK;
}

/* Runs checks 2 to 6 on a loaded bundle (or marks them not run when the
 * archive was refused). */
static void vb_run_checks(vb_bundle *b, const ev_verify_opts *o, ev_vreport *r)
{
    if (!b->zip) {
        for (int c = VR_MEMBERS; c <= VR_REDERIVE; c++)
            vr_not_run(r, c, "the archive was refused (check 1): no member was read");
        return;
    }
    vc_members(b, o, r);
    vc_formats(b, r);
    vc_plan(b, r);
    vc_protocol(b, r);
    vc_rederive(b, r);
}

ev_status ev_verify_bundle(const char *path, const ev_verify_opts *opts, ev_vreport **out, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_vreport *r = NULL;
    vb_bundle *b = NULL;
    ev_verify_opts none = {NULL, NULL, NULL, NULL, 0, NULL};
    if (!opts)
        opts = &none;
    if (!path)
        return ev_err_set(err, EV_EIO, "no bundle path");
    if ((opts->source_tree && (rc = vb_check_dir("--source-tree", opts->source_tree, err))) ||
        (opts->kernel_tree && (rc = vb_check_dir("--kernel-tree", opts->kernel_tree, err))))
        return rc;
    if ((rc = vr_new(path, &r)))
        return rc;
    r->root_expected = opts->expect_root != NULL;
    if ((rc = vb_load(path, r, &b, err)))
        goto out;
    b->regen_limit = opts->regen_limit > 0 ? opts->regen_limit : EV_VERIFY_REGEN_LIMIT;
    vb_run_checks(b, opts, r);
    if (b->zip)
        vc_rebuild(b, r);
    if (opts->source_tree || opts->kernel_tree) {
        if (!b->zip)
            vr_not_run(r, VR_SOURCES, "the archive was refused (check 1): no member was read");
        else if ((opts->source_tree && (rc = vc_sources(b, opts->source_tree, r, err))) ||
                 (opts->kernel_tree && (rc = vc_kernel_tree(b, opts->kernel_tree, r, err))))
            goto out;
    } else {
        vr_not_requested(r, VR_SOURCES);
    }
    if (opts->key) {
        if (!b->zip)
            vr_not_run(r, VR_ATTEST, "the archive was refused (check 1): no member was read");
        else if ((rc = vc_attest(b, opts, r, err)))
            goto out;
    }
    *out = r;
    r = NULL;
out:
    vb_free(b);
    ev_vreport_free(r);
    return rc;
}

/* Copies the failures of every check of sub into r under check c, each
 * prefixed with tag ("A" or "B"). */
static void vb_merge_failures(ev_vreport *r, const ev_vreport *sub, const char *tag)
{
    for (int c = 0; c < VR_NCHECKS; c++) {
        const vr_check *k = &sub->checks[c];
        if (!k->used)
            continue;
        vr_use(r, c);
        for (size_t i = 0; i < k->n_fails; i++)
            vr_fail(r, c, k->fails[i].member, "%s: %s", tag, k->fails[i].text);
        if (k->n_fails_total > k->n_fails)
            vr_fail(r, c, "-", "%s: %zu more failures", tag, k->n_fails_total - k->n_fails);
        if (k->verdict == EV_VERDICT_NOT_RUN)
            vr_not_run(r, c, "%s: %s", tag, k->not_run_reason ? k->not_run_reason : "not run");
    }
    if (sub->oom)
        r->oom = 1;
}

ev_status ev_verify_compare(const char *path_a, const char *path_b, ev_vreport **out, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_vreport *r = NULL, *ra = NULL, *rb = NULL;
    vb_bundle *a = NULL, *b = NULL;
    ev_verify_opts none = {NULL, NULL, NULL, NULL, 0, NULL};

    if (!path_a || !path_b)
        return ev_err_set(err, EV_EIO, "--compare needs two bundles");
    if ((rc = vr_new(path_a, &ra)) || (rc = vr_new(path_b, &rb)))
        goto out;
    if ((rc = vb_load(path_a, ra, &a, err)) || (rc = vb_load(path_b, rb, &b, err)))
        goto out;
    a->regen_limit = b->regen_limit = EV_VERIFY_REGEN_LIMIT;
    vb_run_checks(a, &none, ra);
    vb_run_checks(b, &none, rb);
    size_t la = strlen(path_a), lb = strlen(path_b);
    char *both = malloc(la + lb + 5);
    if (!both) {
        rc = EV_ENOMEM;
        goto out;
    }
    memcpy(both, path_a, la);
    memcpy(both + la, " vs ", 4);
    memcpy(both + la + 4, path_b, lb + 1);
    rc = vr_new(both, &r);
    free(both);
    if (rc)
        goto out;
    r->compare = 1;
    vb_merge_failures(r, ra, "A");
    vb_merge_failures(r, rb, "B");
    vr_use(r, VR_COMPARE);
    if (!a->zip || !b->zip)
        vr_not_run(r, VR_COMPARE, "an archive was refused (check 1)");
    else
        vc_compare(a, b, r);
    *out = r;
    r = NULL;
out:
    vb_free(a);
    vb_free(b);
    ev_vreport_free(ra);
    ev_vreport_free(rb);
    ev_vreport_free(r);
    return rc;
}
