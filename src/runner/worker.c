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

#include "backend_python.h"
#include "ext_binary.h"
#include "foreign.h"
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

/*
 * The external kernel arm's entry for case c is among the entry points its
 * binary lib defines (ext_binary.h); EV_EPROC otherwise, naming the entry
 * and the ones the binary has, with what to do.  A binary it cannot read
 * as ELF is left to the backend's loader, which fails naming the entry.
 */
static ev_status entry_defined(const char *lib, const char *arm, const ev_proto_case *c, const char *entry,
                               ev_err *err)
{
    ev_strs have = EV_STRS_INIT;
    ev_buf list = EV_BUF_INIT;
    ev_err e = {""};
    ev_status rc = EV_OK;
    int found = 0;

    if (ev_ext_binary_entries(lib, &have, &e))
        goto out;
    for (size_t i = 0; i < have.n && !found; i++)
        found = !strcmp(have.v[i], entry);
    if (found)
        goto out;
    for (size_t i = 0; i < have.n && i < 16; i++)
        ev_buf_printf(&list, "%s%s", i ? ", " : "", have.v[i]);
    if (have.n > 16)
        ev_buf_printf(&list, " and %zu more", have.n - 16);
    rc = ev_err_set(
        err, EV_EPROC,
        "external kernel %s: its source defines no entry '%s' (the protocol's entry for %s/%s); the "
        "entries its binary defines: %s: name one of them in the kernel's entries, or define %s",
        arm, entry, c->op, c->dtype, have.n ? list.data : "none", entry);
out:
    ev_strs_free(&have);
    ev_buf_free(&list);
    return rc;
}

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
 * launch (docs/defenses.md: a kernel that writes its input, so that the reference
 * agrees, fails): the pristine base against the bytes the worker
 * generated, and, with every plant restored, each variant against the
 * base (on the device).  EV_EVERIFY naming the first changed byte. */
static ev_status input_intact(const ev_worker_args *a, void *impl, const void *input, size_t len, ev_err *err)
{
    unsigned char *back;
    int64_t variant = -1;
    size_t at = 0;
    ev_status rc;

    if (!len)
        return EV_OK;
    if (!(back = malloc(len)))
        return ev_err_set(err, EV_ENOMEM, "input check: out of memory");
    rc = a->ops->read_input(impl, -1, back, len, err);
    if (!rc && memcmp(back, input, len)) {
        size_t i = 0;
        while (i < len && back[i] == ((const unsigned char *)input)[i])
            i++;
        rc = ev_err_set(err, EV_EVERIFY, "%s wrote its own input: byte %zu of %zu changed after a launch",
                        a->arm, i, len);
    }
    free(back);
    if (!rc && (rc = a->ops->intact(impl, &variant, &at, err)) == EV_OK && variant >= 0)
        rc =
            ev_err_set(err, EV_EVERIFY,
                       "%s wrote its own input: byte %zu of %zu of input variant %lld changed after a launch",
                       a->arm, at, len, (long long)variant);
    return rc;
}

/* Reads slot 0's output (the first and final stages) into outbuf[len]
 * and checks it against the oracle's rows expect into *chk; the
 * wrong-output fault arm flips a bit of the first element before the
 * check. */
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
 * After a cold or hot sample: the check tag the backend holds must be
 * T(n) for the n replays it ran (every op of every replay right on its
 * planted rows).  Writes the opcheck record; on a wrong tag, says on
 * stderr what the check saw first (the op, the row, the value, the
 * expected value and the bound), writes the job's final validation,
 * failed, and sets *stop.
 */
static ev_status op_check(const ev_worker_args *a, void *impl, ev_job_plants *pl, const char *timing,
                          int64_t index, int64_t replays, int64_t ops, unsigned char *outbuf, size_t out_len,
                          ev_rec_out *out, int *stop, ev_err *err)
{
    ev_plant_state st;
    uint64_t launched = 0;
    char tag[17], hash[65];
    ev_status rc;

    if ((rc = a->ops->tag(impl, &st, &launched, err)))
        return rc;
    int passed = st.tag == ev_job_plants_want(pl, launched) && st.r_next == launched + 1;
    snprintf(tag, sizeof tag, "%016llx", (unsigned long long)st.tag);
    {
        ev_rec_row x = {.opcheck = {timing, index, (int64_t)launched, replays, ops, pl->cfg.m,
                                    pl->cfg.variants, tag, passed}};
        if ((rc = ev_rec_write(out, ev_rec_encode(EV_REC_OPCHECK, &x), err)))
            return rc;
    }
    if (passed)
        return EV_OK;
    *stop = 1;
    if (st.first_set && st.first.kind == 1)
        fprintf(stderr,
                "%s: %s sample %lld: the check after replay %lld could not plant row %lld (its bound is too "
                "wide for a plant to move its output by twice the bound)\n",
                a->arm, timing, (long long)index, (long long)st.first.replay, (long long)st.first.row);
    else if (st.first_set)
        fprintf(
            stderr,
            "%s: %s sample %lld: op %lld of replay %lld is wrong on a row planted from a secret seed: row "
            "%lld holds %.9g, its expected output is %.9g%s%.3g (the check's tag %s is not the seed's for "
            "%llu replays of every op right)\n",
            a->arm, timing, (long long)index, (long long)st.first.op, (long long)st.first.replay,
            (long long)st.first.row, st.first.value, st.first.expect,
            pl->cfg.op == EV_OP_MAX || pl->cfg.op == EV_OP_MIN ? " bit for bit, bound " : " within ",
            st.first.bound, tag, (unsigned long long)launched);
    else
        fprintf(stderr,
                "%s: %s sample %lld: the check's tag %s is not the seed's for %llu replays of every op right "
                "(and its state names no mismatch: the check state was changed)\n",
                a->arm, timing, (long long)index, tag, (unsigned long long)launched);
    {
        ev_validation chk = {0, 0.0, st.first_set ? st.first.bound : 0.0, 1, st.first_set ? st.first.row : 0};
        if (st.first_set && isfinite(st.first.value) && isfinite(st.first.expect))
            chk.max_abs_err = fabs(st.first.value - st.first.expect);
        if ((rc = a->ops->read_output(impl, 0, outbuf, out_len, err)))
            return rc;
        return ev_job_validation(out, "final", &chk, outbuf, out_len, 0, hash, err);
    }
}

