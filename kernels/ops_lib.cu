/*
 * ops_lib.cu: build/libevident_ops.so, the plants and checks of
 * kernels/plants.h for the torch-compile peer (kernels/peer_torch.py),
 * which loads it with ctypes: a C ABI of plain integers and pointers.
 * The peer runs under the same defence as every arm: its graph's ops read
 * V variants of the input (tensors of its own), a plant node before each
 * epoch and a check node after the last op, launched by this library on
 * the stream torch captures; the check reads the ops' outputs through a
 * device array of pointers the peer fills after the capture (torch
 * chooses where a compiled function's outputs live).
 *
 * Every function returns 0, or -1 with a line in the handle's error text
 * (ev_ops_error); the handle is NULL-safe to free.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "plants_cuda.h"
}

/* The plants file the worker writes for the peer (torch_peer.c): this
 * header, then rows x ev_plant_row. */
typedef struct ev_ops_file {
    char magic[8]; /* "EVPLANT1" */
    uint64_t seed;
    int64_t op, dtype, rows, cols, stride, ops, budget;
} ev_ops_file;

typedef struct ev_ops {
    ev_plant_cfg c;
    size_t in_bytes;
    ev_plant_row *d_rows;
    ev_plant_state *d_st;
    void **d_var, **d_slot, *d_kept;
    const void *base;
    char err[512];
} ev_ops;

