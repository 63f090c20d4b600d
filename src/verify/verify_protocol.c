/*
 * verify_protocol.c: check 5, "protocol".  Every attempt is held to the
 * protocol it declared (protocol.json as the runner parses it):
 *
 *  - a completed attempt has a warm-up record whose target is the declared
 *    warmup_ms and whose elapsed time is at least that;
 *  - its calibration steps all aim at target_sample_ms and exactly one is
 *    chosen; every hot sample uses the chosen replay count and the
 *    declared ops per graph (the ceiling arm: its backend's
 *    ceiling_ops_per_graph); cold samples are single launches;
 *  - the band, two rules (docs/verify.md says why):
 *    (a) the median hot sample of a completed attempt lies within the
 *        protocol's band: (1 - b) x T <= median elapsed_ms <= (1 + b) x T,
 *        T = target_sample_ms, b = tolerances.sample_band (0.5 by default);
 *    (b) every hot sample of a completed attempt lies within the verifier's
 *        fixed wide band [T / VP_WIDE, VP_WIDE x T], VP_WIDE = 4.
 *    Exception to both: when the chosen count is 1 replay, a longer sample
 *    (or median) is kept (fewer than one replay is impossible);
 *  - a completed attempt has exactly `samples` hot samples and
 *    `cold_samples` cold samples (reference arms: none or that many); an
 *    attempt that did not complete may have fewer, as its outcome says why,
 *    never more;
 *  - cold samples come with a flush record whose buffer is at least
 *    flush_cache_multiple x the cache (or the declared cap).
 */
#include <stdlib.h>
#include <string.h>

#include "runner/protocol.h"
#include "stats.h"
#include "store/outcome.h"
#include "verify_int.h"

#define VP "validation.json"

/* The wide per-sample band: every hot sample within [T / VP_WIDE, VP_WIDE x T]. */
#define VP_WIDE 4.0

/* Checks a completed attempt's warm-up and calibration records; OUT:
 * *chosen_replays (0 when none chosen). */
static void vk_warmup_calibration(const ev_protocol *p, const char *key, int64_t att, const cJSON *a,
                                  int64_t *chosen_replays, ev_vreport *r)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(a, "warmup");
    double target, elapsed;
    *chosen_replays = 0;
    if (!cJSON_IsObject(w) || vj_dbl(w, "target_ms", &target) || vj_dbl(w, "elapsed_ms", &elapsed)) {
        vr_fail(r, VR_PROTOCOL, VP, "job %s attempt %lld: completed without a warm-up record", key,
                (long long)att);
    } else {
        if (target != p->warmup_ms)
            vr_fail(r, VR_PROTOCOL, VP,
                    "job %s attempt %lld: warm-up target %.17g ms, protocol declares %.17g ms", key,
                    (long long)att, target, p->warmup_ms);
        if (!(elapsed >= p->warmup_ms))
            vr_fail(r, VR_PROTOCOL, VP,
                    "job %s attempt %lld: warm-up %.17g ms is shorter than the declared %.17g ms", key,
                    (long long)att, elapsed, p->warmup_ms);
    }
    const cJSON *cal = cJSON_GetObjectItemCaseSensitive(a, "calibrations");
    if (!cJSON_IsArray(cal) || cJSON_GetArraySize(cal) == 0) {
        vr_fail(r, VR_PROTOCOL, VP, "job %s attempt %lld: completed without calibration steps", key,
                (long long)att);
        return;
    }
    int n_chosen = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cal)
    {
        int chosen;
        int64_t replays;
        double t;
        if (vj_bool(c, "chosen", &chosen) || vj_i64(c, "replays", &replays) || vj_dbl(c, "target_ms", &t)) {
            vr_fail(r, VR_PROTOCOL, VP,
                    "job %s attempt %lld: a calibration step lacks chosen, replays or target_ms", key,
                    (long long)att);
            continue;
        }
        if (t != p->target_sample_ms)
            vr_fail(r, VR_PROTOCOL, VP,
                    "job %s attempt %lld: calibration target %.17g ms, protocol declares %.17g ms", key,
                    (long long)att, t, p->target_sample_ms);
        if (chosen) {
            n_chosen++;
            *chosen_replays = replays;
        }
    }
    if (n_chosen != 1) {
        vr_fail(r, VR_PROTOCOL, VP, "job %s attempt %lld: %d calibration steps chosen, not exactly one", key,
                (long long)att, n_chosen);
        *chosen_replays = 0;
    }
}

