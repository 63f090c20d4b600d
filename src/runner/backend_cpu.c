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
 * entry, grid and block 1): the variants (read-only to it, between
 * inaccessible guard pages) and the output slots are the only memory the
 * two share; the pristine base, the plants' table and the kept output stay
 * in this process, and an epoch's ops are one request timed around the
 * handshake.
 * A job bound with plants (backend.h, kernels/plants.h) holds its input
 * as a pristine base and V variants in one allocation and its `ops`
 * output slots between guard regions in another, each at secret offsets
 * (ev_plant_layout); op i reads variant i mod V and writes slot i, and a
 * batch replay is: its plants computed once (ev_plant_table), for each
 * epoch the last plants restored and its own planted (ev_plant_apply),
 * then its ops; then the check (ev_check_table): all inside the timed
 * region.  A cold sample plants and checks with ev_plant_host and
 * ev_check_host (the same rules, computed as they go).  Every byte of the slots' allocation outside the slots
 * holds EV_GUARD_BYTE, checked at every read_output.
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

typedef struct cpu_impl {
    ev_backend_config cfg;
    ev_cpu_pool *pool;
    int64_t threads, cache_bytes, flush_bytes;
    ev_arm_kind kind;
    ev_shape shape;      /* the case's (or the floor's nominal case's) */
    ev_launch_plan plan; /* the selector's plan: the receipt */
    ev_cpu_receipt run;  /* the same partition, as the pool runs it */
    /* plants (kernels/plants.h) */
    int planted;              /* 1: bound with plants */
    ev_plant_cfg pc;          /* V = pc.variants, ops = pc.ops */
    ev_plant_row *prow;       /* R rows' plant figures */
    ev_plant_state st;        /* the check's state */
    ev_plant *tab;            /* a replay's plants, computed once (ev_plant_table) */
    unsigned char *in_arena;  /* base and V variants, at secret offsets */
    unsigned char *out_arena; /* ops slots between guards, at secret offsets */
    size_t in_arena_len, out_arena_len;
    size_t *slot_off;    /* each slot's offset in out_arena */
    int64_t *slot_order; /* the slots in address order */
    void *base;          /* the pristine base */
    void **var;          /* V variants */
    void **slot;         /* ops output slots */
    ev_binding *bind;    /* op i: variant i mod V -> slot i */
    void *kept;          /* the kept output (R elements) */
    size_t in_len, out_len;
    int64_t last_pe;   /* the epoch the last plant planted (unplant restores it) */
    uint64_t launched; /* replays and cold checks run */
    unsigned char *flush, *ceil;
    size_t ceil_len, flush_mapped, ceil_mapped;
    int64_t ops;                        /* calls per batch (capture) */
    int64_t bind_threads[BIND_THREADS]; /* the process's thread ids when bound (late work) */
    int64_t n_bind_threads;             /* how many (-1: unknown, or more than the array holds) */
    ev_khost *host;                     /* EXTERNAL: the kernel's own process (khost.h) */
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
        ev_khost_stop(c->host); /* the variants and slots were the shared memory's */
        free(c->base);          /* the base was this process's own */
    } else {
        free(c->in_arena);
        free(c->out_arena);
    }
    free(c->slot_off);
    free(c->slot_order);
    free(c->var);
    free(c->slot);
    free(c->bind);
    free(c->kept);
    free(c->prow);
    free(c->tab);
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

/* Rounds n up to a multiple of 256 (at least 256). */
static size_t up256(size_t n)
{
    return n ? (n + 255) & ~(size_t)255 : 256;
}

/*
 * The plants' buffers of a job: the base and V variants of the input
 * (len bytes each) in one allocation, the `ops` slots (out_len bytes each)
 * between guards of EV_GUARD_BYTE in another, each at its secret offset
 * (ev_plant_layout), the kept output, and one binding per op (variant
 * i mod V, slot i).
 */
#define PAGE ((size_t)4096)

/* n bytes rounded up to whole pages (at least one). */
static size_t in_pages(size_t n)
{
    return n ? (n + PAGE - 1) / PAGE * PAGE : PAGE;
}

/*
 * Starts the kernel host of an external job (khost.h) with its shared
 * data laid out as: an inaccessible guard page, the variants' arena
 * (c->in_arena_len bytes, read-only to the kernel), another guard page,
 * the output slots' arena (c->out_arena_len, read-write: the slots and
 * their guard bytes), and a last guard page.  Sets c->host, c->in_arena,
 * c->out_arena (into the shared memory).
 */
