/*
 * verify_protocol.c: check 5, "protocol".  Every attempt is held to the
 * protocol it declared (protocol.json as the runner parses it) by the rules
 * of src/runner/sample_rules.h, the one definition the supervisor also
 * applies when an attempt's records arrive (warm-up, calibration, sample
 * and cold counts, replays and ops per sample, the two bands, the flush;
 * docs/verify.md lists them).  This file only reads the attempt out of the
 * bundle and reports each breach against its job and attempt.
 *
 * The device record (schema 3, db/migrate-3.sql): in a run whose
 * validation.json says store_schema >= 3, every completed attempt has its
 * "device" member; each one present is read by ev_rule_device_read (the
 * supervisor's reader), its per-sample facts join the hot samples for the
 * hygiene rule, its rotation is the one its seed picks (ev_inputs_rotation,
 * regenerated here), and the peer versions it names agree across the
 * run's attempts of the same arm.  An older bundle has no such member and
 * is held to nothing of it.
 *
 * One more rule belongs here, since only a bundle can break it: an attempt
 * whose process row says it failed a protocol rule (protocol_error starts
 * with EV_RULE_PREFIX) must show exactly that breach when the rules are
 * applied to its records.  A runner may not fail a good attempt, and so
 * buy it a retry, by claiming a breach its samples do not show.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "json.h"
#include "plants.h"
#include "runner/protocol.h"
#include "runner/sample_rules.h"
#include "runner/validate.h"
#include "stats.h"
#include "store/outcome.h"
#include "verify_int.h"

#define VP EV_MEMBER_VALIDATION

typedef struct breach_ctx {
    ev_vreport *r;
    const char *key, *outcome;
    int64_t attempt;
} breach_ctx;

/* Reports one breach of the rules against its job and attempt. */
static void on_breach(void *ctx, ev_rule_member m, const char *text)
{
    breach_ctx *c = ctx;
    vr_fail(c->r, VR_PROTOCOL, ev_rule_member_name(m), "job %s attempt %lld (%s): %s", c->key,
            (long long)c->attempt, c->outcome, text);
}

/* Reads attempt a's warm-up and calibration steps into *ra (steps into
 * steps[cap]); a step that lacks a member is reported and left out.
 * Returns 0, or -1 when out of memory (r->oom set). */
static int read_warmup_steps(const char *key, int64_t att, const cJSON *a, ev_rule_attempt *ra,
                             ev_rule_step **steps, ev_vreport *r)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(a, "warmup");
    ra->has_warmup = cJSON_IsObject(w) && !ev_jr_dbl(w, "target_ms", &ra->warmup_target_ms) &&
                     !ev_jr_dbl(w, "elapsed_ms", &ra->warmup_elapsed_ms);
    const cJSON *cal = cJSON_GetObjectItemCaseSensitive(a, "calibrations");
    int n = cJSON_IsArray(cal) ? cJSON_GetArraySize(cal) : 0;
    *steps = n ? calloc((size_t)n, sizeof **steps) : NULL;
    if (n && !*steps) {
        r->oom = 1;
        return -1;
    }
    const cJSON *c;
    size_t k = 0;
    if (!n)
        cal = NULL;
    cJSON_ArrayForEach(c, cal)
    {
        ev_rule_step st;
        if (ev_jr_bool(c, "chosen", &st.chosen) || ev_jr_i64(c, "replays", &st.replays) ||
            ev_jr_dbl(c, "target_ms", &st.target_ms)) {
            vr_fail(r, VR_PROTOCOL, VP,
                    "job %s attempt %lld: a calibration step lacks chosen, replays or target_ms", key,
                    (long long)att);
            continue;
        }
        (*steps)[k++] = st;
    }
    ra->steps = *steps;
    ra->n_steps = k;
    return 0;
}

/* The peer versions first seen per arm (versions checked consistent). */
typedef struct seen_versions {
    const char *arm[64];
    char *text[64];
    size_t n;
} seen_versions;

/* Checks that device record d of attempt att of job v names the versions
 * the arm's first device record named. */
