/*
 * export_view.c: the exporter's view of the run (model/run_view.h), filled
 * once from the rows ex_load read and ex_derive ordered; model.json's
 * observations and validation.json's figures are computed from it.
 */
#include "export_int.h"

/* The protocol's decision threshold, `decision_threshold`, exactly as the
 * runner's parser reads it (its default 0.05 included), so the exporter,
 * the runner's policy phase and the verifier's refit use one value.  A
 * protocol the parser refuses (it could not have been run) falls back to
 * the top-level number, else 0.05; its schedules to EV_SCHEDS_DEFAULT. */
static void protocol_facts(const xload *L, double *threshold, unsigned *scheds)
{
    ev_protocol p;
    memset(&p, 0, sizeof p);
    *threshold = 0.05;
    *scheds = EV_SCHEDS_DEFAULT;
    if (!ev_protocol_parse(L->run.protocol ? L->run.protocol : "", L->run.protocol_len, &p, NULL)) {
        *threshold = p.decision_threshold;
        *scheds = p.model_schedules;
        ev_protocol_free(&p);
        return;
    }
    ev_protocol_free(&p);
    cJSON *tree = NULL;
    if (!ev_json_parse(L->run.protocol ? L->run.protocol : "", L->run.protocol_len, 0, &tree, NULL)) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(tree, "decision_threshold");
        if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
            *threshold = v->valuedouble;
    }
    cJSON_Delete(tree);
}

/* Fills j's last-attempt facts from attempt a: its binding, how its graph
 * was made, and its samples' values (appended to vals at *used). */
static void view_attempt(const xload *L, const xattempt *a, ev_view_job *j, double *vals, size_t *used)
{
    size_t lo, hi;
    ex_attempt_range(&L->bindings, a->attempt_id, &lo, &hi);
    j->has_binding = lo < hi;
    j->threads = j->has_binding ? ((const xbinding *)ex_vec_at(&L->bindings, lo))->threads : 0;
    if (L->store_version >= 3 && L->devices.n > 0) { /* how its graph was made */
        ex_attempt_range(&L->devices, a->attempt_id, &lo, &hi);
        cJSON *d = lo < hi ? cJSON_Parse(((const xdevice *)ex_vec_at(&L->devices, lo))->json) : NULL;
        ev_view_capture(j, d);
        cJSON_Delete(d);
    }
    ex_attempt_range(&L->samples, a->attempt_id, &lo, &hi);
    for (int hot = 0; hot < 2; hot++) {
        double *start = vals + *used;
        size_t n = 0;
        for (size_t k = lo; k < hi; k++) {
            const xsample *x = ex_vec_at(&L->samples, k);
            if (x->hot != hot)
                continue;
            vals[(*used)++] = x->per_op_us;
            n++;
            if (hot && x->has_clock)
                ev_view_clock(j, x->sm_clock_mhz);
        }
        *(hot ? &j->hot : &j->cold) = start;
        *(hot ? &j->n_hot : &j->n_cold) = n;
    }
}

ev_status ex_view_build(const xload *L, ex_view *xv, ev_err *err)
{
    memset(xv, 0, sizeof *xv);
    xv->cases = calloc(L->cases.n + 1, sizeof *xv->cases);
    xv->jobs = calloc(L->jobs.n + 1, sizeof *xv->jobs);
    xv->vals = calloc(L->samples.n + 1, sizeof *xv->vals);
    if (!xv->cases || !xv->jobs || !xv->vals) {
        ex_view_free(xv);
        return ev_err_set(err, EV_ENOMEM, "export: out of memory building the run's view");
    }
    for (size_t i = 0; i < L->cases.n; i++) {
        const xcase *c = ex_vec_at(&L->cases, i);
        xv->cases[i] = (ev_view_case){c->case_index,
                                      c->op,
                                      c->dtype,
                                      c->rows,
                                      c->cols,
                                      c->default_rows,
                                      ev_is_role(c->role, EV_ROLE_HOLDOUT)};
    }
    size_t used = 0;
    for (size_t i = 0; i < L->jobs.n; i++) {
        const xjob *x = ex_vec_at(&L->jobs, i);
        ev_view_job *j = &xv->jobs[i];
        j->job_key = x->job_key;
        j->phase = x->phase;
        j->arm = x->arm;
        j->round = ev_plan_label_round(x->label);
        j->case_index = x->has_case ? x->case_index : -1;
        j->retry = x->has_retry;
        j->outcome = ev_outcome_name(x->outcome);
        if (x->n_att)
            view_attempt(L, ex_vec_at(&L->atts, x->att0 + x->n_att - 1), j, xv->vals, &used);
    }
    xv->v.cases = xv->cases;
    xv->v.n_cases = L->cases.n;
    xv->v.jobs = xv->jobs;
    xv->v.n_jobs = L->jobs.n;
    xv->v.seed = L->run.seed;
    protocol_facts(L, &xv->v.threshold, &xv->v.scheds);
    return EV_OK;
}

void ex_view_free(ex_view *xv)
{
    free(xv->cases);
    free(xv->jobs);
    free(xv->vals);
    memset(xv, 0, sizeof *xv);
}
