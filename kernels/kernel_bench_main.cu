/*
 * kernel_bench_main.cu: build/kernel-bench, the standalone GPU validator and
 * benchmark of the reductions (run it on the GPU host; no store involved).
 *
 * For every case and schedule (default, rows1, rows2, rows4; short where a
 * row holds at most 32 chunks; split where a row holds more than 64 KiB
 * padded) and the cub
 * peer: seeded input (kernels/inputs.h), poisoned output, one launch, then
 *   - native kernels: output equal to the CPU twin (ev_reduce_rows) bit
 *     for bit, and valid against the FP64 oracle;
 *   - cub: valid against the oracle (its order differs from ours);
 * then timing as the protocol does it on a small scale: 100 ops in one
 * graph, >= 200 ms warm-up, replays per sample sized to ~50 ms, 7 samples,
 * median per op.  floor (empty kernel) and ceiling (streaming read of
 * 1 GiB) are measured in the same run; each line prints bytes moved
 * (R*N + R elements), us/op, GB/s, the fraction of the ceiling and the
 * ratio to the floor.  Exit 0 all valid, 1 any mismatch or CUDA error.
 * Cases marked `special` overwrite their inputs with NaN (both signs, with
 * payloads), -0/+0, +-Inf and subnormals by row (kb_specials) and are
 * validated only, never timed: they prove on the device that the fast
 * paths (hardware widening, MAX on integer keys) give the twin's bits.
 * Usage: kernel-bench [--quick] (quick: validation only, no timing).
 * KB_CASES=i,j,... (indices into kb_cases) limits the run to those cases.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "status.h"
#include "binding.h"
#include "inputs.h"
#include "oracle.h"
#include "peer_cub.h"
#include "reduce_cpu.h"
#include "reduce_cuda.h"
#include "selector.h"
}

typedef struct kb_case {
    ev_op op;
    ev_dtype dtype;
    long long rows, cols, stride, B;
    int special; /* 1: inputs overwritten by kb_specials, validation only */
} kb_case;

