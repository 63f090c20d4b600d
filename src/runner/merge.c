/*
 * merge.c: `evident merge` (merge.h).  Reads every shard's store first and
 * checks the whole union against the plan of N shards (plan.h: the one
 * partition rule); only then creates the output, under a temporary name
 * renamed into place when complete, so a refused or failed merge leaves
 * nothing at the output path and changes no input.
 */
#include "merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "plan.h"
#include "protocol.h"
#include "store/outcome.h"
#include "store/store.h"

/* A job of one shard's store. */
typedef struct mjob {
    char *key;
    int64_t job_id;
    int64_t last_attempt; /* 0: never attempted */
    ev_outcome outcome;   /* of the last attempt */
} mjob;

/* One shard's store as read. */
typedef struct msrc {
    const char *path;
    ev_store *st;
    int64_t run, n_runs;
    char protocol_id[65], backend[8], commit[64], tree[65];
    int64_t dirty;
    ev_buf bytes;
    int64_t index, count; /* its shard; -1: no shard rows */
    int mixed;            /* shard rows of more than one shard */
    int rest;             /* an invocation of the rest phase */
    mjob *jobs;           /* ORDER BY job_id */
    size_t n_jobs, cap_jobs;
    char *fit; /* the last fit's model.json, NULL none */
    int64_t fit_ns;
} msrc;

/* EV_Q_RUNS: counts runs and keeps the last one's id. */
static ev_status on_runs(void *ctx, const ev_row *r)
{
    msrc *m = ctx;
    ev_run_rec run;
    ev_row_run(r, &run);
    m->n_runs++;
    m->run = run.run_id;
    return EV_OK;
}

/* EV_Q_RUN: what every shard must share. */
static ev_status on_run(void *ctx, const ev_row *r)
{
    msrc *m = ctx;
    ev_run_rec run;
    ev_row_run(r, &run);
    snprintf(m->protocol_id, sizeof m->protocol_id, "%s", run.protocol_id);
    snprintf(m->backend, sizeof m->backend, "%s", run.backend);
    snprintf(m->commit, sizeof m->commit, "%s", run.git_commit);
    m->dirty = run.git_dirty;
    snprintf(m->tree, sizeof m->tree, "%s", run.source_tree_hash);
    return run.protocol ? ev_buf_append(&m->bytes, run.protocol, run.protocol_len) : EV_OK;
}

/* EV_Q_SHARDS: the store's shard, and whether it ran the rest phase. */
static ev_status on_shards(void *ctx, const ev_row *r)
{
    msrc *m = ctx;
    ev_shard_rec sh;
    ev_row_shard(r, &sh);
    if (m->index < 0) {
        m->index = sh.shard_index;
        m->count = sh.shard_count;
    } else if (m->index != sh.shard_index || m->count != sh.shard_count) {
        m->mixed = 1;
    }
    if (!strcmp(sh.phase, "rest"))
        m->rest = 1;
    return EV_OK;
}

/* EV_Q_JOBS: the jobs, in job_id order. */
static ev_status on_jobs(void *ctx, const ev_row *r)
{
    msrc *m = ctx;
    if (m->n_jobs == m->cap_jobs) {
        size_t c = m->cap_jobs ? m->cap_jobs * 2 : 64;
        mjob *p = realloc(m->jobs, c * sizeof *p);
        if (!p)
            return EV_ENOMEM;
        m->jobs = p;
        m->cap_jobs = c;
    }
    mjob *j = &m->jobs[m->n_jobs];
    ev_job_rec jr;
    ev_row_job(r, &jr);
    memset(j, 0, sizeof *j);
    j->job_id = jr.job_id;
    j->outcome = EV_OUT_INTERRUPTED;
    if (!(j->key = strdup(jr.job_key)))
        return EV_ENOMEM;
    m->n_jobs++;
    return EV_OK;
}

/* Orders mjob by job_id (bsearch key: an int64_t). */
static int cmp_job_id(const void *k, const void *e)
{
    int64_t a = *(const int64_t *)k, b = ((const mjob *)e)->job_id;
    return (a > b) - (a < b);
}

/* EV_Q_OUTCOMES: each job's last attempt's outcome (the attempt_outcomes
 * view, which equals ev_outcome_derive). */
