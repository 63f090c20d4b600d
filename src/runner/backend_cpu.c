/*
 * backend_cpu.c: the cpu backend (backend.h) on the kernels module's host
 * reductions (kernels/reduce_cpu.h).  One persistent thread pool per
 * process (S = its thread count: host_threads, or one per CPU of the
 * affinity); a "graph" is a batch of ops calls timed on CLOCK_MONOTONIC;
 * cold launches follow a flush of flush_cache_multiple x the last-level
 * cache (capped by the protocol); floor is one batch of empty tasks through
 * the pool; ceiling a streaming read of ceiling_cache_multiple x LLC
 * (capped) split over the pool.  The schedule is ev_backend_schedule's
 * (the selector's plan for EV_SEL_CPU) and the receipt is that plan:
 * entry "<op>_<dtype>_<schedule>", grid = (tasks, 1, 1), block = (rows per
 * task, 1, 1).  cub is a CUDA library: bind refuses it with
 * EV_EUNSUPPORTED and its reason, which the worker records as a skip.  An
 * external kernel (ext_kernel.h) is its shared object's entry, run in a
 * process of its own, the kernel host (khost.h), once per op (receipt: the
 * entry, grid and block 1): its inputs and outputs are the only memory
 * the two share, a batch is one request of ops calls timed around the
 * handshake, inputs are read-only to it between inaccessible guard pages,
 * and each output lies between two guard regions checked at every
 * read_output.  A job
 * bound with a second input set (backend.h) holds two inputs and two
 * outputs; a batch's calls alternate between them (ev_backend_op_set).
 */
#include "backend.h"
#include "validate.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "evident_kernel.h"
#include "khost.h"
#include "reduce_cpu.h"

/* Threads of the process remembered at bind (late work). */
#define BIND_THREADS 256

/* The most ops a batch has (protocol.c's bound on ops_per_graph and
 * ceiling_ops_per_graph): the kernel host's call list holds one launch and
 * one batch. */
#define EV_CPU_MAX_OPS 100000

/* Bytes of guard on each side of an external kernel's output. */
#define EXT_GUARD  4096
#define GUARD_BYTE 0xA5

typedef struct cpu_impl {
    ev_backend_config cfg;
    ev_cpu_pool *pool;
    int64_t threads, cache_bytes, flush_bytes;
    ev_arm_kind kind;
    int sets;            /* input sets bound: 1, or 2 (backend.h) */
    ev_binding b[2];     /* the checked binding of each set (reduction arms) */
    ev_launch_plan plan; /* the selector's plan: the receipt */
    ev_cpu_receipt run;  /* the same partition, as the pool runs it */
    void *in[2], *out[2];
    size_t out_len;
    unsigned char *flush, *ceil;
    size_t ceil_len, flush_mapped, ceil_mapped;
    int64_t ops;                            /* calls per batch (capture) */
    int64_t bind_threads[BIND_THREADS];     /* the process's thread ids when bound (late work) */
    int64_t n_bind_threads;                 /* how many (-1: unknown, or more than the array holds) */
    ev_khost *host;                         /* EXTERNAL: the kernel's own process (khost.h) */
    unsigned char *ext_base[2];             /* EXTERNAL: guard + output + guard, a set each (shared) */
    uint64_t ext_in_off[2], ext_out_off[2]; /* EXTERNAL: where they lie in the shared data */
} cpu_impl;

static volatile uint64_t sink; /* keeps the ceiling read and flush alive */

/* Monotonic time in ns. */
static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* k x cache, capped by max (0: no cap). */
static int64_t sized(int64_t k, int64_t cache, int64_t max)
{
    int64_t v = k * cache;
    return max && v > max ? max : v;
}

/* Worker threads: host_threads, else the CPUs of this process's affinity
 * (1 when unknown), at most 1024. */
static int64_t pool_threads(int64_t host_threads)
{
    cpu_set_t set;
    int64_t n = host_threads;

    if (n <= 0)
        n = sched_getaffinity(0, sizeof set, &set) ? 1 : CPU_COUNT(&set);
    if (n < 1)
        n = 1;
    return n > 1024 ? 1024 : n;
}

