/*
 * plan.c: the job plan as a pure function of the protocol (plan.h), and the
 * rescue list and run status as pure functions of outcomes.  The shuffle is
 * written out here (splitmix64, Fisher-Yates from the last element down)
 * so that any reimplementation gets the same order; docs/runner.md states
 * it too.
 */
#include "plan.h"

#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ev_phase_name(ev_phase p)
{
    static const char *const names[EV_PHASE_COUNT] = {"main", "policy", "rescue", "recheck"};
    return (unsigned)p < EV_PHASE_COUNT ? names[p] : "?";
}

int ev_phase_parse(const char *name, ev_phase *out)
{
    for (int i = 0; i < EV_PHASE_COUNT; i++)
        if (!strcmp(name, ev_phase_name((ev_phase)i))) {
            *out = (ev_phase)i;
            return 0;
        }
    return -1;
}

/* splitmix64: advances *state and returns the next 64-bit value. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Fills *j (plan_order and retry_of set by the caller). */
static void fill_job(ev_plan_job *j, ev_phase phase, int64_t case_index, const char *arm, const char *label)
{
    char c[24];

    memset(j, 0, sizeof *j);
    j->phase = phase;
    j->case_index = case_index;
    j->retry_of = -1;
    snprintf(j->arm, sizeof j->arm, "%s", arm);
    snprintf(j->label, sizeof j->label, "%s", label);
    if (case_index < 0)
        snprintf(c, sizeof c, "-");
    else
        snprintf(c, sizeof c, "%lld", (long long)case_index);
    snprintf(j->job_key, sizeof j->job_key, "%s/%s/%s/%s", ev_phase_name(phase), c, arm, label);
}

/* Returns 1 when arm runs on case ci of proto (rows4 not where B is 4; a
 * fault arm only on its cases).  Phases are the caller's business. */
static int arm_applies(const ev_protocol *proto, const char *arm, size_t ci)
{
    const ev_proto_fault *f = ev_protocol_fault(proto, arm);

    if (!strcmp(arm, "rows4") && proto->cases[ci].default_rows == 4)
        return 0;
    if (f && f->cases) {
        for (size_t k = 0; k < f->n_cases; k++)
            if (f->cases[k] == (int64_t)ci)
                return 1;
        return 0;
    }
    return 1;
}

/* Returns 1 when arm is a policy-phase fault arm (kind wrong-schedule: it
 * needs the fit's coefficients, as auto does). */
static int policy_arm(const ev_protocol *proto, const char *arm)
{
    const ev_proto_fault *f = ev_protocol_fault(proto, arm);
    return f && f->kind == EV_FAULT_WRONG_SCHEDULE;
}

