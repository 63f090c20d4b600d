/*
 * sup_finish.c: the environment probe and record, the fit between the
 * phases, rescue and the run's status (sup_int.h).
 */
#include "sup_int.h"
#include "khost.h"

/* ---- environment ------------------------------------------------------ */

/* How an external kernel runs on the cpu backend (khost.h): in a process
 * of its own under seccomp, Landlock where the host's kernel has it (its
 * ABI), and the rules that still cannot hold there, each a sentence. */
static void kernel_isolation(cJSON *env)
{
    cJSON *k = cJSON_AddObjectToObject(env, "kernel_isolation"), *l;
    if (!k)
        return;
    ev_json_add_str(k, "process", EV_KHOST_PROGRAM);
    ev_json_add_str(k, "shared", "the inputs, the outputs, the call list and the control block (one memfd)");
    ev_json_add_str(k, "seccomp",
                    "an allowlist: futex, anonymous memory without exec, the clock, exit; any "
                    "other call stops the kernel and fails its job, named");
    ev_json_add_i64(k, "landlock_abi", ev_khost_landlock_abi());
    l = cJSON_AddArrayToObject(k, "not_held");
    for (size_t i = 0; l && ev_khost_not_held[i]; i++)
        cJSON_AddItemToArray(l, cJSON_CreateString(ev_khost_not_held[i]));
}

/* Runs the probe worker; builds the redacted environment record. */
ev_status sup_environment(sup *s, ev_err *err)
{
    char *argv[] = {(char *)s->o->worker_path,
                    "--backend",
                    (char *)s->o->backend,
                    "--protocol-fd",
                    "4",
                    "--record-fd",
                    "3",
                    "--probe",
                    NULL};
    att a;
    wproc proc;
    child_end ce;
    cJSON *env = NULL, *dev = NULL;
    const cJSON *d;
    ev_buf json = EV_BUF_INIT, mid = EV_BUF_INIT;
    struct utsname u;
    char profile[65], kernel[400], hh[65];
    ev_status rc;

    memset(&a, 0, sizeof a);
    a.probe = 1;
    if ((rc = sup_spawn_worker(s, argv, 0, &proc, err)))
        return rc;
    rc = sup_run_child(s, &proc, &a, &ce, err);
    ev_buf_free(&ce.err_tail);
    if (rc)
        goto out;
    /* a stop during the probe is a stop (the probe was ended for it), not
     * a probe that failed */
    if ((ce.interrupted || !a.end) && stopping(s)) {
        rc = ev_err_set(err, EV_EINTR, "stopped by a signal");
        goto out;
    }
    if (!a.hello_rec || !a.end || !a.records_ok || !ce.has_exit || ce.exit_code) {
        rc = ev_err_set(err, EV_EPROC, "the %s backend's probe failed (%s)", s->o->backend,
                        a.records_ok ? "exit status" : a.protocol_error);
        goto out;
    }
    d = cJSON_GetObjectItemCaseSensitive(a.hello_rec, "device");
    env = cJSON_CreateObject();
    dev = d ? cJSON_Duplicate(d, 1) : cJSON_CreateObject();
    if (!env || !dev) {
        rc = ev_err_set(err, EV_ENOMEM, "environment: out of memory");
        goto out;
    }
    {
        const cJSON *sms = cJSON_GetObjectItemCaseSensitive(dev, "sms");
        const cJSON *uuid = cJSON_GetObjectItemCaseSensitive(dev, "uuid");
        s->sms = cJSON_IsNumber(sms) ? (int64_t)sms->valuedouble : 1;
        if (cJSON_IsString(uuid)) {
            char uh[65];
            if (uuid->valuestring[0]) {
                ev_host_hash_salted(s->host_salt, uuid->valuestring, uh);
                cJSON_AddStringToObject(dev, "uuid_hash", uh);
            }
            cJSON_DeleteItemFromObjectCaseSensitive(dev, "uuid");
        }
    }
    uname(&u);
    snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
    ev_host_hash_salted(s->host_salt, u.nodename, hh);
    ev_json_add_str(env, "backend", s->o->backend);
    ev_json_add_str(env, "host_hash", hh);
    if (s->host_salt[0])
        ev_json_add_str(env, "host_salt", s->host_salt);
    if (!ev_read_file("/etc/machine-id", &mid, NULL) && mid.len) {
        char mh[65];
        mid.data[strcspn(mid.data, "\n")] = '\0';
        ev_host_hash_salted(s->host_salt, mid.data, mh);
        ev_json_add_str(env, "machine_id_hash", mh);
    }
    ev_json_add_str(env, "kernel", kernel);
    ev_json_add_str(env, "compiler", __VERSION__);
    ev_json_add_str(env, "cflags", EV_BUILD_CFLAGS);
    ev_json_add_str(env, "affinity", a.affinity);
    {
        /* the values this run used, the defaults it took included
         * (protocol.h: verify-bundle holds them to protocol.json) */
        cJSON *pv = NULL;
        if ((rc = ev_protocol_values(&s->proto, &pv)) || !cJSON_AddItemToObject(env, "protocol_values", pv)) {
            cJSON_Delete(pv);
            rc = ev_err_set(err, EV_ENOMEM, "environment: out of memory");
            goto out;
        }
    }
    if (s->kernel_receipts && cJSON_GetArraySize(s->kernel_receipts)) {
        /* the external kernels built for this invocation (ext_build.h) */
        cJSON_AddItemToObject(env, "kernels", s->kernel_receipts);
        s->kernel_receipts = NULL;
        if (!strcmp(s->o->backend, "cpu"))
            kernel_isolation(env);
    }
    ev_json_add_i64(env, "threads", s->sms);
    cJSON_AddItemToObject(env, "device", dev);
    dev = NULL;
    if ((rc = ev_json_print(env, 0, &json))) {
        ev_err_set(err, rc, "environment: cannot serialise");
        goto out;
    }
    /* ev_json_print appends "\n": the record is the bytes without it. */
    json.data[--json.len] = '\0';
    {
        ev_buf red = EV_BUF_INIT;
        if ((rc = ev_redact_paths(json.data, json.len, &red))) {
            ev_err_set(err, rc, "environment: out of memory");
            goto out;
        }
        ev_buf_free(&json);
        json = red;
    }
    if ((rc = ev_sha256_hex(json.data, json.len, profile))) {
        ev_err_set(err, rc, "environment: sha256 failed");
        goto out;
    }
    rc = ev_store_add_environment(s->st, s->inv_id, profile, json.data, err);
out:
    cJSON_Delete(a.hello_rec);
    cJSON_Delete(env);
    cJSON_Delete(dev);
    ev_buf_free(&json);
    ev_buf_free(&mid);
    return rc;
}