static void vk_versions(seen_versions *sv, const vb_vjob *v, int64_t att, const cJSON *d, ev_vreport *r)
{
    char *text = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(d, "versions"));
    size_t i;
    if (!text) {
        r->oom = 1;
        return;
    }
    for (i = 0; i < sv->n && strcmp(sv->arm[i], v->arm); i++)
        ;
    if (i < sv->n) {
        if (strcmp(sv->text[i], text))
            vr_fail(r, VR_PROTOCOL, VP,
                    "job %s attempt %lld: device record names peer versions %s, another attempt of arm %s "
                    "named %s: one run measures one build of each peer",
                    v->key, (long long)att, text, v->arm, sv->text[i]);
        free(text);
        return;
    }
    if (sv->n == sizeof sv->arm / sizeof sv->arm[0]) {
        free(text);
        return;
    }
    sv->arm[sv->n] = v->arm;
    sv->text[sv->n++] = text;
}

/* Checks that the rotation of device record d is the one its seed picks for
 * samples hot samples over rows rows. */
static void vk_rotation(const vb_vjob *v, int64_t att, const cJSON *d, int64_t samples, int64_t rows,
                        ev_vreport *r)
{
    const cJSON *rot = cJSON_GetObjectItemCaseSensitive(d, "rotation");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(rot, "rows"), *e;
    int64_t before, want[64], got_before;
    size_t n, k = 0;
    uint64_t seed;
    if (!cJSON_IsObject(rot) || ev_jr_i64(rot, "before", &got_before))
        return; /* no rotation: nothing to regenerate */
    seed = strtoull(ev_jr_str(rot, "seed"), NULL, 16);
    ev_inputs_rotation(seed, samples, rows, &before, &n, NULL);
    int ok = before == got_before && (size_t)cJSON_GetArraySize(list) == n;
    if (ok && n <= sizeof want / sizeof want[0]) {
        ev_inputs_rotation(seed, samples, rows, &before, &n, want);
        cJSON_ArrayForEach(e, list) ok = ok && (int64_t)e->valuedouble == want[k++];
    }
    if (!ok)
        vr_fail(
            r, VR_PROTOCOL, VP,
            "job %s attempt %lld: device record's rotation (before hot sample %lld, %d rows) is not the one "
            "its seed picks for %lld hot samples of %lld rows (before %lld, %zu rows)",
            v->key, (long long)att, (long long)got_before, cJSON_GetArraySize(list), (long long)samples,
            (long long)rows, (long long)before, n);
}

/*
 * The check tags of attempt a (store schema 5; kernels/plants.h): every op
 * check's tag is recomputed from the seed its device record reveals, T(n)
 * for its replay_end n, and its passed must say whether the tag is that
 * one.  A completed attempt of an arm with plants holds one op check per
 * cold and hot sample, each with the replay_end its samples give
 * (ev_rule_replay_end: cold sample i, i + 1; hot sample i, the cold
 * samples, the warm-up's replays and the hot replays up to it) and the
 * rows and variants of its plants, and a kept output.  The samples are rows [first, first + n_cold + n_hot)
 * of samples.csv, cold first.
 */