static ev_status on_outcome(void *ctx, const ev_row *r)
{
    msrc *m = ctx;
    ev_outcome_rec oc;
    ev_row_outcome(r, &oc);
    mjob *j = bsearch(&oc.job_id, m->jobs, m->n_jobs, sizeof *m->jobs, cmp_job_id);
    ev_outcome o;
    if (j && oc.attempt > j->last_attempt && !ev_outcome_parse(oc.outcome, &o)) {
        j->last_attempt = oc.attempt;
        j->outcome = o;
    }
    return EV_OK;
}

/* EV_Q_FITS: the last fit. */
static ev_status on_fit(void *ctx, const ev_row *r)
{
    msrc *m = ctx;
    ev_fit_rec f;
    ev_row_fit(r, &f);
    free(m->fit);
    m->fit_ns = f.created_ns;
    return (m->fit = strdup(f.model_json)) ? EV_OK : EV_ENOMEM;
}

/* Opens and reads one shard's store into *m (m->path set). */
static ev_status read_source(msrc *m, ev_err *err)
{
    ev_status rc;

    m->index = m->count = -1;
    if ((rc = ev_store_open(m->path, EV_STORE_READONLY | EV_STORE_FULLCHECK, &m->st, err)))
        return rc;
    if ((rc = ev_store_query(m->st, EV_Q_RUNS, 0, on_runs, m, err)))
        return rc;
    if (m->n_runs != 1)
        return ev_err_set(err, EV_EUSAGE, "%s holds %lld runs: a shard's store holds one", m->path,
                          (long long)m->n_runs);
    if ((rc = ev_store_query(m->st, EV_Q_RUN, m->run, on_run, m, err)) ||
        (rc = ev_store_query(m->st, EV_Q_SHARDS, m->run, on_shards, m, err)) ||
        (rc = ev_store_query(m->st, EV_Q_JOBS, m->run, on_jobs, m, err)) ||
        (rc = ev_store_query(m->st, EV_Q_OUTCOMES, m->run, on_outcome, m, err)) ||
        (rc = ev_store_query(m->st, EV_Q_FITS, m->run, on_fit, m, err)))
        return rc == EV_ENOMEM ? ev_err_set(err, rc, "merge: out of memory") : rc;
    if (m->index < 0)
        return ev_err_set(err, EV_EUSAGE, "%s is not a shard's store (no --shard run in it)", m->path);
    if (m->mixed)
        return ev_err_set(err, EV_EUSAGE,
                          "%s holds more than one shard (a merged store): merge the shards' own stores",
                          m->path);
    return EV_OK;
}

/* Where each job of the whole plan was found. */
typedef struct mfound {
    ptrdiff_t src; /* -1: missing */
    ev_outcome outcome;
    int ended; /* attempted, and its outcome is final */
} mfound;

/* Appends "K (shard I)" for a missing job to a list of at most a few names. */
static void list_missing(char *dst, size_t cap, size_t *n, const char *key, int64_t shard)
{
    size_t len = strlen(dst);
    if (++*n <= 4)
        snprintf(dst + len, cap - len, "%s%s (shard %lld)", len ? ", " : "", key, (long long)shard);
}

/*
 * Checks the sources against each other and against the plan of their
 * shard count; fills found[] (parallel to plan->jobs) and the rescue jobs
 * (OUT: *rescue, *n_rescue, found_r[]: malloc'd).  EV_EUSAGE with the
 * reason on any refusal.
 */
