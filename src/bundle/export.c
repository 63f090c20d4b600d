/*
 * export.c: builds delivery.zip's members from the store.
 *
 * Three stages: load (every named query of the run into plain arrays; no
 * SQL here), derive (outcomes via ev_outcome_derive, per-op times, medians
 * via ev_median, drift, the model refit via ev_model_fit), and write (each
 * member into an ev_buf, exactly as docs/bundle-format.md says; then
 * report.html from the other members, then receipts.json over all of them).
 * Nothing here depends on the clock, the locale, the time zone or the host.
 */
#include "bundle/export.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "csv.h"
#include "json.h"
#include "names.h"
#include "sha256.h"
#include "stats.h"
#include "bundle/figures.h"
#include "bundle/jbuild.h"
#include "bundle/projections.h"
#include "bundle/report.h"
#include "bundle/zipwrite.h"
#include "model/model.h"
#include "runner/plan.h"
#include "runner/protocol.h"
#include "runner/snapshot.h"
#include "store/outcome.h"

#define MAX_EXACT_INT (INT64_C(1) << 53)

/* ---- loaded records ------------------------------------------------------ */

typedef struct xrun {
    int64_t run_id, seed, created_ns;
    char *protocol_id, *protocol_path, *backend, *git_commit, *source_tree_hash;
    int git_dirty;
    void *protocol;
    size_t protocol_len;
} xrun;

typedef struct xstatus {
    int have;
    char *status, *rescue_status;
    int64_t finished_ns;
} xstatus;

typedef struct xinv {
    int64_t invocation_id, started_ns;
    int resumed;
    char *host_hash, *profile_id, *env_json; /* profile/env NULL: no environment row */
} xinv;

typedef struct xsource {
    char *path, *sha256;
    void *bytes;
    size_t len;
} xsource;

typedef struct xcase {
    int64_t case_index, rows, cols, stride, default_rows;
    char *op, *dtype, *role;
} xcase;

typedef struct xattempt {
    int64_t attempt_id, job_id, attempt, invocation_id, started_ns;
    int has_process;
    int has_pid;
    int64_t pid;
    int has_exit;
    int64_t exit_code;
    int has_signal;
    int64_t signal;
    int timed_out, interrupted, skipped, records_ok;
    int64_t record_count, ended_ns, wall_ns;
    char *skip_reason, *protocol_error, *affinity, *stderr_tail;
    ev_outcome outcome; /* derived */
} xattempt;

typedef struct xjob {
    int64_t job_id, case_index, retry_of, plan_order;
    int has_case, has_retry;
    char *job_key, *phase, *arm, *label;
    /* derived */
    size_t att0, n_att;      /* range in the attempts array */
    const xcase *c;          /* NULL for reference arms */
    const struct xjob *orig; /* the job retried, or NULL */
    ev_outcome outcome;
    int has_median, has_cold_median;
    double median_us, cold_median_us;
    const char *median_reason, *cold_reason;
    int64_t hot_n;
} xjob;

/* Per-attempt child rows: attempt_id first, so one lower-bound serves all. */
typedef struct xsample {
    int64_t attempt_id, sample_index, replays, ops_per_graph, sm_clock_mhz;
    int hot, has_clock;
    double elapsed_ms, per_op_us;
} xsample;

typedef struct xbinding {
    int64_t attempt_id;
    char *op, *dtype;
    int64_t rows, cols, stride, in_span, out_span, in_align, out_align, threads;
} xbinding;

typedef struct xwarmup {
    int64_t attempt_id, replays;
    double target_ms, elapsed_ms;
    int target_null, elapsed_null;
} xwarmup;

typedef struct xcal {
    int64_t attempt_id, step, replays;
    double elapsed_ms, target_ms;
    int elapsed_null, target_null, chosen;
} xcal;

typedef struct xcold {
    int64_t attempt_id, elapsed_ns;
    char *name;
} xcold;

typedef struct xflush {
    int64_t attempt_id, flush_bytes, cache_bytes;
} xflush;

typedef struct xval {
    int64_t attempt_id, mismatches;
    char *stage, *sha256;
    int passed, mae_null, bound_null, has_output;
    double max_abs_err, bound;
    void *output;
    size_t output_len;
    int64_t job_id, attempt; /* derived: for the member name */
} xval;

typedef struct xnode {
    int64_t attempt_id, node_index, grid[3], block[3];
    char *function;
} xnode;

typedef struct xfit {
    int64_t fit_id, created_ns;
    char *model_json, *sha256;
} xfit;

/* A growable array of fixed-size elements. */
typedef struct vec {
    void *v;
    size_t n, cap, size;
} vec;

/* Everything loaded for one run, plus an owner list of heap blocks. */
typedef struct xload {
    xrun run;
    xstatus status;
    vec invs, sources, cases, jobs, atts, samples, bindings, warmups, cals, colds, flushes, vals, nodes, fits;
    void **owned;
    size_t n_owned, cap_owned;
    const struct xjob **main_ix; /* phase-main, non-retry jobs with a case, by (case, arm, job_id) */
    size_t n_main_ix;
} xload;

/* One member being built: owned name and bytes. */
typedef struct ev_bundle {
    int64_t run_id;
    ev_member *m;
    char **names;
    void **datas;
    size_t n, cap;
    char root[EV_SHA256_HEX_LEN + 1];
} ev_bundle_t;

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
static void *vec_at(const vec *v, size_t i)
{
    return (char *)v->v + i * v->size;
}

/* Records p as owned by L (freed with it).  EV_ENOMEM frees p itself. */
static ev_status own(xload *L, void *p)
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
    ev_status rc = own(L, p);
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
    ev_status rc = own(L, p);
    if (!rc)
        *out = p;
    return rc;
}

