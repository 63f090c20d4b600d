/*
 * plan.c: the job plan as a pure function of the protocol (plan.h), and the
 * rescue list and run status as pure functions of outcomes.  The shuffle is
 * written out here (splitmix64, Fisher-Yates from the last element down)
 * so that any reimplementation gets the same order; docs/runner.md states
 * it too.
 */
#include "plan.h"

#include "buf.h"
#include "dtype.h"
#include "model/model.h"
#include "reduce_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Returns 1 when job_key begins with p's name and a '/'. */
int ev_job_key_in_phase(const char *job_key, ev_phase p)
{
    const char *w = ev_phase_name(p);
    size_t n = strlen(w);
    return job_key && !strncmp(job_key, w, n) && job_key[n] == '/';
}

/* splitmix64: advances *state and returns the next 64-bit value. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Fills *j (plan_order and retry_of set by the caller; shard 0, no replica). */
static void fill_job(ev_plan_job *j, ev_phase phase, int64_t case_index, const char *arm, const char *label,
                     int64_t round)
{
    char c[24];

    memset(j, 0, sizeof *j);
    j->phase = phase;
    j->case_index = case_index;
    j->round = round;
    j->retry_of = -1;
    snprintf(j->arm, sizeof j->arm, "%s", arm);
    snprintf(j->label, sizeof j->label, "%s", label);
    if (case_index < 0)
        snprintf(c, sizeof c, "-");
    else
        snprintf(c, sizeof c, "%lld", (long long)case_index);
    snprintf(j->job_key, sizeof j->job_key, "%s/%s/%s/%s", ev_phase_name(phase), c, arm, label);
}

/* The label of round r of k (main and policy): "initial" when k is 1. */
static void round_label(char *dst, size_t cap, int64_t r, int64_t k)
{
    if (k == 1)
        snprintf(dst, cap, "initial");
    else
        snprintf(dst, cap, "round-%lld", (long long)r);
}

int64_t ev_plan_label_round(const char *label)
{
    const char *p;
    int64_t r = 0;

    if (!strcmp(label, "initial") || !strcmp(label, "retry-1"))
        return 1;
    if (strncmp(label, "round-", 6) || label[6] < '1' || label[6] > '9')
        return 0;
    for (p = label + 6; *p >= '0' && *p <= '9'; p++) {
        r = r * 10 + (*p - '0');
        if (r > INT64_C(1) << 40)
            return 0;
    }
    return *p == '\0' || !strcmp(p, "-retry-1") ? r : 0;
}