static const kb_case kb_cases[] = {
    {EV_OP_SUM, EV_DTYPE_FP16, 17, 1024, 1024, 4, 0},     {EV_OP_MAX, EV_DTYPE_FP16, 17, 1024, 1024, 4, 0},
    {EV_OP_SUM, EV_DTYPE_FP16, 65, 2048, 2048, 8, 0},     {EV_OP_MAX, EV_DTYPE_FP16, 65, 2048, 2048, 8, 0},
    {EV_OP_SUM, EV_DTYPE_BF16, 128, 2048, 2048, 8, 0},    {EV_OP_MAX, EV_DTYPE_BF16, 128, 2048, 2048, 8, 0},
    {EV_OP_SUM, EV_DTYPE_FP32, 65, 512, 512, 8, 0},       {EV_OP_MAX, EV_DTYPE_FP32, 65, 512, 512, 8, 0},
    {EV_OP_SUM, EV_DTYPE_FP16, 1024, 512, 512, 4, 0},     {EV_OP_MAX, EV_DTYPE_FP16, 1024, 512, 512, 4, 0},
    {EV_OP_SUM, EV_DTYPE_FP32, 37, 257, 257, 4, 0},       {EV_OP_MAX, EV_DTYPE_FP32, 37, 257, 257, 4, 0},
    {EV_OP_SUM, EV_DTYPE_BF16, 3, 8191, 8191, 4, 0},      {EV_OP_MAX, EV_DTYPE_BF16, 3, 8191, 8191, 4, 0},
    {EV_OP_SUM, EV_DTYPE_BF16, 256, 128, 128, 8, 0},      {EV_OP_MAX, EV_DTYPE_BF16, 256, 128, 128, 8, 0},
    {EV_OP_SUM, EV_DTYPE_FP32, 8192, 8192, 8192, 4, 0},   {EV_OP_SUM, EV_DTYPE_BF16, 16384, 4096, 4096, 4, 0},
    {EV_OP_MAX, EV_DTYPE_FP16, 131072, 256, 256, 8, 0},   {EV_OP_SUM, EV_DTYPE_FP32, 32, 1048576, 1048576, 1, 0},
    /* odd shapes: strides that break 16-byte alignment, N = 1, R = 0 */
    {EV_OP_SUM, EV_DTYPE_FP16, 33, 1000, 1003, 4, 0},     {EV_OP_MAX, EV_DTYPE_BF16, 5, 1, 7, 2, 0},
    {EV_OP_SUM, EV_DTYPE_FP32, 0, 64, 64, 4, 0},          {EV_OP_MAX, EV_DTYPE_FP32, 7, 100001, 100003, 2, 0},
    /* special values (validation only): one warp, many warps, unaligned rows */
    {EV_OP_MAX, EV_DTYPE_FP16, 24, 1024, 1024, 4, 1},  {EV_OP_MAX, EV_DTYPE_BF16, 24, 3001, 3003, 2, 1},
    {EV_OP_MAX, EV_DTYPE_FP32, 24, 8192, 8192, 4, 1},  {EV_OP_MAX, EV_DTYPE_FP16, 24, 999, 1001, 8, 1},
    {EV_OP_MAX, EV_DTYPE_BF16, 16, 1, 3, 4, 1},        {EV_OP_MAX, EV_DTYPE_FP32, 24, 77, 77, 8, 1},
    {EV_OP_SUM, EV_DTYPE_FP16, 24, 2048, 2048, 8, 1},  {EV_OP_SUM, EV_DTYPE_FP16, 24, 999, 1001, 2, 1},
    {EV_OP_SUM, EV_DTYPE_BF16, 24, 300, 300, 4, 1},    {EV_OP_SUM, EV_DTYPE_FP32, 24, 4096, 4096, 4, 1},
    /* more short rows (the short schedule): two holdouts of hopper.json, one unaligned */
    {EV_OP_SUM, EV_DTYPE_FP16, 2048, 64, 64, 8, 0},    {EV_OP_MAX, EV_DTYPE_FP16, 1000, 100, 100, 4, 0},
    {EV_OP_SUM, EV_DTYPE_FP32, 37, 100, 101, 4, 0},
    /* special values in short rows: aligned, and unaligned with a partial chunk */
    {EV_OP_SUM, EV_DTYPE_BF16, 24, 128, 128, 8, 1},    {EV_OP_SUM, EV_DTYPE_FP16, 24, 200, 203, 4, 1},
    /* the holdouts of hopper.json with unaligned rows or a partial last chunk */
    {EV_OP_SUM, EV_DTYPE_FP16, 100, 1000, 1003, 4, 0}, {EV_OP_MAX, EV_DTYPE_FP32, 300, 777, 800, 4, 0},
    {EV_OP_MAX, EV_DTYPE_BF16, 7, 3000, 3000, 4, 0},   {EV_OP_SUM, EV_DTYPE_FP32, 1, 4096, 4096, 4, 0},
    /* every row offset mod 16 with a partial last chunk, fp32 (4, 8, 12) and 16-bit (2 .. 14) */
    {EV_OP_SUM, EV_DTYPE_FP32, 9, 257, 259, 4, 0},     {EV_OP_MAX, EV_DTYPE_BF16, 9, 1021, 1023, 2, 0},
    {EV_OP_SUM, EV_DTYPE_BF16, 17, 30, 31, 4, 0},      {EV_OP_MAX, EV_DTYPE_FP16, 17, 13, 15, 8, 0},
    /* holdouts of hopper.json whose default program has b t > 512 threads, and two with 256-512 */
    {EV_OP_SUM, EV_DTYPE_BF16, 16384, 4096, 4096, 8, 0}, {EV_OP_SUM, EV_DTYPE_FP32, 96, 2048, 2048, 8, 0},
    {EV_OP_SUM, EV_DTYPE_BF16, 4096, 512, 512, 8, 0},    {EV_OP_MAX, EV_DTYPE_FP32, 512, 1024, 1024, 8, 0},
    /* reduce_min on every schedule: long, short and split rows, unaligned, special values */
    {EV_OP_MIN, EV_DTYPE_FP16, 17, 1024, 1024, 4, 0},    {EV_OP_MIN, EV_DTYPE_FP32, 65, 512, 512, 8, 0},
    {EV_OP_MIN, EV_DTYPE_BF16, 128, 2048, 2048, 8, 0},   {EV_OP_MIN, EV_DTYPE_FP16, 2048, 64, 64, 8, 0},
    {EV_OP_MIN, EV_DTYPE_FP32, 32, 1048576, 1048576, 1, 0}, {EV_OP_MIN, EV_DTYPE_FP32, 7, 100001, 100003, 2, 0},
    {EV_OP_MIN, EV_DTYPE_BF16, 5, 1, 7, 2, 0},           {EV_OP_MIN, EV_DTYPE_BF16, 17, 30, 31, 4, 0},
    {EV_OP_MIN, EV_DTYPE_FP32, 300, 777, 800, 4, 0},     {EV_OP_MIN, EV_DTYPE_FP16, 1024, 512, 512, 4, 0},
    {EV_OP_MIN, EV_DTYPE_FP16, 24, 1024, 1024, 4, 1},    {EV_OP_MIN, EV_DTYPE_BF16, 24, 3001, 3003, 2, 1},
    {EV_OP_MIN, EV_DTYPE_FP32, 24, 77, 77, 8, 1},        {EV_OP_MIN, EV_DTYPE_FP16, 24, 200, 203, 4, 1},
    /* reduce_mean (the sum's order, one division) on every schedule */
    {EV_OP_MEAN, EV_DTYPE_FP16, 17, 1024, 1024, 4, 0},   {EV_OP_MEAN, EV_DTYPE_FP32, 65, 512, 512, 8, 0},
    {EV_OP_MEAN, EV_DTYPE_BF16, 128, 2048, 2048, 8, 0},  {EV_OP_MEAN, EV_DTYPE_BF16, 2048, 64, 64, 8, 0},
    {EV_OP_MEAN, EV_DTYPE_FP32, 32, 1048576, 1048576, 1, 0}, {EV_OP_MEAN, EV_DTYPE_FP32, 7, 100001, 100003, 2, 0},
    {EV_OP_MEAN, EV_DTYPE_FP16, 5, 1, 7, 2, 0},          {EV_OP_MEAN, EV_DTYPE_BF16, 17, 30, 31, 4, 0},
    {EV_OP_MEAN, EV_DTYPE_FP32, 300, 777, 800, 4, 0},    {EV_OP_MEAN, EV_DTYPE_FP16, 100, 1000, 1003, 4, 0},
    {EV_OP_MEAN, EV_DTYPE_FP16, 24, 2048, 2048, 8, 1},   {EV_OP_MEAN, EV_DTYPE_FP16, 24, 200, 203, 4, 1},
};