/* The kept output (the check's copy of op kept_op's slot in the last
 * replay of the last hot sample, before it poisoned), read from the
 * backend and checked by ev_job_kept. */
static ev_status kept_check(const ev_worker_args *a, void *impl, ev_job_plants *pl, const ev_shape *s,
                            void *input, const ev_oracle_row *expect, unsigned char *outbuf, size_t out_len,
                            ev_rec_out *out, int *stop, ev_err *err)
{
    ev_plant_state st;
    uint64_t launched = 0;
    ev_status rc;

    if ((rc = a->ops->tag(impl, &st, &launched, err)) || (rc = a->ops->read_kept(impl, outbuf, out_len, err)))
        return rc;
    return ev_job_kept(out, a->proto, a->arm, pl, s, input, expect, outbuf, out_len, launched, stop, err);
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
 * The device record (docs/runner.md "Worker records"), written
 * once after the samples: the plants' secret seed and shape (only now, so
 * no kernel could have read them from the stream while it was measured), the
 * device's state read now (backend `state`: -1 unknown), the peer's
 * version (the cub arm: the CUB it was compiled with), per hot sample the
 * other compute processes and throttle
 * reasons read after it and the host's wall clock around it, and per cold
 * sample the other processes and reasons read after it (h).
 */
typedef struct sample_facts {
    int64_t *other, *reasons;           /* NVML's, after each hot sample (-1: unknown) */
    double *wall;                       /* ms on the host's wall clock around each (late work) */
    double *foreign;                    /* other processes' CPU ms on the measuring CPUs (NAN: unknown) */
    int64_t n;                          /* hot samples taken */
    int64_t *cold_other, *cold_reasons; /* NVML's, after each cold sample */
    double *cold_foreign;               /* as foreign, around each cold sample */
    int64_t n_cold;                     /* cold samples taken */
    const char *foreign_source;         /* foreign.h's EV_FOREIGN_* */
} sample_facts;

/* Appends ms to array arr: its exact text, or null when unknown (NAN). */
static void push_ms(cJSON *arr, double ms)
{
    if (isnan(ms))
        cJSON_AddItemToArray(arr, cJSON_CreateNull());
    else
        ev_json_push_double(arr, ms);
}

/* The helper processes' CPU time of the bound backend (foreign.h), -1 none. */
static int64_t helper_ns(const ev_worker_args *a, void *impl)
{
    return a->ops->helper_cpu_ns && impl ? a->ops->helper_cpu_ns(impl) : -1;
}

/* An attempt's re-calibrations (sample_rules.h): the k-th after hot
 * sample after[k], from calibration step first[k]. */
typedef struct recal_list {
    int64_t after[EV_RULE_RECAL_MAX], first[EV_RULE_RECAL_MAX];
    size_t n;
} recal_list;

