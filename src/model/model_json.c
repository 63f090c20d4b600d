/*
 * model_json.c: writes a fit as model.json.  Every double goes through
 * ev_json_add_double (exact %.17g text; NaN and Inf become null), keys come
 * in a fixed order and arrays in the fit's sorted order, so the same fit
 * gives the same bytes.  The keys are those of DESIGN.md ("Receipts and
 * bundle": model.json) and issue 3; docs/model.md describes each.
 */
#include "model_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

/*
 * Sticky-status builders: each does nothing when *rc is already set, and
 * sets *rc on failure, so the writer reads as a plain list of keys.
 */
static void put_d(cJSON *o, const char *k, double v, ev_status *rc)
{
    if (!*rc && !o)
        *rc = EV_ENOMEM;
    if (!*rc)
        *rc = ev_json_add_double(o, k, v);
}

/* Adds an integer (see put_d). */
static void put_i(cJSON *o, const char *k, int64_t v, ev_status *rc)
{
    if (!*rc && !o)
        *rc = EV_ENOMEM;
    if (!*rc)
        *rc = ev_json_add_i64(o, k, v);
}

/* Adds a string, or null for NULL (see put_d). */
static void put_s(cJSON *o, const char *k, const char *s, ev_status *rc)
{
    if (!*rc && !o)
        *rc = EV_ENOMEM;
    if (!*rc)
        *rc = ev_json_add_str(o, k, s);
}

/* Adds a boolean (see put_d). */
static void put_b(cJSON *o, const char *k, int v, ev_status *rc)
{
    if (!*rc && (!o || !cJSON_AddBoolToObject(o, k, v ? 1 : 0)))
        *rc = EV_ENOMEM;
}

/* Adds and returns a new object under k (NULL and *rc set on failure). */
static cJSON *put_obj(cJSON *o, const char *k, ev_status *rc)
{
    if (*rc)
        return NULL;
    cJSON *c = o ? cJSON_AddObjectToObject(o, k) : NULL;
    if (!c)
        *rc = EV_ENOMEM;
    return c;
}

/* Adds and returns a new array under k (NULL and *rc set on failure). */
static cJSON *put_arr(cJSON *o, const char *k, ev_status *rc)
{
    if (*rc)
        return NULL;
    cJSON *c = o ? cJSON_AddArrayToObject(o, k) : NULL;
    if (!c)
        *rc = EV_ENOMEM;
    return c;
}

/* Appends and returns a new object to array a. */
static cJSON *push_obj(cJSON *a, ev_status *rc)
{
    if (*rc)
        return NULL;
    cJSON *c = cJSON_CreateObject();
    if (!c || !a || !cJSON_AddItemToArray(a, c)) {
        cJSON_Delete(c);
        *rc = EV_ENOMEM;
        return NULL;
    }
    return c;
}

/* Adds null under k. */
static void put_null(cJSON *o, const char *k, ev_status *rc)
{
    if (!*rc && (!o || !cJSON_AddNullToObject(o, k)))
        *rc = EV_ENOMEM;
}

/* Adds {"a0", "aP", "aD"} under k. */
static void put_coef(cJSON *o, const char *k, const ev_coef *c, ev_status *rc)
{
    cJSON *x = put_obj(o, k, rc);
    put_d(x, "a0", c->a0, rc);
    put_d(x, "aP", c->aP, rc);
    put_d(x, "aD", c->aD, rc);
}

/* Adds the names of the coefficients in mask as an array under k. */
static void put_mask(cJSON *o, const char *k, unsigned mask, ev_status *rc)
{
    cJSON *a = put_arr(o, k, rc);
    for (int j = 0; j < 3 && !*rc; j++) {
        if (!(mask & (1u << j)))
            continue;
        cJSON *s = cJSON_CreateString(ev_coef_names[j]);
        if (!s || !cJSON_AddItemToArray(a, s)) {
            cJSON_Delete(s);
            *rc = EV_ENOMEM;
        }
    }
}

/* Adds a case's identity: op, rows, cols, dtype, default_rows. */
static void put_case_id(cJSON *o, const ev_fit_case *c, ev_status *rc)
{
    put_s(o, "op", c->op, rc);
    put_i(o, "rows", c->rows, rc);
    put_i(o, "cols", c->cols, rc);
    put_s(o, "dtype", c->dtype, rc);
    put_i(o, "default_rows", c->default_rows, rc);
}

