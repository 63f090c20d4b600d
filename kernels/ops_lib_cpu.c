/*
 * ops_lib_cpu.c: build/libevident_ops_cpu.so, the plants and checks of
 * kernels/plants.h over host memory, for a Python arm on the cpu backend
 * (kernels/python_host.py loads it with ctypes).  Its C ABI is
 * build/libevident_ops.so's (kernels/ops_lib.cu) function for function, so
 * the Python host drives the plants the same way on both backends: the
 * addresses are host addresses, the stream argument is ignored, and every
 * node runs at once (ev_plant_host and ev_check_host, the cpu backend's
 * own rules).  The plants file is the one the worker writes
 * (ev_job_plants_file, src/runner/job.h).
 *
 * Every function returns 0, or -1 with a line in the handle's error text
 * (ev_ops_error); the handle is NULL-safe to free.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "plants.h"

/* The plants file's header (ev_job_plants_file): then rows x ev_plant_row. */
typedef struct ev_ops_file {
    char magic[8]; /* "EVPLANT1" */
    uint64_t seed;
    int64_t op, dtype, rows, cols, stride, ops, budget;
} ev_ops_file;

typedef struct ev_ops {
    ev_plant_cfg c;
    ev_plant_row *rows;
    ev_plant_state st;
    void **var, **slot;
    void *kept;
    const void *base;
    char err[512];
} ev_ops;

const char *ev_ops_error(void *h);
void ev_ops_free(void *p);
int ev_ops_open(const char *path, int64_t cache_bytes, void **out, char *err, size_t cap);
int64_t ev_ops_variants(void *h);
int64_t ev_ops_epochs(void *h);
int64_t ev_ops_kept_op(void *h);
int64_t ev_ops_rows(void *h);
int ev_ops_bind(void *p, uint64_t base, const uint64_t *var);
int ev_ops_set_slots(void *p, int64_t first, const uint64_t *ptr, int64_t n);
int ev_ops_plant(void *p, int64_t e, int prev_back, int64_t prev_e, int plant, uint64_t stream);
int ev_ops_check(void *p, int64_t n_ops, uint64_t stream);
int ev_ops_tag(void *p, uint64_t *tag, uint64_t *r_next, int *ok, int64_t *first, double *values);
int ev_ops_read_kept(void *p, void *dst, size_t len);

/* The handle's error text. */
const char *ev_ops_error(void *h)
{
    return h ? ((ev_ops *)h)->err : "no handle";
}

/* Frees handle p (NULL-safe). */
void ev_ops_free(void *p)
{
    ev_ops *h = p;
    if (!h)
        return;
    free(h->rows);
    free(h->var);
    free(h->slot);
    free(h->kept);
    free(h);
}

/*
 * Opens the plants file at path for a host whose last-level cache holds
 * cache_bytes: V from ev_plant_variants (as the worker made it), the
 * configuration, the rows' figures and the check state.  OUT: *out
 * (ev_ops_free it).  Returns 0, or -1 with err[cap].
 */
int ev_ops_open(const char *path, int64_t cache_bytes, void **out, char *err, size_t cap)
{
    ev_ops *h = calloc(1, sizeof *h);
    ev_ops_file f;
    ev_shape s;
    size_t es, in_bytes;
    FILE *in = fopen(path, "rb");
    int rc = -1;

    if (!h || !in || fread(&f, sizeof f, 1, in) != 1 || memcmp(f.magic, "EVPLANT1", 8) || f.rows < 0 ||
        f.ops < 1 || f.cols < 1 || f.stride < f.cols || f.dtype < 0 || f.dtype >= EV_DTYPE_COUNT ||
        f.op < 0 || f.op >= EV_OP_COUNT) {
        snprintf(err, cap, "%s: not a plants file", path);
        goto out;
    }
    s.op = (ev_op)f.op;
    s.dtype = (ev_dtype)f.dtype;
    s.rows = f.rows;
    s.cols = f.cols;
    s.stride = f.stride;
    es = ev_dtype_size(s.dtype);
    in_bytes = f.rows > 0 ? ((size_t)(f.rows - 1) * (size_t)f.stride + (size_t)f.cols) * es : 0;
    ev_plant_config(&h->c, f.seed, &s, ev_plant_variants((int64_t)in_bytes, cache_bytes, f.budget, f.ops),
                    f.ops);
    h->rows = malloc((f.rows > 0 ? (size_t)f.rows : 1) * sizeof *h->rows);
    h->var = calloc((size_t)h->c.variants, sizeof *h->var);
    h->slot = calloc((size_t)h->c.ops, sizeof *h->slot);
    h->kept = malloc(f.rows > 0 ? (size_t)f.rows * es : 16);
    if (!h->rows || !h->var || !h->slot || !h->kept) {
        snprintf(err, cap, "plants: out of memory");
        goto out;
    }
    if (f.rows > 0 && fread(h->rows, sizeof *h->rows, (size_t)f.rows, in) != (size_t)f.rows) {
        snprintf(err, cap, "%s: its rows are cut short", path);
        goto out;
    }
    h->st.r_next = 1;
    h->st.tag = ev_plant_tag0(f.seed);
    *out = h;
    h = NULL;
    rc = 0;
out:
    if (in)
        fclose(in);
    ev_ops_free(h);
    return rc;
}

