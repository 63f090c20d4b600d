/*
 * model_json.c: writes a fit as model.json, on the shared builder
 * (jbuild.h).  Every double goes through ev_jb_num (exact %.17g text; NaN
 * and Inf become a bare null), keys come
 * in a fixed order and arrays in the fit's sorted order, so the same fit
 * gives the same bytes.  docs/bundle-format.md ("model.json") names the
 * keys and docs/model.md describes each.
 */
#include "model_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jbuild.h"

/* Adds {"a0", "aP", "aD"} under k. */
static void put_coef(ev_jb *b, cJSON *o, const char *k, const ev_coef *c)
{
    cJSON *x = ev_jb_obj(b, o, k);
    ev_jb_num(b, x, "a0", c->a0);
    ev_jb_num(b, x, "aP", c->aP);
    ev_jb_num(b, x, "aD", c->aD);
}

/* Adds the names of the coefficients in mask as an array under k. */
static void put_mask(ev_jb *b, cJSON *o, const char *k, unsigned mask)
{
    cJSON *a = ev_jb_arr(b, o, k);
    for (int j = 0; j < 3; j++) {
        if (!(mask & (1u << j)))
            continue;
        ev_jb_str(b, a, NULL, ev_coef_names[j]);
    }
}

/* Adds a case's identity: op, rows, cols, dtype, default_rows. */
static void put_case_id(ev_jb *b, cJSON *o, const ev_fit_case *c)
{
    ev_jb_str(b, o, "op", c->op);
    ev_jb_i64(b, o, "rows", c->rows);
    ev_jb_i64(b, o, "cols", c->cols);
    ev_jb_str(b, o, "dtype", c->dtype);
    ev_jb_i64(b, o, "default_rows", c->default_rows);
}

/* Adds a geometry {rows, cols, default_rows, W}. */
static void put_geom(ev_jb *b, cJSON *o, const ev_geom *g)
{
    ev_jb_i64(b, o, "rows", g->rows);
    ev_jb_i64(b, o, "cols", g->cols);
    ev_jb_i64(b, o, "default_rows", g->default_rows);
    ev_jb_i64(b, o, "W", g->width);
}

/* Adds {"default": .., "rows1": .., "rows2": .., "rows4": ..} of v under
 * k, and "short" when scheds declares it (so a fit without it keeps the
 * bytes it had before short was a schedule). */
static void put_per_sched(ev_jb *b, cJSON *o, const char *k, const double *v, unsigned scheds)
{
    cJSON *x = ev_jb_obj(b, o, k);
    for (int s = 0; s < EV_SCHED_COUNT; s++)
        if (s < EV_MODEL_SCHEDS || (scheds & EV_SCHED_BIT(s)))
            ev_jb_num(b, x, ev_sched_name((ev_sched)s), v[s]);
}

/* Adds the names of the schedules in scheds, in enum order, under k. */
static void put_scheds(ev_jb *b, cJSON *o, const char *k, unsigned scheds)
{
    cJSON *a = ev_jb_arr(b, o, k);
    for (int s = 0; s < EV_SCHED_COUNT; s++) {
        if (!(scheds & EV_SCHED_BIT(s)))
            continue;
        ev_jb_str(b, a, NULL, ev_sched_name((ev_sched)s));
    }
}