static ev_status cpu_open(const ev_backend_config *cfg, void **impl, ev_err *err)
{
    cpu_impl *c = calloc(1, sizeof *c);
    ev_status rc;

    if (!c)
        return ev_err_set(err, EV_ENOMEM, "cpu backend: out of memory");
    c->cfg = *cfg;
    c->threads = pool_threads(cfg->host_threads);
    c->cache_bytes = (int64_t)ev_cpu_llc_bytes();
    c->flush_bytes = sized(cfg->ref.flush_cache_multiple, c->cache_bytes, cfg->ref.flush_max_bytes);
    if ((rc = ev_cpu_pool_new((int)c->threads, &c->pool, err))) {
        free(c);
        return rc;
    }
    *impl = c;
    return EV_OK;
}

#define HUGE_PAGE ((size_t)2 << 20)

/*
 * n bytes (n > 0) of zeroed memory, 2 MiB aligned, advised for transparent
 * huge pages and touched once per 4 KiB page before it is returned.  The
 * flush and ceiling buffers are the biggest a job touches (up to the
 * protocol's caps): on the virtual machines measured, 4 KiB pages made the
 * first pass over 256 MiB cost about 0.5 s (a fault per page, then a TLB
 * miss per page); huge pages cost about 20 ms (docs/runner.md, "Overhead").
 * Where THP is off the advice is ignored and the touch still populates.
 * *mapped gets the length to pass to unmap.  NULL on failure.
 */
static unsigned char *map_touched(size_t n, size_t *mapped)
{
    size_t len = n + HUGE_PAGE;
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;

    if (p == MAP_FAILED)
        return NULL;
    a = p + ((HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE);
    if (a != p)
        munmap(p, (size_t)(a - p)); /* the unaligned head */
    len -= (size_t)(a - p);
    madvise(a, len, MADV_HUGEPAGE);
    for (size_t i = 0; i < n; i += 4096)
        a[i] = 0;
    *mapped = len;
    return a;
}

/* Unmaps what map_touched returned; NULL-safe. */
static void unmap(void *p, size_t mapped)
{
    if (p)
        munmap(p, mapped);
}

/* The ids of the process's threads now (entries of /proc/self/task) into
 * ids[cap]; returns how many there are (more than cap are counted, not
 * kept), or -1 when it cannot say. */
static int64_t thread_ids(int64_t *ids, size_t cap)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int64_t n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long long id = strtoll(e->d_name, &end, 10);
        if (e->d_name[0] == '.' || *end)
            continue;
        if ((size_t)n < cap)
            ids[n] = id;
        n++;
    }
    closedir(d);
    return n;
}

/* 1 when a thread runs now that did not at bind (a kernel's thread: late
 * work), 0 when none does or the threads cannot be read.  By id, not by
 * count: a runtime's own thread that ends after bind must not hide one. */
static int thread_left(const cpu_impl *c)
{
    int64_t now[BIND_THREADS];
    int64_t n = thread_ids(now, BIND_THREADS);
    if (c->n_bind_threads < 0 || n < 0)
        return 0;
    if (n > BIND_THREADS) /* more than bind's at most BIND_THREADS: one is new */
        return 1;
    for (int64_t i = 0; i < n; i++) {
        int known = 0;
        for (int64_t j = 0; j < c->n_bind_threads && !known; j++)
            known = now[i] == c->bind_threads[j];
        if (!known)
            return 1;
    }
    return 0;
}

static void cpu_close(void *impl)
{
    cpu_impl *c = impl;
    if (!c)
        return;
    ev_cpu_pool_free(c->pool);
    if (c->host) {
        ev_khost_stop(c->host); /* the buffers were the shared memory's */
    } else {
        for (int k = 0; k < 2; k++) {
            free(c->in[k]);
            free(c->out[k]);
        }
    }
    unmap(c->flush, c->flush_mapped);
    unmap(c->ceil, c->ceil_mapped);
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

/* malloc of n bytes (at least 1) aligned to 256 bytes.  NULL on failure. */
static void *alloc256(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, 256, n ? n : 1) ? NULL : p;
}

#define PAGE ((size_t)4096)

/* n bytes rounded up to whole pages (at least one). */
static size_t in_pages(size_t n)
{
    return n ? (n + PAGE - 1) / PAGE * PAGE : PAGE;
}

