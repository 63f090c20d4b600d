/*
 * supervisor.c: the run (supervisor.h).  One worker process per job,
 * started with fork/exec, pinned to the protocol's CPU set, in its own
 * process group, watched by a deadline; its records arrive on a pipe (fd 3
 * in the child) and are committed one by one; its stderr tail is kept with
 * absolute paths redacted; then the process record is written and the
 * outcome derived from it (ev_outcome_derive).  Resume, attempts and the
 * record format: docs/runner.md.  The files of the supervisor and their
 * order: sup_int.h.
 */
#include "supervisor.h"
#include "build_id.h"

#include "plants.h"

#include "sup_int.h"
#include "validate.h"

/* ---- compile ahead ---------------------------------------------------- */

/* Compiles the torch-compile cases still to run into the run's cache
 * before any job is timed (compile_ahead.h); cuda only. */
static ev_status compile_ahead(sup *s, ev_err *err)
{
    ev_ahead_opts o;
    ev_ahead_result r;
    char script[4096], cache[4096], python[4096];
    int *need;
    size_t n_need = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    ev_status rc;

    if (strcmp(s->o->backend, "cuda") || !s->proto.n_cases)
        return EV_OK;
    if (!(need = calloc(s->proto.n_cases, sizeof *need)) ||
        !(s->ahead_ns = calloc(s->proto.n_cases, sizeof *s->ahead_ns))) {
        free(need);
        return ev_err_set(err, EV_ENOMEM, "compile ahead: out of memory");
    }
    for (size_t i = 0; i < s->n_js; i++) {
        const jstate *j = &s->js[i];
        if (ev_is_arm(j->pj.arm, EV_ARM_TORCH) && j->pj.case_index >= 0 &&
            (size_t)j->pj.case_index < s->proto.n_cases &&
            (!j->has_outcome || j->outcome == EV_OUT_INTERRUPTED) && !need[j->pj.case_index]) {
            need[j->pj.case_index] = 1;
            n_need++;
        }
    }
    if (!n_need) {
        free(need);
        return EV_OK;
    }
    sup_peer_script(s->o, script, sizeof script);
    ev_torch_cache_path(s->o->db_path, s->run_id, cache, sizeof cache);
    memset(&o, 0, sizeof o);
    o.proto = &s->proto;
    o.need = need;
    sup_python(s, python, sizeof python);
    o.python = python;
    o.script = script;
    o.cache = cache;
    /* one compile thread each; half the host's CPUs, at most 16 */
    o.parallel = cpus > 1 ? (int)(cpus / 2 > 16 ? 16 : cpus / 2) : 1;
    o.stop = s->o->stop;
    rc = ev_compile_ahead(&o, s->ahead_ns, &r, err);
    free(need);
    s->res->ahead_s = (double)r.wall_ns / 1e9;
    s->res->ahead_cases = r.cases;
    s->res->ahead_failed = r.failed;
    snprintf(s->res->ahead_note, sizeof s->res->ahead_note, "%s", r.first_failure);
    return rc;
}

/*
 * Refuses, before the store is touched, a protocol this host cannot run:
 * a cpu_set CPU outside this process's affinity (EV_EUSAGE; it would only
 * fail in the probe and leave a run that cannot finish), or a worker that
 * would hold more than half of the host's memory (EV_EUSAGE): its case's
 * input twice (the generated copy and the backend's), its output, and on
 * the cpu backend the flush buffer and the ceiling's buffer, each the
 * protocol's multiple of this host's last-level cache, capped as declared;
 * or, on cpu, cold samples whose flush would not exceed that cache.
 */
/* The checkable-case rule (validate.h) on every case, before the store
 * is touched: a case whose validation would pass an output of zeros or
 * poison is refused with what to change. */
static ev_status checkable_cases(const ev_protocol *p, ev_err *err)
{
    ev_status rc = EV_OK;
    for (size_t i = 0; i < p->n_cases && !rc; i++)
        rc = ev_case_checkable(p, i, EV_CHECKABLE_ALL, err);
    return rc;
}