static ev_status check_union(msrc *src, size_t n, const ev_protocol *proto, const ev_plan *plan,
                             mfound *found, int rest, ev_plan_job **rescue, size_t *n_rescue,
                             mfound **found_r, ev_err *err)
{
    char miss[600] = "";
    size_t n_miss = 0;
    ev_outcome *outc = NULL;
    ev_status rc = EV_OK;

    *rescue = NULL;
    *n_rescue = 0;
    *found_r = NULL;
    for (size_t k = 0; k < plan->n; k++)
        found[k].src = -1;
    for (size_t s = 0; s < n; s++)
        for (size_t i = 0; i < src[s].n_jobs; i++) {
            const mjob *j = &src[s].jobs[i];
            ptrdiff_t k = ev_plan_find(plan, j->key);
            if (k < 0) {
                if (ev_job_key_in_phase(j->key, EV_PHASE_RESCUE))
                    continue; /* checked against the rescue plan below */
                return ev_err_set(err, EV_EUSAGE, "job %s in %s is not in the plan of %lld shards", j->key,
                                  src[s].path, (long long)plan->shard_count);
            }
            if (found[k].src >= 0)
                return ev_err_set(err, EV_EUSAGE, "job %s is in both %s and %s: each job has one shard",
                                  j->key, src[found[k].src].path, src[s].path);
            if (plan->jobs[k].shard != src[s].index)
                return ev_err_set(err, EV_EUSAGE,
                                  "job %s in %s (shard %lld) is shard %lld's job: conflicting stores", j->key,
                                  src[s].path, (long long)src[s].index, (long long)plan->jobs[k].shard);
            found[k].src = (ptrdiff_t)s;
            found[k].outcome = j->outcome;
            found[k].ended = j->last_attempt > 0 && ev_outcome_final(j->outcome);
        }
    for (size_t k = 0; k < plan->n; k++) {
        int needed = k < plan->n_main || rest; /* main merge: main jobs must have ended */
        if (found[k].src < 0 || (needed && !found[k].ended))
            list_missing(miss, sizeof miss, &n_miss, plan->jobs[k].job_key, plan->jobs[k].shard);
    }
    if (n_miss)
        return ev_err_set(err, EV_EUSAGE, "%zu planned job(s) of the %s phase missing or not ended: %s%s",
                          n_miss, rest ? "rest" : ev_phase_name(EV_PHASE_MAIN), miss,
                          n_miss > 4 ? ", ..." : "");
    if (!(outc = calloc(plan->n ? plan->n : 1, sizeof *outc)))
        return ev_err_set(err, EV_ENOMEM, "merge: out of memory");
    for (size_t k = 0; k < plan->n; k++)
        outc[k] = found[k].outcome;
    if (rest && (rc = ev_plan_rescue(proto, plan, outc, rescue, n_rescue, err)))
        goto out;
    if (!(*found_r = calloc(*n_rescue ? *n_rescue : 1, sizeof **found_r))) {
        rc = ev_err_set(err, EV_ENOMEM, "merge: out of memory");
        goto out;
    }
    for (size_t r = 0; r < *n_rescue; r++)
        (*found_r)[r].src = -1;
    for (size_t s = 0; s < n; s++)
        for (size_t i = 0; i < src[s].n_jobs; i++) {
            const mjob *j = &src[s].jobs[i];
            size_t r;
            if (!ev_job_key_in_phase(j->key, EV_PHASE_RESCUE))
                continue;
            for (r = 0; r < *n_rescue && strcmp((*rescue)[r].job_key, j->key); r++)
                ;
            if (r == *n_rescue) {
                rc =
                    ev_err_set(err, EV_EUSAGE, "rescue job %s in %s retries no failed job of the merged plan",
                               j->key, src[s].path);
                goto out;
            }
            if ((*found_r)[r].src >= 0) {
                rc = ev_err_set(err, EV_EUSAGE, "job %s is in both %s and %s", j->key,
                                src[(*found_r)[r].src].path, src[s].path);
                goto out;
            }
            if ((*rescue)[r].shard != src[s].index) {
                rc = ev_err_set(err, EV_EUSAGE, "job %s in %s (shard %lld) is shard %lld's job", j->key,
                                src[s].path, (long long)src[s].index, (long long)(*rescue)[r].shard);
                goto out;
            }
            (*found_r)[r].src = (ptrdiff_t)s;
            (*found_r)[r].outcome = j->outcome;
            (*found_r)[r].ended = j->last_attempt > 0 && ev_outcome_final(j->outcome);
        }
    for (size_t r = 0; r < *n_rescue; r++)
        if ((*found_r)[r].src < 0 || !(*found_r)[r].ended)
            list_missing(miss, sizeof miss, &n_miss, (*rescue)[r].job_key, (*rescue)[r].shard);
    if (n_miss)
        rc = ev_err_set(err, EV_EUSAGE, "%zu rescue job(s) missing or not ended: %s%s", n_miss, miss,
                        n_miss > 4 ? ", ..." : "");
out:
    free(outc);
    return rc;
}

