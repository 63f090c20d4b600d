/*
 * backend_cpu.c: the cpu backend (backend.h).  A "graph" is a batch of
 * ops calls of the reduction timed on CLOCK_MONOTONIC; cold launches follow
 * a flush of flush_cache_multiple x the last-level cache (capped by the
 * protocol); floor is an empty call through a function pointer; ceiling a
 * streaming read of ceiling_cache_multiple x LLC (capped by the protocol).
 * cub is a CUDA library: bind refuses it with EV_EUNSUPPORTED and its
 * reason, which the worker records as a skip.
 *
 * TEMPORARY: the row reduction runs on the calling thread through
 * src/runner/kref.h (one worker thread, S = 1) until the kernels module's
 * thread pool and schedules (kernels/reduce_cpu.h) are on main.
 */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kref.h"

typedef struct cpu_impl {
    ev_backend_config cfg;
    int64_t threads, cache_bytes, flush_bytes;
    ev_arm_kind kind;
    ev_proto_case c;
    int64_t b, tasks; /* rows per task, tasks per call */
    char entry[96];
    void *in, *out;
    size_t out_len;
    unsigned char *flush, *ceil;
    size_t ceil_len;
    int64_t ops; /* calls per batch (capture) */
} cpu_impl;

static volatile uint64_t sink; /* keeps the ceiling read and flush alive */

/* Monotonic time in ns. */
static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The last-level cache size in bytes (L3, else L2, else 32 MiB). */
static int64_t llc_bytes(void)
{
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v <= 0)
        v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? (int64_t)v : (INT64_C(32) << 20);
}

/* k x cache, capped by max (0: no cap). */
static int64_t sized(int64_t k, int64_t cache, int64_t max)
{
    int64_t v = k * cache;
    return max && v > max ? max : v;
}

static ev_status cpu_open(const ev_backend_config *cfg, void **impl, ev_err *err)
{
    cpu_impl *c = calloc(1, sizeof *c);

    if (!c)
        return ev_err_set(err, EV_ENOMEM, "cpu backend: out of memory");
    c->cfg = *cfg;
    c->threads = 1; /* TEMPORARY: single-threaded until kernels/reduce_cpu.h */
    c->cache_bytes = llc_bytes();
    c->flush_bytes = sized(cfg->ref.flush_cache_multiple, c->cache_bytes, cfg->ref.flush_max_bytes);
    *impl = c;
    return EV_OK;
}

static void cpu_close(void *impl)
{
    cpu_impl *c = impl;
    if (!c)
        return;
    free(c->in);
    free(c->out);
    free(c->flush);
    free(c->ceil);
    free(c);
}

