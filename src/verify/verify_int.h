/*
 * verify_int.h: the verifier's internals shared by its files: the report
 * being filled (checks, failures, notes), the bundle held in memory (its
 * members as read by zipread, their digests, the parsed trees and the
 * samples table), and one entry point per check.  Nothing here is used
 * outside src/verify/.
 */
#ifndef EV_VERIFY_INT_H
#define EV_VERIFY_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "sha256.h"
#include "jread.h"
#include "status.h"
#include "verify.h"
#include "member.h"
#include "samples.h"

/* ---- report ------------------------------------------------------------ */

enum {
    VR_ARCHIVE = 0,
    VR_MEMBERS,
    VR_FORMATS,
    VR_PLAN,
    VR_PROTOCOL,
    VR_REDERIVE,
    VR_SOURCES,
    VR_COMPARE,
    VR_ATTEST,
    VR_REBUILD,
    VR_NCHECKS
};

/* Failures kept per check; the rest are counted, not stored. */
#define VR_MAX_KEPT 200

typedef struct vr_item {
    char *member; /* member name, or "-" */
    char *text;
} vr_item;

typedef struct vr_check {
    int used; /* part of this report */
    ev_verdict verdict;
    char *not_run_reason;
    vr_item *fails; /* first VR_MAX_KEPT failures */
    size_t n_fails, cap_fails;
    size_t n_fails_total;
    vr_item *notes; /* informational lines (kept all, capped likewise) */
    size_t n_notes, cap_notes, n_notes_total;
} vr_check;

struct ev_vreport {
    char *path;  /* bundle path (or "A vs B") */
    int compare; /* a --compare report */
    vr_check checks[VR_NCHECKS];
    int have_root;
    char root_hex[EV_SHA256_HEX_LEN + 1];
    int root_expected; /* --expect-root given */
    int root_matches;
    int signed_ok;          /* check 9 passed: the raw records carry a valid signature */
    char *attestation_path; /* the envelope check 9 read, or NULL */
    char attestation_sha[EV_SHA256_HEX_LEN + 1];
    int oom; /* an allocation failed while recording: FAIL */
};

