/*
 * export_load.c: loading a run: every named query of the store into plain
 * arrays, sorted and checked (export_int.h).  No SQL here.
 */
#include "export_int.h"

/* ---- small helpers ------------------------------------------------------- */

/* Appends one zeroed element to v.  OUT: *slot.  EV_ENOMEM (v unchanged). */
static ev_status vec_push(vec *v, void **slot)
{
    if (ev_grow(&v->v, &v->cap, v->n, v->size))
        return EV_ENOMEM;
    char *e = (char *)v->v + v->n * v->size;
    memset(e, 0, v->size);
    v->n++;
    *slot = e;
    return EV_OK;
}

/* Element i of v (no bounds check: callers index below v->n). */
void *ex_vec_at(const vec *v, size_t i)
{
    return (char *)v->v + i * v->size;
}

/* Records p as owned by L (freed with it).  EV_ENOMEM frees p itself. */
ev_status ex_own(xload *L, void *p)
{
    if (ev_grow((void **)&L->owned, &L->cap_owned, L->n_owned, sizeof *L->owned)) {
        free(p);
        return EV_ENOMEM;
    }
    L->owned[L->n_owned++] = p;
    return EV_OK;
}

/* Copies NUL-terminated s (NULL stays NULL) into *out, owned by L. */
static ev_status dup_str(xload *L, const char *s, char **out)
{
    if (!s) {
        *out = NULL;
        return EV_OK;
    }
    size_t n = strlen(s);
    char *p = malloc(n + 1);
    if (!p)
        return EV_ENOMEM;
    memcpy(p, s, n + 1);
    ev_status rc = ex_own(L, p);
    if (!rc)
        *out = p;
    return rc;
}

/* Copies a blob (NULL or len 0 gives a NULL pointer) into *out, owned by L. */
static ev_status dup_blob(xload *L, const void *b, size_t len, void **out)
{
    if (!b || !len) {
        *out = NULL;
        return EV_OK;
    }
    void *p = malloc(len);
    if (!p)
        return EV_ENOMEM;
    memcpy(p, b, len);
    ev_status rc = ex_own(L, p);
    if (!rc)
        *out = p;
    return rc;
}

/* Frees everything L holds; leaves it zeroed. */
void ex_xload_free(xload *L)
{
    for (size_t i = 0; i < L->n_owned; i++)
        free(L->owned[i]);
    free(L->owned);
    free(L->main_ix);
    vec *vs[] = {&L->invs,     &L->sources, &L->cases,   &L->jobs,   &L->atts,     &L->samples,
                 &L->bindings, &L->warmups, &L->cals,    &L->colds,  &L->flushes,  &L->vals,
                 &L->nodes,    &L->fits,    &L->devices, &L->checks, &L->opchecks, &L->opkept};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
        free(vs[i]->v);
    memset(L, 0, sizeof *L);
}

/* Index of the first element of v (sorted by its leading int64 attempt_id)
 * whose attempt_id is >= key. */