/*
 * Starts the kernel host of an external job (khost.h) and lays its shared
 * data out, per input set k: an inaccessible guard page, the input
 * (read-only to the kernel), another guard page, then the output between
 * its two guard regions of EXT_GUARD bytes (read-write), and after the
 * last set a guard page.  c->in, c->out and c->ext_base point into the
 * shared memory; the call list has room for one launch and a batch of up
 * to EV_CPU_MAX_OPS ops.
 */
static ev_status ext_host_start(cpu_impl *c, const ev_backend_job *job, ev_err *err)
{
    ev_khost_region r[EV_KHOST_MAX_REGIONS];
    size_t nr = 0, off = 0, in_len = in_pages(job->input_len),
           out_area = in_pages(c->out_len + 2 * EXT_GUARD);
    ev_status rc;

    for (int k = 0; k < c->sets; k++) {
        r[nr] = (ev_khost_region){off, PAGE, PROT_NONE, ""};
        snprintf(r[nr++].name, sizeof r[0].name, "the guard page before input set %d", k);
        off += PAGE;
        c->ext_in_off[k] = off;
        r[nr] = (ev_khost_region){off, in_len, PROT_READ, ""};
        snprintf(r[nr++].name, sizeof r[0].name, "input set %d", k);
        off += in_len;
        r[nr] = (ev_khost_region){off, PAGE, PROT_NONE, ""};
        snprintf(r[nr++].name, sizeof r[0].name, "the guard page after input set %d", k);
        off += PAGE;
        c->ext_out_off[k] = off + EXT_GUARD;
        r[nr] = (ev_khost_region){off, out_area, PROT_READ | PROT_WRITE, ""};
        snprintf(r[nr++].name, sizeof r[0].name, "output set %d and its guard bytes", k);
        off += out_area;
    }
    r[nr] = (ev_khost_region){off, PAGE, PROT_NONE, ""};
    snprintf(r[nr++].name, sizeof r[0].name, "the guard page after output set %d", c->sets - 1);
    off += PAGE;
    if ((rc = ev_khost_start(job->arm, job->ext_lib, job->ext_entry, 1 + EV_CPU_MAX_OPS, off, r, nr,
                             (int)c->cfg.own_cpus, &c->host, err)))
        return rc;
    for (int k = 0; k < c->sets; k++) {
        unsigned char *d = ev_khost_data(c->host);
        c->in[k] = d + c->ext_in_off[k];
        c->ext_base[k] = d + c->ext_out_off[k] - EXT_GUARD;
        c->out[k] = d + c->ext_out_off[k];
        /* the output between guards: a write outside it is seen at read_output */
        memset(c->ext_base[k], GUARD_BYTE, c->out_len + 2 * EXT_GUARD);
    }
    return EV_OK;
}