static ev_status device_record(ev_rec_out *out, const ev_worker_args *a, void *impl, ev_arm_kind kind,
                               const ev_job_plants *pl, const sample_facts *h, ev_rule_host *host,
                               const recal_list *rl, ev_err *err)
{
    cJSON *r = ev_rec_new(EV_REC_DEVICE), *v, *ho, *hr, *hw;
    ev_device_state st;
    ev_err ignored;

    if (!r)
        return ev_err_set(err, EV_ENOMEM, "device: out of memory");
    if (!a->ops->state || a->ops->state(impl, &st, &ignored) != EV_OK)
        ev_device_state_unknown(&st);
    cJSON_AddNullToObject(r, "rotation"); /* the plants replaced it (docs/defenses.md) */
    ev_job_plants_json(r, pl);
    ev_json_add_i64(r, "other_processes", st.other_processes);
    cJSON_AddBoolToObject(r, "self_seen", st.self_seen);
    ev_json_add_i64(r, "throttle_reasons", st.throttle_reasons);
    ev_json_add_i64(r, "ecc", st.ecc);
    ev_json_add_i64(r, "mig", st.mig);
    ev_json_add_i64(r, "persistence", st.persistence);
    ev_json_add_i64(r, "persisting_l2_bytes", st.persisting_l2_bytes);
    v = cJSON_AddObjectToObject(r, "versions");
    if (v && kind == EV_ARM_CUB && st.cub_version[0])
        ev_json_add_str(v, "cub", st.cub_version);
    if (a->ops->facts) {
        /* a kernel in a process of its own: what ran it, and how its graph was made */
        ev_backend_facts f;
        cJSON *pv = NULL, *it;
        a->ops->facts(impl, &f);
        if (v && f.versions[0] && !ev_json_parse(f.versions, strlen(f.versions), 0, &pv, NULL)) {
            cJSON_ArrayForEach(it, pv) if (cJSON_IsString(it))
                ev_json_add_str(v, it->string, it->valuestring);
        }
        cJSON_Delete(pv);
        if (f.capture[0])
            ev_json_add_str(r, "capture", f.capture);
    }
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
    /* foreign CPU time on the measuring CPUs, per sample (foreign.h) */
    ev_json_add_str(r, "foreign_source", h->foreign_source ? h->foreign_source : EV_FOREIGN_NONE);
    ho = cJSON_AddArrayToObject(r, "hot_foreign_ms");
    for (int64_t i = 0; i < h->n && ho; i++)
        push_ms(ho, h->foreign ? h->foreign[i] : NAN);
    ho = cJSON_AddArrayToObject(r, "cold_foreign_ms");
    for (int64_t i = 0; i < h->n_cold && ho; i++)
        push_ms(ho, h->cold_foreign ? h->cold_foreign[i] : NAN);
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

/* k replays of the bound arm (ops->replay): *ms its events' time, *wall
 * (when non-NULL) the host's wall clock around it.  The fast fault's timer
 * runs factor x slow: both read 1/factor of what was measured. */
static ev_status replay_timed(const ev_worker_args *a, void *impl, int64_t k, double *ms, double *wall,
                              ev_err *err)
{
    ev_status rc = a->ops->replay(impl, k, ms, wall, err);
    if (!rc && a->fault && a->fault->kind == EV_FAULT_FAST) {
        *ms /= (double)a->fault->value;
        if (wall && *wall >= 0)
            *wall /= (double)a->fault->value;
    }
    return rc;
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
        if ((rc = replay_timed(a, impl, r, &ms, NULL, err)))
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
        if ((rc = replay_timed(a, impl, k, &ms, NULL, err)))
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
        if ((rc = replay_timed(a, impl, kk, &ms, NULL, err)))
            return rc;
        elapsed += ms;
        replays += kk;
    }
    ev_rec_row x = {.warmup = {p->warmup_ms, elapsed, replays}};
    return ev_rec_write(out, ev_rec_encode(EV_REC_WARMUP, &x), err);
}

/* One measured job, from open to end: the state ev_worker_run's steps
 * share.  ended is set once a step has written the end record (a skip, a
 * failed op check): the steps after it do not run. */
typedef struct wjob {
    const ev_worker_args *a;
    const ev_protocol *p;
    ev_rec_out *out;
    ev_arm_kind kind;
    int64_t rows_pp;
    int validate, planted; /* oracle rows and validations; plants and checks */
    int stop, ended;
    ev_backend_config cfg;
    char py_lib[4200]; /* a Python arm: its plants library (cfg.py_ops_lib) */
    ev_backend_job job;
    ev_backend_binding bind;
    ev_device_info dev;
    void *impl;
    ev_job_plants pl;
    sample_facts hf; /* per sample (the device record) */
    ev_foreign fg;
    ev_rule_host host;
    recal_list rl;
    ev_shape shape;
    void *input; /* the case's input bytes (in_len of them) */
    size_t in_len;
    ev_oracle_row *expect; /* the oracle's rows, computed before the gate */
    unsigned char *outbuf; /* bind.out_len bytes: the output read back */
    ev_node_receipt *nodes;
    size_t n_nodes;
    int64_t chosen, step, hot_ops, t_ready, gate_wait, t_open;
    char hash1[65];
    ev_validation chk;
} wjob;

/* Writes the device record, then the end record; the job has ended. */
static ev_status wk_stop(wjob *w, ev_err *err)
{
    ev_status rc = device_record(w->out, w->a, w->impl, w->kind, &w->pl, &w->hf, &w->host, &w->rl, err);
    w->ended = 1;
    return rc ? rc : end(w->out, err);
}

/* Step 1, open: the CPU-only preparation first (the input bytes, the
 * oracle, the plants, the backend's preopen), then the gate, then the device (docs/runner.md,
 * "Staged processes"), and the hello record.  The floor runs the same
 * plants and checks on a nominal case of its own (ev_job_floor_input); the
 * ceilings none. */