static ev_status ext_host_start(cpu_impl *c, const ev_backend_job *job, ev_err *err)
{
    ev_khost_region r[5];
    size_t in_len = in_pages(c->in_arena_len), out_len = in_pages(c->out_arena_len);
    uint64_t in_at = PAGE, out_at = in_at + in_len + PAGE, end = out_at + out_len;
    ev_status rc;

    r[0] = (ev_khost_region){0, PAGE, PROT_NONE, "the guard page before the inputs"};
    r[1] = (ev_khost_region){in_at, in_len, PROT_READ, "input variants"};
    r[2] = (ev_khost_region){in_at + in_len, PAGE, PROT_NONE, "the guard page after the inputs"};
    r[3] = (ev_khost_region){out_at, out_len, PROT_READ | PROT_WRITE, "the output slots and their guards"};
    r[4] = (ev_khost_region){end, PAGE, PROT_NONE, "the guard page after the outputs"};
    if ((rc = ev_khost_start(job->arm, job->ext_lib, job->ext_entry, (size_t)c->pc.ops, end + PAGE, r, 5,
                             (int)c->cfg.own_cpus, job->ext_memory_mb, &c->host, err)))
        return rc;
    c->in_arena = ev_khost_data(c->host) + in_at;
    c->out_arena = ev_khost_data(c->host) + out_at;
    return EV_OK;
}

/* The kernel host's call list: call i is op i (variant i mod V, slot i),
 * by offset in the shared data. */
static ev_status ext_host_calls(cpu_impl *c, ev_err *err)
{
    size_t ops = (size_t)c->pc.ops;
    ev_khost_call *calls = malloc(ops * sizeof *calls);
    unsigned char *d = ev_khost_data(c->host);
    if (!calls)
        return ev_err_set(err, EV_ENOMEM, "binding: the kernel's call list: out of memory");
    for (size_t i = 0; i < ops; i++)
        calls[i] = (ev_khost_call){(uint64_t)((unsigned char *)c->var[i % (size_t)c->pc.variants] - d),
                                   (uint64_t)((unsigned char *)c->slot[i] - d)};
    ev_khost_calls(c->host, 0, calls, ops, c->shape.rows, c->shape.cols, c->shape.stride);
    free(calls);
    return EV_OK;
}