static ev_status cpu_bind(void *impl, const ev_backend_job *job, ev_backend_binding *out, ev_err *err)
{
    cpu_impl *c = impl;
    ev_backend_binding b;
    ev_status rc;

    memset(&b, 0, sizeof b);
    c->kind = job->kind;
    c->n_bind_threads = thread_ids(c->bind_threads, BIND_THREADS);
    if (c->n_bind_threads > BIND_THREADS)
        c->n_bind_threads = -1;
    b.threads = c->threads;
    if (job->kind == EV_ARM_CUB)
        return ev_err_set(
            err, EV_EUNSUPPORTED,
            "cub (cub::DeviceSegmentedReduce) is a CUDA library: the cpu backend cannot run it");
    if (job->kind == EV_ARM_TORCH)
        return ev_err_set(err, EV_EUNSUPPORTED, "torch-compile is not a backend arm");
    if (job->kind == EV_ARM_FLOOR) {
        snprintf(c->plan.entry, sizeof c->plan.entry, "floor_empty_tasks");
        *out = b;
        return EV_OK;
    }
    if (job->kind == EV_ARM_CEILING) {
        c->ceil_len = (size_t)job->ceiling_bytes & ~(size_t)7;
        c->ceil = c->ceil_len ? map_touched(c->ceil_len, &c->ceil_mapped) : NULL;
        if (!c->ceil)
            return ev_err_set(err, EV_ENOMEM, "ceiling: cannot allocate %zu bytes", c->ceil_len);
        /* zeros (map_touched wrote every page): the content of a read does not matter */
        snprintf(c->plan.entry, sizeof c->plan.entry, "ceiling_stream_read");
        b.in_span = (int64_t)c->ceil_len;
        b.in_align = ev_binding_align(c->ceil);
        *out = b;
        return EV_OK;
    }
    if ((rc = ev_case_shape(&job->c, &c->b[0].shape, err)))
        return rc;
    c->out_len = c->b[0].shape.rows > 0 ? (size_t)c->b[0].shape.rows * ev_dtype_size(c->b[0].shape.dtype) : 0;
    c->sets = job->input2 ? 2 : 1;
    if (job->kind == EV_ARM_EXTERNAL) {
        if (!job->ext_entry)
            return ev_err_set(err, EV_EUNSUPPORTED, "%s declares no entry for %s/%s", job->arm, job->c.op,
                              job->c.dtype);
        if (!job->ext_lib) /* (a build that failed ended the job before bind: worker.c) */
            return ev_err_set(err, EV_EUNSUPPORTED, "%s declares no cpu source", job->arm);
        if ((rc = ext_host_start(c, job, err)))
            return rc;
    }
    for (int k = 0; k < c->sets; k++) {
        if (job->kind != EV_ARM_EXTERNAL) {
            c->in[k] = alloc256(job->input_len);
            c->out[k] = alloc256(c->out_len);
        }
        if (!c->in[k] || !c->out[k])
            return ev_err_set(err, EV_ENOMEM, "binding: out of memory");
        if (job->input_len)
            memcpy(c->in[k], k ? job->input2 : job->input, job->input_len);
        if ((rc = ev_binding_make(&c->b[k], &c->b[0].shape, c->in[k], job->input_len, c->out[k], c->out_len,
                                  err)))
            return rc;
    }
    if (job->kind == EV_ARM_EXTERNAL) {
        ev_khost_call one = {c->ext_in_off[0], c->ext_out_off[0]};
        snprintf(c->plan.entry, sizeof c->plan.entry, "%s", job->ext_entry);
        for (int d = 0; d < 3; d++)
            c->plan.grid[d] = c->plan.block[d] = 1;
        b.threads = 1;
        /* call 0: one launch on set 0 (launch, cold_launch); the batch from 1 (capture) */
        ev_khost_calls(c->host, 0, &one, 1, c->b[0].shape.rows, c->b[0].shape.cols, c->b[0].shape.stride);
    } else if ((rc = ev_backend_schedule(job, &c->b[0].shape, EV_SEL_CPU, c->threads, &c->plan, err)) ||
               (rc = ev_reduce_cpu_plan(&c->b[0].shape, ev_sched_name(c->plan.sched),
                                        c->plan.rows_per_program, c->threads, &c->run, err)))
        return rc;
    b.in_span = (int64_t)c->b[0].in_span;
    b.out_span = (int64_t)c->b[0].out_span;
    b.in_align = c->b[0].in_align;
    b.out_align = c->b[0].out_align;
    b.out_len = c->out_len;
    *out = b;
    return EV_OK;
}

static ev_status cpu_poison(void *impl, int byte, ev_err *err)
{
    cpu_impl *c = impl;
    (void)err;
    for (int k = 0; k < c->sets && c->out_len; k++)
        memset(c->out[k], byte, c->out_len);
    return EV_OK;
}

/* One call of the bound arm on input set k.  EV_EINVAL when the plan does
 * not fit the pool. */
static ev_status call_once(cpu_impl *c, int k, ev_err *err)
{
    if (c->kind == EV_ARM_FLOOR) {
        ev_cpu_floor(c->pool);
        return EV_OK;
    }
    if (c->kind == EV_ARM_CEILING) {
        sink = ev_cpu_stream_read(c->pool, c->ceil, c->ceil_len);
        return EV_OK;
    }
    if (c->kind == EV_ARM_EXTERNAL) /* set 0's launch, in the kernel's process */
        return k ? ev_err_set(err, EV_EINVAL, "external kernel: a single launch runs set 0")
                 : ev_khost_run(c->host, 0, 1, err);
    return ev_reduce_cpu_run(c->pool, &c->b[k], &c->run, err);
}