static void vk_op_checks(vb_bundle *b, const vb_vjob *v, int64_t att, const cJSON *a,
                         const ev_rule_attempt *ra, int completed, size_t first, size_t n_cold, size_t n_hot,
                         ev_vreport *r)
{
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(a, "op_checks"), *o;
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(a, "warmup");
    ev_plant_cfg c;
    char why[512];
    int64_t warm = 0, *end = NULL;
    unsigned char *seen = NULL;
    size_t n = n_cold + n_hot;
    int got = vp_config(b, v, a, &c, why, sizeof why);

    if (!vp_planted_arm(b, v))
        return;
    if (got < 0) {
        vr_fail(r, VR_PROTOCOL, VP, "job %s attempt %lld: %s", v->key, (long long)att, why);
        return;
    }
    if (!got) {
        if (completed)
            vr_fail(
                r, VR_PROTOCOL, VP,
                "job %s attempt %lld (completed): its device record names no plants, in a run stored with "
                "schema 5 or later (every op of every replay is checked on planted input)",
                v->key, (long long)att);
        return;
    }
    if (!cJSON_IsArray(ops)) {
        vr_fail(r, VR_PROTOCOL, VP, "job %s attempt %lld: no op_checks array, in a run stored with schema 5",
                v->key, (long long)att);
        return;
    }
    if (cJSON_IsObject(w) && ev_jr_i64(w, "replays", &warm))
        warm = 0;
    end = calloc(n ? n : 1, sizeof *end);
    seen = calloc(n ? n : 1, 1);
    if (!end || !seen) {
        r->oom = 1;
        goto out;
    }
    /* the replays run when each sample's op check was read (ev_rule_replay_end) */
    {
        int64_t *reps = calloc(n_hot ? n_hot : 1, sizeof *reps);
        if (!reps) {
            r->oom = 1;
            goto out;
        }
        for (size_t i = 0; i < n_hot; i++)
            reps[i] = b->samples.rows[first + n_cold + i].replays;
        for (size_t i = 0; i < n; i++)
            end[i] =
                ev_rule_replay_end(i >= n_cold, (int64_t)(i < n_cold ? i : i - n_cold), (int64_t)n_cold, warm,
                                   reps, i >= n_cold ? ev_rule_recal_replays(ra, (int64_t)(i - n_cold)) : 0);
        free(reps);
    }
    cJSON_ArrayForEach(o, ops)
    {
        const char *timing = ev_jr_str(o, "timing"), *tag = ev_jr_str(o, "tag");
        int64_t idx, rend, reps, nops, rows, vars;
        int passed, hot;
        char want[17];
        if (!timing || !tag || ev_jr_i64(o, "sample_index", &idx) || ev_jr_i64(o, "replay_end", &rend) ||
            ev_jr_i64(o, "replays", &reps) || ev_jr_i64(o, "ops", &nops) || ev_jr_i64(o, "rows", &rows) ||
            ev_jr_i64(o, "variants", &vars) || ev_jr_bool(o, "passed", &passed) ||
            (strcmp(timing, "hot") && strcmp(timing, "cold"))) {
            vr_fail(r, VR_PROTOCOL, VP, "job %s attempt %lld: an op check lacks a member", v->key,
                    (long long)att);
            continue;
        }
        hot = !strcmp(timing, "hot");
        if (idx < 0 || idx >= (int64_t)(hot ? n_hot : n_cold)) {
            vr_fail(r, VR_PROTOCOL, VP,
                    "job %s attempt %lld: an op check of %s sample %lld, which it does not have", v->key,
                    (long long)att, timing, (long long)idx);
            continue;
        }
        size_t i = hot ? n_cold + (size_t)idx : (size_t)idx;
        const vb_sample *sm = &b->samples.rows[first + i];
        if (seen[i]++) {
            vr_fail(r, VR_PROTOCOL, VP, "job %s attempt %lld: the op check of %s sample %lld, twice", v->key,
                    (long long)att, timing, (long long)idx);
            continue;
        }
        if (completed && (rend != end[i] || reps != sm->replays || nops != (hot ? sm->ops_per_graph : 1) ||
                          rows != c.m || vars != c.variants)) {
            vr_fail(
                r, VR_PROTOCOL, VP,
                "job %s attempt %lld: the op check of %s sample %lld says %lld replays run (%lld in it, %lld "
                "ops, %lld rows, %lld variants), where its records give %lld (%lld, %lld, %lld, %lld)",
                v->key, (long long)att, timing, (long long)idx, (long long)rend, (long long)reps,
                (long long)nops, (long long)rows, (long long)vars, (long long)end[i], (long long)sm->replays,
                (long long)(hot ? sm->ops_per_graph : 1), (long long)c.m, (long long)c.variants);
            continue;
        }
        snprintf(want, sizeof want, "%016llx",
                 (unsigned long long)ev_plant_tag_after(c.seed, (uint64_t)rend));
        if (passed != !strcmp(tag, want))
            vr_fail(
                r, VR_PROTOCOL, VP,
                "job %s attempt %lld: the op check of %s sample %lld records tag %s and passed %s, where the "
                "device record's seed gives %s for %lld replays of every op right",
                v->key, (long long)att, timing, (long long)idx, tag, passed ? "true" : "false", want,
                (long long)rend);
    }
    if (completed) {
        size_t have = 0;
        for (size_t i = 0; i < n; i++)
            have += seen[i] != 0;
        if (have != n)
            vr_fail(
                r, VR_PROTOCOL, VP,
                "job %s attempt %lld (completed): op checks of %zu of its %zu samples: a sample's check tag "
                "was left out",
                v->key, (long long)att, have, n);
        if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(a, "op_kept")))
            vr_fail(r, VR_PROTOCOL, VP, "job %s attempt %lld (completed): no kept output (op_kept)", v->key,
                    (long long)att);
    }
