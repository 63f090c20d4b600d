/*
 * cmd_report.c: 'evident report BUNDLE.zip [--markdown] --out FILE'.
 *
 * Reads every member of the bundle, then writes report.html (or, with
 * --markdown, the docs' case table) from them with src/evidence/report.h: the
 * same function the exporter ran, so a report regenerated from an intact
 * bundle equals its report.html byte for byte.  BUNDLE "-" reads stdin,
 * --out - writes stdout.  Exit 0 on success, 1 when
 * the file is readable but not a bundle the report can be drawn from, 2 on
 * usage errors and unreadable or unwritable paths.
 *
 * The archive is read with the verifier's hardened reader
 * (src/verify/zipread.h), so a report is never drawn from an archive that
 * verify-bundle's first check would refuse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "evidence/report.h"
#include "verify/zipread.h"

static const char report_usage[] =
    "usage: evident report BUNDLE.zip [--markdown] --out FILE\n"
    "\n"
    "Writes the human view of a bundle (BUNDLE.zip, or '-' for stdin), drawn from\n"
    "its members only:\n"
    "report.html (by default) or the markdown case table (--markdown).\n"
    "\n"
    "  --markdown     write the case table in markdown instead of HTML\n"
    "  --out FILE     where to write it (temporary file, then rename); '-': stdout\n"
    "  --help         this text\n"
    "  --version      the version\n"
    "\n"
    "exit status: 0 success, 1 not a usable bundle, 2 usage, a bundle that cannot be\n"
    "read or an output that cannot be written\n";

/* The members of an archive read by the verifier's hardened reader. */
typedef struct members {
    ev_zip *z;
    ev_member *m;
    size_t n;
} members;

/* Frees what read_members allocated. */
static void members_free(members *ms)
{
    free(ms->m);
    ev_zip_free(ms->z);
    memset(ms, 0, sizeof *ms);
}

/* Reads every member of the zip bytes p[0..n) into *ms (the one bundle
 * reader, ev_members_read_zip). */
static ev_status read_members(const void *p, size_t n, members *ms, ev_err *err)
{
    return ev_members_read_zip(p, n, &ms->z, &ms->m, &ms->n, err);
}

int ev_cmd_report(int argc, char **argv)
{
    enum { OPT_MARKDOWN, OPT_OUT };
    static const ev_cli_opt opts[] = {{"--markdown", 0}, {"--out", 1}};
    const char *in = NULL, *out = NULL, *v = NULL;
    int markdown = 0, k, code = EV_EXIT_OK;
    ev_cli cli;
    ev_err err = {""};
    ev_buf zip = EV_BUF_INIT, text = EV_BUF_INIT;
    members ms = {NULL, NULL, 0};
    ev_status rc = EV_OK;

    ev_cli_init(&cli, "evident report", opts, sizeof opts / sizeof opts[0], argc, argv);
    while ((k = ev_cli_step(&cli, report_usage, &v, &code)) != EV_CLI_END) {
        switch (k) {
        case EV_CLI_EXIT:
            return code;
        case EV_CLI_POSITIONAL:
            if (in)
                return ev_cli_usage(cli.cmd, "one bundle only ('%s' and '%s')", in, v);
            in = v;
            break;
        case OPT_MARKDOWN:
            markdown = 1;
            break;
        case OPT_OUT:
            out = v;
            break;
        }
    }
    if (!in || !out)
        return ev_cli_usage(cli.cmd, "a bundle and --out are required");
    if ((code = ev_cli_input(cli.cmd, "bundle", in)) || (code = ev_cli_output(cli.cmd, "--out", out)) ||
        (code = ev_cli_read(cli.cmd, in, &zip)))
        goto out;
    rc = read_members(zip.data, zip.len, &ms, &err);
    if (!rc)
        rc = markdown ? ev_report_markdown(ms.m, ms.n, &text, &err) : ev_report_html(ms.m, ms.n, &text, &err);
    if (rc) {
        ev_err_prefix(&err, "%s", in);
        fprintf(stderr, "evident report: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
        code = EV_EXIT_FAIL;
        goto out;
    }
    code = ev_cli_write(cli.cmd, out, text.data, text.len);
out:
    members_free(&ms);
    ev_buf_free(&zip);
    ev_buf_free(&text);
    return code;
}