/* The arms a case runs: every native schedule (ev_sched), then cub. */
#define KB_NATIVE EV_SCHED_COUNT
#define KB_ARMS   (KB_NATIVE + 1)

#define KB_CHECK(call, what)                                                                           \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "kernel-bench: %s: %s\n", (what), cudaGetErrorString(e_));                 \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

typedef struct kb_arm {
    int kind; /* 0 plan, 1 cub, 2 floor, 3 ceiling */
    const ev_launch_plan *plan;
    const ev_binding *b;
    ev_cub_peer *cub;
    const void *ceil;
    size_t ceil_len;
    uint32_t *sink;
    int sms;
} kb_arm;

/* Writes the storage bits u (16 or 32 bits wide by es) into element i of row. */
static void kb_put(unsigned char *row, size_t es, long long i, uint32_t u)
{
    if (es == 4) {
        memcpy(row + i * 4, &u, 4);
    } else {
        uint16_t h = (uint16_t)u;
        memcpy(row + i * 2, &h, 2);
    }
}

/*
 * Overwrites the rows of a special case (R rows of N at stride, element
 * size es, fp16 when half): row r % 8 picks the pattern
 *   0 one +NaN (quiet)      1 one -NaN with a payload (signalling)
 *   2 all -0 but one +0     3 all -0
 *   4 one +Inf              5 all -Inf
 *   6 one +Inf and one -Inf 7 all subnormals of mixed sign
 * at positions that move with r.
 */
