/*
 * model_store.c: the fit's observations read from the evidence store, for
 * `evident fit --db` and the runner's fit phase.  Through the store's named
 * queries only (no SQL here): the run's cases, its main-phase schedule jobs
 * (the arms of the declared schedules), the last attempt of each job, that
 * attempt's outcome (ev_outcome_derive over its process record and
 * validations), its hot samples (per_op_us = elapsed_ms * 1000 / (replays
 * * ops_per_graph)) and its binding's thread count (S), filled into the
 * run's view (model/run_view.h) and observed there (ev_view_observe), as
 * the exporter and the verifier observe theirs.  A schedule the protocol
 * does not declare is not read: it carries no weight and the bundle's
 * refit does not read it either.
 */
#include "model_store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"
#include "plan.h"
#include "protocol.h"
#include "stats.h"
#include "store/outcome.h"
#include "store/store.h"
#include "model/run_view.h"

typedef struct st_case {
    int64_t case_index;
    char op[16], dtype[8];
    int64_t rows, cols, default_rows;
    ev_role role;
} st_case;

/* A main-phase schedule job of a case (one per round). */
typedef struct st_job {
    int64_t case_index, job_id, round;
    ev_sched sched;
    size_t last; /* its last attempt's index in att[], or SIZE_MAX: none */
} st_job;

typedef struct st_attempt {
    int64_t attempt_id, job_id, attempt;
    ev_process_facts facts;
    int64_t threads; /* -1: no binding */
} st_attempt;

typedef struct st_sample {
    int64_t attempt_id;
    size_t order; /* its place in the query's order (attempt, sample_index) */
    double per_op_us;
} st_sample;

typedef struct st_ctx {
    int64_t run_id;
    st_case *cases;
    size_t n_cases, cap_cases;
    st_job *jobs; /* in job_id order (the query's) */
    size_t n_jobs, cap_jobs;
    st_attempt *att; /* in (job_id, attempt) order (the query's) */
    size_t n_att, cap_att;
    struct st_id *by_id; /* the attempts in attempt_id order, for find_attempt */
    st_sample *smp;
    size_t n_smp, cap_smp;
    unsigned scheds; /* the declared schedules: only their jobs are read */
    ev_err *err;
} st_ctx;

/* Copies text (NULL as "") into dst[cap]; -1 when it does not fit. */
static int put_text(char *dst, size_t cap, const char *s)
{
    size_t l = s ? strlen(s) : 0;
    if (l >= cap)
        return -1;
    memcpy(dst, s ? s : "", l);
    dst[l] = '\0';
    return 0;
}

/* EV_Q_CASES row (ev_case_rec). */
static ev_status on_case(void *vctx, const ev_row *r)
{
    st_ctx *c = vctx;
    ev_case_rec g;
    if (ev_grow((void **)&c->cases, &c->cap_cases, c->n_cases, sizeof *c->cases))
        return ev_err_set(c->err, EV_ENOMEM, "store observations: out of memory");
    ev_row_case(r, &g);
    st_case *k = &c->cases[c->n_cases];
    memset(k, 0, sizeof *k);
    k->case_index = g.case_index;
    if (put_text(k->op, sizeof k->op, g.op) || put_text(k->dtype, sizeof k->dtype, g.dtype))
        return ev_err_set(c->err, EV_EFORMAT, "case %lld: op or dtype too long", (long long)k->case_index);
    k->rows = g.rows;
    k->cols = g.cols;
    k->default_rows = g.default_rows;
    k->role = ev_is_role(g.role, EV_ROLE_HOLDOUT) ? EV_ROLE_HOLDOUT : EV_ROLE_CALIBRATION;
    c->n_cases++;
    return EV_OK;
}

/* Finds the case with case_index ci (cases come ordered by it), or NULL. */
static st_case *find_case(st_ctx *c, int64_t ci)
{
    size_t lo = 0, hi = c->n_cases;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->cases[mid].case_index < ci)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n_cases && c->cases[lo].case_index == ci ? &c->cases[lo] : NULL;
}

