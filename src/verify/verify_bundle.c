/*
 * verify_bundle.c: the verifier's bundle: a bundle file read into memory
 * and through the hardened reader (check 1), samples.csv streamed as it
 * is read (verify_samples.c), its members sorted for lookup
 * (verify_lookup.c holds the lookups every check uses; verify_int.h).
 * The checks call these modules, never the driver (verify.c), which
 * calls them.
 */
#include "verify.h"

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

/* qsort comparator: members by name (bytewise). */
static int vb_cmp_member(const void *a, const void *b)
{
    return strcmp(((const vb_member *)a)->name, ((const vb_member *)b)->name);
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
    b->json_budget = ev_bundle_json_budget(raw_n);
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
    const vb_member *rec = vb_find(b, EV_MEMBER_RECEIPTS);
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
