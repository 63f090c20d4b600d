/*
 * model_obs.c: the one rule that chooses the fit's observations from a
 * run's main-phase jobs (model.h, ev_obs_select), and the observations of
 * a run's view (run_view.h, ev_view_observe): the store loader
 * (runner/model_store.c), the exporter (bundle/export_members.c) and the
 * verifier (verify/verify_refit.c) each fill a view from their own
 * records and observe it here, so none can fit another model than the
 * others.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "model.h"
#include "run_view.h"
#include "stats.h"
#include "vocab.h"

/* Copies src into dst[cap] (truncated, NUL-terminated). */
static void copy_name(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

void ev_obs_add(ev_obs_sched *s, const ev_obs_job *j)
{
    const char *r = NULL;

    s->present = 1;
    if (!j->outcome || strcmp(j->outcome, "completed"))
        r = j->outcome ? j->outcome : "no outcome";
    else if (!j->has_binding)
        r = "no binding";
    else if (!j->has_median)
        r = "no hot samples";
    if (!r) {
        if (s->n_med < EV_OBS_MAX_ROUNDS)
            s->med[s->n_med++] = j->median_us;
        if (!s->threads[0])
            s->threads[0] = j->threads;
        else if (j->threads != s->threads[0] && !s->threads[1])
            s->threads[1] = j->threads;
        return;
    }
    if (!s->why_round || j->round < s->why_round) {
        s->why_round = j->round > 0 ? j->round : 1;
        copy_name(s->why, sizeof s->why, r);
    }
}

/* 1 when schedule q is observed on case c under scheds: declared and
 * applying (ev_sched_rows_of > 0; an unknown dtype makes short not apply,
 * and the fit refuses the dtype). */
static int sched_applies(const ev_obs_case *c, unsigned scheds, int q)
{
    ev_dtype dt;
    if (!(scheds & EV_SCHED_BIT(q)))
        return 0;
    if (!c->dtype || ev_dtype_parse(c->dtype, &dt))
        return q < EV_MODEL_SCHEDS;
    return ev_sched_rows_of((ev_sched)q, c->default_rows, c->cols, dt) > 0;
}

/* Folds thread count t (0: none) into acc. */
static void sms_fold(ev_obs_sms *acc, int64_t t)
{
    if (!t)
        return;
    if (!acc->S)
        acc->S = t;
    else if (t != acc->S && !acc->other)
        acc->other = t;
}

ev_status ev_obs_sms_get(const ev_obs_sms *acc, int64_t *S, ev_err *err)
{
    if (acc->other)
        return ev_err_set(
            err, EV_EFIT,
            "the observed jobs bound different thread counts S (%lld and %lld): no one S to fit",
            (long long)acc->S, (long long)acc->other);
    *S = acc->S ? acc->S : 1;
    return EV_OK;
}

void ev_obs_select(const ev_obs_case *c, const ev_obs_sched sched[EV_SCHED_COUNT], unsigned scheds,
                   ev_obs *obs, size_t *n_obs, ev_excluded *ex, size_t *n_ex, ev_obs_sms *sms)
{
    char why[160] = "";
    size_t wl = 0;
    double est[EV_SCHED_COUNT] = {0};

    for (int q = 0; q < EV_SCHED_COUNT; q++) {
        if (sched[q].present && sched_applies(c, scheds, q)) {
            sms_fold(sms, sched[q].threads[0]);
            sms_fold(sms, sched[q].threads[1]);
        }
    }

    if (c->rows < 1 || c->cols < 1) {
        int w = snprintf(why, sizeof why, "no-op case (R = %lld, N = %lld)", (long long)c->rows,
                         (long long)c->cols);
        wl = w > 0 ? (size_t)w : 0;
    }
    for (int q = 0; q < EV_SCHED_COUNT && !(c->rows < 1 || c->cols < 1); q++) {
        const ev_obs_sched *j = &sched[q];
        const char *r = NULL;
        if (!sched_applies(c, scheds, q))
            continue; /* not declared, or short on rows it does not fit */
        if (!j->present) {
            if (q > 0 && q < EV_MODEL_SCHEDS &&
                ev_sched_rows((ev_sched)q, c->default_rows) == c->default_rows)
                continue; /* a rowsK with K = B is the default itself: implied */
            r = "missing";
        } else if (!j->n_med) {
            r = j->why;
        } else if (ev_round_estimate(j->med, j->n_med, &est[q])) {
            r = "a median is not positive and finite";
        }
        if (r) {
            int w = snprintf(why + wl, sizeof why - wl, "%s%s: %s", wl ? "; " : "",
                             ev_sched_name((ev_sched)q), r);
            if (w > 0)
                wl += (size_t)w < sizeof why - wl ? (size_t)w : sizeof why - wl - 1;
        }
    }
    if (wl) {
        ev_excluded *e = &ex[(*n_ex)++];
        memset(e, 0, sizeof *e);
        copy_name(e->op, sizeof e->op, c->op);
        copy_name(e->dtype, sizeof e->dtype, c->dtype);
        e->rows = c->rows;
        e->cols = c->cols;
        e->default_rows = c->default_rows;
        copy_name(e->reason, sizeof e->reason, why);
        return;
    }
    for (int q = 0; q < EV_SCHED_COUNT; q++) {
        if (!sched[q].present || !sched_applies(c, scheds, q))
            continue;
        ev_obs *o = &obs[(*n_obs)++];
        memset(o, 0, sizeof *o);
        copy_name(o->op, sizeof o->op, c->op);
        copy_name(o->dtype, sizeof o->dtype, c->dtype);
        o->rows = c->rows;
        o->cols = c->cols;
        o->default_rows = c->default_rows;
        o->sched = (ev_sched)q;
        o->median_us = est[q];
        o->role = c->holdout ? EV_ROLE_HOLDOUT : EV_ROLE_CALIBRATION;
    }
}

/* ---- the observations of a run's view (run_view.h) ---- */

void ev_view_clock(ev_view_job *j, int64_t mhz)
{
    if (!j->has_clock || mhz < j->clock_min)
        j->clock_min = mhz;
    if (!j->has_clock || mhz > j->clock_max)
        j->clock_max = mhz;
    j->has_clock = 1;
}

ev_status ev_view_hot_median(const ev_view_job *j, int *has, double *out)
{
    *has = 0;
    *out = 0;
    if (!j->outcome || strcmp(j->outcome, "completed") || !j->n_hot)
        return EV_OK;
    ev_status rc = ev_median(j->hot, j->n_hot, out);
    if (rc == EV_ENOMEM)
        return rc;
    *has = rc == EV_OK;
    return EV_OK;
}

/* A job's place: its case, then its index in the view (job_id order). */
typedef struct job_at {
    int64_t case_index;
    size_t i;
} job_at;

static int cmp_job_at(const void *a, const void *b)
{
    const job_at *x = a, *y = b;
    if (x->case_index != y->case_index)
        return x->case_index < y->case_index ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Adds job j of the view to its schedule's rounds in sched[], when it is
 * a main-phase original job of a declared schedule.  EV_ENOMEM. */
static ev_status observe_job(const ev_view_job *j, unsigned scheds, ev_obs_sched sched[EV_SCHED_COUNT])
{
    ev_sched s;
    ev_obs_job o;
    if (j->retry || !j->phase || !ev_is_phase(j->phase, EV_PHASE_MAIN) || !j->arm ||
        ev_sched_parse(j->arm, &s) || !(scheds & EV_SCHED_BIT(s)))
        return EV_OK;
    memset(&o, 0, sizeof o);
    o.round = j->round;
    o.outcome = j->outcome;
    o.has_binding = j->has_binding;
    o.threads = j->has_binding ? j->threads : 0;
    ev_status rc = ev_view_hot_median(j, &o.has_median, &o.median_us);
    if (!rc)
        ev_obs_add(&sched[s], &o);
    return rc;
}

ev_status ev_view_observe(const ev_run_view *v, ev_view_obs *o, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_obs_sms acc = {0, 0};
    job_at *order = NULL;
    size_t bytes;
    memset(o, 0, sizeof o[0]);
    o->sms = 1;
    if (ev_size_mul(v->n_cases + 1, EV_SCHED_COUNT * sizeof *o->obs, &bytes) ||
        !(o->obs = calloc(1, bytes)) || !(o->excluded = calloc(v->n_cases + 1, sizeof *o->excluded)) ||
        !(order = calloc(v->n_jobs + 1, sizeof *order))) {
        rc = ev_err_set(err, EV_ENOMEM, "observations: out of memory");
        goto out;
    }
    /* each case's jobs in job order, found in one pass over the sorted order */
    for (size_t i = 0; i < v->n_jobs; i++)
        order[i] = (job_at){v->jobs[i].case_index, i};
    if (v->n_jobs)
        qsort(order, v->n_jobs, sizeof *order, cmp_job_at);
    for (size_t k = 0, jx = 0; k < v->n_cases; k++) {
        const ev_view_case *c = &v->cases[k];
        ev_obs_case oc = {c->op, c->dtype, c->rows, c->cols, c->default_rows, c->holdout};
        ev_obs_sched sched[EV_SCHED_COUNT];
        memset(sched, 0, sizeof sched);
        while (jx < v->n_jobs && order[jx].case_index < c->case_index)
            jx++;
        for (; jx < v->n_jobs && order[jx].case_index == c->case_index; jx++)
            if ((rc = observe_job(&v->jobs[order[jx].i], v->scheds, sched))) {
                ev_err_set(err, rc, "observations: out of memory");
                goto out;
            }
        ev_obs_select(&oc, sched, v->scheds, o->obs, &o->n_obs, o->excluded, &o->n_excluded, &acc);
    }
    o->bound = acc.S != 0;
    if ((rc = ev_obs_sms_get(&acc, &o->sms, err)))
        goto out;
    if (!o->n_excluded) {
        free(o->excluded);
        o->excluded = NULL;
    }
out:
    free(order);
    if (rc)
        ev_view_obs_free(o);
    return rc;
}

ev_fit_input ev_view_fit_input(const ev_run_view *v, const ev_view_obs *o)
{
    ev_fit_input in;
    memset(&in, 0, sizeof in);
    in.obs = o->obs;
    in.n_obs = o->n_obs;
    in.excluded = o->excluded;
    in.n_excluded = o->n_excluded;
    in.sms = o->sms;
    in.threshold = v->threshold;
    in.scheds = v->scheds;
    return in;
}

void ev_view_obs_free(ev_view_obs *o)
{
    free(o->obs);
    free(o->excluded);
    memset(o, 0, sizeof *o);
    o->sms = 1;
}
