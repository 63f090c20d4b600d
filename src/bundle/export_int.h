/*
 * export_int.h: what the exporter's files share (export.h is the
 * interface): the loaded records of one run, the bundle being built, and
 * the functions one file calls in another.  The files, in reading order:
 *   export.c          ev_export_build: load, derive, write, package; receipts
 *   export_load.c     every named query of the run into plain arrays
 *   export_derive.c   outcomes, per-op times, medians, the main-job index
 *   export_members.c  samples.csv, validation.json, model.json, proof
 *                     receipts and provenance
 * Private to src/bundle/.
 */
#ifndef EV_EXPORT_INT_H
#define EV_EXPORT_INT_H

#include "bundle/export.h"
#include "samples.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "csv.h"
#include "json.h"
#include "names.h"
#include "sha256.h"
#include "stats.h"
#include "evidence/figures.h"
#include "jbuild.h"
#include "evidence/projections.h"
#include "evidence/report.h"
#include "bundle/zipwrite.h"
#include "model/model.h"
#include "model/run_view.h"
#include "runner/plan.h"
#include "runner/protocol.h"
#include "runner/sample_rules.h"
#include "runner/snapshot.h"
#include "store/outcome.h"

#define MAX_EXACT_INT (INT64_C(1) << 53)

/* ---- loaded records ------------------------------------------------------ */

/* Records kept as the store reads them (store.h), their text and bytes
 * copied into the load (protocol_path redacted). */
typedef ev_run_rec xrun;
typedef ev_source_rec xsource; /* bytes NULL when empty */
typedef ev_case_rec xcase;
typedef ev_binding_rec xbinding;
typedef ev_warmup_rec xwarmup;
typedef ev_calibration_rec xcal;
typedef ev_cold_rec xcold;
typedef ev_flush_rec xflush;
typedef ev_device_rec xdevice;
typedef ev_graph_node_rec xnode;
typedef ev_fit_rec xfit;

typedef struct xstatus {
    int have;
    const char *status, *rescue_status;
    int64_t finished_ns;
} xstatus;

/* An invocation as the store reads it (ev_invocation_rec, its text owned
 * by the load) and the shard it ran, if any (ev_shard_rec). */
typedef struct xinv {
    int64_t invocation_id, started_ns;
    int resumed;
    const char *host_hash, *profile_id, *env_json; /* profile/env NULL: no environment row */
    int has_shard;                                 /* a shards row (db/migrate-2.sql) */
    int64_t shard_index, shard_count;
    const char *shard_phase;
} xinv;

typedef struct xattempt {
    int64_t attempt_id, job_id, attempt, invocation_id, started_ns;
    ev_process_facts facts; /* as the store read them (ev_row_attempt); validation_failed
                               set when the outcome is derived */
    int has_pid;
    int64_t pid;
    int64_t record_count, ended_ns, wall_ns;
    const char *skip_reason, *protocol_error, *affinity, *stderr_tail;
    ev_outcome outcome; /* derived */
} xattempt;

typedef struct xjob {
    int64_t job_id, case_index, retry_of, plan_order;
    int has_case, has_retry;
    const char *job_key, *phase, *arm, *label;
    /* derived */
    size_t att0, n_att;      /* range in the attempts array */
    const xcase *c;          /* NULL for reference arms */
    const struct xjob *orig; /* the job retried, or NULL */
    ev_outcome outcome;
    int has_median, has_cold_median;
    double median_us, cold_median_us;
    const char *median_reason, *cold_reason;
    int64_t hot_n;
    /* physical plausibility (runner/sample_rules.h), for a completed job
     * with a case: its facts and the ceiling that bounds each median */
    int has_bound;
    ev_rule_bound bound;
    ev_rule_ceiling hot_ceiling, cold_ceiling;
    double hot_bound_bpus, cold_bound_bpus;
} xjob;

/* Per-attempt child rows: attempt_id first, so one lower-bound serves all. */
typedef struct xsample {
    int64_t attempt_id, sample_index, replays, ops_per_graph, sm_clock_mhz;
    int hot, has_clock;
    double elapsed_ms, per_op_us;
} xsample;

