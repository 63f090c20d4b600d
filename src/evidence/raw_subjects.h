/*
 * raw_subjects.h: which parts of a bundle are raw records (what was
 * measured and how) and which are derived from them, and the list of
 * in-toto subjects a signature covers.  One owner for the rule: `evident
 * sign` lists these subjects, `verify-bundle --key` requires exactly them.
 *
 * Raw members (docs/bundle-format.md, "Raw and derived members"):
 * protocol.json, samples.csv, every sources/ member and every outputs/
 * member.  Raw records held inside the derived validation.json: each
 * invocation's environment record (its stored text, whose SHA-256 is the
 * profile id) and each attempt's process record.  Everything else
 * (validation.json as a whole, model.json, proof-receipts.json,
 * provenance.json, report.html, receipts.json) is re-derived by the
 * verifier and may change with the derivation code: it is not signed.
 *
 * Subject names: the member name for a member;
 *   validation.json#environment/<invocation_id>          the record text
 *   validation.json#process/<job_key>/<attempt>          the object printed by
 *                                                        ev_json_print(pretty 0)
 * Digest: lowercase hex SHA-256 of those bytes.  Sorted by name (bytewise).
 */
#ifndef EV_EVIDENCE_RAW_SUBJECTS_H
#define EV_EVIDENCE_RAW_SUBJECTS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "sha256.h"
#include "status.h"

/* A member known by its name and digest (the caller's strings). */
typedef struct ev_member_sha {
    const char *name;
    const char *sha256_hex;
} ev_member_sha;

typedef struct ev_subject {
    char *name;
    char sha256_hex[EV_SHA256_HEX_LEN + 1];
} ev_subject;

typedef struct ev_subjects {
    ev_subject *s;
    size_t n, cap;
} ev_subjects;

/* Returns 1 when the member named name holds raw records, else 0. */
int ev_member_is_raw(const char *name);

/*
 * Builds the subjects of a bundle: the raw members among m[0..n) and the
 * raw records of validation (the parsed validation.json; NULL: the records
 * are not listed and EV_EFORMAT is returned).  OUT: *out, sorted by name
 * (ev_subjects_free).  EV_EFORMAT with err saying what in validation.json
 * is not shaped as docs/bundle-format.md says; EV_ENOMEM.
 */
ev_status ev_raw_subjects(const ev_member_sha *m, size_t n, const cJSON *validation, ev_subjects *out,
                          ev_err *err);

void ev_subjects_free(ev_subjects *s); /* NULL-safe; leaves it empty */

#endif
