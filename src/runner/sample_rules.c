/*
 * sample_rules.c: the rules an attempt's samples keep under its protocol
 * (sample_rules.h), in one place for the supervisor and the verifier.
 *
 * For a completed attempt (a->completed), in this order:
 *  - a warm-up record whose target is warmup_ms and whose elapsed time is
 *    at least that;
 *  - calibration steps, each aimed at target_sample_ms, exactly one chosen;
 *  - exactly `samples` hot and `cold_samples` cold samples (reference arms:
 *    that many cold samples or none);
 *  - every hot sample at the arm's ops per graph (the ceiling arm: its
 *    backend's ceiling_ops_per_graph) and at the chosen replay count;
 *  - the band, two rules, T = target_sample_ms:
 *    (a) the median hot sample within [(1 - b) x T, (1 + b) x T],
 *        b = tolerances.sample_band;
 *    (b) every hot sample within [T / EV_RULE_WIDE, EV_RULE_WIDE x T];
 *    exception to both: at a chosen count of 1 replay a longer sample (or
 *    median) is kept (fewer than one replay is impossible);
 *  - cold samples are single launches, after a flush of at least
 *    flush_cache_multiple x the cache (or the declared cap);
 *  - no hot sample taken while another compute process used the device,
 *    or while NVML said it was throttled for power or heat
 *    (EV_RULE_THROTTLE_MASK); unknown (-1) is never a breach;
 *  - from store schema 6 (EV_RULE_COLD_FLUSH_SINCE), cold samples after a
 *    flush larger than the cache;
 *  - last, physical plausibility: the hot and the cold median within
 *    EV_RULE_PLAUSIBLE_MARGIN x the ceiling that applies
 *    (ev_rule_plausible).
 *  - re-calibrations (the device record's, sample_rules.h): each after a
 *    sample that drifted out of the band (ev_rule_drifted), before the
 *    last sample, at most EV_RULE_RECAL_MAX; each with exactly one chosen
 *    step, and every hot sample at the count of the calibration before it.
 * An attempt that did not complete is held to the counts only (never more
 * samples than declared), the ops per graph, the single launches and the
 * flush: its outcome says why it has fewer.
 */
#include "sample_rules.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"
#include "member.h"
#include "samples.h"

#define RULE_TEXT 320
/* samples is at most 1000 (protocol.c): the median needs no allocation. */
#define RULE_MAX_HOT 1000