static ev_status host_bounds(const ev_protocol *p, const char *backend, ev_err *err)
{
    cpu_set_t set;
    if (p->n_cpus && sched_getaffinity(0, sizeof set, &set) == 0) {
        for (size_t i = 0; i < p->n_cpus; i++)
            if (!CPU_ISSET(p->cpu_set[i], &set))
                return ev_err_set(err, EV_EUSAGE,
                                  "cpu_set[%zu]: CPU %d is not available to this process (%d CPUs are): "
                                  "name CPUs it may run on",
                                  i, p->cpu_set[i], CPU_COUNT(&set));
    }
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psz <= 0)
        return EV_OK;
    double mem = (double)pages * (double)psz, llc = (double)ev_cpu_llc_bytes();
    double flush = 0, ceiling = 0;
    if (!strcmp(backend, "cpu")) {
        flush = (double)p->ref_cpu.flush_cache_multiple * llc;
        if (p->ref_cpu.flush_max_bytes && flush > (double)p->ref_cpu.flush_max_bytes)
            flush = (double)p->ref_cpu.flush_max_bytes;
        ceiling = (double)p->ref_cpu.ceiling_cache_multiple * llc;
        if (p->ref_cpu.ceiling_max_bytes && ceiling > (double)p->ref_cpu.ceiling_max_bytes)
            ceiling = (double)p->ref_cpu.ceiling_max_bytes;
        /* A cold sample is cold only after a flush larger than the
         * last-level cache (sample_rules.h): a cap that keeps the flush
         * within it is refused here, not found in every job. */
        if (p->cold_samples > 0 && !(flush > llc))
            return ev_err_set(
                err, EV_EUSAGE,
                "reference.cpu: the cold samples' flush (%.0f bytes: flush_cache_multiple x the "
                "%.0f-byte last-level cache, capped by flush_max_bytes) does not exceed that "
                "cache, so the cold samples would not be cold: raise flush_max_bytes above %.0f "
                "(or drop it), or declare cold_samples 0",
                flush, llc, llc);
        if (p->reference_arms && ceiling > mem / 2)
            return ev_err_set(err, EV_EUSAGE,
                              "reference.cpu: the ceiling's buffer (%.0f bytes: ceiling_cache_multiple x the "
                              "%.0f-byte cache) is more than half of this host's %.0f bytes of memory: set "
                              "ceiling_max_bytes",
                              ceiling, llc, mem);
    }
    for (size_t i = 0; i < p->n_cases; i++) {
        const ev_proto_case *c = &p->cases[i];
        ev_dtype dt = EV_DTYPE_FP32;
        ev_dtype_parse(c->dtype, &dt); /* the parser accepted it */
        double es = (double)ev_dtype_size(dt), in = (double)c->rows * (double)c->stride * es;
        double need = 2 * in + (double)c->rows * es + flush, copies = 0;
        if (!strcmp(backend, "cpu")) {
            /* the cpu backend's base and V variants, and its ops output slots, in host memory */
            copies = 1 + (double)ev_plant_variants((int64_t)in, (int64_t)llc, p->ref_cpu.variant_budget_bytes,
                                                   p->ops_per_graph);
            need += copies * in + (double)p->ops_per_graph * (double)c->rows * es;
        }
        if (need > mem / 2)
            return ev_err_set(
                err, EV_EUSAGE,
                "cases[%zu]: a worker would hold about %.0f bytes (the input twice, the output%s%s), "
                "more than half of this host's %.0f bytes of memory",
                i, need, flush > 0 ? ", the flush buffer" : "",
                copies > 0 ? ", the input's base and variants and the output slots" : "", mem);
    }
    return EV_OK;
}

/*
 * Asks the worker which backends it was built with (evident-worker
 * --backends prints them on one line).  Returns EV_OK when o->backend is
 * one; EV_EUNSUPPORTED, saying so, when it is not (a build without nvcc
 * has no cuda backend); EV_EPROC when the worker cannot answer.  Checked
 * before the store is opened, so a run the build cannot do records
 * nothing.
 */
