/*
 * reduce_cpu.c: the host reductions in their fixed order (reduce_cpu.h),
 * the pthread pool and the schedule receipts.
 *
 * Variants, one line each, by the op's combine (src/common/vocab.h):
 *   SUM fp32/fp16/bf16:     L = t*V FP32 partials, strided accumulation, tree
 *   MAX, MIN fp32/fp16/bf16: a fold over order-preserving integer keys of the
 *                           storage bits (exact, so the order is immaterial)
 * then the op's finish (ev_finish) on the FP32 value, and the store.
 */
#include "reduce_cpu.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EV_MAX_PARTIALS (EV_MAX_LANES * 8)

static float ev_fp16_table[65536];
static pthread_once_t ev_fp16_once = PTHREAD_ONCE_INIT;

/* Fills the fp16 -> fp32 table (called once). */
static void ev_fp16_table_init(void)
{
    for (uint32_t i = 0; i < 65536; i++)
        ev_fp16_table[i] = ev_fp16_to_f32((uint16_t)i);
}

/* Returns the tree combination of p[0..L) for L = t*V, summing (fixed order). */
static float ev_tree_sum(float *p, int64_t t, int64_t v)
{
    int64_t nw = t / 32;
    for (int64_t l = 0; l < t; l++)
        for (int64_t m = v / 2; m >= 1; m /= 2)
            for (int64_t j = 0; j < m; j++)
                p[l * v + j] = p[l * v + j] + p[l * v + j + m];
    for (int64_t w = 0; w < nw; w++)
        for (int64_t m = 16; m >= 1; m /= 2)
            for (int64_t l = 0; l < m; l++)
                p[(w * 32 + l) * v] = p[(w * 32 + l) * v] + p[(w * 32 + l + m) * v];
    for (int64_t m = nw / 2; m >= 1; m /= 2)
        for (int64_t w = 0; w < m; w++)
            p[w * 32 * v] = p[w * 32 * v] + p[(w + m) * 32 * v];
    return p[0];
}

/* Returns the FP32 sum of one row in the fixed order (before rounding). */
static float ev_row_sum(ev_dtype d, const unsigned char *row, int64_t n, int64_t t, int64_t v)
{
    float p[EV_MAX_PARTIALS];
    int64_t L = t * v;
    for (int64_t k = 0; k < L; k++)
        p[k] = -0.0f;
    for (int64_t base = 0; base < n; base += L) {
        int64_t m = n - base < L ? n - base : L;
        if (d == EV_DTYPE_FP32) {
            const float *x = (const float *)(const void *)row + base;
            for (int64_t k = 0; k < m; k++)
                p[k] = p[k] + x[k];
        } else if (d == EV_DTYPE_FP16) {
            const uint16_t *x = (const uint16_t *)(const void *)row + base;
            for (int64_t k = 0; k < m; k++)
                p[k] = p[k] + ev_fp16_table[x[k]];
        } else {
            const uint16_t *x = (const uint16_t *)(const void *)row + base;
            for (int64_t k = 0; k < m; k++)
                p[k] = p[k] + ev_f32_from_bits((uint32_t)x[k] << 16);
        }
    }
    return ev_tree_sum(p, t, v);
}

/* Returns an unsigned key ordering w-bit float patterns as their values
 * (-0 below +0); NaNs are handled by the caller. */