typedef struct xval {
    int64_t attempt_id, mismatches;
    const char *stage, *sha256;
    int passed, mae_null, bound_null, has_output;
    double max_abs_err, bound;
    const void *output;
    size_t output_len;
    int64_t job_id, attempt; /* derived: for the member name */
} xval;

/* An output check after a timed sample (schema 4): the store's row (its
 * text and bytes owned by the load; attempt_id first, as the range
 * lookup needs) and what the member name needs. */
typedef struct xcheck {
    ev_sample_check_rec r;
    int64_t job_id, attempt; /* derived: for the member name */
} xcheck;

/* A sample's check tag (schema 5): the store's row (its text owned by the
 * load). */
typedef struct xopcheck {
    ev_op_check_rec r;
} xopcheck;

/* The kept output (schema 5): the store's row (text and bytes owned by
 * the load) and what the member name needs. */
typedef struct xopkept {
    ev_op_kept_rec r;
    int64_t job_id, attempt; /* derived: for the member name */
} xopkept;

/* A growable array of fixed-size elements. */
typedef struct vec {
    void *v;
    size_t n, cap, size;
} vec;

/* Everything loaded for one run, plus an owner list of heap blocks. */
typedef struct xload {
    xrun run;
    xstatus status;
    vec invs, sources, cases, jobs, atts, samples, bindings, warmups, cals, colds, flushes, vals, nodes, fits;
    vec devices;           /* attempt_devices rows (schema 3; none in an older store) */
    vec checks;            /* sample_checks rows (schema 4; none in an older store) */
    vec opchecks;          /* op_checks rows (schema 5; none in an older store) */
    vec opkept;            /* op_kept rows (schema 5; none in an older store) */
    int64_t store_version; /* the store's schema version: 3 and later export device records */
    void **owned;
    size_t n_owned, cap_owned;
    const struct xjob **main_ix; /* phase-main, non-retry jobs with a case, by (case, arm, job_id) */
    size_t n_main_ix;
    int64_t shard_count; /* the run's shards (docs/runner.md "Shards"); 0: unsharded */
} xload;

/* One member being built: owned name and bytes. */
typedef struct ev_bundle {
    int64_t run_id;
    ev_member *m;
    char **names;
    void **datas;
    size_t n, cap;
    char root[EV_SHA256_HEX_LEN + 1];
} ev_bundle_t;

/* export_load.c */
void ex_attempt_range(const vec *v, int64_t attempt_id, size_t *b, size_t *e);
int ex_cmp_i64(int64_t a, int64_t b);
ev_status ex_load(ev_store *s, int64_t run_id, xload *L, ev_err *err);
ev_status ex_own(xload *L, void *p);
void *ex_vec_at(const vec *v, size_t i);
void ex_xload_free(xload *L);

/* export_derive.c */
ev_status ex_derive(xload *L, ev_err *err);
const xjob *ex_main_job(const xload *L, int64_t idx, const char *arm);

/* export_members.c */
void ex_output_name(const xval *v, char *name, size_t cap);
void ex_check_name(const xcheck *c, char *name, size_t cap);
void ex_kept_name(const xopkept *k, char *name, size_t cap);
/* The exporter's view of the run (export_view.c): the view and what it
 * borrows that the exporter made for it. */
typedef struct ex_view {
    ev_run_view v;
    ev_view_case *cases;
    ev_view_job *jobs;
    double *vals; /* every job's last-attempt sample values */
} ex_view;
/* Fills *xv from L (after ex_derive).  EV_ENOMEM. */
ev_status ex_view_build(const xload *L, ex_view *xv, ev_err *err);
void ex_view_free(ex_view *xv);

ev_status ex_write_model(const ex_view *xv, ev_buf *out, ev_err *err);
ev_status ex_write_proof(const xload *L, const char *tree_hash, ev_buf *out);
ev_status ex_write_provenance(const xload *L, const char *tree_hash, ev_buf *out);
ev_status ex_write_samples_csv(const xload *L, ev_buf *out);
ev_status ex_write_validation(const xload *L, const ex_view *xv, const ev_buf *model_json, ev_buf *out,
                              ev_err *err);

#endif
