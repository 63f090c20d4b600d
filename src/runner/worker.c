/*
 * worker.c: the per-job protocol (worker.h).  Order of records for a
 * measured job: hello, binding, validation(first), cold(first-launch),
 * flush, sample(cold) x cold_samples, node x nodes, calibration x steps,
 * warmup, sample(hot) x samples, device, validation(final), end.  Calibration runs
 * inside the warm-up: its replays count towards the warm-up record, so the
 * warm-up is at least warmup_ms in total (docs/runner.md).
 */
#include "worker.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <sys/random.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inputs.h"
#include "job.h"
#include "validate.h"
#include "json.h"
#include "oracle.h"
#include "sha256.h"
#include "stats.h"
#include "torch_peer.h"

/* Monotonic time in ns. */
static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Realtime in ns (comparable across processes). */
static int64_t real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

ev_status ev_worker_gate(const ev_worker_args *a, int64_t *waited_ns, ev_err *err)
{
    int64_t t0 = now_ns();
    char c;
    ssize_t n;

    *waited_ns = 0;
    if (a->gate_fd < 0)
        return EV_OK;
    while ((n = read(a->gate_fd, &c, 1)) < 0 && errno == EINTR)
        ;
    *waited_ns = now_ns() - t0;
    close(a->gate_fd);
    if (n != 1)
        return ev_err_set(err, EV_EINTR, "the supervisor closed the gate: this job was not started");
    return EV_OK;
}

static void add_device(cJSON *obj, const ev_device_info *d)
{
    cJSON *dev = cJSON_AddObjectToObject(obj, "device");
    if (!dev)
        return;
    ev_json_add_str(dev, "backend", d->backend);
    ev_json_add_str(dev, "name", d->name);
    ev_json_add_i64(dev, "sms", d->sms);
    ev_json_add_i64(dev, "cache_bytes", d->cache_bytes);
    ev_json_add_i64(dev, "flush_bytes", d->flush_bytes);
    ev_json_add_i64(dev, "memory_bytes", d->memory_bytes);
    ev_json_add_str(dev, "compute_capability", d->compute_capability);
    ev_json_add_str(dev, "driver_version", d->driver_version);
    ev_json_add_str(dev, "runtime_version", d->runtime_version);
    ev_json_add_str(dev, "uuid", d->uuid);
    ev_json_add_i64(dev, "clock_mhz", d->clock_mhz);
    ev_json_add_i64(dev, "memory_clock_mhz", d->memory_clock_mhz);
}

/* The process's affinity as the worker started, before a backend's
 * thread pool pinned its threads (reduce_cpu.c): what the hello reports. */
static char start_affinity[1024];

/* Writes the hello record. */
static ev_status hello(ev_rec_out *out, const char *job_key, const char *arm, const ev_device_info *d,
                       ev_err *err)
{
    cJSON *r = ev_rec_new(EV_REC_HELLO);
    const char *aff = start_affinity;

    if (!r)
        return ev_err_set(err, EV_ENOMEM, "hello: out of memory");
    ev_json_add_i64(r, "version", 1);
    ev_json_add_i64(r, "pid", (int64_t)getpid());
    ev_json_add_str(r, "job_key", job_key);
    ev_json_add_str(r, "arm", arm);
    ev_json_add_str(r, "affinity", aff);
    add_device(r, d);
    return ev_rec_write(out, r, err);
}

/* Writes the end record (records = count before it). */
static ev_status end(ev_rec_out *out, ev_err *err)
{
    cJSON *r = ev_rec_new(EV_REC_END);
    if (r)
        ev_json_add_i64(r, "records", out->count);
    return ev_rec_write(out, r, err);
}

ev_status ev_worker_probe(const ev_protocol *proto, const ev_backend_ops *ops, ev_rec_out *out, ev_err *err)
{
    ev_backend_config cfg;
    ev_device_info d;
    void *impl = NULL;
    ev_status rc;

    memset(&cfg, 0, sizeof cfg);
    cfg.host_threads = proto->host_threads;
    cfg.ref = *ev_protocol_ref(proto, ops->name);
    ev_job_affinity(start_affinity, sizeof start_affinity);
    if ((rc = ops->open(&cfg, &impl, err)) || (rc = ops->info(impl, &d, err)) ||
        (rc = hello(out, "probe", "-", &d, err)))
        goto out;
    rc = end(out, err);
out:
    ops->close(impl);
    return rc;
}

/* The input the kernel was given must be unchanged after its validated
 * launch (issue 16: a kernel that writes its input, so that the reference
 * agrees, fails).  EV_EVERIFY naming the first changed byte. */
static ev_status input_intact(const ev_worker_args *a, void *impl, int set, const void *input, size_t len,
                              ev_err *err)
{
    unsigned char *back;
    ev_status rc;

    if (!len || !a->ops->read_input)
        return EV_OK;
    if (!(back = malloc(len)))
        return ev_err_set(err, EV_ENOMEM, "input check: out of memory");
    rc = a->ops->read_input(impl, set, back, len, err);
    if (!rc && memcmp(back, input, len)) {
        size_t i = 0;
        while (i < len && back[i] == ((const unsigned char *)input)[i])
            i++;
        rc = ev_err_set(err, EV_EVERIFY, "%s wrote its own input: byte %zu of %zu changed after a launch%s",
                        a->arm, i, len, set ? " (the second input set)" : "");
    }
    free(back);
    return rc;
}