out:
    free(end);
    free(seen);
}

/* Checks one attempt of job v against the protocol's rules. */
static void vk_attempt(vb_bundle *b, const vb_vjob *v, const cJSON *a, const ev_protocol *p,
                       const char *backend, int schema, int tags, const vb_ceilings *ceil, seen_versions *sv,
                       ev_vreport *r)
{
    int64_t att;
    const char *oc_name = ev_jr_str(a, "outcome");
    ev_outcome oc;
    if (ev_jr_i64(a, "attempt", &att) || !oc_name || ev_outcome_parse(oc_name, &oc))
        return; /* check 4 reported it */
    size_t first, n_cold, n_hot;
    vb_rows_of(b, v->job_id, att, &first, &n_cold, &n_hot);
    ev_rule_attempt ra;
    ev_rule_step *steps = NULL;
    ev_rule_sample *smp = n_cold + n_hot ? malloc((n_cold + n_hot) * sizeof *smp) : NULL;
    if (n_cold + n_hot && !smp) {
        r->oom = 1;
        return;
    }
    memset(&ra, 0, sizeof ra);
    ra.arm = v->arm;
    ra.schema = schema;
    vb_bound_of(b, v, a, ceil, &ra.bound); /* (no case: no bound) */
    for (size_t i = 0; i < n_cold + n_hot; i++) {
        const vb_sample *s = &b->samples.rows[first + i];
        smp[i].elapsed_ms = s->elapsed_ms;
        smp[i].replays = s->replays;
        smp[i].ops_per_graph = s->ops_per_graph;
        smp[i].sm_clock_mhz = s->sm_clock == INT64_MIN ? -1 : s->sm_clock;
        smp[i].other_processes = smp[i].throttle_reasons = -1;
        smp[i].wall_ms = -1;
    }
    ra.cold = smp;
    ra.n_cold = n_cold;
    ra.hot = smp ? smp + n_cold : NULL;
    ra.n_hot = n_hot;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(a, "flush");
    ra.has_flush = cJSON_IsObject(f) && !ev_jr_i64(f, "flush_bytes", &ra.flush_bytes) &&
                   !ev_jr_i64(f, "cache_bytes", &ra.cache_bytes);
    if (read_warmup_steps(v->key, att, a, &ra, &steps, r))
        goto out;
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(a, "device");
    if (schema >= 3 && cJSON_IsObject(dev)) {
        char why[256];
        const cJSON *bd = cJSON_GetObjectItemCaseSensitive(a, "binding");
        int64_t rows = 0;
        if (ev_rule_device_read(dev, smp ? smp + n_cold : NULL, n_hot, smp, n_cold, why, sizeof why)) {
            vr_fail(r, VR_PROTOCOL, VP, "job %s attempt %lld: device record: %s", v->key, (long long)att,
                    why);
        } else {
            ev_rule_device_attempt(dev, &ra); /* its re-calibrations and host facts */
            vk_versions(sv, v, att, dev, r);
            if (cJSON_IsObject(bd) && !ev_jr_i64(bd, "rows", &rows))
                vk_rotation(v, att, dev, p->samples, rows, r);
        }
    } else if (schema >= 3 && oc == EV_OUT_COMPLETED) {
        vr_fail(r, VR_PROTOCOL, VP,
                "job %s attempt %lld (completed): no device record, in a run stored with schema %d (every "
                "completed attempt has one)",
                v->key, (long long)att, schema);
    }

    if (schema >= 5 && tags)
        vk_op_checks(b, v, att, a, &ra, oc == EV_OUT_COMPLETED, first, n_cold, n_hot, r);

    ra.completed = oc == EV_OUT_COMPLETED;
    breach_ctx bc = {r, v->key, oc_name, att};
    if (ev_rules_check(p, backend, &ra, on_breach, &bc) < 0) {
        vr_fail(r, VR_PROTOCOL, VP, "job %s: arm %s is not an arm of the protocol", v->key, v->arm);
        goto out;
    }

    /* A claimed breach must be the one the records show. */
    const cJSON *proc = cJSON_GetObjectItemCaseSensitive(a, "process");
    const char *perr = ev_jr_str(proc, "protocol_error");
    if (oc == EV_OUT_FAILED_PROTOCOL && perr && !strncmp(perr, EV_RULE_PREFIX, strlen(EV_RULE_PREFIX))) {
        char why[512];
        ra.completed = 1;
        ev_rules_reason(p, backend, &ra, why, sizeof why);
        /* (what the job left running, if anything, follows its own reason: outcome.h) */
        if (strlen(why) != ev_protocol_error_own_len(perr) || strncmp(why, perr, strlen(why)))
            vr_fail(r, VR_PROTOCOL, VP,
                    "job %s attempt %lld: its process row claims \"%s\", but its records, held to the rules, "
                    "show %s%s%s",
                    v->key, (long long)att, perr, why[0] ? "\"" : "no breach", why, why[0] ? "\"" : "");
    }
out:
    free(steps);
    free(smp);
}

