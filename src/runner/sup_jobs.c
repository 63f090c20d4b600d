/*
 * sup_jobs.c: the job loop: the run's torch peer script, a job's worker
 * arguments, staged processes (docs/runner.md, "Staged processes"), one
 * attempt, one phase (sup_int.h).
 */
#include "sup_int.h"

static void progress(sup *s, const jstate *j, int ended)
{
    ev_progress p;
    if (!s->o->progress)
        return;
    memset(&p, 0, sizeof p);
    p.phase = ev_phase_name(j->pj.phase);
    p.job_key = j->pj.job_key;
    p.ended = ended;
    p.outcome = ended && j->has_outcome ? ev_outcome_name(j->outcome) : NULL;
    p.done = s->done;
    p.total = s->total;
    p.failures = s->res->failures;
    p.elapsed_s = (double)(mono_ns() - s->t0) / 1e9;
    p.eta_s = s->job_s_n ? s->job_s_sum / (double)s->job_s_n * (double)(s->total - s->done) : -1;
    s->o->progress(s->o->progress_ctx, &p);
}

/* See sup_int.h. */
void sup_peer_script(const ev_run_opts *o, char *out, size_t cap)
{
    if (o->peer_script)
        snprintf(out, cap, "%s", o->peer_script);
    else
        snprintf(out, cap, "%s/kernels/peer_torch.py", o->source_root ? o->source_root : ".");
}

/* See sup_int.h. */
void sup_py_host(const ev_run_opts *o, char *out, size_t cap)
{
    char *slash;
    sup_peer_script(o, out, cap);
    slash = strrchr(out, '/');
    if (slash && (size_t)(slash + 1 - out) + sizeof "python_host.py" <= cap)
        memcpy(slash + 1, "python_host.py", sizeof "python_host.py");
    else
        snprintf(out, cap, "python_host.py");
}

/* See sup_int.h. */
void sup_python(const sup *s, char *out, size_t cap)
{
    if (ev_protocol_python(&s->proto, s->o->python, s->o->protocol_path, out, cap))
        snprintf(out, cap, "python3");
}

/* The argument strings of one worker command line. */
typedef struct wargs {
    char *argv[44];
    char case_s[24], coef_s[100], script[4096], cache[4096], spawn_s[24], ahead_s[24], python[4096];
} wargs;

