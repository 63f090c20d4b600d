/*
 * verify_main.c: build/verify-bundle, the standalone verifier (links no
 * CUDA, needs no GPU).  It parses the command line, runs the library
 * (src/verify/verify.h), prints the report (text on stdout, or --json) and
 * turns the verdict into the exit code: 0 PASS, 1 FAIL (a readable file
 * that is not a valid bundle included), 2 usage error, unreadable path, or
 * no verdict for want of memory (a resource error, never a FAIL).
 * On FAIL the last line of stderr is
 *   verify-bundle: FAIL <check>: <member>: <reason>
 * naming the first failure in check order.  It writes no file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

#define EXIT_PASS  0
#define EXIT_FAIL  1
#define EXIT_USAGE 2

static const char usage[] =
    "usage: verify-bundle FILE.zip [--source-tree DIR] [--kernel-tree DIR] [--expect-root HEX]\n"
    "                     [--regenerate-limit N] [--json]\n"
    "       verify-bundle FILE.zip --key KEY.pub [--attestation FILE] [--vsa OUT [--vsa-key KEY]]\n"
    "       verify-bundle --compare A.zip B.zip [--json]\n"
    "       verify-bundle --help | --version\n";

static const char help_text[] =
    "\n"
    "Checks a delivery.zip without a GPU and says PASS or FAIL, exactly:\n"
    "  1 archive   hardened zip reading (offsets, names, caps, CRCs)\n"
    "  2 members   the required members plus receipts.json's sources/ and outputs/;\n"
    "              sizes and SHA-256 equal their receipts; --expect-root binds the root\n"
    "  3 formats   strict JSON (canonical numbers) and strict CSV\n"
    "  4 plan      the job plan regenerated from protocol.json, job by job; outcomes,\n"
    "              run and rescue status re-derived from the process records\n"
    "  5 protocol  warm-up, calibration and sample counts held to the protocol; checkable cases\n"
    "  6 rederive  medians, the model refit, the selector, outputs validated again, report.html\n"
    "  7 sources   with --source-tree DIR: sources/ equal DIR's measurement closure (evident's\n"
    "              tree); with --kernel-tree DIR: the protocol's kernel files and protocol.json\n"
    "              equal DIR's (the directory the protocol was run from)\n"
    "  8 compare   with --compare A B: plans, outcomes, receipts, outputs, timings\n"
    "  9 attest    with --key KEY.pub: the DSSE envelope (--attestation, default\n"
    "              FILE.zip.intoto.json) is signed by KEY and its in-toto subjects are\n"
    "              exactly the raw members and records, with their SHA-256\n"
    "  --vsa OUT   writes a SLSA verification summary of the verdict (signed with\n"
    "              --vsa-key KEY, the private key, when given)\n"
    "  --regenerate-limit N   input elements checks 5 and 6 may regenerate from the\n"
    "              seeds (default 2^35, minutes of one core); a bundle that asks for\n"
    "              more FAILs, saying how many it asks for\n"
    "\n"
    "Every check runs and every failure is reported.  Without --expect-root a PASS\n"
    "shows internal consistency, not authenticity: pass the committed ROOT.\n"
    "\n"
    "exit status: 0 PASS, 1 FAIL, 2 usage error, unreadable path or no verdict for want of memory\n";

/* Prints a usage error (one line, as every evident command words one)
 * and returns exit 2. */
static int usage_error(const char *why, const char *arg)
{
    if (arg)
        fprintf(stderr, "verify-bundle: %s '%s' (try 'verify-bundle --help')\n", why, arg);
    else
        fprintf(stderr, "verify-bundle: %s (try 'verify-bundle --help')\n", why);
    return EXIT_USAGE;
}