static ev_status wk_open(wjob *w, ev_err *err)
{
    const ev_worker_args *a = w->a;
    const ev_protocol *p = w->p;
    ev_status rc;
    int64_t t0;

    w->cfg.host_threads = p->host_threads;
    w->cfg.own_cpus = p->n_cpus >= 2;
    w->cfg.ref = *ev_protocol_ref(p, a->ops->name);
    /* a Python arm: its host, plants library and memory allowance */
    if (ev_backend_is_python(a->ops) &&
        (rc = ev_python_config(&w->cfg, a->ops->name, a->arm, ev_protocol_kernel(p, a->arm), a->python,
                               a->py_host, w->py_lib, sizeof w->py_lib, err)))
        return rc;
    ev_job_affinity(start_affinity, sizeof start_affinity);
    ev_foreign_open(&w->fg); /* the measuring CPUs: the affinity the job started with */
    w->hf.foreign_source = w->fg.source;
    w->validate = w->kind != EV_ARM_FLOOR && w->kind != EV_ARM_CEILING && w->kind != EV_ARM_CEILING_L2;
    w->planted = w->kind != EV_ARM_CEILING && w->kind != EV_ARM_CEILING_L2;
    if (w->validate && (rc = ev_job_input(p, a->case_index, &w->shape, &w->input, &w->in_len, err)))
        return rc;
    if (w->kind == EV_ARM_FLOOR && (rc = ev_job_floor_input(p, &w->shape, &w->input, &w->in_len, err)))
        return rc;
    if (w->planted && ((rc = ev_job_expect(&w->shape, w->input, &w->expect, err)) ||
                       (rc = ev_job_plants_prepare(&w->pl, p, &w->shape, w->expect, err))))
        return rc;
    w->pl.on = w->validate;
    /* the backend's part that touches no device (cuda: the driver's and
     * NVML's init), so that the turn does not wait for it; open completes it */
    if (a->ops->preopen && (rc = a->ops->preopen(&w->cfg, &w->impl, err)))
        return rc;
    w->t_ready = real_ns();
    if ((rc = ev_worker_gate(a, &w->gate_wait, err)))
        return rc;
    /* the host facts, and real-time priority for the measured threads on
     * cpu, before the backend starts its pool (job.h) */
    ev_job_host_open(a->ops->name, p->cpu_realtime, &w->host);
    t0 = now_ns();
    if ((rc = a->ops->open(&w->cfg, &w->impl, err)) || (rc = a->ops->info(w->impl, &w->dev, err)))
        return rc;
    w->t_open = now_ns() - t0;
    if ((rc = hello(w->out, a->job_key, a->arm, &w->dev, err)))
        return rc;
    if (a->fault && a->fault->kind == EV_FAULT_GARBAGE &&
        (rc = ev_rec_write_raw(w->out, "this line is not a record {\n", err)))
        return rc;
    return EV_OK;
}

/* The backend job of an arm: what it launches (kind, schedule, external
 * entry and geometry, the selector's model), the ceiling's bytes, and the
 * plants' variants. */
static ev_status wk_job(wjob *w, ev_err *err)
{
    const ev_worker_args *a = w->a;
    const ev_protocol *p = w->p;
    ev_backend_job *job = &w->job;
    ev_status rc;

    job->kind = w->kind == EV_ARM_FAULT ? EV_ARM_NATIVE : w->kind;
    if (a->fault && a->fault->kind == EV_FAULT_WRONG_SCHEDULE) {
        job->kind = EV_ARM_AUTO; /* the selector decides; the backend launches another schedule */
        job->wrong_schedule = 1;
    }
    job->arm = a->arm;
    if (w->kind == EV_ARM_EXTERNAL && w->validate) {
        const ev_ext_kernel *k = ev_protocol_kernel(p, a->arm);
        job->ext_lib = a->kernel_lib;
        const ev_proto_case *pc = &p->cases[a->case_index];
        job->ext_entry = k ? ev_ext_entry_for(k, pc->op, pc->dtype) : NULL;
        job->ext_memory_mb = k ? k->memory_mb : EV_EXT_PY_MEMORY_MB;
        if (k && k->grid[0] && !strcmp(a->ops->name, "cuda") && job->ext_entry && pc->rows > 0 &&
            ((rc = ev_ext_geometry(k, pc->rows, pc->cols, pc->stride, &job->ext_grid, &job->ext_block, err))))
            return rc;
        if (job->ext_entry && job->ext_lib &&
            (rc = entry_defined(job->ext_lib, a->arm, pc, job->ext_entry, err)))
            return rc;
    }
    job->rows_per_program = w->rows_pp;
    job->coef = a->coef;
    job->threshold = p->decision_threshold;
    job->scheds = p->model_schedules;
    w->hot_ops = w->kind == EV_ARM_CEILING ? w->cfg.ref.ceiling_ops_per_graph : p->ops_per_graph;
    if (w->kind == EV_ARM_CEILING) {
        const ev_proto_ref *ref = &w->cfg.ref;
        int64_t bytes =
            ref->ceiling_bytes ? ref->ceiling_bytes : ref->ceiling_cache_multiple * w->dev.cache_bytes;
        if (ref->ceiling_max_bytes && bytes > ref->ceiling_max_bytes)
            bytes = ref->ceiling_max_bytes;
        job->ceiling_bytes = bytes;
    }
    if (w->planted) {
        /* V variants: as many as half the cache holds, or the budget
         * (ev_plant_variants); the floor as many as its ops */
        int64_t v = w->kind == EV_ARM_FLOOR ? w->hot_ops
                                            : ev_plant_variants((int64_t)w->in_len, w->dev.cache_bytes,
                                                                w->cfg.ref.variant_budget_bytes, w->hot_ops);
        ev_plant_config(&w->pl.cfg, w->pl.seed, &w->shape, v, w->hot_ops);
        job->c = w->validate ? p->cases[a->case_index] : ev_job_floor_case();
        job->input = w->input;
        job->input_len = w->in_len;
        job->plants = &w->pl.cfg;
        job->plant_rows = w->pl.rows;
    }
    return EV_OK;
}