/* Formats one breach and hands it to the caller; counts it. */
static void breach(ev_rule_breach_fn fn, void *ctx, int *n, ev_rule_member m, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void breach(ev_rule_breach_fn fn, void *ctx, int *n, ev_rule_member m, const char *fmt, ...)
{
    char text[RULE_TEXT];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    (*n)++;
    if (fn)
        fn(ctx, m, text);
}

/* Appends sample index i, the k-th listed, to list[cap] ("0, 3, 7"; after
 * eight, "..." once). */
static void list_index(char *list, size_t cap, size_t k, size_t i)
{
    size_t len = strlen(list);
    if (k < 8)
        snprintf(list + len, cap - len, "%s%zu", k ? ", " : "", i);
    else if (k == 8)
        snprintf(list + len, cap - len, ", ...");
}

int ev_rule_drifted(const ev_protocol *p, double ms, int64_t replays)
{
    double T = p->target_sample_ms;
    return ms < (1.0 - p->sample_band) * T || (ms > (1.0 + p->sample_band) * T && replays > 1);
}

/* The re-calibrations' places (a->recal_*) against the steps and the hot
 * samples of a completed attempt: each begins after the steps before it
 * and before the last step, after a later hot sample than the one before
 * it and before the last sample, and follows a sample that drifted out of
 * the band (ev_rule_drifted).  Returns 1 when the places are well formed
 * (the steps then split into groups there), else 0. */
static int recal_rules(const ev_protocol *p, const ev_rule_attempt *a, ev_rule_breach_fn fn, void *ctx,
                       int *n)
{
    const ev_rule_member V = EV_RULE_VALIDATION_JSON;
    double T = p->target_sample_ms, lo = (1.0 - p->sample_band) * T, hi = (1.0 + p->sample_band) * T;
    int64_t prev_first = 0, prev_after = -1;
    int ok = 1;

    for (size_t k = 0; k < a->n_recal; k++) {
        int64_t f = a->recal_first[k], at = a->recal_after[k];
        if (f <= prev_first || f >= (int64_t)a->n_steps) {
            breach(fn, ctx, n, V,
                   "re-calibration %zu begins at calibration step %lld: not after the steps before it and "
                   "before the last of %zu steps",
                   k + 1, (long long)f, a->n_steps);
            ok = 0;
        }
        if (at <= prev_after || at + 1 >= (int64_t)a->n_hot) {
            breach(fn, ctx, n, V,
                   "re-calibration %zu after hot sample %lld: not after a later sample than the one before "
                   "and before the last of %zu hot samples",
                   k + 1, (long long)at, a->n_hot);
            ok = 0;
        } else if (!ev_rule_drifted(p, a->hot[at].elapsed_ms, a->hot[at].replays)) {
            breach(fn, ctx, n, V,
                   "re-calibration %zu after hot sample %lld, whose %.17g ms at %lld replays is within the "
                   "band [%.17g, %.17g] ms: a re-calibration follows only a sample that drifted out of it",
                   k + 1, (long long)at, a->hot[at].elapsed_ms, (long long)a->hot[at].replays, lo, hi);
        }
        prev_first = f;
        prev_after = at;
    }
    return ok;
}

/* The group of calibration step i (0: the calibration before the samples,
 * k: the k-th re-calibration) when there are groups re-calibrations. */
static size_t step_group(const ev_rule_attempt *a, size_t groups, size_t i)
{
    size_t g = 0;
    while (g < groups && i >= (size_t)a->recal_first[g])
        g++;
    return g;
}

/* The group of hot sample i: the re-calibrations before it. */
static size_t sample_group(const ev_rule_attempt *a, size_t groups, size_t i)
{
    size_t g = 0;
    while (g < groups && (int64_t)i > a->recal_after[g])
        g++;
    return g;
}

/* The warm-up and calibration rules of a completed attempt whose steps
 * split into 1 + groups calibrations (groups: its well-formed
 * re-calibrations).  OUT: chosen[g], calibration g's chosen replay count
 * (0 when not exactly one of its steps was chosen). */
static void warmup_calibration(const ev_protocol *p, const ev_rule_attempt *a, size_t groups, int64_t *chosen,
                               ev_rule_breach_fn fn, void *ctx, int *n)
{
    const ev_rule_member V = EV_RULE_VALIDATION_JSON;
    int n_chosen[EV_RULE_RECAL_MAX + 1] = {0};

    for (size_t g = 0; g <= groups; g++)
        chosen[g] = 0;
    if (!a->has_warmup) {
        breach(fn, ctx, n, V, "completed without a warm-up record");
    } else {
        if (a->warmup_target_ms != p->warmup_ms)
            breach(fn, ctx, n, V, "warm-up target %.17g ms, protocol declares %.17g ms", a->warmup_target_ms,
                   p->warmup_ms);
        if (!(a->warmup_elapsed_ms >= p->warmup_ms))
            breach(fn, ctx, n, V, "warm-up %.17g ms is shorter than the declared %.17g ms",
                   a->warmup_elapsed_ms, p->warmup_ms);
    }
    if (a->n_steps == 0) {
        breach(fn, ctx, n, V, "completed without calibration steps");
        return;
    }
    for (size_t i = 0; i < a->n_steps; i++) {
        size_t g = step_group(a, groups, i);
        if (a->steps[i].target_ms != p->target_sample_ms)
            breach(fn, ctx, n, V, "calibration target %.17g ms, protocol declares %.17g ms",
                   a->steps[i].target_ms, p->target_sample_ms);
        if (a->steps[i].chosen) {
            n_chosen[g]++;
            chosen[g] = a->steps[i].replays;
        }
    }
    for (size_t g = 0; g <= groups; g++) {
        if (n_chosen[g] == 1)
            continue;
        if (g == 0)
            breach(fn, ctx, n, V, "%d calibration steps chosen, not exactly one", n_chosen[g]);
        else
            breach(
                fn, ctx, n, V,
                "%d calibration steps chosen in re-calibration %zu (after hot sample %lld), not exactly one",
                n_chosen[g], g, (long long)a->recal_after[g - 1]);
        chosen[g] = 0;
    }
}

/* The clock: no hot sample of a completed attempt below clock_band x the
 * attempt's highest SM clock (a device throttled for power or heat while
 * it was measured; docs/verify.md, check 5). */
static void clock_rule(const ev_protocol *p, const ev_rule_attempt *a, ev_rule_breach_fn fn, void *ctx,
                       int *n)
{
    const ev_rule_member S = EV_RULE_SAMPLES_CSV;
    int64_t top = -1, low = -1;
    size_t slow = 0;
    for (size_t i = 0; i < a->n_hot; i++)
        if (a->hot[i].sm_clock_mhz > top)
            top = a->hot[i].sm_clock_mhz;
    for (size_t i = 0; top > 0 && p->clock_band > 0 && i < a->n_hot; i++) {
        int64_t c = a->hot[i].sm_clock_mhz;
        if (c >= 0 && (double)c < p->clock_band * (double)top) {
            slow++;
            low = low < 0 || c < low ? c : low;
        }
    }
    if (slow)
        breach(
            fn, ctx, n, S,
            "%zu hot samples at an SM clock below clock_band %.17g x the attempt's highest %lld MHz (lowest "
            "%lld MHz): the device was throttled while it was measured",
            slow, p->clock_band, (long long)top, (long long)low);
}

/* The device's hygiene (docs/defenses.md): no sample of a completed
 * attempt (hot, then cold) while another process used the GPU, or
 * throttled for power or heat; no hot sample whose device work outlasted
 * its timed events (late work: the worst sample's figures in the reason). */
static void hygiene_rules(const ev_rule_attempt *a, ev_rule_breach_fn fn, void *ctx, int *n)
{
    const ev_rule_member V = EV_RULE_VALIDATION_JSON;
    for (int c = 0; c < 2; c++) {
        const ev_rule_sample *smp = c ? a->cold : a->hot;
        size_t ns = c ? a->n_cold : a->n_hot;
        const char *which = c ? "cold" : "hot";
        char busy[96] = "", hot[96] = "";
        size_t n_busy = 0, n_throttled = 0;
        long long bits = 0;
        for (size_t i = 0; i < ns; i++) {
            if (smp[i].other_processes > 0)
                list_index(busy, sizeof busy, n_busy++, i);
            if (smp[i].throttle_reasons > 0 && (smp[i].throttle_reasons & EV_RULE_THROTTLE_MASK)) {
                list_index(hot, sizeof hot, n_throttled++, i);
                bits |= smp[i].throttle_reasons & EV_RULE_THROTTLE_MASK;
            }
        }
        if (n_busy)
            breach(fn, ctx, n, V,
                   "%zu %s samples taken while another compute process used the GPU (%s samples %s)", n_busy,
                   which, which, busy);
        if (n_throttled)
            breach(fn, ctx, n, V,
                   "%zu %s samples taken while the GPU was throttled for power or heat (%s samples %s; NVML "
                   "reasons 0x%llx)",
                   n_throttled, which, which, hot, bits);
    }
    /* late device work: the worst sample's figures in the reason */
    char late[96] = "";
    size_t n_late = 0;
    double worst_wall = 0, worst_el = 0;
    for (size_t i = 0; i < a->n_hot; i++) {
        const ev_rule_sample *s = &a->hot[i];
        if (s->wall_ms >= 0 && s->wall_ms > EV_RULE_LATE_FACTOR * s->elapsed_ms + EV_RULE_LATE_SLACK_MS) {
            list_index(late, sizeof late, n_late++, i);
            if (s->wall_ms - s->elapsed_ms > worst_wall - worst_el) {
                worst_wall = s->wall_ms;
                worst_el = s->elapsed_ms;
            }
        }
    }
    if (n_late)
        breach(fn, ctx, n, V,
               "%zu hot samples whose device work outlasted their timed events (hot samples %s; worst: "
               "%.3f ms on the host's wall clock around the synchronised replay against %.3f ms between "
               "its events, over %g x + %g ms)",
               n_late, late, worst_wall, worst_el, EV_RULE_LATE_FACTOR, EV_RULE_LATE_SLACK_MS);
}

/* The cold samples: single launches, after a flush record whose flush
 * exceeded the cache and met the protocol's multiple of it (or its cap). */
static void cold_rules(const ev_rule_attempt *a, const ev_proto_ref *ref, ev_rule_breach_fn fn, void *ctx,
                       int *n)
{
    const ev_rule_member S = EV_RULE_SAMPLES_CSV, V = EV_RULE_VALIDATION_JSON;
    size_t bad_cold = 0;
    for (size_t i = 0; i < a->n_cold; i++)
        if (a->cold[i].replays != 1 || a->cold[i].ops_per_graph != 1)
            bad_cold++;
    if (bad_cold)
        breach(fn, ctx, n, S, "%zu cold samples are not single launches", bad_cold);

    if (a->n_cold > 0 && ref) {
        if (!a->has_flush) {
            breach(fn, ctx, n, V, "cold samples without a flush record");
        } else {
            /* A cold sample is cold only when the flush exceeded the cache
             * (a cap may not bring it below: the runner refuses such a
             * protocol on cpu before it runs). */
            if (a->schema >= EV_RULE_COLD_FLUSH_SINCE && a->flush_bytes <= a->cache_bytes)
                breach(fn, ctx, n, V,
                       "flush of %lld bytes does not exceed the %lld-byte cache: the cold samples were not "
                       "cold",
                       (long long)a->flush_bytes, (long long)a->cache_bytes);
            /* Required: k x cache, or the declared cap when that is smaller. */
            double need = (double)ref->flush_cache_multiple * (double)a->cache_bytes;
            if (ref->flush_max_bytes > 0 && need > (double)ref->flush_max_bytes)
                need = (double)ref->flush_max_bytes;
            if ((double)a->flush_bytes < need)
                breach(fn, ctx, n, V, "flush of %lld bytes is below %lld x the %lld-byte cache (cap %lld)",
                       (long long)a->flush_bytes, (long long)ref->flush_cache_multiple,
                       (long long)a->cache_bytes, (long long)ref->flush_max_bytes);
        }
    }
}

/* Physical plausibility of a completed attempt's medians, hot then cold
 * (ev_rule_plausible). */
static void plausible_rule(const char *backend, const ev_rule_attempt *a, ev_rule_breach_fn fn, void *ctx,
                           int *n)
{
    const ev_rule_member S = EV_RULE_SAMPLES_CSV;
    char why[RULE_TEXT];
    for (int hot = 1; hot >= 0; hot--) {
        const ev_rule_sample *smp = hot ? a->hot : a->cold;
        size_t ns = hot ? a->n_hot : a->n_cold, m = 0;
        double v[RULE_MAX_HOT], mid;
        for (size_t i = 0; i < ns && m < RULE_MAX_HOT; i++)
            if (ev_per_op_us(smp[i].elapsed_ms, smp[i].replays, smp[i].ops_per_graph, &v[m]) == EV_OK)
                m++;
        if (m == ns && m && ev_median(v, m, &mid) == EV_OK &&
            ev_rule_plausible(backend, hot, &a->bound, mid, why, sizeof why))
            breach(fn, ctx, n, S, "%s", why);
    }
}

int ev_rules_check(const ev_protocol *p, const char *backend, const ev_rule_attempt *a, ev_rule_breach_fn fn,
                   void *ctx)
{
    const ev_rule_member S = EV_RULE_SAMPLES_CSV;
    ev_arm_kind kind = EV_ARM_NATIVE;
    int64_t rows = 0, chosen[EV_RULE_RECAL_MAX + 1] = {0};
    size_t groups = 0;
    int n = 0;

    if (ev_arm_classify(p, a->arm, &kind, &rows) != 0)
        return -1;
    int reference = kind == EV_ARM_FLOOR || kind == EV_ARM_CEILING || kind == EV_ARM_CEILING_L2;
    const ev_proto_ref *ref = ev_protocol_ref(p, backend);
    int64_t want_opg = kind == EV_ARM_CEILING && ref ? ref->ceiling_ops_per_graph : p->ops_per_graph;
    int completed = a->completed;

    if (completed && a->host.known && a->host.fifo && !p->cpu_realtime)
        breach(fn, ctx, &n, EV_RULE_VALIDATION_JSON,
               "measured at real-time priority (SCHED_FIFO %lld), which the protocol does not declare "
               "(cpu_priority is normal)",
               (long long)a->host.priority);
    if (completed) {
        groups = a->n_recal <= EV_RULE_RECAL_MAX && recal_rules(p, a, fn, ctx, &n) ? a->n_recal : 0;
        warmup_calibration(p, a, groups, chosen, fn, ctx, &n);
    }
    /* every calibration chose one replay (the band's exception below) */
    int single = 1;
    for (size_t g = 0; g <= groups; g++)
        single &= chosen[g] == 1;
    if (completed ? a->n_hot != (size_t)p->samples : a->n_hot > (size_t)p->samples)
        breach(fn, ctx, &n, S, "%zu hot samples, protocol declares %lld", a->n_hot, (long long)p->samples);
    int cold_ok = completed ? (a->n_cold == (size_t)p->cold_samples || (reference && a->n_cold == 0))
                            : a->n_cold <= (size_t)p->cold_samples;
    if (!cold_ok)
        breach(fn, ctx, &n, S, "%zu cold samples, protocol declares %lld", a->n_cold,
               (long long)p->cold_samples);

    double T = p->target_sample_ms;
    double lo = (1.0 - p->sample_band) * T, hi = (1.0 + p->sample_band) * T;
    double wlo = T / EV_RULE_WIDE, whi = EV_RULE_WIDE * T;
    double el[RULE_MAX_HOT];
    size_t out_of_band = 0, bad_replays = 0, bad_opg = 0, n_el = 0;
    for (size_t i = 0; i < a->n_hot; i++) {
        const ev_rule_sample *s = &a->hot[i];
        int64_t want = chosen[sample_group(a, groups, i)];
        if (s->ops_per_graph != want_opg)
            bad_opg++;
        if (completed && want > 0 && s->replays != want)
            bad_replays++;
        int long_single = s->replays == 1 && s->elapsed_ms > whi;
        if (completed && !(s->elapsed_ms >= wlo && (s->elapsed_ms <= whi || long_single)))
            out_of_band++;
        if (completed && n_el < RULE_MAX_HOT)
            el[n_el++] = s->elapsed_ms;
    }
    if (bad_opg)
        breach(fn, ctx, &n, S, "%zu hot samples not at %lld ops per graph", bad_opg, (long long)want_opg);
    if (completed)
        clock_rule(p, a, fn, ctx, &n);
    if (completed)
        hygiene_rules(a, fn, ctx, &n);
    if (bad_replays && groups == 0)
        breach(fn, ctx, &n, S, "%zu hot samples not at the chosen %lld replays", bad_replays,
               (long long)chosen[0]);
    else if (bad_replays)
        breach(fn, ctx, &n, S,
               "%zu hot samples not at the replays chosen by the calibration before them (%lld, then %lld%s)",
               bad_replays, (long long)chosen[0], (long long)chosen[1], groups > 1 ? ", ..." : "");
    if (out_of_band)
        breach(fn, ctx, &n, S,
               "%zu hot samples outside the wide band [%.17g, %.17g] ms (target %.17g / %g to x %g)",
               out_of_band, wlo, whi, T, EV_RULE_WIDE, EV_RULE_WIDE);
    double med;
    if (n_el && n_el == a->n_hot && ev_median(el, n_el, &med) == EV_OK &&
        !(med >= lo && (med <= hi || (single && med > hi))))
        breach(
            fn, ctx, &n, S,
            "median hot sample %.17g ms outside the protocol's band [%.17g, %.17g] ms (target %.17g x (1 +- "
            "sample_band %.17g)): the calibration did not hold its target",
            med, lo, hi, T, p->sample_band);

    cold_rules(a, ref, fn, ctx, &n);

    if (completed && a->bound.bytes > 0)
        plausible_rule(backend, a, fn, ctx, &n);
    return n;
}

double ev_rule_case_bytes(int64_t rows, int64_t cols, size_t dtype_size)
{
    if (rows <= 0 || cols <= 0)
        return 0;
    return ((double)rows * (double)cols + (double)rows) * (double)dtype_size;
}

double ev_rule_working_bytes(int64_t variants, int64_t in_span, int64_t out_span, int64_t ops)
{
    if (in_span < 0 || out_span < 0 || variants < 1 || ops < 1)
        return 0;
    return (double)variants * (double)in_span + (double)ops * (double)out_span;
}

int64_t ev_rule_device_variants(const cJSON *d)
{
    const cJSON *pl = cJSON_IsObject(d) ? cJSON_GetObjectItemCaseSensitive(d, "plants") : NULL;
    const cJSON *v = cJSON_IsObject(pl) ? cJSON_GetObjectItemCaseSensitive(pl, "variants") : NULL;
    if (!v && cJSON_IsObject(d))
        v = cJSON_GetObjectItemCaseSensitive(d, "input_sets");
    if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= 1e12 &&
        v->valuedouble == floor(v->valuedouble))
        return (int64_t)v->valuedouble;
    return 1;
}

