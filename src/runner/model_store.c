/*
 * model_store.c: the fit's observations read from the evidence store, for
 * `evident fit --db` and the runner's fit phase.  Through the store's named
 * queries only (no SQL here): the run's cases, its main-phase schedule jobs
 * (the arms of the declared schedules), the last attempt of each job, that
 * attempt's outcome (ev_outcome_derive over its process record and
 * validations), its hot samples and its binding's thread count (S).
 *
 * Which cases are observed is ev_obs_select's rule (model_obs.c) over the
 * protocol's declared schedules; an observation per schedule is the median
 * (ev_median) of per_op_us = elapsed_ms * 1000 / (replays *
 * ops_per_graph) over the hot samples of the job's last attempt.  Other
 * cases are excluded with every failing arm's reason, in the words of the
 * exporter's refit (src/bundle/export_members.c).  A schedule the protocol
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
} st_job;

typedef struct st_attempt {
    int64_t attempt_id, job_id, attempt;
    ev_process_facts facts;
    int64_t threads; /* -1: no binding */
} st_attempt;

typedef struct st_sample {
    int64_t attempt_id;
    double per_op_us;
} st_sample;

typedef struct st_ctx {
    int64_t run_id;
    st_case *cases;
    size_t n_cases, cap_cases;
    st_job *jobs; /* sorted by (case_index, job_id) before use */
    size_t n_jobs, cap_jobs;
    st_attempt *att;
    size_t n_att, cap_att;
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
    c->jobs[c->n_jobs++] = (st_job){k->case_index, g.job_id, ev_plan_label_round(g.label), s};
    return EV_OK;
}