/* Step 2, bind: the backend job bound to the device and the binding
 * record, or a skip record and the end (a backend that cannot run the
 * arm); then where the job's time went before its first launch
 * (docs/runner.md, "Where a job's time goes"). */
static ev_status wk_bind(wjob *w, ev_err *err)
{
    const ev_worker_args *a = w->a;
    const ev_backend_job *job = &w->job;
    const ev_backend_binding *b = &w->bind;
    ev_status rc;

    if ((rc = wk_job(w, err)))
        return rc;
    rc = a->ops->bind(w->impl, job, &w->bind, err);
    if (rc == EV_EUNSUPPORTED) {
        cJSON *s = ev_rec_new(EV_REC_SKIP);
        if (s)
            ev_json_add_str(s, "reason", err->msg);
        w->ended = 1;
        return (rc = ev_rec_write(w->out, s, err)) ? rc : end(w->out, err);
    }
    if (rc)
        return rc;
    ev_rec_row x = {.binding = {w->validate ? job->c.op : a->arm, w->validate ? job->c.dtype : "-",
                                w->validate ? job->c.rows : 0, w->validate ? job->c.cols : 0,
                                w->validate ? job->c.stride : 0, b->in_span, b->out_span, b->in_align,
                                b->out_align, b->threads}};
    if ((rc = ev_rec_write(w->out, ev_rec_encode(EV_REC_BINDING, &x), err)))
        return rc;
    if ((a->spawn_ns > 0 && a->entered_ns >= a->spawn_ns &&
         (rc = ev_job_cold(w->out, "process-start", a->entered_ns - a->spawn_ns, err))) ||
        (a->entered_ns > 0 && (rc = ev_job_cold(w->out, "prep", w->t_ready - a->entered_ns, err))) ||
        (a->gate_fd >= 0 && (rc = ev_job_cold(w->out, "gate-wait", w->gate_wait, err))) ||
        (rc = ev_job_cold(w->out, "device-open", w->t_open, err)))
        return rc;
    return EV_OK;
}

/* Step 3, validate: poison, the first launch (process-cold, host clock),
 * the output validated against the oracle and the input left intact. */
static ev_status wk_validate(wjob *w, ev_err *err)
{
    const ev_worker_args *a = w->a;
    size_t len = w->bind.out_len;
    ev_status rc;
    int64_t t0;

    w->outbuf = malloc(len ? len : 1);
    if (!w->outbuf)
        return ev_err_set(err, EV_ENOMEM, "output: out of memory");
    if ((rc = a->ops->poison(w->impl, EV_POISON_OUT_BYTE, err)))
        return rc;
    t0 = now_ns();
    if ((rc = a->ops->launch(w->impl, err)) || (rc = ev_job_cold(w->out, "first-launch", now_ns() - t0, err)))
        return rc;
    if (w->validate &&
        ((rc = stage_check(a, w->impl, &w->shape, w->input, w->expect, w->outbuf, len, &w->chk, err)) ||
         (rc = ev_job_validation(w->out, "first", &w->chk, w->outbuf, len, 1, w->hash1, err)) ||
         (rc = input_intact(a, w->impl, w->input, w->in_len, err))))
        return rc;
    if (a->fault && a->fault_hook)
        a->fault_hook(a->fault_ctx, a->fault, EV_STAGE_VALIDATED, 0);
    return EV_OK;
}

/* Step 4, cold samples: after a cache flush each, planted before it and
 * checked after it (untimed), with the device's hygiene after each; a
 * failed op check ends the job there. */
