/*
 * inputs.c: splitmix64 + xoshiro256** input streams, rounding to the
 * storage dtype, and poison for the bytes no kernel may read.
 */
#include "inputs.h"

#include <string.h>

#include "buf.h"
#include "dtype.h"

uint64_t ev_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Returns x rotated left by k (0 < k < 64). */
static uint64_t ev_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256** step: advances s, returns the next output. */
static uint64_t ev_xoshiro(uint64_t s[4])
{
    uint64_t r = ev_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ev_rotl(s[3], 45);
    return r;
}

/* Writes the poison pattern of dtype d into element i of buf. */
static void ev_put_poison(ev_dtype d, unsigned char *buf, size_t i)
{
    if (d == EV_DTYPE_FP32) {
        uint32_t u = EV_POISON_FP32;
        memcpy(buf + i * 4, &u, 4);
    } else {
        uint16_t h = d == EV_DTYPE_FP16 ? EV_POISON_FP16 : EV_POISON_BF16;
        memcpy(buf + i * 2, &h, 2);
    }
}

/* Draws the cols valid elements of one row at row from stream st: each
 * uniform in [-1, 1) on a 2^-24 grid, rounded to the dtype. */
static void ev_fill_row(const ev_shape *s, uint64_t st[4], unsigned char *row)
{
    for (int64_t c = 0; c < s->cols; c++) {
        uint64_t x = ev_xoshiro(st) >> 40;                    /* 24 random bits */
        float f = (float)((int64_t)x - (1 << 23)) * 0x1p-23f; /* [-1, 1), exact */
        ev_dtype_store(s->dtype, row, (size_t)c, f);
    }
}

void ev_inputs_new_row(const ev_shape *s, uint64_t seed, int64_t r, void *row)
{
    uint64_t st[4], sm = seed ^ ev_rotl((uint64_t)r * 0x9fb21c651e98df25ull + 1, 17);
    for (int k = 0; k < 4; k++)
        st[k] = ev_splitmix64(&sm);
    ev_fill_row(s, st, row);
}

void ev_inputs_rewrite_row(const ev_shape *s, uint64_t seed, int64_t r, void *buf)
{
    ev_inputs_new_row(s, seed, r,
                      (unsigned char *)buf + (size_t)r * (size_t)s->stride * ev_dtype_size(s->dtype));
}

void ev_inputs_second_row(const ev_shape *s, uint64_t seed, int64_t r, void *row)
{
    ev_inputs_new_row(s, seed ^ 0x5ec0d5e7a11ce5edull, r, row);
}

void ev_inputs_second_set(const ev_shape *s, uint64_t seed, void *buf)
{
    for (int64_t r = 0; r < s->rows; r++)
        ev_inputs_second_row(s, seed, r,
                             (unsigned char *)buf + (size_t)r * (size_t)s->stride * ev_dtype_size(s->dtype));
}

void ev_inputs_rotation(uint64_t seed, int64_t samples, int64_t rows, int64_t *before, size_t *n,
                        int64_t *rows_out)
{
    uint64_t st = seed;
    *before = -1;
    *n = 0;
    if (rows < 1 || samples < 2)
        return;
    *before = 1 + (int64_t)(ev_splitmix64(&st) % (uint64_t)(samples - 1));
    *n = rows >= 16 ? (size_t)(rows / 16) : 1;
    for (size_t i = 0; rows_out && i < *n; i++)
        rows_out[i] = (int64_t)(ev_splitmix64(&st) % (uint64_t)rows);
}

void ev_inputs_stream_init(ev_inputs_stream *z, uint64_t seed, uint64_t case_key)
{
    uint64_t sm = seed ^ ev_rotl(case_key * 0xd1b54a32d192ed03ull, 29);
    for (int k = 0; k < 4; k++)
        z->st[k] = ev_splitmix64(&sm);
}

void ev_inputs_stream_row(const ev_shape *s, ev_inputs_stream *z, void *row)
{
    ev_fill_row(s, z->st, row);
}

void ev_inputs_stream_skip_row(const ev_shape *s, ev_inputs_stream *z)
{
    for (int64_t c = 0; c < s->cols; c++) /* one draw an element, as ev_fill_row */
        (void)ev_xoshiro(z->st);
}

ev_status ev_inputs_fill(const ev_shape *s, uint64_t seed, uint64_t case_key, void *buf, size_t span,
                         ev_err *err)
{
    unsigned char *p = buf;
    size_t es = ev_dtype_size(s->dtype);
    ev_inputs_stream z;
    size_t total;

    if ((unsigned)s->op >= EV_OP_COUNT || es == 0 || s->rows < 0 || s->cols < 1 || s->stride < s->cols)
        return ev_err_set(err, EV_EINVAL, "inputs: bad shape");
    if (s->rows > 0) {
        size_t need;
        if (ev_size_mul((size_t)(s->rows - 1), (size_t)s->stride, &need) ||
            ev_size_add(need, (size_t)s->cols, &need) || ev_size_mul(need, es, &need))
            return ev_err_set(err, EV_EINVAL, "inputs: shape overflows a size");
        if (span < need)
            return ev_err_set(err, EV_EINVAL, "inputs: span %zu bytes is too small for %zu", span, need);
        if (buf == NULL)
            return ev_err_set(err, EV_EINVAL, "inputs: NULL buffer");
    }
    ev_inputs_stream_init(&z, seed, case_key);
    total = span / es;
    for (size_t i = 0; i < total; i++)
        ev_put_poison(s->dtype, p, i);
    for (int64_t r = 0; r < s->rows; r++)
        ev_inputs_stream_row(s, &z, p + (size_t)r * (size_t)s->stride * es);
    if (span % es != 0)
        memset(p + total * es, 0xa5, span % es);
    return EV_OK;
}

void ev_inputs_poison_output(void *buf, size_t n)
{
    memset(buf, EV_POISON_OUT_BYTE, n);
}
