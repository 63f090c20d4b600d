/*
 * cmd_results.c: 'evident results BUNDLE.zip --json|--csv [--out FILE]'.
 *
 * The results as data (docs/results.md): one row per case and arm, drawn
 * from the bundle's members with src/evidence/report.h (the lookups the
 * report uses), read with ev_cli_read_bundle (the one bundle reader).
 * The bundle is verified first (verify-bundle's checks 1-6): one that
 * FAILs gets no rows, only its first failure on stderr, exit 1; one read
 * from stdin ("-"), or with --no-verify, is not verified, and stderr says
 * so in one line.
 * BUNDLE "-" reads stdin; --out defaults to stdout.  Exit 0 on success, 1
 * when the file is readable but not a bundle or does not verify, 2 on
 * usage errors and unreadable or unwritable paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "evidence/report.h"

static const char results_usage[] =
    "usage: evident results BUNDLE.zip --json|--csv [--out FILE]\n"
    "\n"
    "Writes one row per case and arm of a bundle (BUNDLE.zip, or '-' for stdin):\n"
    "the median (or the estimate over rounds), its 95% interval and what it\n"
    "stands on, bytes per op, GB/s, the % of the same run's ceiling, the outcome\n"
    "and why a job did not complete (docs/results.md).\n"
    "\n"
    "  --json         JSON (\"format\": \"" EV_RESULTS_FORMAT "\")\n"
    "  --csv          CSV (first column: the format, on every row)\n"
    "  --out FILE     where to write it (temporary file, then rename); default '-': stdout\n"
    "  --no-verify    do not verify the bundle first (stderr says so)\n"
    "  --help         this text\n"
    "  --version      the version\n"
    "\n"
    "The bundle is verified first (verify-bundle's checks 1-6): one that does not\n"
    "verify gets no rows (its first failure on stderr, exit 1); one read from stdin,\n"
    "or with --no-verify, is not verified, and stderr says so.\n"
    "\n"
    "exit status: 0 success, 1 not a usable bundle or one that does not verify, 2\n"
    "usage, a bundle that cannot be read or an output that cannot be written\n";

int ev_cmd_results(int argc, char **argv)
{
    enum { OPT_JSON, OPT_CSV, OPT_OUT, OPT_NO_VERIFY };
    static const ev_cli_opt opts[] = {{"--json", 0}, {"--csv", 0}, {"--out", 1}, {"--no-verify", 0}};
    const char *in = NULL, *out = "-", *v = NULL;
    int json = 0, csv = 0, k, code = EV_EXIT_OK, no_verify = 0;
    ev_cli cli;
    ev_err err = {""};
    ev_buf text = EV_BUF_INIT;
    ev_cli_bundle bun;
    ev_status rc = EV_OK;

    ev_cli_init(&cli, "evident results", opts, sizeof opts / sizeof opts[0], argc, argv);
    while ((k = ev_cli_next(&cli, &v)) != EV_CLI_END) {
        switch (k) {
        case EV_CLI_HELP:
            fputs(results_usage, stdout);
            return EV_EXIT_OK;
        case EV_CLI_VERSION:
            printf("evident results %s\n", EV_VERSION);
            return EV_EXIT_OK;
        case EV_CLI_BAD:
            return EV_EXIT_USAGE;
        case EV_CLI_POSITIONAL:
            if (in)
                return ev_cli_usage(cli.cmd, "one bundle only ('%s' and '%s')", in, v);
            in = v;
            break;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_CSV:
            csv = 1;
            break;
        case OPT_OUT:
            out = v;
            break;
        case OPT_NO_VERIFY:
            no_verify = 1;
            break;
        }
    }
    if (!in)
        return ev_cli_usage(cli.cmd, "a bundle is required");
    if (json == csv)
        return ev_cli_usage(cli.cmd, "one of --json or --csv is required");
    memset(&bun, 0, sizeof bun);
    if ((code = ev_cli_input(cli.cmd, "bundle", in)) || (code = ev_cli_output(cli.cmd, "--out", out)) ||
        (code = ev_cli_read_bundle(cli.cmd, in, &bun)))
        goto out;
    {
        char problem[1200];
        if (no_verify) {
            fprintf(stderr, "evident results: --no-verify: %s was not verified; its figures are unchecked\n",
                    in);
        } else if (ev_cli_is_std(in)) {
            fprintf(stderr,
                    "evident results: a bundle read from stdin is not verified (verify-bundle FILE checks "
                    "one)\n");
        } else if (ev_cli_verify_problem(in, problem, sizeof problem) == 1) {
            fprintf(stderr, "evident results: %s does not verify, no rows written: %s\n", in, problem);
            code = EV_EXIT_FAIL;
            goto out;
        }
    }
    rc = ev_results_write(bun.m, bun.n, csv, &text, &err);
    if (rc) {
        ev_err_prefix(&err, "%s", in);
        fprintf(stderr, "evident results: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
        code = EV_EXIT_FAIL;
        goto out;
    }
    code = ev_cli_write(cli.cmd, out, text.data, text.len);
out:
    ev_cli_bundle_free(&bun);
    ev_buf_free(&text);
    return code;
}