/* Frees everything L holds; leaves it zeroed. */
static void xload_free(xload *L)
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
        if (*(const int64_t *)vec_at(v, mid) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The range [*b, *e) of v's rows of attempt_id. */
static void attempt_range(const vec *v, int64_t attempt_id, size_t *b, size_t *e)
{
    size_t lo = lower_bound(v, attempt_id), hi = lo;
    while (hi < v->n && *(const int64_t *)vec_at(v, hi) == attempt_id)
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
    rc = own(L, p);
    if (!rc)
        *out = p;
    return rc;
}

/* ---- numeric definitions ---------------------------------------------------- */

/* per_op_us, the one definition; see export.h. */
ev_status ev_bundle_per_op_us(double elapsed_ms, int64_t replays, int64_t ops_per_graph, double *out)
{
    if (replays < 1 || ops_per_graph < 1 || replays > MAX_EXACT_INT / ops_per_graph)
        return EV_ERANGE;
    int64_t ops = replays * ops_per_graph;
    *out = elapsed_ms * 1000.0 / (double)ops;
    return EV_OK;
}

/* Source-tree hash; see export.h: the runner's own ev_tree_hash. */
ev_status ev_bundle_tree_hash(const char *const *paths, const char *const *sha256_hex, size_t n, char hex[65])
{
    ev_source_file *f = calloc(n ? n : 1, sizeof *f);
    ev_status rc = EV_OK;
    if (!f)
        return EV_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        f[i].path = (char *)paths[i]; /* read only: ev_tree_hash takes const */
        if (strlen(sha256_hex[i]) != 64) {
            rc = EV_EINVAL;
            goto out;
        }
        memcpy(f[i].sha256, sha256_hex[i], 65);
    }
    rc = ev_tree_hash(f, n, hex);
out:
    free(f);
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
        if (cmp(vec_at(v, i - 1), vec_at(v, i)) >= 0)
            return ev_err_set(err, EV_EDB, "export: %s rows out of the documented order at row %zu", what, i);
    return EV_OK;
}

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}
/* Comparators for check_sorted: by attempt_id, then the row's own key. */
static int cmp_att_only(const void *a, const void *b)
{
    return cmp_i64(*(const int64_t *)a, *(const int64_t *)b);
}
static int cmp_sample(const void *a, const void *b)
{
    const xsample *x = a, *y = b;
    int c = cmp_i64(x->attempt_id, y->attempt_id);
    if (!c)
        c = cmp_i64(x->hot, y->hot); /* cold (0) before hot (1) */
    if (!c)
        c = cmp_i64(x->sample_index, y->sample_index);
    return c;
}
static int cmp_cal(const void *a, const void *b)
{
    const xcal *x = a, *y = b;
    int c = cmp_i64(x->attempt_id, y->attempt_id);
    return c ? c : cmp_i64(x->step, y->step);
}
static int cmp_cold(const void *a, const void *b)
{
    const xcold *x = a, *y = b;
    int c = cmp_i64(x->attempt_id, y->attempt_id);
    return c ? c : strcmp(x->name, y->name);
}
static int cmp_val(const void *a, const void *b)
{
    const xval *x = a, *y = b;
    int c = cmp_i64(x->attempt_id, y->attempt_id);
    return c ? c : strcmp(x->stage, y->stage);
}
static int cmp_node(const void *a, const void *b)
{
    const xnode *x = a, *y = b;
    int c = cmp_i64(x->attempt_id, y->attempt_id);
    return c ? c : cmp_i64(x->node_index, y->node_index);
}
static int cmp_job(const void *a, const void *b)
{
    return cmp_i64(((const xjob *)a)->job_id, ((const xjob *)b)->job_id);
}
static int cmp_att(const void *a, const void *b)
{
    const xattempt *x = a, *y = b;
    int c = cmp_i64(x->job_id, y->job_id);
    return c ? c : cmp_i64(x->attempt, y->attempt);
}
static int cmp_case(const void *a, const void *b)
{
    return cmp_i64(((const xcase *)a)->case_index, ((const xcase *)b)->case_index);
}

/* Loads every record of run_id into L (zeroed by the caller). */
static ev_status load(ev_store *s, int64_t run_id, xload *L, ev_err *err)
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

/* ---- derivation ------------------------------------------------------------ */

