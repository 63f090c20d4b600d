/*
 * khost_cost_main.c: build/evident-khost-cost, what running an external
 * kernel in a process of its own (khost.h) costs per batch against calling
 * it in the worker's own process, as the cpu backend did before.
 *
 *   [KHOST_OWN_CPUS=1] evident-khost-cost [--protocol FILE] [--batches N] [--ops N]
 *
 * KHOST_OWN_CPUS=1: the handshake spins, as a run whose protocol gives the
 * job a cpu_set of two CPUs or more does (khost.h); otherwise it sleeps
 * on its futex words, as every other run does.
 * For every case of the protocol (default protocols/quick.json) that
 * examples/ext-simple implements, and for an empty kernel (the handshake
 * alone): builds the kernel with the runner's own compile, fills the
 * case's input (kernels/inputs.h), then times N batches of ops calls
 * (default 200 x the protocol's ops_per_graph) both ways, in turns of
 * ten batches so that load on the host hits both alike, and prints the median per batch of each, their difference and
 * ratio.  A measurement for docs/defenses.md, not a test.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "evident_kernel.h"
#include "runner/ext_compile.h"
#include "runner/job.h"
#include "runner/khost.h"
#include "runner/protocol.h"
#include "stats.h"
#include "vocab.h"

/* Batches timed one way before the other way's turn. */
#define BLOCK 10

/* Monotonic time in ns. */
static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Compiles src (a path under the repository) into dir/name.so with the
 * runner's compile.  Returns 0. */
static int build(const ev_ext_toolchain *t, const char *src, const char *dir, const char *name, char *out,
                 size_t cap)
{
    ev_ext_limits lim = EV_EXT_LIMITS_DEFAULT;
    ev_ext_compiled c;
    ev_err e;
    int bad;
    snprintf(out, cap, "%s/%s.so", dir, name);
    if (ev_ext_compile(t, ".", src, out, &lim, &c, &e))
        return -1;
    bad = c.status != 0;
    if (bad)
        fprintf(stderr, "%s: %s\n", src, c.msg.data);
    ev_ext_compiled_free(&c);
    return bad ? -1 : 0;
}

/* Times batches of ops calls of entry fn on one input and output, in
 * process and through a kernel host, alternating.  Prints one line. */