/* ---- fit -------------------------------------------------------------- */

/*
 * The fit phase: the observations and exclusions are the model's own
 * reading of the store (ev_obs_from_store: main-phase hot medians of
 * default, rows1 and rows2 of every case whose jobs completed; holdout
 * cases carried with their role; S from the bindings), so that `evident
 * run`, `evident fit --db` and the exporter fit the same numbers.  Records
 * the fit once per run.  A failed fit is not a run failure: fit_note says
 * why and auto runs the default schedule.
 */
ev_status sup_fit_phase(sup *s, ev_store *from, int64_t run, ev_err *err)
{
    ev_obs *obs = NULL;
    ev_excluded *ex = NULL;
    size_t n_obs = 0, n_ex = 0;
    int64_t sms = 0, fits = 0;
    ev_fit *fit = NULL;
    ev_fit_input in;
    ev_buf json = EV_BUF_INIT;
    ev_err fe = {""};
    ev_status rc = EV_OK;

    if (ev_obs_from_store(from, run, s->proto.model_schedules, &obs, &n_obs, &ex, &n_ex, &sms, &fe)) {
        snprintf(s->res->fit_note, sizeof s->res->fit_note,
                 "no fit (observations: %.200s): auto runs the default schedule", fe.msg);
        goto out;
    }
    memset(&in, 0, sizeof in);
    in.obs = obs;
    in.n_obs = n_obs;
    in.excluded = ex;
    in.n_excluded = n_ex;
    in.sms = sms > 0 ? sms : s->sms;
    in.threshold = s->proto.decision_threshold;
    in.scheds = s->proto.model_schedules;
    if (ev_model_fit(&in, &fit, &fe)) {
        snprintf(s->res->fit_note, sizeof s->res->fit_note, "no fit (%.200s): auto runs the default schedule",
                 fe.msg);
        goto out;
    }
    s->coef = *ev_fit_coef(fit);
    s->have_coef = 1;
    if ((rc = ev_store_query(s->st, EV_Q_FITS, s->run_id, sup_on_count, &fits, err)))
        goto out;
    if (fits == 0) {
        int64_t fit_id;
        if ((rc = ev_fit_to_json(fit, &json, err)))
            goto out;
        rc = ev_store_add_fit(s->st, s->run_id, wall_ns(), json.data, &fit_id, err);
    }
out:
    if (!rc && s->proto.model_from.set) {
        /* a subset: auto takes the earlier run's coefficients (model_from.h);
         * the run's own fit is still recorded as its fit */
        s->coef.a0 = s->proto.model_from.a0;
        s->coef.aP = s->proto.model_from.aP;
        s->coef.aD = s->proto.model_from.aD;
        s->have_coef = 1;
        snprintf(s->res->fit_note, sizeof s->res->fit_note,
                 "auto uses the coefficients of bundle %.12s... (--model: model_from), not this run's fit",
                 s->proto.model_from.bundle_sha256);
    }
    ev_fit_free(fit);
    ev_buf_free(&json);
    free(obs);
    free(ex);
    return rc;
}