/* The case with case_index idx, or NULL. */
static const xcase *find_case(const xload *L, int64_t idx)
{
    size_t lo = 0, hi = L->cases.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const xcase *c = vec_at(&L->cases, mid);
        if (c->case_index == idx)
            return c;
        if (c->case_index < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The job with job_id id, or NULL. */
static const xjob *find_job(const xload *L, int64_t id)
{
    size_t lo = 0, hi = L->jobs.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const xjob *j = vec_at(&L->jobs, mid);
        if (j->job_id == id)
            return j;
        if (j->job_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Orders main-index entries by case, arm, then job_id. */
static int cmp_main_ix(const void *pa, const void *pb)
{
    const xjob *a = *(const xjob *const *)pa, *b = *(const xjob *const *)pb;
    int c = cmp_i64(a->case_index, b->case_index);
    if (!c)
        c = strcmp(a->arm, b->arm);
    return c ? c : cmp_i64(a->job_id, b->job_id);
}

/* Builds L->main_ix.  EV_ENOMEM. */
static ev_status build_main_index(xload *L)
{
    L->main_ix = calloc(L->jobs.n + 1, sizeof *L->main_ix);
    if (!L->main_ix)
        return EV_ENOMEM;
    L->n_main_ix = 0;
    for (size_t i = 0; i < L->jobs.n; i++) {
        const xjob *j = vec_at(&L->jobs, i);
        if (j->has_case && !j->has_retry && !strcmp(j->phase, "main"))
            L->main_ix[L->n_main_ix++] = j;
    }
    qsort(L->main_ix, L->n_main_ix, sizeof *L->main_ix, cmp_main_ix);
    return EV_OK;
}

/* The main-phase, non-retry jobs of case idx and arm, one per round, in
 * job_id order: *n of them from the returned slot of the main index. */
static const xjob *const *main_jobs(const xload *L, int64_t idx, const char *arm, size_t *n)
{
    size_t lo = 0, hi = L->n_main_ix, k = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const xjob *j = L->main_ix[mid];
        int c = cmp_i64(j->case_index, idx);
        if (!c)
            c = strcmp(j->arm, arm);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo + k < L->n_main_ix && L->main_ix[lo + k]->case_index == idx &&
           !strcmp(L->main_ix[lo + k]->arm, arm))
        k++;
    *n = k;
    return (const xjob *const *)L->main_ix + lo;
}

/* The main-phase, non-retry job of case idx and arm (the lowest job_id
 * when several: round 1), or NULL. */
static const xjob *main_job(const xload *L, int64_t idx, const char *arm)
{
    size_t n;
    const xjob *const *v = main_jobs(L, idx, arm, &n);
    return n ? v[0] : NULL;
}

/* Median of the per_op_us of attempt a's samples of the given timing.
 * OUT: *med, *count (count always written; *med only when count > 0). */
static ev_status attempt_median(const xload *L, const xattempt *a, int hot, double *med, int64_t *count)
{
    size_t b, e, k = 0;
    attempt_range(&L->samples, a->attempt_id, &b, &e);
    double *v = malloc((e - b + 1) * sizeof *v);
    if (!v)
        return EV_ENOMEM;
    for (size_t i = b; i < e; i++) {
        const xsample *x = vec_at(&L->samples, i);
        if (x->hot == hot)
            v[k++] = x->per_op_us;
    }
    ev_status rc = EV_OK;
    *count = (int64_t)k;
    if (k)
        rc = ev_median(v, k, med);
    free(v);
    return rc;
}

/* Derives per-op times, outcomes, job ranges and medians.  err names the
 * offending record. */
static ev_status derive(xload *L, ev_err *err)
{
    ev_status rc;
    for (size_t i = 0; i < L->samples.n; i++) {
        xsample *x = vec_at(&L->samples, i);
        if (ev_bundle_per_op_us(x->elapsed_ms, x->replays, x->ops_per_graph, &x->per_op_us))
            return ev_err_set(err, EV_ERANGE,
                              "export: sample %" PRId64 " of attempt %" PRId64
                              ": replays x ops_per_graph out of range",
                              x->sample_index, x->attempt_id);
    }
    /* Attempt outcomes. */
    for (size_t i = 0; i < L->atts.n; i++) {
        xattempt *a = vec_at(&L->atts, i);
        size_t b, e;
        ev_process_facts f;
        memset(&f, 0, sizeof f);
        f.has_process = a->has_process;
        f.has_exit = a->has_exit;
        f.exit_code = a->exit_code;
        f.has_signal = a->has_signal;
        f.signal = a->signal;
        f.timed_out = a->timed_out;
        f.interrupted = a->interrupted;
        f.skipped = a->skipped;
        f.records_ok = a->records_ok;
        attempt_range(&L->vals, a->attempt_id, &b, &e);
        for (size_t k = b; k < e; k++)
            if (!((const xval *)vec_at(&L->vals, k))->passed)
                f.validation_failed = 1;
        a->outcome = ev_outcome_derive(&f);
        for (size_t k = b; k < e; k++) {
            xval *v = vec_at(&L->vals, k);
            v->job_id = a->job_id;
            v->attempt = a->attempt;
        }
    }
    /* Jobs: attempt ranges (both arrays ordered by job_id), case, retry. */
    size_t ai = 0;
    for (size_t i = 0; i < L->jobs.n; i++) {
        xjob *j = vec_at(&L->jobs, i);
        while (ai < L->atts.n && ((const xattempt *)vec_at(&L->atts, ai))->job_id < j->job_id)
            ai++;
        j->att0 = ai;
        while (ai < L->atts.n && ((const xattempt *)vec_at(&L->atts, ai))->job_id == j->job_id)
            ai++;
        j->n_att = ai - j->att0;
        j->c = j->has_case ? find_case(L, j->case_index) : NULL;
        if (j->has_case && !j->c)
            return ev_err_set(err, EV_EDB, "export: job %s names case %" PRId64 ", which the run lacks",
                              j->job_key, j->case_index);
        j->orig = j->has_retry ? find_job(L, j->retry_of) : NULL;
        j->outcome = EV_OUT_INTERRUPTED;
        j->median_reason = ev_outcome_name(j->outcome);
        j->cold_reason = j->median_reason;
        if (!j->n_att)
            continue;
        const xattempt *last = vec_at(&L->atts, j->att0 + j->n_att - 1);
        j->outcome = last->outcome;
        j->median_reason = ev_outcome_name(j->outcome);
        j->cold_reason = j->median_reason;
        int64_t n_hot = 0, n_cold = 0;
        double med = 0, cmed = 0;
        if ((rc = attempt_median(L, last, 1, &med, &n_hot)) ||
            (rc = attempt_median(L, last, 0, &cmed, &n_cold)))
            return ev_err_set(err, rc, "export: median of job %s failed", j->job_key);
        j->hot_n = n_hot;
        if (j->outcome != EV_OUT_COMPLETED)
            continue;
        if (n_hot) {
            j->has_median = 1;
            j->median_us = med;
        } else {
            j->median_reason = "no hot samples";
        }
        if (n_cold) {
            j->has_cold_median = 1;
            j->cold_median_us = cmed;
        } else {
            j->cold_reason = "no cold samples";
        }
    }
    if (build_main_index(L))
        return ev_err_set(err, EV_ENOMEM, "export: out of memory");
    /* Every attempt must belong to a job of the run. */
    size_t counted = 0;
    for (size_t i = 0; i < L->jobs.n; i++)
        counted += ((const xjob *)vec_at(&L->jobs, i))->n_att;
    if (counted != L->atts.n)
        return ev_err_set(err, EV_EDB, "export: %zu attempts belong to no job of the run",
                          L->atts.n - counted);
    /* Snapshot rows must hash to their recorded sha256. */
    for (size_t i = 0; i < L->sources.n; i++) {
        const xsource *x = vec_at(&L->sources, i);
        char hex[EV_SHA256_HEX_LEN + 1];
        if ((rc = ev_sha256_hex(x->bytes ? x->bytes : "", x->len, hex)))
            return ev_err_set(err, rc, "export: hashing sources/%s failed", x->path);
        if (!x->sha256 || strcmp(hex, x->sha256))
            return ev_err_set(err, EV_ECORRUPT,
                              "export: snapshot row %s: bytes do not match the recorded sha256", x->path);
    }
    return EV_OK;
}

/* ---- JSON building with a sticky status ------------------------------------ */

/* ---- members ------------------------------------------------------------ */

/* Appends a member (name copied, data taken over: freed with the bundle;
 * on failure data is freed too). */
static ev_status bundle_add(ev_bundle_t *B, const char *name, void *data, size_t len)
{
    if (B->n == B->cap) {
        size_t cap = B->cap ? B->cap * 2 : 32;
        ev_member *m = realloc(B->m, cap * sizeof *m);
        if (m)
            B->m = m;
        char **nm = m ? realloc(B->names, cap * sizeof *nm) : NULL;
        if (nm)
            B->names = nm;
        void **d = nm ? realloc(B->datas, cap * sizeof *d) : NULL;
        if (!d) {
            free(data);
            return EV_ENOMEM;
        }
        B->datas = d;
        B->cap = cap;
    }
    size_t nl = strlen(name);
    char *nc = malloc(nl + 1);
    if (!nc) {
        free(data);
        return EV_ENOMEM;
    }
    memcpy(nc, name, nl + 1);
    B->names[B->n] = nc;
    B->datas[B->n] = data;
    B->m[B->n].name = nc;
    B->m[B->n].data = data;
    B->m[B->n].len = len;
    B->n++;
    return EV_OK;
}

/* Adds the contents of buf as a member (buf emptied). */
static ev_status bundle_add_buf(ev_bundle_t *B, const char *name, ev_buf *buf)
{
    size_t len = 0;
    char *p = ev_buf_steal(buf, &len);
    if (!p) {
        p = malloc(1);
        if (!p)
            return EV_ENOMEM;
        len = 0;
    }
    return bundle_add(B, name, p, len);
}

/* Adds a copy of bytes p[0..n) as a member. */
static ev_status bundle_add_copy(ev_bundle_t *B, const char *name, const void *p, size_t n)
{
    void *d = malloc(n ? n : 1);
    if (!d)
        return EV_ENOMEM;
    if (n)
        memcpy(d, p, n);
    return bundle_add(B, name, d, n);
}

/* The output member name of a validation row ("outputs/<job>-<attempt>.bin"). */
static void output_name(const xval *v, char *name, size_t cap)
{
    snprintf(name, cap, "outputs/%" PRId64 "-%" PRId64 ".bin", v->job_id, v->attempt);
}

/* Writes samples.csv into out. */
static ev_status write_samples_csv(const xload *L, ev_buf *out)
{
    static const char header[] =
        "run_id,job_id,attempt,op,rows,cols,stride,dtype,default_rows,role,arm,phase,label,outcome,timing,"
        "sample_index,replays,ops_per_graph,elapsed_ms,per_op_us,job_key,attempt_id,attempt_outcome,sm_clock_"
        "mhz\n";
    ev_status rc = ev_buf_puts(out, header);
    for (size_t i = 0; i < L->jobs.n && !rc; i++) {
        const xjob *j = vec_at(&L->jobs, i);
        for (size_t k = 0; k < j->n_att && !rc; k++) {
            const xattempt *a = vec_at(&L->atts, j->att0 + k);
            size_t b, e;
            attempt_range(&L->samples, a->attempt_id, &b, &e);
            for (size_t si = b; si < e && !rc; si++) {
                const xsample *x = vec_at(&L->samples, si);
                const xcase *c = j->c;
                if ((rc = ev_csv_put_i64(out, L->run.run_id, 0)) ||
                    (rc = ev_csv_put_i64(out, j->job_id, 0)) || (rc = ev_csv_put_i64(out, a->attempt, 0)))
                    break;
                if (c) {
                    if ((rc = ev_csv_put(out, c->op, 0)) || (rc = ev_csv_put_i64(out, c->rows, 0)) ||
                        (rc = ev_csv_put_i64(out, c->cols, 0)) || (rc = ev_csv_put_i64(out, c->stride, 0)) ||
                        (rc = ev_csv_put(out, c->dtype, 0)) ||
                        (rc = ev_csv_put_i64(out, c->default_rows, 0)) || (rc = ev_csv_put(out, c->role, 0)))
                        break;
                } else {
                    rc = ev_buf_puts(out, ",,,,,,,");
                    if (rc)
                        break;
                }
                if ((rc = ev_csv_put(out, j->arm, 0)) || (rc = ev_csv_put(out, j->phase, 0)) ||
                    (rc = ev_csv_put(out, j->label, 0)) ||
                    (rc = ev_csv_put(out, ev_outcome_name(j->outcome), 0)) ||
                    (rc = ev_csv_put(out, x->hot ? "hot" : "cold", 0)) ||
                    (rc = ev_csv_put_i64(out, x->sample_index, 0)) ||
                    (rc = ev_csv_put_i64(out, x->replays, 0)) ||
                    (rc = ev_csv_put_i64(out, x->ops_per_graph, 0)) ||
                    (rc = ev_csv_put_double(out, x->elapsed_ms, 0)) ||
                    (rc = ev_csv_put_double(out, x->per_op_us, 0)) || (rc = ev_csv_put(out, j->job_key, 0)) ||
                    (rc = ev_csv_put_i64(out, a->attempt_id, 0)) ||
                    (rc = ev_csv_put(out, ev_outcome_name(a->outcome), 0)))
                    break;
                rc = x->has_clock ? ev_csv_put_i64(out, x->sm_clock_mhz, 1) : ev_csv_put(out, "", 1);
            }
        }
    }
    return rc;
}

/* Adds one attempt's object (with every receipt) to the array arr. */
static void json_attempt(ev_jb *b, const xload *L, const xattempt *a, cJSON *arr)
{
    cJSON *o = ev_jb_obj(b, arr, NULL);
    size_t lo, hi;
    ev_jb_i64(b, o, "attempt", a->attempt);
    ev_jb_i64(b, o, "attempt_id", a->attempt_id);
    ev_jb_i64(b, o, "invocation_id", a->invocation_id);
    ev_jb_ns(b, o, "started_ns", a->started_ns);
    ev_jb_str(b, o, "outcome", ev_outcome_name(a->outcome));
    if (a->has_process) {
        cJSON *p = ev_jb_obj(b, o, "process");
        ev_jb_i64n(b, p, "pid", a->has_pid, a->pid);
        ev_jb_i64n(b, p, "exit_code", a->has_exit, a->exit_code);
        ev_jb_i64n(b, p, "signal", a->has_signal, a->signal);
        ev_jb_bool(b, p, "timed_out", a->timed_out);
        ev_jb_bool(b, p, "interrupted", a->interrupted);
        ev_jb_bool(b, p, "skipped", a->skipped);
        ev_jb_str(b, p, "skip_reason", a->skip_reason);
        ev_jb_i64(b, p, "record_count", a->record_count);
        ev_jb_bool(b, p, "records_ok", a->records_ok);
        ev_jb_str(b, p, "protocol_error", a->protocol_error);
        ev_jb_str(b, p, "affinity", a->affinity);
        ev_jb_str(b, p, "stderr_tail", a->stderr_tail);
        ev_jb_ns(b, p, "ended_ns", a->ended_ns);
        ev_jb_ns(b, p, "wall_ns", a->wall_ns);
    } else {
        ev_jb_null(b, o, "process");
    }

    attempt_range(&L->bindings, a->attempt_id, &lo, &hi);
    if (lo < hi) {
        const xbinding *x = vec_at(&L->bindings, lo);
        cJSON *p = ev_jb_obj(b, o, "binding");
        ev_jb_str(b, p, "op", x->op);
        ev_jb_str(b, p, "dtype", x->dtype);
        ev_jb_i64(b, p, "rows", x->rows);
        ev_jb_i64(b, p, "cols", x->cols);
        ev_jb_i64(b, p, "stride", x->stride);
        ev_jb_i64(b, p, "in_span", x->in_span);
        ev_jb_i64(b, p, "out_span", x->out_span);
        ev_jb_i64(b, p, "in_align", x->in_align);
        ev_jb_i64(b, p, "out_align", x->out_align);
        ev_jb_i64(b, p, "threads", x->threads);
    } else {
        ev_jb_null(b, o, "binding");
    }

    attempt_range(&L->warmups, a->attempt_id, &lo, &hi);
    if (lo < hi) {
        const xwarmup *x = vec_at(&L->warmups, lo);
        cJSON *p = ev_jb_obj(b, o, "warmup");
        ev_jb_dbl(b, p, "target_ms", !x->target_null, x->target_ms, "null in store");
        ev_jb_dbl(b, p, "elapsed_ms", !x->elapsed_null, x->elapsed_ms, "null in store");
        ev_jb_i64(b, p, "replays", x->replays);
    } else {
        ev_jb_null(b, o, "warmup");
    }

    cJSON *cals = ev_jb_arr(b, o, "calibrations");
    attempt_range(&L->cals, a->attempt_id, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const xcal *x = vec_at(&L->cals, i);
        cJSON *p = ev_jb_obj(b, cals, NULL);
        ev_jb_i64(b, p, "step", x->step);
        ev_jb_i64(b, p, "replays", x->replays);
        ev_jb_dbl(b, p, "elapsed_ms", !x->elapsed_null, x->elapsed_ms, "null in store");
        ev_jb_bool(b, p, "chosen", x->chosen);
        ev_jb_dbl(b, p, "target_ms", !x->target_null, x->target_ms, "null in store");
    }

    attempt_range(&L->flushes, a->attempt_id, &lo, &hi);
    if (lo < hi) {
        const xflush *x = vec_at(&L->flushes, lo);
        cJSON *p = ev_jb_obj(b, o, "flush");
        ev_jb_i64(b, p, "flush_bytes", x->flush_bytes);
        ev_jb_i64(b, p, "cache_bytes", x->cache_bytes);
    } else {
        ev_jb_null(b, o, "flush");
    }

    cJSON *colds = ev_jb_arr(b, o, "cold_timings");
    attempt_range(&L->colds, a->attempt_id, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const xcold *x = vec_at(&L->colds, i);
        cJSON *p = ev_jb_obj(b, colds, NULL);
        ev_jb_str(b, p, "name", x->name);
        ev_jb_ns(b, p, "elapsed_ns", x->elapsed_ns);
    }

    cJSON *vals = ev_jb_arr(b, o, "validations");
    attempt_range(&L->vals, a->attempt_id, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const xval *x = vec_at(&L->vals, i);
        cJSON *p = ev_jb_obj(b, vals, NULL);
        ev_jb_str(b, p, "stage", x->stage);
        ev_jb_bool(b, p, "passed", x->passed);
        ev_jb_dbl(b, p, "max_abs_err", !x->mae_null, x->max_abs_err, "null in store");
        ev_jb_dbl(b, p, "bound", !x->bound_null, x->bound, "null in store");
        ev_jb_i64(b, p, "mismatches", x->mismatches);
        ev_jb_str(b, p, "output_sha256", x->sha256);
        if (x->has_output && !strcmp(x->stage, "first")) {
            char name[96];
            output_name(x, name, sizeof name);
            ev_jb_str(b, p, "output_member", name);
            ev_jb_i64(b, p, "output_size", (int64_t)x->output_len);
        } else {
            ev_jb_null(b, p, "output_member");
            ev_jb_null(b, p, "output_size");
        }
    }

    cJSON *nodes = ev_jb_arr(b, o, "graph_nodes");
    attempt_range(&L->nodes, a->attempt_id, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const xnode *x = vec_at(&L->nodes, i);
        cJSON *p = ev_jb_obj(b, nodes, NULL);
        ev_jb_i64(b, p, "node_index", x->node_index);
        ev_jb_str(b, p, "function", x->function);
        cJSON *g = ev_jb_arr(b, p, "grid");
        cJSON *k = ev_jb_arr(b, p, "block");
        for (int d = 0; d < 3; d++) {
            ev_jb_i64(b, g, NULL, x->grid[d]);
            ev_jb_i64(b, k, NULL, x->block[d]);
        }
    }

    attempt_range(&L->samples, a->attempt_id, &lo, &hi);
    int64_t nh = 0, nc = 0;
    for (size_t i = lo; i < hi; i++) {
        if (((const xsample *)vec_at(&L->samples, i))->hot)
            nh++;
        else
            nc++;
    }
    ev_jb_i64(b, o, "hot_samples", nh);
    ev_jb_i64(b, o, "cold_samples", nc);
}

/* Adds the drift object to root. */
static void json_drift(ev_jb *b, const xload *L, cJSON *root)
{
    cJSON *d = ev_jb_obj(b, root, "drift");
    cJSON *arr = ev_jb_arr(b, d, "cases");
    int have = 0;
    double mn = 0, mx = 0;
    for (size_t i = 0; i < L->jobs.n; i++) {
        const xjob *r = vec_at(&L->jobs, i);
        if (strcmp(r->phase, "recheck") || strcmp(r->arm, "default") || !r->has_case)
            continue;
        const xjob *m = main_job(L, r->case_index, "default");
        cJSON *o = ev_jb_obj(b, arr, NULL);
        char reason[64];
        ev_jb_i64(b, o, "case_index", r->case_index);
        ev_jb_str(b, o, "main_job_key", m ? m->job_key : NULL);
        ev_jb_str(b, o, "recheck_job_key", r->job_key);
        ev_jb_dbl(b, o, "main_median_us", m && m->has_median, m ? m->median_us : 0,
                  m ? m->median_reason : "no main job");
        ev_jb_dbl(b, o, "recheck_median_us", r->has_median, r->median_us, r->median_reason);
        if (!m) {
            ev_jb_dbl(b, o, "drift", 0, 0, "no main job");
        } else if (!m->has_median) {
            snprintf(reason, sizeof reason, "main %s", m->median_reason);
            ev_jb_dbl(b, o, "drift", 0, 0, reason);
        } else if (!r->has_median) {
            snprintf(reason, sizeof reason, "recheck %s", r->median_reason);
            ev_jb_dbl(b, o, "drift", 0, 0, reason);
        } else {
            double v = r->median_us / m->median_us - 1.0;
            ev_jb_dbl(b, o, "drift", 1, v, NULL);
            if (isfinite(v)) {
                if (!have || v < mn)
                    mn = v;
                if (!have || v > mx)
                    mx = v;
                have = 1;
            }
        }
    }
    ev_jb_dbl(b, d, "min", have, mn, "no drift values");
    ev_jb_dbl(b, d, "max", have, mx, "no drift values");
}

/* Adds "figures" (src/bundle/figures.h) to root: every job's last-attempt
 * hot and cold per_op_us, in samples.csv order. */
static void json_figures(ev_jb *b, const xload *L, cJSON *root, ev_err *err)
{
    ev_fig_job *fj = calloc(L->jobs.n + 1, sizeof *fj);
    double *vals = calloc(L->samples.n + 1, sizeof *vals);
    size_t used = 0;
    cJSON *fig = NULL;
    if (!fj || !vals) {
        if (!b->rc)
            b->rc = EV_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < L->jobs.n; i++) {
        const xjob *j = vec_at(&L->jobs, i);
        ev_fig_job *f = &fj[i];
        f->job_key = j->job_key;
        f->phase = j->phase;
        f->arm = j->arm;
        f->case_index = j->has_case ? j->case_index : -1;
        f->retry = j->has_retry;
        f->outcome = ev_outcome_name(j->outcome);
        if (!j->n_att)
            continue;
        const xattempt *a = vec_at(&L->atts, j->att0 + j->n_att - 1);
        size_t lo, hi;
        attempt_range(&L->samples, a->attempt_id, &lo, &hi);
        for (int hot = 0; hot < 2; hot++) {
            double *start = vals + used;
            size_t n = 0;
            for (size_t k = lo; k < hi; k++) {
                const xsample *x = vec_at(&L->samples, k);
                if (x->hot != hot)
                    continue;
                vals[used++] = x->per_op_us;
                n++;
                if (hot && x->has_clock) {
                    if (!f->has_clock || x->sm_clock_mhz < f->clock_min)
                        f->clock_min = x->sm_clock_mhz;
                    if (!f->has_clock || x->sm_clock_mhz > f->clock_max)
                        f->clock_max = x->sm_clock_mhz;
                    f->has_clock = 1;
                }
            }
            if (hot) {
                f->hot = start;
                f->n_hot = n;
            } else {
                f->cold = start;
                f->n_cold = n;
            }
        }
    }
    ev_fig_input in = {fj, L->jobs.n, L->run.seed};
    if (!b->rc) {
        ev_status rc = ev_figures_build(&in, &fig, err);
        if (rc)
            b->rc = rc;
        else
            ev_jb_put(b, root, "figures", fig);
    }
out:
    free(fj);
    free(vals);
}

/* Writes validation.json into out; model_json is the bundle's model.json
 * (for store_fit.equals_model_json). */
static ev_status write_validation(const xload *L, const ev_buf *model_json, ev_buf *out, ev_err *err)
{
    ev_jb b = {EV_OK};
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return EV_ENOMEM;
    ev_jb_str(&b, root, "format", "evident-validation/1");

    cJSON *run = ev_jb_obj(&b, root, "run");
    ev_jb_i64(&b, run, "run_id", L->run.run_id);
    ev_jb_str(&b, run, "protocol_id", L->run.protocol_id);
    ev_jb_str(&b, run, "protocol_path", L->run.protocol_path);
    ev_jb_str(&b, run, "backend", L->run.backend);
    ev_jb_i64(&b, run, "seed", L->run.seed);
    ev_jb_ns(&b, run, "created_ns", L->run.created_ns);
    if (L->status.have) {
        ev_jb_str(&b, run, "status", L->status.status);
    } else {
        ev_jb_null(&b, run, "status");
        ev_jb_str(&b, run, "status_reason", "run not finished");
    }
    ev_jb_str(&b, run, "rescue_status", L->status.have ? L->status.rescue_status : NULL);
    if (L->status.have)
        ev_jb_ns(&b, run, "finished_ns", L->status.finished_ns);
    else
        ev_jb_null(&b, run, "finished_ns");

    cJSON *invs = ev_jb_arr(&b, root, "invocations");
    for (size_t i = 0; i < L->invs.n; i++) {
        const xinv *x = vec_at(&L->invs, i);
        cJSON *o = ev_jb_obj(&b, invs, NULL);
        ev_jb_i64(&b, o, "invocation_id", x->invocation_id);
        ev_jb_ns(&b, o, "started_ns", x->started_ns);
        ev_jb_bool(&b, o, "resumed", x->resumed);
        ev_jb_str(&b, o, "host_hash", x->host_hash);
        ev_jb_str(&b, o, "profile_id", x->profile_id);
        ev_jb_str(&b, o, "environment_record", x->env_json);
        cJSON *env = NULL;
        char why[sizeof((ev_err *)0)->msg];
        if (ev_proj_environment(x->env_json, &env, why, sizeof why) && !b.rc)
            b.rc = EV_ENOMEM;
        if (env) {
            ev_jb_put(&b, o, "environment", env);
        } else {
            ev_jb_null(&b, o, "environment");
            ev_jb_str(&b, o, "environment_reason", why);
        }
    }

    cJSON *cases = ev_jb_arr(&b, root, "cases");
    for (size_t i = 0; i < L->cases.n; i++) {
        const xcase *c = vec_at(&L->cases, i);
        cJSON *o = ev_jb_obj(&b, cases, NULL);
        ev_jb_i64(&b, o, "case_index", c->case_index);
        ev_jb_str(&b, o, "op", c->op);
        ev_jb_i64(&b, o, "rows", c->rows);
        ev_jb_i64(&b, o, "cols", c->cols);
        ev_jb_i64(&b, o, "stride", c->stride);
        ev_jb_str(&b, o, "dtype", c->dtype);
        ev_jb_i64(&b, o, "default_rows", c->default_rows);
        ev_jb_str(&b, o, "role", c->role);
    }

    int64_t by_outcome[EV_OUT_COUNT] = {0};
    int64_t n_hot = 0, n_cold = 0, n_outputs = 0;
    cJSON *jobs = ev_jb_arr(&b, root, "jobs");
    for (size_t i = 0; i < L->jobs.n; i++) {
        const xjob *j = vec_at(&L->jobs, i);
        by_outcome[j->outcome]++;
        cJSON *o = ev_jb_obj(&b, jobs, NULL);
        ev_jb_i64(&b, o, "job_id", j->job_id);
        ev_jb_str(&b, o, "job_key", j->job_key);
        ev_jb_str(&b, o, "phase", j->phase);
        ev_jb_i64n(&b, o, "case_index", j->has_case, j->case_index);
        ev_jb_str(&b, o, "arm", j->arm);
        ev_jb_str(&b, o, "label", j->label);
        ev_jb_i64(&b, o, "plan_order", j->plan_order);
        ev_jb_str(&b, o, "retry_of", j->orig ? j->orig->job_key : NULL);
        ev_jb_i64n(&b, o, "retry_of_job_id", j->has_retry, j->retry_of);
        ev_jb_str(&b, o, "outcome", ev_outcome_name(j->outcome));
        ev_jb_i64n(&b, o, "last_attempt", j->n_att > 0,
                   j->n_att ? ((const xattempt *)vec_at(&L->atts, j->att0 + j->n_att - 1))->attempt : 0);
        ev_jb_dbl(&b, o, "median_us", j->has_median, j->median_us, j->median_reason);
        ev_jb_i64(&b, o, "hot_samples", j->hot_n);
        ev_jb_dbl(&b, o, "cold_median_us", j->has_cold_median, j->cold_median_us, j->cold_reason);
        cJSON *atts = ev_jb_arr(&b, o, "attempts");
        for (size_t k = 0; k < j->n_att; k++)
            json_attempt(&b, L, vec_at(&L->atts, j->att0 + k), atts);
    }
    for (size_t i = 0; i < L->samples.n; i++) {
        if (((const xsample *)vec_at(&L->samples, i))->hot)
            n_hot++;
        else
            n_cold++;
    }
    for (size_t i = 0; i < L->vals.n; i++) {
        const xval *v = vec_at(&L->vals, i);
        if (v->has_output && !strcmp(v->stage, "first"))
            n_outputs++;
    }

    json_drift(&b, L, root);

    cJSON *sf = ev_jb_obj(&b, root, "store_fit");
    ev_jb_i64(&b, sf, "fits", (int64_t)L->fits.n);
    if (L->fits.n) {
        const xfit *f = vec_at(&L->fits, L->fits.n - 1);
        size_t flen = strlen(f->model_json);
        ev_jb_i64(&b, sf, "fit_id", f->fit_id);
        ev_jb_str(&b, sf, "sha256", f->sha256);
        ev_jb_bool(&b, sf, "equals_model_json",
                   flen == model_json->len && !memcmp(f->model_json, model_json->data, flen));
    } else {
        ev_jb_null(&b, sf, "fit_id");
        ev_jb_null(&b, sf, "sha256");
        ev_jb_null(&b, sf, "equals_model_json");
    }

    cJSON *sum = ev_jb_obj(&b, root, "summary");
    ev_jb_i64(&b, sum, "planned_jobs", (int64_t)L->jobs.n);
    cJSON *bo = ev_jb_obj(&b, sum, "jobs_by_outcome");
    for (int k = 0; k < EV_OUT_COUNT; k++)
        ev_jb_i64(&b, bo, ev_outcome_name((ev_outcome)k), by_outcome[k]);
    ev_jb_i64(&b, sum, "attempts", (int64_t)L->atts.n);
    ev_jb_i64(&b, sum, "samples", (int64_t)L->samples.n);
    ev_jb_i64(&b, sum, "hot_samples", n_hot);
    ev_jb_i64(&b, sum, "cold_samples", n_cold);
    ev_jb_i64(&b, sum, "outputs", n_outputs);
    json_figures(&b, L, root, err);
    return ev_jb_finish(&b, root, out);
}

/* ---- the model ------------------------------------------------------------- */

/* The protocol's decision threshold, `decision_threshold`, exactly as the
 * runner's own parser reads it (its default 0.05 included), so the
 * exporter, the runner's policy phase and the verifier's refit use one
 * value.  A protocol the parser refuses (it could not have been run)
 * falls back to the top-level number, else 0.05. */
static double protocol_threshold(const xload *L)
{
    double t = 0.05;
    ev_protocol p;
    memset(&p, 0, sizeof p);
    if (!ev_protocol_parse(L->run.protocol ? L->run.protocol : "", L->run.protocol_len, &p, NULL)) {
        t = p.decision_threshold;
        ev_protocol_free(&p);
        return t;
    }
    ev_protocol_free(&p);
    cJSON *tree = NULL;
    if (!ev_json_parse(L->run.protocol ? L->run.protocol : "", L->run.protocol_len, 0, &tree, NULL)) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(tree, "decision_threshold");
        if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
            t = v->valuedouble;
    }
    cJSON_Delete(tree);
    return t;
}

/* Builds model.json into out: observations from the medians, fit, print. */
static ev_status write_model(const xload *L, ev_buf *out, ev_err *err)
{
    static const char *const arms[3] = {"default", "rows1", "rows2"};
    ev_status rc = EV_OK;
    ev_obs *obs = NULL;
    ev_excluded *exc = NULL;
    size_t n_obs = 0, n_exc = 0;
    ev_fit *fit = NULL;

    if (L->cases.n) {
        obs = calloc(L->cases.n * 3, sizeof *obs);
        exc = calloc(L->cases.n, sizeof *exc);
        if (!obs || !exc) {
            rc = ev_err_set(err, EV_ENOMEM, "export: out of memory building the observations");
            goto out;
        }
    }
    for (size_t i = 0; i < L->cases.n; i++) {
        const xcase *c = vec_at(&L->cases, i);
        ev_obs_case oc = {c->op, c->dtype, c->rows, c->cols, c->default_rows, !strcmp(c->role, "holdout")};
        ev_obs_sched sched[3];
        memset(sched, 0, sizeof sched);
        for (int k = 0; k < 3; k++) {
            size_t nr;
            const xjob *const *jr = main_jobs(L, c->case_index, arms[k], &nr);
            for (size_t q = 0; q < nr; q++) {
                const xjob *js = jr[q];
                ev_obs_job j;
                memset(&j, 0, sizeof j);
                j.round = ev_plan_label_round(js->label);
                j.outcome = ev_outcome_name(js->outcome);
                if (js->n_att) {
                    size_t lo, hi;
                    const xattempt *a = vec_at(&L->atts, js->att0 + js->n_att - 1);
                    attempt_range(&L->bindings, a->attempt_id, &lo, &hi);
                    j.has_binding = lo < hi;
                }
                j.has_median = js->has_median;
                j.median_us = js->median_us;
                ev_obs_add(&sched[k], &j);
            }
        }
        ev_obs_select(&oc, sched, obs, &n_obs, exc, &n_exc);
    }

    int64_t sms = 1;
    for (size_t i = 0; i < L->jobs.n; i++) {
        const xjob *j = vec_at(&L->jobs, i);
        if (strcmp(j->phase, "main") || j->outcome != EV_OUT_COMPLETED || !j->n_att)
            continue;
        const xattempt *a = vec_at(&L->atts, j->att0 + j->n_att - 1);
        size_t lo, hi;
        attempt_range(&L->bindings, a->attempt_id, &lo, &hi);
        if (lo < hi) {
            sms = ((const xbinding *)vec_at(&L->bindings, lo))->threads;
            break;
        }
    }

    ev_fit_input in;
    memset(&in, 0, sizeof in);
    in.obs = obs;
    in.n_obs = n_obs;
    in.excluded = exc;
    in.n_excluded = n_exc;
    in.sms = sms;
    in.threshold = protocol_threshold(L);
    ev_err ferr;
    ferr.msg[0] = '\0';
    ev_status frc = ev_model_fit(&in, &fit, &ferr);
    if (frc == EV_ENOMEM) {
        rc = ev_err_set(err, frc, "export: out of memory fitting the model");
        goto out;
    }
    if (!frc) {
        rc = ev_fit_to_json(fit, out, err);
        goto out;
    }
    /* A failed fit is evidence too: say why, exactly. */
    ev_jb b = {EV_OK};
    cJSON *root = cJSON_CreateObject();
    ev_jb_str(&b, root, "format", "evident-model/1");
    ev_jb_null(&b, root, "fit");
    ev_jb_str(&b, root, "fit_reason", ferr.msg[0] ? ferr.msg : ev_strerror(frc));
    ev_jb_str(&b, root, "status", ev_strerror(frc));
    rc = ev_jb_finish(&b, root, out);
    if (rc)
        ev_err_set(err, rc, "export: writing model.json failed");
out:
    ev_fit_free(fit);
    free(obs);
    free(exc);
    return rc;
}

/* ---- proof receipts and provenance ------------------------------------------ */

/* The snapshot rows as the projections see them (path order, as the
 * store query returns them). */
static ev_status proj_sources(const xload *L, ev_proj_source **out)
{
    ev_proj_source *v = calloc(L->sources.n + 1, sizeof *v);
    if (!v)
        return EV_ENOMEM;
    for (size_t i = 0; i < L->sources.n; i++) {
        const xsource *x = vec_at(&L->sources, i);
        v[i] = (ev_proj_source){x->path, x->sha256, x->len};
    }
    *out = v;
    return EV_OK;
}

/* Writes proof-receipts.json into out (bundle/projections.h). */
static ev_status write_proof(const xload *L, const char *tree_hash, ev_buf *out)
{
    const xinv *first = L->invs.n ? vec_at(&L->invs, 0) : NULL;
    ev_proj_source *src = NULL;
    ev_status rc = proj_sources(L, &src);
    if (rc)
        return rc;
    ev_proof_in in = {L->run.backend, first ? first->env_json : NULL, src, L->sources.n, tree_hash};
    rc = ev_proof_build(&in, out);
    free(src);
    return rc;
}

/* Writes provenance.json into out (bundle/projections.h). */
static ev_status write_provenance(const xload *L, const char *tree_hash, ev_buf *out)
{
    const char **ids = calloc(L->invs.n + 1, sizeof *ids);
    if (!ids)
        return EV_ENOMEM;
    for (size_t i = 0; i < L->invs.n; i++)
        ids[i] = ((const xinv *)vec_at(&L->invs, i))->profile_id;
    ev_prov_in in = {L->run.run_id,
                     L->run.git_commit,
                     L->run.git_dirty,
                     tree_hash,
                     L->run.source_tree_hash,
                     L->run.protocol_id,
                     ids,
                     L->invs.n,
                     L->run.backend,
                     L->run.seed,
                     L->run.created_ns,
                     "evident " EV_VERSION};
    ev_status rc = ev_provenance_build(&in, out);
    free(ids);
    return rc;
}

/* ---- receipts and the bundle -------------------------------------------------- */

/* qsort comparator: members by name, bytewise. */
static int cmp_member(const void *a, const void *b)
{
    return strcmp(((const ev_member *)a)->name, ((const ev_member *)b)->name);
}

/* Sorts B's members by name, keeping names/datas parallel. */
static ev_status bundle_sort(ev_bundle_t *B)
{
    /* names[i] and datas[i] are the members' own pointers: rebuild them from
     * the sorted members (name is names[i]; data is datas[i] or a copy). */
    qsort(B->m, B->n, sizeof *B->m, cmp_member);
    for (size_t i = 0; i < B->n; i++) {
        B->names[i] = (char *)B->m[i].name;
        B->datas[i] = (void *)B->m[i].data;
    }
    return EV_OK;
}

/* Writes receipts.json over B's members into out. */
static ev_status write_receipts(const ev_bundle_t *B, ev_buf *out)
{
    ev_jb b = {EV_OK};
    cJSON *root = cJSON_CreateObject();
    ev_jb_str(&b, root, "format", "evident-receipts/1");
    cJSON *arr = ev_jb_arr(&b, root, "members");
    for (size_t i = 0; i < B->n && !b.rc; i++) {
        char hex[EV_SHA256_HEX_LEN + 1];
        b.rc = ev_sha256_hex(B->m[i].data ? B->m[i].data : "", B->m[i].len, hex);
        cJSON *o = ev_jb_obj(&b, arr, NULL);
        ev_jb_str(&b, o, "name", B->m[i].name);
        ev_jb_i64(&b, o, "size", (int64_t)B->m[i].len);
        ev_jb_str(&b, o, "sha256", hex);
    }
    return ev_jb_finish(&b, root, out);
}

/* Builds every member of run_id into B. */
static ev_status build_members(const xload *L, ev_bundle_t *B, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_buf buf = EV_BUF_INIT, model = EV_BUF_INIT;
    const char **paths = NULL, **shas = NULL;
    char tree[EV_SHA256_HEX_LEN + 1];
    char name[600];

    if ((rc = bundle_add_copy(B, "protocol.json", L->run.protocol, L->run.protocol_len)))
        goto oom;
    if ((rc = write_samples_csv(L, &buf)) || (rc = bundle_add_buf(B, "samples.csv", &buf)))
        goto oom;
    if ((rc = write_model(L, &model, err)))
        goto out;
    if ((rc = write_validation(L, &model, &buf, err)) || (rc = bundle_add_buf(B, "validation.json", &buf)))
        goto oom;
    if ((rc = bundle_add_buf(B, "model.json", &model)))
        goto oom;

    if (L->sources.n) {
        paths = calloc(L->sources.n, sizeof *paths);
        shas = calloc(L->sources.n, sizeof *shas);
        if (!paths || !shas)
            goto oom;
    }
    for (size_t i = 0; i < L->sources.n; i++) {
        const xsource *x = vec_at(&L->sources, i);
        paths[i] = x->path;
        shas[i] = x->sha256;
        if (i && strcmp(paths[i - 1], paths[i]) >= 0) {
            rc = ev_err_set(err, EV_EDB, "export: snapshot rows out of order at %s", x->path);
            goto out;
        }
        if ((size_t)snprintf(name, sizeof name, "sources/%s", x->path) >= sizeof name ||
            !ev_member_name_ok(name)) {
            rc = ev_err_set(err, EV_EFORMAT, "export: snapshot path not allowed as a member name: '%s'",
                            x->path);
            goto out;
        }
        if ((rc = bundle_add_copy(B, name, x->bytes, x->len)))
            goto oom;
    }
    if ((rc = ev_bundle_tree_hash(paths, shas, L->sources.n, tree)))
        goto oom;
    if ((rc = write_proof(L, tree, &buf)) || (rc = bundle_add_buf(B, "proof-receipts.json", &buf)))
        goto oom;
    if ((rc = write_provenance(L, tree, &buf)) || (rc = bundle_add_buf(B, "provenance.json", &buf)))
        goto oom;

    for (size_t i = 0; i < L->vals.n; i++) {
        const xval *v = vec_at(&L->vals, i);
        if (!v->has_output || strcmp(v->stage, "first"))
            continue;
        output_name(v, name, sizeof name);
        if ((rc = bundle_add_copy(B, name, v->output, v->output_len)))
            goto oom;
    }

    bundle_sort(B);
    if ((rc = ev_report_html(B->m, B->n, &buf, err)))
        goto out;
    if ((rc = bundle_add_buf(B, "report.html", &buf)))
        goto oom;
    bundle_sort(B);
    if ((rc = write_receipts(B, &buf)) || (rc = ev_sha256_hex(buf.data, buf.len, B->root)) ||
        (rc = bundle_add_buf(B, "receipts.json", &buf)))
        goto oom;
    bundle_sort(B);
    goto out;
oom:
    if (rc == EV_ENOMEM || !rc) {
        rc = EV_ENOMEM;
        ev_err_set(err, rc, "export: out of memory building the members");
    } else {
        ev_err_set(err, rc, "export: building the members failed: %s", ev_strerror(rc));
    }
out:
    free(paths);
    free(shas);
    ev_buf_free(&buf);
    ev_buf_free(&model);
    return rc;
}

/* ---- public --------------------------------------------------------------- */

/* Frees a bundle; NULL-safe. */
void ev_bundle_free(ev_bundle *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++) {
        free(b->names[i]);
        free(b->datas[i]);
    }
    free(b->names);
    free(b->datas);
    free(b->m);
    free(b);
}

const ev_member *ev_bundle_members(const ev_bundle *b, size_t *n)
{
    *n = b->n;
    return b->m;
}

const char *ev_bundle_root(const ev_bundle *b)
{
    return b->root;
}

int64_t ev_bundle_run_id(const ev_bundle *b)
{
    return b->run_id;
}

/* Builds the bundle; see export.h. */
/*
 * Holds the store's rows to the invariants of store/outcome.h before any
 * member is written (the exporter is their first reader): a validation
 * whose verdict does not follow from its numbers, an environment whose
 * profile id is not the hash of its record, a finished run with a job
 * never attempted or whose last attempt is interrupted.  Returns EV_OK, or
 * EV_EFORMAT with err naming the row and the rule (nothing is exported).
 */
static ev_status check_invariants(const xload *L, ev_err *err)
{
    for (size_t i = 0; i < L->vals.n; i++) {
        const xval *v = vec_at(&L->vals, i);
        const char *first = NULL, *why;
        /* rows are sorted by (attempt, stage): the attempt's are adjacent */
        for (size_t k = i > 0 ? i - 1 : 0; k < L->vals.n && k <= i + 1; k++) {
            const xval *w = vec_at(&L->vals, k);
            if (w->attempt_id == v->attempt_id && !strcmp(w->stage, "first"))
                first = w->sha256;
        }
        why = ev_validation_problem(!strcmp(v->stage, "final"), v->passed, v->mismatches, v->sha256, first);
        if (why)
            return ev_err_set(err, EV_EFORMAT,
                              "export: the store breaks an invariant: the %s validation of attempt %" PRId64
                              " is %s; refusing to export it",
                              v->stage, v->attempt_id, why);
    }
    for (size_t i = 0; i < L->invs.n; i++) {
        const xinv *x = vec_at(&L->invs, i);
        if (x->profile_id &&
            !ev_profile_id_matches(x->env_json, x->env_json ? strlen(x->env_json) : 0, x->profile_id))
            return ev_err_set(err, EV_EFORMAT,
                              "export: the store breaks an invariant: invocation %" PRId64
                              "'s profile id is not the SHA-256 of its environment record; refusing to "
                              "export it",
                              x->invocation_id);
    }
    for (size_t i = 0; i < L->jobs.n; i++) {
        const xjob *j = vec_at(&L->jobs, i);
        if (j->has_retry != !strcmp(j->phase, "rescue"))
            return ev_err_set(err, EV_EFORMAT,
                              "export: the store breaks an invariant: job %s is in phase %s %s; refusing to "
                              "export it",
                              j->job_key, j->phase,
                              j->has_retry ? "yet retries another job" : "yet retries no job");
        for (size_t k = 0; k < j->n_att; k++) {
            const xattempt *a = vec_at(&L->atts, j->att0 + k);
            size_t lo, hi;
            attempt_range(&L->vals, a->attempt_id, &lo, &hi);
            const char *why = ev_stages_problem(a->outcome, j->has_case, (int)(hi - lo));
            if (why)
                return ev_err_set(err, EV_EFORMAT,
                                  "export: the store breaks an invariant: attempt %" PRId64
                                  " of job %s is %s; "
                                  "refusing to export it",
                                  a->attempt_id, j->job_key, why);
        }
    }
    if (L->status.have && L->status.status) {
        for (size_t i = 0; i < L->jobs.n; i++) {
            const xjob *j = vec_at(&L->jobs, i);
            if (!j->n_att || !ev_outcome_final(j->outcome))
                return ev_err_set(
                    err, EV_EFORMAT,
                    "export: the store breaks an invariant: run status %s is set, but job %s %s; "
                    "refusing to export it",
                    L->status.status, j->job_key,
                    j->n_att ? "ends in an interrupted attempt" : "was never attempted");
        }
    }
    return EV_OK;
}

ev_status ev_export_build(ev_store *s, int64_t run_id, ev_bundle **out, ev_err *err)
{
    ev_status rc = EV_OK;
    xload L;
    ev_bundle_t *B = NULL;
    memset(&L, 0, sizeof L);
    if (run_id <= 0 && (rc = ev_store_last_run(s, &run_id, err)))
        goto out;
    if ((rc = load(s, run_id, &L, err)) || (rc = derive(&L, err)) || (rc = check_invariants(&L, err)))
        goto out;
    B = calloc(1, sizeof *B);
    if (!B) {
        rc = ev_err_set(err, EV_ENOMEM, "export: out of memory");
        goto out;
    }
    B->run_id = run_id;
    if ((rc = build_members(&L, B, err)))
        goto out;
    *out = B;
    B = NULL;
out:
    ev_bundle_free(B);
    xload_free(&L);
    return rc;
}

/* Writes the zip; see export.h. */
ev_status ev_bundle_write(const ev_bundle *b, const char *path, ev_err *err)
{
    return ev_zip_write(path, b->m, b->n, err);
}

/* The whole export; see export.h. */
ev_status ev_export_file(const char *db_path, int64_t run_id, const char *out_path, char root_hex[65],
                         ev_err *err)
{
    ev_store *s = NULL;
    ev_bundle *b = NULL;
    ev_status rc = ev_store_open(db_path, EV_STORE_READONLY, &s, err);
    if (!rc)
        rc = ev_export_build(s, run_id, &b, err);
    if (!rc)
        rc = ev_bundle_write(b, out_path, err);
    if (!rc)
        memcpy(root_hex, ev_bundle_root(b), EV_SHA256_HEX_LEN + 1);
    ev_bundle_free(b);
    ev_store_close(s);
    return rc;
}
