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
 * (src/common/zipread.h), so a report is never drawn from an archive that
 * verify-bundle's first check would refuse.  A bundle file is also
 * verified (checks 1-6, src/verify/verify.h): when it fails, the report
 * opens with a red notice naming the first failure and is written all
 * the same (exit 0: the report is a view; verify-bundle is the verdict),
 * and stderr says so in one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "evidence/report.h"
#include "verify/verify.h"

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
    "A bundle file that does not verify (verify-bundle's checks 1-6) is reported with\n"
    "a red notice at the top naming its first failure (stderr says so too).\n"
    "\n"
    "exit status: 0 success, 1 not a usable bundle, 2 usage, a bundle that cannot be\n"
    "read or an output that cannot be written\n";

/* See cli.h. */
int ev_cli_verify_problem(const char *path, char *problem, size_t cap)
{
    ev_verify_opts o = {NULL, NULL, NULL, NULL, 0, NULL};
    ev_vreport *vr = NULL;
    ev_err err = {""};
    const char *check, *member, *reason;
    int bad = 0;
    if (ev_cli_is_std(path))
        return 0;
    if (ev_verify_bundle(path, &o, &vr, &err)) {
        snprintf(problem, cap, "verify-bundle could not check it: %s", err.msg);
        bad = 1;
    } else if (!ev_vreport_passed(vr)) {
        if (ev_vreport_failures(vr) == 1 && ev_vreport_first_failure(vr, &check, &member, &reason) &&
            !strcmp(check, "rederive") && !strcmp(member, "report.html")) {
            /* an earlier bundle: its page is another version's; the rest holds */
            snprintf(
                problem, cap,
                "verify-bundle: FAIL rederive: report.html: its own page is not the one this version of "
                "evident draws (an earlier version's, or edited); every other check passes, and the page "
                "below is this version's, drawn from its other members");
            bad = 2;
        } else if (ev_vreport_first_failure(vr, &check, &member, &reason))
            snprintf(problem, cap,
                     "verify-bundle: FAIL %s: %s: %s (%zu failure%s in all; verify-bundle says more)", check,
                     member, reason, ev_vreport_failures(vr), ev_vreport_failures(vr) == 1 ? "" : "s");
        else
            snprintf(problem, cap, "verify-bundle: FAIL (%s)",
                     ev_vreport_out_of_memory(vr) ? "out of memory" : "no failure named");
        if (!bad)
            bad = 1;
    }
    ev_vreport_free(vr);
    return bad;
}

int ev_cmd_report(int argc, char **argv)
{
    enum { OPT_MARKDOWN, OPT_OUT };
    static const ev_cli_opt opts[] = {{"--markdown", 0}, {"--out", 1}};
    const char *in = NULL, *out = NULL, *v = NULL;
    int markdown = 0, k, code = EV_EXIT_OK, bad = 0;
    char problem[1200] = "";
    ev_cli cli;
    ev_err err = {""};
    ev_buf text = EV_BUF_INIT;
    ev_cli_bundle bun;
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
    memset(&bun, 0, sizeof bun);
    if ((code = ev_cli_input(cli.cmd, "bundle", in)) || (code = ev_cli_output(cli.cmd, "--out", out)) ||
        (code = ev_cli_read_bundle(cli.cmd, in, &bun)))
        goto out;
    bad = ev_cli_verify_problem(in, problem, sizeof problem);
    if (markdown && bad)
        rc = ev_buf_printf(&text, "**This bundle does not verify.** %s\n\n", problem);
    if (!rc)
        rc = markdown ? ev_report_markdown(bun.m, bun.n, &text, &err)
                      : ev_report_html_flagged(bun.m, bun.n, bad ? problem : NULL, &text, &err);
    if (rc) {
        ev_err_prefix(&err, "%s", in);
        fprintf(stderr, "evident report: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
        code = EV_EXIT_FAIL;
        goto out;
    }
    code = ev_cli_write(cli.cmd, out, text.data, text.len);
    if (!code && bad)
        fprintf(stderr, "evident report: %s: written with a notice: %s\n", in, problem);
out:
    ev_cli_bundle_free(&bun);
    ev_buf_free(&text);
    return code;
}