static void kb_specials(unsigned char *in, long long R, long long N, long long stride, size_t es, int half)
{
    uint32_t sign = es == 4 ? 0x80000000u : 0x8000u;
    uint32_t inf = es == 4 ? 0x7f800000u : half ? 0x7c00u : 0x7f80u;
    uint32_t qnan = es == 4 ? 0x7fc00000u : half ? 0x7e00u : 0x7fc0u;
    uint32_t snan = es == 4 ? 0x7f800123u : half ? 0x7c05u : 0x7f85u;
    uint32_t subn = es == 4 ? 0x007fffffu : half ? 0x03ffu : 0x007fu;
    for (long long r = 0; r < R; r++) {
        unsigned char *row = in + (size_t)r * (size_t)stride * es;
        long long p = (r * 7919) % N, q = (r * 104729 + N / 2) % N;
        switch (r % 8) {
        case 0: kb_put(row, es, p, qnan); break;
        case 1: kb_put(row, es, p, sign | snan); break;
        case 2:
        case 3:
            for (long long i = 0; i < N; i++)
                kb_put(row, es, i, sign);
            if (r % 8 == 2)
                kb_put(row, es, p, 0);
            break;
        case 4: kb_put(row, es, p, inf); break;
        case 5:
            for (long long i = 0; i < N; i++)
                kb_put(row, es, i, sign | inf);
            break;
        case 6:
            kb_put(row, es, p, inf);
            kb_put(row, es, q, sign | inf);
            break;
        default:
            for (long long i = 0; i < N; i++)
                kb_put(row, es, i, (i % 3 == 0 ? sign : 0) | (subn - (uint32_t)(i % 5)));
            break;
        }
    }
}

/* Prints a comment line on the first bad row of a failed output: its bits,
 * the twin's bits, the oracle's reference and the row's first elements. */
static void kb_report_bad(const ev_shape *sh, const unsigned char *in, const unsigned char *out,
                          const unsigned char *twin, const ev_validation *v)
{
    size_t es = ev_dtype_size(sh->dtype);
    long long r = v->first_bad >= 0 ? v->first_bad : 0;
    uint32_t got = 0, tw = 0;
    ev_oracle_row o;
    const unsigned char *row = in + (size_t)r * (size_t)sh->stride * es;
    if (sh->rows == 0)
        return;
    for (long long i = 0; i < sh->rows; i++) /* the first row that differs from the twin, if any */
        if (memcmp(out + (size_t)i * es, twin + (size_t)i * es, es) != 0) {
            r = v->first_bad >= 0 ? v->first_bad : i;
            break;
        }
    row = in + (size_t)r * (size_t)sh->stride * es;
    memcpy(&got, out + (size_t)r * es, es);
    memcpy(&tw, twin + (size_t)r * es, es);
    ev_oracle_reduce_row(sh->op, sh->dtype, row, sh->cols, &o);
    printf("#   bad: %lld of %lld rows fail the oracle; row %lld: got %#x, twin %#x, oracle %a; x[0..]:",
           (long long)v->mismatches, (long long)sh->rows, r, got, tw, o.ref);
    for (long long i = 0; i < sh->cols && i < 4; i++)
        printf(" %a", (double)ev_dtype_load(sh->dtype, row, (size_t)i));
    printf("\n");
}

/* Enqueues one op of a; exits on error (a benchmark program may). */
static void kb_enqueue(const kb_arm *a, cudaStream_t s)
{
    ev_err err;
    ev_status rc;
    switch (a->kind) {
    case 0: rc = ev_cuda_reduce_launch(a->plan, a->b, s, &err); break;
    case 1: rc = ev_cub_peer_launch(a->cub, s, &err); break;
    case 2: rc = ev_cuda_floor_launch(s, &err); break;
    default: rc = ev_cuda_ceiling_launch(a->ceil, a->ceil_len, a->sms, a->sink, s, &err); break;
    }
    if (rc) {
        fprintf(stderr, "kernel-bench: %s\n", err.msg);
        exit(1);
    }
}