double ev_rule_ceiling_bpus(int64_t in_span, double median_us)
{
    return in_span > 0 && median_us > 0 ? (double)in_span / median_us : NAN;
}

const char *ev_rule_ceiling_name(ev_rule_ceiling c)
{
    static const char *const names[] = {"none", "memory", "l2", "largest"};
    return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "?";
}

ev_rule_ceiling ev_rule_plausible_bound(const char *backend, int hot, const ev_rule_bound *b,
                                        double *bound_bpus)
{
    int have_mem = b->memory_bpus > 0, have_l2 = b->l2_bpus > 0; /* (NaN compares false) */
    int in_l2 = hot && !(b->working_bytes > EV_RULE_L2_SPAN * (double)b->cache_bytes);
    ev_rule_ceiling c = EV_RULE_CEIL_NONE;
    double bpus = 0;
    *bound_bpus = 0;
    if (!(b->bytes > 0))
        return EV_RULE_CEIL_NONE;
    if (backend && !strcmp(backend, "cpu")) {
        if (have_mem && have_l2) {
            c = EV_RULE_CEIL_LARGEST;
            bpus = b->memory_bpus > b->l2_bpus ? b->memory_bpus : b->l2_bpus;
        } else if (have_l2) {
            c = EV_RULE_CEIL_L2;
            bpus = b->l2_bpus;
        } else if (have_mem && !in_l2) {
            c = EV_RULE_CEIL_MEMORY;
            bpus = b->memory_bpus;
        }
    } else if (in_l2) {
        if (have_l2) {
            c = EV_RULE_CEIL_L2;
            bpus = b->l2_bpus;
        }
    } else if (have_mem) {
        c = EV_RULE_CEIL_MEMORY;
        bpus = b->memory_bpus;
    }
    if (c != EV_RULE_CEIL_NONE)
        *bound_bpus = EV_RULE_PLAUSIBLE_MARGIN * bpus;
    return c;
}