/* Adds scales, active subset, coefficients and every subset of a solve. */
static void put_nnls(ev_jb *b, cJSON *o, const ev_nnls *r)
{
    ev_jb_i64(b, o, "n_train", (int64_t)r->n_rows);
    cJSON *sc = ev_jb_obj(b, o, "scales");
    ev_jb_num(b, sc, "one", r->scale[0]);
    ev_jb_num(b, sc, "P", r->scale[1]);
    ev_jb_num(b, sc, "D", r->scale[2]);
    put_coef(b, o, "coefficients", &r->coef);
    put_mask(b, o, "active_subset", r->best);
    cJSON *subs = ev_jb_arr(b, o, "subsets");
    for (unsigned m = 0; m < EV_SUBSET_COUNT; m++) {
        const ev_subset_result *s = &r->subset[m];
        cJSON *x = ev_jb_obj(b, subs, NULL);
        put_mask(b, x, "subset", m);
        ev_jb_bool(b, x, "feasible", s->status == EV_SUBSET_FEASIBLE);
        ev_jb_bool(b, x, "chosen", m == r->best);
        if (s->status == EV_SUBSET_SINGULAR) {
            ev_jb_null(b, x, "objective");
            ev_jb_null(b, x, "coefficients");
            ev_jb_str(b, x, "rejected", "singular system");
        } else {
            ev_jb_num(b, x, "objective", s->objective);
            put_coef(b, x, "coefficients", &s->coef);
            if (s->status == EV_SUBSET_NEGATIVE)
                ev_jb_str(b, x, "rejected", "negative coefficient");
            else
                ev_jb_null(b, x, "rejected");
        }
    }
}

/* Adds {value, op, rows, ..., schedule} of a residual maximum under k. */
static void put_maxres(ev_jb *b, cJSON *o, const char *k, const ev_fit *f, double v, size_t ci, ev_sched s)
{
    cJSON *x = ev_jb_obj(b, o, k);
    ev_jb_num(b, x, "value", v);
    put_case_id(b, x, &f->cases[ci].pub);
    ev_jb_str(b, x, "schedule", ev_sched_name(s));
}

/* Adds "folds": per calibration geometry left out, its fit and the
 * decisions of its cases. */
static void put_folds(ev_jb *b, cJSON *root, const ev_fit *f)
{
    cJSON *folds = ev_jb_arr(b, root, "folds");
    for (size_t i = 0; i < f->n_cal_geoms; i++) {
        const ev_fold *fd = &f->folds[i];
        cJSON *x = ev_jb_obj(b, folds, NULL);
        cJSON *h = ev_jb_obj(b, x, "held_out");
        put_geom(b, h, &f->geoms[fd->geom]);
        if (x)
            put_nnls(b, x, &fd->nnls);
        cJSON *dec = ev_jb_arr(b, x, "decisions");
        for (size_t k = 0; k < f->n_cases; k++) {
            const ev_case_int *c = &f->cases[k];
            if (c->geom != fd->geom || !c->pub.has_logo)
                continue;
            cJSON *d = ev_jb_obj(b, dec, NULL);
            put_case_id(b, d, &c->pub); /* predictions: decisions[].predicted_logo */
            ev_jb_str(b, d, "selected", ev_sched_name(c->pub.logo.selected));
        }
    }
}

/* Adds "holdout_regret": its definition over the model's schedules, each
 * holdout case's regret, their geometric mean and maximum. */
static void put_holdout_regret(ev_jb *b, cJSON *root, const ev_fit *f)
{
    cJSON *hr = ev_jb_obj(b, root, "holdout_regret");
    {
        /* "default, rows1, rows2" for the default set: today's bytes */
        char def[160] = "observed selected / min observed of ";
        size_t l = strlen(def);
        for (int s = 0, first = 1; s < EV_SCHED_COUNT; s++) {
            if (!(f->scheds & EV_SCHED_BIT(s)))
                continue;
            int w = snprintf(def + l, sizeof def - l, "%s%s", first ? "" : ", ", ev_sched_name((ev_sched)s));
            l += w > 0 && (size_t)w < sizeof def - l ? (size_t)w : 0;
            first = 0;
        }
        snprintf(def + l, sizeof def - l, "; plain geometric mean and maximum over holdout cases");
        ev_jb_str(b, hr, "definition", def);
    }
    cJSON *hc = ev_jb_arr(b, hr, "cases");
    for (size_t k = 0; k < f->n_cases; k++) {
        const ev_fit_case *c = &f->cases[k].pub;
        if (c->role != EV_ROLE_HOLDOUT)
            continue;
        cJSON *x = ev_jb_obj(b, hc, NULL);
        put_case_id(b, x, c);
        ev_jb_str(b, x, "selected", ev_sched_name(c->full.selected));
        ev_jb_num(b, x, "regret", ev_model_holdout_ratio(c));
    }
    ev_jb_i64(b, hr, "n", (int64_t)f->n_holdout);
    ev_jb_num(b, hr, "geomean", f->regret_geomean);
    ev_jb_num(b, hr, "max", f->regret_max);
    if (f->n_holdout == 0)
        ev_jb_str(b, hr, "reason", "no holdout cases");
}