static ev_status cpu_launch(void *impl, ev_err *err)
{
    return call_once(impl, 0, err);
}

static ev_status cpu_read_output(void *impl, int set, void *dst, size_t len, ev_err *err)
{
    cpu_impl *c = impl;
    const unsigned char *g;
    if (set < 0 || set >= (c->sets ? c->sets : 1))
        return ev_err_set(err, EV_EINVAL, "read_output: input set %d of %d", set, c->sets);
    if (len > c->out_len)
        return ev_err_set(err, EV_EINVAL, "read_output: %zu bytes asked, %zu bound", len, c->out_len);
    if ((g = c->ext_base[set]) != NULL)
        for (size_t i = 0; i < EXT_GUARD; i++) {
            if (g[EXT_GUARD - 1 - i] != GUARD_BYTE)
                return ev_err_set(err, EV_EVERIFY,
                                  "external kernel %s wrote outside its output: %zu byte(s) before out[0]",
                                  c->plan.entry, i + 1);
            if (g[EXT_GUARD + c->out_len + i] != GUARD_BYTE)
                return ev_err_set(
                    err, EV_EVERIFY,
                    "external kernel %s wrote outside its output: %zu byte(s) past out[rows - 1]",
                    c->plan.entry, i + 1);
        }
    if (len)
        memcpy(dst, c->out[set], len);
    return EV_OK;
}

static ev_status cpu_cold_launch(void *impl, double *ms, ev_err *err)
{
    cpu_impl *c = impl;
    size_t n = (size_t)c->flush_bytes;
    uint64_t s = 0;
    int64_t t0;
    ev_status rc;

    if (!c->flush && n) {
        c->flush = map_touched(n, &c->flush_mapped);
        if (!c->flush)
            return ev_err_set(err, EV_ENOMEM, "flush buffer: cannot allocate %zu bytes", n);
    }
    for (size_t i = 0; i < n; i += 64) {
        c->flush[i] = (unsigned char)(c->flush[i] + 1);
        s += c->flush[i];
    }
    sink = s;
    t0 = now_ns();
    if ((rc = call_once(c, 0, err)))
        return rc;
    *ms = (double)(now_ns() - t0) / 1e6;
    return EV_OK;
}

static ev_status cpu_capture(void *impl, int64_t ops, ev_node_receipt **nodes, size_t *n_nodes, ev_err *err)
{
    cpu_impl *c = impl;
    ev_node_receipt *r = calloc(1, sizeof *r);

    if (!r)
        return ev_err_set(err, EV_ENOMEM, "capture: out of memory");
    if (c->kind == EV_ARM_EXTERNAL) {
        /* the batch: calls 1..ops of the kernel's list, op i on its set */
        ev_khost_call *calls = ops > 0 && ops <= EV_CPU_MAX_OPS ? malloc((size_t)ops * sizeof *calls) : NULL;
        if (!calls) {
            free(r);
            return ev_err_set(err, EV_EINVAL, "capture: %lld ops (at most %d)", (long long)ops,
                              EV_CPU_MAX_OPS);
        }
        for (int64_t i = 0; i < ops; i++) {
            int k = ev_backend_op_set(ops, i, c->sets);
            calls[i] = (ev_khost_call){c->ext_in_off[k], c->ext_out_off[k]};
        }
        ev_khost_calls(c->host, 1, calls, (size_t)ops, c->b[0].shape.rows, c->b[0].shape.cols,
                       c->b[0].shape.stride);
        free(calls);
    }
    c->ops = ops;
    snprintf(r->function, sizeof r->function, "%s", c->plan.entry);
    if (c->kind == EV_ARM_FLOOR || c->kind == EV_ARM_CEILING) {
        r->grid[0] = c->threads; /* one task per pool thread */
        r->grid[1] = r->grid[2] = r->block[0] = r->block[1] = r->block[2] = 1;
    } else {
        memcpy(r->grid, c->plan.grid, sizeof r->grid);
        memcpy(r->block, c->plan.block, sizeof r->block);
    }
    *nodes = r;
    *n_nodes = 1;
    return EV_OK;
}