/*
 * KB_WORKER_L2 (a diagnosis of the eighth evidence run, docs/perf-notes.md),
 * read once by main: bit 0 sets the persisting-L2 limit to 0 at start,
 * bit 1 resets the persisting lines before every timed sample (what the
 * worker's cuda backend did from d1ef4a8 to the ninth run), bit 2 resets
 * them once at start, after the limit (what it does since); unset or 0:
 * none of it (kernel-bench before the device record existed).
 */
static int kb_l2 = 0;

static int kb_l2_mode(void)
{
    const char *e = getenv("KB_WORKER_L2");
    char *end = NULL;
    long m = e ? strtol(e, &end, 10) : 0;
    if (e && (end == e || *end || m < 0 || m > 7)) {
        fprintf(stderr, "kernel-bench: KB_WORKER_L2=%s: want 0 .. 7 (bit 0 the limit, bit 1 the reset before "
                        "every sample, bit 2 one reset at start)\n", e);
        exit(2);
    }
    return (int)m;
}

/* Returns the median microseconds per op of a (100-op graph, 7 samples). */
static double kb_time(const kb_arm *a, cudaStream_t s)
{
    cudaGraph_t g;
    cudaGraphExec_t x;
    cudaEvent_t e0, e1;
    const int ops = 100;
    long long k = 1;
    float ms = 0.0f, total = 0.0f;
    double v[7];
    KB_CHECK(cudaEventCreate(&e0), "event");
    KB_CHECK(cudaEventCreate(&e1), "event");
    KB_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "capture");
    for (int i = 0; i < ops; i++)
        kb_enqueue(a, s);
    KB_CHECK(cudaStreamEndCapture(s, &g), "end capture");
    KB_CHECK(cudaGraphInstantiate(&x, g, 0), "instantiate");
    for (;;) { /* warm up >= 200 ms while calibrating to ~50 ms per sample */
        KB_CHECK(cudaEventRecord(e0, s), "record");
        for (long long i = 0; i < k; i++)
            KB_CHECK(cudaGraphLaunch(x, s), "graph launch");
        KB_CHECK(cudaEventRecord(e1, s), "record");
        KB_CHECK(cudaEventSynchronize(e1), "sync");
        KB_CHECK(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
        total += ms;
        if (ms >= 40.0f && total >= 200.0f)
            break;
        k = ms < 1.0f ? k * 8 : (long long)((double)k * 50.0 / ms) + 1;
    }
    for (int r = 0; r < 7; r++) {
        if (kb_l2 & 2) { /* the reset before every sample (backend_cuda.cu before the ninth run) */
            KB_CHECK(cudaStreamSynchronize(s), "sync");
            KB_CHECK(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
        }
        KB_CHECK(cudaEventRecord(e0, s), "record");
        for (long long i = 0; i < k; i++)
            KB_CHECK(cudaGraphLaunch(x, s), "graph launch");
        KB_CHECK(cudaEventRecord(e1, s), "record");
        KB_CHECK(cudaEventSynchronize(e1), "sync");
        KB_CHECK(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
        v[r] = (double)ms * 1000.0 / ((double)k * ops);
    }
    for (int i = 1; i < 7; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    KB_CHECK(cudaGraphExecDestroy(x), "destroy");
    KB_CHECK(cudaGraphDestroy(g), "destroy");
    KB_CHECK(cudaEventDestroy(e0), "event");
    KB_CHECK(cudaEventDestroy(e1), "event");
    return v[3];
}

/* 1 when case ci is in KB_CASES (a comma list of indices), or it is unset. */
static int kb_selected(size_t ci)
{
    const char *s = getenv("KB_CASES");
    if (s == NULL || !*s)
        return 1;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s)
            return 0;
        if ((size_t)v == ci)
            return 1;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return 0;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    cudaDeviceProp prop;
    cudaStream_t s;
    int failed = 0;
    double floor_us = 0.0, ceil_bw = 0.0;

    if (argc > 2 || (argc == 2 && !quick)) {
        fprintf(stderr, "usage: kernel-bench [--quick]\n");
        return 2;
    }
    KB_CHECK(cudaGetDeviceProperties(&prop, 0), "device");
    KB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
    kb_l2 = kb_l2_mode();
    if (kb_l2 & 1)
        KB_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), "cudaDeviceSetLimit(PersistingL2CacheSize, 0)");
    if (kb_l2 & 4)
        KB_CHECK(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
    printf("# %s, %d SMs, L2 %d bytes (KB_WORKER_L2 %d)\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize,
           kb_l2);
    if (!quick) {
        kb_arm a;
        size_t n = (size_t)1 << 30;
        void *buf;
        uint32_t *sink;
        memset(&a, 0, sizeof a);
        a.kind = 2;
        floor_us = kb_time(&a, s);
        KB_CHECK(cudaMalloc(&buf, n), "ceiling buffer");
        KB_CHECK(cudaMemset(buf, 0x5a, n), "ceiling fill");
        KB_CHECK(cudaMalloc((void **)&sink, 4096 * 4), "sink");
        a.kind = 3;
        a.ceil = buf;
        a.ceil_len = n;
        a.sink = sink;
        a.sms = prop.multiProcessorCount;
        ceil_bw = (double)n / (kb_time(&a, s) * 1e-6);
        printf("# floor %.3f us/op; ceiling: 1 GiB read at %.3f TB/s\n", floor_us, ceil_bw * 1e-12);
        KB_CHECK(cudaFree(buf), "free");
        KB_CHECK(cudaFree(sink), "free");
    }
    printf("%-10s %-4s %7s %8s %8s %2s %-8s %-24s %11s %5s %10s %8s %7s %7s\n", "op", "dt", "rows", "cols",
           "stride", "B", "sched", "entry", "bytes", "valid", "us/op", "TB/s", "of_ceil", "x_floor");
    for (size_t ci = 0; ci < sizeof kb_cases / sizeof kb_cases[0]; ci++) {
        const kb_case *kc = &kb_cases[ci];
        if (!kb_selected(ci))
            continue;
        ev_shape sh;
        ev_binding b;
        ev_err err;
        size_t es, in_len, out_len;
        unsigned char *h_in, *h_out, *h_twin;
        void *d_in, *d_out;

        sh.op = kc->op;
        sh.dtype = kc->dtype;
        sh.rows = kc->rows;
        sh.cols = kc->cols;
        sh.stride = kc->stride;
        es = ev_dtype_size(sh.dtype);
        in_len = kc->rows ? ((size_t)(kc->rows - 1) * (size_t)kc->stride + (size_t)kc->cols) * es : 0;
        out_len = (size_t)kc->rows * es;
        h_in = (unsigned char *)malloc(in_len + 16);
        h_out = (unsigned char *)malloc(out_len + 16);
        h_twin = (unsigned char *)malloc(out_len + 16);
        if (h_in == NULL || h_out == NULL || h_twin == NULL || ev_inputs_fill(&sh, 1, ci, h_in, in_len, &err)) {
            fprintf(stderr, "kernel-bench: case %zu: input\n", ci);
            return 1;
        }
        if (kc->special)
            kb_specials(h_in, kc->rows, kc->cols, kc->stride, es, sh.dtype == EV_DTYPE_FP16);
        /* exactly as the backend allocates it (backend_cuda.cu): to the next
         * 16-byte boundary, so that a memory checker sees any read past it */
        KB_CHECK(cudaMalloc(&d_in, ev_input_alloc_bytes(in_len)), "input");
        KB_CHECK(cudaMemset(d_in, 0, ev_input_alloc_bytes(in_len)), "input tail");
        KB_CHECK(cudaMalloc(&d_out, out_len + 16), "output");
        KB_CHECK(cudaMemcpy(d_in, h_in, in_len, cudaMemcpyHostToDevice), "copy in");
        memset(&b, 0, sizeof b);
        b.shape = sh;
        b.in = d_in;
        b.in_span = in_len;
        b.out = d_out;
        b.out_span = out_len;
        if (ev_binding_check(&b, &err)) {
            fprintf(stderr, "kernel-bench: case %zu: %s\n", ci, err.msg);
            return 1;
        }
        { /* the CPU twin, from host copies of the same bytes */
            ev_binding hb = b;
            hb.in = h_in;
            hb.out = h_twin;
            ev_reduce_rows(&hb, 0, sh.rows);
        }
        for (size_t si = 0; si < KB_ARMS; si++) {
            const char *arm = si < KB_NATIVE ? ev_sched_name((ev_sched)si) : ev_arm_kind_name(EV_ARM_CUB);
            ev_launch_plan plan;
            kb_arm a;
            ev_validation v;
            int twin_ok = 1;
            double us = 0.0, bytes = (double)(in_len + out_len);
            memset(&a, 0, sizeof a);
            memset(&plan, 0, sizeof plan);
            a.b = &b;
            if (si < KB_NATIVE) {
                ev_sched sc = (ev_sched)si;
                if (ev_sched_rows_of(sc, kc->B, sh.cols, sh.dtype) < 1)
                    continue; /* short on rows of more than 32 chunks, split on rows of 64 KiB or less */
                if (ev_selector_plan(EV_SEL_CUDA, &sh, sc, kc->B, prop.multiProcessorCount, &plan, &err)) {
                    fprintf(stderr, "kernel-bench: %s\n", err.msg);
                    return 1;
                }
                a.kind = 0;
                a.plan = &plan;
            } else {
                a.kind = 1;
                if (ev_cub_peer_new(&b, &a.cub, &err)) {
                    fprintf(stderr, "kernel-bench: %s\n", err.msg);
                    return 1;
                }
                snprintf(plan.entry, sizeof plan.entry, "cub::DeviceSegmentedReduce");
            }
            KB_CHECK(cudaMemset(d_out, 0xff, out_len + 16), "poison");
            kb_enqueue(&a, s);
            KB_CHECK(cudaStreamSynchronize(s), "sync");
            KB_CHECK(cudaGetLastError(), "launch");
            KB_CHECK(cudaMemcpy(h_out, d_out, out_len, cudaMemcpyDeviceToHost), "copy out");
            ev_oracle_validate(&sh, h_in, h_out, 0, &v, &err);
            if (si < KB_NATIVE)
                twin_ok = memcmp(h_out, h_twin, out_len) == 0;
            if (!v.passed || !twin_ok)
                failed = 1;
            if (!quick && !kc->special && sh.rows > 0)
                us = kb_time(&a, s);
            printf("%-10s %-4s %7lld %8lld %8lld %2lld %-8s %-24s %11.0f %5s %10.3f %8.3f %7.3f %7.2f\n",
                   ev_op_name(kc->op), ev_dtype_name(kc->dtype), kc->rows, kc->cols, kc->stride, kc->B, arm,
                   plan.entry, bytes,
                   !v.passed ? "ORACLE" : !twin_ok ? "TWIN" : "ok", us, us > 0 ? bytes / us * 1e-6 : 0.0,
                   us > 0 && ceil_bw > 0 ? bytes / (us * 1e-6) / ceil_bw : 0.0,
                   us > 0 && floor_us > 0 ? us / floor_us : 0.0);
            if (!v.passed || !twin_ok)
                kb_report_bad(&sh, h_in, h_out, h_twin, &v);
            fflush(stdout);
            ev_cub_peer_free(a.cub);
        }
        KB_CHECK(cudaFree(d_in), "free");
        KB_CHECK(cudaFree(d_out), "free");
        free(h_in);
        free(h_out);
        free(h_twin);
    }
    printf(failed ? "kernel-bench: FAILED validation\n" : "kernel-bench: all outputs valid\n");
    return failed ? 1 : 0;
}
