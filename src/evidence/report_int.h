/*
 * report_int.h: what the report's files share (report.h is the interface):
 * the parsed members a report is drawn from, and the functions one file
 * calls in another.  The files, lowest first (each calls only files
 * listed before it):
 *   report.c       reading: the members parsed, indexed and looked up; what
 *                  a table cell shows (a job's median or outcome, the best
 *                  peer, a failure's reason); the writing helpers all share
 *                  (HTML escaping, a markdown cell, a number's format)
 *   report_call.c  when a ratio is called a difference (the run's noise
 *                  floor, the call), the run's device, host and peer
 *                  versions, and the notes on what an older format lacks
 *   report_results.c  the results as data (JSON, CSV) and the rules the
 *                  report, the results and the comparison share: bytes
 *                  moved, the ceiling, an estimate's interval
 *   report_svg.c   the per-case charts (inline SVG)
 *   report_head.c  report.html's top: the headline and the case x arm
 *                  matrix; the arm header cells
 *   report_defences.c  the per-arm table of the defences that held
 *   report_html.c  report.html: the sections and their tables
 *   report_md.c    the markdown case table
 * Private to src/evidence/.
 */
#ifndef EV_REPORT_INT_H
#define EV_REPORT_INT_H

#include "evidence/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jread.h"
#include "json.h"
#include "stats.h"
#include "vocab.h"
#include "jbuild.h"
#include "evidence/figures.h"

/* The noise floor a run measured (report_call.c, docs/intervals.md): the
 * largest |log(recheck / main)| of the default arm over the cases, times
 * RP_FLOOR_FACTOR, and at least RP_FLOOR_MIN_PCT percent. */
#define RP_FLOOR_FACTOR  1.25
#define RP_FLOOR_MIN_PCT 1.0
typedef struct rp_floor {
    int measured;       /* 1 when some case has both jobs' medians */
    double log_floor;   /* the floor on the log scale (RP_FLOOR_MIN_PCT's when not measured) */
    double pct;         /* 100 (exp(log_floor) - 1) */
    double max_drift;   /* the largest |log(recheck median / main median)| */
    int64_t case_index; /* the case it was seen on (-1: none) */
    size_t n_cases;     /* cases with both medians */
} rp_floor;

/* The parsed members a report is drawn from. */
typedef struct rep {
    cJSON *val;   /* validation.json (required) */
    cJSON *model; /* model.json, or NULL */
    cJSON *prov;  /* provenance.json, or NULL */
    const cJSON *jobs, *cases;
    char **arms; /* arm columns of the case table, in display order */
    size_t n_arms;
    struct kv *ix; /* lookups by key (see rep_index) */
    size_t n_ix;
    rp_floor floor;     /* the run's noise floor (rp_rep_open; zero after rp_rep_load alone) */
    int borrowed;       /* val, model and prov are the caller's (rp_rep_borrow): not freed */
    const ev_member *m; /* the members (the caller's, for the report's life): outputs and the
                           protocol a failed validation's reason is read from; NULL: none */
    size_t n_m;
} rep;

/* One index entry: a key naming what the object is, and the object. */
typedef struct kv {
    char *key;
    const cJSON *obj;
    size_t order; /* insertion order: the first of equal keys wins */
} kv;

/* The estimate of one case and arm and its 95% interval (report_results.c):
 * over rounds, a t interval on the mean log of the usable rounds' medians
 * (dof = usable - 1); with one round, the job's percentile bootstrap
 * interval of its median, read on the log scale as normal (dof 0). */
typedef struct rp_arm_stat {
    int has_est;
    double est_us; /* the figures' estimate over rounds (one round: the median) */
    int64_t n_rounds, n_usable;
    int has_ci;
    double lo, hi;                /* the interval, us per op */
    double log_mean, log_se, dof; /* what the interval stands on */
    const char *basis;            /* "rounds", "within-process", or NULL */
} rp_arm_stat;