int ev_rule_plausible(const char *backend, int hot, const ev_rule_bound *b, double median_us, char *why,
                      size_t cap)
{
    double bound;
    ev_rule_ceiling c = ev_rule_plausible_bound(backend, hot, b, &bound);
    if (c == EV_RULE_CEIL_NONE || !(median_us > 0) || !(b->bytes / median_us > bound))
        return 0;
    snprintf(
        why, cap,
        "%s: %s median %.6g us per op moves its %.17g bytes at %.4g GB/s, over %g x the run's %s ceiling "
        "(%.4g GB/s%s): no kernel moves bytes faster than the device streams them",
        EV_RULE_PLAUSIBLE_NAME, hot ? "hot" : "cold", median_us, b->bytes, b->bytes / median_us / 1e3,
        EV_RULE_PLAUSIBLE_MARGIN, ev_rule_ceiling_name(c), bound / EV_RULE_PLAUSIBLE_MARGIN / 1e3,
        c == EV_RULE_CEIL_L2 && hot ? ", a working set within 2 x the cache" : "");
    return 1;
}

typedef struct first_breach {
    char *out;
    size_t cap;
    int seen;
} first_breach;

/* Keeps the first breach's text. */
static void keep_first(void *ctx, ev_rule_member m, const char *text)
{
    first_breach *f = ctx;
    (void)m;
    if (f->seen++ == 0)
        snprintf(f->out, f->cap, "%s%s", EV_RULE_PREFIX, text);
}