static uint32_t ev_key32(uint32_t u)
{
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* Returns the maximum (least 0: the minimum) of one row as fp32, -0 below
 * +0 (NaN if any element is NaN).  A key is strictly increasing with the
 * value; the minimum is the largest key of the complemented keys. */
static float ev_row_extreme(ev_dtype d, const unsigned char *row, int64_t n, int least)
{
    uint32_t best = 0, nan = 0;
    if (d == EV_DTYPE_FP32) {
        const uint32_t *x = (const uint32_t *)(const void *)row;
        uint32_t bk = 0, flip = least ? 0xffffffffu : 0u;
        for (int64_t i = 0; i < n; i++) {
            uint32_t u = x[i];
            uint32_t k = ev_key32(u) ^ flip;
            nan |= (u & 0x7fffffffu) > 0x7f800000u;
            if (k > bk || i == 0) {
                bk = k;
                best = u;
            }
        }
        return nan ? ev_f32_from_bits(EV_FP32_QNAN) : ev_f32_from_bits(best);
    }
    {
        const uint16_t *x = (const uint16_t *)(const void *)row;
        uint32_t nanlim = d == EV_DTYPE_FP16 ? 0x7c00u : 0x7f80u;
        uint32_t bk = 0, bu = 0, flip = least ? 0xffffu : 0u;
        for (int64_t i = 0; i < n; i++) {
            uint32_t u = x[i];
            uint32_t k = ((u & 0x8000u) ? (~u & 0xffffu) : (u | 0x8000u)) ^ flip;
            nan |= (u & 0x7fffu) > nanlim;
            if (k > bk || i == 0) {
                bk = k;
                bu = u;
            }
        }
        if (nan)
            return ev_f32_from_bits(EV_FP32_QNAN);
        return d == EV_DTYPE_FP16 ? ev_fp16_to_f32((uint16_t)bu) : ev_bf16_to_f32((uint16_t)bu);
    }
}

/* The op's finish of a row's combined FP32 value y over n elements
 * (src/common/vocab.h, ev_finish). */
static float ev_row_finish(ev_op op, float y, int64_t n)
{
    switch (ev_op_finish(op)) {
    case EV_FINISH_MEAN:
        return y / (float)n; /* as the device's __fdiv_rn(y, __ll2float_rn(n)) */
    default:
        return y;
    }
}

void ev_reduce_rows(const ev_binding *b, int64_t r0, int64_t r1)
{
    const ev_shape *s = &b->shape;
    size_t es = ev_dtype_size(s->dtype);
    int64_t t = ev_reduce_lanes(s->cols, s->dtype);
    int64_t v = ev_reduce_vec(s->dtype);
    const unsigned char *in = b->in;

    if (s->dtype == EV_DTYPE_FP16)
        pthread_once(&ev_fp16_once, ev_fp16_table_init);
    for (int64_t r = r0; r < r1; r++) {
        const unsigned char *row = in + (size_t)r * (size_t)s->stride * es;
        ev_combine c = ev_op_combine(s->op);
        float y = c == EV_COMBINE_SUM ? ev_row_sum(s->dtype, row, s->cols, t, v)
                                      : ev_row_extreme(s->dtype, row, s->cols, c == EV_COMBINE_MIN);
        ev_dtype_store(s->dtype, b->out, (size_t)r, ev_row_finish(s->op, y, s->cols));
    }
}

/* ---- pool --------------------------------------------------------------- */

/*
 * The hand-off between the caller and the workers spins before it sleeps.
 * A batch is published by bumping `generation`; a worker spins on it for up
 * to EV_POOL_SPIN_NS, then sleeps on `go`; the caller spins on `pending`
 * for as long, then sleeps on `done`.  A thread that sleeps says so
 * (`sleepers`, `caller_waits`) under `mu`, so a wake-up is sent only to a
 * sleeper and none is lost: the waker changes the atomic first and looks at
 * the flag under the mutex; the sleeper sets the flag and looks at the
 * atomic under the same mutex.  Every worker, active in the batch or not,
 * reports it (`pending` counts them all), so the caller never writes the
 * next batch while a worker may still be reading this one.
 *
 * Why (docs/runner.md, "Calibration"): with a mutex and condition
 * variables alone, every batch was a sleep and a wake-up, and what that
 * cost depended on where the scheduler had put the threads.  On a 2-vCPU
 * virtual machine an empty batch of two threads cost about 9 us when both
 * threads shared one CPU and about 45 us when they sat on two (a cross-CPU
 * wake-up of an idle vCPU), and the scheduler moved between the two at any
 * moment: the floor arm, calibrated in one placement, took its samples in
 * the other (5 ms calibrated, 19-41 ms sampled) and broke the protocol's
 * band.  Spinning makes the hand-off about 0.06 us, but only while the two
 * threads run on two CPUs: two spinning threads on one CPU wait out each
 * other's budget (a floor job calibrated at about 86 us a batch was seen
 * before the pinning; that its two threads then shared a CPU is inferred,
 * not measured).  So when the caller's affinity holds at
 * least as many CPUs as the pool has threads, thread k is pinned to the
 * k-th CPU of it (the caller is thread 0, and gets its own affinity back
 * when the pool is freed); with fewer CPUs than threads nothing is pinned
 * and nobody spins.  The spin is short (50 us), so an idle pool sleeps
 * and, on a loaded host, a waiting thread gives its CPU back soon.
 */
#define EV_POOL_SPIN_NS 50000

struct ev_cpu_pool {
    int threads;
    int64_t spin_ns; /* EV_POOL_SPIN_NS when pinned, else 0 */
    int pinned;
    cpu_set_t caller_mask;  /* the caller's affinity before pinning */
    int cpus[EV_MAX_LANES]; /* thread k runs on cpus[k] when pinned */
    pthread_t *tid;
    int started; /* workers started (for cleanup) */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    _Atomic uint64_t generation; /* bumped per batch (and once at stop) */
    atomic_int pending;          /* workers that have not yet reported the batch */
    atomic_int stop;
    int sleepers;     /* workers asleep on go (under mu) */
    int caller_waits; /* the caller asleep on done (under mu) */
    /* the current batch, written before generation is bumped */
    int64_t n;
    int active; /* threads taking part: min(threads, n) */
    ev_cpu_task_fn fn;
    void *ctx;
};

typedef struct ev_worker_arg {
    ev_cpu_pool *pool;
    int index;
} ev_worker_arg;

/* One pause of a spin loop. */
static inline void ev_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Monotonic time in ns (the spin budget). */
static int64_t ev_pool_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The two conditions the hand-off waits for: a batch newer than seen
 * was published; every worker reported the batch. */
static int ev_new_batch(ev_cpu_pool *p, uint64_t seen)
{
    return atomic_load_explicit(&p->generation, memory_order_acquire) != seen;
}
static int ev_batch_done(ev_cpu_pool *p, uint64_t unused)
{
    (void)unused;
    return atomic_load_explicit(&p->pending, memory_order_acquire) == 0;
}

/* Spins until ready(p, arg) holds, for at most p->spin_ns (none when it
 * is 0).  Returns 1 when it holds, 0 when the budget ran out first. */
static int ev_spin(ev_cpu_pool *p, int (*ready)(ev_cpu_pool *, uint64_t), uint64_t arg)
{
    int64_t t0 = 0;
    for (unsigned i = 0;; i++) {
        if (ready(p, arg))
            return 1;
        if (p->spin_ns <= 0)
            return 0;
        ev_cpu_relax();
        if ((i & 63) == 63) {
            int64_t t = ev_pool_ns();
            if (!t0)
                t0 = t;
            else if (t - t0 > p->spin_ns)
                return 0;
        }
    }
}

/* Runs thread k's share of the current batch: tasks k, k+active, ... */
static void ev_pool_share(ev_cpu_pool *p, int k)
{
    for (int64_t i = k; i < p->n; i += p->active)
        p->fn(p->ctx, i);
}

/* Worker thread body: waits for a batch, runs its share (when it takes
 * part), reports it; ends at stop. */
static void *ev_pool_worker(void *arg)
{
    ev_worker_arg *a = arg;
    ev_cpu_pool *p = a->pool;
    int k = a->index;
    uint64_t seen = 0;
    free(a);
    if (p->pinned) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(p->cpus[k], &one);
        pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    }
    for (;;) {
        if (!ev_spin(p, ev_new_batch, seen)) {
            pthread_mutex_lock(&p->mu);
            p->sleepers++;
            while (atomic_load_explicit(&p->generation, memory_order_acquire) == seen)
                pthread_cond_wait(&p->go, &p->mu);
            p->sleepers--;
            pthread_mutex_unlock(&p->mu);
        }
        seen = atomic_load_explicit(&p->generation, memory_order_acquire);
        if (atomic_load_explicit(&p->stop, memory_order_acquire))
            break;
        if (k < p->active)
            ev_pool_share(p, k);
        if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->mu);
            if (p->caller_waits)
                pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

ev_status ev_cpu_pool_new(int threads, ev_cpu_pool **out, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_cpu_pool *p = NULL;

    if (threads < 1 || threads > EV_MAX_LANES)
        return ev_err_set(err, EV_EINVAL, "cpu pool: %d threads (1..1024)", threads);
    p = calloc(1, sizeof *p);
    if (p == NULL)
        return ev_err_set(err, EV_ENOMEM, "cpu pool: out of memory");
    p->threads = threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->generation, 0);
    atomic_init(&p->pending, 0);
    atomic_init(&p->stop, 0);
    if (threads > 1 && pthread_getaffinity_np(pthread_self(), sizeof p->caller_mask, &p->caller_mask) == 0 &&
        CPU_COUNT(&p->caller_mask) >= threads) {
        cpu_set_t one;
        int k = 0;
        for (int c = 0; c < CPU_SETSIZE && k < threads; c++)
            if (CPU_ISSET(c, &p->caller_mask))
                p->cpus[k++] = c;
        CPU_ZERO(&one);
        CPU_SET(p->cpus[0], &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0) {
            p->pinned = 1;
            p->spin_ns = EV_POOL_SPIN_NS;
        }
    }
    if (threads > 1) {
        p->tid = calloc((size_t)threads, sizeof *p->tid);
        if (p->tid == NULL) {
            rc = ev_err_set(err, EV_ENOMEM, "cpu pool: out of memory");
            goto out;
        }
    }
    for (int k = 1; k < threads; k++) {
        ev_worker_arg *a = malloc(sizeof *a);
        int e;
        if (a == NULL) {
            rc = ev_err_set(err, EV_ENOMEM, "cpu pool: out of memory");
            goto out;
        }
        a->pool = p;
        a->index = k;
        e = pthread_create(&p->tid[k], NULL, ev_pool_worker, a);
        if (e != 0) {
            free(a);
            rc = ev_err_set(err, EV_EPROC, "cpu pool: pthread_create: %s", strerror(e));
            goto out;
        }
        p->started = k;
    }
out:
    if (rc) {
        ev_cpu_pool_free(p);
        return rc;
    }
    *out = p;
    return rc;
}