static ev_status backend_built(const ev_run_opts *o, ev_err *err)
{
    char *argv[] = {(char *)o->worker_path, "--backends", NULL};
    ev_buf out = EV_BUF_INIT;
    ev_status rc = EV_OK;
    int st = ev_proc_capture(argv, &out, 0, 256);
    const char *p = out.data ? out.data : "";
    size_t n = strlen(o->backend);
    int found = 0;

    while (st == 0 && *p && !found) {
        size_t len = strcspn(p, " \n");
        found = len == n && !strncmp(p, o->backend, n);
        p += len + (p[len] != '\0');
    }
    if (st != 0)
        rc =
            ev_err_set(err, EV_EPROC, "the worker %s does not answer --backends (exit %d): rebuild it (make)",
                       o->worker_path, st);
    else if (!found)
        rc = ev_err_set(err, EV_EUNSUPPORTED,
                        "--backend %s: this build has no %s backend (nvcc was not found when it was built): "
                        "rebuild where the CUDA toolkit is installed, or use --backend cpu",
                        o->backend, o->backend);
    ev_buf_free(&out);
    return rc;
}

/* ---- shards ----------------------------------------------------------- */

/* The shards a store's run names (EV_Q_SHARDS, read by on_shard). */
typedef struct shard_seen {
    int64_t index, count; /* the first row's; -1 none */
    int mixed;            /* a row with another index or count */
    uint64_t *have;       /* bit per shard index seen (merged stores) */
    size_t n_have;
} shard_seen;

/* EV_Q_SHARDS row: keeps the first row's index and count, notes a row of
 * another shard (mixed), and marks the index seen (have, when given). */
static ev_status on_shard(void *ctx, const ev_row *r)
{
    shard_seen *c = ctx;
    ev_shard_rec sh;
    ev_row_shard(r, &sh);
    int64_t i = sh.shard_index, n = sh.shard_count;
    if (c->index < 0) {
        c->index = i;
        c->count = n;
    } else if (c->index != i || c->count != n) {
        c->mixed = 1;
    }
    if (c->have && i >= 0 && (size_t)i < c->n_have * 64 && n == c->count)
        c->have[i / 64] |= UINT64_C(1) << (i % 64);
    return EV_OK;
}

/*
 * A shard's store: continues the run it holds (OUT: *resume = 1) when it
 * is this shard's (the same index and count), starts one when it is empty
 * (*resume = 0; --phase rest refuses that: its main phase is not there).
 * A store holding an unsharded run, or another shard's, is refused
 * (EV_EUSAGE), so no shard's records land in another's store.
 */
static ev_status shard_store(sup *s, int *resume, ev_err *err)
{
    const ev_run_opts *o = s->o;
    shard_seen seen = {-1, -1, 0, NULL, 0};
    int64_t run;
    ev_err ignore = {""};
    ev_status rc;

    if (ev_store_last_run(s->st, &run, &ignore)) {
        if (o->shard_phase && !strcmp(o->shard_phase, "rest"))
            return ev_err_set(
                err, EV_EUSAGE,
                "--phase rest: store %s holds no run of shard %lld/%lld: run --phase main into it "
                "first",
                o->db_path, (long long)o->shard_index, (long long)o->shard_count);
        *resume = 0;
        return EV_OK;
    }
    if ((rc = ev_store_query(s->st, EV_Q_SHARDS, run, on_shard, &seen, err)))
        return rc;
    if (seen.index < 0)
        return ev_err_set(
            err, EV_EUSAGE,
            "--shard %lld/%lld: store %s holds run %lld, which is not a shard's: give a store of "
            "its own to each shard",
            (long long)o->shard_index, (long long)o->shard_count, o->db_path, (long long)run);
    if (seen.mixed || seen.index != o->shard_index || seen.count != o->shard_count)
        return ev_err_set(err, EV_EUSAGE,
                          "--shard %lld/%lld: store %s holds shard %lld/%lld%s: give each shard the store it "
                          "started",
                          (long long)o->shard_index, (long long)o->shard_count, o->db_path,
                          (long long)seen.index, (long long)seen.count,
                          seen.mixed ? " (and others: a merge)" : "");
    *resume = 1;
    return EV_OK;
}