/* Monotonic clock in seconds. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The stores src[0..n) must be shards of one run: the same protocol,
 * backend, commit and tree, shard count and phase.  EV_EUSAGE naming the
 * first two that differ, and in what. */
static ev_status same_run(const msrc *src, size_t n, ev_err *err)
{
    for (size_t i = 1; i < n; i++) {
        const msrc *a = &src[0], *b = &src[i];
        const char *what = strcmp(a->protocol_id, b->protocol_id)                 ? "protocol"
                           : strcmp(a->backend, b->backend)                       ? "backend"
                           : strcmp(a->commit, b->commit) || a->dirty != b->dirty ? "git commit"
                           : strcmp(a->tree, b->tree)                             ? "source tree"
                           : b->count != a->count                                 ? "shard count"
                           : b->rest != a->rest                                   ? "phase"
                                                                                  : NULL;
        if (what)
            return ev_err_set(err, EV_EUSAGE, "%s and %s differ in their %s: they are not shards of one run",
                              a->path, b->path, what);
    }
    return EV_OK;
}

/* Each of the N shards once among src[0..n).  OUT: *by_shard (N entries,
 * the caller frees), also on failure.  EV_EUSAGE naming a shard given
 * twice or missing. */
static ev_status index_shards(msrc *src, size_t n, int64_t N, msrc ***by_shard, ev_err *err)
{
    msrc **bs;

    if (!(bs = *by_shard = calloc((size_t)N, sizeof *bs)))
        return ev_err_set(err, EV_ENOMEM, "merge: out of memory");
    for (size_t i = 0; i < n; i++) {
        if (bs[src[i].index])
            return ev_err_set(err, EV_EUSAGE, "%s and %s are both shard %lld/%lld: give each shard once",
                              bs[src[i].index]->path, src[i].path, (long long)src[i].index, (long long)N);
        bs[src[i].index] = &src[i];
    }
    for (int64_t k = 0; k < N; k++)
        if (!bs[k])
            return ev_err_set(err, EV_EUSAGE,
                              "shard %lld/%lld is missing: its jobs have no store among the %zu given",
                              (long long)k, (long long)N, n);
    return EV_OK;
}

/* After the rest phase the merge is the whole run: its status and the
 * rescue's from every planned and rescue job's outcome, finished when its
 * last record did (no clock of the merge's own, so the same shards give
 * the same store), recorded in dst and in res. */
static ev_status rest_status(ev_store *dst, const ev_plan *plan, const mfound *found,
                             const ev_plan_job *rescue, const mfound *found_r, size_t n_rescue,
                             ev_merge_result *res, ev_err *err)
{
    ev_status rc;
    ev_outcome *o = calloc(plan->n + n_rescue + 1, sizeof *o);
    const char *status, *rstatus;
    if (!o)
        return ev_err_set(err, EV_ENOMEM, "merge: out of memory");
    for (size_t k = 0; k < plan->n; k++)
        o[k] = found[k].outcome;
    for (size_t r = 0; r < n_rescue; r++)
        o[plan->n + r] = found_r[r].outcome;
    ev_plan_run_status(plan, o, rescue, o + plan->n, n_rescue, &status, &rstatus);
    free(o);
    {
        /* the run finished when its last record did: no clock of the
         * merge's own, so the same shards give the same store */
        int64_t end_ns = 0;
        if ((rc = ev_store_last_end_ns(dst, 1, &end_ns, err)) ||
            (rc = ev_store_set_run_status(dst, 1, status, rstatus, end_ns, err)))
            return rc;
    }
    snprintf(res->status, sizeof res->status, "%s", status);
    snprintf(res->rescue, sizeof res->rescue, "%s", rstatus ? rstatus : "");
    return EV_OK;
}

