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
    ev_json_add_str(o, "policy", h->fifo ? "fifo" : "other");
    ev_json_add_i64(o, "priority", h->priority);
    if (h->fifo)
        cJSON_AddNullToObject(o, "refused");
    else
        ev_json_add_str(o, "refused", h->refused);
    ev_json_add_double(o, "load_start", h->load_start);
    ev_json_add_double(o, "load_end", h->load_end);
    ev_json_add_i64(o, "cpus", h->cpus);
}