/*
 * The rescue's backoff (docs/runner.md, "A busy host"): a "backoff" cold
 * timing says the runner waited before it started a rescue, to let a
 * burst of other work on the host pass.  It may stand only on the first
 * attempt of a rescue job whose original's last attempt broke a sample
 * rule (the only rescue the runner waits for), and it may not claim more
 * than the time between that attempt's end and the rescue's start.
 */
static void vk_backoff(const vb_bundle *b, const vb_vjob *v, ev_vreport *r)
{
    const cJSON *a, *c;
    int64_t k = 0;
    cJSON_ArrayForEach(a, v->attempts)
    {
        k++;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(a, "cold_timings"))
        {
            const char *nm = ev_jr_str(c, "name");
            int64_t ns, started, ended;
            const vb_vjob *o = NULL;
            if (!nm || strcmp(nm, EV_RULE_BACKOFF) || ev_jr_ns(c, "elapsed_ns", &ns))
                continue;
            for (size_t i = 0; v->retry_of && i < b->n_vjobs && !o; i++)
                if (!strcmp(b->vjobs[i].key, v->retry_of))
                    o = &b->vjobs[i];
            const cJSON *last =
                o ? cJSON_GetArrayItem(o->attempts, cJSON_GetArraySize(o->attempts) - 1) : NULL;
            const cJSON *proc = last ? cJSON_GetObjectItemCaseSensitive(last, "process") : NULL;
            const char *perr = ev_jr_str(proc, "protocol_error");
            if (k != 1 || !last || !perr || strncmp(perr, EV_RULE_PREFIX, strlen(EV_RULE_PREFIX))) {
                vr_fail(
                    r, VR_PROTOCOL, VP,
                    "job %s attempt %lld: a backoff, but it is not the first attempt of a rescue of a job "
                    "whose attempt broke a sample rule (the only rescue the runner waits for)",
                    v->key, (long long)k);
                continue;
            }
            if (ev_jr_ns(a, "started_ns", &started) || ev_jr_ns(proc, "ended_ns", &ended))
                continue; /* check 4 reports a malformed time */
            if (started - ended < ns)
                vr_fail(
                    r, VR_PROTOCOL, VP,
                    "job %s attempt %lld: a backoff of %lld ns, but it started %lld ns after %s's attempt "
                    "ended: a wait longer than the gap it stands in",
                    v->key, (long long)k, (long long)ns, (long long)(started - ended), o->key);
        }
    }
}

/* 1 when a and b print as the same text (ev_json_print: numbers as exact
 * %.17g text, a parsed bundle's raw numbers verbatim), else 0. */
