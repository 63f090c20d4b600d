/*
 * job.c: what every job process shares (job.h), whether its kernel runs in
 * the worker (worker.c) or in the torch peer's python (torch_peer.c): the
 * case's input and the oracle's rows of it, validation and its record, the
 * cold-time records and the process's CPUs.
 */
#include "job.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/random.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "buf.h"
#include "inputs.h"
#include "json.h"
#include "sha256.h"
#include "validate.h"

ev_status ev_job_cold(ev_rec_out *out, const char *name, int64_t elapsed_ns, ev_err *err)
{
    if (elapsed_ns < 0)
        return EV_OK;
    ev_rec_row x = {.cold = {name, elapsed_ns}};
    return ev_rec_write(out, ev_rec_encode(EV_REC_COLD, &x), err);
}

void ev_job_affinity(char *buf, size_t cap)
{
    cpu_set_t set;
    size_t len = 0;
    int first = 1;

    buf[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set))
        return;
    for (int i = 0; i < CPU_SETSIZE; i++) {
        int j;
        if (!CPU_ISSET(i, &set))
            continue;
        for (j = i; j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, &set); j++)
            ;
        if (len < cap) {
            int w = j > i ? snprintf(buf + len, cap - len, "%s%d-%d", first ? "" : ",", i, j)
                          : snprintf(buf + len, cap - len, "%s%d", first ? "" : ",", i);
            len += w > 0 ? (size_t)w : 0;
        }
        first = 0;
        i = j;
    }
    if (len >= cap)
        buf[cap - 1] = '\0';
}

/* Writes record r (freed either way), with the output's bytes as its
 * output_hex beside the codec's fields when with_bytes: one writer for
 * the validation and the check records.  what names the record in an
 * error. */
static ev_status write_with_bytes(ev_rec_out *out, cJSON *r, const void *bytes, size_t len, int with_bytes,
                                  const char *what, ev_err *err)
{
    if (!r)
        return ev_err_set(err, EV_ENOMEM, "%s: out of memory", what);
    if (with_bytes) {
        char *hex = malloc(len * 2 + 1);
        ev_status rc = hex ? EV_OK : EV_ENOMEM;
        if (hex) {
            ev_hex_encode(bytes, len, hex);
            rc = ev_json_add_str(r, "output_hex", hex);
            free(hex);
        }
        if (rc) {
            cJSON_Delete(r);
            return ev_err_set(err, EV_ENOMEM, "%s: out of memory", what);
        }
    }
    return ev_rec_write(out, r, err);
}

ev_status ev_job_validation(ev_rec_out *out, const char *stage, const ev_validation *chk, const void *bytes,
                            size_t len, int with_bytes, char hash[65], ev_err *err)
{
    ev_status rc;

    if ((rc = ev_sha256_hex(bytes, len, hash)))
        return ev_err_set(err, rc, "validation: sha256 failed");
    ev_rec_row x = {
        .validation = {stage, chk->passed, chk->max_abs_err, chk->bound, chk->mismatches, hash, NULL, 0}};
    return write_with_bytes(out, ev_rec_encode(EV_REC_VALIDATION, &x), bytes, len, with_bytes, "validation",
                            err);
}

ev_status ev_job_sample_check(ev_rec_out *out, int64_t set, int64_t after, const ev_validation *v,
                              const void *bytes, size_t len, const char *same_as, char hash[65], ev_err *err)
{
    ev_status rc;

    if ((rc = ev_sha256_hex(bytes, len, hash)))
        return ev_err_set(err, rc, "check: sha256 failed");
    ev_rec_row x = {.check = {set, after, v->passed, v->max_abs_err, v->bound, v->mismatches, hash, NULL, 0}};
    /* no bytes where an earlier check of the set kept these */
    return write_with_bytes(out, ev_rec_encode(EV_REC_CHECK, &x), bytes, len,
                            !(v->passed && same_as && !strcmp(same_as, hash)), "check", err);
}

ev_status ev_job_opkept(ev_rec_out *out, ev_op_kept_row *k, const void *bytes, size_t len, char hash[65],
                        ev_err *err)
{
    ev_status rc;
    ev_rec_row x;

    if ((rc = ev_sha256_hex(bytes, len, hash)))
        return ev_err_set(err, rc, "kept output: sha256 failed");
    k->output_sha256 = hash;
    x.opkept = *k;
    return write_with_bytes(out, ev_rec_encode(EV_REC_OPKEPT, &x), bytes, len, 1, "kept output", err);
}

ev_status ev_job_plants_prepare(ev_job_plants *pl, const ev_protocol *p, const ev_shape *s,
                                const ev_oracle_row *expect, ev_err *err)
{
    if (getrandom(&pl->seed, sizeof pl->seed, 0) != (ssize_t)sizeof pl->seed)
        return ev_err_set(err, EV_EIO, "plants: getrandom: %s", strerror(errno));
    pl->want_n = 0;
    pl->want_tag = ev_plant_tag0(pl->seed);
    if (!(pl->rows = malloc((s->rows > 0 ? (size_t)s->rows : 1) * sizeof *pl->rows)))
        return ev_err_set(err, EV_ENOMEM, "plants: out of memory");
    return ev_plant_rows(s, p->sum_depth, p->sum_bound_factor, EV_PLANT_SITES, expect, pl->rows, err);
}