static int measure(const char *label, const char *lib, const char *entry, const ev_shape *s,
                   const void *input, size_t in_len, int64_t ops, int batches)
{
    void *so = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    evident_cpu_entry fn = NULL;
    size_t page = 4096, in_pages = (in_len + page - 1) / page * page, out_len = (size_t)s->rows * 4 + 64;
    size_t out_pages = (out_len + page - 1) / page * page, data = in_pages + out_pages;
    ev_khost_region reg[2] = {{0, in_pages, PROT_READ, "input"},
                              {in_pages, out_pages, PROT_READ | PROT_WRITE, "output"}};
    ev_khost *h = NULL;
    ev_err e;
    double *a = calloc((size_t)batches, sizeof *a), *b = calloc((size_t)batches, sizeof *b), ma, mb, mc;
    double *c = calloc((size_t)batches, sizeof *c);
    void *in = malloc(in_len ? in_len : 1), *out = malloc(out_len);
    ev_khost_call *calls = calloc((size_t)ops, sizeof *calls);

    if (!so || !a || !b || !c || !in || !out || !calls)
        return -1;
    *(void **)&fn = dlsym(so, entry);
    if (!fn || ev_khost_start(label, lib, entry, (size_t)ops, data, reg, 2, getenv("KHOST_OWN_CPUS") != NULL,
                              0, &h, &e)) {
        fprintf(stderr, "%s: %s\n", label, fn ? e.msg : "no entry");
        return -1;
    }
    memcpy(in, input, in_len);
    memcpy(ev_khost_data(h), input, in_len);
    for (int64_t i = 0; i < ops; i++)
        calls[i] = (ev_khost_call){0, in_pages};
    ev_khost_calls(h, 0, calls, (size_t)ops, s->rows, s->cols, s->stride);
    /* blocks of BLOCK batches each way in turn (the first block of each
     * warms up): a process woken right after the other way's block would
     * otherwise pay for its CPU time in the scheduler's fairness */
    for (int k0 = -BLOCK; k0 < batches; k0 += BLOCK)
        for (int way = 0; way < 2; way++)
            for (int k = k0; k < k0 + BLOCK && k < batches; k++) {
                int64_t t0 = now_ns(), t1;
                if (!way) {
                    for (int64_t i = 0; i < ops; i++)
                        fn(in, out, s->rows, s->cols, s->stride);
                } else if (ev_khost_run(h, 0, (uint64_t)ops, &e)) {
                    fprintf(stderr, "%s: %s\n", label, e.msg);
                    return -1;
                }
                t1 = now_ns();
                if (k >= 0 && !way)
                    a[k] = (double)(t1 - t0) / 1e3;
                if (k >= 0 && way) {
                    b[k] = (double)(t1 - t0) / 1e3;
                    c[k] = (double)ev_khost_calls_ns(h) / 1e3;
                }
            }
    ev_median(a, (size_t)batches, &ma);
    ev_median(b, (size_t)batches, &mb);
    ev_median(c, (size_t)batches, &mc);
    printf("%-34s %10.2f %10.2f %11.2f %10.2f %8.3f\n", label, ma, mb, mc, mb - ma, ma > 0 ? mb / ma : 0);
    ev_khost_stop(h);
    dlclose(so);
    free(a);
    free(b);
    free(c);
    free(in);
    free(out);
    free(calls);
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = "protocols/quick.json";
    static const struct {
        ev_op op;
        ev_dtype dtype;
        const char *entry;
    } entries[] = {{EV_OP_SUM, EV_DTYPE_FP32, "ex_sum_f32"},
                   {EV_OP_MAX, EV_DTYPE_FP32, "ex_max_f32"},
                   {EV_OP_SUM, EV_DTYPE_BF16, "ex_sum_bf16"}};
    int batches = 200, ops = 0;
    ev_buf bytes = EV_BUF_INIT;
    ev_protocol p;
    ev_ext_toolchain t;
    ev_err e;
    char dir[] = "/tmp/evident-khost-cost-XXXXXX", simple[4200], empty[4200];

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--protocol"))
            path = argv[i + 1];
        else if (!strcmp(argv[i], "--batches"))
            batches = (int)strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--ops"))
            ops = (int)strtol(argv[i + 1], NULL, 10);
    }
    if (batches < 10 || ev_read_file(path, &bytes, &e) || ev_protocol_parse(bytes.data, bytes.len, &p, &e) ||
        !mkdtemp(dir) || ev_ext_toolchain_of("cpu", &t, &e)) {
        fprintf(stderr,
                "usage: evident-khost-cost [--protocol FILE] [--batches N >= 10] [--ops N] (run in the "
                "repository)\n");
        return 2;
    }
    if (ops <= 0)
        ops = (int)p.ops_per_graph;
    {
        FILE *f;
        char src[4300];
        snprintf(src, sizeof src, "%s/empty.c", dir);
        if (!(f = fopen(src, "w")))
            return 2;
        fputs("#include <stdint.h>\nint ex_empty(const void *i, void *o, int64_t r, int64_t c, int64_t s);\n"
              "int ex_empty(const void *i, void *o, int64_t r, int64_t c, int64_t s)\n"
              "{ (void)i; (void)o; (void)r; (void)c; (void)s; return 0; }\n",
              f);
        fclose(f);
        if (build(&t, "examples/ext-simple/simple.c", dir, "simple", simple, sizeof simple))
            return 1;
        /* the empty kernel: compiled where it is (an absolute path: a measurement, not a receipt) */
        ev_ext_limits lim = EV_EXT_LIMITS_DEFAULT;
        ev_ext_compiled c;
        snprintf(empty, sizeof empty, "%s/empty.so", dir);
        if (ev_ext_compile(&t, dir, "empty.c", empty, &lim, &c, &e) || c.status)
            return 1;
        ev_ext_compiled_free(&c);
    }
    printf("%s: %d batches of %d calls each way, us per batch (medians)\n", path, batches, ops);
    printf("%-34s %10s %10s %11s %10s %8s\n", "case / kernel", "in-process", "own proc", "(its calls)",
           "cost", "ratio");
    for (size_t i = 0; i < p.n_cases; i++) {
        const ev_proto_case *c = &p.cases[i];
        for (size_t k = 0; k < 3; k++) {
            ev_shape s;
            void *in = NULL;
            size_t len = 0;
            char label[96];
            if (!ev_is_op(c->op, entries[k].op) || !ev_is_dtype(c->dtype, entries[k].dtype))
                continue;
            if (ev_job_input(&p, (int64_t)i, &s, &in, &len, &e) || s.rows < 1) {
                free(in);
                continue;
            }
            snprintf(label, sizeof label, "%s %lldx%lld %s", c->op, (long long)c->rows, (long long)c->cols,
                     c->dtype);
            measure(label, simple, entries[k].entry, &s, in, len, ops, batches);
            snprintf(label, sizeof label, "  empty kernel, same buffers");
            measure(label, empty, "ex_empty", &s, in, len, ops, batches);
            free(in);
        }
    }
    {
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd))
            fprintf(stderr, "cannot remove %s\n", dir);
    }
    ev_ext_toolchain_free(&t);
    ev_protocol_free(&p);
    ev_buf_free(&bytes);
    return 0;
}