/* report.c */
const char *rp_arm_cell(const rep *r, int64_t idx, const char *arm, const char *phase, char *t, size_t cap);
int rp_arm_estimate(const rep *r, int64_t idx, const char *arm, const char *phase, double *v);
const char *rp_arm_phase(const char *arm);
const char *rp_case_label(const cJSON *c, char *t, size_t cap);
const char *rp_case_name(const rep *r, int64_t idx, char *t, size_t cap);
const char *rp_failure_reason(const rep *r, const cJSON *j, char *t, size_t cap);
const cJSON *rp_fig_pair(const rep *r, int64_t idx, const char *arm, const char *against);
const cJSON *rp_find_decision(const rep *r, const cJSON *c);
const cJSON *rp_find_job(const rep *r, int64_t idx, const char *arm, const char *phase);
const cJSON *rp_find_retry(const rep *r, const char *job_key);
const cJSON *rp_ix_find(const rep *r, const char *key);
int64_t rp_jint(const cJSON *o, const char *key, int64_t dflt);
int rp_jnum(const cJSON *o, const char *key, double *out);
const char *rp_job_cell(const rep *r, const cJSON *j, char *t, size_t cap);
int rp_jtrue(const cJSON *o, const char *key);
int rp_md_best_peer(const rep *r, int64_t idx, const char **name, double *v);
int rp_md_ceiling_bytes(const cJSON *j, double *bytes);
int rp_md_median(const cJSON *j, double *v);
const cJSON *rp_md_ref_job(const rep *r, const char *arm, int *used_retry);
int rp_numv(const cJSON *n, double *v);
/* The floor a case's ratios take in a sharded bundle (validation.json
 * "shards", docs/runner.md "Shards"): the main-phase floor of the case's
 * own shard (ev_plan_shard_of), or its retry when only that has a median;
 * NULL in an unsharded bundle (the run's one floor stands) or when the
 * shard has none. */
const cJSON *rp_case_floor(const rep *r, int64_t idx, int *used_retry);
void rp_rep_free(rep *r);
ev_status rp_rep_load(const ev_member *m, size_t n, rep *r, ev_err *err);
ev_status rp_rep_load_with(const ev_member *m, size_t n, cJSON *figures, rep *r, ev_err *err);
/* rp_rep_load over trees the caller parsed (verify-bundle's: each member
 * parsed once) and keeps: rp_rep_free leaves them. */
ev_status rp_rep_borrow(cJSON *val, cJSON *model, cJSON *prov, rep *r, ev_err *err);
int64_t rp_rounds_of(const rep *r);

/* report.c: the writing helpers */
const char *rp_fmt(char t[48], double v, int d);
ev_status rp_put_esc(ev_buf *b, const char *s);
ev_status rp_put_md(ev_buf *b, const char *s);

/* report_call.c: the call of a ratio (docs/intervals.md, "Calling a
 * difference").  A ratio and what it stands on: replicated (an interval
 * over rounds) or not (one round: an interval within two processes). */
typedef struct rp_ratio {
    int has_ratio;
    double ratio;
    int has_ci;
    double lo, hi;
    int replicated;
} rp_ratio;

/* What a ratio is called.  The order indexes rp_counts. */
typedef enum rp_call {
    RP_CALL_NONE = 0,       /* no ratio */
    RP_CALL_BELOW,          /* a difference below 1: a win, faster */
    RP_CALL_ABOVE,          /* a difference above 1: a loss, slower */
    RP_CALL_SAME,           /* rounds: the interval holds 1 and lies within the floor */
    RP_CALL_INCONCLUSIVE,   /* rounds: too few for an interval, or it reaches beyond the floor */
    RP_CALL_NOT_REPLICATED, /* one round: within the floor, or no floor measured */
    RP_CALL_N
} rp_call;

/* Counts of calls, indexed by rp_call. */
typedef struct rp_counts {
    size_t n[RP_CALL_N];
} rp_counts;

/* The run's device, host and peer versions (first invocation's
 * environment; peers from the attempts' device records). */
typedef struct rp_facts {
    char protocol_id[80], backend[16], device[128], driver[48], runtime[48];
    char host_hash[80], kernel[128], compiler[64];
    int has_peers; /* 0: the store (schema < 3) kept none */
    char peers[600];
    int64_t store_schema;
} rp_facts;

/* What a bundle's format (or its gaps) kept from a reader's checks. */
#define RP_MAX_NOTES 6
typedef struct rp_notes {
    size_t n;
    char v[RP_MAX_NOTES][400];
} rp_notes;

