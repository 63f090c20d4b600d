/*
 * model_obs.c: the one rule that chooses the fit's observations from a
 * run's main-phase jobs (model.h, ev_obs_select).  The store loader
 * (model_store.c), the exporter (bundle/export_members.c) and the
 * verifier (verify/verify_refit.c) each read their own records into
 * ev_obs_sched per schedule and call it with the protocol's declared
 * schedules, so none can fit another model than the others.
 */
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "stats.h"

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