uint64_t ev_job_plants_want(ev_job_plants *pl, uint64_t n)
{
    if (n < pl->want_n) {
        pl->want_n = 0;
        pl->want_tag = ev_plant_tag0(pl->seed);
    }
    while (pl->want_n < n) {
        pl->want_n++;
        pl->want_tag = ev_plant_tag_step(pl->want_tag, pl->seed, pl->want_n, 0);
    }
    return pl->want_tag;
}

void ev_job_plants_json(cJSON *d, const ev_job_plants *pl)
{
    char seed[17];
    cJSON *o;
    if (!pl->on) {
        cJSON_AddNullToObject(d, "plants");
        return;
    }
    if (!(o = cJSON_AddObjectToObject(d, "plants")))
        return;
    snprintf(seed, sizeof seed, "%016llx", (unsigned long long)pl->seed);
    ev_json_add_str(o, "seed", seed);
    ev_json_add_i64(o, "variants", pl->cfg.variants);
    ev_json_add_i64(o, "rows", pl->cfg.m);
    ev_json_add_i64(o, "epochs", pl->cfg.epochs);
    ev_json_add_i64(o, "kept_op", pl->cfg.kept_op);
}

ev_status ev_job_kept(ev_rec_out *out, const ev_protocol *p, const char *arm, const ev_job_plants *pl,
                      const ev_shape *s, const void *input, const ev_oracle_row *expect,
                      const unsigned char *bytes, size_t len, uint64_t replay, int *stop, ev_err *err)
{
    ev_oracle_row *rows = malloc((s->rows > 0 ? (size_t)s->rows : 1) * sizeof *rows);
    ev_validation chk;
    char hash[65];
    ev_status rc;

    if (!rows)
        return ev_err_set(err, EV_ENOMEM, "kept output: out of memory");
    if (s->rows > 0)
        memcpy(rows, expect, (size_t)s->rows * sizeof *rows);
    ev_plant_oracle_rows(&pl->cfg, pl->rows, replay, s, input, rows);
    ev_output_check(p, s, input, rows, bytes, &chk);
    free(rows);
    {
        ev_op_kept_row k = {pl->cfg.kept_op,
                            (int64_t)replay,
                            chk.passed,
                            chk.max_abs_err,
                            chk.bound,
                            chk.mismatches,
                            "",
                            NULL,
                            0};
        if ((rc = ev_job_opkept(out, &k, bytes, len, hash, err)))
            return rc;
    }
    if (chk.passed)
        return EV_OK;
    fprintf(stderr,
            "%s: the output of op %lld in the last replay (%llu) of the last hot sample is wrong against its "
            "planted input: %lld mismatches, first in row %lld\n",
            arm, (long long)pl->cfg.kept_op, (unsigned long long)replay, (long long)chk.mismatches,
            (long long)chk.first_bad);
    *stop = 1;
    return ev_job_validation(out, "final", &chk, bytes, len, 0, hash, err);
}

/* The floor's nominal case (ev_job_floor_case): reduce_sum of one row of
 * 64 fp32, its input from the protocol's seed under this case key. */
#define FLOOR_CASE_KEY 0xf1002ee5u

ev_status ev_job_plants_file(const char *path, const ev_job_plants *pl, const ev_shape *s, int64_t ops,
                             int64_t budget, ev_err *err)
{
    struct {
        char magic[8];
        uint64_t seed;
        int64_t op, dtype, rows, cols, stride, ops, budget;
    } h;
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    FILE *f = fopen(path, "wb");
    int bad;
    if (!f)
        return ev_err_set(err, EV_EIO, "cannot create the plants file %s: %s", name, strerror(errno));
    memset(&h, 0, sizeof h);
    memcpy(h.magic, "EVPLANT1", 8);
    h.seed = pl->seed;
    h.op = (int64_t)s->op;
    h.dtype = (int64_t)s->dtype;
    h.rows = s->rows;
    h.cols = s->cols;
    h.stride = s->stride;
    h.ops = ops;
    h.budget = budget;
    bad = fwrite(&h, sizeof h, 1, f) != 1;
    bad |= s->rows > 0 && fwrite(pl->rows, sizeof *pl->rows, (size_t)s->rows, f) != (size_t)s->rows;
    bad |= fclose(f) != 0;
    return bad ? ev_err_set(err, EV_EIO, "cannot write the plants file %s", name) : EV_OK;
}

ev_proto_case ev_job_floor_case(void)
{
    ev_proto_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.op, sizeof c.op, "%s", ev_op_name(EV_OP_SUM));
    snprintf(c.dtype, sizeof c.dtype, "%s", ev_dtype_name(EV_DTYPE_FP32));
    c.rows = 1;
    c.cols = 64;
    c.stride = 64;
    c.default_rows = 1;
    return c;
}