/*
 * The rotated input (issue 16; docs/defenses.md, "Inputs nobody can
 * predict"): between two hot samples, outside the timed events, rows of
 * the input chosen from a secret per-attempt seed (from getrandom: no
 * kernel can know it) are rewritten with new values, and the output of
 * the next timed replay is validated against the oracle of the new
 * contents; then the rows are put back, so the final output is the
 * first's again.  A kernel that caches or replays its output (keyed by
 * pointer, by contents seen before, or by launch count) fails here.
 * The same seed makes the second input set (ev_inputs_second_set): the
 * ops of every graph alternate between the case's input and it, each with
 * its own output (backend.h), and both outputs are validated after the
 * rotated sample and after the last, so a kernel that does the work of
 * one op in several and skips the rest (batch-and-skip) fails too.
 */
typedef struct rotation {
    uint64_t seed;
    int64_t before; /* the hot sample it precedes (1..samples-1), -1: none */
    int64_t *rows;  /* the rows rewritten, n of them */
    size_t n;
    unsigned char *saved;  /* their original bytes, n x row bytes */
    ev_oracle_row *oracle; /* their original oracle rows */
    int64_t ns;            /* time spent, outside every timing */
} rotation;

/* Draws the attempt's secret seed for shape s (none for a case without
 * rows) and plans its rotation with samples hot samples (none with fewer
 * than two samples). */
static ev_status rotation_plan(rotation *t, const ev_shape *s, int64_t samples, ev_err *err)
{
    memset(t, 0, sizeof *t);
    t->before = -1;
    if (s->rows < 1)
        return EV_OK;
    if (getrandom(&t->seed, sizeof t->seed, 0) != (ssize_t)sizeof t->seed)
        return ev_err_set(err, EV_EIO, "rotation: getrandom: %s", strerror(errno));
    if (samples < 2)
        return EV_OK;
    ev_inputs_rotation(t->seed, samples, s->rows, &t->before, &t->n, NULL);
    t->rows = malloc(t->n * sizeof *t->rows);
    t->saved = malloc(t->n * (size_t)s->cols * ev_dtype_size(s->dtype));
    t->oracle = malloc(t->n * sizeof *t->oracle);
    if (!t->rows || !t->saved || !t->oracle)
        return ev_err_set(err, EV_ENOMEM, "rotation: out of memory");
    ev_inputs_rotation(t->seed, samples, s->rows, &t->before, &t->n, t->rows);
    return EV_OK;
}

static void rotation_free(rotation *t)
{
    free(t->rows);
    free(t->saved);
    free(t->oracle);
}

/* Rewrites (forward) or puts back (!forward) the rotation's rows, in the
 * host copy of the input, on the device and in the oracle's rows. */
static ev_status rotation_apply(rotation *t, const ev_worker_args *a, void *impl, const ev_shape *s,
                                void *input, ev_oracle_row *expect, int forward, ev_err *err)
{
    size_t es = ev_dtype_size(s->dtype), rb = (size_t)s->cols * es;
    int64_t t0 = now_ns();
    ev_status rc;
    for (size_t k = 0; k < t->n; k++) {
        size_t i = forward ? k : t->n - 1 - k; /* put back in reverse: a row drawn twice ends as it began */
        size_t off = (size_t)t->rows[i] * (size_t)s->stride * es;
        unsigned char *row = (unsigned char *)input + off;
        if (forward) {
            memcpy(t->saved + i * rb, row, rb);
            t->oracle[i] = expect[t->rows[i]];
            ev_inputs_rewrite_row(s, t->seed + i, t->rows[i], input);
            ev_oracle_reduce_row(s->op, s->dtype, row, s->cols, &expect[t->rows[i]]);
        } else {
            memcpy(row, t->saved + i * rb, rb);
            expect[t->rows[i]] = t->oracle[i];
        }
        if ((rc = a->ops->write_input(impl, off, row, rb, err)))
            return rc;
    }
    t->ns += now_ns() - t0;
    return EV_OK;
}

/* What a wrong output after a poisoned sample says about itself: that no
 * op wrote it (every byte still EV_POISON_OUT_BYTE2), or nothing. */
static const char *poison_left(const unsigned char *out, size_t len)
{
    size_t i = 0;
    while (i < len && out[i] == EV_POISON_OUT_BYTE2)
        i++;
    return len && i == len
               ? "; it still holds the poison written before the sample: no op of the graph wrote it"
               : "";
}

/* Reads set 0's output after a validated launch (first or final stage)
 * into outbuf[len] and checks it against the oracle's rows expect into
 * *chk; the wrong-output fault arm flips a bit of the first element
 * before the check. */
static ev_status stage_check(const ev_worker_args *a, void *impl, const ev_shape *s, const void *input,
                             const ev_oracle_row *expect, unsigned char *outbuf, size_t len,
                             ev_validation *chk, ev_err *err)
{
    ev_status rc = a->ops->read_output(impl, 0, outbuf, len, err);
    if (rc)
        return rc;
    if (a->fault && a->fault->kind == EV_FAULT_WRONG_OUTPUT && len)
        outbuf[ev_dtype_size(s->dtype) - 1] ^= 0x40;
    ev_output_check(a->proto, s, input, expect, outbuf, chk);
    return EV_OK;
}