/* Fills *f with r's noise floor; returns f->measured. */
int rp_floor_get(const rep *r, rp_floor *f);
/* The floor of a comparison of two runs: the larger of a and b, measured
 * only when both are. */
void rp_floor_max(const rp_floor *a, const rp_floor *b, rp_floor *out);
/* "4.41%: 1.25 x the largest recheck drift (3.52% on case 12, of 30
 * cases), at least 1%" (or why there is none) into t. */
const char *rp_floor_text(const rp_floor *f, char *t, size_t cap);
/* The call of ratio x against floor f. */
rp_call rp_call_of(const rp_ratio *x, const rp_floor *f);
/* The call on a ratio of two runs (evident compare): one round as
 * rp_call_of; with rounds, faster or slower only when the whole interval
 * clears +-floor (the rounds of each run do not sample the shift between
 * runs, which the measured floor stands for), the same when it lies within
 * it, inconclusive otherwise or without a measured floor. */
rp_call rp_call_across(const rp_ratio *x, const rp_floor *f);
/* The word of a call: within one run (two_runs 0: win, loss, n.s., ...)
 * or between two runs (1: faster, slower, not significant, ...). */
const char *rp_call_word(rp_call c, int two_runs);
/* The table cell class of a call: "ok" (below), "bad" (above) or NULL. */
const char *rp_call_class(rp_call c);
/* Reads figures pair p into *x; returns x->has_ratio (0 when p is NULL). */
int rp_pair_ratio(const cJSON *p, rp_ratio *x);
/* The call of figures pair p (NULL: RP_CALL_NONE) against r's floor. */
rp_call rp_pair_call(const rep *r, const cJSON *p);
/* Counts the calls of pair arm / against over r's cases. */
void rp_count_calls(const rep *r, const char *arm, const char *against, rp_counts *n);
/* "W wins / L losses / S n.s. / I inconclusive / N not replicated". */
const char *rp_counts_text(const rp_counts *n, char *t, size_t cap);
/* What r's intervals stand on and how ratios are called, one sentence. */
const char *rp_basis_text(const rep *r, char *t, size_t cap);
/* The peer versions the attempts' device records name ("arm name
 * version; ...") into t; returns 0 (t "") when the store (schema < 3)
 * kept none. */
int rp_peer_versions(const rep *r, char *t, size_t cap);
void rp_facts_get(const rep *r, rp_facts *x);
/* Adds "device", "host" and "peer_versions" (per arm, name: version;
 * null with a reason when not kept) of x (r's facts) to object o. */
void rp_facts_json(ev_jb *b, cJSON *o, const rep *r, const rp_facts *x);
/* The notes on r (members m[0..n)): what its format or gaps kept from
 * the checks of the report, the results and the comparison. */
void rp_format_notes(const rep *r, const ev_member *m, size_t n, rp_notes *x);

int rp_auto_vs_best(const rep *r, int64_t idx, const char **peer, double *ratio, rp_call *call);
/* rp_rep_load_with (figures NULL: validation.json's own), then r->floor
 * (rp_floor_get): how every writer opens a bundle. */
ev_status rp_rep_open(const ev_member *m, size_t n, cJSON *figures, rep *r, ev_err *err);

/* report_results.c */
int rp_arm_outcome(const rep *r, int64_t idx, const char *arm, const char **outcome, char *reason,
                   size_t cap);
int rp_arm_stat_get(const rep *r, int64_t idx, const char *arm, rp_arm_stat *s);
int rp_case_bytes(const cJSON *c, double *bytes);
int rp_ceiling_bpus(const rep *r, double *bpus);
/* Adds "noise_floor" (what f holds, and its text) to object o. */
void rp_floor_json(ev_jb *jb, cJSON *o, const rp_floor *f);

/* report_svg.c */
ev_status rp_sec_case_charts(const rep *r, ev_buf *b);

/* report_defences.c: the per-arm table of the defences that held for each
 * arm's completed jobs, as HTML (markdown 0) or a markdown table (1). */
ev_status rp_sec_defences(const rep *r, const ev_member *m, size_t n, int markdown, ev_buf *b);

/* report_head.c */
ev_status rp_put_arm_headers(const rep *r, ev_buf *b);
ev_status rp_sec_headline(const rep *r, const char *problem, ev_buf *b);
ev_status rp_sec_matrix(const rep *r, ev_buf *b);

#endif