/* Returns 1 when s is exactly 64 hex digits. */
static int is_hex64(const char *s)
{
    size_t n = strlen(s);
    if (n != 64)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    const char *file = NULL, *cmp_a = NULL, *cmp_b = NULL;
    ev_verify_opts opts = {NULL, NULL, NULL, NULL, 0, NULL};
    const char *vsa = NULL, *vsa_key = NULL;
    int json = 0, compare = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            fputs(help_text, stdout);
            return EXIT_PASS;
        } else if (!strcmp(a, "--version")) {
            printf("verify-bundle %s\n", EV_VERSION);
            return EXIT_PASS;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--source-tree") || !strcmp(a, "--expect-root") ||
                   !strcmp(a, "--kernel-tree")) {
            if (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2))
                return usage_error("missing value after", a);
            const char **slot = a[2] == 's'   ? &opts.source_tree
                                : a[2] == 'k' ? &opts.kernel_tree
                                              : &opts.expect_root;
            if (*slot)
                return usage_error("given twice:", a);
            *slot = argv[++i];
        } else if (!strcmp(a, "--key") || !strcmp(a, "--attestation") || !strcmp(a, "--vsa") ||
                   !strcmp(a, "--vsa-key")) {
            const char **slot = a[2] == 'k'   ? &opts.key
                                : a[2] == 'a' ? &opts.attestation
                                : a[5]        ? &vsa_key
                                              : &vsa;
            if (i + 1 >= argc)
                return usage_error("missing value after", a);
            if (*slot)
                return usage_error("given twice:", a);
            *slot = argv[++i];
        } else if (!strcmp(a, "--regenerate-limit")) {
            char *end = NULL;
            if (i + 1 >= argc)
                return usage_error("missing value after", a);
            if (opts.regen_limit > 0)
                return usage_error("given twice:", a);
            opts.regen_limit = strtod(argv[++i], &end);
            if (!end || *end || end == argv[i] || !isfinite(opts.regen_limit) || opts.regen_limit < 1)
                return usage_error("--regenerate-limit needs a count of elements >= 1, got", argv[i]);
        } else if (!strcmp(a, "--compare")) {
            if (compare)
                return usage_error("given twice:", a);
            if (i + 2 >= argc)
                return usage_error("--compare needs two bundles", NULL);
            compare = 1;
            cmp_a = argv[++i];
            cmp_b = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option", a);
        } else {
            if (file)
                return usage_error("more than one bundle given; extra:", a);
            file = a;
        }
    }
    if (compare && (file || opts.source_tree || opts.kernel_tree || opts.expect_root || opts.key ||
                    opts.attestation || vsa || opts.regen_limit > 0))
        return usage_error("--compare takes two bundles and only --json", NULL);
    if (!compare && !file)
        return usage_error("no bundle given", NULL);
    if ((opts.attestation && !opts.key) || (vsa_key && !vsa))
        return usage_error(opts.attestation && !opts.key ? "--attestation needs --key KEY.pub"
                                                         : "--vsa-key needs --vsa OUT",
                           NULL);
    if (opts.expect_root && !is_hex64(opts.expect_root))
        return usage_error("--expect-root needs 64 hex digits, got", opts.expect_root);

    ev_vreport *rep = NULL;
    ev_err err = {{0}};
    ev_status rc =
        compare ? ev_verify_compare(cmp_a, cmp_b, &rep, &err) : ev_verify_bundle(file, &opts, &rep, &err);
    if (rc == EV_EIO) {
        fprintf(stderr, "verify-bundle: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
        return EXIT_USAGE;
    }
    if (rc || ev_vreport_out_of_memory(rep)) {
        /* Out of memory or similar: no verdict could be reached.  That is a
         * resource error (exit 2), neither a PASS nor a FAIL of the bundle. */
        fprintf(
            stderr,
            "verify-bundle: no verdict: %s%s%s (a resource error, not a FAIL of the bundle: free memory or "
            "address space and run it again)\n",
            rc ? ev_strerror(rc) : "out of memory while checking", err.msg[0] ? ": " : "", err.msg);
        ev_vreport_free(rep);
        return EXIT_USAGE;
    }

    ev_buf out = EV_BUF_INIT;
    rc = json ? ev_vreport_json(rep, &out) : ev_vreport_text(rep, &out);
    int passed = ev_vreport_passed(rep);
    if (rc) {
        fprintf(stderr, "verify-bundle: FAIL run: -: cannot render the report: %s\n", ev_strerror(rc));
        passed = 0;
    } else {
        fwrite(out.data, 1, out.len, stdout);
        fflush(stdout);
    }
    ev_buf_free(&out);
    if (vsa && (rc = ev_vreport_vsa(rep, file, vsa, vsa_key, &err))) {
        fprintf(stderr, "verify-bundle: --vsa: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
        ev_vreport_free(rep);
        return EXIT_USAGE;
    }

    if (!passed) {
        const char *check = "run", *member = "-", *reason = "verification failed";
        ev_vreport_first_failure(rep, &check, &member, &reason);
        size_t n = ev_vreport_failures(rep);
        if (n > 1)
            fprintf(stderr, "verify-bundle: FAIL %s: %s: %s (%zu failures in all)\n", check, member, reason,
                    n);
        else
            fprintf(stderr, "verify-bundle: FAIL %s: %s: %s\n", check, member, reason);
    }
    ev_vreport_free(rep);
    return passed ? EXIT_PASS : EXIT_FAIL;
}
