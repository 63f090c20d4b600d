/*
 * zipwrite.c: deterministic zip archives built in memory with libzip.
 *
 * libzip's error codes are translated to EV_EZIP here, once.  The archive
 * lives in a zip_source_buffer that is kept alive across zip_close, then
 * read back into an ev_buf.
 */
#include "bundle/zipwrite.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zip.h>

/* qsort comparator over pointers to members: bytewise name order. */
static int member_ptr_cmp(const void *a, const void *b)
{
    const ev_member *const *x = a;
    const ev_member *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

/* Sets err from a libzip error and returns EV_EZIP. */
static ev_status zip_fail(ev_err *err, const char *what, zip_error_t *ze)
{
    return ev_err_set(err, EV_EZIP, "zip: %s: %s", what, zip_error_strerror(ze));
}

/*
 * Adds member m to za as entry with fixed time, attributes and method.
 * Returns EV_OK or EV_EZIP (err set); the source is freed on failure.
 */
static ev_status add_member(zip_t *za, const ev_member *m, ev_err *err)
{
    zip_source_t *src = zip_source_buffer(za, m->len ? m->data : NULL, m->len, 0);
    if (!src)
        return zip_fail(err, m->name, zip_get_error(za));
    zip_int64_t idx = zip_file_add(za, m->name, src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
        zip_source_free(src);
        return zip_fail(err, m->name, zip_get_error(za));
    }
    zip_uint64_t i = (zip_uint64_t)idx;
    if (zip_set_file_compression(za, i, ZIP_CM_DEFLATE, EV_ZIP_LEVEL) < 0 ||
        zip_file_set_dostime(za, i, EV_ZIP_DOS_TIME, EV_ZIP_DOS_DATE, 0) < 0 ||
        zip_file_set_external_attributes(za, i, 0, ZIP_OPSYS_UNIX, (zip_uint32_t)EV_ZIP_MODE << 16) < 0)
        return zip_fail(err, m->name, zip_get_error(za));
    return EV_OK;
}

/* Builds the archive in memory; see zipwrite.h. */
ev_status ev_zip_build(const ev_member *m, size_t n, ev_buf *out, ev_err *err)
{
    ev_status rc = EV_OK;
    const ev_member **order = NULL;
    zip_source_t *mem = NULL;
    zip_t *za = NULL;
    size_t start = out->len;
    zip_error_t ze;
    zip_error_init(&ze);

    if (n) {
        order = calloc(n, sizeof *order);
        if (!order) {
            rc = ev_err_set(err, EV_ENOMEM, "zip: out of memory");
            goto out;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!ev_member_name_ok(m[i].name)) {
            rc = ev_err_set(err, EV_EINVAL, "zip: member name not allowed: '%s'", m[i].name ? m[i].name : "");
            goto out;
        }
        order[i] = &m[i];
    }
    if (n)
        qsort(order, n, sizeof *order, member_ptr_cmp);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(order[i - 1]->name, order[i]->name)) {
            rc = ev_err_set(err, EV_EINVAL, "zip: duplicate member name '%s'", order[i]->name);
            goto out;
        }

    mem = zip_source_buffer_create(NULL, 0, 0, &ze);
    if (!mem) {
        rc = zip_fail(err, "in-memory source", &ze);
        goto out;
    }
    zip_source_keep(mem); /* survives zip_close / zip_discard */
    za = zip_open_from_source(mem, ZIP_TRUNCATE, &ze);
    if (!za) {
        rc = zip_fail(err, "open in memory", &ze);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = add_member(za, order[i], err)))
            goto out;
    if (zip_close(za) < 0) {
        rc = zip_fail(err, "close", zip_get_error(za));
        goto out;
    }
    za = NULL;

    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_source_stat(mem, &st) < 0 || !(st.valid & ZIP_STAT_SIZE) || zip_source_open(mem) < 0) {
        rc = zip_fail(err, "read back", zip_source_error(mem));
        goto out;
    }
    for (;;) {
        char chunk[65536];
        zip_int64_t got = zip_source_read(mem, chunk, sizeof chunk);
        if (got < 0) {
            rc = zip_fail(err, "read back", zip_source_error(mem));
            zip_source_close(mem);
            goto out;
        }
        if (got == 0)
            break;
        if ((rc = ev_buf_append(out, chunk, (size_t)got))) {
            ev_err_set(err, rc, "zip: out of memory");
            zip_source_close(mem);
            goto out;
        }
    }
    zip_source_close(mem);
    if ((zip_uint64_t)(out->len - start) != st.size)
        rc = ev_err_set(err, EV_EZIP, "zip: read back %zu bytes, expected %llu", out->len - start,
                        (unsigned long long)st.size);
out:
    if (za)
        zip_discard(za);
    zip_source_free(mem);
    zip_error_fini(&ze);
    free(order);
    if (rc && out->len > start) {
        out->len = start;
        if (out->data)
            out->data[start] = '\0';
    }
    return rc;
}

/* Builds and writes atomically; see zipwrite.h. */
ev_status ev_zip_write(const char *path, const ev_member *m, size_t n, ev_err *err)
{
    ev_buf zip = EV_BUF_INIT;
    ev_status rc = ev_zip_build(m, n, &zip, err);
    if (!rc)
        rc = ev_write_file(path, zip.data ? zip.data : "", zip.len, err);
    ev_buf_free(&zip);
    return rc;
}