/* --phase rest: every main job of the shard must have ended (an outcome
 * that is not interrupted), else EV_EUSAGE naming the first that has not. */
static ev_status shard_main_done(sup *s, ev_err *err)
{
    for (size_t i = 0; i < s->n_js; i++) {
        const jstate *j = &s->js[i];
        if (j->pj.phase == EV_PHASE_MAIN && (!j->has_outcome || j->outcome == EV_OUT_INTERRUPTED))
            return ev_err_set(err, EV_EUSAGE,
                              "--phase rest: job %s of shard %lld/%lld has not ended: run --phase main again "
                              "first (it continues where it stopped)",
                              j->pj.job_key, (long long)s->o->shard_index, (long long)s->o->shard_count);
    }
    return EV_OK;
}

/* What on_main_job (an EV_Q_JOBS callback) finds in a merged main phase. */
typedef struct main_jobs {
    const ev_plan *plan; /* the whole plan */
    size_t found;        /* its main jobs seen */
    char missing[160];   /* the first job the plan does not have, "" none */
} main_jobs;

/* EV_Q_JOBS row of the merged main phase: counts the whole plan's main
 * jobs, and keeps the first job the plan does not have (not a rescue). */
static ev_status on_main_job(void *ctx, const ev_row *r)
{
    main_jobs *m = ctx;
    ev_job_rec jr;
    ev_row_job(r, &jr);
    ptrdiff_t k = ev_plan_find(m->plan, jr.job_key);
    if (k >= 0 && (size_t)k < m->plan->n_main)
        m->found++;
    else if (k < 0 && !ev_job_key_in_phase(jr.job_key, EV_PHASE_RESCUE) && !m->missing[0])
        snprintf(m->missing, sizeof m->missing, "%s", jr.job_key);
    return EV_OK;
}

/*
 * --phase rest: the fit of the merged main phase.  main_db must hold one
 * run of this protocol, merged from all N shards (their shard rows), with
 * exactly the whole plan's main jobs; its fit (ev_obs_from_store over
 * every shard's main-phase medians) is recorded in this shard's store
 * once, and auto uses it.  Anything else is EV_EUSAGE with the reason.
 */