/* Adds "residuals": per observation, full fit and leave-one-geometry-out,
 * and their signed maxima. */
static void put_residuals(ev_jb *b, cJSON *root, const ev_fit *f)
{
    cJSON *res = ev_jb_obj(b, root, "residuals");
    ev_jb_str(b, res, "definition",
              "relative = (predicted - observed) / observed, absolute = predicted - "
              "observed (us); maxima by absolute value over fitted observations, "
              "signed");
    cJSON *ro = ev_jb_arr(b, res, "observations");
    for (size_t k = 0; k < f->n_cases; k++) {
        const ev_case_int *c = &f->cases[k];
        for (int s = 0; s < EV_SCHED_COUNT; s++) {
            size_t i = c->obs[s];
            if (i == SIZE_MAX)
                continue;
            const ev_obs_res *r = &f->res[i];
            double y = f->obs[i].median_us;
            cJSON *x = ev_jb_obj(b, ro, NULL);
            put_case_id(b, x, &c->pub);
            ev_jb_str(b, x, "schedule", ev_sched_name((ev_sched)s));
            ev_jb_bool(b, x, "fitted", r->fitted);
            ev_jb_num(b, x, "observed", y);
            ev_jb_num(b, x, "predicted", r->pred_full);
            ev_jb_num(b, x, "relative", (r->pred_full - y) / y);
            ev_jb_num(b, x, "absolute", r->pred_full - y);
            ev_jb_num(b, x, "predicted_logo", r->pred_logo);
            ev_jb_num(b, x, "relative_logo", (r->pred_logo - y) / y);
            ev_jb_num(b, x, "absolute_logo", r->pred_logo - y);
        }
    }
    put_maxres(b, res, "max_relative", f, f->maxres_full.rel, f->maxres_full.rel_case,
               f->maxres_full.rel_sched);
    put_maxres(b, res, "max_absolute", f, f->maxres_full.abs, f->maxres_full.abs_case,
               f->maxres_full.abs_sched);
    put_maxres(b, res, "max_relative_logo", f, f->maxres_logo.rel, f->maxres_logo.rel_case,
               f->maxres_logo.rel_sched);
    put_maxres(b, res, "max_absolute_logo", f, f->maxres_logo.abs, f->maxres_logo.abs_case,
               f->maxres_logo.abs_sched);
}