void ev_cpu_pool_free(ev_cpu_pool *p)
{
    if (p == NULL)
        return;
    atomic_store_explicit(&p->stop, 1, memory_order_release);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_acq_rel);
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int k = 1; k <= p->started; k++)
        pthread_join(p->tid[k], NULL);
    if (p->pinned)
        pthread_setaffinity_np(pthread_self(), sizeof p->caller_mask, &p->caller_mask);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->tid);
    free(p);
}

int ev_cpu_pool_threads(const ev_cpu_pool *p)
{
    return p->threads;
}

void ev_cpu_pool_run(ev_cpu_pool *p, int64_t n, ev_cpu_task_fn fn, void *ctx)
{
    int active;
    if (n <= 0)
        return;
    active = n < p->threads ? (int)n : p->threads;
    if (active == 1) {
        for (int64_t i = 0; i < n; i++)
            fn(ctx, i);
        return;
    }
    p->n = n;
    p->active = active;
    p->fn = fn;
    p->ctx = ctx;
    atomic_store_explicit(&p->pending, p->threads - 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_acq_rel);
    pthread_mutex_lock(&p->mu);
    if (p->sleepers)
        pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    ev_pool_share(p, 0);
    if (!ev_spin(p, ev_batch_done, 0)) {
        pthread_mutex_lock(&p->mu);
        p->caller_waits = 1;
        while (atomic_load_explicit(&p->pending, memory_order_acquire) > 0)
            pthread_cond_wait(&p->done, &p->mu);
        p->caller_waits = 0;
        pthread_mutex_unlock(&p->mu);
    }
}