static ev_status shard_fit(sup *s, ev_err *err)
{
    const ev_run_opts *o = s->o;
    ev_store *m = NULL;
    ev_plan whole;
    run_ctx rcx;
    main_jobs mj;
    uint64_t have[EV_PLAN_MAX_SHARDS / 64];
    shard_seen seen = {-1, -1, 0, have, EV_PLAN_MAX_SHARDS / 64};
    int64_t run;
    ev_status rc;

    memset(&whole, 0, sizeof whole);
    memset(&rcx, 0, sizeof rcx);
    memset(have, 0, sizeof have);
    if (!o->main_db)
        return ev_err_set(err, EV_EUSAGE, "--phase rest needs --main MERGED.db (the merged main phase)");
    if ((rc = ev_store_open(o->main_db, EV_STORE_READONLY, &m, err)))
        return rc == EV_EIO ? EV_EUSAGE : rc;
    if (ev_store_last_run(m, &run, err)) {
        rc = ev_err_set(err, EV_EUSAGE, "--main %s: the store has no run", o->main_db);
        goto out;
    }
    if ((rc = ev_store_query(m, EV_Q_RUN, run, sup_on_run, &rcx, err)) ||
        (rc = ev_store_query(m, EV_Q_SHARDS, run, on_shard, &seen, err)))
        goto out;
    if (strcmp(rcx.protocol_id, s->proto_id)) {
        rc = ev_err_set(err, EV_EUSAGE, "--main %s: its run measured protocol %.12s..., this one is %.12s...",
                        o->main_db, rcx.protocol_id, s->proto_id);
        goto out;
    }
    if (seen.count != o->shard_count) {
        rc = ev_err_set(err, EV_EUSAGE, "--main %s: it is not a merge of %lld shards (it holds %lld)",
                        o->main_db, (long long)o->shard_count, (long long)(seen.count < 0 ? 0 : seen.count));
        goto out;
    }
    for (int64_t i = 0; i < o->shard_count; i++)
        if (!(have[i / 64] >> (i % 64) & 1)) {
            rc = ev_err_set(err, EV_EUSAGE, "--main %s: shard %lld/%lld is not in it: merge every shard",
                            o->main_db, (long long)i, (long long)o->shard_count);
            goto out;
        }
    if ((rc = ev_plan_build_sharded(&s->proto, o->shard_count, &whole, err)))
        goto out;
    memset(&mj, 0, sizeof mj);
    mj.plan = &whole;
    if ((rc = ev_store_query(m, EV_Q_JOBS, run, on_main_job, &mj, err)))
        goto out;
    if (mj.missing[0] || mj.found != whole.n_main) {
        rc = ev_err_set(
            err, EV_EUSAGE,
            "--main %s: it holds %zu of the plan's %zu main jobs%s%s: merge the main phase of every "
            "shard (evident merge)",
            o->main_db, mj.found, whole.n_main, mj.missing[0] ? ", and unplanned job " : "", mj.missing);
        goto out;
    }
    rc = sup_fit_phase(s, m, run, err);
out:
    ev_plan_free(&whole);
    ev_store_close(m);
    return rc;
}

/* EV_Q_SOURCES row: appends its path and SHA-256 to the snap_list ctx. */
typedef struct snap_list {
    ev_source_file *v;
    size_t n, cap;
} snap_list;
static ev_status on_source(void *ctx, const ev_row *r)
{
    snap_list *l = ctx;
    ev_source_rec sr;
    ev_row_source(r, &sr);
    if (ev_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v) || !(l->v[l->n].path = strdup(sr.path)))
        return EV_ENOMEM;
    snprintf(l->v[l->n++].sha256, sizeof l->v[0].sha256, "%s", sr.sha256);
    return EV_OK;
}

/* Builds the protocol's external kernels for this invocation
 * (ext_build.h), holding what each build reads to the run's snapshot as
 * the store keeps it (the same on --resume). */
static ev_status build_kernels(sup *s, ev_err *err)
{
    snap_list l = {NULL, 0, 0};
    char dir[4200];
    ev_status rc;

    snprintf(dir, sizeof dir, "%s.kernels-run%lld", s->o->db_path, (long long)s->run_id);
    rc = ev_store_query(s->st, EV_Q_SOURCES, s->run_id, on_source, &l, err);
    if (!rc)
        rc = ev_ext_build_all(&s->proto, s->proto_dir, s->o->source_root ? s->o->source_root : ".",
                              s->o->backend, dir, l.v, l.n, s->built, &s->n_built, &s->kernel_receipts, err);
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i].path);
    free(l.v);
    return rc;
}

/* The run's protocol: the file's bytes (a subset of them for --cases or
 * --arms: the subset is the run's protocol, its bytes what the store and
 * the bundle hold), parsed, its id, and its plan (one shard's part of it
 * for --shard), with a job state per planned job.  EV_EUSAGE for a file
 * that cannot be read. */