/* Orders st_job by (case_index, job_id). */
static int cmp_st_job(const void *pa, const void *pb)
{
    const st_job *a = pa, *b = pb;
    if (a->case_index != b->case_index)
        return a->case_index < b->case_index ? -1 : 1;
    return (a->job_id > b->job_id) - (a->job_id < b->job_id);
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

/* Finds the attempt with attempt_id id, or NULL (linear in the rare case
 * ids are not ordered; attempts come ordered by job, then attempt). */
static st_attempt *find_attempt(st_ctx *c, int64_t id)
{
    for (size_t i = 0; i < c->n_att; i++)
        if (c->att[i].attempt_id == id)
            return &c->att[i];
    return NULL;
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
    st_sample *s = &c->smp[c->n_smp++];
    s->attempt_id = g.attempt_id;
    if (ev_per_op_us(g.elapsed_ms, g.replays, g.ops_per_graph, &s->per_op_us))
        s->per_op_us = NAN; /* a row no sample rule would pass: no observation */
    return EV_OK;
}

/* The last attempt of job_id (highest attempt number), or NULL. */
static const st_attempt *last_attempt(const st_ctx *c, int64_t job_id)
{
    const st_attempt *best = NULL;
    for (size_t i = 0; i < c->n_att; i++)
        if (c->att[i].job_id == job_id && (!best || c->att[i].attempt > best->attempt))
            best = &c->att[i];
    return best;
}

/*
 * The hot median of attempt a into *out, or a reason in why[cap] (return
 * 1).  Samples come ordered by attempt_id; scratch holds n_smp doubles.
 */
static int hot_median(const st_ctx *c, const st_attempt *a, double *scratch, double *out, char *why,
                      size_t cap)
{
    size_t m = 0;
    for (size_t i = 0; i < c->n_smp; i++)
        if (c->smp[i].attempt_id == a->attempt_id)
            scratch[m++] = c->smp[i].per_op_us;
    if (m == 0) {
        snprintf(why, cap, "no hot samples");
        return 1;
    }
    if (ev_median(scratch, m, out) || !(*out > 0.0) || !isfinite(*out)) {
        snprintf(why, cap, "hot median is not a positive number");
        return 1;
    }
    return 0;
}

/* See model.h. */
ev_status ev_obs_from_store(struct ev_store *s, int64_t run_id, unsigned scheds, ev_obs **obs, size_t *n,
                            ev_excluded **excl, size_t *n_excl, int64_t *sms, ev_err *err)
{
    ev_status rc = EV_OK;
    st_ctx c;
    memset(&c, 0, sizeof c);
    c.run_id = run_id;
    c.scheds = scheds;
    c.err = err;
    ev_obs *ov = NULL;
    ev_excluded *ev = NULL;
    double *scratch = NULL;
    size_t no = 0, ne = 0;
    ev_obs_sms acc = {0, 0};

    if ((rc = ev_store_query(s, EV_Q_CASES, run_id, on_case, &c, err)) ||
        (rc = ev_store_query(s, EV_Q_JOBS, run_id, on_job, &c, err)) ||
        (rc = ev_store_query(s, EV_Q_ATTEMPTS, run_id, on_attempt, &c, err)) ||
        (rc = ev_store_query(s, EV_Q_VALIDATIONS, run_id, on_validation, &c, err)) ||
        (rc = ev_store_query(s, EV_Q_BINDINGS, run_id, on_binding, &c, err)) ||
        (rc = ev_store_query(s, EV_Q_SAMPLES, run_id, on_sample, &c, err)))
        goto out;
    if (c.n_cases == 0) {
        rc = ev_err_set(err, EV_ENOTFOUND, "run %lld has no cases", (long long)run_id);
        goto out;
    }
    size_t bytes;
    if (ev_size_mul(c.n_cases, EV_SCHED_COUNT * sizeof *ov, &bytes) || !(ov = calloc(1, bytes)) ||
        !(ev = calloc(c.n_cases, sizeof *ev)) ||
        !(scratch = calloc(c.n_smp ? c.n_smp : 1, sizeof *scratch))) {
        rc = ev_err_set(err, EV_ENOMEM, "store observations: out of memory");
        goto out;
    }
    if (c.n_jobs) /* a run of no jobs has no array */
        qsort(c.jobs, c.n_jobs, sizeof *c.jobs, cmp_st_job);
    for (size_t k = 0, jx = 0; k < c.n_cases; k++) {
        const st_case *cs = &c.cases[k];
        ev_obs_sched sched[EV_SCHED_COUNT];
        ev_obs_case oc = {cs->op,   cs->dtype,        cs->rows,
                          cs->cols, cs->default_rows, cs->role == EV_ROLE_HOLDOUT};
        memset(sched, 0, sizeof sched);
        while (jx < c.n_jobs && c.jobs[jx].case_index < cs->case_index)
            jx++;
        for (; jx < c.n_jobs && c.jobs[jx].case_index == cs->case_index; jx++) {
            const st_job *sj = &c.jobs[jx];
            const st_attempt *a = last_attempt(&c, sj->job_id);
            ev_obs_job j;
            char rb[80];
            memset(&j, 0, sizeof j);
            j.round = sj->round;
            /* a job without an attempt is interrupted, as the exporter says */
            j.outcome = a ? ev_outcome_name(ev_outcome_derive(&a->facts)) : "interrupted";
            j.has_binding = a && a->threads >= 1;
            j.has_median = a && !hot_median(&c, a, scratch, &j.median_us, rb, sizeof rb);
            j.threads = j.has_binding ? a->threads : 0;
            ev_obs_add(&sched[sj->sched], &j);
        }
        ev_obs_select(&oc, sched, scheds, ov, &no, ev, &ne, &acc);
    }
    if (!acc.S) {
        rc = ev_err_set(err, EV_EFIT, "run %lld: no case has completed default, rows1 and rows2 jobs",
                        (long long)run_id);
        goto out;
    }
    if ((rc = ev_obs_sms_get(&acc, sms, err)))
        goto out;
    *obs = ov;
    *n = no;
    if (ne == 0) {
        free(ev);
        ev = NULL;
    }
    *excl = ev;
    *n_excl = ne;
    ov = NULL;
    ev = NULL;
out:
    free(ov);
    free(ev);
    free(scratch);
    free(c.cases);
    free(c.jobs);
    free(c.att);
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
