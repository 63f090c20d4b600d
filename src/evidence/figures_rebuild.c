/*
 * figures_rebuild.c: a bundle's figures rebuilt from its raw members
 * (figures_rebuild.h), for evident compare and the tests.
 *
 * samples.csv is read in one pass: its rows are ordered by job_id, attempt,
 * timing and sample_index, so each job's hot (and cold) values of its last
 * attempt are one contiguous run of the hot (cold) array; a job whose rows
 * are not contiguous is a malformed bundle.
 */
#include "evidence/figures_rebuild.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "csv.h"
#include "json.h"
#include "evidence/figures.h"
#include "runner/plan.h"
#include "samples.h"

/* The index of column name in samples.csv (common/samples.h, the one
 * list of its columns); the name must be one of them. */
static size_t col(const char *name)
{
    size_t i = 0;
    while (i < ev_samples_ncols && strcmp(ev_samples_columns[i], name))
        i++;
    return i;
}

/* One job as read from validation.json, with where its values went. */
typedef struct rjob {
    int64_t job_id, last_attempt;
    int has_last;
    size_t hot0, cold0; /* first index in the hot/cold arrays */
    int seen_hot, seen_cold, done;
} rjob;

/* A growable array of doubles. */
typedef struct dvec {
    double *v;
    size_t n, cap;
} dvec;

/* Appends x.  EV_ENOMEM. */
static ev_status dvec_push(dvec *d, double x)
{
    if (ev_grow((void **)&d->v, &d->cap, d->n, sizeof *d->v))
        return EV_ENOMEM;
    d->v[d->n++] = x;
    return EV_OK;
}

/* The string at key of o, or NULL. */
static const char *str_at(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Index of the job with job_id id in js (sorted by job_id), or -1. */
static ptrdiff_t find_job(const rjob *js, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (js[mid].job_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && js[lo].job_id == id ? (ptrdiff_t)lo : -1;
}

/* Reads validation.json's jobs (sorted by job_id) into rj[] (the job's id
 * and last attempt) and fj[] (its key, phase, arm, round, outcome, case, retry,
 * and how its last attempt's graph was made), both as long as jobs.  The strings point into jobs.  EV_EFORMAT naming
 * the first job malformed or out of order. */
static ev_status read_jobs(const cJSON *jobs, rjob *rj, ev_view_job *fj, ev_err *err)
{
    size_t i = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "job_id");
        const cJSON *ci = cJSON_GetObjectItemCaseSensitive(j, "case_index");
        const cJSON *la = cJSON_GetObjectItemCaseSensitive(j, "last_attempt");
        const cJSON *ro = cJSON_GetObjectItemCaseSensitive(j, "retry_of");
        ev_view_job *f = &fj[i];
        f->job_key = str_at(j, "job_key");
        f->phase = str_at(j, "phase");
        f->arm = str_at(j, "arm");
        f->outcome = str_at(j, "outcome");
        const char *label = str_at(j, "label");
        if (!cJSON_IsNumber(id) || !f->job_key || !f->phase || !f->arm || !f->outcome || !label ||
            !(cJSON_IsNumber(ci) || cJSON_IsNull(ci)) || !(cJSON_IsNumber(la) || cJSON_IsNull(la)) ||
            !(cJSON_IsString(ro) || cJSON_IsNull(ro)) ||
            (i && (int64_t)id->valuedouble <= rj[i - 1].job_id)) {
            return ev_err_set(err, EV_EFORMAT,
                              "figures: validation.json: jobs[%zu] malformed or out of order", i);
        }
        f->round = ev_plan_label_round(label);
        f->case_index = cJSON_IsNumber(ci) ? (int64_t)ci->valuedouble : -1;
        f->retry = cJSON_IsString(ro);
        rj[i].job_id = (int64_t)id->valuedouble;
        rj[i].has_last = cJSON_IsNumber(la);
        rj[i].last_attempt = rj[i].has_last ? (int64_t)la->valuedouble : 0;
        if (rj[i].has_last) { /* how the last attempt's graph was made */
            const cJSON *a;
            cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(j, "attempts"))
            {
                const cJSON *no = cJSON_GetObjectItemCaseSensitive(a, "attempt");
                if (cJSON_IsNumber(no) && (int64_t)no->valuedouble == rj[i].last_attempt)
                    ev_view_capture(f, cJSON_GetObjectItemCaseSensitive(a, "device"));
            }
        }
        i++;
    }
    return EV_OK;
}