static ev_status bind_plants(cpu_impl *c, const ev_backend_job *job, ev_err *err)
{
    const ev_plant_cfg *pc = job->plants;
    size_t V = (size_t)pc->variants, ops = (size_t)pc->ops,
           item = up256(ev_input_alloc_bytes(job->input_len));
    size_t *in_off = calloc(V + 1, sizeof *in_off);
    ev_status rc = EV_OK;

    c->planted = 1;
    c->pc = *pc;
    c->st.r_next = 1;
    c->st.tag = ev_plant_tag0(pc->seed);
    c->in_len = job->input_len;
    c->slot_off = calloc(ops, sizeof *c->slot_off);
    c->slot_order = calloc(ops, sizeof *c->slot_order);
    c->var = calloc(V, sizeof *c->var);
    c->slot = calloc(ops, sizeof *c->slot);
    c->bind = calloc(ops, sizeof *c->bind);
    c->kept = alloc256(c->out_len);
    c->prow = malloc((c->shape.rows > 0 ? (size_t)c->shape.rows : 1) * sizeof *c->prow);
    c->tab = calloc((size_t)(pc->epochs * pc->variants * pc->m) + 1, sizeof *c->tab);
    if (!c->tab || !in_off || !c->slot_off || !c->slot_order || !c->var || !c->slot || !c->bind || !c->kept ||
        !c->prow) {
        rc = ev_err_set(err, EV_ENOMEM, "binding: out of memory");
        goto out;
    }
    if (c->shape.rows > 0)
        memcpy(c->prow, job->plant_rows, (size_t)c->shape.rows * sizeof *c->prow);
    if ((rc = ev_plant_layout(pc->seed, 0, V + 1, item, 0, in_off, &c->in_arena_len, err)) ||
        (rc = ev_plant_layout(pc->seed, 1, ops, up256(c->out_len), EV_SLOT_GUARD, c->slot_off,
                              &c->out_arena_len, err)))
        goto out;
    if (job->kind == EV_ARM_EXTERNAL) {
        if ((rc = ext_host_start(c, job, err)))
            goto out;
    } else {
        c->in_arena = alloc256(c->in_arena_len);
        c->out_arena = alloc256(c->out_arena_len);
    }
    if (!c->in_arena || !c->out_arena) {
        rc = ev_err_set(err, EV_ENOMEM, "binding: %zu + %zu bytes of variants and slots: out of memory",
                        c->in_arena_len, c->out_arena_len);
        goto out;
    }
    memset(c->in_arena, 0, c->in_arena_len);
    memset(c->out_arena, EV_GUARD_BYTE, c->out_arena_len);
    /* an external kernel's process shares the variants, never the base:
     * comparing the two would show it the plants */
    c->base = c->host ? alloc256(job->input_len) : c->in_arena + in_off[V];
    if (!c->base) {
        rc = ev_err_set(err, EV_ENOMEM, "binding: the base input: out of memory");
        goto out;
    }
    if (job->input_len)
        memcpy(c->base, job->input, job->input_len);
    for (size_t j = 0; j < V; j++) {
        c->var[j] = c->in_arena + in_off[j];
        if (job->input_len)
            memcpy(c->var[j], job->input, job->input_len);
    }
    ev_backend_slot_order(c->slot_off, (int64_t)ops, c->slot_order);
    for (size_t i = 0; i < ops && !rc; i++) {
        c->slot[i] = c->out_arena + c->slot_off[i];
        rc = ev_binding_make(&c->bind[i], &c->shape, c->var[i % V], job->input_len, c->slot[i], c->out_len,
                             err);
    }
    if (!rc && c->host)
        rc = ext_host_calls(c, err);
out:
    free(in_off);
    return rc;
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
        return ev_err_set(err, EV_EUNSUPPORTED,
                          "%s (cub::DeviceSegmentedReduce) is a CUDA library: the cpu backend cannot run it",
                          job->arm);
    if (job->kind == EV_ARM_TORCH)
        return ev_err_set(err, EV_EUNSUPPORTED, "%s is not a backend arm", job->arm);
    if (job->kind == EV_ARM_FLOOR) {
        snprintf(c->plan.entry, sizeof c->plan.entry, "floor_empty_tasks");
        *out = b;
        return EV_OK;
    }
    if (job->kind == EV_ARM_CEILING || job->kind == EV_ARM_CEILING_L2) {
        /* ceiling-l2: half a core's L2 per pool thread, each thread's part
         * read by that thread alone (ev_cpu_stream_read), replayed hot */
        c->ceil_len = job->kind == EV_ARM_CEILING_L2
                          ? (size_t)c->threads * ((ev_cpu_l2_bytes() / 2) & ~(size_t)63)
                          : (size_t)job->ceiling_bytes & ~(size_t)7;
        c->ceil = c->ceil_len ? map_touched(c->ceil_len, &c->ceil_mapped) : NULL;
        if (!c->ceil)
            return ev_err_set(err, EV_ENOMEM, "ceiling: cannot allocate %zu bytes", c->ceil_len);
        /* zeros (map_touched wrote every page): the content of a read does not matter */
        snprintf(c->plan.entry, sizeof c->plan.entry, "%s",
                 job->kind == EV_ARM_CEILING_L2 ? "ceiling_l2_stream_read" : "ceiling_stream_read");
        b.in_span = (int64_t)c->ceil_len;
        b.in_align = ev_binding_align(c->ceil);
        *out = b;
        return EV_OK;
    }
    if ((rc = ev_case_shape(&job->c, &c->shape, err)))
        return rc;
    c->out_len = c->shape.rows > 0 ? (size_t)c->shape.rows * ev_dtype_size(c->shape.dtype) : 0;
    if (job->kind == EV_ARM_EXTERNAL) {
        if (!job->ext_entry)
            return ev_err_set(err, EV_EUNSUPPORTED, "%s declares no entry for %s/%s", job->arm, job->c.op,
                              job->c.dtype);
        if (!job->ext_lib) /* (a build that failed ended the job before bind: worker.c) */
            return ev_err_set(err, EV_EUNSUPPORTED, "%s declares no cpu source", job->arm);
    }
    if (!job->plants || job->plants->ops < 1 || job->plants->variants < 1 ||
        job->plants->rows != c->shape.rows)
        return ev_err_set(err, EV_EINVAL, "binding refused: a job of %s binds with plants", job->arm);
    if ((rc = bind_plants(c, job, err)))
        return rc;
    if (job->kind == EV_ARM_FLOOR) {
        snprintf(c->plan.entry, sizeof c->plan.entry, "floor_empty_tasks");
        *out = b;
        return EV_OK;
    }
    if (job->kind == EV_ARM_EXTERNAL) {
        snprintf(c->plan.entry, sizeof c->plan.entry, "%s", job->ext_entry);
        for (int d = 0; d < 3; d++)
            c->plan.grid[d] = c->plan.block[d] = 1;
        b.threads = 1;
    } else if ((rc = ev_backend_schedule(job, &c->shape, EV_SEL_CPU, c->threads, &c->plan, err)) ||
               (rc = ev_reduce_cpu_plan(&c->shape, ev_sched_name(c->plan.sched), c->plan.rows_per_program,
                                        c->threads, &c->run, err)))
        return rc;
    b.in_span = (int64_t)c->bind[0].in_span;
    b.out_span = (int64_t)c->bind[0].out_span;
    b.in_align = c->bind[0].in_align;
    b.out_align = c->bind[0].out_align;
    b.out_len = c->out_len;
    *out = b;
    return EV_OK;
}

