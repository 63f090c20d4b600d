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
 * profile id), each attempt's process record, and (subject rule 2) each
 * attempt's other raw records: every record kind of the worker's stream
 * (runner/record.h) has its place, ev_raw_record_place.  Everything else
 * (validation.json as a whole, model.json, proof-receipts.json,
 * provenance.json, report.html, receipts.json, and an attempt's derived
 * keys outcome, hot_samples and cold_samples) is re-derived by the
 * verifier and may change with the derivation code: it is not signed.
 *
 * Subject names: the member name for a member;
 *   validation.json#environment/<invocation_id>          the record text
 *   validation.json#process/<job_key>/<attempt>          the object printed by
 *                                                        ev_json_print(pretty 0)
 *   validation.json#attempt/<job_key>/<attempt>          (rule 2) the object of
 *                                                        the attempt's raw keys
 *                                                        (ev_raw_attempt_keys, in
 *                                                        that order, those present),
 *                                                        printed likewise
 * Digest: lowercase hex SHA-256 of those bytes.  Sorted by name (bytewise).
 *
 * Subject rules: 1, the first (no attempt subjects: an attempt's warm-up,
 * calibration, flush, binding, graph nodes, validations, sample checks,
 * cold timings and device record were not signed); 2, every raw record.
 * A Statement names its rule (EV_SUBJECT_RULE_2 in the predicate's
 * internalParameters.subject_rule); one that names none is of rule 1, and
 * is checked under it, with a note of what it leaves out.
 */
#ifndef EV_EVIDENCE_RAW_SUBJECTS_H
#define EV_EVIDENCE_RAW_SUBJECTS_H

#include <stddef.h>
#include <stdint.h>

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

#define EV_SUBJECT_RULE_2 "evident-subjects/2"

/* Returns 1 when the member named name holds raw records, else 0. */
int ev_member_is_raw(const char *name);

/* Where a record of kind t (an ev_rec_type of runner/record.h) lands in a
 * bundle, and so which signed subject holds it: an attempt key of
 * validation.json ("binding", "validations", ...: the attempt subject),
 * "process" (the process subject: hello, skip and end are counted or
 * stated there), or a member name ("samples.csv").  NULL for a kind that
 * has no place: a record kind added to the worker's stream must be given
 * one (tests/check_sign.c edits every kind under a signature). */
const char *ev_raw_record_place(int t);

/* The rows an attempt object of validation.json holds, by the places of
 * ev_raw_record_place (the process record's hello, skip and end aside):
 * one for each non-null object, each element of each array (a cold
 * timing of the supervisor's own aside: ev_rule_cold_is_supervisors), and its
 * hot_samples and cold_samples (the rows of samples.csv, which check 6
 * holds them to).  What ev_record_count_problem (store/outcome.h) counts
 * against the process's record_count. */
int64_t ev_attempt_rows(const cJSON *attempt);

/* The raw keys of an attempt object that the attempt subject covers, in
 * their order: the attempt row's own (attempt, attempt_id, invocation_id,
 * started_ns) and every attempt key ev_raw_record_place names.
 * NULL-terminated. */
extern const char *const ev_raw_attempt_keys[];

/*
 * Builds the subjects of a bundle under subject rule `rule` (1 or 2): the
 * raw members among m[0..n) and the raw records of validation (the parsed
 * validation.json; NULL: the records are not listed and EV_EFORMAT is
 * returned).  OUT: *out, sorted by name (ev_subjects_free).  EV_EFORMAT
 * with err saying what in validation.json is not shaped as
 * docs/bundle-format.md says; EV_EINVAL for another rule; EV_ENOMEM.
 */
ev_status ev_raw_subjects(const ev_member_sha *m, size_t n, const cJSON *validation, int rule,
                          ev_subjects *out, ev_err *err);

void ev_subjects_free(ev_subjects *s); /* NULL-safe; leaves it empty */

#endif