/* See model.h.  Appends model.json (pretty, LF, ending in a newline). */
ev_status ev_fit_to_json(const ev_fit *f, ev_buf *out, ev_err *err)
{
    ev_jb jb = {EV_OK}, *b = &jb;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        jb.rc = EV_ENOMEM;
    ev_jb_str(b, root, "model", "q = a0 + aP*P + aD*ceil(P/S)*b*W");
    ev_jb_str(b, root, "solver",
              "nnls: all 8 active subsets of {a0,aP,aD}, each by Householder QR of the "
              "weighted max-abs-scaled system; smallest feasible objective, ties to fewer "
              "coefficients then lower subset mask");
    ev_jb_num(b, root, "rank_tolerance", EV_NNLS_RANK_TOL);
    ev_jb_i64(b, root, "sms", f->sms);
    ev_jb_num(b, root, "threshold", f->threshold);
    if (f->scheds != EV_SCHEDS_DEFAULT)
        put_scheds(b, root, "model_schedules", f->scheds);
    ev_jb_i64(b, root, "n_observations", (int64_t)f->n_obs);
    put_coef(b, root, "coefficients", &f->full.coef);
    put_mask(b, root, "active_subset", f->full.best);
    cJSON *sc = ev_jb_obj(b, root, "scales");
    ev_jb_num(b, sc, "one", f->full.scale[0]);
    ev_jb_num(b, sc, "P", f->full.scale[1]);
    ev_jb_num(b, sc, "D", f->full.scale[2]);
    cJSON *wts = ev_jb_arr(b, root, "weights");
    for (size_t g = 0; g < f->n_geoms; g++) {
        if (!f->geoms[g].calibration)
            continue;
        cJSON *x = ev_jb_obj(b, wts, NULL);
        put_geom(b, x, &f->geoms[g]);
        ev_jb_i64(b, x, "observations", (int64_t)f->geoms[g].n_fit);
        ev_jb_num(b, x, "weight_each", f->geom_weight[g]);
    }
    cJSON *full = ev_jb_obj(b, root, "fit");
    put_nnls(b, full, &f->full);
    /* the subsets at the top level too (docs/bundle-format.md, "model.json") */
    if (!b->rc)
        ev_jb_put(b, root, "subsets", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(full, "subsets"), 1));

    put_folds(b, root, f);

    cJSON *decs = ev_jb_arr(b, root, "decisions");
    for (size_t k = 0; k < f->n_cases; k++) {
        const ev_fit_case *c = &f->cases[k].pub;
        cJSON *d = ev_jb_obj(b, decs, NULL);
        put_case_id(b, d, c);
        ev_jb_str(b, d, "role", ev_role_name(c->role));
        put_per_sched(b, d, "predicted", c->full.predicted, f->scheds);
        if (c->has_logo)
            put_per_sched(b, d, "predicted_logo", c->logo.predicted, f->scheds);
        else
            ev_jb_null(b, d, "predicted_logo");
        put_per_sched(b, d, "observed", c->observed, f->scheds);
        ev_jb_str(b, d, "selected", ev_sched_name(c->full.selected));
        ev_jb_i64(b, d, "selected_rows_per_program", c->full.rows_per_program);
        ev_jb_str(b, d, "logo_selected", c->has_logo ? ev_sched_name(c->logo.selected) : NULL);
    }

    cJSON *ex = ev_jb_arr(b, root, "excluded");
    for (size_t i = 0; i < f->n_excluded; i++) {
        const ev_excluded *e = &f->excluded[i];
        cJSON *x = ev_jb_obj(b, ex, NULL);
        ev_jb_str(b, x, "op", e->op);
        ev_jb_i64(b, x, "rows", e->rows);
        ev_jb_i64(b, x, "cols", e->cols);
        ev_jb_str(b, x, "dtype", e->dtype);
        ev_jb_i64(b, x, "default_rows", e->default_rows);
        ev_jb_str(b, x, "reason", e->reason);
    }

    ev_jb_num(b, root, "policy_geomean", f->policy_geomean);
    ev_jb_num(b, root, "policy_geomean_logo", f->policy_geomean_logo);

    put_holdout_regret(b, root, f);

    put_residuals(b, root, f);

    ev_status rc = ev_jb_finish(b, root, out);
    if (rc)
        ev_err_set(err, rc, "model.json: %s", ev_strerror(rc));
    return rc;
}

/* See model.h. */
ev_status ev_fit_failed_json(ev_status rc, const char *reason, ev_buf *out)
{
    ev_jb jb = {EV_OK}, *b = &jb;
    cJSON *t = cJSON_CreateObject();
    if (!t)
        jb.rc = EV_ENOMEM;
    ev_jb_str(b, t, "format", "evident-model/1");
    ev_jb_null(b, t, "fit");
    ev_jb_str(b, t, "fit_reason", reason && reason[0] ? reason : ev_strerror(rc));
    ev_jb_str(b, t, "status", ev_strerror(rc));
    return ev_jb_finish(b, t, out);
}