/* Adds a geometry {rows, cols, default_rows, W}. */
static void put_geom(cJSON *o, const ev_geom *g, ev_status *rc)
{
    put_i(o, "rows", g->rows, rc);
    put_i(o, "cols", g->cols, rc);
    put_i(o, "default_rows", g->default_rows, rc);
    put_i(o, "W", g->width, rc);
}

/* Adds {"default": .., "rows1": .., "rows2": .., "rows4": ..} of v under
 * k, and "short" when scheds declares it (so a fit without it keeps the
 * bytes it had before short was a schedule). */
static void put_per_sched(cJSON *o, const char *k, const double *v, unsigned scheds, ev_status *rc)
{
    cJSON *x = put_obj(o, k, rc);
    for (int s = 0; s < EV_SCHED_COUNT; s++)
        if (s < EV_MODEL_SCHEDS || (scheds & EV_SCHED_BIT(s)))
            put_d(x, ev_sched_name((ev_sched)s), v[s], rc);
}

/* Adds the names of the schedules in scheds, in enum order, under k. */
static void put_scheds(cJSON *o, const char *k, unsigned scheds, ev_status *rc)
{
    cJSON *a = put_arr(o, k, rc);
    for (int s = 0; s < EV_SCHED_COUNT && !*rc; s++) {
        if (!(scheds & EV_SCHED_BIT(s)))
            continue;
        cJSON *n = cJSON_CreateString(ev_sched_name((ev_sched)s));
        if (!n || !cJSON_AddItemToArray(a, n)) {
            cJSON_Delete(n);
            *rc = EV_ENOMEM;
        }
    }
}

/* Adds scales, active subset, coefficients and every subset of a solve. */
static void put_nnls(cJSON *o, const ev_nnls *r, ev_status *rc)
{
    put_i(o, "n_train", (int64_t)r->n_rows, rc);
    cJSON *sc = put_obj(o, "scales", rc);
    put_d(sc, "one", r->scale[0], rc);
    put_d(sc, "P", r->scale[1], rc);
    put_d(sc, "D", r->scale[2], rc);
    put_coef(o, "coefficients", &r->coef, rc);
    put_mask(o, "active_subset", r->best, rc);
    cJSON *subs = put_arr(o, "subsets", rc);
    for (unsigned m = 0; m < EV_SUBSET_COUNT; m++) {
        const ev_subset_result *s = &r->subset[m];
        cJSON *x = push_obj(subs, rc);
        put_mask(x, "subset", m, rc);
        put_b(x, "feasible", s->status == EV_SUBSET_FEASIBLE, rc);
        put_b(x, "chosen", m == r->best, rc);
        if (s->status == EV_SUBSET_SINGULAR) {
            put_null(x, "objective", rc);
            put_null(x, "coefficients", rc);
            put_s(x, "rejected", "singular system", rc);
        } else {
            put_d(x, "objective", s->objective, rc);
            put_coef(x, "coefficients", &s->coef, rc);
            if (s->status == EV_SUBSET_NEGATIVE)
                put_s(x, "rejected", "negative coefficient", rc);
            else
                put_null(x, "rejected", rc);
        }
    }
}

/* Adds {value, op, rows, ..., schedule} of a residual maximum under k. */
static void put_maxres(cJSON *o, const char *k, const ev_fit *f, double v, size_t ci, ev_sched s,
                       ev_status *rc)
{
    cJSON *x = put_obj(o, k, rc);
    put_d(x, "value", v, rc);
    put_case_id(x, &f->cases[ci].pub, rc);
    put_s(x, "schedule", ev_sched_name(s), rc);
}

