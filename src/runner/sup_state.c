/*
 * sup_state.c: the store's state of a run for --resume, and creating a
 * run and its planned jobs (sup_int.h).
 */
#include "sup_int.h"

#include "samples.h"
#include "stats.h"
#include "strs.h"

/* ---- store state ------------------------------------------------------ */

typedef struct load_ctx {
    sup *s;
    int64_t *bad; /* attempt ids with a failed validation */
    size_t n_bad, cap_bad;
    int64_t *dangling; /* attempt ids without a process row */
    size_t n_dang, cap_dang;
    ev_status oom;
    size_t next;     /* the plan index the next job row is expected at */
    int64_t *by_job; /* (job_id, index into s->js) pairs, sorted by job_id */
    size_t n_by_job;
} load_ctx;

/* Orders int64 values (and pairs by their first member). */
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Appends v to a growing array. */
static int push_i64(int64_t **v, size_t *n, size_t *cap, int64_t x)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        int64_t *p = realloc(*v, c * sizeof *p);
        if (!p)
            return -1;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

/* EV_Q_JOBS row -> jstate (plan order taken from the store). */
static ev_status on_job(void *ctx, const ev_row *r)
{
    load_ctx *l = ctx;
    sup *s = l->s;
    jstate *j;
    ev_job_rec jr;

    ev_row_job(r, &jr);
    /* Jobs were inserted in plan order, so the next row is almost always
     * the next planned job: looked up by position, by search only when not
     * (a protocol of many cases resumes in linear time). */
    if (l->next < s->n_js && !strcmp(s->js[l->next].pj.job_key, jr.job_key)) {
        s->js[l->next++].job_id = jr.job_id;
        return EV_OK;
    }
    for (size_t i = 0; i < s->n_js; i++)
        if (!strcmp(s->js[i].pj.job_key, jr.job_key)) {
            s->js[i].job_id = jr.job_id;
            return EV_OK;
        }
    /* A rescue job (not in the static plan). */
    j = realloc(s->js, (s->n_js + 1) * sizeof *s->js);
    if (!j)
        return EV_ENOMEM;
    s->js = j;
    j = &s->js[s->n_js++];
    memset(j, 0, sizeof *j);
    j->job_id = jr.job_id;
    snprintf(j->pj.job_key, sizeof j->pj.job_key, "%s", jr.job_key);
    ev_phase_parse(jr.phase, &j->pj.phase);
    j->pj.case_index = jr.case_index;
    snprintf(j->pj.arm, sizeof j->pj.arm, "%s", jr.arm);
    snprintf(j->pj.label, sizeof j->pj.label, "%s", jr.label);
    j->pj.round = ev_plan_label_round(j->pj.label);
    j->pj.plan_order = jr.plan_order;
    j->pj.retry_of = -1;
    return EV_OK;
}

/* EV_Q_VALIDATIONS row: remembers failed validations. */
static ev_status on_validation(void *ctx, const ev_row *r)
{
    load_ctx *l = ctx;
    ev_validation_rec v;

    ev_row_validation(r, &v);
    if (!v.passed && push_i64(&l->bad, &l->n_bad, &l->cap_bad, v.attempt_id))
        return EV_ENOMEM;
    return EV_OK;
}

/* EV_Q_ATTEMPTS row: the last attempt of each job and its outcome. */
static ev_status on_attempt(void *ctx, const ev_row *r)
{
    load_ctx *l = ctx;
    sup *s = l->s;
    ev_attempt_rec a;

    ev_row_attempt(r, &a);
    if (!a.facts.has_process && push_i64(&l->dangling, &l->n_dang, &l->cap_dang, a.attempt_id))
        return EV_ENOMEM;
    a.facts.validation_failed = a.facts.has_process && l->n_bad &&
                                bsearch(&a.attempt_id, l->bad, l->n_bad, sizeof *l->bad, cmp_i64) != NULL;
    const int64_t *hit = bsearch(&a.job_id, l->by_job, l->n_by_job, 2 * sizeof *l->by_job, cmp_i64);
    if (hit) {
        jstate *j = &s->js[hit[1]];
        j->last_attempt = a.attempt;
        j->last_attempt_id = a.attempt_id;
        j->has_outcome = 1;
        j->outcome = ev_outcome_derive(&a.facts);
        snprintf(j->skip_reason, sizeof j->skip_reason, "%s",
                 a.facts.skipped && a.skip_reason ? a.skip_reason : "");
    }
    return EV_OK;
}