/* Copies the "model name" of /proc/cpuinfo into out[cap] ("" if absent). */
static void cpu_model(char *out, size_t cap)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];

    out[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10)) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ' || *p == '\t')
                    p++;
                p[strcspn(p, "\n")] = '\0';
                snprintf(out, cap, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

static ev_status cpu_info(void *impl, ev_device_info *out, ev_err *err)
{
    cpu_impl *c = impl;
    ev_device_info d;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

    (void)err;
    memset(&d, 0, sizeof d);
    snprintf(d.backend, sizeof d.backend, "cpu");
    cpu_model(d.name, sizeof d.name);
    d.sms = c->threads;
    d.cache_bytes = c->cache_bytes;
    d.flush_bytes = c->flush_bytes;
    d.memory_bytes = pages > 0 && psz > 0 ? (int64_t)pages * psz : -1;
    d.clock_mhz = -1;
    d.memory_clock_mhz = -1;
    *out = d;
    return EV_OK;
}

/* Largest power of two dividing the address, capped at 256. */
static int64_t align_of(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    int64_t al = 1;
    while (al < 256 && !(a & (uintptr_t)al))
        al <<= 1;
    return al;
}

static ev_status cpu_bind(void *impl, const ev_backend_job *job, ev_backend_binding *out, ev_err *err)
{
    cpu_impl *c = impl;
    ev_backend_binding b;
    size_t es;

    memset(&b, 0, sizeof b);
    c->kind = job->kind;
    b.threads = c->threads;
    if (job->kind == EV_ARM_CUB)
        return ev_err_set(
            err, EV_EUNSUPPORTED,
            "cub (cub::DeviceSegmentedReduce) is a CUDA library: the cpu backend cannot run it");
    if (job->kind == EV_ARM_TORCH)
        return ev_err_set(err, EV_EUNSUPPORTED, "torch-compile is not a backend arm");
    if (job->kind == EV_ARM_FLOOR) {
        snprintf(c->entry, sizeof c->entry, "floor_empty_call");
        *out = b;
        return EV_OK;
    }
    if (job->kind == EV_ARM_CEILING) {
        c->ceil_len = (size_t)job->ceiling_bytes;
        c->ceil = malloc(c->ceil_len);
        if (!c->ceil)
            return ev_err_set(err, EV_ENOMEM, "ceiling: cannot allocate %zu bytes", c->ceil_len);
        memset(c->ceil, 0x5A, c->ceil_len);
        snprintf(c->entry, sizeof c->entry, "ceiling_stream_read");
        b.in_span = (int64_t)c->ceil_len;
        b.in_align = align_of(c->ceil);
        *out = b;
        return EV_OK;
    }
    c->c = job->c;
    if (c->c.cols < 1)
        return ev_err_set(err, EV_EINVAL, "binding refused: N = 0");
    if (c->c.stride < c->c.cols)
        return ev_err_set(err, EV_EINVAL, "binding refused: stride %lld < N %lld", (long long)c->c.stride,
                          (long long)c->c.cols);
    es = ev_kref_dtype_size(c->c.dtype);
    c->b = job->rows_per_program > 0 ? job->rows_per_program : c->c.default_rows;
    if (job->kind == EV_ARM_AUTO) {
        ev_decision d;
        c->b = c->c.default_rows;
        if (job->coef) {
            ev_status rc = ev_model_decide(job->coef, c->c.rows, c->c.cols, c->c.default_rows, c->threads,
                                           job->threshold, &d);
            if (rc)
                return ev_err_set(err, rc, "selector: decision failed");
            c->b = d.rows_per_program;
        }
    }
    c->tasks = c->c.rows ? (c->c.rows + c->b - 1) / c->b : 0;
    snprintf(c->entry, sizeof c->entry, "%s_%s_rows%lld", c->c.op, c->c.dtype, (long long)c->b);
    c->in = malloc(job->input_len ? job->input_len : 1);
    c->out_len = (size_t)c->c.rows * es;
    c->out = malloc(c->out_len ? c->out_len : 1);
    if (!c->in || !c->out)
        return ev_err_set(err, EV_ENOMEM, "binding: out of memory");
    if (job->input_len)
        memcpy(c->in, job->input, job->input_len);
    b.in_span = (int64_t)job->input_len;
    b.out_span = (int64_t)c->out_len;
    b.in_align = align_of(c->in);
    b.out_align = align_of(c->out);
    b.out_len = c->out_len;
    *out = b;
    return EV_OK;
}

static ev_status cpu_poison(void *impl, ev_err *err)
{
    cpu_impl *c = impl;
    (void)err;
    if (c->out_len)
        memset(c->out, 0xFF, c->out_len);
    return EV_OK;
}

/* The empty call of the floor arm (through a volatile pointer: not inlined). */
static void empty_call(void)
{
}
static void (*volatile floor_fn)(void) = empty_call;

/* One call of the bound arm. */
static void call_once(cpu_impl *c)
{
    if (c->kind == EV_ARM_FLOOR) {
        floor_fn();
    } else if (c->kind == EV_ARM_CEILING) {
        const uint64_t *w = (const uint64_t *)(const void *)c->ceil;
        uint64_t s = 0;
        for (size_t i = 0; i < c->ceil_len / 8; i++)
            s += w[i];
        sink = s;
    } else {
        for (int64_t t = 0; t < c->tasks; t++) {
            int64_t r0 = t * c->b, r1 = r0 + c->b < c->c.rows ? r0 + c->b : c->c.rows;
            ev_kref_reduce_rows(&c->c, c->in, c->out, r0, r1);
        }
    }
}

static ev_status cpu_launch(void *impl, ev_err *err)
{
    (void)err;
    call_once(impl);
    return EV_OK;
}

static ev_status cpu_read_output(void *impl, void *dst, size_t len, ev_err *err)
{
    cpu_impl *c = impl;
    if (len > c->out_len)
        return ev_err_set(err, EV_EINVAL, "read_output: %zu bytes asked, %zu bound", len, c->out_len);
    memcpy(dst, c->out, len);
    return EV_OK;
}

static ev_status cpu_cold_launch(void *impl, double *ms, ev_err *err)
{
    cpu_impl *c = impl;
    size_t n = (size_t)c->flush_bytes;
    uint64_t s = 0;
    int64_t t0;

    if (!c->flush) {
        c->flush = malloc(n);
        if (!c->flush)
            return ev_err_set(err, EV_ENOMEM, "flush buffer: cannot allocate %zu bytes", n);
    }
    for (size_t i = 0; i < n; i += 64) {
        c->flush[i] = (unsigned char)(c->flush[i] + 1);
        s += c->flush[i];
    }
    sink = s;
    t0 = now_ns();
    call_once(c);
    *ms = (double)(now_ns() - t0) / 1e6;
    return EV_OK;
}

static ev_status cpu_capture(void *impl, int64_t ops, ev_node_receipt **nodes, size_t *n_nodes, ev_err *err)
{
    cpu_impl *c = impl;
    ev_node_receipt *r = calloc(1, sizeof *r);

    if (!r)
        return ev_err_set(err, EV_ENOMEM, "capture: out of memory");
    c->ops = ops;
    snprintf(r->function, sizeof r->function, "%s", c->entry);
    r->grid[0] = c->kind == EV_ARM_NATIVE || c->kind == EV_ARM_AUTO || c->kind == EV_ARM_FAULT ? c->tasks : 1;
    r->grid[1] = r->grid[2] = 1;
    r->block[0] = c->kind == EV_ARM_NATIVE || c->kind == EV_ARM_AUTO || c->kind == EV_ARM_FAULT ? c->b : 1;
    r->block[1] = c->threads;
    r->block[2] = 1;
    *nodes = r;
    *n_nodes = 1;
    return EV_OK;
}

static ev_status cpu_replay(void *impl, int64_t k, double *ms, ev_err *err)
{
    cpu_impl *c = impl;
    int64_t t0, t1;

    if (c->ops < 1)
        return ev_err_set(err, EV_EINVAL, "replay before capture");
    t0 = now_ns();
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < c->ops; j++)
            call_once(c);
    t1 = now_ns();
    *ms = (double)(t1 - t0) / 1e6;
    return EV_OK;
}

static ev_status cpu_sm_clock(void *impl, int64_t *mhz, ev_err *err)
{
    (void)impl;
    (void)mhz;
    return ev_err_set(err, EV_EUNSUPPORTED, "no SM clock on the cpu backend");
}

const ev_backend_ops ev_backend_cpu_ops = {
    "cpu",      cpu_open,        cpu_close,       cpu_info,    cpu_bind,   cpu_poison,
    cpu_launch, cpu_read_output, cpu_cold_launch, cpu_capture, cpu_replay, cpu_sm_clock,
};