static ev_status wk_cold_samples(wjob *w, ev_err *err)
{
    const ev_worker_args *a = w->a;
    const ev_protocol *p = w->p;
    size_t n = (size_t)(p->cold_samples > 0 ? p->cold_samples : 1);
    ev_foreign_mark m0, m1;
    ev_status rc;
    double ms;

    ev_rec_row x = {.flush = {w->dev.flush_bytes, w->dev.cache_bytes}};
    if ((rc = ev_rec_write(w->out, ev_rec_encode(EV_REC_FLUSH, &x), err)))
        return rc;
    w->hf.cold_other = malloc(n * sizeof *w->hf.cold_other);
    w->hf.cold_reasons = malloc(n * sizeof *w->hf.cold_reasons);
    w->hf.cold_foreign = malloc(n * sizeof *w->hf.cold_foreign);
    if (!w->hf.cold_other || !w->hf.cold_reasons || !w->hf.cold_foreign)
        return ev_err_set(err, EV_ENOMEM, "device state: out of memory");
    for (int64_t i = 0; i < p->cold_samples; i++) {
        ev_device_state st;
        ev_err ignored;
        ev_foreign_mark_now(&w->fg, helper_ns(a, w->impl), &m0);
        if ((rc = a->ops->cold_launch(w->impl, &ms, err)))
            return rc;
        if (a->fault && a->fault->kind == EV_FAULT_FAST)
            ms /= (double)a->fault->value;
        ev_foreign_mark_now(&w->fg, helper_ns(a, w->impl), &m1);
        w->hf.cold_foreign[i] = ev_foreign_ms(&m0, &m1);
        if ((rc = sample(w->out, "cold", i, 1, 1, ms, 0, 0, err)))
            return rc;
        /* the device's hygiene after the cold sample, outside its timing */
        if (!a->ops->state || a->ops->state(w->impl, &st, &ignored) != EV_OK)
            ev_device_state_unknown(&st);
        w->hf.cold_other[i] = st.other_processes;
        w->hf.cold_reasons[i] = st.throttle_reasons;
        w->hf.n_cold = i + 1;
        if (w->pl.on && (rc = op_check(a, w->impl, &w->pl, "cold", i, 1, 1, w->outbuf, w->bind.out_len,
                                       w->out, &w->stop, err)))
            return rc;
        if (w->stop)
            return wk_stop(w, err);
    }
    if (w->planted && (rc = a->ops->unplant(w->impl, err)))
        return rc;
    return EV_OK;
}

/* Step 5, capture: the hot ops captured and each kernel node read back
 * from the graph (a node record each).  One kernel node per op on cuda,
 * one receipt per batch on cpu: a kernel that launched more work than the
 * arm declares fails here, its nodes recorded (verify-bundle holds every
 * completed attempt to the same). */
static ev_status wk_capture(wjob *w, ev_err *err)
{
    const ev_worker_args *a = w->a;
    ev_status rc;

    if ((rc = a->ops->capture(w->impl, w->hot_ops, &w->nodes, &w->n_nodes, err)))
        return rc;
    for (size_t i = 0; i < w->n_nodes; i++) {
        ev_rec_row x = {.node = {(int64_t)i, w->nodes[i].function, {0}, {0}}};
        cJSON *nd = ev_rec_encode(EV_REC_NODE, &x), *g, *bl;
        if (!nd)
            return ev_err_set(err, EV_ENOMEM, "node: out of memory");
        /* grid and block, arrays of three, go beside the codec's fields */
        g = cJSON_AddArrayToObject(nd, "grid");
        bl = cJSON_AddArrayToObject(nd, "block");
        for (int d = 0; d < 3 && g && bl; d++) {
            ev_json_push_i64(g, w->nodes[i].grid[d]);
            ev_json_push_i64(bl, w->nodes[i].block[d]);
        }
        if ((rc = ev_rec_write(w->out, nd, err)))
            return rc;
    }
    if (w->validate && w->job.c.rows > 0) {
        size_t want = a->ops->nodes_unread ? 0 : strcmp(a->ops->name, "cuda") ? 1 : (size_t)w->hot_ops;
        if (w->n_nodes != want)
            return ev_err_set(err, EV_EPROC,
                              "graph: %zu kernel nodes for %lld ops, where the %s backend records %zu",
                              w->n_nodes, (long long)w->hot_ops, a->ops->name, want);
    }
    return EV_OK;
}

/* Injects the device faults of the last hot sample i (the late work after
 * the events, the throttled clock, another process, throttle reasons):
 * what a test's fault arm asks for. */
static void wk_sample_faults(wjob *w, int64_t i, double ms, int64_t *mhz, int *have)
{
    const ev_proto_fault *f = w->a->fault;
    sample_facts *hf = &w->hf;
    int last = i == w->p->samples - 1;

    if (!f)
        return;
    if (f->kind == EV_FAULT_LATE && last)
        hf->wall[i] = ms + (double)f->value; /* the late fault: work after the events */
    if (f->kind == EV_FAULT_THROTTLE) {
        /* the throttle fault: the last sample at the fault's clock (simulated where none is read) */
        *mhz = last ? f->value : *have ? *mhz : 1000;
        *have = 1;
    }
    if (f->kind == EV_FAULT_CONTENDED && last)
        hf->other[i] = f->value;
    if (f->kind == EV_FAULT_THROTTLED && last)
        hf->reasons[i] = f->value;
}

/* One hot sample i: the timed replays, the SM clock, the device's hygiene
 * after it (outside its timing), its record and its op check.  OUT:
 * *sample_ms, the sample's time as measured. */