static ev_status load_protocol(sup *s, ev_err *err)
{
    ev_status rc;

    if ((rc = ev_read_file_max(s->o->protocol_path, EV_PROTO_MAX_BYTES, &s->bytes, err)))
        return EV_EUSAGE;
    /* its kernels' files are relative to its directory, wherever it lies */
    if (ev_ext_protocol_dir(s->o->protocol_path, s->proto_dir, sizeof s->proto_dir))
        return ev_err_set(err, EV_EUSAGE, "--protocol %s: the path is too long", s->o->protocol_path);
    if (s->o->cases || s->o->arms) {
        /* a quick loop: the subset is the run's protocol, its bytes what
         * the store and the bundle hold */
        ev_buf sub = EV_BUF_INIT;
        ev_proto_model model;
        char whole[65];
        if (s->o->model_bundle &&
            ((rc = ev_protocol_id(s->bytes.data ? s->bytes.data : "", s->bytes.len, whole)) ||
             (rc = ev_model_from_bundle(s->o->model_bundle, whole, s->o->backend, &model, err))))
            return rc;
        rc = ev_protocol_subset(s->bytes.data ? s->bytes.data : "", s->bytes.len, s->o->cases, s->o->arms,
                                s->o->model_bundle ? &model : NULL, &sub, err);
        if (rc) {
            ev_buf_free(&sub);
            return rc;
        }
        ev_buf_free(&s->bytes);
        s->bytes = sub;
    }
    if ((rc = ev_protocol_parse(s->bytes.data ? s->bytes.data : "", s->bytes.len, &s->proto, err)) ||
        (rc = ev_protocol_id(s->bytes.data ? s->bytes.data : "", s->bytes.len, s->proto_id)) ||
        (rc = ev_plan_build_sharded(&s->proto, s->o->shard_count > 0 ? s->o->shard_count : 1, &s->plan, err)))
        return rc;
    if (s->o->shard_count > 0)
        ev_plan_keep_shard(&s->plan, s->o->shard_index);
    s->js = calloc(s->plan.n + 1, sizeof *s->js);
    if (!s->js)
        return ev_err_set(err, EV_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->plan.n; i++)
        s->js[i].pj = s->plan.jobs[i];
    s->n_js = s->plan.n;
    s->total = s->plan.n;
    return EV_OK;
}

/* --resume: the store's last run, which must have this protocol and
 * backend; its status so far into the result.  EV_EUSAGE otherwise. */
static ev_status resume_run(sup *s, ev_err *err)
{
    ev_status rc;
    run_ctx rcx;

    memset(&rcx, 0, sizeof rcx);
    if (ev_store_last_run(s->st, &s->run_id, err))
        return ev_err_set(err, EV_EUSAGE, "--resume: the store has no run to resume");
    if ((rc = ev_store_query(s->st, EV_Q_RUN, s->run_id, sup_on_run, &rcx, err)) ||
        (rc = ev_store_query(s->st, EV_Q_RUN_STATUS, s->run_id, sup_on_status, s->res, err)))
        return rc;
    if (strcmp(rcx.protocol_id, s->proto_id))
        return ev_err_set(err, EV_EUSAGE,
                          "--resume: run %lld was started with protocol %.12s..., this file is %.12s...",
                          (long long)s->run_id, rcx.protocol_id, s->proto_id);
    if (strcmp(rcx.backend, s->o->backend))
        return ev_err_set(err, EV_EUSAGE, "--resume: run %lld uses backend %s, not %s", (long long)s->run_id,
                          rcx.backend, s->o->backend);
    return EV_OK;
}

/* EV_Q_INVOCATIONS callback: the host hash of the first invocation with
 * an environment record.  Only from that record on is the run's salt
 * fixed (host_salt.h): an invocation stopped before it hashed its host
 * under a salt no later one uses; and it measured nothing (every attempt
 * comes after the environment). */
static ev_status on_first_host(void *ctx, const ev_row *row)
{
    char(*first)[65] = ctx;
    ev_invocation_rec inv;
    ev_row_invocation(row, &inv);
    if (!(*first)[0] && inv.env_json && inv.host_hash)
        snprintf(*first, sizeof *first, "%s", inv.host_hash);
    return EV_OK;
}

/* --resume continues a run on the host that began it, and nowhere else: a
 * run's rounds and arms are compared as measured on one host and device
 * (a store carried to another machine would mix two boards in one run).
 * Checked before anything is written (the new invocation's host hash
 * against the run's first one, under the run's salt).  A sharded run's
 * shards may run on hosts of their own (a cluster's nodes): each shard's
 * store is its own run, and the merge says which host ran which. */