static ev_status cpu_poison(void *impl, int byte, ev_err *err)
{
    cpu_impl *c = impl;
    (void)err;
    for (int64_t i = 0; c->planted && i < c->pc.ops && c->out_len; i++)
        memset(c->slot[i], byte, c->out_len);
    return EV_OK;
}

/* One call of the bound arm as op i (variant i mod V, slot i).
 * EV_EINVAL when the plan does not fit the pool. */
static ev_status call_once(cpu_impl *c, int64_t i, ev_err *err)
{
    if (c->kind == EV_ARM_FLOOR) {
        ev_cpu_floor(c->pool);
        return EV_OK;
    }
    if (c->kind == EV_ARM_CEILING || c->kind == EV_ARM_CEILING_L2) {
        sink = ev_cpu_stream_read(c->pool, c->ceil, c->ceil_len);
        return EV_OK;
    }
    if (c->kind == EV_ARM_EXTERNAL) /* op i, in the kernel's process */
        return ev_khost_run(c->host, (uint64_t)i, 1, err);
    return ev_reduce_cpu_run(c->pool, &c->bind[i], &c->run, err);
}

static ev_status cpu_launch(void *impl, ev_err *err)
{
    cpu_impl *c = impl;
    ev_status rc = call_once(c, 0, err);
    if (c->host) /* held until its next request (khost.h, ev_khost_hold) */
        ev_khost_hold(c->host);
    return rc;
}

