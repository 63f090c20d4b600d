/*
 * cmd_report.c: 'evident report BUNDLE.zip [--markdown] --out FILE'.
 *
 * Reads every member of the bundle, then writes report.html (or, with
 * --markdown, the docs' case table) from them with src/bundle/report.h: the
 * same function the exporter ran, so a report regenerated from an intact
 * bundle equals its report.html byte for byte.  Exit 0 on success, 1 when
 * the file is readable but not a bundle the report can be drawn from, 2 on
 * usage errors and unreadable or unwritable paths.
 *
 * The archive is read here with libzip (consistency checks on, every member
 * read to its end so its CRC is checked, byte counts equal to the declared
 * sizes); once the verifier's hardened reader (src/verify/zipread.h) is on
 * main, this reads through it instead.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zip.h>

#include "cli.h"
#include "bundle/report.h"

static const char report_usage[] =
    "usage: evident report BUNDLE.zip [--markdown] --out FILE\n"
    "\n"
    "Writes the human view of a bundle, drawn from its members only:\n"
    "report.html (by default) or the markdown case table (--markdown).\n"
    "\n"
    "  --markdown     write the case table in markdown instead of HTML\n"
    "  --out FILE     where to write it (temporary file, then rename)\n"
    "  --help         this text\n"
    "  --version      the version\n"
    "\n"
    "exit status: 0 success, 1 not a usable bundle, 2 usage or unreadable path\n";

/* The members read from an archive, with their storage. */
typedef struct members {
    ev_member *m;
    size_t n;
} members;

/* Frees what read_members allocated. */
static void members_free(members *ms)
{
    for (size_t i = 0; i < ms->n; i++) {
        free((void *)ms->m[i].name);
        free((void *)ms->m[i].data);
    }
    free(ms->m);
    ms->m = NULL;
    ms->n = 0;
}

/* Reads every member of the zip bytes p[0..n) into *ms.  EV_EFORMAT (err
 * says why) when libzip refuses the archive or a member. */
static ev_status read_members(const void *p, size_t n, members *ms, ev_err *err)
{
    ev_status rc = EV_OK;
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(p, n, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze) : NULL;
    if (!za) {
        rc = ev_err_set(err, EV_EFORMAT, "not a zip archive: %s", zip_error_strerror(&ze));
        zip_source_free(src);
        goto out;
    }
    zip_int64_t count = zip_get_num_entries(za, 0);
    if (count < 0 || count > 1000000) {
        rc = ev_err_set(err, EV_EFORMAT, "bad entry count");
        goto out;
    }
    ms->m = calloc((size_t)count + 1, sizeof *ms->m);
    if (!ms->m) {
        rc = ev_err_set(err, EV_ENOMEM, "out of memory");
        goto out;
    }
    for (zip_int64_t i = 0; i < count; i++) {
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat_index(za, (zip_uint64_t)i, 0, &st) < 0 || !(st.valid & ZIP_STAT_NAME) ||
            !(st.valid & ZIP_STAT_SIZE) || st.size > (zip_uint64_t)1 << 31) {
            rc = ev_err_set(err, EV_EFORMAT, "entry %lld: unreadable or too large", (long long)i);
            goto out;
        }
        size_t nl = strlen(st.name), sz = (size_t)st.size;
        char *name = malloc(nl + 1), *data = malloc(sz + 1);
        ms->m[ms->n].name = name;
        ms->m[ms->n].data = data;
        ms->m[ms->n].len = 0;
        ms->n++;
        if (!name || !data) {
            rc = ev_err_set(err, EV_ENOMEM, "out of memory");
            goto out;
        }
        memcpy(name, st.name, nl + 1);
        zip_file_t *zf = zip_fopen_index(za, (zip_uint64_t)i, 0);
        if (!zf) {
            rc = ev_err_set(err, EV_EFORMAT, "%s: %s", name, zip_strerror(za));
            goto out;
        }
        size_t got = 0;
        for (;;) {
            char extra;
            zip_int64_t r = got < sz ? zip_fread(zf, data + got, sz - got) : zip_fread(zf, &extra, 1);
            if (r < 0) {
                rc = ev_err_set(err, EV_EFORMAT, "%s: %s", name, zip_file_strerror(zf));
                break;
            }
            if (r == 0)
                break;
            if (got >= sz) {
                rc = ev_err_set(err, EV_EFORMAT, "%s: more bytes than its declared size", name);
                break;
            }
            got += (size_t)r;
        }
        zip_fclose(zf);
        if (!rc && got != sz)
            rc = ev_err_set(err, EV_EFORMAT, "%s: %zu bytes, declared %zu", name, got, sz);
        if (rc)
            goto out;
        data[sz] = '\0';
        ms->m[ms->n - 1].len = sz;
    }
out:
    if (za)
        zip_discard(za);
    zip_error_fini(&ze);
    return rc;
}

int ev_cmd_report(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    int markdown = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(report_usage, stdout);
            return EV_EXIT_OK;
        }
        if (!strcmp(a, "--version")) {
            printf("evident report %s\n", EV_VERSION);
            return EV_EXIT_OK;
        }
        if (!strcmp(a, "--markdown")) {
            markdown = 1;
        } else if (!strcmp(a, "--out")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "evident report: --out needs a value\n");
                return EV_EXIT_USAGE;
            }
            out = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "evident report: unknown argument '%s' (try --help)\n", a);
            return EV_EXIT_USAGE;
        } else if (!in) {
            in = a;
        } else {
            fprintf(stderr, "evident report: one bundle only ('%s')\n", a);
            return EV_EXIT_USAGE;
        }
    }
    if (!in || !out) {
        fprintf(stderr, "evident report: a bundle and --out are required (try --help)\n");
        return EV_EXIT_USAGE;
    }

    ev_err err;
    err.msg[0] = '\0';
    ev_buf zip = EV_BUF_INIT, text = EV_BUF_INIT;
    members ms = {NULL, 0};
    int code = EV_EXIT_OK;
    ev_status rc = ev_read_file(in, &zip, &err);
    if (rc) {
        code = EV_EXIT_USAGE;
        goto out;
    }
    rc = read_members(zip.data, zip.len, &ms, &err);
    if (!rc)
        rc = markdown ? ev_report_markdown(ms.m, ms.n, &text, &err) : ev_report_html(ms.m, ms.n, &text, &err);
    if (rc) {
        ev_err_prefix(&err, "%s", in);
        code = EV_EXIT_FAIL;
        goto out;
    }
    rc = ev_write_file(out, text.data ? text.data : "", text.len, &err);
    if (rc)
        code = EV_EXIT_USAGE;
out:
    if (rc)
        fprintf(stderr, "evident report: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
    members_free(&ms);
    ev_buf_free(&zip);
    ev_buf_free(&text);
    return code;
}
