/*
 * verify.c: the verifier's driver.  It reads the bundle file into memory
 * (the only file it opens, besides --source-tree's files), hands the bytes
 * to the hardened reader (check 1), then runs checks 2 to 7 in order over
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

const char *const vb_required[] = {
    "model.json",    "proof-receipts.json", "protocol.json", "provenance.json",
    "receipts.json", "report.html",         "samples.csv",   "validation.json",
};
const size_t vb_n_required = sizeof vb_required / sizeof vb_required[0];

/* Returns 1 for names under sources/ or outputs/. */
int vb_is_listed_prefix(const char *name)
{
    return !strncmp(name, "sources/", 8) || !strncmp(name, "outputs/", 8);
}

/* qsort comparator: members by name (bytewise). */
static int vb_cmp_member(const void *a, const void *b)
{
    return strcmp(((const vb_member *)a)->name, ((const vb_member *)b)->name);
}

const vb_member *vb_find(const vb_bundle *b, const char *name)
{
    size_t lo = 0, hi = b ? b->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(b->m[mid].name, name);
        if (c == 0)
            return &b->m[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void vb_free(vb_bundle *b)
{
    if (!b)
        return;
    cJSON_Delete(b->receipts);
    cJSON_Delete(b->protocol);
    cJSON_Delete(b->validation);
    cJSON_Delete(b->model);
    cJSON_Delete(b->proof);
    cJSON_Delete(b->provenance);
    vb_samples_free_jobs(&b->samples);
    free(b->samples.rows);
    vb_stream_free(b->sstream);
    ev_zip_free(b->zip2);
    if (b->raw_n)
        munmap((void *)b->raw, b->raw_n);
    free(b->vjobs);
    if (b->proto) {
        ev_protocol_free(b->proto);
        free(b->proto);
    }
    free(b->m);
    ev_zip_free(b->zip);
    free(b);
}

/* Maps a regular file read-only.  OUT: *p, *n (n = 0: p is "", nothing
 * mapped; else munmap(p, n)).  The bytes are read from the file as they
 * are needed, so a bundle of any size costs address space, not memory.
 * EV_EIO (err says why) when path is not a readable regular file;
 * EV_ENOMEM when it cannot be mapped for want of memory. */
static ev_status vb_map_path(const char *path, const char **p, size_t *n, ev_err *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ev_err_set(err, EV_EIO, "cannot open '%s': %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return ev_err_set(err, EV_EIO, "'%s' is not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        *p = "";
        *n = 0;
        return EV_OK;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED)
        return ev_err_set(err, e == ENOMEM ? EV_ENOMEM : EV_EIO, "cannot map '%s': %s", path, strerror(e));
    madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
    *p = m;
    *n = (size_t)st.st_size;
    return EV_OK;
}

ev_status vb_load(const char *path, ev_vreport *r, vb_bundle **out, ev_err *err)
{
    ev_status rc = EV_OK;
    const char *raw = "";
    size_t raw_n = 0;
    ev_zip_problems *probs = NULL;
    ev_zip *zip = NULL;
    vb_bundle *b = NULL;

    if ((rc = vb_map_path(path, &raw, &raw_n, err)))
        goto out;
    b = calloc(1, sizeof *b);
    if (!b) {
        rc = EV_ENOMEM;
        goto out;
    }
    if ((rc = ev_zip_problems_new(&probs)))
        goto out;
    vr_use(r, VR_ARCHIVE);
    ev_zip_stream zs;
    if ((rc = vb_stream_start(b, &zs)))
        goto out;
    rc = ev_zip_read_mem_stream(raw, raw_n, NULL, &zs, &zip, probs, err);
    vb_stream_finish(b);
    b->raw = raw; /* for samples.csv's text, when it must be read again */
    b->raw_n = raw_n;
    raw_n = 0;
    if (rc == EV_EVERIFY) {
        size_t np = ev_zip_problems_count(probs);
        for (size_t i = 0; i < np; i++) {
            const ev_zip_problem *p = ev_zip_problems_at(probs, i);
            vr_fail(r, VR_ARCHIVE, p->member, "%s", p->reason);
        }
        if (np == 0)
            vr_fail(r, VR_ARCHIVE, "-", "archive refused");
        rc = EV_OK;
        *out = b;
        b = NULL;
        goto out;
    }
    if (rc)
        goto out;
    b->zip = zip;
    zip = NULL;
    b->n = ev_zip_count(b->zip);
    b->m = calloc(b->n ? b->n : 1, sizeof *b->m);
    if (!b->m) {
        rc = EV_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < b->n; i++) {
        const ev_zip_member *zm = ev_zip_at(b->zip, i);
        b->m[i].name = zm->name;
        b->m[i].data = zm->data;
        b->m[i].len = (size_t)zm->size;
        b->m[i].sha = zm->sha256;
        b->m[i].sha_hex = zm->sha256_hex;
    }
    qsort(b->m, b->n, sizeof *b->m, vb_cmp_member);
    const vb_member *rec = vb_find(b, "receipts.json");
    if (rec) {
        memcpy(b->root_hex, rec->sha_hex, EV_SHA256_HEX_LEN + 1);
        b->have_root = 1;
        memcpy(r->root_hex, b->root_hex, sizeof r->root_hex);
        r->have_root = 1;
    }
    *out = b;
    b = NULL;
out:
    vb_free(b);
    ev_zip_free(zip);
    ev_zip_problems_free(probs);
    if (raw_n)
        munmap((void *)raw, raw_n);
    return rc;
}

/* EV_EIO (err says why) unless dir is a directory we can list. */
static ev_status vb_check_dir(const char *dir, ev_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return ev_err_set(err, EV_EIO, "--source-tree '%s': %s", dir, strerror(errno));
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
    ev_verify_opts none = {NULL, NULL};
    if (!opts)
        opts = &none;
    if (!path)
        return ev_err_set(err, EV_EIO, "no bundle path");
    if (opts->source_tree && (rc = vb_check_dir(opts->source_tree, err)))
        return rc;
    if ((rc = vr_new(path, &r)))
        return rc;
    r->root_expected = opts->expect_root != NULL;
    if ((rc = vb_load(path, r, &b, err)))
        goto out;
    vb_run_checks(b, opts, r);
    if (opts->source_tree) {
        if (!b->zip)
            vr_not_run(r, VR_SOURCES, "the archive was refused (check 1): no member was read");
        else if ((rc = vc_sources(b, opts->source_tree, r, err)))
            goto out;
    } else {
        vr_not_requested(r, VR_SOURCES);
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
    ev_verify_opts none = {NULL, NULL};

    if (!path_a || !path_b)
        return ev_err_set(err, EV_EIO, "--compare needs two bundles");
    if ((rc = vr_new(path_a, &ra)) || (rc = vr_new(path_b, &rb)))
        goto out;
    if ((rc = vb_load(path_a, ra, &a, err)) || (rc = vb_load(path_b, rb, &b, err)))
        goto out;
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