/*
 * Set `set`'s output after the poisoned timed sample `sample` (-1: after
 * the last) must be the oracle's of input (its rows expect), and that
 * input unchanged.  The check is recorded with the output's bytes (a
 * check record: verify-bundle validates them again from the seed), or
 * without them when they are the bytes of the set's earlier check, whose
 * hash `kept` holds ("": none; updated to this check's).  A wrong output
 * is also the job's final validation, failed: the reason on stderr ("the
 * output of <what> is wrong<after>: ..."), and *stop says the job ends
 * there.
 */
static ev_status output_check(const ev_worker_args *a, void *impl, int set, int64_t sample, char kept[65],
                              const ev_shape *s, const void *input, size_t in_len,
                              const ev_oracle_row *expect, unsigned char *outbuf, size_t out_len,
                              const char *what, const char *after, ev_rec_out *out, int *stop, ev_err *err)
{
    ev_validation chk;
    char hash[65];
    ev_status rc;

    if ((rc = a->ops->read_output(impl, set, outbuf, out_len, err)))
        return rc;
    ev_output_check(a->proto, s, input, expect, outbuf, &chk);
    if ((rc = ev_job_sample_check(out, set, sample, &chk, outbuf, out_len, kept[0] ? kept : NULL, hash, err)))
        return rc;
    memcpy(kept, hash, sizeof hash);
    if (!chk.passed) {
        fprintf(stderr, "%s: the output of %s is wrong%s: %lld mismatches, first in row %lld%s\n", a->arm,
                what, after, (long long)chk.mismatches, (long long)chk.first_bad,
                poison_left(outbuf, out_len));
        *stop = 1;
        return ev_job_validation(out, "final", &chk, outbuf, out_len, 0, hash, err);
    }
    return input_intact(a, impl, set, input, in_len, err);
}

/*
 * The second input set's output (set 1): after the rotated sample i (its
 * output was poisoned before it) and after the last (i = -1).
 */
static ev_status second_check(const ev_worker_args *a, void *impl, const ev_shape *s, const void *input2,
                              size_t in_len, const ev_oracle_row *expect2, unsigned char *outbuf,
                              size_t out_len, int64_t i, char kept[65], ev_rec_out *out, int *stop,
                              ev_err *err)
{
    char after[64];
    if (!input2)
        return EV_OK;
    if (i >= 0)
        snprintf(after, sizeof after, " after hot sample %lld", (long long)i);
    else
        snprintf(after, sizeof after, " after the last hot sample");
    return output_check(
        a, impl, 1, i, kept, s, input2, in_len, expect2, outbuf, out_len,
        "the second input set (every other op of each graph, other contents at other addresses, "
        "from a secret seed)",
        after, out, stop, err);
}

/* After the rotated sample i: set 0's output must be the oracle's of the
 * new contents (output_check); then the rows are put back. */
static ev_status rotation_check(rotation *t, const ev_worker_args *a, void *impl, const ev_shape *s,
                                void *input, size_t in_len, ev_oracle_row *expect, unsigned char *outbuf,
                                size_t out_len, int64_t i, ev_rec_out *out, int *stop, ev_err *err)
{
    int64_t t0 = now_ns();
    char what[48], after[160], kept[65] = "";
    ev_status rc;

    snprintf(what, sizeof what, "hot sample %lld", (long long)i);
    snprintf(after, sizeof after,
             " after its input was rewritten between timed replays (%zu of %lld rows, from a secret seed)",
             t->n, (long long)s->rows);
    if ((rc = output_check(a, impl, 0, i, kept, s, input, in_len, expect, outbuf, out_len, what, after, out,
                           stop, err)) ||
        *stop || (rc = rotation_apply(t, a, impl, s, input, expect, 0, err)))
        return rc;
    t->ns += now_ns() - t0;
    return ev_job_cold(out, "input-rotation", t->ns, err);
}

/* Writes a sample record. */
static ev_status sample(ev_rec_out *out, const char *timing, int64_t index, int64_t replays, int64_t ops,
                        double ms, int have_clock, int64_t mhz, ev_err *err)
{
    ev_rec_row x = {.sample = {timing, index, replays, ops, ms, have_clock ? mhz : -1}};
    return ev_rec_write(out, ev_rec_encode(EV_REC_SAMPLE, &x), err);
}

/* Writes a calibration step record. */
static ev_status calib(ev_rec_out *out, int64_t step, int64_t replays, double ms, int chosen, double target,
                       ev_err *err)
{
    ev_rec_row x = {.calib = {chosen, step, replays, ms, target}};
    return ev_rec_write(out, ev_rec_encode(EV_REC_CALIBRATION, &x), err);
}

/*
 * The device record (issue 16; docs/runner.md "Worker records"), written
 * once after the samples: the secret rotation seed (only now, so no
 * kernel could have read it from the stream while it was measured), the
 * device's state read now (backend `state`: -1 unknown), the peer's
 * version (the cub arm: the CUB it was compiled with), the input sets the
 * graph's ops alternated between (sets: 2 for a validated job with rows,
 * else 1), per hot sample the other compute processes and throttle
 * reasons read after it and the host's wall clock around it, and per cold
 * sample the other processes and reasons read after it (h).
 */