static int same_text(const cJSON *a, const cJSON *b, ev_vreport *r)
{
    ev_buf x = EV_BUF_INIT, y = EV_BUF_INIT;
    int same = 0;
    if (!b)
        return 0;
    if (ev_json_print(a, 0, &x) || ev_json_print(b, 0, &y))
        r->oom = 1;
    else
        same = x.len == y.len && !memcmp(x.data, y.data, x.len);
    ev_buf_free(&x);
    ev_buf_free(&y);
    return same;
}

/*
 * The values each invocation recorded that it ran with ("protocol_values"
 * of its environment: runner/protocol.h, ev_protocol_values) are the
 * values this verifier reads protocol.json as, key by key: the checks
 * here and in check 6 hold the run to the values it used, and a default
 * that changed since the run (or an edited record) FAILs naming the key.
 * An invocation recorded before the values were is held to nothing.
 */
static void vk_values(const vb_bundle *b, ev_vreport *r)
{
    const cJSON *inv;
    cJSON *mine = NULL;
    size_t held = 0;
    if (ev_protocol_values(b->proto, &mine)) {
        r->oom = 1;
        return;
    }
    cJSON_ArrayForEach(inv, cJSON_GetObjectItemCaseSensitive(b->validation, "invocations"))
    {
        const cJSON *env = cJSON_GetObjectItemCaseSensitive(inv, "environment");
        const cJSON *rec = cJSON_GetObjectItemCaseSensitive(env, "protocol_values"), *k;
        int64_t id = -1;
        const char *bad = NULL;
        if (!rec)
            continue;
        ev_jr_i64(inv, "invocation_id", &id);
        held++;
        if (!cJSON_IsObject(rec)) {
            vr_fail(r, VR_PROTOCOL, VP, "invocation %lld: protocol_values is not an object", (long long)id);
            continue;
        }
        cJSON_ArrayForEach(k, mine) if (!bad &&
                                        !same_text(k, cJSON_GetObjectItemCaseSensitive(rec, k->string), r))
            bad = k->string;
        cJSON_ArrayForEach(k, rec) if (!bad && !cJSON_GetObjectItemCaseSensitive(mine, k->string)) bad =
            k->string;
        if (bad)
            vr_fail(
                r, VR_PROTOCOL, VP,
                "invocation %lld ran with protocol value '%s' other than protocol.json gives this verifier "
                "(the defaults differ, or the record was edited): the run cannot be held to the values it "
                "used",
                (long long)id, bad);
    }
    if (held)
        vr_note(r, VR_PROTOCOL, VP,
                "%zu invocations recorded the protocol values they ran with (the defaults included): each "
                "equals protocol.json as this verifier reads it",
                held);
    cJSON_Delete(mine);
}

/* The named cold timing of attempt a, in ns; 0 when it has none. */
static int64_t cold_ns(const cJSON *a, const char *name)
{
    const cJSON *c;
    int64_t ns;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(a, "cold_timings"))
    {
        const char *nm = ev_jr_str(c, "name");
        if (nm && !strcmp(nm, name) && !ev_jr_ns(c, "elapsed_ns", &ns))
            return ns;
    }
    return 0;
}

/* An attempt's place in its invocation, for vk_cpulock. */
typedef struct vk_span {
    int64_t inv, started, ended; /* ended: INT64_MIN when unknown */
    const cJSON *a;
    const char *key;
    int64_t k; /* its attempt number */
} vk_span;

static int vk_span_cmp(const void *x, const void *y)
{
    const vk_span *p = x, *q = y;
    if (p->inv != q->inv)
        return p->inv < q->inv ? -1 : 1;
    return p->started < q->started ? -1 : p->started > q->started;
}

/*
 * The wait for the measuring CPUs (runner/cpulock.h; docs/runner.md, "Two
 * runs on one host"): a "cpu-lock" cold timing says the supervisor waited
 * for another run to leave the attempt's CPUs before it started it.  It
 * stands only in a cpu run (the cuda backend takes no lock), and it may not
 * claim more than the gap it was waited in, with the attempt's backoff
 * (waited first, in the same gap): from the end of the latest attempt of
 * the same invocation that started before it, or the invocation's start,
 * to its own start.
 */