/* Checks one attempt of job v against the protocol. */
static void vk_attempt(vb_bundle *b, const vb_vjob *v, const cJSON *a, const ev_protocol *p,
                       const char *backend, ev_vreport *r)
{
    int64_t att;
    const char *oc_name = vj_str(a, "outcome");
    ev_outcome oc;
    if (vj_i64(a, "attempt", &att) || !oc_name || ev_outcome_parse(oc_name, &oc))
        return; /* check 4 reported it */
    ev_arm_kind kind = EV_ARM_NATIVE;
    int64_t rows = 0;
    if (ev_arm_classify(p, v->arm, &kind, &rows) != 0) {
        vr_fail(r, VR_PROTOCOL, VP, "job %s: arm %s is not an arm of the protocol", v->key, v->arm);
        return;
    }
    int reference = kind == EV_ARM_FLOOR || kind == EV_ARM_CEILING;
    const ev_proto_ref *ref = ev_protocol_ref(p, backend);
    int64_t want_opg = kind == EV_ARM_CEILING && ref ? ref->ceiling_ops_per_graph : p->ops_per_graph;

    size_t first, n_cold, n_hot;
    vb_rows_of(b, v->job_id, att, &first, &n_cold, &n_hot);
    int completed = oc == EV_OUT_COMPLETED;
    int64_t chosen = 0;
    if (completed)
        vk_warmup_calibration(p, v->key, att, a, &chosen, r);

    if (completed ? n_hot != (size_t)p->samples : n_hot > (size_t)p->samples)
        vr_fail(r, VR_PROTOCOL, "samples.csv",
                "job %s attempt %lld (%s): %zu hot samples, protocol declares %lld", v->key, (long long)att,
                oc_name, n_hot, (long long)p->samples);
    int cold_ok = completed ? (n_cold == (size_t)p->cold_samples || (reference && n_cold == 0))
                            : n_cold <= (size_t)p->cold_samples;
    if (!cold_ok)
        vr_fail(r, VR_PROTOCOL, "samples.csv",
                "job %s attempt %lld (%s): %zu cold samples, protocol declares %lld", v->key, (long long)att,
                oc_name, n_cold, (long long)p->cold_samples);

    double T = p->target_sample_ms;
    double lo = (1.0 - p->sample_band) * T, hi = (1.0 + p->sample_band) * T;
    double wlo = T / VP_WIDE, whi = VP_WIDE * T;
    size_t out_of_band = 0, bad_replays = 0, bad_opg = 0, n_el = 0;
    double *el = completed && n_hot ? malloc(n_hot * sizeof *el) : NULL;
    if (completed && n_hot && !el) {
        r->oom = 1;
        return;
    }
    for (size_t i = first + n_cold; i < first + n_cold + n_hot; i++) {
        const vb_sample *s = &b->samples.rows[i];
        if (s->ops_per_graph != want_opg)
            bad_opg++;
        if (completed && chosen > 0 && s->replays != chosen)
            bad_replays++;
        int long_single = s->replays == 1 && s->elapsed_ms > whi;
        if (completed && !(s->elapsed_ms >= wlo && (s->elapsed_ms <= whi || long_single)))
            out_of_band++;
        if (el)
            el[n_el++] = s->elapsed_ms;
    }
    if (bad_opg)
        vr_fail(r, VR_PROTOCOL, "samples.csv",
                "job %s attempt %lld: %zu hot samples not at %lld ops per graph", v->key, (long long)att,
                bad_opg, (long long)want_opg);
    if (bad_replays)
        vr_fail(r, VR_PROTOCOL, "samples.csv",
                "job %s attempt %lld: %zu hot samples not at the chosen %lld replays", v->key, (long long)att,
                bad_replays, (long long)chosen);
    if (out_of_band)
        vr_fail(r, VR_PROTOCOL, "samples.csv",
                "job %s attempt %lld: %zu hot samples outside the wide band [%.17g, %.17g] ms (target %.17g "
                "/ %g to x %g)",
                v->key, (long long)att, out_of_band, wlo, whi, T, VP_WIDE, VP_WIDE);
    double med;
    if (el && ev_median(el, n_el, &med) == EV_OK && !(med >= lo && (med <= hi || (chosen == 1 && med > hi))))
        vr_fail(
            r, VR_PROTOCOL, "samples.csv",
            "job %s attempt %lld: median hot sample %.17g ms outside the protocol's band [%.17g, %.17g] ms "
            "(target %.17g x (1 +- sample_band %.17g)): the calibration did not hold its target",
            v->key, (long long)att, med, lo, hi, T, p->sample_band);
    free(el);
    size_t bad_cold = 0;
    for (size_t i = first; i < first + n_cold; i++)
        if (b->samples.rows[i].replays != 1 || b->samples.rows[i].ops_per_graph != 1)
            bad_cold++;
    if (bad_cold)
        vr_fail(r, VR_PROTOCOL, "samples.csv",
                "job %s attempt %lld: %zu cold samples are not single launches", v->key, (long long)att,
                bad_cold);

    if (n_cold > 0 && ref) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(a, "flush");
        int64_t fb, cb;
        if (!cJSON_IsObject(f) || vj_i64(f, "flush_bytes", &fb) || vj_i64(f, "cache_bytes", &cb)) {
            vr_fail(r, VR_PROTOCOL, VP, "job %s attempt %lld: cold samples without a flush record", v->key,
                    (long long)att);
        } else {
            /* Required: k x cache, or the declared cap when that is smaller. */
            double need = (double)ref->flush_cache_multiple * (double)cb;
            if (ref->flush_max_bytes > 0 && need > (double)ref->flush_max_bytes)
                need = (double)ref->flush_max_bytes;
            if ((double)fb < need)
                vr_fail(
                    r, VR_PROTOCOL, VP,
                    "job %s attempt %lld: flush of %lld bytes is below %lld x the %lld-byte cache (cap %lld)",
                    v->key, (long long)att, (long long)fb, (long long)ref->flush_cache_multiple,
                    (long long)cb, (long long)ref->flush_max_bytes);
        }
    }
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
    const char *backend = vj_str(run, "backend");
    if (!backend || !ev_protocol_ref(b->proto, backend)) {
        vr_fail(r, VR_PROTOCOL, VP, "run.backend is neither cpu nor cuda");
        backend = "cpu";
    }
    size_t n_attempts = 0;
    for (size_t i = 0; i < b->n_vjobs; i++) {
        const cJSON *a;
        cJSON_ArrayForEach(a, b->vjobs[i].attempts)
        {
            vk_attempt(b, &b->vjobs[i], a, b->proto, backend, r);
            n_attempts++;
        }
    }
    vr_note(r, VR_PROTOCOL, "-",
            "%zu attempts held to: warm-up >= %.17g ms, %lld hot + %lld cold samples, median hot sample in "
            "[%.17g, %.17g] x %.17g ms (sample_band), every hot sample in [1/%g, %g] x that",
            n_attempts, b->proto->warmup_ms, (long long)b->proto->samples, (long long)b->proto->cold_samples,
            1.0 - b->proto->sample_band, 1.0 + b->proto->sample_band, b->proto->target_sample_ms, VP_WIDE,
            VP_WIDE);
}
