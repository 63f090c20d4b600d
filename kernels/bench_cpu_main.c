/*
 * bench_cpu_main.c: `make bench-kernels`, the CPU benchmark of the host
 * reductions.  For each case: bytes moved (R*N reads + R writes, in the
 * storage dtype), median time per op over 5 samples of calibrated batches,
 * and the fraction of the streaming-read ceiling (8 x LLC read through the
 * same pool) measured in the same run.  Every output is validated against
 * the FP64 oracle first.  Usage: bench-kernels-cpu [threads] (default: the
 * online CPUs).  Exit 0 ok, 1 a validation failed, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binding.h"
#include "inputs.h"
#include "oracle.h"
#include "plants.h"
#include "reduce_cpu.h"

typedef struct bench_case {
    ev_op op;
    ev_dtype dtype;
    int64_t rows, cols, b;
} bench_case;

static const bench_case cases[] = {
    {EV_OP_SUM, EV_DTYPE_FP16, 17, 1024, 4},   {EV_OP_MAX, EV_DTYPE_FP16, 17, 1024, 4},
    {EV_OP_SUM, EV_DTYPE_FP16, 65, 2048, 8},   {EV_OP_MAX, EV_DTYPE_FP16, 65, 2048, 8},
    {EV_OP_SUM, EV_DTYPE_BF16, 128, 2048, 8},  {EV_OP_MAX, EV_DTYPE_BF16, 128, 2048, 8},
    {EV_OP_SUM, EV_DTYPE_FP32, 65, 512, 8},    {EV_OP_MAX, EV_DTYPE_FP32, 65, 512, 8},
    {EV_OP_SUM, EV_DTYPE_FP16, 1024, 512, 4},  {EV_OP_MAX, EV_DTYPE_FP16, 1024, 512, 4},
    {EV_OP_SUM, EV_DTYPE_FP32, 37, 257, 4},    {EV_OP_MAX, EV_DTYPE_FP32, 37, 257, 4},
    {EV_OP_SUM, EV_DTYPE_BF16, 3, 8191, 4},    {EV_OP_MAX, EV_DTYPE_BF16, 3, 8191, 4},
    {EV_OP_SUM, EV_DTYPE_BF16, 256, 128, 8},   {EV_OP_MAX, EV_DTYPE_BF16, 256, 128, 8},
    {EV_OP_SUM, EV_DTYPE_FP32, 2048, 8192, 4}, {EV_OP_SUM, EV_DTYPE_BF16, 4096, 4096, 4},
    {EV_OP_MAX, EV_DTYPE_FP16, 32768, 256, 8}, {EV_OP_SUM, EV_DTYPE_FP32, 8, 1048576, 1},
    {EV_OP_MIN, EV_DTYPE_FP16, 17, 1024, 4},   {EV_OP_MIN, EV_DTYPE_BF16, 256, 128, 8},
    {EV_OP_MIN, EV_DTYPE_FP32, 37, 257, 4},
};

/* Monotonic time in seconds. */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Sorts a few doubles ascending (insertion sort). */
static void sort_doubles(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

typedef struct timed {
    ev_cpu_pool *pool;
    const ev_binding *b;
    const ev_cpu_receipt *plan;
    const void *stream;
    size_t stream_len;
} timed;

/* Runs one op of t (a reduction, or the stream read when plan is NULL). */
static void one_op(const timed *t)
{
    static volatile uint64_t sink;
    ev_err err;
    if (t->plan == NULL)
        sink ^= ev_cpu_stream_read(t->pool, t->stream, t->stream_len);
    else
        (void)ev_reduce_cpu_run(t->pool, t->b, t->plan, &err);
}

/* The seconds per op (the median of 5 runs of 20 replays) that the plant
 * functions of a replay's epochs and the check of its 100 ops add for
 * case b (V variants as the worker makes them with an LLC of llc bytes and
 * the cpu budget of 256 MiB), or a negative number when it cannot run. */
static double plants_per_op(const ev_binding *b, size_t llc)
{
    enum { OPS = 100, REPLAYS = 20 };
    const ev_shape *s = &b->shape;
    size_t es = ev_dtype_size(s->dtype), len = b->in_span;
    ev_oracle_row *o = malloc((size_t)s->rows * sizeof *o);
    ev_plant_row *pr = malloc((size_t)s->rows * sizeof *pr);
    void *var[OPS], *slot[OPS];
    unsigned char *kept = malloc((size_t)s->rows * es);
    ev_plant_cfg c;
    ev_plant_state st;
    ev_plant *tab = NULL;
    ev_err err;
    double t[5], r = -1;
    int64_t V;
    memset(var, 0, sizeof var);
    memset(slot, 0, sizeof slot);
    if (!o || !pr || !kept || ev_oracle_rows(s, b->in, o, &err) ||
        /* sum_depth 8192, as protocols/hopper.json declares: 8x1048576 at full depth is too wide to plant */
        ev_plant_rows(s, 8192, 1, EV_PLANT_SITES, o, pr, &err))
        goto out;
    V = ev_plant_variants((int64_t)len, (int64_t)llc, INT64_C(256) << 20, OPS);
    ev_plant_config(&c, 7, s, V, OPS);
    if (!(tab = calloc((size_t)(c.epochs * c.variants * c.m) + 1, sizeof *tab)))
        goto out;
    for (int64_t j = 0; j < V; j++)
        if (!(var[j] = malloc(len)))
            goto out;
        else
            memcpy(var[j], b->in, len);
    for (int i = 0; i < OPS; i++)
        if (!(slot[i] = calloc((size_t)s->rows, es)))
            goto out;
    memset(&st, 0, sizeof st);
    st.r_next = 1;
    for (int k = 0; k < 5; k++) {
        double t0 = now_s();
        for (int n = 0; n < REPLAYS; n++) { /* as the cpu backend's replay does */
            ev_plant_apply(&c, tab, c.epochs - 1, 0, b->in, var);
            ev_plant_table(&c, pr, st.r_next, b->in, tab);
            for (int64_t e = 0; e < c.epochs; e++) {
                if (e > 0)
                    ev_plant_apply(&c, tab, e - 1, 0, b->in, var);
                ev_plant_apply(&c, tab, e, 1, b->in, var);
            }
            ev_check_table(&c, tab, OPS, slot, kept, &st);
        }
        t[k] = (now_s() - t0) / (REPLAYS * OPS);
    }
    sort_doubles(t, 5);
    r = t[2];
out:
    for (int i = 0; i < OPS; i++) {
        free(var[i]);
        free(slot[i]);
    }
    free(o);
    free(pr);
    free(kept);
    free(tab);
    return r;
}

/* Returns the median seconds per op: batches sized to ~50 ms, 5 samples. */
static double median_per_op(const timed *t)
{
    int64_t k = 1;
    double s[5];
    for (;;) { /* calibrate */
        double t0 = now_s();
        for (int64_t i = 0; i < k; i++)
            one_op(t);
        double dt = now_s() - t0;
        if (dt > 0.05 || k > (INT64_C(1) << 30))
            break;
        k = dt < 0.001 ? k * 10 : (int64_t)((double)k * 0.05 / dt) + 1;
    }
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        for (int64_t i = 0; i < k; i++)
            one_op(t);
        s[r] = (now_s() - t0) / (double)k;
    }
    sort_doubles(s, 5);
    return s[2];
}

