/*
 * cmd_compare.c: 'evident compare A.zip B.zip [--markdown|--json]
 * [--fail-slower PCT] [--out FILE]'.
 *
 * Per case and arm the ratio B / A with its 95% interval and its call,
 * from the two bundles' raw samples (src/evidence/compare.h), and a summary
 * line.  Each bundle is read with ev_cli_read_bundle (the one bundle
 * reader) and verified first (verify-bundle's checks 1-6; --no-verify
 * skips that and says so in one line): a bundle that FAILs is no basis
 * for a comparison (its first failure on stderr, nothing written, exit
 * 1).  Exit 0 on success, 1 when --fail-slower is given and some
 * slow-down called exceeds it, a file is readable but not a bundle, or a
 * bundle does not verify; 2
 * on usage errors, unreadable or unwritable paths, and a gate over runs of
 * different setups without --allow-different; 3 when some pair's rounds
 * were too few or too noisy to call (compare_status).
 * `verify-bundle --compare` stays the reproducibility gate: this command
 * says how the timings moved.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "evidence/compare.h"

static const char compare_usage[] =
    "usage: evident compare A.zip B.zip [--markdown|--json] [--fail-slower PCT] [--allow-different]\n"
    "                       [--out FILE]\n"
    "\n"
    "Compares run B against run A case by case and arm by arm: B / A of each\n"
    "estimate, its 95% interval and its call, from the bundles' raw samples\n"
    "(docs/results.md), then a summary line.  With one round a difference is\n"
    "called only beyond the runs' measured noise floor (docs/intervals.md).\n"
    "\n"
    "  --markdown         a markdown table (the default)\n"
    "  --json             JSON (\"format\": \"" EV_COMPARE_FORMAT "\")\n"
    "  --fail-slower PCT  exit 1 when any slow-down called is more than PCT percent\n"
    "  --allow-different  gate even when the runs' protocols, devices, drivers or peer\n"
    "                     versions differ (the document says how they differ)\n"
    "  --no-verify        do not verify the bundles first (stderr says so)\n"
    "  --out FILE         where to write it (temporary file, then rename); default '-': stdout\n"
    "  --help             this text\n"
    "  --version          the version\n"
    "\n"
    "Both bundles are verified first (verify-bundle's checks 1-6): a bundle that\n"
    "does not verify is no basis for a comparison (nothing is written, exit 1).\n"
    "\n"
    "exit status: 0 success, 1 a slow-down called beyond --fail-slower, a file\n"
    "that is not a usable bundle or a bundle that does not verify, 2 usage, a bundle that cannot be read, an "
    "output\n"
    "that cannot be written or a gate over different setups without\n"
    "--allow-different, 3 some pair's rounds were too few or too noisy to call\n";

/* The exit status of a written comparison (res), its reason on stderr:
 * a refused gate 2, a slow-down beyond the gate 1, an inconclusive pair 3,
 * else 0. */
static int compare_status(const ev_compare_opts *co, const ev_compare_result *res)
{
    if (res->gate_refused) {
        fprintf(stderr,
                "evident compare: the runs' setups differ (%s): --fail-slower gates like with like; add "
                "--allow-different to gate across them\n",
                res->differences);
        return EV_EXIT_USAGE;
    }
    if (res->gated) {
        fprintf(stderr, "evident compare: %zu slow-down%s called beyond %g%% (B / A > %g)\n", res->gated,
                res->gated == 1 ? "" : "s", co->fail_slower, 1.0 + co->fail_slower / 100.0);
        return EV_EXIT_FAIL;
    }
    if (res->inconclusive) {
        fprintf(stderr,
                "evident compare: %zu pair%s inconclusive: too few or too noisy rounds to call (more rounds, "
                "or a quieter host)\n",
                res->inconclusive, res->inconclusive == 1 ? "" : "s");
        return EV_EXIT_INCONCLUSIVE;
    }
    return EV_EXIT_OK;
}

/* Reads the percentage text s into *pct: a finite decimal >= 0.  Returns
 * 0, or -1 when it is not one. */
static int parse_pct(const char *s, double *pct)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || errno || !end || *end || !isfinite(v) || v < 0)
        return -1;
    *pct = v;
    return 0;
}