/* Fills w->argv for job j (gated: with --gate-fd 5). */
static void job_argv(const sup *s, const jstate *j, int gated, wargs *w)
{
    const ev_proto_fault *fault = ev_protocol_fault(&s->proto, j->pj.arm);
    char **argv = w->argv;
    int ac = 0;
    struct timespec now;

    snprintf(w->case_s, sizeof w->case_s, "%lld", (long long)j->pj.case_index);
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(w->spawn_s, sizeof w->spawn_s, "%lld", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
    argv[ac++] = (char *)s->o->worker_path;
    argv[ac++] = "--backend";
    argv[ac++] = (char *)s->o->backend;
    argv[ac++] = "--protocol-fd";
    argv[ac++] = "4";
    argv[ac++] = "--record-fd";
    argv[ac++] = "3";
    argv[ac++] = "--case";
    argv[ac++] = w->case_s;
    argv[ac++] = "--arm";
    argv[ac++] = (char *)j->pj.arm;
    argv[ac++] = "--job-key";
    argv[ac++] = (char *)j->pj.job_key;
    argv[ac++] = "--spawn-ns";
    argv[ac++] = w->spawn_s;
    if (gated) {
        argv[ac++] = "--gate-fd";
        argv[ac++] = "5";
    }
    if (j->pj.phase == EV_PHASE_RESCUE)
        argv[ac++] = "--retry";
    sup_python(s, w->python, sizeof w->python);
    if (ev_is_arm(j->pj.arm, EV_ARM_TORCH)) {
        sup_peer_script(s->o, w->script, sizeof w->script);
        argv[ac++] = "--python";
        argv[ac++] = w->python;
        argv[ac++] = "--peer-script";
        argv[ac++] = w->script;
        /* one compile cache per store: a case compiled once per run, its
         * later rounds load the files (docs/runner.md, "torch-compile") */
        ev_torch_cache_path(s->o->db_path, s->run_id, w->cache, sizeof w->cache);
        argv[ac++] = "--torch-cache";
        argv[ac++] = w->cache;
        if (s->ahead_ns && j->pj.case_index >= 0 && s->ahead_ns[j->pj.case_index] > 0) {
            snprintf(w->ahead_s, sizeof w->ahead_s, "%lld", (long long)s->ahead_ns[j->pj.case_index]);
            argv[ac++] = "--compile-ahead-ns";
            argv[ac++] = w->ahead_s;
        }
    }
    if (ev_protocol_kernel(&s->proto, j->pj.arm)) {
        const ev_ext_built *k = ev_ext_built_of(s->built, s->n_built, j->pj.arm);
        if (ev_protocol_kernel(&s->proto, j->pj.arm)->python) {
            /* a Python arm: its interpreter and its host (backend_python.h) */
            sup_py_host(s->o, w->script, sizeof w->script);
            argv[ac++] = "--python";
            argv[ac++] = w->python;
            argv[ac++] = "--py-host";
            argv[ac++] = w->script;
        }
        if (k && k->ok) {
            argv[ac++] = "--kernel-lib";
            argv[ac++] = (char *)k->lib;
        } else if (k) {
            argv[ac++] = "--kernel-error";
            argv[ac++] = (char *)k->error;
        }
    }
    /* auto and the wrong-schedule fault arm ask the selector with the fit */
    if ((ev_is_arm(j->pj.arm, EV_ARM_AUTO) || (fault && fault->kind == EV_FAULT_WRONG_SCHEDULE)) &&
        s->have_coef) {
        char x[32], y[32], z[32];
        ev_json_format_double(s->coef.a0, x);
        ev_json_format_double(s->coef.aP, y);
        ev_json_format_double(s->coef.aD, z);
        snprintf(w->coef_s, sizeof w->coef_s, "%s,%s,%s", x, y, z);
        argv[ac++] = "--coef";
        argv[ac++] = w->coef_s;
    }
    argv[ac] = NULL;
}

/* The staged process of job j, or NULL. */
static wproc *staged_of(sup *s, const jstate *j)
{
    for (size_t i = 0; i < s->n_staged; i++)
        if (s->staged[i].job == j)
            return &s->staged[i];
    return NULL;
}

/* Removes staged entry w (after it was taken or cancelled). */
static void staged_drop(sup *s, wproc *w)
{
    size_t i = (size_t)(w - s->staged);
    memmove(&s->staged[i], &s->staged[i + 1], (s->n_staged - i - 1) * sizeof *w);
    s->n_staged--;
}

/* Cancels every staged process (the phase ended or the run stops). */
static void unstage_all(sup *s)
{
    for (size_t i = 0; i < s->n_staged; i++)
        sup_wproc_cancel(&s->staged[i]);
    s->n_staged = 0;
}

/* A job whose last attempt is missing or interrupted: the phase runs it. */
static int pending(const jstate *j, ev_phase ph)
{
    return j->pj.phase == ph && (!j->has_outcome || j->outcome == EV_OUT_INTERRUPTED);
}

/*
 * Stages the jobs that follow js[from] in phase ph: the next one, and
 * every torch-compile job among the next stage_ahead (python and torch's
 * import take seconds; a native job's preparation takes milliseconds).
 * A staged process does CPU-only work and waits at its gate; nothing of
 * it touches the device before its release (docs/runner.md).
 */
static void stage_next(sup *s, ev_phase ph, size_t from)
{
    size_t seen = 0;

    if (s->o->stage_ahead <= 0)
        return;
    for (size_t i = from + 1; i < s->n_js && seen < (size_t)s->o->stage_ahead; i++) {
        jstate *j = &s->js[i];
        wargs w;
        ev_err e;
        if (!pending(j, ph))
            continue;
        seen++;
        if (staged_of(s, j) || (seen > 1 && !ev_is_arm(j->pj.arm, EV_ARM_TORCH)))
            continue;
        if (s->n_staged >= EV_MAX_STAGE_AHEAD)
            break;
        job_argv(s, j, 1, &w);
        /* staging only saves time: a process that cannot be started now
         * (fork or pipe refused) is started at its turn, where a failure
         * counts */
        if (sup_spawn_worker(s, w.argv, 1, &s->staged[s->n_staged], &e))
            break;
        s->staged[s->n_staged++].job = j;
    }
}

/* After attempt a's worker was reaped: what it left running (sup_reap.c)
 * is killed, and named in its process record, which makes the attempt
 * failed-protocol (its records not ok), or adds to the reason it failed. */
static void left_behind(sup *s, att *a)
{
    ev_buf left = EV_BUF_INIT;
    if (sup_sweep(s, &left) == EV_OK && left.len) {
        char own[sizeof a->protocol_error];
        snprintf(own, sizeof own, "%s", a->records_ok ? "" : a->protocol_error);
        ev_leftover_reason(own, left.data, a->protocol_error, sizeof a->protocol_error);
        a->records_ok = 0;
    }
    ev_buf_free(&left);
}

/* Waits ms milliseconds, or less when a stop is requested (the stop pipe
 * becomes readable).  Returns the ns it waited. */
static int64_t wait_ms(const sup *s, int64_t ms)
{
    int64_t t0 = mono_ns(), left;
    while (!stopping(s) && (left = ms - (mono_ns() - t0) / 1000000) > 0) {
        struct pollfd pf = {s->o->stop_fd, POLLIN, 0};
        poll(&pf, s->o->stop_fd >= 0 ? 1 : 0, (int)left);
    }
    return mono_ns() - t0;
}

/* Adds what attempt a and its outcome say of the host and the runner's
 * adaptations to the run's summary (ev_run_result): its host facts, its
 * re-calibrations, and a sample rule it broke, with the rule's likely
 * cause and what to do (ev_rule_cause). */
static void note_host(sup *s, const jstate *j, const att *a, int rule_failed)
{
    ev_run_result *r = s->res;
    const ev_rule_host *h = &a->rules.host;
    if (h->known) {
        double lo = h->load_start < h->load_end ? h->load_start : h->load_end;
        double hi = h->load_start > h->load_end ? h->load_start : h->load_end;
        if (!r->host_attempts || lo < r->load_lo)
            r->load_lo = lo;
        if (!r->host_attempts || hi > r->load_hi)
            r->load_hi = hi;
        r->host_attempts++;
        r->cpus = h->cpus;
        if (h->fifo)
            r->fifo_attempts++;
        else if (!r->refused[0])
            snprintf(r->refused, sizeof r->refused, "%s", h->refused);
    }
    r->recalibrations += a->rules.n_recal;
    if (!rule_failed)
        return;
    r->rule_failures++;
    size_t len = strlen(r->rule_lines), fl = 0;
    char cause[600], figs[400] = "";
    if (!strncmp(a->protocol_error, EV_RULE_PREFIX EV_RULE_PLAUSIBLE_NAME,
                 strlen(EV_RULE_PREFIX EV_RULE_PLAUSIBLE_NAME)))
        snprintf(
            cause, sizeof cause,
            "likely cause: not host load (a busy host makes samples slower, never faster): the kernel "
            "skipped work or its timer is wrong; what to do: look at what it computes and how it is timed");
    else
        ev_rule_cause(h, cause, sizeof cause);
    /* the figures: every hot sample, as measured, and its replays */
    for (size_t i = 0; i < a->rules.n_hot && fl + 1 < sizeof figs; i++) {
        int w = snprintf(figs + fl, sizeof figs - fl, "%s%.3g", i ? " " : "", a->hot[i].elapsed_ms);
        fl += w > 0 ? (size_t)w : 0;
    }
    if (len + 1 < sizeof r->rule_lines) {
        int w = snprintf(r->rule_lines + len, sizeof r->rule_lines - len,
                         "%s attempt %lld: %s\n  hot samples (ms): %s%s\n%s%s%s", j->pj.job_key,
                         (long long)j->last_attempt, a->protocol_error, figs[0] ? figs : "none",
                         a->rules.n_recal ? " (re-calibrated after a drifted sample)" : "",
                         cause[0] ? "  " : "", cause, cause[0] ? "\n" : "");
        if (w < 0 || (size_t)w >= sizeof r->rule_lines - len)
            r->rule_lines[len] = '\0'; /* a line that does not fit is left out whole */
    }
}

/* Runs one new attempt of job j (js[index]), the run's measuring CPUs
 * held (run_attempt): backoff_ns (-1: none) its rescue's backoff, lock_ns
 * the wait for the CPUs (0: none), recorded as its cold timings.  EV_EINTR
 * when the run was stopped during it (recorded interrupted). */
static ev_status run_held(sup *s, size_t index, int64_t backoff_ns, int64_t lock_ns, ev_err *err)
{
    jstate *j = &s->js[index];
    wproc proc, *st = staged_of(s, j);
    wargs wa;
    att a;
    child_end ce;
    ev_process_row p;
    ev_status rc;
    int64_t attempt_id, started;

    memset(&a, 0, sizeof a);
    a.in_span = a.out_span = -1;
    a.variants = 1;
    if (st) {
        proc = *st;
        staged_drop(s, st);
    } else {
        job_argv(s, j, 0, &wa);
        if ((rc = sup_spawn_worker(s, wa.argv, 0, &proc, err)))
            return rc;
    }
    started = wall_ns();
    rc = ev_store_add_attempt(s->st, j->job_id, j->last_attempt + 1, s->inv_id, started, &attempt_id, err);
    if (rc) {
        sup_wproc_cancel(&proc);
        return rc;
    }
    j->last_attempt++;
    j->last_attempt_id = attempt_id;
    j->has_outcome = 0;
    s->res->jobs_run++;
    a.attempt_id = attempt_id;
    if ((backoff_ns >= 0 &&
         (rc = ev_store_add_cold_timing(s->st, attempt_id, EV_RULE_BACKOFF, backoff_ns, err))) ||
        (lock_ns > 0 && (rc = ev_store_add_cold_timing(s->st, attempt_id, EV_RULE_CPULOCK, lock_ns, err)))) {
        sup_wproc_cancel(&proc);
        return rc;
    }
    stage_next(s, j->pj.phase, index);

    rc = sup_run_child(s, &proc, &a, &ce, err);
    if (!rc && a.records_ok && a.end && !a.skipped && !a.validation_failed && ce.has_exit &&
        ce.exit_code == 0 && !ce.timed_out && !ce.interrupted)
        sup_apply_rules(s, j, &a);
    if (!rc)
        left_behind(s, &a);
    memset(&p, 0, sizeof p);
    p.pid = ce.pid ? ce.pid : -1;
    if (a.store_failed) {
        /* Some of its records are not in the store: never completed. */
        ce.interrupted = 1;
        a.records_ok = 0;
        snprintf(a.protocol_error, sizeof a.protocol_error, "%s", a.store_error);
    }
    p.has_exit = ce.has_exit;
    p.exit_code = ce.exit_code;
    p.has_signal = ce.has_signal;
    p.signal = ce.signal;
    p.timed_out = ce.timed_out;
    p.interrupted = ce.interrupted;
    p.skipped = a.skipped;
    p.skip_reason = a.skipped ? a.skip_reason : NULL;
    p.record_count = a.count;
    p.records_ok = a.records_ok;
    p.protocol_error = a.records_ok ? NULL : a.protocol_error;
    p.affinity = a.affinity;
    p.stderr_tail = ce.err_tail.data ? ce.err_tail.data : "";
    p.ended_ns = wall_ns();
    p.wall_ns = ce.wall_ns;
    {
        ev_err e2;
        ev_status prc = ev_store_add_process(s->st, attempt_id, &p, rc ? &e2 : err);
        if (!rc && prc)
            rc = prc;
    }
    ev_buf_free(&ce.err_tail);
    if (rc) {
        sup_att_free(&a);
        return rc;
    }
    j->has_outcome = 1;
    ev_process_facts f;
    ev_process_row_facts(&p, a.validation_failed, &f);
    j->outcome = ev_outcome_derive(&f);
    j->rule_failed = j->outcome == EV_OUT_FAILED_PROTOCOL && !a.records_ok &&
                     !strncmp(a.protocol_error, EV_RULE_PREFIX, strlen(EV_RULE_PREFIX));
    note_host(s, j, &a, j->rule_failed);
    sup_ceiling_seen(s, j, &a);
    sup_att_free(&a);
    if (backoff_ns >= 0) /* the next rescue of a rule failure waits longer while they keep failing */
        s->backoff_ms = j->rule_failed
                            ? (2 * s->backoff_ms < EV_BACKOFF_MAX_MS ? 2 * s->backoff_ms : EV_BACKOFF_MAX_MS)
                            : EV_BACKOFF_FIRST_MS;
    snprintf(j->skip_reason, sizeof j->skip_reason, "%.159s", a.skipped ? a.skip_reason : "");
    s->done++;
    s->job_s_sum += (double)ce.wall_ns / 1e9;
    s->job_s_n++;
    s->res->jobs_s += (double)ce.wall_ns / 1e9;
    s->res->compile_s += (double)a.compile_ns / 1e9;
    s->res->open_s += (double)a.open_ns / 1e9;
    if (a.warmup)
        s->res->demanded_s +=
            (s->proto.warmup_ms + (double)s->proto.samples * s->proto.target_sample_ms) / 1e3;
    if (j->outcome != EV_OUT_COMPLETED && j->outcome != EV_OUT_SKIPPED && j->outcome != EV_OUT_INTERRUPTED)
        s->res->failures++;
    progress(s, j, 1);
    if (ce.interrupted && !ce.timed_out && stopping(s))
        return ev_err_set(err, EV_EINTR, "stopped by a signal");
    return EV_OK;
}

static int stop_asked(void *ctx)
{
    return stopping(ctx);
}

/* Runs one new attempt of job j (js[index]).  A rescue of a job whose
 * attempt broke a sample rule in this invocation waits s->backoff_ms
 * first (EV_BACKOFF_FIRST_MS); then the attempt takes the run's measuring
 * CPUs (cpulock.h; none on cuda), waiting while another run measures on
 * them, and gives them back once it was reaped.  Both waits are its cold
 * timings ("backoff", "cpu-lock").  EV_EINTR when the run was stopped. */
static ev_status run_attempt(sup *s, size_t index, ev_err *err)
{
    jstate *j = &s->js[index];
    int64_t backoff_ns = -1, lock_ns;
    ev_status rc;

    progress(s, j, 0);
    if (j->pj.phase == EV_PHASE_RESCUE && j->last_attempt == 0 && j->pj.retry_of >= 0 &&
        (size_t)j->pj.retry_of < s->n_js && s->js[j->pj.retry_of].rule_failed) {
        backoff_ns = wait_ms(s, s->backoff_ms);
        s->res->backoffs++;
        s->res->backoff_s += (double)backoff_ns / 1e9;
    }
    lock_ns = ev_cpulock_take(&s->cpulock, stop_asked, s);
    if (lock_ns < 0)
        return ev_err_set(err, EV_EINTR, "stopped by a signal");
    if (lock_ns > 0) {
        s->res->cpulock_waits++;
        s->res->cpulock_s += (double)lock_ns / 1e9;
    }
    rc = run_held(s, index, backoff_ns, lock_ns, err);
    ev_cpulock_give(&s->cpulock);
    return rc;
}

/* Runs every job of a phase whose last attempt is missing or interrupted. */
ev_status sup_run_phase(sup *s, ev_phase ph, ev_err *err)
{
    for (size_t i = 0; i < s->n_js; i++) {
        ev_status rc;
        if (!pending(&s->js[i], ph))
            continue;
        if (stopping(s)) {
            unstage_all(s);
            return ev_err_set(err, EV_EINTR, "stopped by a signal");
        }
        if ((rc = run_attempt(s, i, err))) {
            unstage_all(s);
            return rc;
        }
    }
    unstage_all(s);
    return EV_OK;
}