static void vk_cpulock(const vb_bundle *b, const char *backend, ev_vreport *r)
{
    size_t n = 0, cap = 0;
    vk_span *v = NULL;
    for (size_t i = 0; i < b->n_vjobs; i++) {
        const cJSON *a;
        int64_t k = 0;
        cJSON_ArrayForEach(a, b->vjobs[i].attempts)
        {
            vk_span x = {0, 0, INT64_MIN, a, b->vjobs[i].key, ++k};
            if (cold_ns(a, EV_RULE_CPULOCK) && strcmp(backend, "cpu"))
                vr_fail(r, VR_PROTOCOL, VP,
                        "job %s attempt %lld: a cpu-lock wait, but the run measured on %s (only the cpu "
                        "backend takes its CPUs' locks)",
                        x.key, (long long)k, backend);
            if (ev_jr_i64(a, "invocation_id", &x.inv) || ev_jr_ns(a, "started_ns", &x.started))
                continue; /* check 4 reports a malformed attempt */
            if (ev_jr_ns(cJSON_GetObjectItemCaseSensitive(a, "process"), "ended_ns", &x.ended))
                x.ended = INT64_MIN;
            if (n == cap) {
                vk_span *w = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof *v);
                if (!w) {
                    free(v);
                    r->oom = 1;
                    return;
                }
                v = w;
            }
            v[n++] = x;
        }
    }
    if (strcmp(backend, "cpu")) {
        free(v);
        return;
    }
    /* each invocation's attempts by start: an attempt's gap begins at the
     * latest end of those before it, or at the invocation's start */
    if (n > 1) /* qsort's pointer may not be NULL, even for none */
        qsort(v, n, sizeof *v, vk_span_cmp);
    int64_t from = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        const cJSON *o;
        int64_t ns = cold_ns(v[i].a, EV_RULE_CPULOCK);
        if (i == 0 || v[i - 1].inv != v[i].inv) {
            from = INT64_MIN;
            cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(b->validation, "invocations"))
            {
                int64_t id, s0;
                if (!ev_jr_i64(o, "invocation_id", &id) && id == v[i].inv && !ev_jr_ns(o, "started_ns", &s0))
                    from = s0;
            }
        }
        /* from == INT64_MIN: no invocation to hold it to (check 4's) */
        if (ns && from != INT64_MIN && v[i].started - from < ns + cold_ns(v[i].a, EV_RULE_BACKOFF))
            vr_fail(
                r, VR_PROTOCOL, VP,
                "job %s attempt %lld: a cpu-lock wait longer than the gap it stands in: %lld ns claimed "
                "(with its backoff), %lld ns between the end of the invocation's attempt before it (or its "
                "start) and its start",
                v[i].key, (long long)v[i].k, (long long)(ns + cold_ns(v[i].a, EV_RULE_BACKOFF)),
                (long long)(v[i].started - from));
        if (v[i].ended > from)
            from = v[i].ended;
    }
    free(v);
}