static size_t lower_bound(const vec *v, int64_t key)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (*(const int64_t *)ex_vec_at(v, mid) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The range [*b, *e) of v's rows of attempt_id. */
void ex_attempt_range(const vec *v, int64_t attempt_id, size_t *b, size_t *e)
{
    size_t lo = lower_bound(v, attempt_id), hi = lo;
    while (hi < v->n && *(const int64_t *)ex_vec_at(v, hi) == attempt_id)
        hi++;
    *b = lo;
    *e = hi;
}

/* Redacted copy of s (NULL stays NULL), owned by L.  OUT: *out. */
static ev_status redact_dup(xload *L, const char *s, char **out)
{
    if (!s) {
        *out = NULL;
        return EV_OK;
    }
    ev_buf b = EV_BUF_INIT;
    ev_status rc = ev_buf_puts(&b, "");
    if (!rc)
        rc = ev_bundle_redact(s, &b);
    if (rc) {
        ev_buf_free(&b);
        return rc;
    }
    char *p = ev_buf_steal(&b, NULL);
    rc = ex_own(L, p);
    if (!rc)
        *out = p;
    return rc;
}

/* ---- loading -------------------------------------------------------------- */

/* Replaces the row's text *s (NULL stays NULL) with a copy owned by L. */
static ev_status own_str(xload *L, const char **s)
{
    char *p;
    ev_status rc = dup_str(L, *s, &p);
    if (!rc)
        *s = p;
    return rc;
}

/* Replaces the row's text *s (NULL stays NULL) with a redacted copy owned
 * by L. */
static ev_status own_redacted(xload *L, const char **s)
{
    char *p;
    ev_status rc = redact_dup(L, *s, &p);
    if (!rc)
        *s = p;
    return rc;
}

/* Replaces the row's blob *b of len bytes with a copy owned by L (NULL
 * when empty, as dup_blob gives). */
static ev_status own_blob(xload *L, const void **b, size_t len)
{
    void *p;
    ev_status rc = dup_blob(L, *b, len, &p);
    if (!rc)
        *b = p;
    return rc;
}

/* Row callbacks: each reads one row of its named query into L through the
 * store's typed rows (store.h), then takes copies of the row's text. */

static ev_status on_run(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xrun *x = &L->run;
    ev_status rc;
    ev_row_run(r, x);
    if ((rc = own_str(L, &x->protocol_id)) || (rc = own_redacted(L, &x->protocol_path)) ||
        (rc = own_str(L, &x->backend)) || (rc = own_str(L, &x->git_commit)) ||
        (rc = own_str(L, &x->source_tree_hash)))
        return rc;
    return own_blob(L, &x->protocol, x->protocol_len);
}

static ev_status on_status(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    ev_run_status_rec g;
    ev_status rc;
    ev_row_run_status(r, &g);
    L->status.have = 1;
    L->status.finished_ns = g.finished_ns;
    L->status.status = g.status;
    L->status.rescue_status = g.rescue_status;
    if ((rc = own_str(L, &L->status.status)))
        return rc;
    return own_str(L, &L->status.rescue_status);
}

static ev_status on_inv(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xinv *x;
    ev_status rc = vec_push(&L->invs, (void **)&x);
    if (rc)
        return rc;
    ev_invocation_rec v;
    ev_row_invocation(r, &v);
    memset(x, 0, sizeof *x);
    x->invocation_id = v.invocation_id;
    x->started_ns = v.started_ns;
    x->resumed = v.resumed;
    x->host_hash = v.host_hash;
    x->profile_id = v.profile_id;
    x->env_json = v.env_json;
    if ((rc = own_str(L, &x->host_hash)) || (rc = own_str(L, &x->profile_id)))
        return rc;
    return own_str(L, &x->env_json);
}

/* EV_Q_SHARDS row: the shard its invocation ran (invocations are loaded
 * first, in invocation_id order). */
static ev_status on_shard(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    ev_shard_rec h;
    ev_row_shard(r, &h);
    for (size_t i = 0; i < L->invs.n; i++) {
        xinv *x = ex_vec_at(&L->invs, i);
        if (x->invocation_id != h.invocation_id)
            continue;
        x->has_shard = 1;
        x->shard_index = h.shard_index;
        x->shard_count = h.shard_count;
        if (x->shard_count > L->shard_count)
            L->shard_count = x->shard_count;
        x->shard_phase = h.phase;
        return own_str(L, &x->shard_phase);
    }
    return EV_OK;
}

static ev_status on_source(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xsource *x;
    ev_status rc = vec_push(&L->sources, (void **)&x);
    if (rc)
        return rc;
    ev_row_source(r, x);
    if ((rc = own_str(L, &x->path)) || (rc = own_str(L, &x->sha256)))
        return rc;
    return own_blob(L, &x->bytes, x->len);
}

static ev_status on_case(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xcase *x;
    ev_status rc = vec_push(&L->cases, (void **)&x);
    if (rc)
        return rc;
    ev_row_case(r, x);
    if ((rc = own_str(L, &x->op)) || (rc = own_str(L, &x->dtype)))
        return rc;
    return own_str(L, &x->role);
}

static ev_status on_job(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xjob *x;
    ev_job_rec g;
    ev_status rc = vec_push(&L->jobs, (void **)&x);
    if (rc)
        return rc;
    ev_row_job(r, &g);
    x->job_id = g.job_id;
    x->has_case = g.has_case;
    x->case_index = g.case_index;
    x->has_retry = g.has_retry;
    x->retry_of = g.retry_of;
    x->plan_order = g.plan_order;
    x->job_key = g.job_key;
    x->phase = g.phase;
    x->arm = g.arm;
    x->label = g.label;
    if ((rc = own_str(L, &x->job_key)) || (rc = own_str(L, &x->phase)) || (rc = own_str(L, &x->arm)))
        return rc;
    return own_str(L, &x->label);
}

static ev_status on_attempt(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xattempt *x;
    ev_attempt_rec g;
    ev_status rc = vec_push(&L->atts, (void **)&x);
    if (rc)
        return rc;
    ev_row_attempt(r, &g);
    x->attempt_id = g.attempt_id;
    x->job_id = g.job_id;
    x->attempt = g.attempt;
    x->invocation_id = g.invocation_id;
    x->started_ns = g.started_ns;
    x->facts = g.facts;
    if (!g.facts.has_process)
        return EV_OK;
    x->has_pid = g.has_pid;
    x->pid = g.pid;
    x->record_count = g.record_count;
    x->ended_ns = g.ended_ns;
    x->wall_ns = g.wall_ns;
    x->skip_reason = g.skip_reason;
    x->protocol_error = g.protocol_error;
    x->affinity = g.affinity;
    x->stderr_tail = g.stderr_tail;
    if ((rc = own_redacted(L, &x->skip_reason)) || (rc = own_redacted(L, &x->protocol_error)) ||
        (rc = own_str(L, &x->affinity)))
        return rc;
    return own_redacted(L, &x->stderr_tail);
}

static ev_status on_sample(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xsample *x;
    ev_sample_rec g;
    ev_status rc = vec_push(&L->samples, (void **)&x);
    if (rc)
        return rc;
    ev_row_sample(r, &g);
    x->attempt_id = g.attempt_id;
    x->hot = g.timing && !strcmp(g.timing, "hot");
    x->sample_index = g.sample_index;
    x->replays = g.replays;
    x->ops_per_graph = g.ops_per_graph;
    x->elapsed_ms = g.elapsed_ms;
    x->has_clock = g.has_clock;
    x->sm_clock_mhz = g.sm_clock_mhz;
    if (!g.timing || (strcmp(g.timing, "hot") && strcmp(g.timing, "cold")) || g.elapsed_null)
        return EV_EFORMAT;
    return EV_OK;
}

static ev_status on_binding(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xbinding *x;
    ev_status rc = vec_push(&L->bindings, (void **)&x);
    if (rc)
        return rc;
    ev_row_binding(r, x);
    if ((rc = own_str(L, &x->op)))
        return rc;
    return own_str(L, &x->dtype);
}

static ev_status on_warmup(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xwarmup *x;
    ev_status rc = vec_push(&L->warmups, (void **)&x);
    if (!rc)
        ev_row_warmup(r, x);
    return rc;
}

static ev_status on_cal(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xcal *x;
    ev_status rc = vec_push(&L->cals, (void **)&x);
    if (!rc)
        ev_row_calibration(r, x);
    return rc;
}

static ev_status on_cold(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xcold *x;
    ev_status rc = vec_push(&L->colds, (void **)&x);
    if (rc)
        return rc;
    ev_row_cold(r, x);
    return own_str(L, &x->name);
}

static ev_status on_flush(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xflush *x;
    ev_status rc = vec_push(&L->flushes, (void **)&x);
    if (!rc)
        ev_row_flush(r, x);
    return rc;
}

static ev_status on_device(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xdevice *x;
    ev_status rc = vec_push(&L->devices, (void **)&x);
    if (rc)
        return rc;
    ev_row_device(r, x);
    return own_str(L, &x->json);
}

static ev_status on_val(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xval *x;
    ev_validation_rec g;
    ev_status rc = vec_push(&L->vals, (void **)&x);
    if (rc)
        return rc;
    ev_row_validation(r, &g);
    x->attempt_id = g.attempt_id;
    x->passed = g.passed;
    x->mae_null = g.mae_null;
    x->max_abs_err = g.max_abs_err;
    x->bound_null = g.bound_null;
    x->bound = g.bound;
    x->mismatches = g.mismatches;
    x->has_output = g.has_output;
    x->output_len = g.output_len;
    x->stage = g.stage;
    x->sha256 = g.output_sha256;
    x->output = g.output;
    if ((rc = own_str(L, &x->stage)) || (rc = own_str(L, &x->sha256)))
        return rc;
    return own_blob(L, &x->output, x->output_len);
}

static ev_status on_check(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xcheck *x;
    ev_status rc = vec_push(&L->checks, (void **)&x);
    if (rc)
        return rc;
    ev_row_sample_check(r, &x->r);
    if ((rc = own_str(L, &x->r.output_sha256)))
        return rc;
    return own_blob(L, &x->r.output, x->r.output_len);
}

static ev_status on_opcheck(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xopcheck *x;
    ev_status rc = vec_push(&L->opchecks, (void **)&x);
    if (rc)
        return rc;
    ev_row_op_check(r, &x->r);
    if ((rc = own_str(L, &x->r.timing)))
        return rc;
    return own_str(L, &x->r.tag);
}

static ev_status on_opkept(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xopkept *x;
    ev_status rc = vec_push(&L->opkept, (void **)&x);
    if (rc)
        return rc;
    ev_row_op_kept(r, &x->r);
    if ((rc = own_str(L, &x->r.output_sha256)))
        return rc;
    return own_blob(L, &x->r.output, x->r.output_len);
}

static ev_status on_node(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xnode *x;
    ev_status rc = vec_push(&L->nodes, (void **)&x);
    if (rc)
        return rc;
    ev_row_graph_node(r, x);
    return own_str(L, &x->function);
}

static ev_status on_fit(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xfit *x;
    ev_status rc = vec_push(&L->fits, (void **)&x);
    if (rc)
        return rc;
    ev_row_fit(r, x);
    if ((rc = own_str(L, &x->model_json)))
        return rc;
    return own_str(L, &x->sha256);
}

/* Checks that v's rows are strictly ascending by the comparator cmp
 * (the store's documented order).  EV_EDB with err naming the query. */
static ev_status check_sorted(const vec *v, int (*cmp)(const void *, const void *), const char *what,
                              ev_err *err)
{
    for (size_t i = 1; i < v->n; i++)
        if (cmp(ex_vec_at(v, i - 1), ex_vec_at(v, i)) >= 0)
            return ev_err_set(err, EV_EDB, "export: %s rows out of the documented order at row %zu", what, i);
    return EV_OK;
}

int ex_cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}
/* Comparators for check_sorted: by attempt_id, then the row's ex_own key. */
static int cmp_att_only(const void *a, const void *b)
{
    return ex_cmp_i64(*(const int64_t *)a, *(const int64_t *)b);
}
static int cmp_sample(const void *a, const void *b)
{
    const xsample *x = a, *y = b;
    int c = ex_cmp_i64(x->attempt_id, y->attempt_id);
    if (!c)
        c = ex_cmp_i64(x->hot, y->hot); /* cold (0) before hot (1) */
    if (!c)
        c = ex_cmp_i64(x->sample_index, y->sample_index);
    return c;
}
static int cmp_cal(const void *a, const void *b)
{
    const xcal *x = a, *y = b;
    int c = ex_cmp_i64(x->attempt_id, y->attempt_id);
    return c ? c : ex_cmp_i64(x->step, y->step);
}
static int cmp_cold(const void *a, const void *b)
{
    const xcold *x = a, *y = b;
    int c = ex_cmp_i64(x->attempt_id, y->attempt_id);
    return c ? c : strcmp(x->name, y->name);
}
static int cmp_val(const void *a, const void *b)
{
    const xval *x = a, *y = b;
    int c = ex_cmp_i64(x->attempt_id, y->attempt_id);
    return c ? c : strcmp(x->stage, y->stage);
}
static int cmp_check(const void *a, const void *b)
{
    const ev_sample_check_rec *x = &((const xcheck *)a)->r, *y = &((const xcheck *)b)->r;
    int c = ex_cmp_i64(x->attempt_id, y->attempt_id);
    c = c ? c : ex_cmp_i64(x->input_set, y->input_set);
    return c ? c : ex_cmp_i64(x->after_sample, y->after_sample);
}
static int cmp_opcheck(const void *a, const void *b)
{
    const ev_op_check_rec *x = &((const xopcheck *)a)->r, *y = &((const xopcheck *)b)->r;
    int c = ex_cmp_i64(x->attempt_id, y->attempt_id);
    c = c ? c : strcmp(x->timing, y->timing);
    return c ? c : ex_cmp_i64(x->sample_index, y->sample_index);
}
static int cmp_node(const void *a, const void *b)
{
    const xnode *x = a, *y = b;
    int c = ex_cmp_i64(x->attempt_id, y->attempt_id);
    return c ? c : ex_cmp_i64(x->node_index, y->node_index);
}
static int cmp_job(const void *a, const void *b)
{
    return ex_cmp_i64(((const xjob *)a)->job_id, ((const xjob *)b)->job_id);
}
static int cmp_att(const void *a, const void *b)
{
    const xattempt *x = a, *y = b;
    int c = ex_cmp_i64(x->job_id, y->job_id);
    return c ? c : ex_cmp_i64(x->attempt, y->attempt);
}
static int cmp_case(const void *a, const void *b)
{
    return ex_cmp_i64(((const xcase *)a)->case_index, ((const xcase *)b)->case_index);
}