/* ---- schedules ---------------------------------------------------------- */

ev_status ev_reduce_cpu_plan(const ev_shape *s, const char *label, int64_t rows_per_task, int64_t threads,
                             ev_cpu_receipt *out, ev_err *err)
{
    ev_cpu_receipt r;
    int n;

    if ((unsigned)s->op >= EV_OP_COUNT || ev_dtype_size(s->dtype) == 0 || s->rows < 0 || s->cols < 1)
        return ev_err_set(err, EV_EINVAL, "cpu plan: bad shape");
    if (rows_per_task < 1 || threads < 1 || threads > EV_MAX_LANES)
        return ev_err_set(err, EV_EINVAL, "cpu plan: rows per task %lld, threads %lld",
                          (long long)rows_per_task, (long long)threads);
    if (label == NULL || label[0] == '\0' || strlen(label) > 16)
        return ev_err_set(err, EV_EINVAL, "cpu plan: bad schedule label");
    memset(&r, 0, sizeof r);
    n = snprintf(r.entry, sizeof r.entry, "%s_%s_%s", ev_op_name(s->op), ev_dtype_name(s->dtype), label);
    if (n < 0 || (size_t)n >= sizeof r.entry)
        return ev_err_set(err, EV_EINVAL, "cpu plan: entry name too long");
    r.rows_per_task = rows_per_task;
    r.tasks = s->rows / rows_per_task + (s->rows % rows_per_task != 0);
    r.threads = r.tasks < threads ? r.tasks : threads;
    r.lanes = ev_reduce_lanes(s->cols, s->dtype);
    *out = r;
    return EV_OK;
}