int ev_rules_reason(const ev_protocol *p, const char *backend, const ev_rule_attempt *a, char *out,
                    size_t cap)
{
    first_breach f = {out, cap, 0};
    int n;

    if (cap)
        out[0] = '\0';
    n = ev_rules_check(p, backend, a, cap ? keep_first : NULL, &f);
    if (n > 1 && cap) {
        size_t len = strlen(out);
        if (len < cap)
            snprintf(out + len, cap - len, " (%d more)", n - 1);
    }
    return n;
}

const char *ev_rule_member_name(ev_rule_member m)
{
    return m == EV_RULE_SAMPLES_CSV ? EV_MEMBER_SAMPLES : EV_MEMBER_VALIDATION;
}

int ev_rule_floor_applies(const char *backend)
{
    return !(backend && !strcmp(backend, "cpu"));
}

int ev_rule_impossible(double hot_us, int64_t rows, double floor_us, int floor_applies, char *why, size_t cap)
{
    if (rows <= 0)
        return 0; /* R = 0: no work, no time to bound */
    if (floor_applies && floor_us > 0 && hot_us < floor_us / EV_RULE_FLOOR_MARGIN) {
        snprintf(
            why, cap,
            "hot median %.6g us per op is below 1/%g of the run's floor (%.6g us, an empty launch): no op "
            "runs faster than an empty one",
            hot_us, EV_RULE_FLOOR_MARGIN, floor_us);
        return 1;
    }
    return 0;
}

/* An integer member in [lo, hi] (exact in a double).  Returns 0 and *out,
 * or -1. */
static int dev_int(const cJSON *it, int64_t lo, int64_t hi, int64_t *out)
{
    double v;
    if (!cJSON_IsNumber(it))
        return -1;
    v = it->valuedouble;
    if (!(v == floor(v)) || v < (double)lo || v > (double)hi || fabs(v) > 9007199254740992.0)
        return -1;
    *out = (int64_t)v;
    return 0;
}

/* The device record's plants (kernels/plants.h): null (the floor, the
 * ceiling, a record written before them), or {seed: 16 lowercase hex
 * digits, variants, rows, epochs, kept_op}, each member present once.
 * Returns 0, or -1 with why. */
static int dev_plants(const cJSON *r, char *why, size_t cap)
{
    static const char *const ints[] = {"variants", "rows", "epochs", "kept_op"};
    static const int64_t lo[] = {1, 0, 1, 0};
    const cJSON *it;
    int64_t x;
    if (!r || cJSON_IsNull(r))
        return 0;
    if (!cJSON_IsObject(r)) {
        snprintf(why, cap, "plants: must be null or an object");
        return -1;
    }
    cJSON_ArrayForEach(it, r)
    {
        const char *k = it->string;
        int known = !strcmp(k, "seed");
        for (size_t i = 0; i < 4; i++)
            known |= !strcmp(k, ints[i]);
        if (!known) {
            snprintf(why, cap, "plants.%.32s: not a member of the plants", k);
            return -1;
        }
    }
    it = cJSON_GetObjectItemCaseSensitive(r, "seed");
    if (!cJSON_IsString(it) || strlen(it->valuestring) != 16 ||
        strspn(it->valuestring, "0123456789abcdef") != 16) {
        snprintf(why, cap, "plants.seed: must be 16 lowercase hex digits");
        return -1;
    }
    for (size_t i = 0; i < 4; i++)
        if (dev_int(cJSON_GetObjectItemCaseSensitive(r, ints[i]), lo[i], INT64_C(1) << 40, &x)) {
            snprintf(why, cap, "plants.%s: must be an integer >= %lld", ints[i], (long long)lo[i]);
            return -1;
        }
    return 0;
}

/* The rotation member: null, or {seed, before, rows}.  Returns 0 or -1
 * with why. */
static int dev_rotation(const cJSON *r, char *why, size_t cap)
{
    const cJSON *it;
    int64_t x;
    if (cJSON_IsNull(r))
        return 0;
    if (!cJSON_IsObject(r)) {
        snprintf(why, cap, "rotation: must be null or an object");
        return -1;
    }
    cJSON_ArrayForEach(it, r)
    {
        const char *k = it->string;
        if (!strcmp(k, "seed")) {
            if (!cJSON_IsString(it) || strlen(it->valuestring) != 16 ||
                strspn(it->valuestring, "0123456789abcdef") != 16) {
                snprintf(why, cap, "rotation.seed: must be 16 lowercase hex digits");
                return -1;
            }
        } else if (!strcmp(k, "before")) {
            if (dev_int(it, 1, 1000000, &x)) {
                snprintf(why, cap, "rotation.before: must be a hot sample index >= 1");
                return -1;
            }
        } else if (!strcmp(k, "rows")) {
            const cJSON *e;
            if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) < 1) {
                snprintf(why, cap, "rotation.rows: must be a non-empty array of row indexes");
                return -1;
            }
            cJSON_ArrayForEach(e, it) if (dev_int(e, 0, INT64_C(1) << 40, &x))
            {
                snprintf(why, cap, "rotation.rows: must be a non-empty array of row indexes");
                return -1;
            }
        } else {
            snprintf(why, cap, "rotation.%.32s: not a member of the rotation", k);
            return -1;
        }
    }
    if (!cJSON_GetObjectItemCaseSensitive(r, "seed") || !cJSON_GetObjectItemCaseSensitive(r, "before") ||
        !cJSON_GetObjectItemCaseSensitive(r, "rows")) {
        snprintf(why, cap, "rotation: needs seed, before and rows");
        return -1;
    }
    return 0;
}

