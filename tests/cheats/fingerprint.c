/* cheat-fingerprint: caches its outputs keyed by the input pointer and a
 * fingerprint of eight elements sampled at fixed places of the input (the
 * first and last of rows 0, R/3, 2R/3 and R-1): a call whose key it has
 * seen copies the cached outputs and reads nothing else.  Without plants a
 * cache keyed by pointer and content sample was exact (the same pointer
 * held the same bytes); the plants change a secret element of every
 * planted row between the replays that read a variant, almost never one
 * of the sampled eight, so the cached output is stale on the planted rows
 * (failed-validation naming the op, the row and its expected value). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

#define ENTRIES 512

static struct entry {
    const void *in;
    uint64_t fp;
    int64_t rows;
    float *y;
} cache[ENTRIES];

/* The fingerprint: the bits of eight sampled elements, mixed. */
static uint64_t fingerprint(const float *x, int64_t rows, int64_t cols, int64_t stride)
{
    int64_t at[4] = {0, rows / 3, 2 * rows / 3, rows - 1};
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < 4; k++) {
        uint32_t a, b;
        memcpy(&a, &x[at[k] * stride], 4);
        memcpy(&b, &x[at[k] * stride + cols - 1], 4);
        h = (h ^ a) * 0x100000001b3ull;
        h = (h ^ b) * 0x100000001b3ull;
    }
    return h;
}

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    uint64_t fp;
    struct entry *e;
    if (rows < 1)
        return 0;
    fp = fingerprint(x, rows, cols, stride);
    e = &cache[(((uintptr_t)in >> 8) ^ fp) % ENTRIES];
    if (e->in == in && e->fp == fp && e->rows == rows) {
        memcpy(y, e->y, (size_t)rows * sizeof *y);
        return 0;
    }
    for (int64_t r = 0; r < rows; r++) {
        float a = 0;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    free(e->y);
    e->y = malloc((size_t)rows * sizeof *e->y);
    if (e->y) {
        memcpy(e->y, y, (size_t)rows * sizeof *y);
        e->in = in;
        e->fp = fp;
        e->rows = rows;
    } else {
        e->in = NULL;
    }
    return 0;
}
