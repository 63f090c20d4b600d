/*
 * export_derive.c: what the exporter derives from the loaded records:
 * outcomes (ev_outcome_derive), per-op times, medians, the index of main
 * jobs, the ceiling that bounds each completed job's medians (the
 * physical plausibility rule, runner/sample_rules.h) (export_int.h).
 */
#include "export_int.h"

#include "dtype.h"

/* ---- numeric definitions ---------------------------------------------------- */

/* Source-tree hash; see export.h: the runner's ex_own ev_tree_hash. */
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

/* ---- derivation ------------------------------------------------------------ */

/* The case with case_index idx, or NULL. */
static const xcase *find_case(const xload *L, int64_t idx)
{
    size_t lo = 0, hi = L->cases.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const xcase *c = ex_vec_at(&L->cases, mid);
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
        const xjob *j = ex_vec_at(&L->jobs, mid);
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
    int c = ex_cmp_i64(a->case_index, b->case_index);
    if (!c)
        c = strcmp(a->arm, b->arm);
    return c ? c : ex_cmp_i64(a->job_id, b->job_id);
}

/* Builds L->main_ix.  EV_ENOMEM. */
static ev_status build_main_index(xload *L)
{
    L->main_ix = calloc(L->jobs.n + 1, sizeof *L->main_ix);
    if (!L->main_ix)
        return EV_ENOMEM;
    L->n_main_ix = 0;
    for (size_t i = 0; i < L->jobs.n; i++) {
        const xjob *j = ex_vec_at(&L->jobs, i);
        if (j->has_case && !j->has_retry && ev_is_phase(j->phase, EV_PHASE_MAIN))
            L->main_ix[L->n_main_ix++] = j;
    }
    qsort(L->main_ix, L->n_main_ix, sizeof *L->main_ix, cmp_main_ix);
    return EV_OK;
}

/* The main-phase, non-retry jobs of case idx and arm, one per round, in
 * job_id order: *n of them from the returned slot of the main index. */