typedef struct sample_facts {
    int64_t *other, *reasons;           /* NVML's, after each hot sample (-1: unknown) */
    double *wall;                       /* ms on the host's wall clock around each (late work) */
    int64_t n;                          /* hot samples taken */
    int64_t *cold_other, *cold_reasons; /* NVML's, after each cold sample */
    int64_t n_cold;                     /* cold samples taken */
} sample_facts;

/* An attempt's re-calibrations (sample_rules.h): the k-th after hot
 * sample after[k], from calibration step first[k]. */
typedef struct recal_list {
    int64_t after[EV_RULE_RECAL_MAX], first[EV_RULE_RECAL_MAX];
    size_t n;
} recal_list;

static ev_status device_record(ev_rec_out *out, const ev_worker_args *a, void *impl, ev_arm_kind kind,
                               const rotation *rot, int sets, const sample_facts *h, ev_rule_host *host,
                               const recal_list *rl, ev_err *err)
{
    cJSON *r = ev_rec_new(EV_REC_DEVICE), *v, *ho, *hr, *hw;
    ev_device_state st;
    ev_err ignored;
    char seed[17];

    if (!r)
        return ev_err_set(err, EV_ENOMEM, "device: out of memory");
    if (!a->ops->state || a->ops->state(impl, &st, &ignored) != EV_OK)
        ev_device_state_unknown(&st);
    if (rot->before >= 0) {
        cJSON *o = cJSON_AddObjectToObject(r, "rotation"), *rows;
        snprintf(seed, sizeof seed, "%016llx", (unsigned long long)rot->seed);
        if (o) {
            ev_json_add_str(o, "seed", seed);
            ev_json_add_i64(o, "before", rot->before);
            if ((rows = cJSON_AddArrayToObject(o, "rows")) != NULL)
                for (size_t i = 0; i < rot->n; i++)
                    ev_json_push_i64(rows, rot->rows[i]);
        }
    } else {
        cJSON_AddNullToObject(r, "rotation");
    }
    ev_json_add_i64(r, "other_processes", st.other_processes);
    cJSON_AddBoolToObject(r, "self_seen", st.self_seen);
    ev_json_add_i64(r, "throttle_reasons", st.throttle_reasons);
    ev_json_add_i64(r, "ecc", st.ecc);
    ev_json_add_i64(r, "mig", st.mig);
    ev_json_add_i64(r, "persistence", st.persistence);
    ev_json_add_i64(r, "persisting_l2_bytes", st.persisting_l2_bytes);
    ev_json_add_i64(r, "input_sets", sets);
    v = cJSON_AddObjectToObject(r, "versions");
    if (v && kind == EV_ARM_CUB && st.cub_version[0])
        ev_json_add_str(v, "cub", st.cub_version);
    ho = cJSON_AddArrayToObject(r, "hot_other_processes");
    hr = cJSON_AddArrayToObject(r, "hot_throttle_reasons");
    hw = cJSON_AddArrayToObject(r, "hot_wall_ms");
    for (int64_t i = 0; i < h->n && ho && hr && hw; i++) {
        ev_json_push_i64(ho, h->other[i]);
        ev_json_push_i64(hr, h->reasons[i]);
        ev_json_push_double(hw, h->wall[i]);
    }
    ho = cJSON_AddArrayToObject(r, "cold_other_processes");
    hr = cJSON_AddArrayToObject(r, "cold_throttle_reasons");
    for (int64_t i = 0; i < h->n_cold && ho && hr; i++) {
        ev_json_push_i64(ho, h->cold_other[i]);
        ev_json_push_i64(hr, h->cold_reasons[i]);
    }
    /* the host while it ran, and where the worker re-calibrated */
    ev_job_host_end(host);
    ev_job_host_json(r, host);
    if (rl->n) {
        cJSON *arr = cJSON_AddArrayToObject(r, "recalibrations");
        for (size_t k = 0; k < rl->n && arr; k++) {
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(arr, o)) {
                cJSON_Delete(o);
                break;
            }
            ev_json_add_i64(o, "after", rl->after[k]);
            ev_json_add_i64(o, "first_step", rl->first[k]);
        }
    }
    return ev_rec_write(out, r, err);
}

/* Calibration steps at most (the trial included). */
#define CAL_STEPS 8

/* Ceil of x as a replay count in [1, 1e9]. */
static int64_t reps(double x)
{
    if (!(x >= 1))
        return 1;
    if (x > 1e9)
        return 1000000000;
    return (int64_t)ceil(x);
}

/*
 * Calibration steps, numbered from *step on, the first at r replays: each
 * step replays its count and records itself, and the next count comes
 * from the median per-replay time of this calibration's steps so far, so
 * one step slowed by the host (a preempted thread) does not set it.  A
 * step is chosen when it is within 25% of the target (or reached it at
 * one replay), unless it is the first and first_may_choose is 0 (the
 * trial before the samples); the CAL_STEPS-th is chosen whatever it
 * measured (docs/runner.md, "Calibration").  OUT: *chosen, the chosen
 * count; *step past the last step; *per, the median per-replay time;
 * *elapsed and *replays grown by the steps' time and replays.
 */