static ev_status cpu_replay(void *impl, int64_t k, double *ms, double *wall_ms, ev_err *err)
{
    cpu_impl *c = impl;
    int64_t t0, t1, t2, waited = 0;
    ev_status rc;

    if (c->ops < 1)
        return ev_err_set(err, EV_EINVAL, "replay before capture");
    /* where the handshake spins, an empty request first, untimed: the
     * kernel's process is awake and spinning when the first timed batch
     * comes (khost.h) */
    if (c->host && ev_khost_spins(c->host) && (rc = ev_khost_run(c->host, 1, 0, err)))
        return rc;
    t0 = now_ns();
    if (c->host) {
        /* one request per batch, timed around its handshake */
        for (int64_t i = 0; i < k; i++)
            if ((rc = ev_khost_run(c->host, 1, (uint64_t)c->ops, err)))
                return rc;
    } else {
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < c->ops; j++)
                if ((rc = call_once(c, ev_backend_op_set(c->ops, j, c->sets), err)))
                    return rc;
    }
    t1 = now_ns();
    /* late work: a thread left running in this process, or the kernel's
     * process still running after it said its batch ended (the cpu's side
     * stream), is waited for, up to EV_LATE_WAIT_MS, on the wall clock */
    while (wall_ms && (thread_left(c) || (c->host && ev_khost_idle(c->host) == 0)) &&
           waited++ < 20 * EV_LATE_WAIT_MS) {
        struct timespec us50 = {0, 50000};
        nanosleep(&us50, NULL);
    }
    t2 = now_ns();
    *ms = (double)(t1 - t0) / 1e6;
    if (wall_ms)
        *wall_ms = (double)(t2 - t0) / 1e6;
    return EV_OK;
}

static ev_status cpu_sm_clock(void *impl, int64_t *mhz, ev_err *err)
{
    (void)impl;
    (void)mhz;
    return ev_err_set(err, EV_EUNSUPPORTED, "no SM clock on the cpu backend");
}

static ev_status cpu_read_input(void *impl, int set, void *dst, size_t len, ev_err *err)
{
    cpu_impl *c = impl;
    if (set < 0 || set >= (c->sets ? c->sets : 1))
        return ev_err_set(err, EV_EINVAL, "read_input: input set %d of %d", set, c->sets);
    if (len > c->b[set].in_span)
        return ev_err_set(err, EV_EINVAL, "read_input: %zu bytes asked, %zu bound", len, c->b[set].in_span);
    if (len)
        memcpy(dst, c->in[set], len);
    return EV_OK;
}

static ev_status cpu_write_input(void *impl, size_t off, const void *src, size_t len, ev_err *err)
{
    cpu_impl *c = impl;
    if (off > c->b[0].in_span || len > c->b[0].in_span - off)
        return ev_err_set(err, EV_EINVAL, "write_input: %zu bytes at %zu, %zu bound", len, off,
                          c->b[0].in_span);
    if (len)
        memcpy((unsigned char *)c->in[0] + off, src, len);
    return EV_OK;
}

/* The cpu backend reads no device state: no NVML, and the host's other
 * processes are not a device's (every field unknown, never a failure). */
static ev_status cpu_state(void *impl, ev_device_state *out, ev_err *err)
{
    (void)impl;
    (void)err;
    ev_device_state_unknown(out);
    return EV_OK;
}

/* The kernel host's CPU time (an external job), -1 for any other job. */
static int64_t cpu_helper_cpu_ns(void *impl)
{
    cpu_impl *c = impl;
    return c && c->host ? ev_khost_cpu_ns(c->host) : -1;
}

const ev_backend_ops ev_backend_cpu_ops = {
    "cpu",
    cpu_open,
    cpu_close,
    cpu_info,
    cpu_bind,
    cpu_poison,
    cpu_launch,
    cpu_read_output,
    cpu_cold_launch,
    cpu_capture,
    cpu_replay,
    cpu_sm_clock,
    cpu_read_input,
    cpu_write_input,
    cpu_state,
    NULL,
    NULL,
    NULL, /* no watch: a job's other process has no device to read */
    cpu_helper_cpu_ns,
};