int ev_cmd_compare(int argc, char **argv)
{
    enum { OPT_MARKDOWN, OPT_JSON, OPT_FAIL, OPT_OUT, OPT_DIFFERENT, OPT_NO_VERIFY };
    static const ev_cli_opt opts[] = {{"--markdown", 0},        {"--json", 0},
                                      {"--fail-slower", 1},     {"--out", 1},
                                      {"--allow-different", 0}, {"--no-verify", 0}};
    const char *in[2] = {NULL, NULL}, *out = "-", *v = NULL;
    int markdown = 0, k, code = EV_EXIT_OK, no_verify = 0;
    ev_compare_opts co = {0, 0, 0, 0};
    ev_compare_result res;
    ev_cli cli;
    ev_err err = {""};
    ev_buf text = EV_BUF_INIT;
    ev_cli_bundle b[2];
    ev_status rc = EV_OK;

    memset(b, 0, sizeof b);
    ev_cli_init(&cli, "evident compare", opts, sizeof opts / sizeof opts[0], argc, argv);
    while ((k = ev_cli_next(&cli, &v)) != EV_CLI_END) {
        switch (k) {
        case EV_CLI_HELP:
            fputs(compare_usage, stdout);
            return EV_EXIT_OK;
        case EV_CLI_VERSION:
            printf("evident compare %s\n", EV_VERSION);
            return EV_EXIT_OK;
        case EV_CLI_BAD:
            return EV_EXIT_USAGE;
        case EV_CLI_POSITIONAL:
            if (in[1])
                return ev_cli_usage(cli.cmd, "two bundles only ('%s' is a third)", v);
            in[in[0] ? 1 : 0] = v;
            break;
        case OPT_MARKDOWN:
            markdown = 1;
            break;
        case OPT_JSON:
            co.json = 1;
            break;
        case OPT_FAIL:
            if (parse_pct(v, &co.fail_slower))
                return ev_cli_usage(cli.cmd, "--fail-slower %s: a percentage >= 0 is needed", v);
            co.gate = 1;
            break;
        case OPT_OUT:
            out = v;
            break;
        case OPT_DIFFERENT:
            co.allow_different = 1;
            break;
        case OPT_NO_VERIFY:
            no_verify = 1;
            break;
        }
    }
    if (!in[1])
        return ev_cli_usage(cli.cmd, "two bundles, A and B, are required");
    if (markdown && co.json)
        return ev_cli_usage(cli.cmd, "--markdown and --json exclude each other");
    for (int i = 0; i < 2; i++)
        if (ev_cli_is_std(in[i]))
            return ev_cli_usage(cli.cmd, "bundle %s must be a file", in[i]);
    for (int i = 0; i < 2 && !code; i++)
        code = ev_cli_input(cli.cmd, i ? "bundle B" : "bundle A", in[i]);
    if (code || (code = ev_cli_output(cli.cmd, "--out", out)))
        goto out;
    for (int i = 0; i < 2 && !code; i++)
        code = ev_cli_read_bundle(cli.cmd, in[i], &b[i]);
    if (code)
        goto out;
    if (no_verify) {
        fprintf(stderr, "evident compare: --no-verify: the bundles were not verified; their figures are "
                        "unchecked\n");
    } else {
        for (int i = 0; i < 2 && !code; i++) {
            char problem[1200];
            if (ev_cli_verify_problem(in[i], problem, sizeof problem) == 1) {
                fprintf(stderr, "evident compare: %s does not verify, nothing compared: %s\n", in[i],
                        problem);
                code = EV_EXIT_FAIL;
            }
        }
        if (code)
            goto out;
    }
    rc = ev_compare_write(b[0].m, b[0].n, b[1].m, b[1].n, &co, &text, &res, &err);
    if (rc) {
        fprintf(stderr, "evident compare: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
        code = EV_EXIT_FAIL;
        goto out;
    }
    code = ev_cli_write(cli.cmd, out, text.data, text.len);
    if (!code)
        code = compare_status(&co, &res);
out:
    for (int i = 0; i < 2; i++)
        ev_cli_bundle_free(&b[i]);
    ev_buf_free(&text);
    return code;
}
