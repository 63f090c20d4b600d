/*
 * attest.h: the in-toto attestations evident writes and reads.
 *
 *   - the run's Statement v1 (https://in-toto.io/Statement/v1): subjects
 *     are the raw members and records of a bundle (evidence/raw_subjects.h),
 *     the predicate SLSA provenance v1 (https://slsa.dev/provenance/v1) of
 *     the run, built from the bundle's own members;
 *   - the check of such a Statement against a bundle (every subject digest
 *     equals the bundle's, no raw subject missing, none extra);
 *   - the Sigstore bundle v0.3 that wraps a signed envelope with a public
 *     key hint and no transparency-log entry;
 *   - a SLSA Verification Summary Attestation (VSA v1) of a verdict.
 *
 * JSON is printed by ev_json_print (compact for payloads, pretty for the
 * files people read); nothing here reads a clock except where the caller
 * passes the time.
 */
#ifndef EV_SIGN_ATTEST_H
#define EV_SIGN_ATTEST_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "member.h"
#include "evidence/raw_subjects.h"
#include "sign/key.h"
#include "status.h"

#define EV_INTOTO_STATEMENT   "https://in-toto.io/Statement/v1"
#define EV_SLSA_PROVENANCE    "https://slsa.dev/provenance/v1"
#define EV_SLSA_VSA           "https://slsa.dev/verification_summary/v1"
#define EV_SIGSTORE_BUNDLE_V3 "application/vnd.dev.sigstore.bundle.v0.3+json"
/* buildType: evident's protocol and bundle formats, with their versions. */
#define EV_BUILD_TYPE    "https://evident.invalid/buildtypes/evident-protocol-run/v1?bundle_format=2"
#define EV_BUILDER_ID    "https://evident.invalid/builders/evident-runner"
#define EV_VERIFIER_ID   "https://evident.invalid/verifiers/verify-bundle"
#define EV_VERIFY_POLICY "https://evident.invalid/policies/verify-bundle-checks/v1"

/*
 * Builds the Statement of the bundle whose members are m[0..n) (all with
 * their bytes: the sign command reads the whole archive).  OUT: out gets
 * the compact JSON (the DSSE payload).  EV_EFORMAT with err when a member
 * the predicate is drawn from (protocol.json, provenance.json,
 * validation.json) is missing or malformed; EV_ENOMEM.
 */
ev_status ev_attest_statement(const ev_member *m, size_t n, ev_buf *out, ev_err *err);

/* The subject rule a Statement payload[0..n) was made under
 * (evidence/raw_subjects.h): 2 when its predicate's
 * buildDefinition.internalParameters.subject_rule is EV_SUBJECT_RULE_2, 1
 * when it names none (statements made before that rule, or a payload that
 * is not one: ev_attest_check says why), -1 when it names another. */
int ev_attest_rule(const char *payload, size_t n);

/* Called once per problem found by ev_attest_check: subject (a name, or
 * "-") and a one-line reason. */
typedef void (*ev_attest_fail_fn)(void *ctx, const char *subject, const char *reason);

/*
 * Checks the Statement payload[0..n) against the subjects the bundle must
 * have (expected, sorted by name): strict JSON, _type, predicateType,
 * subject shape, no subject named twice, each expected subject present
 * with an equal SHA-256 digest, no other subject.  Calls fail for every
 * problem and returns how many there were (0: it matches).
 */
size_t ev_attest_check(const char *payload, size_t n, const ev_subjects *expected, ev_attest_fail_fn fail,
                       void *ctx);

/* Wraps the signed envelope env (as ev_dsse_sign built it) into a Sigstore
 * bundle v0.3 for key k: verificationMaterial.publicKey.hint = base64 of
 * k's id digest, tlogEntries empty.  OUT: out (pretty JSON).  EV_ENOMEM. */
ev_status ev_attest_sigstore_bundle(const cJSON *env, const ev_key *k, ev_buf *out);

/* One check of a verdict, for the VSA's policy. */
typedef struct ev_vsa_check {
    const char *name;    /* "archive" ... */
    const char *verdict; /* "pass", "fail", "not-run", "not-requested" */
} ev_vsa_check;

typedef struct ev_vsa_in {
    const char *verifier_version; /* EV_VERSION */
    int64_t time_verified_s;      /* Unix seconds */
    const char *resource_uri;     /* the bundle's URI */
    const char *bundle_sha256;    /* hex SHA-256 of the bundle file */
    const char *root_sha256;      /* its root digest, or NULL */
    const char *attestation_uri;  /* the envelope checked, or NULL */
    const char *attestation_sha256;
    const ev_vsa_check *checks;
    size_t n_checks;
    int passed;
    int signature_checked; /* the run's signature verified (SLSA build level 1 shown) */
} ev_vsa_in;

/* Builds the VSA Statement of in.  OUT: out (compact JSON).  EV_ENOMEM. */
ev_status ev_attest_vsa(const ev_vsa_in *in, ev_buf *out);

/* Writes t (ns since the epoch) as RFC 3339 UTC with nanoseconds into buf
 * ("2026-01-02T03:04:05.000000006Z").  EV_ERANGE when it does not fit. */
ev_status ev_attest_rfc3339(int64_t t_ns, char buf[40]);

/* A bundle's members read by the verifier's hardened reader
 * (src/common/zipread.h).  ev_attest_bundle_free releases it. */
typedef struct ev_attest_bundle {
    struct ev_zip *z;
    ev_member *m;
    size_t n;
    ev_buf raw; /* the archive's bytes */
    char sha256_hex[EV_SHA256_HEX_LEN + 1];
} ev_attest_bundle;

/* Reads the bundle at path.  OUT: *b.  EV_EIO when the file cannot be read;
 * EV_EFORMAT (err names the first problem) when the archive is refused;
 * EV_ENOMEM. */
ev_status ev_attest_bundle_read(const char *path, ev_attest_bundle *b, ev_err *err);
void ev_attest_bundle_free(ev_attest_bundle *b); /* NULL-safe; leaves it empty */

#endif