static ev_status cpu_read_output(void *impl, int64_t slot, void *dst, size_t len, ev_err *err)
{
    cpu_impl *c = impl;
    ev_status rc;
    if (!c->planted || slot < 0 || slot >= c->pc.ops)
        return ev_err_set(err, EV_EINVAL, "read_output: slot %lld of %lld", (long long)slot,
                          (long long)(c->planted ? c->pc.ops : 0));
    if (len > c->out_len)
        return ev_err_set(err, EV_EINVAL, "read_output: %zu bytes asked, %zu bound", len, c->out_len);
    if ((rc = ev_backend_guards(c->out_arena, c->out_arena_len, c->slot_off, c->slot_order, c->pc.ops,
                                c->out_len, c->plan.entry, err)))
        return rc;
    if (len)
        memcpy(dst, c->slot[slot], len);
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
    if (c->host) /* stopped until the timed op's request: nothing of it before its timer */
        ev_khost_hold(c->host);
    if (c->planted) { /* what the last plant planted, restored; epoch 0 of this replay planted */
        ev_plant_host(&c->pc, c->prow, c->st.r_next, 0, c->st.r_next - 1, c->last_pe, 1, c->base, c->var);
        c->last_pe = 0;
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
    if (c->host)
        ev_khost_hold(c->host);
    if (c->planted) {
        ev_check_host(&c->pc, c->prow, 1, c->base, c->slot, c->kept, &c->st);
        c->launched++;
    }
    return EV_OK;
}

static ev_status cpu_capture(void *impl, int64_t ops, ev_node_receipt **nodes, size_t *n_nodes, ev_err *err)
{
    cpu_impl *c = impl;
    ev_node_receipt *r;

    if (c->planted && ops != c->pc.ops)
        return ev_err_set(err, EV_EINVAL, "capture: %lld ops, %lld slots bound", (long long)ops,
                          (long long)c->pc.ops);
    if (!(r = calloc(1, sizeof *r)))
        return ev_err_set(err, EV_ENOMEM, "capture: out of memory");
    c->ops = ops;
    snprintf(r->function, sizeof r->function, "%s", c->plan.entry);
    if (c->kind == EV_ARM_FLOOR || c->kind == EV_ARM_CEILING || c->kind == EV_ARM_CEILING_L2) {
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
    int64_t t0, t1, t2, waited = 0, V = c->pc.variants;
    ev_status rc;

    if (c->ops < 1)
        return ev_err_set(err, EV_EINVAL, "replay before capture");
    /* where the handshake spins, an empty request first, untimed: the
     * kernel's process is awake and spinning when the first timed epoch
     * comes (khost.h) */
    if (c->host && ev_khost_spins(c->host) && (rc = ev_khost_run(c->host, 0, 0, err)))
        return rc;
    if (c->host) /* continued before the timer: nothing of this sample's input is there yet */
        ev_khost_release(c->host);
    t0 = now_ns();
    for (int64_t n = 0; n < k; n++) {
        if (!c->planted) {
            for (int64_t i = 0; i < c->ops; i++)
                if ((rc = call_once(c, i, err)))
                    return rc;
            continue;
        }
        /* the previous replay's last epoch restored (the table still holds
         * it), this replay's plants computed once, each epoch restored and
         * planted before its ops, the check after (kernels/plants.h) */
        ev_plant_apply(&c->pc, c->tab, c->pc.epochs - 1, 0, c->base, c->var);
        ev_plant_table(&c->pc, c->prow, c->st.r_next, c->base, c->tab);
        for (int64_t e = 0; e < c->pc.epochs; e++) {
            if (e > 0)
                ev_plant_apply(&c->pc, c->tab, e - 1, 0, c->base, c->var);
            ev_plant_apply(&c->pc, c->tab, e, 1, c->base, c->var);
            if (c->host) { /* the epoch's ops: one request to the kernel's process */
                int64_t n_e = (e + 1) * V < c->ops ? V : c->ops - e * V;
                if ((rc = ev_khost_run(c->host, (uint64_t)(e * V), (uint64_t)n_e, err)))
                    return rc;
                continue;
            }
            for (int64_t i = e * V; i < (e + 1) * V && i < c->ops; i++)
                if ((rc = call_once(c, i, err)))
                    return rc;
        }
        c->last_pe = c->pc.epochs - 1;
        ev_check_table(&c->pc, c->tab, c->ops, c->slot, c->kept, &c->st);
        c->launched++;
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
    if (c->host) /* held until its next request: the worker's untimed work is next */
        ev_khost_hold(c->host);
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

static ev_status cpu_read_input(void *impl, int64_t which, void *dst, size_t len, ev_err *err)
{
    cpu_impl *c = impl;
    if (!c->planted || which < -1 || which >= c->pc.variants)
        return ev_err_set(err, EV_EINVAL, "read_input: input %lld of %lld", (long long)which,
                          (long long)(c->planted ? c->pc.variants : 0));
    if (len > c->in_len)
        return ev_err_set(err, EV_EINVAL, "read_input: %zu bytes asked, %zu bound", len, c->in_len);
    if (len)
        memcpy(dst, which < 0 ? c->base : c->var[which], len);
    return EV_OK;
}

static ev_status cpu_tag(void *impl, ev_plant_state *st, uint64_t *launched, ev_err *err)
{
    cpu_impl *c = impl;
    (void)err;
    *st = c->st;
    *launched = c->launched;
    return EV_OK;
}

static ev_status cpu_read_kept(void *impl, void *dst, size_t len, ev_err *err)
{
    cpu_impl *c = impl;
    if (!c->planted || len > c->out_len)
        return ev_err_set(err, EV_EINVAL, "read_kept: %zu bytes asked, %zu bound", len, c->out_len);
    if (len)
        memcpy(dst, c->kept, len);
    return EV_OK;
}

static ev_status cpu_unplant(void *impl, ev_err *err)
{
    cpu_impl *c = impl;
    (void)err;
    if (c->planted)
        ev_plant_host(&c->pc, c->prow, 0, 0, c->st.r_next - 1, c->last_pe, 0, c->base, c->var);
    return EV_OK;
}

static ev_status cpu_intact(void *impl, int64_t *variant, size_t *at, ev_err *err)
{
    cpu_impl *c = impl;
    (void)err;
    *variant = -1;
    *at = 0;
    for (int64_t j = 0; c->planted && j < c->pc.variants; j++)
        if (memcmp(c->var[j], c->base, c->in_len)) {
            const unsigned char *v = c->var[j], *b = c->base;
            size_t i = 0;
            while (v[i] == b[i])
                i++;
            *variant = j;
            *at = i;
            break;
        }
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
    cpu_tag,
    cpu_read_kept,
    cpu_unplant,
    cpu_intact,
    cpu_state,
    NULL,
    NULL,
    NULL, /* no watch: a job's other process has no device to read */
    cpu_helper_cpu_ns,
    NULL, /* facts: ours run here, and an external kernel's host is ours */
    0,
    NULL, /* preopen: nothing of open can come before the gate (the pool is the measuring CPUs') */
};