/* Array member k of n integers >= -1, one per `what` ("hot", "cold")
 * sample; absent is well formed unless required (the cold arrays are
 * absent in records before cold samples were judged).  Returns 0, or -1
 * with why. */
static int dev_sample_ints(const cJSON *d, const char *k, size_t n, const char *what, int required, char *why,
                           size_t cap)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(d, k), *e;
    int64_t x;
    if (!arr && !required)
        return 0;
    if (!cJSON_IsArray(arr) || (size_t)cJSON_GetArraySize(arr) != n) {
        snprintf(why, cap, "%s: must be an array of %zu integers, one per %s sample", k, n, what);
        return -1;
    }
    cJSON_ArrayForEach(e, arr) if (dev_int(e, -1, INT64_C(1) << 53, &x))
    {
        snprintf(why, cap, "%s: must be integers >= -1", k);
        return -1;
    }
    return 0;
}

/* Copies array member k (checked by dev_sample_ints; absent: nothing)
 * into smp[0 .. n): other_processes, or throttle_reasons when reasons. */
static void dev_sample_fill(const cJSON *d, const char *k, ev_rule_sample *smp, size_t n, int reasons)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(d, k);
    const cJSON *e = arr ? arr->child : NULL;
    int64_t x = -1;
    for (size_t i = 0; i < n && e; i++, e = e->next) {
        dev_int(e, -1, INT64_C(1) << 53, &x);
        if (reasons)
            smp[i].throttle_reasons = x;
        else
            smp[i].other_processes = x;
    }
}

/* The foreign CPU time members of device record d (runner/foreign.h;
 * absent in records written before it was kept): foreign_source one of
 * schedstat, stat, none; hot_foreign_ms and cold_foreign_ms one finite
 * number (ms, possibly slightly negative) or null (unknown) per sample.
 * They fail no sample: only their form is held.  Returns 0, or -1 with
 * why. */
static int dev_foreign(const cJSON *d, size_t n_hot, size_t n_cold, char *why, size_t cap)
{
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(d, "foreign_source");
    static const char *const arrs[] = {"hot_foreign_ms", "cold_foreign_ms"};
    if (src &&
        !(cJSON_IsString(src) && (!strcmp(src->valuestring, "schedstat") ||
                                  !strcmp(src->valuestring, "stat") || !strcmp(src->valuestring, "none")))) {
        snprintf(why, cap, "foreign_source: must be \"schedstat\", \"stat\" or \"none\"");
        return -1;
    }
    for (int k = 0; k < 2; k++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(d, arrs[k]), *e;
        size_t n = k ? n_cold : n_hot;
        if (!a)
            continue;
        if (!cJSON_IsArray(a) || (size_t)cJSON_GetArraySize(a) != n) {
            snprintf(why, cap, "%s: must be an array of %zu numbers or nulls, one per %s sample", arrs[k], n,
                     k ? "cold" : "hot");
            return -1;
        }
        cJSON_ArrayForEach(e, a) if (!cJSON_IsNull(e) && !(cJSON_IsNumber(e) && isfinite(e->valuedouble)))
        {
            snprintf(why, cap, "%s: must be finite numbers (ms) or null (unknown)", arrs[k]);
            return -1;
        }
    }
    return 0;
}

/* The host member (absent: well formed).  Returns 0, or -1 with why. */
static int dev_host(const cJSON *h, char *why, size_t cap)
{
    static const char *const keys[] = {"scheduler", "priority", "refused", "load_start", "load_end", "cpus"};
    const cJSON *it;
    int64_t x;
    if (!h)
        return 0;
    if (!cJSON_IsObject(h)) {
        snprintf(why, cap, "host: must be an object");
        return -1;
    }
    cJSON_ArrayForEach(it, h)
    {
        size_t k = 0;
        while (k < 6 && strcmp(it->string, keys[k]))
            k++;
        if (k == 6) {
            snprintf(why, cap, "host.%.32s: not a member of the host facts", it->string);
            return -1;
        }
    }
    it = cJSON_GetObjectItemCaseSensitive(h, "scheduler");
    if (!cJSON_IsString(it) || (strcmp(it->valuestring, "fifo") && strcmp(it->valuestring, "other"))) {
        snprintf(why, cap, "host.scheduler: must be \"fifo\" or \"other\"");
        return -1;
    }
    int fifo = !strcmp(it->valuestring, "fifo");
    if (dev_int(cJSON_GetObjectItemCaseSensitive(h, "priority"), fifo ? 1 : 0, fifo ? 99 : 0, &x)) {
        snprintf(why, cap, "host.priority: must be 1..99 with scheduler fifo, else 0");
        return -1;
    }
    it = cJSON_GetObjectItemCaseSensitive(h, "refused");
    if (fifo ? !cJSON_IsNull(it)
             : !(cJSON_IsString(it) && it->valuestring[0] && strlen(it->valuestring) < EV_RULE_REFUSED_MAX)) {
        snprintf(why, cap,
                 "host.refused: must be null with scheduler fifo, else why, a string of 1 to %d bytes",
                 EV_RULE_REFUSED_MAX - 1);
        return -1;
    }
    for (int k = 0; k < 2; k++) {
        it = cJSON_GetObjectItemCaseSensitive(h, k ? "load_end" : "load_start");
        if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < 0) {
            snprintf(why, cap, "host.%s: must be a number >= 0", k ? "load_end" : "load_start");
            return -1;
        }
    }
    if (dev_int(cJSON_GetObjectItemCaseSensitive(h, "cpus"), 1, 1 << 20, &x)) {
        snprintf(why, cap, "host.cpus: must be an integer >= 1");
        return -1;
    }
    return 0;
}