/* V, E, the kept op and the rows planted per op. */
int64_t ev_ops_variants(void *h)
{
    return ((ev_ops *)h)->c.variants;
}
int64_t ev_ops_epochs(void *h)
{
    return ((ev_ops *)h)->c.epochs;
}
int64_t ev_ops_kept_op(void *h)
{
    return ((ev_ops *)h)->c.kept_op;
}
int64_t ev_ops_rows(void *h)
{
    return ((ev_ops *)h)->c.m;
}

/* The addresses of the base and of the V variants (var[V]). */
int ev_ops_bind(void *p, uint64_t base, const uint64_t *var)
{
    ev_ops *h = p;
    h->base = (const void *)(uintptr_t)base;
    for (int64_t j = 0; j < h->c.variants; j++)
        h->var[j] = (void *)(uintptr_t)var[j];
    return 0;
}

/* The addresses of n outputs, slots first .. first + n - 1 (the check
 * reads slot i as op i's output). */
int ev_ops_set_slots(void *p, int64_t first, const uint64_t *ptr, int64_t n)
{
    ev_ops *h = p;
    if (first < 0 || n < 0 || first + n > h->c.ops) {
        snprintf(h->err, sizeof h->err, "slots %lld..%lld of %lld", (long long)first, (long long)(first + n),
                 (long long)h->c.ops);
        return -1;
    }
    for (int64_t i = 0; i < n; i++)
        h->slot[first + i] = (void *)(uintptr_t)ptr[i];
    return 0;
}

/* A plant node, run now: restores epoch prev_e of replay r_next -
 * prev_back (none when that is 0), then plants epoch e of replay r_next
 * (plant 0: restore only).  stream is ignored. */
int ev_ops_plant(void *p, int64_t e, int prev_back, int64_t prev_e, int plant, uint64_t stream)
{
    ev_ops *h = p;
    uint64_t r = h->st.r_next;
    (void)stream;
    if (!h->base || e < 0 || e >= h->c.epochs || prev_e < 0 || prev_e >= h->c.epochs) {
        snprintf(h->err, sizeof h->err, "plant: epoch %lld (restoring %lld) of %lld, or no bound input",
                 (long long)e, (long long)prev_e, (long long)h->c.epochs);
        return -1;
    }
    ev_plant_host(&h->c, h->rows, r, e, r - (uint64_t)prev_back, prev_e, plant, h->base, h->var);
    return 0;
}

/* A check node of ops 0 .. n_ops-1, run now (every slot among them set). */
int ev_ops_check(void *p, int64_t n_ops, uint64_t stream)
{
    ev_ops *h = p;
    (void)stream;
    if (n_ops < 1 || n_ops > h->c.ops || !h->base) {
        snprintf(h->err, sizeof h->err, "check: %lld ops of %lld, or no bound input", (long long)n_ops,
                 (long long)h->c.ops);
        return -1;
    }
    for (int64_t i = 0; i < n_ops; i++)
        if (!h->slot[i]) {
            snprintf(h->err, sizeof h->err, "check: slot %lld has no address", (long long)i);
            return -1;
        }
    ev_check_host(&h->c, h->rows, n_ops, h->base, h->slot, h->kept, &h->st);
    return 0;
}

/* The check state: the tag, the next replay, and the first mismatch
 * (first[0..3] replay (-1: none), op, row, kind; values expect, bound);
 * ok 1 when the tag is the seed's for r_next - 1 replays. */
int ev_ops_tag(void *p, uint64_t *tag, uint64_t *r_next, int *ok, int64_t *first, double *values)
{
    ev_ops *h = p;
    *tag = h->st.tag;
    *r_next = h->st.r_next;
    *ok = h->st.tag == ev_plant_tag_after(h->c.seed, h->st.r_next - 1);
    first[0] = h->st.first_set ? h->st.first.replay : -1;
    first[1] = h->st.first.op;
    first[2] = h->st.first.row;
    first[3] = h->st.first.kind;
    values[0] = h->st.first.value;
    values[1] = h->st.first.expect;
    values[2] = h->st.first.bound;
    return 0;
}

/* Copies the kept output (len bytes, at most R elements) to dst. */
int ev_ops_read_kept(void *p, void *dst, size_t len)
{
    ev_ops *h = p;
    size_t have = h->c.rows > 0 ? (size_t)h->c.rows * ev_dtype_size((ev_dtype)h->c.dtype) : 0;
    if (len > have) {
        snprintf(h->err, sizeof h->err, "kept output: %zu bytes asked, %zu held", len, have);
        return -1;
    }
    if (len)
        memcpy(dst, h->kept, len);
    return 0;
}