static ev_status resume_here(sup *s, ev_err *err)
{
    char first[65] = "";
    ev_status rc = ev_store_query(s->st, EV_Q_INVOCATIONS, s->run_id, on_first_host, &first, err);
    if (rc || !first[0] || !strcmp(first, s->host_hash))
        return rc;
    return ev_err_set(
        err, EV_EUSAGE,
        "--resume: run %lld began on another host (host hash %.12s..., this host %.12s...): its "
        "rounds compare only as measured on one host and device; finish it on that host, or start "
        "a new run in another store (--db)",
        (long long)s->run_id, first, s->host_hash);
}

/* A protocol that declares real-time priority for the cpu backend's
 * measured threads (SCHED_FIFO at EV_RULE_FIFO_PRIORITY, job.h): the
 * supervisor takes the priority above theirs, so that it still commits
 * their records and watches the clock while they measure (it sleeps
 * in poll otherwise); a process it forks starts at normal priority
 * (SCHED_RESET_ON_FORK).  Refused (no CAP_SYS_NICE), it runs at normal
 * priority, as its workers will. */
static int raise_priority(const sup *s)
{
    if (s->proto.cpu_realtime && !strcmp(s->o->backend, "cpu")) {
        struct sched_param sp = {.sched_priority = EV_RULE_FIFO_PRIORITY + 1};
        if (sched_getscheduler(0) == SCHED_OTHER &&
            sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0)
            return 1;
    }
    return 0;
}

/* The run's measuring CPUs' locks (cpulock.h): on the cpu backend, the
 * CPUs a worker runs on (the protocol's cpu_set, else this process's
 * affinity, which the worker inherits); none on cuda. */
static ev_status measuring_cpus(sup *s, ev_err *err)
{
    cpu_set_t set;
    if (strcmp(s->o->backend, "cpu"))
        return EV_OK;
    CPU_ZERO(&set);
    if (s->proto.n_cpus)
        for (size_t i = 0; i < s->proto.n_cpus; i++)
            CPU_SET(s->proto.cpu_set[i], &set);
    else if (sched_getaffinity(0, sizeof set, &set)) {
        snprintf(s->cpulock.why, sizeof s->cpulock.why, "sched_getaffinity: %s", strerror(errno));
        return EV_OK;
    }
    return ev_cpulock_open(&s->cpulock, &set, EV_CPULOCK_DIR, err);
}