ev_status ev_merge(const char *const *paths, size_t n, const char *out, ev_merge_result *res, ev_err *err)
{
    msrc *src = NULL;
    msrc **by_shard = NULL;
    ev_protocol proto;
    ev_plan plan;
    mfound *found = NULL, *found_r = NULL;
    ev_plan_job *rescue = NULL;
    size_t n_rescue = 0;
    ev_store *dst = NULL;
    ev_buf tmp = EV_BUF_INIT;
    struct stat sb;
    double t0 = now_s();
    int64_t N;
    int rest, made = 0;
    ev_status rc = EV_OK;

    memset(res, 0, sizeof *res);
    memset(&proto, 0, sizeof proto);
    memset(&plan, 0, sizeof plan);
    if (!n)
        return ev_err_set(err, EV_EUSAGE, "no shard stores given");
    if (stat(out, &sb) == 0)
        return ev_err_set(err, EV_EUSAGE, "--out %s exists: a merge never replaces a store; give a new path",
                          out);
    if (!(src = calloc(n, sizeof *src)))
        return ev_err_set(err, EV_ENOMEM, "merge: out of memory");
    for (size_t i = 0; i < n; i++) {
        src[i].path = paths[i];
        if ((rc = read_source(&src[i], err)))
            goto out;
    }
    N = src[0].count;
    rest = src[0].rest;
    if ((rc = same_run(src, n, err)))
        goto out;
    if ((rc = index_shards(src, n, N, &by_shard, err)))
        goto out;
    if ((rc = ev_protocol_parse(src[0].bytes.data ? src[0].bytes.data : "", src[0].bytes.len, &proto, err)) ||
        (rc = ev_plan_build_sharded(&proto, N, &plan, err)))
        goto out;
    if (!(found = calloc(plan.n ? plan.n : 1, sizeof *found))) {
        rc = ev_err_set(err, EV_ENOMEM, "merge: out of memory");
        goto out;
    }
    if ((rc = check_union(src, n, &proto, &plan, found, rest, &rescue, &n_rescue, &found_r, err)))
        goto out;
    for (size_t i = 1; rest && i < n; i++)
        if (!src[0].fit != !src[i].fit || (src[0].fit && strcmp(src[0].fit, src[i].fit))) {
            rc =
                ev_err_set(err, EV_EUSAGE,
                           "%s and %s hold different fits: every shard's rest phase takes the fit of the one "
                           "merged main phase (--main)",
                           src[0].path, src[i].path);
            goto out;
        }

    /* write: a temporary name, renamed into place when whole */
    if ((rc = ev_buf_printf(&tmp, "%s.merging", out)))
        goto out;
    unlink(tmp.data); /* a merge that died before its rename */
    if ((rc = ev_store_open(tmp.data, EV_STORE_CREATE, &dst, err)))
        goto out;
    made = 1;
    for (int64_t k = 0; k < N; k++)
        if ((rc = ev_store_copy_run(dst, 1, by_shard[k]->path, by_shard[k]->run, k == 0, err)))
            goto out;
    if (rest && src[0].fit && (rc = ev_store_add_fit(dst, 1, src[0].fit_ns, src[0].fit, NULL, err)))
        goto out;
    if (rest && (rc = rest_status(dst, &plan, found, rescue, found_r, n_rescue, res, err)))
        goto out;
    ev_store_close(dst);
    dst = NULL;
    if (rename(tmp.data, out)) {
        rc = ev_err_set(err, EV_EIO, "cannot rename %s to %s: %s", tmp.data, out, strerror(errno));
        goto out;
    }
    made = 0;
    res->shard_count = N;
    res->rest = rest;
    res->jobs = plan.n + n_rescue;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < src[i].n_jobs; j++)
            res->attempts += (size_t)src[i].jobs[j].last_attempt;
out:
    ev_store_close(dst);
    if (made && tmp.data) {
        char side[4200];
        unlink(tmp.data);
        snprintf(side, sizeof side, "%s-wal", tmp.data);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", tmp.data);
        unlink(side);
    }
    for (size_t i = 0; src && i < n; i++) {
        ev_store_close(src[i].st);
        ev_buf_free(&src[i].bytes);
        for (size_t j = 0; j < src[i].n_jobs; j++)
            free(src[i].jobs[j].key);
        free(src[i].jobs);
        free(src[i].fit);
    }
    free(src);
    free(by_shard);
    free(found);
    free(found_r);
    free(rescue);
    ev_plan_free(&plan);
    ev_protocol_free(&proto);
    ev_buf_free(&tmp);
    res->wall_s = now_s() - t0;
    return rc;
}
