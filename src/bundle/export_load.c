/*
 * export_load.c: loading a run: every named query of the store into plain
 * arrays, sorted and checked (export_int.h).  No SQL here.
 */
#include "export_int.h"

/* ---- small helpers ------------------------------------------------------- */

/* Appends one zeroed element to v.  OUT: *slot.  EV_ENOMEM (v unchanged). */
static ev_status vec_push(vec *v, void **slot)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16, bytes;
        if (ev_size_mul(cap, v->size, &bytes))
            return EV_ENOMEM;
        void *p = realloc(v->v, bytes);
        if (!p)
            return EV_ENOMEM;
        v->v = p;
        v->cap = cap;
    }
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
    if (L->n_owned == L->cap_owned) {
        size_t cap = L->cap_owned ? L->cap_owned * 2 : 256;
        void **q = realloc(L->owned, cap * sizeof *q);
        if (!q) {
            free(p);
            return EV_ENOMEM;
        }
        L->owned = q;
        L->cap_owned = cap;
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
    vec *vs[] = {&L->invs,    &L->sources, &L->cases, &L->jobs,    &L->atts, &L->samples, &L->bindings,
                 &L->warmups, &L->cals,    &L->colds, &L->flushes, &L->vals, &L->nodes,   &L->fits};
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

/* Row callbacks: each copies one row of its named query into L. */

static ev_status on_run(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xrun *x = &L->run;
    size_t plen = 0;
    const void *p = ev_row_blob(r, 9, &plen);
    ev_status rc;
    x->run_id = ev_row_i64(r, 0);
    x->seed = ev_row_i64(r, 4);
    x->git_dirty = (int)ev_row_i64(r, 6);
    x->created_ns = ev_row_i64(r, 8);
    if ((rc = dup_str(L, ev_row_text(r, 1), &x->protocol_id)) ||
        (rc = redact_dup(L, ev_row_text(r, 2), &x->protocol_path)) ||
        (rc = dup_str(L, ev_row_text(r, 3), &x->backend)) ||
        (rc = dup_str(L, ev_row_text(r, 5), &x->git_commit)) ||
        (rc = dup_str(L, ev_row_text(r, 7), &x->source_tree_hash)) ||
        (rc = dup_blob(L, p, plen, &x->protocol)))
        return rc;
    x->protocol_len = plen;
    return EV_OK;
}

static ev_status on_status(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    ev_status rc;
    L->status.have = 1;
    L->status.finished_ns = ev_row_i64(r, 2);
    if ((rc = dup_str(L, ev_row_text(r, 0), &L->status.status)))
        return rc;
    return dup_str(L, ev_row_text(r, 1), &L->status.rescue_status);
}

static ev_status on_inv(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xinv *x;
    ev_status rc = vec_push(&L->invs, (void **)&x);
    if (rc)
        return rc;
    x->invocation_id = ev_row_i64(r, 0);
    x->started_ns = ev_row_i64(r, 1);
    x->resumed = (int)ev_row_i64(r, 2);
    if ((rc = dup_str(L, ev_row_text(r, 3), &x->host_hash)) ||
        (rc = dup_str(L, ev_row_text(r, 4), &x->profile_id)))
        return rc;
    return dup_str(L, ev_row_text(r, 5), &x->env_json);
}

/* EV_Q_SHARDS row: the shard its invocation ran (invocations are loaded
 * first, in invocation_id order). */
static ev_status on_shard(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    int64_t id = ev_row_i64(r, 0);
    for (size_t i = 0; i < L->invs.n; i++) {
        xinv *x = ex_vec_at(&L->invs, i);
        if (x->invocation_id != id)
            continue;
        x->has_shard = 1;
        x->shard_index = ev_row_i64(r, 1);
        x->shard_count = ev_row_i64(r, 2);
        if (x->shard_count > L->shard_count)
            L->shard_count = x->shard_count;
        return dup_str(L, ev_row_text(r, 3), &x->shard_phase);
    }
    return EV_OK;
}

static ev_status on_source(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xsource *x;
    size_t len = 0;
    const void *b = ev_row_blob(r, 2, &len);
    ev_status rc = vec_push(&L->sources, (void **)&x);
    if (rc || (rc = dup_str(L, ev_row_text(r, 0), &x->path)) ||
        (rc = dup_str(L, ev_row_text(r, 1), &x->sha256)) || (rc = dup_blob(L, b, len, &x->bytes)))
        return rc;
    x->len = len;
    return EV_OK;
}

static ev_status on_case(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xcase *x;
    ev_status rc = vec_push(&L->cases, (void **)&x);
    if (rc)
        return rc;
    x->case_index = ev_row_i64(r, 0);
    x->rows = ev_row_i64(r, 2);
    x->cols = ev_row_i64(r, 3);
    x->stride = ev_row_i64(r, 4);
    x->default_rows = ev_row_i64(r, 6);
    if ((rc = dup_str(L, ev_row_text(r, 1), &x->op)) || (rc = dup_str(L, ev_row_text(r, 5), &x->dtype)))
        return rc;
    return dup_str(L, ev_row_text(r, 7), &x->role);
}

static ev_status on_job(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xjob *x;
    ev_status rc = vec_push(&L->jobs, (void **)&x);
    if (rc)
        return rc;
    x->job_id = ev_row_i64(r, 0);
    x->has_case = !ev_row_is_null(r, 3);
    x->case_index = x->has_case ? ev_row_i64(r, 3) : -1;
    x->has_retry = !ev_row_is_null(r, 6);
    x->retry_of = x->has_retry ? ev_row_i64(r, 6) : 0;
    x->plan_order = ev_row_i64(r, 7);
    if ((rc = dup_str(L, ev_row_text(r, 1), &x->job_key)) ||
        (rc = dup_str(L, ev_row_text(r, 2), &x->phase)) || (rc = dup_str(L, ev_row_text(r, 4), &x->arm)))
        return rc;
    return dup_str(L, ev_row_text(r, 5), &x->label);
}

static ev_status on_attempt(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xattempt *x;
    ev_status rc = vec_push(&L->atts, (void **)&x);
    if (rc)
        return rc;
    x->attempt_id = ev_row_i64(r, 0);
    x->job_id = ev_row_i64(r, 1);
    x->attempt = ev_row_i64(r, 2);
    x->invocation_id = ev_row_i64(r, 3);
    x->started_ns = ev_row_i64(r, 4);
    x->has_process = !ev_row_is_null(r, 5) && ev_row_i64(r, 5) != 0;
    if (!x->has_process)
        return EV_OK;
    x->has_pid = !ev_row_is_null(r, 6);
    x->pid = ev_row_i64(r, 6);
    x->has_exit = !ev_row_is_null(r, 7);
    x->exit_code = ev_row_i64(r, 7);
    x->has_signal = !ev_row_is_null(r, 8);
    x->signal = ev_row_i64(r, 8);
    x->timed_out = ev_row_i64(r, 9) != 0;
    x->interrupted = ev_row_i64(r, 10) != 0;
    x->skipped = ev_row_i64(r, 11) != 0;
    x->record_count = ev_row_i64(r, 13);
    x->records_ok = ev_row_i64(r, 14) != 0;
    x->ended_ns = ev_row_i64(r, 18);
    x->wall_ns = ev_row_i64(r, 19);
    if ((rc = redact_dup(L, ev_row_text(r, 12), &x->skip_reason)) ||
        (rc = redact_dup(L, ev_row_text(r, 15), &x->protocol_error)) ||
        (rc = dup_str(L, ev_row_text(r, 16), &x->affinity)))
        return rc;
    return redact_dup(L, ev_row_text(r, 17), &x->stderr_tail);
}

static ev_status on_sample(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xsample *x;
    ev_status rc = vec_push(&L->samples, (void **)&x);
    if (rc)
        return rc;
    const char *timing = ev_row_text(r, 1);
    x->attempt_id = ev_row_i64(r, 0);
    x->hot = timing && !strcmp(timing, "hot");
    x->sample_index = ev_row_i64(r, 2);
    x->replays = ev_row_i64(r, 3);
    x->ops_per_graph = ev_row_i64(r, 4);
    x->elapsed_ms = ev_row_double(r, 5);
    x->has_clock = !ev_row_is_null(r, 6);
    x->sm_clock_mhz = ev_row_i64(r, 6);
    if (!timing || (strcmp(timing, "hot") && strcmp(timing, "cold")) || ev_row_is_null(r, 5))
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
    x->attempt_id = ev_row_i64(r, 0);
    x->rows = ev_row_i64(r, 3);
    x->cols = ev_row_i64(r, 4);
    x->stride = ev_row_i64(r, 5);
    x->in_span = ev_row_i64(r, 6);
    x->out_span = ev_row_i64(r, 7);
    x->in_align = ev_row_i64(r, 8);
    x->out_align = ev_row_i64(r, 9);
    x->threads = ev_row_i64(r, 10);
    if ((rc = dup_str(L, ev_row_text(r, 1), &x->op)))
        return rc;
    return dup_str(L, ev_row_text(r, 2), &x->dtype);
}

static ev_status on_warmup(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xwarmup *x;
    ev_status rc = vec_push(&L->warmups, (void **)&x);
    if (rc)
        return rc;
    x->attempt_id = ev_row_i64(r, 0);
    x->target_null = ev_row_is_null(r, 1);
    x->target_ms = ev_row_double(r, 1);
    x->elapsed_null = ev_row_is_null(r, 2);
    x->elapsed_ms = ev_row_double(r, 2);
    x->replays = ev_row_i64(r, 3);
    return EV_OK;
}

static ev_status on_cal(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xcal *x;
    ev_status rc = vec_push(&L->cals, (void **)&x);
    if (rc)
        return rc;
    x->attempt_id = ev_row_i64(r, 0);
    x->step = ev_row_i64(r, 1);
    x->replays = ev_row_i64(r, 2);
    x->elapsed_null = ev_row_is_null(r, 3);
    x->elapsed_ms = ev_row_double(r, 3);
    x->chosen = ev_row_i64(r, 4) != 0;
    x->target_null = ev_row_is_null(r, 5);
    x->target_ms = ev_row_double(r, 5);
    return EV_OK;
}

static ev_status on_cold(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xcold *x;
    ev_status rc = vec_push(&L->colds, (void **)&x);
    if (rc)
        return rc;
    x->attempt_id = ev_row_i64(r, 0);
    x->elapsed_ns = ev_row_i64(r, 2);
    return dup_str(L, ev_row_text(r, 1), &x->name);
}

static ev_status on_flush(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xflush *x;
    ev_status rc = vec_push(&L->flushes, (void **)&x);
    if (rc)
        return rc;
    x->attempt_id = ev_row_i64(r, 0);
    x->flush_bytes = ev_row_i64(r, 1);
    x->cache_bytes = ev_row_i64(r, 2);
    return EV_OK;
}

static ev_status on_val(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xval *x;
    size_t len = 0;
    const void *b = ev_row_blob(r, 7, &len);
    ev_status rc = vec_push(&L->vals, (void **)&x);
    if (rc)
        return rc;
    x->attempt_id = ev_row_i64(r, 0);
    x->passed = ev_row_i64(r, 2) != 0;
    x->mae_null = ev_row_is_null(r, 3);
    x->max_abs_err = ev_row_double(r, 3);
    x->bound_null = ev_row_is_null(r, 4);
    x->bound = ev_row_double(r, 4);
    x->mismatches = ev_row_i64(r, 5);
    x->has_output = !ev_row_is_null(r, 7);
    x->output_len = len;
    if ((rc = dup_str(L, ev_row_text(r, 1), &x->stage)) || (rc = dup_str(L, ev_row_text(r, 6), &x->sha256)))
        return rc;
    return dup_blob(L, b, len, &x->output);
}

static ev_status on_node(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xnode *x;
    ev_status rc = vec_push(&L->nodes, (void **)&x);
    if (rc)
        return rc;
    x->attempt_id = ev_row_i64(r, 0);
    x->node_index = ev_row_i64(r, 1);
    for (int k = 0; k < 3; k++) {
        x->grid[k] = ev_row_i64(r, 3 + k);
        x->block[k] = ev_row_i64(r, 6 + k);
    }
    return dup_str(L, ev_row_text(r, 2), &x->function);
}

static ev_status on_fit(void *ctx, const ev_row *r)
{
    xload *L = ctx;
    xfit *x;
    ev_status rc = vec_push(&L->fits, (void **)&x);
    if (rc)
        return rc;
    x->fit_id = ev_row_i64(r, 0);
    x->created_ns = ev_row_i64(r, 1);
    if ((rc = dup_str(L, ev_row_text(r, 2), &x->model_json)))
        return rc;
    return dup_str(L, ev_row_text(r, 3), &x->sha256);
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
        (rc = check_sorted(&L->nodes, cmp_node, "graph nodes", err)))
        return rc;
    return EV_OK;
}