ev_status ev_run(const ev_run_opts *o, ev_run_result *res, ev_err *err)
{
    sup s;
    ev_status rc;
    char hn[256] = "";
    int64_t t;
    int resume = o->resume, raised = 0;
    int rest = o->shard_count > 0 && o->shard_phase && !strcmp(o->shard_phase, "rest");

    memset(&s, 0, sizeof s);
    memset(res, 0, sizeof *res);
    sup_subreaper(); /* a job's orphans come here, to be named and killed (sup_reap.c) */
    s.o = o;
    s.res = res;
    s.memfd = -1;
    s.lock_fd = -1;
    ev_cpulock_init(&s.cpulock);            /* none held until measuring_cpus opens them (cpu) */
    s.ceil_mem_bpus = s.ceil_l2_bpus = NAN; /* until the ceilings complete (sup_ceiling_seen) */
    s.backoff_ms = EV_BACKOFF_FIRST_MS;
    s.t0 = mono_ns();
    res->resumed = resume;

    if ((rc = load_protocol(&s, err)))
        goto out;

    /* the code about to be measured is the code this evident was built
     * from (runner/build_id.h), before the store is touched */
    if ((rc = ev_build_check(o->source_root ? o->source_root : ".", err)) ||
        (rc = ev_ext_check_sources(s.proto_dir, s.proto.kernels, s.proto.n_kernels, o->backend, err)) ||
        (rc = host_bounds(&s.proto, o->backend, err)) || (rc = checkable_cases(&s.proto, err)) ||
        (rc = backend_built(o, err)) || (rc = ev_store_writer_lock(o->db_path, &s.lock_fd, err)) ||
        (rc = ev_store_open(o->db_path, EV_STORE_CREATE, &s.st, err)))
        goto out;
    if (o->shard_count > 0 && (rc = shard_store(&s, &resume, err)))
        goto out;
    if (resume) {
        if ((rc = resume_run(&s, err)))
            goto out;
        res->run_id = s.run_id;
        if (res->finished)
            goto out; /* nothing left to do */
    } else if ((rc = sup_create_run(&s, err))) {
        goto out;
    }
    res->run_id = s.run_id;

    gethostname(hn, sizeof hn - 1);
    if ((rc = ev_host_salt_for(s.st, s.run_id, s.host_salt, err)))
        goto out;
    ev_host_hash_salted(s.host_salt, hn, s.host_hash);
    if ((resume && o->shard_count == 0 && (rc = resume_here(&s, err))) ||
        (rc = ev_store_add_invocation(s.st, s.run_id, wall_ns(), resume, s.host_hash, &s.inv_id, err)) ||
        (o->shard_count > 0 &&
         (rc = ev_store_add_shard(s.st, s.inv_id, o->shard_index, o->shard_count, o->shard_phase, err))))
        goto out;
    s.memfd = memfd_create("evident-protocol", MFD_CLOEXEC);
    if (s.memfd < 0 || write(s.memfd, s.bytes.data, s.bytes.len) != (ssize_t)s.bytes.len) {
        rc = ev_err_set(err, EV_EIO, "memfd: %s", strerror(errno));
        goto out;
    }
    res->n_kernels = s.proto.n_kernels;
    if (s.proto.n_kernels && (rc = build_kernels(&s, err)))
        goto out;
    if ((rc = measuring_cpus(&s, err)))
        goto out;
    raised = raise_priority(&s);
    t = mono_ns();
    rc = sup_environment(&s, err);
    res->env_s = (double)(mono_ns() - t) / 1e9;
    if (rc || (rc = sup_load_state(&s, err)))
        goto out;
    for (size_t i = 0; i < s.n_js; i++)
        if (s.js[i].has_outcome && s.js[i].outcome != EV_OUT_INTERRUPTED)
            s.done++;
    res->shard_jobs = s.n_js;
    if (rest && (rc = shard_main_done(&s, err)))
        goto out;
    if (!rest && ((rc = compile_ahead(&s, err)) || (rc = sup_run_phase(&s, EV_PHASE_MAIN, err))))
        goto out;
    if (o->shard_count > 0 && !rest)
        goto out; /* --phase main: the merge and its fit come next */
    t = mono_ns();
    rc = rest ? shard_fit(&s, err) : sup_fit_phase(&s, s.st, s.run_id, err);
    res->fit_s = (double)(mono_ns() - t) / 1e9;
    if (rc || (rc = sup_run_phase(&s, EV_PHASE_POLICY, err)) || (rc = sup_finish(&s, err)))
        goto out;
out:
    if (raised) { /* the caller gets its normal priority back */
        struct sched_param sp = {.sched_priority = 0};
        sched_setscheduler(0, SCHED_OTHER, &sp);
    }
    res->wall_s = (double)(mono_ns() - s.t0) / 1e9;
    if (s.memfd >= 0)
        close(s.memfd);
    /* why the run measured without the CPUs' locks, if it did (a file,
     * the affinity or a lock the kernel refused): its host line says it */
    snprintf(res->cpulock_why, sizeof res->cpulock_why, "%s", s.cpulock.why);
    ev_cpulock_close(&s.cpulock);
    ev_store_close(s.st);
    ev_store_writer_unlock(s.lock_fd);
    ev_plan_free(&s.plan);
    ev_protocol_free(&s.proto);
    ev_buf_free(&s.bytes);
    free(s.js);
    free(s.ahead_ns);
    cJSON_Delete(s.kernel_receipts);
    return rc;
}

int ev_run_stage_default(const char *backend)
{
    return backend && !strcmp(backend, "cuda") ? 32 : 0;
}