/* What a resumed run's ceilings are read from: the last attempts of the
 * completed ceiling jobs, their hot samples' per-op times and in_span. */
typedef struct ceil_ctx {
    int64_t att[2]; /* attempt ids: ceiling, ceiling-l2 (0: none) */
    double *v[2];   /* their hot per-op times */
    size_t n[2], cap[2];
    int64_t span[2]; /* their bindings' in_span */
    int oom;
} ceil_ctx;

/* EV_Q_SAMPLES row: a hot sample of one of the ceiling attempts. */
static ev_status on_ceil_sample(void *ctx, const ev_row *r)
{
    ceil_ctx *c = ctx;
    ev_sample_rec x;
    double us;
    ev_row_sample(r, &x);
    for (int k = 0; k < 2; k++) {
        if (!c->att[k] || x.attempt_id != c->att[k] || !x.timing || strcmp(x.timing, "hot") ||
            x.elapsed_null || ev_per_op_us(x.elapsed_ms, x.replays, x.ops_per_graph, &us))
            continue;
        if (c->n[k] == c->cap[k]) {
            size_t cap = c->cap[k] ? 2 * c->cap[k] : 16;
            double *p = realloc(c->v[k], cap * sizeof *p);
            if (!p)
                return EV_ENOMEM;
            c->v[k] = p;
            c->cap[k] = cap;
        }
        c->v[k][c->n[k]++] = us;
    }
    return EV_OK;
}

/* EV_Q_BINDINGS row: a ceiling attempt's in_span. */
static ev_status on_ceil_binding(void *ctx, const ev_row *r)
{
    ceil_ctx *c = ctx;
    ev_binding_rec b;
    ev_row_binding(r, &b);
    for (int k = 0; k < 2; k++)
        if (c->att[k] && b.attempt_id == c->att[k])
            c->span[k] = b.in_span;
    return EV_OK;
}

/* The run's ceilings, when a resumed run measured them in an earlier
 * invocation (sample_rules.h: the main phase's own ceiling and ceiling-l2
 * jobs, completed; sup_ceiling_seen sets them as they complete). */
static ev_status sup_ceilings_load(sup *s, ev_err *err)
{
    ceil_ctx c;
    ev_status rc = EV_OK;
    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < s->n_js; i++) {
        const jstate *j = &s->js[i];
        int k = ev_is_arm(j->pj.arm, EV_ARM_CEILING) ? 0 : ev_is_arm(j->pj.arm, EV_ARM_CEILING_L2) ? 1 : -1;
        if (k >= 0 && j->pj.case_index < 0 && j->pj.phase == EV_PHASE_MAIN && j->pj.retry_of < 0 &&
            j->has_outcome && j->outcome == EV_OUT_COMPLETED)
            c.att[k] = j->last_attempt_id;
    }
    if (!c.att[0] && !c.att[1])
        return EV_OK;
    c.span[0] = c.span[1] = -1;
    if ((rc = ev_store_query(s->st, EV_Q_SAMPLES, s->run_id, on_ceil_sample, &c, err)) ||
        (rc = ev_store_query(s->st, EV_Q_BINDINGS, s->run_id, on_ceil_binding, &c, err)))
        goto out;
    for (int k = 0; k < 2; k++) {
        double med = NAN;
        if (c.att[k] && c.n[k] && ev_median(c.v[k], c.n[k], &med) != EV_OK)
            med = NAN;
        if (c.att[k])
            *(k ? &s->ceil_l2_bpus : &s->ceil_mem_bpus) = ev_rule_ceiling_bpus(c.span[k], med);
    }