static ev_status wk_hot_sample(wjob *w, int64_t i, double *sample_ms, ev_err *err)
{
    const ev_worker_args *a = w->a;
    int64_t mhz = 0;
    ev_err ignored;
    ev_device_state st;
    ev_foreign_mark m0, m1;
    int have;
    double ms;
    ev_status rc;
    /* The overrun fault runs more replays than the sample records. */
    int64_t run = a->fault && a->fault->kind == EV_FAULT_OVERRUN ? w->chosen * a->fault->value : w->chosen;

    ev_foreign_mark_now(&w->fg, helper_ns(a, w->impl), &m0);
    if ((rc = replay_timed(a, w->impl, run, &ms, &w->hf.wall[i], err)))
        return rc;
    if (a->fault && a->fault->kind == EV_FAULT_DRIFT) { /* the drift fault: the samples' timer alone */
        ms *= (double)a->fault->value;
        w->hf.wall[i] *= (double)a->fault->value;
    }
    ev_foreign_mark_now(&w->fg, helper_ns(a, w->impl), &m1);
    w->hf.foreign[i] = ev_foreign_ms(&m0, &m1);
    *sample_ms = ms;
    have = a->ops->sm_clock(w->impl, &mhz, &ignored) == EV_OK;
    if (!a->ops->state || a->ops->state(w->impl, &st, &ignored) != EV_OK)
        ev_device_state_unknown(&st);
    w->hf.other[i] = st.other_processes;
    w->hf.reasons[i] = st.throttle_reasons;
    wk_sample_faults(w, i, ms, &mhz, &have);
    w->hf.n = i + 1;
    if ((rc = sample(w->out, "hot", i, w->chosen, w->hot_ops, ms, have, mhz, err)))
        return rc;
    if (w->pl.on && (rc = op_check(a, w->impl, &w->pl, "hot", i, w->chosen, w->hot_ops, w->outbuf,
                                   w->bind.out_len, w->out, &w->stop, err)))
        return rc;
    return EV_OK;
}

/* Step 7, hot samples: each a timed replay of the captured ops (see
 * wk_hot_sample); a failed op check ends the job there.  A sample that
 * drifted out of the band (a busier or quieter host than the calibration
 * saw) calibrates again, from its own per-replay time, for the samples
 * still to come; it stays and counts (sample_rules.h, re-calibration). */
static ev_status wk_hot_samples(wjob *w, ev_err *err)
{
    const ev_worker_args *a = w->a;
    const ev_protocol *p = w->p;
    size_t n = (size_t)(p->samples > 0 ? p->samples : 1);
    ev_status rc;

    w->hf.other = malloc(n * sizeof *w->hf.other);
    w->hf.reasons = malloc(n * sizeof *w->hf.reasons);
    w->hf.wall = malloc(n * sizeof *w->hf.wall);
    w->hf.foreign = malloc(n * sizeof *w->hf.foreign);
    if (!w->hf.other || !w->hf.reasons || !w->hf.wall || !w->hf.foreign)
        return ev_err_set(err, EV_ENOMEM, "device state: out of memory");
    for (int64_t i = 0; i < p->samples; i++) {
        double sample_ms;
        if ((rc = wk_hot_sample(w, i, &sample_ms, err)))
            return rc;
        if (w->stop)
            return wk_stop(w, err);
        if (i + 1 < p->samples && w->rl.n < EV_RULE_RECAL_MAX && ev_rule_drifted(p, sample_ms, w->chosen)) {
            double per = sample_ms / (double)w->chosen, spent = 0;
            int64_t spent_replays = 0;
            w->rl.after[w->rl.n] = i;
            w->rl.first[w->rl.n] = w->step;
            w->rl.n++;
            if ((rc = cal_steps(a, w->impl, w->out, reps(p->target_sample_ms / per), 1, &w->step, &per,
                                &spent, &spent_replays, &w->chosen, err)))
                return rc;
        }
        if (a->fault && a->fault_hook)
            a->fault_hook(a->fault_ctx, a->fault, EV_STAGE_SAMPLE, i + 1);
    }
    return EV_OK;
}

/* Steps 8 and 9, the device record and the kept check: the kept output of
 * the last hot sample held to its planted input; a failed check ends the
 * job there. */
static ev_status wk_device_and_kept(wjob *w, ev_err *err)
{
    const ev_worker_args *a = w->a;
    ev_status rc;

    if (!(a->fault && a->fault->kind == EV_FAULT_NO_DEVICE) &&
        (rc = device_record(w->out, a, w->impl, w->kind, &w->pl, &w->hf, &w->host, &w->rl, err)))
        return rc;
    if (w->pl.on && (rc = kept_check(a, w->impl, &w->pl, &w->shape, w->input, w->expect, w->outbuf,
                                     w->bind.out_len, w->out, &w->stop, err)))
        return rc;
    if (w->stop) {
        w->ended = 1;
        return end(w->out, err);
    }
    return EV_OK;
}

/* Step 10, the final validation: every plant restored, the input intact,
 * one launch of op 0 on the case's own input, its output validated and
 * hashed (a hash other than the first launch's breaks replay determinism). */