/* Sets h's error text from the CUDA error e and what; returns -1. */
static int ev_ops_cuda(ev_ops *h, cudaError_t e, const char *what)
{
    snprintf(h->err, sizeof h->err, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}

extern "C" const char *ev_ops_error(void *h)
{
    return h ? ((ev_ops *)h)->err : "no handle";
}

extern "C" void ev_ops_free(void *p)
{
    ev_ops *h = (ev_ops *)p;
    if (!h)
        return;
    (void)cudaFree(h->d_rows);
    (void)cudaFree(h->d_st);
    (void)cudaFree(h->d_var);
    (void)cudaFree(h->d_slot);
    (void)cudaFree(h->d_kept);
    free(h);
}

/*
 * Opens the plants file at path for a device whose cache (L2) holds
 * cache_bytes: V from ev_plant_variants, the configuration, the rows'
 * figures and the check state on the device.  OUT: *out (ev_ops_free
 * it).  Returns 0, or -1 with err[cap].
 */
extern "C" int ev_ops_open(const char *path, int64_t cache_bytes, void **out, char *err, size_t cap)
{
    ev_ops *h = (ev_ops *)calloc(1, sizeof *h);
    ev_ops_file f;
    ev_plant_row *rows = NULL;
    ev_plant_state st;
    ev_shape s;
    cudaError_t e;
    FILE *in = fopen(path, "rb");
    int rc = -1;

    if (!h || !in || fread(&f, sizeof f, 1, in) != 1 || memcmp(f.magic, "EVPLANT1", 8) || f.rows < 0 ||
        f.ops < 1) {
        snprintf(err, cap, "%s: not a plants file", path);
        goto out;
    }
    s.op = (ev_op)f.op;
    s.dtype = (ev_dtype)f.dtype;
    s.rows = f.rows;
    s.cols = f.cols;
    s.stride = f.stride;
    h->in_bytes = f.rows > 0 ? ((size_t)(f.rows - 1) * (size_t)f.stride + (size_t)f.cols) * ev_dtype_size(s.dtype) : 0;
    ev_plant_config(&h->c, f.seed, &s, ev_plant_variants((int64_t)h->in_bytes, cache_bytes, f.budget, f.ops),
                    f.ops);
    rows = (ev_plant_row *)malloc((f.rows > 0 ? (size_t)f.rows : 1) * sizeof *rows);
    if (!rows || (f.rows > 0 && fread(rows, sizeof *rows, (size_t)f.rows, in) != (size_t)f.rows)) {
        snprintf(err, cap, "%s: its rows are cut short", path);
        goto out;
    }
    memset(&st, 0, sizeof st);
    st.r_next = 1;
    st.tag = ev_plant_tag0(f.seed);
    if ((e = cudaMalloc((void **)&h->d_rows, (f.rows > 0 ? (size_t)f.rows : 1) * sizeof *rows)) ||
        (f.rows > 0 && (e = cudaMemcpy(h->d_rows, rows, (size_t)f.rows * sizeof *rows, cudaMemcpyHostToDevice))) ||
        (e = cudaMalloc((void **)&h->d_st, sizeof st)) ||
        (e = cudaMemcpy(h->d_st, &st, sizeof st, cudaMemcpyHostToDevice)) ||
        (e = cudaMalloc((void **)&h->d_var, (size_t)h->c.variants * sizeof(void *))) ||
        (e = cudaMalloc((void **)&h->d_slot, (size_t)h->c.ops * sizeof(void *))) ||
        (e = cudaMemset(h->d_slot, 0, (size_t)h->c.ops * sizeof(void *))) ||
        (e = cudaMalloc(&h->d_kept, f.rows > 0 ? (size_t)f.rows * ev_dtype_size(s.dtype) : 16))) {
        snprintf(err, cap, "plants on the device: %s", cudaGetErrorString(e));
        goto out;
    }
    *out = h;
    h = NULL;
    rc = 0;
out:
    if (in)
        fclose(in);
    free(rows);
    ev_ops_free(h);
    return rc;
}

/* V, E, the kept op and the rows planted per op. */
extern "C" int64_t ev_ops_variants(void *h)
{
    return ((ev_ops *)h)->c.variants;
}
extern "C" int64_t ev_ops_epochs(void *h)
{
    return ((ev_ops *)h)->c.epochs;
}
extern "C" int64_t ev_ops_kept_op(void *h)
{
    return ((ev_ops *)h)->c.kept_op;
}
extern "C" int64_t ev_ops_rows(void *h)
{
    return ((ev_ops *)h)->c.m;
}

/* The device addresses of the base and of the V variants (var[V]). */
extern "C" int ev_ops_bind(void *p, uint64_t base, const uint64_t *var)
{
    ev_ops *h = (ev_ops *)p;
    cudaError_t e;
    h->base = (const void *)(uintptr_t)base;
    if ((e = cudaMemcpy(h->d_var, var, (size_t)h->c.variants * sizeof(void *), cudaMemcpyHostToDevice)))
        return ev_ops_cuda(h, e, "variant pointers");
    return 0;
}

/* The device addresses of n outputs, slots first .. first + n - 1 (the
 * check reads slot i as op i's output). */
extern "C" int ev_ops_set_slots(void *p, int64_t first, const uint64_t *ptr, int64_t n)
{
    ev_ops *h = (ev_ops *)p;
    cudaError_t e;
    if (first < 0 || n < 0 || first + n > h->c.ops) {
        snprintf(h->err, sizeof h->err, "slots %lld..%lld of %lld", (long long)first, (long long)(first + n),
                 (long long)h->c.ops);
        return -1;
    }
    if (n && (e = cudaMemcpy(h->d_slot + first, ptr, (size_t)n * sizeof(void *), cudaMemcpyHostToDevice)))
        return ev_ops_cuda(h, e, "slot pointers");
    return 0;
}

/* Enqueues a plant node on stream (a cudaStream_t as an integer): see
 * ev_cuda_plant_launch (epoch e; restoring epoch prev_e of replay
 * r_next - prev_back; plant 0: restore only). */
extern "C" int ev_ops_plant(void *p, int64_t e, int prev_back, int64_t prev_e, int plant, uint64_t stream)
{
    ev_ops *h = (ev_ops *)p;
    ev_err err;
    if (ev_cuda_plant_launch(&h->c, h->d_rows, e, prev_back, prev_e, plant, h->base, h->d_var, h->d_st,
                             (void *)(uintptr_t)stream, &err)) {
        snprintf(h->err, sizeof h->err, "%s", err.msg);
        return -1;
    }
    return 0;
}

/* Enqueues a check node of ops 0 .. n_ops-1 on stream. */
extern "C" int ev_ops_check(void *p, int64_t n_ops, uint64_t stream)
{
    ev_ops *h = (ev_ops *)p;
    ev_err err;
    if (ev_cuda_check_launch(&h->c, h->d_rows, n_ops, h->base, h->d_slot, h->d_kept, h->d_st,
                             (void *)(uintptr_t)stream, &err)) {
        snprintf(h->err, sizeof h->err, "%s", err.msg);
        return -1;
    }
    return 0;
}

/* The check state (synchronised): the tag, the next replay, and the
 * first mismatch (first[0..2] replay, op, row; kind; value, expect,
 * bound); ok 1 when the tag is the seed's for r_next - 1 replays. */
extern "C" int ev_ops_tag(void *p, uint64_t *tag, uint64_t *r_next, int *ok, int64_t *first, double *values)
{
    ev_ops *h = (ev_ops *)p;
    ev_plant_state st;
    cudaError_t e;
    if ((e = cudaDeviceSynchronize()) || (e = cudaMemcpy(&st, h->d_st, sizeof st, cudaMemcpyDeviceToHost)))
        return ev_ops_cuda(h, e, "read the check state");
    *tag = st.tag;
    *r_next = st.r_next;
    *ok = st.tag == ev_plant_tag_after(h->c.seed, st.r_next - 1);
    first[0] = st.first_set ? st.first.replay : -1;
    first[1] = st.first.op;
    first[2] = st.first.row;
    first[3] = st.first.kind;
    values[0] = st.first.value;
    values[1] = st.first.expect;
    values[2] = st.first.bound;
    return 0;
}

/* Copies the kept output (len bytes, at most R elements) to dst. */
extern "C" int ev_ops_read_kept(void *p, void *dst, size_t len)
{
    ev_ops *h = (ev_ops *)p;
    cudaError_t e;
    if (len && (e = cudaMemcpy(dst, h->d_kept, len, cudaMemcpyDeviceToHost)))
        return ev_ops_cuda(h, e, "read the kept output");
    return 0;
}