out:
    if (rc == EV_ENOMEM)
        ev_err_set(err, rc, "out of memory");
    free(c.v[0]);
    free(c.v[1]);
    return rc;
}

/* Reads jobs and attempts from the store; writes the process row
 * (interrupted) of every attempt a killed supervisor left without one;
 * reads the run's ceilings when they were measured before. */
ev_status sup_load_state(sup *s, ev_err *err)
{
    load_ctx l;
    ev_status rc;

    memset(&l, 0, sizeof l);
    l.s = s;
    if ((rc = ev_store_query(s->st, EV_Q_JOBS, s->run_id, on_job, &l, err)) ||
        (rc = ev_store_query(s->st, EV_Q_VALIDATIONS, s->run_id, on_validation, &l, err)))
        goto out;
    /* Every job of this plan was inserted when the run began: one the store
     * lacks was planned by another version of the plan (a run begun in a
     * store of an older schema, plan.h). */
    for (size_t i = 0; i < s->plan.n; i++)
        if (!s->js[i].job_id) {
            rc = ev_err_set(err, EV_EUSAGE,
                            "--resume: the run's jobs are not this evident's plan (job %s is not among them: "
                            "the run began under an older store schema): finish it with the evident that "
                            "began it, or start a new run",
                            s->js[i].pj.job_key);
            goto out;
        }
    l.by_job = malloc((s->n_js ? s->n_js : 1) * 2 * sizeof *l.by_job);
    if (!l.by_job) {
        rc = ev_err_set(err, EV_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < s->n_js; i++) {
        l.by_job[2 * i] = s->js[i].job_id;
        l.by_job[2 * i + 1] = (int64_t)i;
    }
    l.n_by_job = s->n_js;
    qsort(l.by_job, l.n_by_job, 2 * sizeof *l.by_job, cmp_i64);
    if (l.n_bad)
        qsort(l.bad, l.n_bad, sizeof *l.bad, cmp_i64);
    if ((rc = ev_store_query(s->st, EV_Q_ATTEMPTS, s->run_id, on_attempt, &l, err)))
        goto out;
    for (size_t i = 0; i < l.n_dang; i++) {
        ev_process_row p;
        memset(&p, 0, sizeof p);
        p.pid = -1;
        p.interrupted = 1;
        p.records_ok = 0;
        p.protocol_error = "the supervisor stopped before this attempt ended";
        p.affinity = "";
        p.stderr_tail = "";
        p.ended_ns = wall_ns();
        if ((rc = ev_store_add_process(s->st, l.dangling[i], &p, err)))
            goto out;
    }
    rc = sup_ceilings_load(s, err);
out:
    free(l.bad);
    free(l.dangling);
    free(l.by_job);
    return rc;
}

/* ---- run creation ----------------------------------------------------- */

/* Inserts job pj (retry_of: the original's job id or 0).  OUT: *job_id. */
ev_status sup_add_job(sup *s, const ev_plan_job *pj, int64_t retry_of, int64_t *job_id, ev_err *err)
{
    ev_job_row jr;
    jr.job_key = pj->job_key;
    jr.phase = ev_phase_name(pj->phase);
    jr.case_index = pj->case_index;
    jr.arm = pj->arm;
    jr.label = pj->label;
    jr.retry_of = retry_of;
    jr.plan_order = pj->plan_order;
    return ev_store_add_job(s->st, s->run_id, &jr, job_id, err);
}

/* Records the run, its source snapshot, cases and planned jobs in one
 * transaction, before any measurement. */
ev_status sup_create_run(sup *s, ev_err *err)
{
    ev_snapshot snap;
    ev_run_row rr;
    char commit_s[64], ppath[300];
    const char *from;
    int dirty;
    ev_status rc;

    {
        /* evident's closure, and the protocol's kernel files under their
         * member names (ext_kernel.h), read from the protocol's directory */
        ev_strs names = EV_STRS_INIT, paths = EV_STRS_INIT;
        rc =
            ev_ext_closure(s->proto.kernels, s->proto.n_kernels, s->o->backend, s->proto_dir, &names, &paths);
        if (rc)
            rc = ev_err_set(err, rc, "snapshot: out of memory");
        else
            rc = ev_snapshot_take_with(s->o->source_root, (const char *const *)names.v,
                                       (const char *const *)paths.v, names.n, &snap, err);
        ev_strs_free(&names);
        ev_strs_free(&paths);
        if (rc)
            return rc;
    }
    /* the commit and dirty flag are evident's: a stamp names its closure's
     * files, not the protocol's kernels */
    ev_git_info_tree(s->o->source_root, snap.closure_hash, commit_s, &dirty, &from);
    memset(&rr, 0, sizeof rr);
    rr.protocol_id = s->proto_id;
    rr.protocol_bytes = s->bytes.data;
    rr.protocol_len = s->bytes.len;
    ev_ext_protocol_recorded(s->o->protocol_path, ppath, sizeof ppath);
    rr.protocol_path = ppath;
    rr.backend = s->o->backend;
    rr.seed = s->proto.seed;
    rr.git_commit = commit_s;
    rr.git_dirty = dirty;
    rr.source_tree_hash = snap.tree_hash;
    rr.created_ns = wall_ns();
    if ((rc = ev_store_begin(s->st, err)))
        goto out;
    if ((rc = ev_store_add_run(s->st, &rr, &s->run_id, err)))
        goto fail;
    for (size_t i = 0; i < snap.n; i++)
        if ((rc = ev_store_add_source(s->st, s->run_id, snap.files[i].path, snap.files[i].sha256,
                                      snap.files[i].bytes ? (void *)snap.files[i].bytes : (void *)"",
                                      snap.files[i].len, err)))
            goto fail;
    for (size_t i = 0; i < s->proto.n_cases; i++) {
        const ev_proto_case *c = &s->proto.cases[i];
        ev_case_row cr = {(int64_t)i, c->op, c->rows, c->cols, c->stride, c->dtype, c->default_rows, c->role};
        if ((rc = ev_store_add_case(s->st, s->run_id, &cr, err)))
            goto fail;
    }
    for (size_t i = 0; i < s->plan.n; i++)
        if ((rc = sup_add_job(s, &s->plan.jobs[i], 0, &s->js[i].job_id, err)))
            goto fail;
    rc = ev_store_commit(s->st, err);
    if (!rc)
        goto out;
fail:
    ev_store_rollback(s->st);
out:
    ev_snapshot_free(&snap);
    return rc;
}

/* EV_Q_RUN row: the protocol id and backend of the run being resumed. */
ev_status sup_on_run(void *ctx, const ev_row *r)
{
    run_ctx *c = ctx;
    ev_run_rec run;
    ev_row_run(r, &run);
    snprintf(c->protocol_id, sizeof c->protocol_id, "%s", run.protocol_id);
    snprintf(c->backend, sizeof c->backend, "%s", run.backend);
    return EV_OK;
}
ev_status sup_on_status(void *ctx, const ev_row *r)
{
    ev_run_result *res = ctx;
    ev_run_status_rec st;
    ev_row_run_status(r, &st);
    res->finished = 1;
    snprintf(res->status, sizeof res->status, "%s", st.status);
    snprintf(res->rescue_status, sizeof res->rescue_status, "%s", st.rescue_status ? st.rescue_status : "");
    return EV_OK;
}
ev_status sup_on_count(void *ctx, const ev_row *r)
{
    (void)r;
    (*(int64_t *)ctx)++;
    return EV_OK;
}