static ev_status cal_steps(const ev_worker_args *a, void *impl, ev_rec_out *out, int64_t r,
                           int first_may_choose, int64_t *step, double *per, double *elapsed,
                           int64_t *replays, int64_t *chosen, ev_err *err)
{
    double target = a->proto->target_sample_ms, ms, pers[CAL_STEPS];
    ev_status rc;

    for (int k = 0;; k++) {
        int done;
        double med = 0;
        if ((rc = a->ops->replay(impl, r, &ms, NULL, err)))
            return rc;
        *elapsed += ms;
        *replays += r;
        pers[k] = ms / (double)r;
        done = k == CAL_STEPS - 1 || ((k > 0 || first_may_choose) &&
                                      (fabs(ms - target) <= 0.25 * target || (r == 1 && ms >= target)));
        if ((rc = calib(out, (*step)++, r, ms, done, target, err)))
            return rc;
        if (done)
            break;
        if (ev_median(pers, (size_t)k + 1, &med) == EV_OK && med > 0)
            *per = med;
        r = *per > 0 ? (int64_t)llround(target / *per) : r * 2;
        if (r < 1)
            r = 1;
    }
    *chosen = r;
    return EV_OK;
}

/*
 * Warm-up with calibration inside it.  OUT: *chosen, the replays per
 * sample; *next_step, the number of calibration steps recorded.  Records:
 * calibration steps, then warmup.
 */
static ev_status warm_and_calibrate(const ev_worker_args *a, void *impl, ev_rec_out *out, int64_t *chosen,
                                    int64_t *next_step, ev_err *err)
{
    const ev_protocol *p = a->proto;
    double target = p->target_sample_ms, elapsed = 0, ms, per = 0;
    double pre = p->warmup_ms - 1.25 * target; /* warm-up before calibration */
    int64_t replays = 0, k = 1, r, step = 0;
    ev_status rc;

    if (a->fault && a->fault_hook)
        a->fault_hook(a->fault_ctx, a->fault, EV_STAGE_WARMUP, 0);
    do {
        if (per > 0) {
            int64_t want = reps((pre - elapsed) / per);
            k = want < 2 * k ? want : 2 * k;
        }
        if ((rc = a->ops->replay(impl, k, &ms, NULL, err)))
            return rc;
        elapsed += ms;
        replays += k;
        per = ms / (double)k;
    } while (elapsed < pre);

    /* Trial at a quarter of the target, then steps until one is within 25%
     * of the target (cal_steps). */
    r = per > 0 ? (int64_t)floor(0.25 * target / per) : 1;
    if (r < 1)
        r = 1;
    if ((rc = cal_steps(a, impl, out, r, 0, &step, &per, &elapsed, &replays, chosen, err)))
        return rc;
    *next_step = step;
    while (elapsed < p->warmup_ms) {
        double left = p->warmup_ms - elapsed;
        int64_t kk = per > 0 ? reps(left / per) : 1;
        if ((rc = a->ops->replay(impl, kk, &ms, NULL, err)))
            return rc;
        elapsed += ms;
        replays += kk;
    }
    ev_rec_row x = {.warmup = {p->warmup_ms, elapsed, replays}};
    return ev_rec_write(out, ev_rec_encode(EV_REC_WARMUP, &x), err);
}