static ev_status wk_final(wjob *w, ev_err *err)
{
    const ev_worker_args *a = w->a;
    size_t len = w->bind.out_len;
    char hash2[65] = "";
    ev_status rc;

    if (w->planted && (rc = a->ops->unplant(w->impl, err)))
        return rc;
    if (!w->validate)
        return EV_OK;
    if ((rc = input_intact(a, w->impl, w->input, w->in_len, err)) || (rc = a->ops->launch(w->impl, err)) ||
        (rc = stage_check(a, w->impl, &w->shape, w->input, w->expect, w->outbuf, len, &w->chk, err)))
        return rc;
    if ((rc = ev_sha256_hex(w->outbuf, len, hash2)))
        return ev_err_set(err, rc, "sha256 failed");
    if (strcmp(w->hash1, hash2))
        w->chk.passed = 0; /* replay determinism broken */
    if ((rc = ev_job_validation(w->out, "final", &w->chk, w->outbuf, len, 0, hash2, err)) ||
        (rc = input_intact(a, w->impl, w->input, w->in_len, err)))
        return rc;
    return EV_OK;
}

/* A job of an external kernel whose build failed, where the kernel
 * declares an entry for the case (a case it declares none for is a skip,
 * built or not): 1 when so. */
static int ext_build_failed(const ev_worker_args *a, ev_arm_kind kind)
{
    const ev_protocol *p = a->proto;
    return kind == EV_ARM_EXTERNAL && a->kernel_error && a->case_index >= 0 &&
           (size_t)a->case_index < p->n_cases && ev_protocol_kernel(p, a->arm) &&
           ev_ext_entry_for(ev_protocol_kernel(p, a->arm), p->cases[a->case_index].op,
                            p->cases[a->case_index].dtype);
}

/* The protocol of one job, step by step (worker.h): open, bind, validate,
 * cold samples, capture, warm up and calibrate, hot samples, the device
 * record and the kept check, the final validation, end.  torch-compile
 * runs in its own python3 process (torch_peer.c); a Python arm through
 * its own process's backend (backend_python.h); an external kernel whose
 * build failed fails with the compiler's own message. */
ev_status ev_worker_run(const ev_worker_args *a, ev_rec_out *out, ev_err *err)
{
    wjob w;
    ev_status rc;

    memset(&w, 0, sizeof w);
    w.a = a;
    w.p = a->proto;
    w.out = out;
    w.chosen = 1;
    if (ev_arm_classify(w.p, a->arm, &w.kind, &w.rows_pp))
        return ev_err_set(err, EV_EINVAL, "unknown arm '%s'", a->arm);
    if (w.kind == EV_ARM_TORCH)
        return ev_worker_torch(a, out, err);
    if (ext_build_failed(a, w.kind)) {
        /* the build failed: this job fails with the compiler's own message,
         * and its reason is the first error lines (ext_binary.h) */
        ev_buf msg = EV_BUF_INIT, first = EV_BUF_INIT;
        if (!ev_read_file(a->kernel_error, &msg, NULL) && msg.len) {
            fprintf(stderr, "%s%s", msg.data, msg.data[msg.len - 1] == '\n' ? "" : "\n");
            ev_ext_first_errors(msg.data, msg.len, &first);
        }
        rc = ev_err_set(err, EV_EPROC, "external kernel %s %s: %s", a->arm,
                        ev_protocol_kernel(w.p, a->arm)->python ? "could not be laid out" : "did not compile",
                        first.data ? first.data : "(no message; the build receipt holds what there is)");
        ev_buf_free(&msg);
        ev_buf_free(&first);
        return rc;
    }
    const ev_ext_kernel *k = w.kind == EV_ARM_EXTERNAL ? ev_protocol_kernel(w.p, a->arm) : NULL;
    if (k && k->python && !ev_backend_is_python(a->ops) && ev_ext_source(k, a->ops->name)) {
        /* a Python arm: the same protocol, through its own process's
         * backend (backend_python.h) */
        ev_worker_args b = *a;
        if (!(b.ops = ev_backend_python(a->ops)))
            return ev_err_set(err, EV_EINVAL, "%s: no Python arm on the %s backend", a->arm, a->ops->name);
        return ev_worker_run(&b, out, err);
    }
    if ((rc = wk_open(&w, err)) || (rc = wk_bind(&w, err)) || w.ended)
        goto out;
    if ((rc = wk_validate(&w, err)) || (rc = wk_cold_samples(&w, err)) || w.ended)
        goto out;
    if ((rc = wk_capture(&w, err)) || (rc = warm_and_calibrate(a, w.impl, out, &w.chosen, &w.step, err)))
        goto out;
    if ((rc = wk_hot_samples(&w, err)) || w.ended)
        goto out;
    if ((rc = wk_device_and_kept(&w, err)) || w.ended)
        goto out;
    if ((rc = wk_final(&w, err)))
        goto out;
    rc = end(out, err);
out:
    free(w.pl.rows);
    free(w.hf.other);
    free(w.hf.reasons);
    free(w.hf.wall);
    free(w.hf.foreign);
    free(w.hf.cold_other);
    free(w.hf.cold_reasons);
    free(w.hf.cold_foreign);
    free(w.nodes);
    free(w.outbuf);
    free(w.input);
    free(w.expect);
    a->ops->close(w.impl);
    return rc;
}