/* ---- rescue and status ------------------------------------------------ */

/* Outcomes of the static plan's jobs (main, policy: final by now). */
static ev_status plan_outcomes(sup *s, ev_outcome **out, ev_err *err)
{
    ev_outcome *o = calloc(s->plan.n ? s->plan.n : 1, sizeof *o);
    if (!o)
        return ev_err_set(err, EV_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->plan.n; i++)
        o[i] = s->js[i].has_outcome ? s->js[i].outcome : EV_OUT_INTERRUPTED;
    *out = o;
    return EV_OK;
}

/* Counts the skipped main and policy jobs into res->skipped and lists
 * each distinct (arm, reason) once in res->skips: a skip never fails the
 * run and is never silent. */
static void skips(sup *s, const ev_outcome *outc)
{
    size_t len = 0, lim = s->plan.n_main + s->plan.n_policy;

    s->res->skipped = 0;
    s->res->skips[0] = '\0';
    for (size_t i = 0; i < lim; i++) {
        int seen = 0;
        if (outc[i] != EV_OUT_SKIPPED)
            continue;
        s->res->skipped++;
        for (size_t k = 0; k < i && !seen; k++)
            seen = outc[k] == EV_OUT_SKIPPED && !strcmp(s->js[k].pj.arm, s->js[i].pj.arm) &&
                   !strcmp(s->js[k].skip_reason, s->js[i].skip_reason);
        if (!seen && len < sizeof s->res->skips) {
            int w = snprintf(s->res->skips + len, sizeof s->res->skips - len, "%s%s: %s", len ? "\n" : "",
                             s->js[i].pj.arm, s->js[i].skip_reason[0] ? s->js[i].skip_reason : "(no reason)");
            len += w > 0 ? (size_t)w : 0;
        }
    }
}

/* Plans the rescue jobs from the outcomes, inserts those not yet in the
 * store, runs them, then recheck, then sets the run status once. */
ev_status sup_finish(sup *s, ev_err *err)
{
    ev_outcome *outc = NULL, *rout = NULL;
    ev_plan_job *rj = NULL;
    size_t n_r = 0;
    const char *status, *rstatus;
    ev_status rc;

    if ((rc = plan_outcomes(s, &outc, err)) ||
        (rc = ev_plan_rescue(&s->proto, &s->plan, outc, &rj, &n_r, err)))
        goto out;
    s->total += n_r;
    for (size_t k = 0; k < n_r; k++) {
        int found = 0;
        for (size_t i = s->plan.n; i < s->n_js; i++)
            if (!strcmp(s->js[i].pj.job_key, rj[k].job_key))
                found = 1;
        if (!found) {
            jstate *j = realloc(s->js, (s->n_js + 1) * sizeof *s->js);
            if (!j) {
                rc = ev_err_set(err, EV_ENOMEM, "out of memory");
                goto out;
            }
            s->js = j;
            j = &s->js[s->n_js];
            memset(j, 0, sizeof *j);
            j->pj = rj[k];
            if ((rc = sup_add_job(s, &rj[k], s->js[rj[k].retry_of].job_id, &j->job_id, err)))
                goto out;
            s->n_js++;
        }
    }
    if ((rc = sup_run_phase(s, EV_PHASE_RESCUE, err)) || (rc = sup_run_phase(s, EV_PHASE_RECHECK, err)))
        goto out;
    rout = calloc(n_r ? n_r : 1, sizeof *rout);
    if (!rout) {
        rc = ev_err_set(err, EV_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < n_r; k++)
        for (size_t i = s->plan.n; i < s->n_js; i++)
            if (!strcmp(s->js[i].pj.job_key, rj[k].job_key))
                rout[k] = s->js[i].has_outcome ? s->js[i].outcome : EV_OUT_INTERRUPTED;
    ev_plan_run_status(&s->plan, outc, rj, rout, n_r, &status, &rstatus);
    skips(s, outc);
    if ((rc = ev_store_set_run_status(s->st, s->run_id, status, rstatus, wall_ns(), err)))
        goto out;
    s->res->finished = 1;
    snprintf(s->res->status, sizeof s->res->status, "%s", status);
    snprintf(s->res->rescue_status, sizeof s->res->rescue_status, "%s", rstatus ? rstatus : "");
out:
    free(outc);
    free(rout);
    free(rj);
    return rc;
}