ev_status vr_new(const char *path, ev_vreport **out);
/* Marks check c as part of the report (verdict PASS until a failure). */
void vr_use(ev_vreport *r, int c);
/* Records a failure of check c about member (NULL -> "-"). */
void vr_fail(ev_vreport *r, int c, const char *member, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Records an informational note under check c (does not change the verdict). */
void vr_note(ev_vreport *r, int c, const char *member, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Marks check c as not run (only when it has no failure yet). */
void vr_not_run(ev_vreport *r, int c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void vr_not_requested(ev_vreport *r, int c);
const char *vr_name(int c);
/* Failures recorded so far under check c. */
size_t vr_fail_count(const ev_vreport *r, int c);

/* ---- the bundle in memory ---------------------------------------------- */

typedef struct vb_member {
    const char *name;          /* owned by the ev_zip */
    const unsigned char *data; /* NUL-terminated (len excludes it) */
    size_t len;
    const uint8_t *sha; /* EV_SHA256_LEN bytes */
    const char *sha_hex;
    int listed; /* named by receipts.json */
} vb_member;

/* One row of samples.csv reduced to what the checks use. */
typedef struct vb_sample {
    int64_t run_id, job_id, attempt, sample_index, replays, ops_per_graph, attempt_id;
    double elapsed_ms, per_op_us;
    int64_t sm_clock;    /* sm_clock_mhz, INT64_MIN when empty */
    int hot;             /* timing = hot */
    int attempt_outcome; /* ev_outcome */
    uint32_t job_row;    /* index into vb_samples.jobs */
} vb_sample;

/* The job-level columns, as they repeat on each row of one job. */
typedef struct vb_sjob {
    int64_t job_id;
    char *op, *dtype, *role, *arm, *phase, *label, *outcome, *job_key;
    int64_t rows, cols, stride, default_rows;
    size_t first, count; /* its rows are samples[first .. first+count) when sorted */
} vb_sjob;

typedef struct vb_samples {
    vb_sample *rows;
    size_t n;
    vb_sjob *jobs;
    size_t n_jobs, cap_jobs;
} vb_samples;

/* One job of validation.json, indexed (check 4 builds the index). */
typedef struct vb_vjob {
    const cJSON *j;  /* the job object */
    const char *key; /* job_key */
    int64_t job_id;
    const char *phase, *arm, *label;
    int64_t case_index; /* -1: null (reference arm) */
    int64_t plan_order;
    const char *retry_of;  /* job_key of the original, or NULL */
    const char *outcome;   /* as recorded */
    const cJSON *attempts; /* array */
    int derived;           /* ev_outcome re-derived from the last attempt */
    int derived_ok;        /* 1 when every attempt could be re-derived */
} vb_vjob;

typedef struct vb_bundle {
    struct ev_zip *zip;         /* owns every member's bytes (samples.csv's: see sstream) */
    const char *raw;            /* the archive's bytes (mapped), kept for reading samples.csv again */
    size_t raw_n;               /* their length; munmap(raw, raw_n) when > 0 */
    struct vb_sstream *sstream; /* samples.csv as read while inflated, or NULL */
    struct ev_zip *zip2;        /* a second reading, for samples.csv's bytes, or NULL */
    vb_member *m;               /* sorted by name */
    size_t n;
    char root_hex[EV_SHA256_HEX_LEN + 1];
    int format; /* the bundle format receipts.json names (1: none named; evidence/receipts.h) */
    int have_root;
    /* parsed members; NULL when missing or malformed (check 3 says why) */
    cJSON *receipts, *protocol, *validation, *model, *proof, *provenance;
    int samples_ok;
    vb_samples samples;
    vb_vjob *vjobs; /* sorted by job_id */
    size_t n_vjobs;
    int vjobs_ok;              /* index built without structural failures */
    struct ev_protocol *proto; /* parsed protocol.json (runner's parser), or NULL */
    double regen_limit;        /* input elements checks 5 and 6 may regenerate (ev_verify_opts) */
    size_t json_budget;        /* JSON values the members may still hold (ev_bundle_json_budget) */
} vb_bundle;

/* Reads path through zipread (check 1 is recorded in r).  EV_EIO when the
 * path cannot be read at all.  OUT: *out (possibly with fewer members when
 * the archive failed check 1). */
ev_status vb_load(const char *path, ev_vreport *r, vb_bundle **out, ev_err *err);
void vb_free(vb_bundle *b); /* NULL-safe */
/* verify_lookup.c: member by exact name, or NULL. */
const vb_member *vb_find(const vb_bundle *b, const char *name);
/* verify_lookup.c: the case object of validation.json with index ci, or
 * NULL. */
const cJSON *vb_case(const vb_bundle *b, int64_t ci);
/* verify_lookup.c: the attempt object numbered att in v's attempts, or
 * NULL. */
const cJSON *vb_attempt(const vb_vjob *v, int64_t att);

/* verify_plants.c: attempt a's plants (store schema 5), from its device
 * record's seed, the protocol and its flush record's cache size, into
 * *c.  Returns 1; 0 when the record names no plants; -1 when it names
 * plants its seed, protocol and cache do not make, or lacks a member
 * (why says which). */
struct ev_plant_cfg;
int vp_config(const vb_bundle *b, const vb_vjob *v, const cJSON *a, struct ev_plant_cfg *c, char *why,
              size_t cap);
/* 1 when job v's arm runs with plants and checks (every arm with a case). */
int vp_planted_arm(const vb_bundle *b, const vb_vjob *v);

/* verify_bound.c: the run's ceilings per shard (runner/sample_rules.h,
 * physical plausibility): mem[s] and l2[s] in bytes per us, NaN where
 * shard s's ceiling or ceiling-l2 job of the main phase did not complete. */
typedef struct vb_ceilings {
    int64_t n; /* shards (1 unsharded) */
    double *mem, *l2;
} vb_ceilings;
/* Fills *c (release with vb_ceilings_free).  Returns 0, or -1 when out of
 * memory (*c zeroed).  Needs samples_ok for any ceiling (none without). */
int vb_ceilings_get(const vb_bundle *b, vb_ceilings *c);
void vb_ceilings_free(vb_ceilings *c); /* leaves it zeroed */
/* The plausibility facts of attempt a of job v under ceilings c.  Returns 1
 * with *out, or 0 when v has no case of the protocol (*out untouched). */
struct ev_rule_bound;
int vb_bound_of(const vb_bundle *b, const vb_vjob *v, const cJSON *a, const vb_ceilings *c,
                struct ev_rule_bound *out);

/* verify_outputs.c: 1 when regenerating `elements` input elements for
 * `what` stays within b->regen_limit; else 0, with one failure under
 * check c saying how many, the limit and how to raise it. */
int vb_regen_allowed(const vb_bundle *b, ev_vreport *r, int c, double elements, const char *what);

/* ---- checks ------------------------------------------------------------- */

/* 1 (the default): continuation rows of samples.csv are checked by the
 * cheap rule of verify_samples.c.  Only the tests set 0, to hold every case
 * to the reference reading too. */
extern int vb_fast_rows;
/* Check 3's part for samples.csv (verify_samples.c): fills b->samples and
 * b->samples_ok, recording every failure under "formats". */
void vb_read_samples(vb_bundle *b, ev_vreport *r);
/* 1 (the default): samples.csv is read while it is inflated (verify_samples.c),
 * without keeping its text.  Only the tests set 0, to hold every case to the
 * reading of the whole text too. */
extern int vb_stream_samples;
/* 0 (the default): each piece as zipread gives it; the tests set a few
 * bytes, so that lines and the header fall across pieces. */
extern size_t vb_stream_piece;
/* Times samples.csv was streamed but then had to be read whole (not
 * accepted while streamed): for the tests. */
extern size_t vb_stream_rereads;
struct ev_zip_stream;
/* Starts reading samples.csv as it is inflated: fills *zs for
 * ev_zip_read_mem_stream.  EV_OK (also when streaming is off: zs->name is
 * then NULL) or EV_ENOMEM. */
ev_status vb_stream_start(vb_bundle *b, struct ev_zip_stream *zs);
/* Ends that reading (after ev_zip_read_mem_stream returned, whatever it
 * returned); its table is used by vb_read_samples when it took every row. */
void vb_stream_finish(vb_bundle *b);
/* Frees what vb_stream_start made (NULL-safe). */
void vb_stream_free(struct vb_sstream *st);
/* Frees the job list of t and its strings (t's rows are the caller's). */
void vb_samples_free_jobs(vb_samples *t);

void vc_members(vb_bundle *b, const ev_verify_opts *o, ev_vreport *r);
void vc_formats(vb_bundle *b, ev_vreport *r);
void vc_plan(vb_bundle *b, ev_vreport *r);
void vc_protocol(vb_bundle *b, ev_vreport *r);
void vc_rederive(vb_bundle *b, ev_vreport *r);
/* EV_EIO when dir is not a readable directory (exit 2); else EV_OK. */
ev_status vc_sources(vb_bundle *b, const char *dir, ev_vreport *r, ev_err *err);
/* Check 7 against --kernel-tree DIR (verify_sources.c). */
ev_status vc_kernel_tree(vb_bundle *b, const char *dir, ev_vreport *r, ev_err *err);
void vc_compare(vb_bundle *a, vb_bundle *b, ev_vreport *r);
/* Check 9 (verify_attest.c).  EV_EIO (err says why) when the key or the
 * envelope cannot be read at all (exit 2); EV_ENOMEM; else EV_OK with
 * every problem recorded under "attest". */
ev_status vc_attest(vb_bundle *b, const ev_verify_opts *o, ev_vreport *r, ev_err *err);
/* Check 10 (verify_rebuild.c): every external kernel's build receipt is
 * held to the members (each file its build read) and, where this host has
 * the same compiler, its binary rebuilt from them; part of the report only
 * for a bundle that built external kernels. */
void vc_rebuild(vb_bundle *b, ev_vreport *r);

/* ---- shared helpers ------------------------------------------------------ */

/* samples.csv's header, in order. */

/* The job of validation.json with this job_id, or NULL (needs the index). */
const vb_vjob *vb_job_by_id(const vb_bundle *b, int64_t job_id);

/* The samples.csv rows of one attempt: *first is the index of its first
 * row; its cold rows come first (n_cold of them), then its hot rows
 * (n_hot).  Zero counts when the attempt has no rows.  Needs samples_ok. */
void vb_rows_of(const vb_bundle *b, int64_t job_id, int64_t attempt, size_t *first, size_t *n_cold,
                size_t *n_hot);

/* Writes exactly the text snprintf(buf, 32, "%.17g", v) gives in the C
 * locale, for finite v: an exact 128-bit path for 1e-6 <= |v| < 2^53 and
 * zero, snprintf otherwise.  Returns -1 (buf untouched) for NaN/Inf. */
int vb_format17(double v, char buf[32]);

/* Reads s[0..n) when it is exactly vb_format17's text of some finite
 * double, the cheap way: the digits give an estimate within two units in
 * the last place, and the estimate and its neighbours are formatted until
 * one gives s back (that double is then what strtod would read, since the
 * %.17g text reads back to its bits).  Returns 0 and sets *out; -1 when no
 * candidate gives s back, or s is out of the estimate's range (text not
 * canonical, or too small or large: the caller decides with strtod and
 * vb_format17, which is the rule). */
int vb_read17(const char *s, size_t n, double *out);

#endif