/* See figures_rebuild.h. */
ev_status ev_figures_rebuild(const ev_member *m, size_t n, cJSON **out, ev_err *err)
{
    ev_status rc = EV_OK;
    cJSON *val = NULL;
    ev_csv *csv = NULL;
    rjob *rj = NULL;
    ev_view_job *fj = NULL;
    dvec hot = {NULL, 0, 0}, cold = {NULL, 0, 0};
    const ev_member *vm = ev_member_find(m, n, "validation.json");
    const ev_member *sm = ev_member_find(m, n, "samples.csv");
    if (!vm || !sm)
        return ev_err_set(err, EV_EFORMAT, "figures: %s: missing", vm ? "samples.csv" : "validation.json");
    if ((rc = ev_member_json("validation.json", vm->data, vm->len, EV_JSON_CANONICAL, NULL, &val, err))) {
        ev_err_prefix(err, "figures: validation.json");
        return rc;
    }
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(val, "jobs");
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(val, "run");
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(run, "seed");
    if (!cJSON_IsArray(jobs) || !cJSON_IsNumber(seed)) {
        rc = ev_err_set(err, EV_EFORMAT, "figures: validation.json: jobs or run.seed missing");
        goto out;
    }
    size_t nj = (size_t)cJSON_GetArraySize(jobs);
    rj = calloc(nj + 1, sizeof *rj);
    fj = calloc(nj + 1, sizeof *fj);
    if (!rj || !fj) {
        rc = ev_err_set(err, EV_ENOMEM, "figures: out of memory");
        goto out;
    }
    if ((rc = read_jobs(jobs, rj, fj, err)))
        goto out;

    if ((rc = ev_csv_open(sm->data ? sm->data : "", sm->len, ev_samples_columns, ev_samples_ncols, NULL, &csv,
                          err))) {
        ev_err_prefix(err, "figures: samples.csv");
        goto out;
    }
    const size_t c_job = col("job_id"), c_att = col("attempt"), c_timing = col("timing"),
                 c_us = col("per_op_us"), c_clock = col("sm_clock_mhz");
    ptrdiff_t cur = -1;
    for (;;) {
        int have = 0;
        int64_t job_id, attempt;
        double v;
        if ((rc = ev_csv_next(csv, &have, err)))
            break;
        if (!have)
            break;
        if ((rc = ev_csv_get_i64(csv, c_job, &job_id, err)) ||
            (rc = ev_csv_get_i64(csv, c_att, &attempt, err)) || (rc = ev_csv_get_double(csv, c_us, &v, err)))
            break;
        ptrdiff_t k = find_job(rj, nj, job_id);
        if (k < 0) {
            rc = ev_err_set(err, EV_EFORMAT, "line %zu: job_id %lld is not in validation.json",
                            ev_csv_line(csv), (long long)job_id);
            break;
        }
        if (k != cur) {
            if (k < cur || rj[k].done) {
                rc = ev_err_set(err, EV_EFORMAT, "line %zu: job %lld's rows are not contiguous",
                                ev_csv_line(csv), (long long)job_id);
                break;
            }
            if (cur >= 0)
                rj[cur].done = 1;
            cur = k;
        }
        if (!rj[k].has_last || attempt != rj[k].last_attempt)
            continue;
        ev_view_job *f = &fj[k];
        int is_hot = !strcmp(ev_csv_field(csv, c_timing), "hot");
        if (is_hot) {
            if (!rj[k].seen_hot) {
                rj[k].hot0 = hot.n;
                rj[k].seen_hot = 1;
            } else if (rj[k].hot0 + f->n_hot != hot.n) {
                rc = ev_err_set(err, EV_EFORMAT, "line %zu: job %lld's hot rows are not contiguous",
                                ev_csv_line(csv), (long long)job_id);
                break;
            }
            if ((rc = dvec_push(&hot, v)))
                break;
            f->n_hot++;
            if (ev_csv_field(csv, c_clock)[0]) {
                int64_t clk;
                if ((rc = ev_csv_get_i64(csv, c_clock, &clk, err)))
                    break;
                ev_view_clock(f, clk);
            }
        } else {
            if (!rj[k].seen_cold) {
                rj[k].cold0 = cold.n;
                rj[k].seen_cold = 1;
            } else if (rj[k].cold0 + f->n_cold != cold.n) {
                rc = ev_err_set(err, EV_EFORMAT, "line %zu: job %lld's cold rows are not contiguous",
                                ev_csv_line(csv), (long long)job_id);
                break;
            }
            if ((rc = dvec_push(&cold, v)))
                break;
            f->n_cold++;
        }
    }
    if (rc) {
        if (rc == EV_ENOMEM)
            ev_err_set(err, rc, "figures: out of memory");
        else
            ev_err_prefix(err, "figures: samples.csv");
        goto out;
    }
    for (size_t k = 0; k < nj; k++) {
        fj[k].hot = hot.v ? hot.v + rj[k].hot0 : NULL;
        fj[k].cold = cold.v ? cold.v + rj[k].cold0 : NULL;
    }
    ev_run_view view;
    memset(&view, 0, sizeof view);
    view.jobs = fj;
    view.n_jobs = nj;
    view.seed = (int64_t)seed->valuedouble;
    rc = ev_figures_build(&view, out, err);
out:
    ev_csv_close(csv);
    free(rj);
    free(fj);
    free(hot.v);
    free(cold.v);
    cJSON_Delete(val);
    return rc;
}