/* See model.h.  Appends model.json (pretty, LF, ending in a newline). */
ev_status ev_fit_to_json(const ev_fit *f, ev_buf *out, ev_err *err)
{
    ev_status rc = EV_OK;
    cJSON *root = cJSON_CreateObject();
    if (!root) {
        rc = EV_ENOMEM;
        goto out;
    }
    put_s(root, "model", "q = a0 + aP*P + aD*ceil(P/S)*b*W", &rc);
    put_s(root, "solver",
          "nnls: all 8 active subsets of {a0,aP,aD}, each by Householder QR of the "
          "weighted max-abs-scaled system; smallest feasible objective, ties to fewer "
          "coefficients then lower subset mask",
          &rc);
    put_d(root, "rank_tolerance", EV_NNLS_RANK_TOL, &rc);
    put_i(root, "sms", f->sms, &rc);
    put_d(root, "threshold", f->threshold, &rc);
    if (f->scheds != EV_SCHEDS_DEFAULT)
        put_scheds(root, "model_schedules", f->scheds, &rc);
    put_i(root, "n_observations", (int64_t)f->n_obs, &rc);
    put_coef(root, "coefficients", &f->full.coef, &rc);
    put_mask(root, "active_subset", f->full.best, &rc);
    cJSON *sc = put_obj(root, "scales", &rc);
    put_d(sc, "one", f->full.scale[0], &rc);
    put_d(sc, "P", f->full.scale[1], &rc);
    put_d(sc, "D", f->full.scale[2], &rc);
    cJSON *wts = put_arr(root, "weights", &rc);
    for (size_t g = 0; g < f->n_geoms; g++) {
        if (!f->geoms[g].calibration)
            continue;
        cJSON *x = push_obj(wts, &rc);
        put_geom(x, &f->geoms[g], &rc);
        put_i(x, "observations", (int64_t)f->geoms[g].n_fit, &rc);
        put_d(x, "weight_each", f->geom_weight[g], &rc);
    }
    cJSON *full = put_obj(root, "fit", &rc);
    if (full)
        put_nnls(full, &f->full, &rc);
    /* the issue lists subsets at the top level too */
    if (!rc) {
        cJSON *subs = cJSON_GetObjectItemCaseSensitive(full, "subsets");
        cJSON *dup = subs ? cJSON_Duplicate(subs, 1) : NULL;
        if (!dup || !cJSON_AddItemToObject(root, "subsets", dup)) {
            cJSON_Delete(dup);
            rc = EV_ENOMEM;
        }
    }

    cJSON *folds = put_arr(root, "folds", &rc);
    for (size_t i = 0; i < f->n_cal_geoms; i++) {
        const ev_fold *fd = &f->folds[i];
        cJSON *x = push_obj(folds, &rc);
        cJSON *h = put_obj(x, "held_out", &rc);
        put_geom(h, &f->geoms[fd->geom], &rc);
        if (x)
            put_nnls(x, &fd->nnls, &rc);
        cJSON *dec = put_arr(x, "decisions", &rc);
        for (size_t k = 0; k < f->n_cases; k++) {
            const ev_case_int *c = &f->cases[k];
            if (c->geom != fd->geom || !c->pub.has_logo)
                continue;
            cJSON *d = push_obj(dec, &rc);
            put_case_id(d, &c->pub, &rc); /* predictions: decisions[].predicted_logo */
            put_s(d, "selected", ev_sched_name(c->pub.logo.selected), &rc);
        }
    }

    cJSON *decs = put_arr(root, "decisions", &rc);
    for (size_t k = 0; k < f->n_cases; k++) {
        const ev_fit_case *c = &f->cases[k].pub;
        cJSON *d = push_obj(decs, &rc);
        put_case_id(d, c, &rc);
        put_s(d, "role", c->role == EV_ROLE_HOLDOUT ? "holdout" : "calibration", &rc);
        put_per_sched(d, "predicted", c->full.predicted, f->scheds, &rc);
        if (c->has_logo)
            put_per_sched(d, "predicted_logo", c->logo.predicted, f->scheds, &rc);
        else
            put_null(d, "predicted_logo", &rc);
        put_per_sched(d, "observed", c->observed, f->scheds, &rc);
        put_s(d, "selected", ev_sched_name(c->full.selected), &rc);
        put_i(d, "selected_rows_per_program", c->full.rows_per_program, &rc);
        put_s(d, "logo_selected", c->has_logo ? ev_sched_name(c->logo.selected) : NULL, &rc);
    }

    cJSON *ex = put_arr(root, "excluded", &rc);
    for (size_t i = 0; i < f->n_excluded; i++) {
        const ev_excluded *e = &f->excluded[i];
        cJSON *x = push_obj(ex, &rc);
        put_s(x, "op", e->op, &rc);
        put_i(x, "rows", e->rows, &rc);
        put_i(x, "cols", e->cols, &rc);
        put_s(x, "dtype", e->dtype, &rc);
        put_i(x, "default_rows", e->default_rows, &rc);
        put_s(x, "reason", e->reason, &rc);
    }

    put_d(root, "policy_geomean", f->policy_geomean, &rc);
    put_d(root, "policy_geomean_logo", f->policy_geomean_logo, &rc);

    cJSON *hr = put_obj(root, "holdout_regret", &rc);
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
        put_s(hr, "definition", def, &rc);
    }
    cJSON *hc = put_arr(hr, "cases", &rc);
    for (size_t k = 0; k < f->n_cases; k++) {
        const ev_fit_case *c = &f->cases[k].pub;
        if (c->role != EV_ROLE_HOLDOUT)
            continue;
        cJSON *x = push_obj(hc, &rc);
        put_case_id(x, c, &rc);
        put_s(x, "selected", ev_sched_name(c->full.selected), &rc);
        put_d(x, "regret", ev_model_holdout_ratio(c), &rc);
    }
    put_i(hr, "n", (int64_t)f->n_holdout, &rc);
    put_d(hr, "geomean", f->regret_geomean, &rc);
    put_d(hr, "max", f->regret_max, &rc);
    if (f->n_holdout == 0)
        put_s(hr, "reason", "no holdout cases", &rc);

    cJSON *res = put_obj(root, "residuals", &rc);
    put_s(res, "definition",
          "relative = (predicted - observed) / observed, absolute = predicted - "
          "observed (us); maxima by absolute value over fitted observations, "
          "signed",
          &rc);
    cJSON *ro = put_arr(res, "observations", &rc);
    for (size_t k = 0; k < f->n_cases; k++) {
        const ev_case_int *c = &f->cases[k];
        for (int s = 0; s < EV_SCHED_COUNT; s++) {
            size_t i = c->obs[s];
            if (i == SIZE_MAX)
                continue;
            const ev_obs_res *r = &f->res[i];
            double y = f->obs[i].median_us;
            cJSON *x = push_obj(ro, &rc);
            put_case_id(x, &c->pub, &rc);
            put_s(x, "schedule", ev_sched_name((ev_sched)s), &rc);
            put_b(x, "fitted", r->fitted, &rc);
            put_d(x, "observed", y, &rc);
            put_d(x, "predicted", r->pred_full, &rc);
            put_d(x, "relative", (r->pred_full - y) / y, &rc);
            put_d(x, "absolute", r->pred_full - y, &rc);
            put_d(x, "predicted_logo", r->pred_logo, &rc);
            put_d(x, "relative_logo", (r->pred_logo - y) / y, &rc);
            put_d(x, "absolute_logo", r->pred_logo - y, &rc);
        }
    }
    put_maxres(res, "max_relative", f, f->maxres_full.rel, f->maxres_full.rel_case, f->maxres_full.rel_sched,
               &rc);
    put_maxres(res, "max_absolute", f, f->maxres_full.abs, f->maxres_full.abs_case, f->maxres_full.abs_sched,
               &rc);
    put_maxres(res, "max_relative_logo", f, f->maxres_logo.rel, f->maxres_logo.rel_case,
               f->maxres_logo.rel_sched, &rc);
    put_maxres(res, "max_absolute_logo", f, f->maxres_logo.abs, f->maxres_logo.abs_case,
               f->maxres_logo.abs_sched, &rc);

    if (!rc)
        rc = ev_json_print(root, 1, out);
out:
    cJSON_Delete(root);
    if (rc)
        ev_err_set(err, rc, "model.json: %s", ev_strerror(rc));
    return rc;
}

ev_status ev_fit_failed_json(ev_status rc, const char *reason, ev_buf *out)
{
    cJSON *t = cJSON_CreateObject();
    ev_status prc;
    if (!t || !cJSON_AddStringToObject(t, "format", "evident-model/1") || !cJSON_AddNullToObject(t, "fit") ||
        !cJSON_AddStringToObject(t, "fit_reason", reason && reason[0] ? reason : ev_strerror(rc)) ||
        !cJSON_AddStringToObject(t, "status", ev_strerror(rc))) {
        cJSON_Delete(t);
        return EV_ENOMEM;
    }
    prc = ev_json_print(t, 1, out);
    cJSON_Delete(t);
    return prc;
}
