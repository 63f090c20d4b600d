/*
 * report_int.h: what the report's files share (report.h is the interface):
 * the parsed members a report is drawn from, and the functions one file
 * calls in another.  The files, lowest first (each calls only files
 * listed before it):
 *   report.c       reading: the members parsed, indexed and looked up; what
 *                  a table cell shows (a job's median or outcome, the best
 *                  peer, a failure's reason); the writing helpers all share
 *                  (HTML escaping, a markdown cell, a number's format)
 *   report_results.c  the results as data (JSON, CSV) and the rules the
 *                  report, the results and the comparison share: bytes
 *                  moved, the ceiling, an estimate's interval
 *   report_svg.c   the per-case charts (inline SVG)
 *   report_head.c  report.html's top: the headline and the case x arm
 *                  matrix; the arm header cells
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
    int borrowed; /* val, model and prov are the caller's (rp_rep_borrow): not freed */
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
int rp_auto_vs_best(const rep *r, int64_t idx, const char **peer, double *ratio, const char **verdict);
const char *rp_arm_phase(const char *arm);
const char *rp_case_label(const cJSON *c, char *t, size_t cap);
const char *rp_case_name(const rep *r, int64_t idx, char *t, size_t cap);
const char *rp_failure_reason(const cJSON *j, char *t, size_t cap);
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
const char *rp_verdict_short(const cJSON *p);

/* report.c: the writing helpers */
const char *rp_fmt(char t[48], double v, int d);
ev_status rp_put_esc(ev_buf *b, const char *s);
ev_status rp_put_md(ev_buf *b, const char *s);

/* report_results.c */
int rp_arm_outcome(const rep *r, int64_t idx, const char *arm, const char **outcome, char *reason,
                   size_t cap);
int rp_arm_stat_get(const rep *r, int64_t idx, const char *arm, rp_arm_stat *s);
int rp_case_bytes(const cJSON *c, double *bytes);
int rp_ceiling_bpus(const rep *r, double *bpus);

/* report_svg.c */
ev_status rp_sec_case_charts(const rep *r, ev_buf *b);

/* report_head.c */
ev_status rp_put_arm_headers(const rep *r, ev_buf *b);
ev_status rp_sec_headline(const rep *r, const char *problem, ev_buf *b);
ev_status rp_sec_matrix(const rep *r, ev_buf *b);

#endif