/* Loads every record of run_id into L (zeroed by the caller). */
ev_status ex_load(ev_store *s, int64_t run_id, xload *L, ev_err *err)
{
    ev_status rc;
    L->invs.size = sizeof(xinv);
    L->sources.size = sizeof(xsource);
    L->cases.size = sizeof(xcase);
    L->jobs.size = sizeof(xjob);
    L->atts.size = sizeof(xattempt);
    L->samples.size = sizeof(xsample);
    L->bindings.size = sizeof(xbinding);
    L->warmups.size = sizeof(xwarmup);
    L->cals.size = sizeof(xcal);
    L->colds.size = sizeof(xcold);
    L->flushes.size = sizeof(xflush);
    L->vals.size = sizeof(xval);
    L->nodes.size = sizeof(xnode);
    L->fits.size = sizeof(xfit);
    L->devices.size = sizeof(xdevice);
    L->checks.size = sizeof(xcheck);
    L->opchecks.size = sizeof(xopcheck);
    L->opkept.size = sizeof(xopkept);
    L->store_version = ev_store_version(s);

    static const struct {
        ev_query q;
        ev_row_fn fn;
        const char *name;
    } qs[] = {
        {EV_Q_RUN, on_run, "run"},
        {EV_Q_RUN_STATUS, on_status, "run status"},
        {EV_Q_INVOCATIONS, on_inv, "invocations"},
        {EV_Q_SHARDS, on_shard, "shards"},
        {EV_Q_SOURCES, on_source, "sources"},
        {EV_Q_CASES, on_case, "cases"},
        {EV_Q_JOBS, on_job, "jobs"},
        {EV_Q_ATTEMPTS, on_attempt, "attempts"},
        {EV_Q_SAMPLES, on_sample, "samples"},
        {EV_Q_BINDINGS, on_binding, "bindings"},
        {EV_Q_WARMUPS, on_warmup, "warm-ups"},
        {EV_Q_CALIBRATIONS, on_cal, "calibrations"},
        {EV_Q_COLD, on_cold, "cold timings"},
        {EV_Q_FLUSHES, on_flush, "flushes"},
        {EV_Q_VALIDATIONS, on_val, "validations"},
        {EV_Q_GRAPH_NODES, on_node, "graph nodes"},
        {EV_Q_FITS, on_fit, "fits"},
        {EV_Q_DEVICES, on_device, "device records"},
        {EV_Q_SAMPLE_CHECKS, on_check, "sample checks"},
        {EV_Q_OP_CHECKS, on_opcheck, "op checks"},
        {EV_Q_OP_KEPT, on_opkept, "kept outputs"},
    };
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        rc = ev_store_query(s, qs[i].q, run_id, qs[i].fn, L, err);
        if (rc) {
            if (rc == EV_ENOMEM)
                ev_err_set(err, rc, "export: out of memory reading %s", qs[i].name);
            else if (rc == EV_EFORMAT)
                ev_err_set(err, EV_EDB, "export: %s: a row breaks the schema", qs[i].name);
            else
                ev_err_prefix(err, "export: %s", qs[i].name);
            return rc == EV_EFORMAT ? EV_EDB : rc;
        }
        if (qs[i].q == EV_Q_RUN && !L->run.protocol_id)
            return ev_err_set(err, EV_ENOTFOUND, "export: run %" PRId64 " not found", run_id);
    }
    if ((rc = check_sorted(&L->cases, cmp_case, "cases", err)) ||
        (rc = check_sorted(&L->jobs, cmp_job, "jobs", err)) ||
        (rc = check_sorted(&L->atts, cmp_att, "attempts", err)) ||
        (rc = check_sorted(&L->samples, cmp_sample, "samples", err)) ||
        (rc = check_sorted(&L->bindings, cmp_att_only, "bindings", err)) ||
        (rc = check_sorted(&L->warmups, cmp_att_only, "warm-ups", err)) ||
        (rc = check_sorted(&L->cals, cmp_cal, "calibrations", err)) ||
        (rc = check_sorted(&L->colds, cmp_cold, "cold timings", err)) ||
        (rc = check_sorted(&L->flushes, cmp_att_only, "flushes", err)) ||
        (rc = check_sorted(&L->vals, cmp_val, "validations", err)) ||
        (rc = check_sorted(&L->nodes, cmp_node, "graph nodes", err)) ||
        (rc = check_sorted(&L->devices, cmp_att_only, "device records", err)) ||
        (rc = check_sorted(&L->checks, cmp_check, "sample checks", err)) ||
        (rc = check_sorted(&L->opchecks, cmp_opcheck, "op checks", err)) ||
        (rc = check_sorted(&L->opkept, cmp_att_only, "kept outputs", err)))
        return rc;
    return EV_OK;
}