/* See plan.h. */
int ev_plan_arm_applies(const ev_protocol *proto, const char *arm, size_t ci)
{
    const ev_proto_fault *f = ev_protocol_fault(proto, arm);
    ev_dtype dt;

    if (ev_is_sched(arm, EV_SCHED_ROWS4) &&
        proto->cases[ci].default_rows == ev_sched_fixed_rows(EV_SCHED_ROWS4))
        return 0;
    ev_sched s;
    if (!ev_sched_parse(arm, &s) && s != EV_SCHED_DEFAULT &&
        (ev_dtype_parse(proto->cases[ci].dtype, &dt) ||
         ev_sched_rows_of(s, proto->cases[ci].default_rows, proto->cases[ci].cols, dt) < 1))
        return 0; /* short or split on a row it does not apply to (ev_sched_rows_of) */
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

/* 1 when proto's plan is the one of store schema EV_PLAN_REFS_FIRST_SINCE
 * and later: ceiling-l2 among the reference arms, which run first. */
static int refs_first(const ev_protocol *proto)
{
    return proto->plan_schema >= EV_PLAN_REFS_FIRST_SINCE;
}

/* Appends, for round r in phase ph, the reference arms when planned:
 * floor and ceiling, and ceiling-l2 in a plan whose references run first.
 * Returns how many. */
static size_t add_ref_arms(const ev_protocol *proto, ev_plan *plan, size_t *n, ev_phase ph, const char *label,
                           int64_t r)
{
    size_t before = *n;
    if (proto->reference_arms) {
        fill_job(&plan->jobs[(*n)++], ph, -1, ev_arm_kind_name(EV_ARM_FLOOR), label, r);
        fill_job(&plan->jobs[(*n)++], ph, -1, ev_arm_kind_name(EV_ARM_CEILING), label, r);
        if (refs_first(proto))
            fill_job(&plan->jobs[(*n)++], ph, -1, ev_arm_kind_name(EV_ARM_CEILING_L2), label, r);
    }
    return *n - before;
}

/* Appends, for round r in phase ph, every case's main arms (rows4 not
 * where B is 4, a fault arm only on its cases; not the policy fault arms)
 * in protocol arm order; in a plan of an older schema, then floor and
 * ceiling when planned (in the current one the caller puts them first). */
static void add_main_arms(const ev_protocol *proto, ev_plan *plan, size_t *n, ev_phase ph, const char *label,
                          int64_t r)
{
    for (size_t ci = 0; ci < proto->n_cases; ci++)
        for (size_t a = 0; a < proto->n_arms; a++)
            if (!policy_arm(proto, proto->arms[a]) && ev_plan_arm_applies(proto, proto->arms[a], ci))
                fill_job(&plan->jobs[(*n)++], ph, (int64_t)ci, proto->arms[a], label, r);
    if (!refs_first(proto))
        add_ref_arms(proto, plan, n, ph, label, r);
}

/* Appends, for round r, auto for every case, each followed by the policy
 * fault arms that apply to it, in protocol arm order (phase policy). */
static void add_policy_arms(const ev_protocol *proto, ev_plan *plan, size_t *n, const char *label, int64_t r)
{
    if (!proto->auto_arm)
        return; /* no auto, and so no fault arm of the policy phase */
    for (size_t ci = 0; ci < proto->n_cases; ci++) {
        fill_job(&plan->jobs[(*n)++], EV_PHASE_POLICY, (int64_t)ci, ev_arm_kind_name(EV_ARM_AUTO), label, r);
        for (size_t a = 0; a < proto->n_arms; a++)
            if (policy_arm(proto, proto->arms[a]) && ev_plan_arm_applies(proto, proto->arms[a], ci))
                fill_job(&plan->jobs[(*n)++], EV_PHASE_POLICY, (int64_t)ci, proto->arms[a], label, r);
    }
}

/* Seeded interleaving of v[0..n): Fisher-Yates, i from n down to 2,
 * j = splitmix64(state) % i, swap v[i-1] and v[j]. */
static void shuffle(ev_plan_job *v, size_t n, uint64_t *state)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(splitmix64(state) % (uint64_t)i);
        ev_plan_job t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

ev_status ev_plan_build(const ev_protocol *proto, ev_plan *out, ev_err *err)
{
    ev_plan plan;
    size_t cap, n = 0, k = proto->rounds >= 1 ? (size_t)proto->rounds : 1;
    uint64_t state;
    char label[40];

    memset(&plan, 0, sizeof plan);
    memset(out, 0, sizeof *out);
    /* per round main arms + auto + policy arms <= cases x (arms + 1) + 3;
     * recheck = cases */
    if (ev_size_mul(proto->n_cases, proto->n_arms + 2, &cap) || ev_size_add(cap, 3, &cap) ||
        ev_size_mul(cap, k, &cap) || ev_size_add(cap, proto->n_cases, &cap))
        return ev_err_set(err, EV_ERANGE, "plan: too many jobs");
    plan.jobs = calloc(cap, sizeof *plan.jobs);
    if (!plan.jobs)
        return ev_err_set(err, EV_ENOMEM, "plan: out of memory");

    /* main: round 1, every main arm, shuffled (in the current schema's
     * plan the reference arms first, unshuffled: the rules that bound a
     * job by the run's ceilings know them when the job ends) */
    state = (uint64_t)proto->seed;
    round_label(label, sizeof label, 1, (int64_t)k);
    size_t n_ref = refs_first(proto) ? add_ref_arms(proto, &plan, &n, EV_PHASE_MAIN, label, 1) : 0;
    add_main_arms(proto, &plan, &n, EV_PHASE_MAIN, label, 1);
    shuffle(plan.jobs + n_ref, n - n_ref, &state);
    for (size_t i = 0; i < n; i++)
        plan.jobs[i].plan_order = (int64_t)i;
    plan.n_main = n;

    if (k == 1) {
        /* policy: auto for every case, each followed by the policy fault
         * arms (wrong-schedule) that apply to the case, in protocol arm order */
        add_policy_arms(proto, &plan, &n, label, 1);
    } else {
        /* policy, rounds 2..k: every main arm and auto (with the policy
         * fault arms) in one block per round, shuffled with the state
         * carried on, so auto is interleaved with what it is compared with */
        for (size_t r = 2; r <= k; r++) {
            size_t first = n;
            round_label(label, sizeof label, (int64_t)r, (int64_t)k);
            if (refs_first(proto))
                first += add_ref_arms(proto, &plan, &n, EV_PHASE_POLICY, label, (int64_t)r);
            add_main_arms(proto, &plan, &n, EV_PHASE_POLICY, label, (int64_t)r);
            add_policy_arms(proto, &plan, &n, label, (int64_t)r);
            shuffle(plan.jobs + first, n - first, &state);
        }
    }
    for (size_t i = plan.n_main; i < n; i++)
        plan.jobs[i].plan_order = (int64_t)(i - plan.n_main);
    plan.n_policy = n - plan.n_main;
    for (size_t ci = 0; ci < proto->n_cases; ci++) {
        fill_job(&plan.jobs[n], EV_PHASE_RECHECK, (int64_t)ci, ev_sched_name(EV_SCHED_DEFAULT),
                 ev_phase_name(EV_PHASE_RECHECK), 0);
        plan.jobs[n++].plan_order = (int64_t)ci;
    }
    plan.n_recheck = proto->n_cases;
    plan.n = n;
    plan.shard_count = 1;
    plan.full_main = plan.n_main;
    *out = plan;
    return EV_OK;
}

int64_t ev_plan_shard_of(int64_t case_index, int64_t n_shards)
{
    if (case_index < 0)
        return -1;
    return n_shards > 1 ? case_index % n_shards : 0;
}

int64_t ev_plan_job_shard(const char *job_key, int64_t case_index, int64_t n_shards)
{
    const char *p = strstr(job_key, "/shard-");
    int64_t v = 0;

    if (case_index >= 0)
        return ev_plan_shard_of(case_index, n_shards);
    if (!p || !p[7])
        return n_shards == 1 ? 0 : -1;
    for (p += 7; *p >= '0' && *p <= '9' && v <= n_shards; p++)
        v = v * 10 + (*p - '0');
    return *p == '\0' && v < n_shards ? v : -1;
}

/* Appends "/shard-<shard>" to j's key and marks it a replica of shard. */
static void make_replica(ev_plan_job *j, int64_t shard)
{
    size_t len = strlen(j->job_key);
    snprintf(j->job_key + len, sizeof j->job_key - len, "/shard-%lld", (long long)shard);
    j->shard = shard;
    j->replica = 1;
}

ev_status ev_plan_build_sharded(const ev_protocol *proto, int64_t n_shards, ev_plan *out, ev_err *err)
{
    ev_plan one, plan;
    size_t n_ref = 0, cap, n = 0;
    ev_status rc;

    memset(out, 0, sizeof *out);
    if (n_shards < 1 || n_shards > EV_PLAN_MAX_SHARDS)
        return ev_err_set(err, EV_ERANGE, "plan: %lld shards (1 to %d)", (long long)n_shards,
                          EV_PLAN_MAX_SHARDS);
    if ((rc = ev_plan_build(proto, &one, err)))
        return rc;
    if (n_shards == 1) {
        *out = one;
        return EV_OK;
    }
    for (size_t i = 0; i < one.n; i++)
        n_ref += one.jobs[i].case_index < 0;
    memset(&plan, 0, sizeof plan);
    if (ev_size_mul(n_ref, (size_t)n_shards - 1, &cap) || ev_size_add(cap, one.n, &cap)) {
        ev_plan_free(&one);
        return ev_err_set(err, EV_ERANGE, "plan: too many jobs");
    }
    plan.jobs = calloc(cap ? cap : 1, sizeof *plan.jobs);
    if (!plan.jobs) {
        ev_plan_free(&one);
        return ev_err_set(err, EV_ENOMEM, "plan: out of memory");
    }
    for (size_t i = 0; i < one.n; i++) {
        const ev_plan_job *j = &one.jobs[i];
        size_t before = n;
        if (j->case_index >= 0) {
            plan.jobs[n] = *j;
            plan.jobs[n++].shard = ev_plan_shard_of(j->case_index, n_shards);
        } else {
            for (int64_t k = 0; k < n_shards; k++) {
                plan.jobs[n] = *j;
                make_replica(&plan.jobs[n++], k);
            }
        }
        if (i < one.n_main)
            plan.n_main += n - before;
        else if (i < one.n_main + one.n_policy)
            plan.n_policy += n - before;
        else
            plan.n_recheck += n - before;
    }
    plan.n = n;
    for (size_t i = 0; i < n; i++)
        plan.jobs[i].plan_order =
            (int64_t)(i < plan.n_main                   ? i
                      : i < plan.n_main + plan.n_policy ? i - plan.n_main
                                                        : i - plan.n_main - plan.n_policy);
    plan.shard_count = n_shards;
    plan.full_main = plan.n_main;
    ev_plan_free(&one);
    *out = plan;
    return EV_OK;
}

void ev_plan_keep_shard(ev_plan *plan, int64_t shard)
{
    size_t n = 0, m = 0, p = 0, r = 0;

    for (size_t i = 0; i < plan->n; i++) {
        if (plan->jobs[i].shard != shard)
            continue;
        if (i < plan->n_main)
            m++;
        else if (i < plan->n_main + plan->n_policy)
            p++;
        else
            r++;
        plan->jobs[n++] = plan->jobs[i];
    }
    plan->n = n;
    plan->n_main = m;
    plan->n_policy = p;
    plan->n_recheck = r;
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
            char label[40];
            if (!strcmp(plan->jobs[i].label, "initial"))
                snprintf(label, sizeof label, "retry-1");
            else
                snprintf(label, sizeof label, "round-%lld-retry-1", (long long)plan->jobs[i].round);
            fill_job(&r[k], EV_PHASE_RESCUE, plan->jobs[i].case_index, plan->jobs[i].arm, label,
                     plan->jobs[i].round);
            r[k].shard = plan->jobs[i].shard;
            if (plan->jobs[i].replica)
                make_replica(&r[k], plan->jobs[i].shard);
            if (plan->shard_count > 1)
                r[k].plan_order = plan->jobs[i].phase == EV_PHASE_MAIN
                                      ? plan->jobs[i].plan_order
                                      : (int64_t)plan->full_main + plan->jobs[i].plan_order;
            else
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