/* EV_Q_JOBS row (ev_job_rec). */
static ev_status on_job(void *vctx, const ev_row *r)
{
    st_ctx *c = vctx;
    ev_job_rec g;
    ev_sched s;
    ev_row_job(r, &g);
    if (!ev_is_phase(g.phase, EV_PHASE_MAIN) || !g.has_case || g.has_retry || ev_sched_parse(g.arm, &s) ||
        !(c->scheds & EV_SCHED_BIT(s)))
        return EV_OK; /* not a main-phase job of a declared schedule of a case */
    st_case *k = find_case(c, g.case_index);
    if (!k)
        return ev_err_set(c->err, EV_EFORMAT, "job %lld names case %lld, which the run does not have",
                          (long long)g.job_id, (long long)g.case_index);
    if (ev_grow((void **)&c->jobs, &c->cap_jobs, c->n_jobs, sizeof *c->jobs))
        return ev_err_set(c->err, EV_ENOMEM, "store observations: out of memory");
    c->jobs[c->n_jobs++] = (st_job){k->case_index, g.job_id, ev_plan_label_round(g.label), s, SIZE_MAX};
    return EV_OK;
}

/* EV_Q_ATTEMPTS row (ev_attempt_rec: the process facts as the store
 * reads them). */
static ev_status on_attempt(void *vctx, const ev_row *r)
{
    st_ctx *c = vctx;
    ev_attempt_rec g;
    if (ev_grow((void **)&c->att, &c->cap_att, c->n_att, sizeof *c->att))
        return ev_err_set(c->err, EV_ENOMEM, "store observations: out of memory");
    ev_row_attempt(r, &g);
    st_attempt *a = &c->att[c->n_att++];
    memset(a, 0, sizeof *a);
    a->attempt_id = g.attempt_id;
    a->job_id = g.job_id;
    a->attempt = g.attempt;
    a->threads = -1;
    a->facts = g.facts;
    return EV_OK;
}

/* An attempt's place in att[], keyed by its attempt_id. */
typedef struct st_id {
    int64_t attempt_id;
    size_t i;
} st_id;

static int cmp_by_id(const void *pa, const void *pb)
{
    int64_t a = ((const st_id *)pa)->attempt_id, b = ((const st_id *)pb)->attempt_id;
    return (a > b) - (a < b);
}

/* Finds the attempt with attempt_id id (binary search of by_id), or NULL. */
static st_attempt *find_attempt(st_ctx *c, int64_t id)
{
    size_t lo = 0, hi = c->n_att;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->by_id[mid].attempt_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n_att && c->by_id[lo].attempt_id == id ? &c->att[c->by_id[lo].i] : NULL;
}

/* Indexes the attempts by attempt_id and gives each job its last attempt
 * (jobs and attempts both come in job_id order).  EV_ENOMEM. */
static ev_status index_attempts(st_ctx *c)
{
    if (!(c->by_id = calloc(c->n_att + 1, sizeof *c->by_id)))
        return ev_err_set(c->err, EV_ENOMEM, "store observations: out of memory");
    for (size_t i = 0; i < c->n_att; i++)
        c->by_id[i] = (st_id){c->att[i].attempt_id, i};
    if (c->n_att)
        qsort(c->by_id, c->n_att, sizeof *c->by_id, cmp_by_id);
    for (size_t i = 0, k = 0; i < c->n_jobs; i++) {
        st_job *j = &c->jobs[i];
        while (k < c->n_att && c->att[k].job_id < j->job_id)
            k++;
        for (; k < c->n_att && c->att[k].job_id == j->job_id; k++)
            if (j->last == SIZE_MAX || c->att[k].attempt > c->att[j->last].attempt)
                j->last = k;
    }
    return EV_OK;
}

/* EV_Q_VALIDATIONS row (ev_validation_rec). */
static ev_status on_validation(void *vctx, const ev_row *r)
{
    st_ctx *c = vctx;
    ev_validation_rec g;
    ev_row_validation(r, &g);
    st_attempt *a = find_attempt(c, g.attempt_id);
    if (a && !g.passed)
        a->facts.validation_failed = 1;
    return EV_OK;
}