void vc_protocol(vb_bundle *b, ev_vreport *r)
{
    vr_use(r, VR_PROTOCOL);
    if (!b->proto) {
        vr_not_run(r, VR_PROTOCOL, "protocol.json could not be parsed (checks 3, 4)");
        return;
    }
    if (!b->validation || !b->vjobs) {
        vr_not_run(r, VR_PROTOCOL, "validation.json's jobs could not be read (checks 3, 4)");
        return;
    }
    if (!b->samples_ok) {
        vr_not_run(r, VR_PROTOCOL, "samples.csv failed check 3");
        return;
    }
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    const char *backend = ev_jr_str(run, "backend");
    if (!backend || !ev_protocol_ref(b->proto, backend)) {
        vr_fail(r, VR_PROTOCOL, VP, "run.backend is neither cpu nor cuda");
        backend = "cpu";
    }
    vk_values(b, r);
    size_t n_attempts = 0;
    int64_t schema = 0;
    seen_versions sv;
    memset(&sv, 0, sizeof sv);
    if (ev_jr_i64(run, "store_schema", &schema))
        schema = 0; /* a bundle from a store before schema 3: no device records to hold it to */
    /* the check tags' chains: as many hash steps as the attempts' last
     * replays, bounded like what the seeds regenerate */
    double steps = 0;
    for (size_t i = 0; schema >= 5 && i < b->n_vjobs; i++) {
        const cJSON *a, *o;
        cJSON_ArrayForEach(a, b->vjobs[i].attempts)
        {
            double most = 0;
            int64_t e;
            cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(a, "op_checks"))
            {
                if (!ev_jr_i64(o, "replay_end", &e) && (double)e > most)
                    most = (double)e;
            }
            steps += most;
        }
    }
    int tags = steps <= b->regen_limit;
    vb_ceilings ceil;
    if (vb_ceilings_get(b, &ceil)) {
        r->oom = 1;
        return;
    }
    if (!tags)
        vr_fail(
            r, VR_PROTOCOL, VP,
            "recomputing the check tags would take %.4g hash steps from the seeds, more than this verifier's "
            "limit of %.4g: not done (pass verify-bundle --regenerate-limit N to allow it)",
            steps, b->regen_limit);
    for (size_t i = 0; i < b->n_vjobs; i++) {
        const cJSON *a;
        cJSON_ArrayForEach(a, b->vjobs[i].attempts)
        {
            vk_attempt(b, &b->vjobs[i], a, b->proto, backend, (int)schema, tags, &ceil, &sv, r);
            n_attempts++;
        }
        vk_backoff(b, &b->vjobs[i], r);
    }
    vk_cpulock(b, backend, r);
    for (size_t i = 0; i < sv.n; i++)
        free(sv.text[i]);
    vb_ceilings_free(&ceil);
    /* The checkable-case rule (runner/validate.h): the runner refuses a
     * case whose validation passes an output of zeros or poison (schema
     * 4 on), or whose planted checks would pass an output that omits
     * 1/16 of each row (schema 5 on); a run stored before a rule is noted
     * under it, not failed. */
    double rule_demand = 0;
    for (size_t ci = 0; ci < b->proto->n_cases; ci++)
        rule_demand += (double)b->proto->cases[ci].rows * (double)b->proto->cases[ci].cols;
    for (size_t ci = 0; ci < b->proto->n_cases &&
                        vb_regen_allowed(b, r, VR_PROTOCOL, rule_demand, "the checkable-case rule");
         ci++) {
        ev_err e = {""}, eb = {""};
        ev_status rc = ev_case_checkable(b->proto, ci, EV_CHECKABLE_ALL, &e), rb = EV_OK;
        if (rc == EV_ENOMEM ||
            (rc && (rb = ev_case_checkable(b->proto, ci, EV_CHECKABLE_BLIND, &eb)) == EV_ENOMEM)) {
            r->oom = 1;
            continue;
        }
        if (!rc)
            continue;
        int since = rb ? 4 : 5; /* the schema the failing part of the rule came with */
        const char *msg = rb ? eb.msg : e.msg;
        if (schema >= since)
            vr_fail(r, VR_PROTOCOL, EV_MEMBER_PROTOCOL, "%s (the runner refuses such a case before it runs)",
                    msg);
        else
            vr_note(r, VR_PROTOCOL, EV_MEMBER_PROTOCOL,
                    "%s; this run was stored with schema %lld, before the checkable-case rule%s (schema %d), "
                    "so it "
                    "is noted, not failed",
                    msg, (long long)schema, since == 5 ? "'s omission part" : "", since);
    }
    vr_note(r, VR_PROTOCOL, "-",
            "%zu attempts held to: warm-up >= %.17g ms, %lld hot + %lld cold samples, median hot sample in "
            "[%.17g, %.17g] x %.17g ms (sample_band), every hot sample in [1/%g, %g] x that",
            n_attempts, b->proto->warmup_ms, (long long)b->proto->samples, (long long)b->proto->cold_samples,
            1.0 - b->proto->sample_band, 1.0 + b->proto->sample_band, b->proto->target_sample_ms,
            EV_RULE_WIDE, EV_RULE_WIDE);
}