/* The recalibrations member (absent: none).  Returns 0, or -1 with why. */
static int dev_recal(const cJSON *r, char *why, size_t cap)
{
    const cJSON *e;
    int64_t x;
    if (!r)
        return 0;
    if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) > EV_RULE_RECAL_MAX) {
        snprintf(why, cap, "recalibrations: must be an array of at most %d re-calibrations",
                 EV_RULE_RECAL_MAX);
        return -1;
    }
    cJSON_ArrayForEach(e, r)
    {
        if (!cJSON_IsObject(e) || cJSON_GetArraySize(e) != 2 ||
            dev_int(cJSON_GetObjectItemCaseSensitive(e, "after"), 0, INT64_C(1) << 53, &x) ||
            dev_int(cJSON_GetObjectItemCaseSensitive(e, "first_step"), 1, INT64_C(1) << 53, &x)) {
            snprintf(why, cap,
                     "recalibrations: each must be {\"after\": a hot sample index, \"first_step\": a "
                     "calibration step >= 1}");
            return -1;
        }
    }
    return 0;
}

int ev_rule_device_read(const cJSON *d, ev_rule_sample *hot, size_t n_hot, ev_rule_sample *cold,
                        size_t n_cold, char *why, size_t cap)
{
    static const char *const ints[] = {
        "other_processes", "throttle_reasons", "persisting_l2_bytes", "ecc", "mig", "persistence"};
    static const char *const arrays[] = {"hot_other_processes", "hot_throttle_reasons"};
    static const char *const cold_arrays[] = {"cold_other_processes", "cold_throttle_reasons"};
    const cJSON *it;
    int64_t x;

    if (!cJSON_IsObject(d)) {
        snprintf(why, cap, "not a JSON object");
        return -1;
    }
    cJSON_ArrayForEach(it, d)
    {
        const char *k = it->string;
        int known = !strcmp(k, "type") || !strcmp(k, "rotation") || !strcmp(k, "self_seen") ||
                    !strcmp(k, "versions") || !strcmp(k, "input_sets") || !strcmp(k, "hot_wall_ms") ||
                    !strcmp(k, "plants") || !strcmp(k, "foreign_source") || !strcmp(k, "hot_foreign_ms") ||
                    !strcmp(k, "cold_foreign_ms") || !strcmp(k, "host") || !strcmp(k, "recalibrations") ||
                    !strcmp(k, "capture");
        for (size_t i = 0; i < 6; i++)
            known |= !strcmp(k, ints[i]);
        for (size_t i = 0; i < 2; i++)
            known |= !strcmp(k, arrays[i]) || !strcmp(k, cold_arrays[i]);
        if (!known) {
            snprintf(why, cap, "%.32s: not a member of the device record", k);
            return -1;
        }
    }
    it = cJSON_GetObjectItemCaseSensitive(d, "type");
    if (it && !(cJSON_IsString(it) && !strcmp(it->valuestring, "device"))) {
        snprintf(why, cap, "type: must be \"device\"");
        return -1;
    }
    if (dev_rotation(cJSON_GetObjectItemCaseSensitive(d, "rotation"), why, cap) ||
        dev_plants(cJSON_GetObjectItemCaseSensitive(d, "plants"), why, cap))
        return -1;
    for (size_t i = 0; i < 6; i++)
        if (dev_int(cJSON_GetObjectItemCaseSensitive(d, ints[i]), -1, i < 3 ? INT64_C(1) << 53 : 1, &x)) {
            snprintf(why, cap, "%s: must be an integer %s", ints[i], i < 3 ? ">= -1" : "-1, 0 or 1");
            return -1;
        }
    /* input_sets: absent in records written before the two input sets */
    it = cJSON_GetObjectItemCaseSensitive(d, "input_sets");
    if (it && dev_int(it, 1, 2, &x)) {
        snprintf(why, cap, "input_sets: must be 1 or 2");
        return -1;
    }
    if (!cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(d, "self_seen"))) {
        snprintf(why, cap, "self_seen: must be true or false");
        return -1;
    }
    it = cJSON_GetObjectItemCaseSensitive(d, "versions");
    if (!cJSON_IsObject(it)) {
        snprintf(why, cap, "versions: must be an object");
        return -1;
    }
    {
        const cJSON *v;
        cJSON_ArrayForEach(v, it)
        {
            static const char *const known[] = {"cub", "torch", "triton", "python", "numpy", "cupy", NULL};
            int ok = 0;
            for (size_t i = 0; known[i]; i++)
                ok |= !strcmp(v->string, known[i]);
            if (!ok) {
                snprintf(why, cap, "versions.%.32s: not cub, torch, triton, python, numpy or cupy",
                         v->string);
                return -1;
            }
            if (!cJSON_IsString(v) || strlen(v->valuestring) >= 64) {
                snprintf(why, cap, "versions.%s: must be a string under 64 bytes", v->string);
                return -1;
            }
        }
    }
    for (size_t k = 0; k < 2; k++)
        if (dev_sample_ints(d, arrays[k], n_hot, "hot", 1, why, cap) ||
            dev_sample_ints(d, cold_arrays[k], n_cold, "cold", 0, why, cap))
            return -1;
    /* hot_wall_ms: absent in records written before late work was kept */
    it = cJSON_GetObjectItemCaseSensitive(d, "hot_wall_ms");
    if (it) {
        const cJSON *e;
        size_t i = 0;
        if (!cJSON_IsArray(it) || (size_t)cJSON_GetArraySize(it) != n_hot) {
            snprintf(why, cap, "hot_wall_ms: must be an array of %zu numbers, one per hot sample", n_hot);
            return -1;
        }
        cJSON_ArrayForEach(e, it) if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 || e->valuedouble == -1) ||
                                      !isfinite(e->valuedouble))
        {
            snprintf(why, cap, "hot_wall_ms: must be numbers >= 0, or -1 (unknown)");
            return -1;
        }
        cJSON_ArrayForEach(e, it) hot[i++].wall_ms = e->valuedouble;
    }
    /* capture: a kernel in a process of its own says how its graph was
     * made (ev_backend_facts); absent: ours, always captured */
    it = cJSON_GetObjectItemCaseSensitive(d, "capture");
    if (it && !(cJSON_IsString(it) &&
                (!strcmp(it->valuestring, "graph") || !strcmp(it->valuestring, "batch") ||
                 !strncmp(it->valuestring, EV_RULE_NOT_CAPTURED, strlen(EV_RULE_NOT_CAPTURED))) &&
                strlen(it->valuestring) < 256)) {
        snprintf(why, cap, "capture: must be \"graph\", \"batch\" or \"%s...\"", EV_RULE_NOT_CAPTURED);
        return -1;
    }
    if (dev_foreign(d, n_hot, n_cold, why, cap) ||
        dev_host(cJSON_GetObjectItemCaseSensitive(d, "host"), why, cap) ||
        dev_recal(cJSON_GetObjectItemCaseSensitive(d, "recalibrations"), why, cap))
        return -1;
    for (int k = 0; k < 2; k++) {
        dev_sample_fill(d, arrays[k], hot, n_hot, k);
        dev_sample_fill(d, cold_arrays[k], cold, n_cold, k);
    }
    return 0;
}