ev_status ev_plan_build(const ev_protocol *proto, ev_plan *out, ev_err *err)
{
    ev_plan plan;
    size_t cap, n = 0;
    uint64_t state;

    memset(&plan, 0, sizeof plan);
    memset(out, 0, sizeof *out);
    /* main and policy arms are disjoint: main + policy <= cases x (arms + 1) + 2,
     * recheck = cases */
    if (ev_size_mul(proto->n_cases, proto->n_arms + 2, &cap) || ev_size_add(cap, 2, &cap))
        return ev_err_set(err, EV_ERANGE, "plan: too many jobs");
    plan.jobs = calloc(cap, sizeof *plan.jobs);
    if (!plan.jobs)
        return ev_err_set(err, EV_ENOMEM, "plan: out of memory");

    for (size_t ci = 0; ci < proto->n_cases; ci++)
        for (size_t a = 0; a < proto->n_arms; a++)
            if (!policy_arm(proto, proto->arms[a]) && arm_applies(proto, proto->arms[a], ci))
                fill_job(&plan.jobs[n++], EV_PHASE_MAIN, (int64_t)ci, proto->arms[a], "initial");
    if (proto->reference_arms) {
        fill_job(&plan.jobs[n++], EV_PHASE_MAIN, -1, "floor", "initial");
        fill_job(&plan.jobs[n++], EV_PHASE_MAIN, -1, "ceiling", "initial");
    }
    /* Seeded interleaving: Fisher-Yates, i from n-1 down to 1, j = r % (i+1). */
    state = (uint64_t)proto->seed;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(splitmix64(&state) % (uint64_t)i);
        ev_plan_job t = plan.jobs[i - 1];
        plan.jobs[i - 1] = plan.jobs[j];
        plan.jobs[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        plan.jobs[i].plan_order = (int64_t)i;
    plan.n_main = n;

    /* policy: auto for every case, each followed by the policy fault arms
     * (wrong-schedule) that apply to the case, in protocol arm order */
    for (size_t ci = 0; ci < proto->n_cases; ci++) {
        fill_job(&plan.jobs[n], EV_PHASE_POLICY, (int64_t)ci, "auto", "initial");
        plan.jobs[n].plan_order = (int64_t)(n - plan.n_main);
        n++;
        for (size_t a = 0; a < proto->n_arms; a++)
            if (policy_arm(proto, proto->arms[a]) && arm_applies(proto, proto->arms[a], ci)) {
                fill_job(&plan.jobs[n], EV_PHASE_POLICY, (int64_t)ci, proto->arms[a], "initial");
                plan.jobs[n].plan_order = (int64_t)(n - plan.n_main);
                n++;
            }
    }
    plan.n_policy = n - plan.n_main;
    for (size_t ci = 0; ci < proto->n_cases; ci++) {
        fill_job(&plan.jobs[n], EV_PHASE_RECHECK, (int64_t)ci, "default", "recheck");
        plan.jobs[n++].plan_order = (int64_t)ci;
    }
    plan.n_recheck = proto->n_cases;
    plan.n = n;
    *out = plan;
    return EV_OK;
}

void ev_plan_free(ev_plan *plan)
{
    if (!plan)
        return;
    free(plan->jobs);
    memset(plan, 0, sizeof *plan);
}

ptrdiff_t ev_plan_find(const ev_plan *plan, const char *job_key)
{
    for (size_t i = 0; i < plan->n; i++)
        if (!strcmp(plan->jobs[i].job_key, job_key))
            return (ptrdiff_t)i;
    return -1;
}

ev_status ev_plan_rescue(const ev_protocol *proto, const ev_plan *plan, const ev_outcome *outcomes,
                         ev_plan_job **out, size_t *n_out, ev_err *err)
{
    ev_plan_job *r = NULL;
    size_t n = 0, lim = plan->n_main + plan->n_policy;

    if (proto->retries > 0) {
        for (size_t i = 0; i < lim; i++)
            if (ev_outcome_retryable(outcomes[i]))
                n++;
    }
    if (n) {
        size_t k = 0;
        r = calloc(n, sizeof *r);
        if (!r)
            return ev_err_set(err, EV_ENOMEM, "rescue plan: out of memory");
        for (size_t i = 0; i < lim; i++) {
            if (!ev_outcome_retryable(outcomes[i]))
                continue;
            fill_job(&r[k], EV_PHASE_RESCUE, plan->jobs[i].case_index, plan->jobs[i].arm, "retry-1");
            r[k].plan_order = (int64_t)k;
            r[k].retry_of = (int64_t)i;
            k++;
        }
    }
    *out = r;
    *n_out = n;
    return EV_OK;
}

void ev_plan_run_status(const ev_plan *plan, const ev_outcome *outcomes, const ev_plan_job *rescue,
                        const ev_outcome *rescue_outcomes, size_t n_rescue, const char **status,
                        const char **rescue_status)
{
    size_t lim = plan->n_main + plan->n_policy;
    int failed = 0, mended = 1;

    for (size_t i = 0; i < lim; i++) {
        int retried_ok = 0;
        if (outcomes[i] == EV_OUT_COMPLETED || outcomes[i] == EV_OUT_SKIPPED)
            continue;
        failed = 1;
        for (size_t k = 0; k < n_rescue; k++)
            if (rescue[k].retry_of == (int64_t)i && rescue_outcomes[k] == EV_OUT_COMPLETED)
                retried_ok = 1;
        if (!retried_ok)
            mended = 0;
    }
    *status = failed ? "failed" : "completed";
    *rescue_status = failed ? (mended ? "completed-after-rescue" : "failed-after-rescue") : NULL;
}
