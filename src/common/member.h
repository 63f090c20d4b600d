/*
 * member.h: a bundle member held in memory, as a (name, bytes) pair.
 *
 * The exporter builds every member of delivery.zip as one of these before
 * hashing and zipping it; the report generator and the verifier take the
 * same pairs, so the report the exporter writes and the one the verifier
 * regenerates come from the same bytes.
 */
#ifndef EV_BUNDLE_MEMBER_H
#define EV_BUNDLE_MEMBER_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

struct ev_zip;
struct cJSON;

/*
 * The members' names (docs/bundle-format.md): the exporter writes them,
 * the verifier requires them, the report and the signer read them.  The
 * fixed members, then the two folders whose members are listed one by one
 * in receipts.json: the measurement closure's source bytes and the jobs'
 * outputs.
 */
#define EV_MEMBER_MODEL      "model.json"
#define EV_MEMBER_PROOF      "proof-receipts.json"
#define EV_MEMBER_PROTOCOL   "protocol.json"
#define EV_MEMBER_PROVENANCE "provenance.json"
#define EV_MEMBER_RECEIPTS   "receipts.json"
#define EV_MEMBER_REPORT     "report.html"
#define EV_MEMBER_SAMPLES    "samples.csv"
#define EV_MEMBER_VALIDATION "validation.json"
#define EV_MEMBER_SOURCES    "sources/"
#define EV_MEMBER_OUTPUTS    "outputs/"

/* Every fixed member a bundle must hold, sorted by name: the list the
 * verifier's check 2 requires (the exporter writes each by its macro). */
extern const char *const ev_member_required[];
extern const size_t ev_member_n_required;

/* Returns 1 for a name under sources/, resp. outputs/, else 0. */
int ev_member_is_source(const char *name);
int ev_member_is_output(const char *name);

typedef struct ev_member {
    const char *name; /* '/'-separated, see docs/bundle-format.md */
    const void *data; /* may be NULL when len == 0 */
    size_t len;
} ev_member;

/* Returns the member named name in m[0..n), or NULL when absent (linear
 * search; the lists are short apart from sources and outputs). */
const ev_member *ev_member_find(const ev_member *m, size_t n, const char *name);

/*
 * Reads the zip bytes p[0..n) with the verifier's hardened reader
 * (src/common/zipread.h: bounded layout parse, libzip with ZIP_CHECKCONS,
 * every member read to its end) and lists its members, pointing into the
 * archive.  OUT: *z (ev_zip_free) and *m (free; *count entries, one more
 * zeroed).  EV_EFORMAT with err "not a readable bundle: MEMBER: REASON (N
 * problems; verify-bundle says more)" when the archive is refused;
 * EV_ENOMEM.  Nothing is written through the OUT pointers on failure.
 * The one reader of a bundle outside verify-bundle (report, sign).
 */
ev_status ev_members_read_zip(const void *p, size_t n, struct ev_zip **z, ev_member **m, size_t *count,
                              ev_err *err);

/*
 * Reading a member's JSON from a bundle, bounded (docs/bundle-format.md,
 * "Reading bounds"): every reader of a bundle (verify-bundle, report,
 * results, compare, sign, --model) parses a member with this, once.
 *
 * Each member's size class caps its bytes (EV_MEMBER_SMALL_MAX for
 * provenance.json and proof-receipts.json, EV_MEMBER_MODEL_MAX for
 * model.json, EV_MEMBER_RECEIPTS_MAX for receipts.json, EV_PROTO_MAX_BYTES,
 * a protocol file's cap, for protocol.json; validation.json only by the
 * archive's caps),
 * and its values: at most one per EV_MEMBER_BYTES_PER_VALUE bytes (an
 * exporter-written member holds one per 13 to 46 bytes: pretty printing,
 * keys, exact number text; protocol.json, human-written, one per 2),
 * plus EV_MEMBER_VALUES_SLACK; and each string at most
 * EV_MEMBER_STRING_MAX bytes (an honest member's longest, an environment
 * record, is a few KB).  data[len] must be readable (a zip member's or an
 * ev_buf's NUL): such bytes are parsed in place.  *budget, when budget is non-NULL, is the
 * values the whole bundle may still hold (ev_bundle_json_budget at the
 * start): a member that would exceed it is refused, and the member's
 * values are taken from it.  So a tree costs at most about 80 bytes per
 * value of the budget, however the bytes are shaped.
 *
 * OUT: *out (cJSON_Delete).  EV_EFORMAT with err saying which bound or
 * which rule of json.h the member breaks; EV_ENOMEM.
 */
#define EV_MEMBER_SMALL_MAX       (UINT64_C(1) << 20) /* 1 MiB */
#define EV_MEMBER_MODEL_MAX       (UINT64_C(16) << 20)
#define EV_MEMBER_RECEIPTS_MAX    (UINT64_C(32) << 20)
#define EV_PROTO_MAX_BYTES        ((size_t)4 << 20) /* a protocol file, wherever it is read */
#define EV_MEMBER_BYTES_PER_VALUE 4
#define EV_MEMBER_VALUES_SLACK    1024
#define EV_MEMBER_STRING_MAX      (UINT64_C(1) << 20) /* one string or key: 1 MiB */
ev_status ev_member_json(const char *name, const void *data, size_t len, unsigned flags, size_t *budget,
                         struct cJSON **out, ev_err *err);

/* The values (JSON nodes) all of a bundle's JSON members may hold
 * together: one per byte of the archive, and at least 2^20 (about 80 MiB
 * of trees).  An honest bundle holds about one per seven to nine archive
 * bytes (receipts/h200: 0.14; receipts/h200-gpus: 0.13). */
size_t ev_bundle_json_budget(size_t archive_len);

/* Returns 1 when name fits the member-name rule (src/common/names.h, the
 * one the verifier's zip reader and the runner's snapshot apply), else 0. */
int ev_member_name_ok(const char *name);

#endif