/* EV_Q_BINDINGS row (ev_binding_rec): the attempt's threads. */
static ev_status on_binding(void *vctx, const ev_row *r)
{
    st_ctx *c = vctx;
    ev_binding_rec g;
    ev_row_binding(r, &g);
    st_attempt *a = find_attempt(c, g.attempt_id);
    if (a)
        a->threads = g.threads;
    return EV_OK;
}

/* EV_Q_SAMPLES row (ev_sample_rec).  Keeps hot samples with per_op_us. */
static ev_status on_sample(void *vctx, const ev_row *r)
{
    st_ctx *c = vctx;
    ev_sample_rec g;
    ev_row_sample(r, &g);
    if (!g.timing || strcmp(g.timing, "hot"))
        return EV_OK;
    if (ev_grow((void **)&c->smp, &c->cap_smp, c->n_smp, sizeof *c->smp))
        return ev_err_set(c->err, EV_ENOMEM, "store observations: out of memory");
    st_sample *s = &c->smp[c->n_smp];
    s->attempt_id = g.attempt_id;
    s->order = c->n_smp++;
    if (ev_per_op_us(g.elapsed_ms, g.replays, g.ops_per_graph, &s->per_op_us))
        s->per_op_us = NAN; /* a row no sample rule would pass: no observation */
    return EV_OK;
}