int64_t ev_rule_replay_end(int hot, int64_t index, int64_t n_cold, int64_t warmup_replays,
                           const int64_t *hot_replays, int64_t recal_replays)
{
    int64_t n = n_cold + warmup_replays + recal_replays;
    if (!hot)
        return index + 1;
    for (int64_t i = 0; i <= index; i++)
        n += hot_replays[i];
    return n;
}

/* See sample_rules.h. */
int64_t ev_rule_recal_replays(const ev_rule_attempt *a, int64_t hot_index)
{
    int64_t n = 0;
    for (size_t k = 0; k < a->n_recal && a->recal_after[k] < hot_index; k++) {
        int64_t to = k + 1 < a->n_recal ? a->recal_first[k + 1] : (int64_t)a->n_steps;
        for (int64_t st = a->recal_first[k]; st >= 0 && st < to && st < (int64_t)a->n_steps; st++)
            n += a->steps[st].replays;
    }
    return n;
}

/* See sample_rules.h. */
int ev_rule_cold_is_supervisors(const char *name)
{
    return name && (!strcmp(name, EV_RULE_BACKOFF) || !strcmp(name, EV_RULE_CPULOCK));
}

/* See sample_rules.h. */
int ev_rule_all_stored(int records_ok, int interrupted, const char *protocol_error)
{
    return !interrupted && (records_ok || (protocol_error &&
                                           !strncmp(protocol_error, EV_RULE_PREFIX, strlen(EV_RULE_PREFIX))));
}

void ev_rule_device_attempt(const cJSON *d, ev_rule_attempt *a)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(d, "host");
    const cJSON *rc = cJSON_GetObjectItemCaseSensitive(d, "recalibrations"), *e;
    int64_t x = 0;

    a->n_recal = 0;
    if (!cJSON_IsArray(rc))
        rc = NULL;
    cJSON_ArrayForEach(e, rc)
    {
        if (a->n_recal == EV_RULE_RECAL_MAX)
            break;
        dev_int(cJSON_GetObjectItemCaseSensitive(e, "after"), 0, INT64_C(1) << 53,
                &a->recal_after[a->n_recal]);
        dev_int(cJSON_GetObjectItemCaseSensitive(e, "first_step"), 1, INT64_C(1) << 53,
                &a->recal_first[a->n_recal]);
        a->n_recal++;
    }
    memset(&a->host, 0, sizeof a->host);
    if (!cJSON_IsObject(h))
        return;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(h, "refused");
    a->host.known = 1;
    a->host.fifo = !strcmp(cJSON_GetObjectItemCaseSensitive(h, "scheduler")->valuestring, "fifo");
    dev_int(cJSON_GetObjectItemCaseSensitive(h, "priority"), 0, 99, &x);
    a->host.priority = x;
    snprintf(a->host.refused, sizeof a->host.refused, "%s", cJSON_IsString(r) ? r->valuestring : "");
    a->host.load_start = cJSON_GetObjectItemCaseSensitive(h, "load_start")->valuedouble;
    a->host.load_end = cJSON_GetObjectItemCaseSensitive(h, "load_end")->valuedouble;
    dev_int(cJSON_GetObjectItemCaseSensitive(h, "cpus"), 1, 1 << 20, &a->host.cpus);
}

int ev_rule_cause(const ev_rule_host *h, char *out, size_t cap)
{
    double load;
    if (cap)
        out[0] = '\0';
    if (!h->known)
        return 0;
    load = h->load_start > h->load_end ? h->load_start : h->load_end;
    if (!(load >= (double)h->cpus)) {
        snprintf(out, cap,
                 "not host load, as far as its records say (load average %.2f on %lld CPUs while it ran%s): "
                 "look at its samples in samples.csv",
                 load, (long long)h->cpus, h->fifo ? ", its threads at real-time priority" : "");
        return 0;
    }
    if (h->fifo)
        snprintf(
            out, cap,
            "likely cause: host load (load average %.2f on %lld CPUs while it ran), even with its threads "
            "at real-time priority; what to do: run when the host is quieter, or declare a longer "
            "target_sample_ms (a sample shorter than the scheduler's time slice is the most exposed)",
            load, (long long)h->cpus);
    else if (!strncmp(h->refused, EV_RULE_NOT_DECLARED, strlen(EV_RULE_NOT_DECLARED)))
        snprintf(
            out, cap,
            "likely cause: host load (load average %.2f on %lld CPUs while it ran), its threads at normal "
            "priority (%s); what to do: declare \"cpu_priority\": \"realtime\" in the protocol (the "
            "worker then asks the host for real-time priority), or run on a quieter host",
            load, (long long)h->cpus, h->refused);
    else
        snprintf(
            out, cap,
            "likely cause: host load (load average %.2f on %lld CPUs while it ran), its threads at normal "
            "priority (%s); what to do: run evident as root (or with CAP_SYS_NICE) so the worker's "
            "threads take real-time priority, or on a quieter host",
            load, (long long)h->cpus, h->refused);
    return 1;
}
