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
 * launch (issue 16: a kernel that writes its input, so that the reference
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
 * The device record (issue 16; docs/runner.md "Worker records"), written
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

ev_status ev_worker_run(const ev_worker_args *a, ev_rec_out *out, ev_err *err)
{
    const ev_protocol *p = a->proto;
    ev_backend_config cfg;
    ev_backend_job job;
    ev_backend_binding bind;
    ev_device_info dev;
    ev_arm_kind kind;
    ev_node_receipt *nodes = NULL;
    ev_job_plants pl;
    sample_facts hf = {NULL, NULL, NULL, NULL, 0,
                       NULL, NULL, NULL, 0,    NULL}; /* per sample (the device record) */
    ev_foreign fg;
    ev_foreign_mark m0, m1;
    int stop = 0;
    ev_oracle_row *expect = NULL; /* the oracle's rows, computed before the gate */
    size_t n_nodes = 0;
    void *impl = NULL, *input = NULL;
    unsigned char *outbuf = NULL;
    size_t in_len = 0;
    int64_t rows_pp = 0, chosen = 1, t0, hot_ops, t_ready, gate_wait = 0, t_open = 0, step = 0;
    ev_rule_host host;
    recal_list rl = {{0}, {0}, 0};
    int validate, planted;
    char hash1[65] = "", hash2[65] = "";
    ev_shape shape;
    ev_validation chk;
    ev_status rc;
    double ms;
    char py_lib[4200];

    memset(&cfg, 0, sizeof cfg);
    memset(&job, 0, sizeof job);
    memset(&pl, 0, sizeof pl);
    if (ev_arm_classify(p, a->arm, &kind, &rows_pp))
        return ev_err_set(err, EV_EINVAL, "unknown arm '%s'", a->arm);
    cfg.host_threads = p->host_threads;
    cfg.own_cpus = p->n_cpus >= 2;
    cfg.ref = *ev_protocol_ref(p, a->ops->name);
    if (ev_backend_is_python(a->ops)) {
        /* the Python host, its plants library beside this worker, and the
         * kernel's memory allowance */
        const ev_ext_kernel *pk = ev_protocol_kernel(p, a->arm);
        if ((rc = ev_python_ops_lib(a->ops->name, py_lib, sizeof py_lib, err)))
            return rc;
        cfg.python = a->python ? a->python : "python3";
        cfg.py_arm = a->arm;
        cfg.py_host = a->py_host;
        cfg.py_ops_lib = py_lib;
        cfg.py_memory_mb = pk ? pk->memory_mb : EV_EXT_PY_MEMORY_MB;
        if (!cfg.py_host)
            return ev_err_set(err, EV_EINVAL, "%s: the worker was given no Python host script (--py-host)",
                              a->arm);
    }
    if (kind == EV_ARM_TORCH) /* its own python3 process: torch_peer.c */
        return ev_worker_torch(a, out, err);
    if (kind == EV_ARM_EXTERNAL && a->kernel_error && a->case_index >= 0 &&
        (size_t)a->case_index < p->n_cases && ev_protocol_kernel(p, a->arm) &&
        ev_ext_entry_for(ev_protocol_kernel(p, a->arm), p->cases[a->case_index].op,
                         p->cases[a->case_index].dtype)) {
        /* (a case it declares no entry for is a skip, built or not) */
        /* the build failed: this job fails with the compiler's own message,
         * and its reason is the first error lines (ext_build.h) */
        ev_buf msg = EV_BUF_INIT, first = EV_BUF_INIT;
        if (!ev_read_file(a->kernel_error, &msg, NULL) && msg.len) {
            fprintf(stderr, "%s%s", msg.data, msg.data[msg.len - 1] == '\n' ? "" : "\n");
            ev_ext_first_errors(msg.data, msg.len, &first);
        }
        rc = ev_err_set(err, EV_EPROC, "external kernel %s %s: %s", a->arm,
                        ev_protocol_kernel(p, a->arm)->python ? "could not be laid out" : "did not compile",
                        first.data ? first.data : "(no message; the build receipt holds what there is)");
        ev_buf_free(&msg);
        ev_buf_free(&first);
        return rc;
    }
    if (kind == EV_ARM_EXTERNAL && !ev_backend_is_python(a->ops) && ev_protocol_kernel(p, a->arm) &&
        ev_protocol_kernel(p, a->arm)->python && ev_ext_source(ev_protocol_kernel(p, a->arm), a->ops->name)) {
        /* a Python arm: the same protocol, through its own process's
         * backend (backend_python.h) */
        ev_worker_args b = *a;
        if (!(b.ops = ev_backend_python(a->ops)))
            return ev_err_set(err, EV_EINVAL, "%s: no Python arm on the %s backend", a->arm, a->ops->name);
        return ev_worker_run(&b, out, err);
    }
    ev_job_affinity(start_affinity, sizeof start_affinity);
    ev_foreign_open(&fg); /* the measuring CPUs: the affinity the job started with */
    hf.foreign_source = fg.source;
    /* CPU-only preparation first (the input bytes, the oracle, the
     * plants); then the gate; only then the device (docs/runner.md,
     * "Staged processes").  The floor runs the same plants and checks on
     * a nominal case of its own (ev_job_floor_input); the ceilings none. */
    validate = kind != EV_ARM_FLOOR && kind != EV_ARM_CEILING && kind != EV_ARM_CEILING_L2;
    planted = kind != EV_ARM_CEILING && kind != EV_ARM_CEILING_L2;
    if (validate && (rc = ev_job_input(p, a->case_index, &shape, &input, &in_len, err)))
        goto out;
    if (kind == EV_ARM_FLOOR && (rc = ev_job_floor_input(p, &shape, &input, &in_len, err)))
        goto out;
    if (planted && ((rc = ev_job_expect(&shape, input, &expect, err)) ||
                    (rc = ev_job_plants_prepare(&pl, p, &shape, expect, err))))
        goto out;
    pl.on = validate;
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
        if (job.ext_entry && job.ext_lib && (rc = entry_defined(job.ext_lib, a->arm, pc, job.ext_entry, err)))
            goto out;
    }
    job.rows_per_program = rows_pp;
    job.coef = a->coef;
    job.threshold = p->decision_threshold;
    job.scheds = p->model_schedules;
    hot_ops = kind == EV_ARM_CEILING ? cfg.ref.ceiling_ops_per_graph : p->ops_per_graph;
    if (kind == EV_ARM_CEILING) {
        const ev_proto_ref *ref = &cfg.ref;
        int64_t bytes =
            ref->ceiling_bytes ? ref->ceiling_bytes : ref->ceiling_cache_multiple * dev.cache_bytes;
        if (ref->ceiling_max_bytes && bytes > ref->ceiling_max_bytes)
            bytes = ref->ceiling_max_bytes;
        job.ceiling_bytes = bytes;
    }
    if (planted) {
        /* V variants: as many as half the cache holds, or the budget
         * (ev_plant_variants); the floor as many as its ops */
        int64_t v = kind == EV_ARM_FLOOR ? hot_ops
                                         : ev_plant_variants((int64_t)in_len, dev.cache_bytes,
                                                             cfg.ref.variant_budget_bytes, hot_ops);
        ev_plant_config(&pl.cfg, pl.seed, &shape, v, hot_ops);
        job.c = validate ? p->cases[a->case_index] : ev_job_floor_case();
        job.input = input;
        job.input_len = in_len;
        job.plants = &pl.cfg;
        job.plant_rows = pl.rows;
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
            (rc = input_intact(a, impl, input, in_len, err)))
            goto out;
    }
    if (a->fault && a->fault_hook)
        a->fault_hook(a->fault_ctx, a->fault, EV_STAGE_VALIDATED, 0);

    /* Cold samples after a cache flush, each planted before it and
     * checked after it (untimed). */
    {
        ev_rec_row x = {.flush = {dev.flush_bytes, dev.cache_bytes}};
        if ((rc = ev_rec_write(out, ev_rec_encode(EV_REC_FLUSH, &x), err)))
            goto out;
    }
    hf.cold_other = malloc((size_t)(p->cold_samples > 0 ? p->cold_samples : 1) * sizeof *hf.cold_other);
    hf.cold_reasons = malloc((size_t)(p->cold_samples > 0 ? p->cold_samples : 1) * sizeof *hf.cold_reasons);
    hf.cold_foreign = malloc((size_t)(p->cold_samples > 0 ? p->cold_samples : 1) * sizeof *hf.cold_foreign);
    if (!hf.cold_other || !hf.cold_reasons || !hf.cold_foreign) {
        rc = ev_err_set(err, EV_ENOMEM, "device state: out of memory");
        goto out;
    }
    for (int64_t i = 0; i < p->cold_samples; i++) {
        ev_device_state st;
        ev_err ignored;
        ev_foreign_mark_now(&fg, helper_ns(a, impl), &m0);
        if ((rc = a->ops->cold_launch(impl, &ms, err)))
            goto out;
        if (a->fault && a->fault->kind == EV_FAULT_FAST)
            ms /= (double)a->fault->value;
        ev_foreign_mark_now(&fg, helper_ns(a, impl), &m1);
        hf.cold_foreign[i] = ev_foreign_ms(&m0, &m1);
        if ((rc = sample(out, "cold", i, 1, 1, ms, 0, 0, err)))
            goto out;
        /* the device's hygiene after the cold sample, outside its timing */
        if (!a->ops->state || a->ops->state(impl, &st, &ignored) != EV_OK)
            ev_device_state_unknown(&st);
        hf.cold_other[i] = st.other_processes;
        hf.cold_reasons[i] = st.throttle_reasons;
        hf.n_cold = i + 1;
        if (pl.on && (rc = op_check(a, impl, &pl, "cold", i, 1, 1, outbuf, bind.out_len, out, &stop, err)))
            goto out;
        if (stop) {
            if ((rc = device_record(out, a, impl, kind, &pl, &hf, &host, &rl, err)) == EV_OK)
                rc = end(out, err);
            goto out;
        }
    }
    if (planted && (rc = a->ops->unplant(impl, err)))
        goto out;

    /* Capture, read back the nodes. */
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
        size_t want = a->ops->nodes_unread ? 0 : strcmp(a->ops->name, "cuda") ? 1 : (size_t)hot_ops;
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
    hf.foreign = malloc((size_t)(p->samples > 0 ? p->samples : 1) * sizeof *hf.foreign);
    if (!hf.other || !hf.reasons || !hf.wall || !hf.foreign) {
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
        ev_foreign_mark_now(&fg, helper_ns(a, impl), &m0);
        if ((rc = replay_timed(a, impl, run, &ms, &hf.wall[i], err)))
            goto out;
        if (a->fault && a->fault->kind == EV_FAULT_DRIFT) { /* the drift fault: the samples' timer alone */
            ms *= (double)a->fault->value;
            hf.wall[i] *= (double)a->fault->value;
        }
        ev_foreign_mark_now(&fg, helper_ns(a, impl), &m1);
        hf.foreign[i] = ev_foreign_ms(&m0, &m1);
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
        if (pl.on &&
            (rc = op_check(a, impl, &pl, "hot", i, chosen, hot_ops, outbuf, bind.out_len, out, &stop, err)))
            goto out;
        if (stop) {
            if ((rc = device_record(out, a, impl, kind, &pl, &hf, &host, &rl, err)) == EV_OK)
                rc = end(out, err);
            goto out;
        }
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
        (rc = device_record(out, a, impl, kind, &pl, &hf, &host, &rl, err)))
        goto out;
    if (pl.on &&
        (rc = kept_check(a, impl, &pl, &shape, input, expect, outbuf, bind.out_len, out, &stop, err)))
        goto out;
    if (stop) {
        rc = end(out, err);
        goto out;
    }
    /* The final stage: every plant restored, the input intact, one launch
     * of op 0 on the case's own input. */
    if (planted && (rc = a->ops->unplant(impl, err)))
        goto out;
    if (validate) {
        if ((rc = input_intact(a, impl, input, in_len, err)) || (rc = a->ops->launch(impl, err)) ||
            (rc = stage_check(a, impl, &shape, input, expect, outbuf, bind.out_len, &chk, err)))
            goto out;
        if ((rc = ev_sha256_hex(outbuf, bind.out_len, hash2))) {
            ev_err_set(err, rc, "sha256 failed");
            goto out;
        }
        if (strcmp(hash1, hash2)) {
            chk.passed = 0; /* replay determinism broken */
        }
        if ((rc = ev_job_validation(out, "final", &chk, outbuf, bind.out_len, 0, hash2, err)) ||
            (rc = input_intact(a, impl, input, in_len, err)))
            goto out;
    }
    rc = end(out, err);
out:
    free(pl.rows);
    free(hf.other);
    free(hf.reasons);
    free(hf.wall);
    free(hf.foreign);
    free(hf.cold_other);
    free(hf.cold_reasons);
    free(hf.cold_foreign);
    free(nodes);
    free(outbuf);
    free(input);
    free(expect);
    a->ops->close(impl);
    return rc;
}