/* Orders samples by attempt, then by the query's order. */
static int cmp_sample(const void *pa, const void *pb)
{
    const st_sample *a = pa, *b = pb;
    if (a->attempt_id != b->attempt_id)
        return a->attempt_id < b->attempt_id ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

/* The run's view (model/run_view.h) of c: its cases, its main-phase
 * schedule jobs with their last attempts' outcomes, bindings and hot
 * samples (values into vals, in c->smp's order once sorted by attempt).
 * The jobs' arms are the schedules' names; phase main; no retries. */
static ev_status fill_view(st_ctx *c, ev_run_view *v, ev_view_case *vc, ev_view_job *vj, double *vals)
{
    if (c->n_smp)
        qsort(c->smp, c->n_smp, sizeof *c->smp, cmp_sample);
    for (size_t i = 0; i < c->n_smp; i++)
        vals[i] = c->smp[i].per_op_us;
    for (size_t k = 0; k < c->n_cases; k++) {
        const st_case *cs = &c->cases[k];
        vc[k] = (ev_view_case){cs->case_index,
                               cs->op,
                               cs->dtype,
                               cs->rows,
                               cs->cols,
                               cs->default_rows,
                               cs->role == EV_ROLE_HOLDOUT};
    }
    for (size_t i = 0, sx = 0; i < c->n_jobs; i++) {
        const st_job *sj = &c->jobs[i];
        const st_attempt *a = sj->last == SIZE_MAX ? NULL : &c->att[sj->last];
        ev_view_job *j = &vj[i];
        memset(j, 0, sizeof *j);
        j->job_key = "";
        j->phase = ev_phase_name(EV_PHASE_MAIN);
        j->arm = ev_sched_name(sj->sched);
        j->round = sj->round;
        j->case_index = sj->case_index;
        /* a job without an attempt is interrupted, as the exporter says */
        j->outcome = a ? ev_outcome_name(ev_outcome_derive(&a->facts)) : "interrupted";
        if (!a)
            continue;
        j->has_binding = a->threads >= 0;
        j->threads = j->has_binding ? a->threads : 0;
        size_t lo = 0, hi = c->n_smp;
        while (lo < hi) { /* the attempt's first sample */
            size_t mid = lo + (hi - lo) / 2;
            if (c->smp[mid].attempt_id < a->attempt_id)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (sx = lo; sx < c->n_smp && c->smp[sx].attempt_id == a->attempt_id; sx++)
            ;
        j->hot = vals + lo;
        j->n_hot = sx - lo;
    }
    v->cases = vc;
    v->n_cases = c->n_cases;
    v->jobs = vj;
    v->n_jobs = c->n_jobs;
    v->scheds = c->scheds;
    return EV_OK;
}

/* See model_store.h. */
ev_status ev_obs_from_store(struct ev_store *s, int64_t run_id, unsigned scheds, ev_obs **obs, size_t *n,
                            ev_excluded **excl, size_t *n_excl, int64_t *sms, ev_err *err)
{
    ev_status rc = EV_OK;
    st_ctx c;
    memset(&c, 0, sizeof c);
    c.run_id = run_id;
    c.scheds = scheds;
    c.err = err;
    ev_run_view v;
    ev_view_case *vc = NULL;
    ev_view_job *vj = NULL;
    double *vals = NULL;
    ev_view_obs o;
    memset(&v, 0, sizeof v);
    memset(&o, 0, sizeof o);

    if ((rc = ev_store_query(s, EV_Q_CASES, run_id, on_case, &c, err)) ||
        (rc = ev_store_query(s, EV_Q_JOBS, run_id, on_job, &c, err)) ||
        (rc = ev_store_query(s, EV_Q_ATTEMPTS, run_id, on_attempt, &c, err)) || (rc = index_attempts(&c)) ||
        (rc = ev_store_query(s, EV_Q_VALIDATIONS, run_id, on_validation, &c, err)) ||
        (rc = ev_store_query(s, EV_Q_BINDINGS, run_id, on_binding, &c, err)) ||
        (rc = ev_store_query(s, EV_Q_SAMPLES, run_id, on_sample, &c, err)))
        goto out;
    if (c.n_cases == 0) {
        rc = ev_err_set(err, EV_ENOTFOUND, "run %lld has no cases", (long long)run_id);
        goto out;
    }
    if (!(vc = calloc(c.n_cases, sizeof *vc)) || !(vj = calloc(c.n_jobs + 1, sizeof *vj)) ||
        !(vals = calloc(c.n_smp + 1, sizeof *vals))) {
        rc = ev_err_set(err, EV_ENOMEM, "store observations: out of memory");
        goto out;
    }
    if ((rc = fill_view(&c, &v, vc, vj, vals)) || (rc = ev_view_observe(&v, &o, err)))
        goto out;
    if (!o.bound) {
        rc = ev_err_set(err, EV_EFIT, "run %lld: no case has completed default, rows1 and rows2 jobs",
                        (long long)run_id);
        goto out;
    }
    *obs = o.obs;
    *n = o.n_obs;
    *excl = o.excluded;
    *n_excl = o.n_excluded;
    *sms = o.sms;
    memset(&o, 0, sizeof o);
out:
    ev_view_obs_free(&o);
    free(vc);
    free(vj);
    free(vals);
    free(c.cases);
    free(c.jobs);
    free(c.att);
    free(c.by_id);
    free(c.smp);
    return rc;
}

/* The EV_Q_RUN row's protocol bytes, parsed for their declared schedules. */
typedef struct st_run {
    unsigned scheds;
    int found;
    ev_err *err;
} st_run;

/* EV_Q_RUN row (ev_run_rec): its protocol bytes.  Bytes that do not
 * parse as a protocol declare EV_SCHEDS_DEFAULT, as the exporter reads
 * them (bundle/export_members.c). */
static ev_status on_run(void *vctx, const ev_row *r)
{
    st_run *x = vctx;
    ev_run_rec g;
    ev_protocol proto;
    ev_row_run(r, &g);
    const char *p = g.protocol;
    x->scheds = EV_SCHEDS_DEFAULT;
    if (!ev_protocol_parse(p ? p : "", p ? g.protocol_len : 0, &proto, NULL))
        x->scheds = proto.model_schedules;
    x->found = 1;
    ev_protocol_free(&proto);
    return EV_OK;
}

/* See model.h. */
ev_status ev_obs_run_scheds(struct ev_store *s, int64_t run_id, unsigned *scheds, ev_err *err)
{
    st_run x = {0, 0, err};
    ev_status rc = ev_store_query(s, EV_Q_RUN, run_id, on_run, &x, err);
    if (!rc && !x.found)
        rc = ev_err_set(err, EV_ENOTFOUND, "run %lld not found", (long long)run_id);
    if (!rc)
        *scheds = x.scheds;
    return rc;
}