ev_status ev_job_floor_input(const ev_protocol *p, ev_shape *shape, void **buf, size_t *len, ev_err *err)
{
    ev_proto_case c = ev_job_floor_case();
    ev_shape s;
    size_t n;
    void *b;
    ev_status rc;

    if ((rc = ev_case_shape(&c, &s, err)))
        return rc;
    n = (size_t)(s.rows * s.stride) * ev_dtype_size(s.dtype);
    if (!(b = malloc(n)))
        return ev_err_set(err, EV_ENOMEM, "floor input: out of memory");
    if ((rc = ev_inputs_fill(&s, (uint64_t)p->seed, FLOOR_CASE_KEY, b, n, err))) {
        free(b);
        return rc;
    }
    *shape = s;
    *buf = b;
    *len = n;
    return EV_OK;
}

ev_status ev_job_input(const ev_protocol *p, int64_t case_index, ev_shape *shape, void **buf, size_t *len,
                       ev_err *err)
{
    ev_shape s;
    size_t es, n = 0;
    void *b;
    ev_status rc;

    if (case_index < 0 || (size_t)case_index >= p->n_cases)
        return ev_err_set(err, EV_EINVAL, "case %lld is not in the protocol", (long long)case_index);
    if ((rc = ev_case_shape(&p->cases[case_index], &s, err)))
        return rc;
    es = ev_dtype_size(s.dtype);
    if (s.rows > 0 && (ev_size_mul((size_t)(s.rows - 1), (size_t)s.stride, &n) ||
                       ev_size_add(n, (size_t)s.cols, &n) || ev_size_mul(n, es, &n)))
        return ev_err_set(err, EV_ERANGE, "case %lld: input size overflows", (long long)case_index);
    b = malloc(n ? n : 1);
    if (!b)
        return ev_err_set(err, EV_ENOMEM, "input: cannot allocate %zu bytes", n);
    if ((rc = ev_inputs_fill(&s, (uint64_t)p->seed, (uint64_t)case_index, b, n, err))) {
        free(b);
        return rc;
    }
    *shape = s;
    *buf = b;
    *len = n;
    return EV_OK;
}

ev_status ev_job_expect(const ev_shape *s, const void *in, ev_oracle_row **rows, ev_err *err)
{
    ev_oracle_row *r = malloc((s->rows > 0 ? (size_t)s->rows : 1) * sizeof *r);
    ev_status rc;

    *rows = NULL;
    if (!r)
        return ev_err_set(err, EV_ENOMEM, "oracle: out of memory");
    if ((rc = ev_oracle_rows(s, in, r, err))) {
        free(r);
        return rc;
    }
    *rows = r;
    return EV_OK;
}

/* The 1-minute load average (getloadavg), or 0 when it cannot be read. */
static double load_now(void)
{
    double l[1];
    return getloadavg(l, 1) == 1 && l[0] >= 0 ? l[0] : 0;
}

void ev_job_host_open(const char *backend, int realtime, ev_rule_host *h)
{
    ev_buf rt = EV_BUF_INIT;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);

    memset(h, 0, sizeof *h);
    h->known = 1;
    h->cpus = cpus > 0 ? cpus : 1;
    h->load_start = h->load_end = load_now();
    if (strcmp(backend, "cpu")) {
        snprintf(h->refused, sizeof h->refused,
                 "not asked: the %s backend times the device, not the host's CPUs", backend);
        return;
    }
    if (!realtime) {
        snprintf(h->refused, sizeof h->refused, "%s", EV_RULE_NOT_DECLARED);
        return;
    }
    if (ev_read_file("/proc/sys/kernel/sched_rt_runtime_us", &rt, NULL) || !rt.len) {
        snprintf(h->refused, sizeof h->refused,
                 "not asked: kernel.sched_rt_runtime_us cannot be read (real-time throttling unknown)");
    } else if (!strncmp(rt.data, "-1", 2)) {
        snprintf(h->refused, sizeof h->refused,
                 "not asked: kernel.sched_rt_runtime_us is -1 (no real-time throttling: a spinning kernel "
                 "could take a CPU for good)");
    } else {
        struct sched_param sp = {.sched_priority = EV_RULE_FIFO_PRIORITY};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0) {
            h->fifo = 1;
            h->priority = EV_RULE_FIFO_PRIORITY;
        } else {
            snprintf(h->refused, sizeof h->refused, "sched_setscheduler(SCHED_FIFO): %s", strerror(errno));
        }
    }
    ev_buf_free(&rt);
}

void ev_job_host_end(ev_rule_host *h)
{
    h->load_end = load_now();
}

void ev_job_host_json(cJSON *r, const ev_rule_host *h)
{
    cJSON *o = cJSON_AddObjectToObject(r, "host");
    if (!o)
        return;
    ev_json_add_str(o, "scheduler", h->fifo ? "fifo" : "other");
    ev_json_add_i64(o, "priority", h->priority);
    if (h->fifo)
        cJSON_AddNullToObject(o, "refused");
    else
        ev_json_add_str(o, "refused", h->refused);
    ev_json_add_double(o, "load_start", h->load_start);
    ev_json_add_double(o, "load_end", h->load_end);
    ev_json_add_i64(o, "cpus", h->cpus);
}
