/*
 * verify.h: verify-bundle as a library.  ev_verify_bundle runs every check
 * of docs/verify.md over one delivery.zip and returns a report
 * holding each check's verdict and every failure found (not only the
 * first); ev_verify_compare runs check 8 over two bundles.  The library
 * never prints, never writes a file and never extracts to disk: the caller
 * (src/verify/verify_main.c) renders the report as text or JSON and picks
 * the exit code.
 *
 * Checks, in order (names as they appear in reports and on stderr):
 *   1 archive   hardened zip reading (src/common/zipread.h)
 *   2 members   required set + receipts.json's sources/ and outputs/,
 *               sizes and SHA-256 equal their receipts, --expect-root
 *   3 formats   strict JSON (canonical numbers) and strict CSV
 *   4 plan      plan regenerated from protocol.json, job by job; outcomes,
 *               run and rescue status re-derived
 *   5 protocol  warm-up, calibration, flush and sample counts held to the
 *               protocol
 *   6 rederive  medians, refit, selector, output hashes, report.html
 *   7 sources   --source-tree DIR: member bytes and closure completeness;
 *               --kernel-tree DIR: the protocol's kernel files and the
 *               protocol against the user's directory
 *   8 compare   --compare A B
 *   9 attest    --key KEY.pub: the signed in-toto Statement (src/sign/)
 *               covers exactly the bundle's raw members and records
 */
#ifndef EV_VERIFY_H
#define EV_VERIFY_H

#include <stddef.h>

#include "buf.h"
#include "status.h"

/* Options of one verification.  NULL members mean "not given". */
/* The input elements verify-bundle regenerates at most (checks 5 and 6:
 * the checkable-case rule, every output validated again) unless told
 * otherwise: about 2^35, several minutes of one core.  A legitimate
 * bundle asks for no more than its run generated; a forged one could ask
 * for years (a row of 2^35 elements behind a 4-byte output). */
#define EV_VERIFY_REGEN_LIMIT 34359738368.0

typedef struct ev_verify_opts {
    const char *source_tree; /* check 7 runs only when it or kernel_tree is set */
    const char *expect_root; /* 64 hex digits: the committed ROOT */
    const char *key;         /* check 9 (attest) runs only when set: a public key PEM */
    const char *attestation; /* the DSSE envelope; NULL: <bundle>.intoto.json */
    double regen_limit;      /* input elements regenerated at most; 0: EV_VERIFY_REGEN_LIMIT */
    const char *kernel_tree; /* the directory of the protocol's kernels (check 7); NULL: not checked */
} ev_verify_opts;

typedef enum ev_verdict {
    EV_VERDICT_PASS = 0,
    EV_VERDICT_FAIL,         /* at least one failure recorded */
    EV_VERDICT_NOT_RUN,      /* an input it needs failed an earlier check */
    EV_VERDICT_NOT_REQUESTED /* optional check not asked for (sources) */
} ev_verdict;

typedef struct ev_vreport ev_vreport; /* opaque */

/*
 * Verifies the bundle at path.  Returns EV_EIO (err says why) when path
 * cannot be opened or read at all: the caller's exit 2.  Any readable file,
 * valid or not, gives EV_OK and a report in *out whose verdict says PASS or
 * FAIL.  EV_ENOMEM on allocation failure.  Also EV_EIO when
 * opts->source_tree or opts->kernel_tree is given but is not a readable
 * directory.
 */
ev_status ev_verify_bundle(const char *path, const ev_verify_opts *opts, ev_vreport **out, ev_err *err);

/*
 * Check 8: compares two bundles (each is first verified on its own, checks
 * 1 to 6; their failures are reported under "A:" and "B:").  EV_EIO when
 * either path is unreadable; otherwise EV_OK and *out.
 */
ev_status ev_verify_compare(const char *path_a, const char *path_b, ev_vreport **out, ev_err *err);

void ev_vreport_free(ev_vreport *r); /* NULL-safe */

/* 1 when every run check passed (not-requested checks are fine). */
int ev_vreport_passed(const ev_vreport *r);
/* 1 when the checks ran out of memory: the report is incomplete and is no
 * verdict (verify-bundle exits 2, a resource error, not 1). */
int ev_vreport_out_of_memory(const ev_vreport *r);

/* Total number of failures recorded over all checks. */
size_t ev_vreport_failures(const ev_vreport *r);

/*
 * Returns 1 and points *check, *member, *reason at the first failure (in
 * check order), or 0 when there is none.  Strings live as long as r.
 */
int ev_vreport_first_failure(const ev_vreport *r, const char **check, const char **member,
                             const char **reason);

/* Writes a SLSA Verification Summary Attestation of r's verdict on the
 * bundle at path to out (src/sign/attest.h): the bundle file's SHA-256,
 * every check run, PASSED/FAILED; signed into a DSSE envelope with the
 * private key at key_path when given, else the bare Statement.  EV_EIO
 * (err says why) for an unreadable bundle or key or an unwritable out;
 * EV_EFORMAT for a key file that is no Ed25519 private key. */
ev_status ev_vreport_vsa(const ev_vreport *r, const char *path, const char *out, const char *key_path,
                         ev_err *err);

/* Appends the human report: one line per check, then every failure and
 * note, then the verdict line (with the authenticity caveat). */
ev_status ev_vreport_text(const ev_vreport *r, ev_buf *out);

/* Appends the report as one JSON document (every check, its verdict,
 * failures and notes; the bundle's root digest; what PASS means). */
ev_status ev_vreport_json(const ev_vreport *r, ev_buf *out);

#endif