ev_status ev_worker_run(const ev_worker_args *a, ev_rec_out *out, ev_err *err)
{
    const ev_protocol *p = a->proto;
    ev_backend_config cfg;
    ev_backend_job job;
    ev_backend_binding bind;
    ev_device_info dev;
    ev_arm_kind kind;
    ev_node_receipt *nodes = NULL;
    rotation rot = {0, -1, NULL, 0, NULL, NULL, 0};
    sample_facts hf = {NULL, NULL, NULL, 0, NULL, NULL, 0}; /* per sample (the device record) */
    double untimed_wall = 0;
    int stop = 0;
    ev_oracle_row *expect = NULL;  /* the oracle's rows, computed before the gate */
    ev_oracle_row *expect2 = NULL; /* the second input set's */
    size_t n_nodes = 0;
    void *impl = NULL, *input = NULL, *input2 = NULL;
    unsigned char *outbuf = NULL;
    size_t in_len = 0;
    int64_t rows_pp = 0, chosen = 1, t0, hot_ops, t_ready, gate_wait = 0, t_open = 0, step = 0;
    ev_rule_host host;
    recal_list rl = {{0}, {0}, 0};
    int validate;
    char hash1[65] = "", hash2[65] = "", kept1[65] = ""; /* kept1: set 1's checked bytes */
    ev_shape shape;
    ev_validation chk;
    ev_status rc;
    double ms;

    memset(&cfg, 0, sizeof cfg);
    memset(&job, 0, sizeof job);
    if (ev_arm_classify(p, a->arm, &kind, &rows_pp))
        return ev_err_set(err, EV_EINVAL, "unknown arm '%s'", a->arm);
    cfg.host_threads = p->host_threads;
    cfg.ref = *ev_protocol_ref(p, a->ops->name);
    if (kind == EV_ARM_TORCH) /* its own python3 process: torch_peer.c */
        return ev_worker_torch(a, out, err);
    if (kind == EV_ARM_EXTERNAL && a->kernel_error && a->case_index >= 0 &&
        (size_t)a->case_index < p->n_cases && ev_protocol_kernel(p, a->arm) &&
        ev_ext_entry_for(ev_protocol_kernel(p, a->arm), p->cases[a->case_index].op,
                         p->cases[a->case_index].dtype)) {
        /* (a case it declares no entry for is a skip, built or not) */
        /* the build failed: this job fails with the compiler's own message */
        ev_buf msg = EV_BUF_INIT;
        if (!ev_read_file(a->kernel_error, &msg, NULL) && msg.len)
            fprintf(stderr, "%s%s", msg.data, msg.data[msg.len - 1] == '\n' ? "" : "\n");
        ev_buf_free(&msg);
        return ev_err_set(err, EV_EPROC,
                          "external kernel %s did not compile (the compiler's message is above)", a->arm);
    }
    ev_job_affinity(start_affinity, sizeof start_affinity);
    /* CPU-only preparation first (the input bytes); then the gate; only
     * then the device (docs/runner.md, "Staged processes"). */
    validate = kind != EV_ARM_FLOOR && kind != EV_ARM_CEILING;
    if (validate && ((rc = ev_job_input(p, a->case_index, &shape, &input, &in_len, err)) ||
                     (rc = ev_job_expect(&shape, input, &expect, err)) ||
                     (rc = rotation_plan(&rot, &shape, p->samples, err))))
        goto out;
    if (validate && shape.rows > 0) { /* the second input set, from the secret seed */
        if (!(input2 = malloc(in_len ? in_len : 1))) {
            rc = ev_err_set(err, EV_ENOMEM, "second input set: out of memory");
            goto out;
        }
        memcpy(input2, input, in_len);
        ev_inputs_second_set(&shape, rot.seed, input2);
        if ((rc = ev_job_expect(&shape, input2, &expect2, err)))
            goto out;
    }
    t_ready = real_ns();
    if ((rc = ev_worker_gate(a, &gate_wait, err)))
        goto out;
    /* the host facts, and real-time priority for the measured threads on
     * cpu, before the backend starts its pool (job.h) */
    ev_job_host_open(a->ops->name, p->cpu_realtime, &host);
    t0 = now_ns();
    if ((rc = a->ops->open(&cfg, &impl, err)) || (rc = a->ops->info(impl, &dev, err)))
        goto out;
    t_open = now_ns() - t0;
    if ((rc = hello(out, a->job_key, a->arm, &dev, err)))
        goto out;
    if (a->fault && a->fault->kind == EV_FAULT_GARBAGE &&
        (rc = ev_rec_write_raw(out, "this line is not a record {\n", err)))
        goto out;

    job.kind = kind == EV_ARM_FAULT ? EV_ARM_NATIVE : kind;
    if (a->fault && a->fault->kind == EV_FAULT_WRONG_SCHEDULE) {
        job.kind = EV_ARM_AUTO; /* the selector decides; the backend launches another schedule */
        job.wrong_schedule = 1;
    }
    job.arm = a->arm;
    if (kind == EV_ARM_EXTERNAL && validate) {
        const ev_ext_kernel *k = ev_protocol_kernel(p, a->arm);
        job.ext_lib = a->kernel_lib;
        const ev_proto_case *pc = &p->cases[a->case_index];
        job.ext_entry = k ? ev_ext_entry_for(k, pc->op, pc->dtype) : NULL;
        if (k && k->grid[0] && !strcmp(a->ops->name, "cuda") && job.ext_entry && pc->rows > 0 &&
            ((rc = ev_ext_geometry(k, pc->rows, pc->cols, pc->stride, &job.ext_grid, &job.ext_block, err))))
            goto out;
    }
    job.rows_per_program = rows_pp;
    job.coef = a->coef;
    job.threshold = p->decision_threshold;
    job.scheds = p->model_schedules;
    if (kind == EV_ARM_CEILING) {
        const ev_proto_ref *ref = &cfg.ref;
        int64_t bytes =
            ref->ceiling_bytes ? ref->ceiling_bytes : ref->ceiling_cache_multiple * dev.cache_bytes;
        if (ref->ceiling_max_bytes && bytes > ref->ceiling_max_bytes)
            bytes = ref->ceiling_max_bytes;
        job.ceiling_bytes = bytes;
    }
    if (validate) {
        job.c = p->cases[a->case_index];
        job.input = input;
        job.input_len = in_len;
        job.input2 = input2;
    }
    rc = a->ops->bind(impl, &job, &bind, err);
    if (rc == EV_EUNSUPPORTED) {
        cJSON *s = ev_rec_new(EV_REC_SKIP);
        if (s)
            ev_json_add_str(s, "reason", err->msg);
        if ((rc = ev_rec_write(out, s, err)))
            goto out;
        rc = end(out, err);
        goto out;
    }
    if (rc)
        goto out;
    {
        ev_rec_row x = {.binding = {validate ? job.c.op : a->arm, validate ? job.c.dtype : "-",
                                    validate ? job.c.rows : 0, validate ? job.c.cols : 0,
                                    validate ? job.c.stride : 0, bind.in_span, bind.out_span, bind.in_align,
                                    bind.out_align, bind.threads}};
        if ((rc = ev_rec_write(out, ev_rec_encode(EV_REC_BINDING, &x), err)))
            goto out;
    }

    /* Where the job's time went before its first launch (docs/runner.md,
     * "Where a job's time goes"). */
    if ((a->spawn_ns > 0 && a->entered_ns >= a->spawn_ns &&
         (rc = ev_job_cold(out, "process-start", a->entered_ns - a->spawn_ns, err))) ||
        (a->entered_ns > 0 && (rc = ev_job_cold(out, "prep", t_ready - a->entered_ns, err))) ||
        (a->gate_fd >= 0 && (rc = ev_job_cold(out, "gate-wait", gate_wait, err))) ||
        (rc = ev_job_cold(out, "device-open", t_open, err)))
        goto out;

    /* Poison, first launch (process-cold, host clock), validate. */
    outbuf = malloc(bind.out_len ? bind.out_len : 1);
    if (!outbuf) {
        rc = ev_err_set(err, EV_ENOMEM, "output: out of memory");
        goto out;
    }
    if ((rc = a->ops->poison(impl, EV_POISON_OUT_BYTE, err)))
        goto out;
    t0 = now_ns();
    if ((rc = a->ops->launch(impl, err)))
        goto out;
    if ((rc = ev_job_cold(out, "first-launch", now_ns() - t0, err)))
        goto out;
    if (validate) {
        if ((rc = stage_check(a, impl, &shape, input, expect, outbuf, bind.out_len, &chk, err)))
            goto out;
        if ((rc = ev_job_validation(out, "first", &chk, outbuf, bind.out_len, 1, hash1, err)) ||
            (rc = input_intact(a, impl, 0, input, in_len, err)))
            goto out;
    }
    if (a->fault && a->fault_hook)
        a->fault_hook(a->fault_ctx, a->fault, EV_STAGE_VALIDATED, 0);

    /* Cold samples after a cache flush. */
    {
        ev_rec_row x = {.flush = {dev.flush_bytes, dev.cache_bytes}};
        if ((rc = ev_rec_write(out, ev_rec_encode(EV_REC_FLUSH, &x), err)))
            goto out;
    }
    hf.cold_other = malloc((size_t)(p->cold_samples > 0 ? p->cold_samples : 1) * sizeof *hf.cold_other);
    hf.cold_reasons = malloc((size_t)(p->cold_samples > 0 ? p->cold_samples : 1) * sizeof *hf.cold_reasons);
    if (!hf.cold_other || !hf.cold_reasons) {
        rc = ev_err_set(err, EV_ENOMEM, "device state: out of memory");
        goto out;
    }
    for (int64_t i = 0; i < p->cold_samples; i++) {
        ev_device_state st;
        ev_err ignored;
        if ((rc = a->ops->cold_launch(impl, &ms, err)) || (rc = sample(out, "cold", i, 1, 1, ms, 0, 0, err)))
            goto out;
        /* the device's hygiene after the cold sample, outside its timing */
        if (!a->ops->state || a->ops->state(impl, &st, &ignored) != EV_OK)
            ev_device_state_unknown(&st);
        hf.cold_other[i] = st.other_processes;
        hf.cold_reasons[i] = st.throttle_reasons;
        hf.n_cold = i + 1;
    }

    /* Capture, read back the nodes. */
    hot_ops = kind == EV_ARM_CEILING ? cfg.ref.ceiling_ops_per_graph : p->ops_per_graph;
    if ((rc = a->ops->capture(impl, hot_ops, &nodes, &n_nodes, err)))
        goto out;
    for (size_t i = 0; i < n_nodes; i++) {
        ev_rec_row x = {.node = {(int64_t)i, nodes[i].function, {0}, {0}}};
        cJSON *nd = ev_rec_encode(EV_REC_NODE, &x), *g, *bl;
        if (!nd) {
            rc = ev_err_set(err, EV_ENOMEM, "node: out of memory");
            goto out;
        }
        /* grid and block, arrays of three, go beside the codec's fields */
        g = cJSON_AddArrayToObject(nd, "grid");
        bl = cJSON_AddArrayToObject(nd, "block");
        for (int d = 0; d < 3 && g && bl; d++) {
            ev_json_push_i64(g, nodes[i].grid[d]);
            ev_json_push_i64(bl, nodes[i].block[d]);
        }
        if ((rc = ev_rec_write(out, nd, err)))
            goto out;
    }
    /* One kernel node per op on cuda, one receipt per batch on cpu: a kernel
     * that launched more work than the arm declares fails here, its nodes
     * recorded (verify-bundle holds every completed attempt to the same). */
    if (validate && job.c.rows > 0) {
        size_t want = strcmp(a->ops->name, "cuda") ? 1 : (size_t)hot_ops;
        if (n_nodes != want) {
            rc = ev_err_set(err, EV_EPROC,
                            "graph: %zu kernel nodes for %lld ops, where the %s backend records %zu", n_nodes,
                            (long long)hot_ops, a->ops->name, want);
            goto out;
        }
    }

    if ((rc = warm_and_calibrate(a, impl, out, &chosen, &step, err)))
        goto out;
    hf.other = malloc((size_t)(p->samples > 0 ? p->samples : 1) * sizeof *hf.other);
    hf.reasons = malloc((size_t)(p->samples > 0 ? p->samples : 1) * sizeof *hf.reasons);
    hf.wall = malloc((size_t)(p->samples > 0 ? p->samples : 1) * sizeof *hf.wall);
    if (!hf.other || !hf.reasons || !hf.wall) {
        rc = ev_err_set(err, EV_ENOMEM, "device state: out of memory");
        goto out;
    }
    for (int64_t i = 0; i < p->samples; i++) {
        int64_t mhz = 0;
        ev_err ignored;
        ev_device_state st;
        int have = 0;
        double sample_ms;
        /* The overrun fault runs more replays than the sample records. */
        int64_t run = a->fault && a->fault->kind == EV_FAULT_OVERRUN ? chosen * a->fault->value : chosen;
        if (i == rot.before && ((rc = rotation_apply(&rot, a, impl, &shape, input, expect, 1, err)) ||
                                (rc = a->ops->poison(impl, EV_POISON_OUT_BYTE2, err))))
            goto out;
        if ((rc = a->ops->replay(impl, run, &ms, &hf.wall[i], err)))
            goto out;
        sample_ms = ms;
        if (a->fault && a->fault->kind == EV_FAULT_LATE && i == p->samples - 1)
            hf.wall[i] = ms + (double)a->fault->value; /* the late fault: work after the events */
        have = a->ops->sm_clock(impl, &mhz, &ignored) == EV_OK;
        if (a->fault && a->fault->kind == EV_FAULT_THROTTLE) {
            /* the throttle fault: the last sample at the fault's clock (simulated where none is read) */
            mhz = i == p->samples - 1 ? a->fault->value : have ? mhz : 1000;
            have = 1;
        }
        /* the device's hygiene after the sample, outside its timing (the
         * contended and throttled faults: the last sample's, injected) */
        if (!a->ops->state || a->ops->state(impl, &st, &ignored) != EV_OK)
            ev_device_state_unknown(&st);
        hf.other[i] = st.other_processes;
        hf.reasons[i] = st.throttle_reasons;
        if (a->fault && a->fault->kind == EV_FAULT_CONTENDED && i == p->samples - 1)
            hf.other[i] = a->fault->value;
        if (a->fault && a->fault->kind == EV_FAULT_THROTTLED && i == p->samples - 1)
            hf.reasons[i] = a->fault->value;
        hf.n = i + 1;
        if ((rc = sample(out, "hot", i, chosen, hot_ops, ms, have, mhz, err)))
            goto out;
        if (i == rot.before && ((rc = rotation_check(&rot, a, impl, &shape, input, in_len, expect, outbuf,
                                                     bind.out_len, i, out, &stop, err)) ||
                                (!stop && (rc = second_check(a, impl, &shape, input2, in_len, expect2, outbuf,
                                                             bind.out_len, i, kept1, out, &stop, err)))))
            goto out;
        if (stop) {
            if ((rc = device_record(out, a, impl, kind, &rot, input2 ? 2 : 1, &hf, &host, &rl, err)) == EV_OK)
                rc = end(out, err);
            goto out;
        }
        if (i == rot.before && i == p->samples - 1 && (rc = a->ops->replay(impl, 1, &ms, &untimed_wall, err)))
            goto out; /* untimed, synchronised (late work ended): the final validation reads the output of
                         the input put back */
        /* A sample that drifted out of the band (a busier or quieter host
         * than the calibration saw): calibrate again, from its own
         * per-replay time, for the samples still to come; it stays and
         * counts (sample_rules.h, re-calibration). */
        if (i + 1 < p->samples && rl.n < EV_RULE_RECAL_MAX && ev_rule_drifted(p, sample_ms, chosen)) {
            double per = sample_ms / (double)chosen, spent = 0;
            int64_t spent_replays = 0;
            rl.after[rl.n] = i;
            rl.first[rl.n] = step;
            rl.n++;
            if ((rc = cal_steps(a, impl, out, reps(p->target_sample_ms / per), 1, &step, &per, &spent,
                                &spent_replays, &chosen, err)))
                goto out;
        }
        if (a->fault && a->fault_hook)
            a->fault_hook(a->fault_ctx, a->fault, EV_STAGE_SAMPLE, i + 1);
    }
    if (!(a->fault && a->fault->kind == EV_FAULT_NO_DEVICE) &&
        (rc = device_record(out, a, impl, kind, &rot, input2 ? 2 : 1, &hf, &host, &rl, err)))
        goto out;
    if (validate && (rc = second_check(a, impl, &shape, input2, in_len, expect2, outbuf, bind.out_len, -1,
                                       kept1, out, &stop, err)))
        goto out;
    if (stop) {
        rc = end(out, err);
        goto out;
    }
    if (validate) {
        if ((rc = stage_check(a, impl, &shape, input, expect, outbuf, bind.out_len, &chk, err)))
            goto out;
        if ((rc = ev_sha256_hex(outbuf, bind.out_len, hash2))) {
            ev_err_set(err, rc, "sha256 failed");
            goto out;
        }
        if (strcmp(hash1, hash2)) {
            chk.passed = 0; /* replay determinism broken */
        }
        if ((rc = ev_job_validation(out, "final", &chk, outbuf, bind.out_len, 0, hash2, err)) ||
            (rc = input_intact(a, impl, 0, input, in_len, err)))
            goto out;
    }
    rc = end(out, err);
out:
    rotation_free(&rot);
    free(hf.other);
    free(hf.reasons);
    free(hf.wall);
    free(hf.cold_other);
    free(hf.cold_reasons);
    free(nodes);
    free(outbuf);
    free(input);
    free(input2);
    free(expect);
    free(expect2);
    a->ops->close(impl);
    return rc;
}