typedef struct ev_rows_ctx {
    const ev_binding *b;
    int64_t rows_per_task;
} ev_rows_ctx;

/* Task body: reduces rows [task*b, min(R, task*b+b)). */
static void ev_rows_task(void *ctx, int64_t task)
{
    const ev_rows_ctx *c = ctx;
    int64_t r0 = task * c->rows_per_task;
    int64_t r1 = r0 + c->rows_per_task;
    if (r1 > c->b->shape.rows)
        r1 = c->b->shape.rows;
    ev_reduce_rows(c->b, r0, r1);
}

ev_status ev_reduce_cpu_run(ev_cpu_pool *pool, const ev_binding *b, const ev_cpu_receipt *plan, ev_err *err)
{
    ev_rows_ctx c;
    int64_t want = b->shape.rows / plan->rows_per_task + (b->shape.rows % plan->rows_per_task != 0);

    if (plan->rows_per_task < 1 || plan->tasks != want)
        return ev_err_set(err, EV_EINVAL, "cpu run: plan of %lld tasks does not fit R = %lld",
                          (long long)plan->tasks, (long long)b->shape.rows);
    if (plan->threads > pool->threads ||
        (plan->tasks > 0 && plan->threads != (plan->tasks < pool->threads ? plan->tasks : pool->threads)))
        return ev_err_set(err, EV_EINVAL, "cpu run: plan for %lld threads on a pool of %d",
                          (long long)plan->threads, pool->threads);
    c.b = b;
    c.rows_per_task = plan->rows_per_task;
    ev_cpu_pool_run(pool, plan->tasks, ev_rows_task, &c);
    return EV_OK;
}

/* ---- reference arms ----------------------------------------------------- */

/* Task body of the floor: nothing. */
static void ev_empty_task(void *ctx, int64_t task)
{
    (void)ctx;
    (void)task;
}

void ev_cpu_floor(ev_cpu_pool *pool)
{
    ev_cpu_pool_run(pool, pool->threads, ev_empty_task, NULL);
}

typedef struct ev_stream_ctx {
    const uint64_t *w;
    size_t words, per;
    uint64_t sum[EV_MAX_LANES];
} ev_stream_ctx;

/* Task body of the ceiling: xor-folds its slice of words. */
static void ev_stream_task(void *ctx, int64_t task)
{
    ev_stream_ctx *c = ctx;
    size_t a = (size_t)task * c->per, e = a + c->per;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    if (e > c->words)
        e = c->words;
    size_t i = a;
    for (; i + 4 <= e; i += 4) {
        s0 ^= c->w[i];
        s1 ^= c->w[i + 1];
        s2 ^= c->w[i + 2];
        s3 ^= c->w[i + 3];
    }
    for (; i < e; i++)
        s0 ^= c->w[i];
    c->sum[task] = s0 ^ s1 ^ s2 ^ s3;
}

uint64_t ev_cpu_stream_read(ev_cpu_pool *pool, const void *buf, size_t n)
{
    ev_stream_ctx c;
    uint64_t s = 0;
    int64_t T = pool->threads;
    c.w = buf;
    c.words = n / 8;
    c.per = (c.words + (size_t)T - 1) / (size_t)T;
    ev_cpu_pool_run(pool, T, ev_stream_task, &c);
    for (int64_t k = 0; k < T; k++)
        s ^= c.sum[k];
    return s;
}

size_t ev_cpu_llc_bytes(void)
{
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l3 > 0)
        return (size_t)l3;
    if (l2 > 0)
        return (size_t)l2;
    return (size_t)32 << 20;
}

size_t ev_cpu_l2_bytes(void)
{
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? (size_t)l2 : (size_t)256 << 10;
}