static const xjob *const *ex_main_jobs(const xload *L, int64_t idx, const char *arm, size_t *n)
{
    size_t lo = 0, hi = L->n_main_ix, k = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const xjob *j = L->main_ix[mid];
        int c = ex_cmp_i64(j->case_index, idx);
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
const xjob *ex_main_job(const xload *L, int64_t idx, const char *arm)
{
    size_t n;
    const xjob *const *v = ex_main_jobs(L, idx, arm, &n);
    return n ? v[0] : NULL;
}

/* Median of the per_op_us of attempt a's samples of the given timing.
 * OUT: *med, *count (count always written; *med only when count > 0). */
static ev_status attempt_median(const xload *L, const xattempt *a, int hot, double *med, int64_t *count)
{
    size_t b, e, k = 0;
    ex_attempt_range(&L->samples, a->attempt_id, &b, &e);
    double *v = malloc((e - b + 1) * sizeof *v);
    if (!v)
        return EV_ENOMEM;
    for (size_t i = b; i < e; i++) {
        const xsample *x = ex_vec_at(&L->samples, i);
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

/* The binding and flush rows and the device record (NULL when absent) of
 * attempt a. */
static void attempt_rows(const xload *L, const xattempt *a, const xbinding **bd, const xflush **fl,
                         const xdevice **dev)
{
    size_t b, e;
    ex_attempt_range(&L->bindings, a->attempt_id, &b, &e);
    *bd = b < e ? ex_vec_at(&L->bindings, b) : NULL;
    ex_attempt_range(&L->flushes, a->attempt_id, &b, &e);
    *fl = b < e ? ex_vec_at(&L->flushes, b) : NULL;
    ex_attempt_range(&L->devices, a->attempt_id, &b, &e);
    *dev = b < e ? ex_vec_at(&L->devices, b) : NULL;
}

/* The shard job j ran in (0 unsharded, -1 unknown). */
static int64_t job_shard(const xload *L, const xjob *j)
{
    return L->shard_count > 1
               ? ev_plan_job_shard(j->job_key, j->has_case ? j->case_index : -1, L->shard_count)
               : 0;
}

/* The physical plausibility facts of every completed job with a case
 * (sample_rules.h, ev_rule_plausible_bound): its bytes, working set and
 * cache, and the ceilings of its run (its shard's): the hot median of the
 * main phase's original ceiling and ceiling-l2 jobs, completed, over
 * their binding's in_span. */
static ev_status derive_bounds(xload *L)
{
    int64_t n = L->shard_count > 1 ? L->shard_count : 1, ops = 0;
    double *mem = malloc((size_t)n * sizeof *mem), *l2 = malloc((size_t)n * sizeof *l2);
    ev_protocol p;
    if (!mem || !l2) {
        free(mem);
        free(l2);
        return EV_ENOMEM;
    }
    memset(&p, 0, sizeof p);
    if (!ev_protocol_parse(L->run.protocol ? L->run.protocol : "", L->run.protocol_len, &p, NULL))
        ops = p.ops_per_graph;
    ev_protocol_free(&p);
    for (int64_t k = 0; k < n; k++)
        mem[k] = l2[k] = NAN;
    for (size_t i = 0; i < L->jobs.n; i++) {
        const xjob *j = ex_vec_at(&L->jobs, i);
        int64_t s = job_shard(L, j);
        int is_mem = ev_is_arm(j->arm, EV_ARM_CEILING), is_l2 = ev_is_arm(j->arm, EV_ARM_CEILING_L2);
        if ((!is_mem && !is_l2) || j->has_case || j->orig || !ev_is_phase(j->phase, EV_PHASE_MAIN) ||
            !j->has_median || s < 0 || s >= n)
            continue;
        const xbinding *bd;
        const xflush *fl;
        const xdevice *dev;
        attempt_rows(L, ex_vec_at(&L->atts, j->att0 + j->n_att - 1), &bd, &fl, &dev);
        (is_mem ? mem : l2)[s] = ev_rule_ceiling_bpus(bd ? bd->in_span : -1, j->median_us);
    }
    for (size_t i = 0; i < L->jobs.n; i++) {
        xjob *j = ex_vec_at(&L->jobs, i);
        int64_t s = job_shard(L, j);
        if (!j->c || j->outcome != EV_OUT_COMPLETED || s < 0 || s >= n)
            continue;
        const xbinding *bd;
        const xflush *fl;
        const xdevice *dev;
        cJSON *d = NULL;
        ev_dtype dt;
        attempt_rows(L, ex_vec_at(&L->atts, j->att0 + j->n_att - 1), &bd, &fl, &dev);
        if (dev && ev_json_parse(dev->json, strlen(dev->json), 0, &d, NULL))
            d = NULL;
        memset(&j->bound, 0, sizeof j->bound);
        j->bound.bytes = ev_dtype_parse(j->c->dtype, &dt)
                             ? 0
                             : ev_rule_case_bytes(j->c->rows, j->c->cols, ev_dtype_size(dt));
        j->bound.working_bytes =
            bd ? ev_rule_working_bytes(ev_rule_device_variants(d), bd->in_span, bd->out_span, ops) : 0;
        j->bound.cache_bytes = fl ? fl->cache_bytes : 0;
        j->bound.memory_bpus = mem[s];
        j->bound.l2_bpus = l2[s];
        cJSON_Delete(d);
        j->has_bound = 1;
        j->hot_ceiling = ev_rule_plausible_bound(L->run.backend, 1, &j->bound, &j->hot_bound_bpus);
        j->cold_ceiling = ev_rule_plausible_bound(L->run.backend, 0, &j->bound, &j->cold_bound_bpus);
    }
    free(mem);
    free(l2);
    return EV_OK;
}

/* Derives per-op times, outcomes, job ranges and medians.  err names the
 * offending record. */
ev_status ex_derive(xload *L, ev_err *err)
{
    ev_status rc;
    for (size_t i = 0; i < L->samples.n; i++) {
        xsample *x = ex_vec_at(&L->samples, i);
        if (ev_per_op_us(x->elapsed_ms, x->replays, x->ops_per_graph, &x->per_op_us))
            return ev_err_set(err, EV_ERANGE,
                              "export: sample %" PRId64 " of attempt %" PRId64
                              ": replays x ops_per_graph out of range",
                              x->sample_index, x->attempt_id);
    }
    /* Attempt outcomes. */
    for (size_t i = 0; i < L->atts.n; i++) {
        xattempt *a = ex_vec_at(&L->atts, i);
        size_t b, e;
        ex_attempt_range(&L->vals, a->attempt_id, &b, &e);
        for (size_t k = b; k < e; k++)
            if (!((const xval *)ex_vec_at(&L->vals, k))->passed)
                a->facts.validation_failed = 1;
        a->outcome = ev_outcome_derive(&a->facts);
        for (size_t k = b; k < e; k++) {
            xval *v = ex_vec_at(&L->vals, k);
            v->job_id = a->job_id;
            v->attempt = a->attempt;
        }
        ex_attempt_range(&L->checks, a->attempt_id, &b, &e);
        for (size_t k = b; k < e; k++) {
            xcheck *c = ex_vec_at(&L->checks, k);
            c->job_id = a->job_id;
            c->attempt = a->attempt;
        }
        ex_attempt_range(&L->opkept, a->attempt_id, &b, &e);
        for (size_t k = b; k < e; k++) {
            xopkept *c = ex_vec_at(&L->opkept, k);
            c->job_id = a->job_id;
            c->attempt = a->attempt;
        }
    }
    /* Jobs: attempt ranges (both arrays ordered by job_id), case, retry. */
    size_t ai = 0;
    for (size_t i = 0; i < L->jobs.n; i++) {
        xjob *j = ex_vec_at(&L->jobs, i);
        while (ai < L->atts.n && ((const xattempt *)ex_vec_at(&L->atts, ai))->job_id < j->job_id)
            ai++;
        j->att0 = ai;
        while (ai < L->atts.n && ((const xattempt *)ex_vec_at(&L->atts, ai))->job_id == j->job_id)
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
        const xattempt *last = ex_vec_at(&L->atts, j->att0 + j->n_att - 1);
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
    if (build_main_index(L) || derive_bounds(L))
        return ev_err_set(err, EV_ENOMEM, "export: out of memory");
    /* Every attempt must belong to a job of the run. */
    size_t counted = 0;
    for (size_t i = 0; i < L->jobs.n; i++)
        counted += ((const xjob *)ex_vec_at(&L->jobs, i))->n_att;
    if (counted != L->atts.n)
        return ev_err_set(err, EV_EDB, "export: %zu attempts belong to no job of the run",
                          L->atts.n - counted);
    /* Snapshot rows must hash to their recorded sha256. */
    for (size_t i = 0; i < L->sources.n; i++) {
        const xsource *x = ex_vec_at(&L->sources, i);
        char hex[EV_SHA256_HEX_LEN + 1];
        if ((rc = ev_sha256_hex(x->bytes ? x->bytes : "", x->len, hex)))
            return ev_err_set(err, rc, "export: hashing sources/%s failed", x->path);
        if (!x->sha256 || strcmp(hex, x->sha256))
            return ev_err_set(err, EV_ECORRUPT,
                              "export: snapshot row %s: bytes do not match the recorded sha256", x->path);
    }
    return EV_OK;
}