int main(int argc, char **argv)
{
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    ev_cpu_pool *pool = NULL;
    ev_err err;
    int failed = 0;
    size_t llc = ev_cpu_llc_bytes(), slen = 8 * llc;
    void *stream;
    double ceil_s, ceil_bw, floor_s;
    timed t;

    if (argc > 2 || (argc == 2 && (threads = (int)strtol(argv[1], NULL, 10)) < 1)) {
        fprintf(stderr, "usage: bench-kernels-cpu [threads]\n");
        return 2;
    }
    if (ev_cpu_pool_new(threads, &pool, &err)) {
        fprintf(stderr, "bench-kernels-cpu: %s\n", err.msg);
        return 1;
    }
    stream = malloc(slen);
    if (stream == NULL) {
        fprintf(stderr, "bench-kernels-cpu: out of memory\n");
        return 1;
    }
    memset(stream, 1, slen);
    memset(&t, 0, sizeof t);
    t.pool = pool;
    t.stream = stream;
    t.stream_len = slen;
    ceil_s = median_per_op(&t);
    ceil_bw = (double)slen / ceil_s;
    {
        double t0 = now_s();
        for (int i = 0; i < 10000; i++)
            ev_cpu_floor(pool);
        floor_s = (now_s() - t0) / 10000;
    }
    printf("# threads %d, LLC %zu bytes; ceiling: read %zu bytes in %.1f us = %.2f GB/s; floor %.2f us\n",
           threads, llc, slen, ceil_s * 1e6, ceil_bw * 1e-9, floor_s * 1e6);
    printf("%-11s %-5s %7s %8s %2s %12s %10s %8s %8s %12s %7s\n", "op", "dtype", "rows", "cols", "b", "bytes",
           "us/op", "GB/s", "of_ceil", "plants_us/op", "ratio");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bench_case *c = &cases[i];
        ev_binding b;
        ev_cpu_receipt plan;
        ev_validation v;
        size_t es, in_len, out_len;
        double sec, bytes;
        memset(&b, 0, sizeof b);
        b.shape.op = c->op;
        b.shape.dtype = c->dtype;
        b.shape.rows = c->rows;
        b.shape.cols = c->cols;
        b.shape.stride = c->cols;
        es = ev_dtype_size(b.shape.dtype);
        in_len = (size_t)(c->rows * c->cols) * es;
        out_len = (size_t)c->rows * es;
        b.in = malloc(in_len);
        b.out = malloc(out_len);
        b.in_span = in_len;
        b.out_span = out_len;
        if (b.in == NULL || b.out == NULL || ev_inputs_fill(&b.shape, 1, i, (void *)b.in, in_len, &err) ||
            ev_binding_check(&b, &err) ||
            ev_reduce_cpu_plan(&b.shape, ev_sched_name(EV_SCHED_DEFAULT), c->b, threads, &plan, &err) ||
            ev_reduce_cpu_run(pool, &b, &plan, &err) ||
            ev_oracle_validate(&b.shape, b.in, b.out, 0, &v, &err)) {
            fprintf(stderr, "bench-kernels-cpu: case %zu: %s\n", i, err.msg);
            return 1;
        }
        t.b = &b;
        t.plan = &plan;
        sec = median_per_op(&t);
        bytes = (double)(in_len + out_len);
        double pl = plants_per_op(&b, llc);
        printf("%-11s %-5s %7lld %8lld %2lld %12.0f %10.3f %8.2f %8.3f %12.3f %7.3f%s\n", ev_op_name(c->op),
               ev_dtype_name(c->dtype), (long long)c->rows, (long long)c->cols, (long long)c->b, bytes,
               sec * 1e6, bytes / sec * 1e-9, bytes / sec / ceil_bw, pl * 1e6, (sec + pl) / sec,
               v.passed ? "" : "  VALIDATION FAILED");
        failed |= !v.passed;
        free((void *)b.in);
        free(b.out);
    }
    free(stream);
    ev_cpu_pool_free(pool);
    return failed ? 1 : 0;
}
