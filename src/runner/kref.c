/*
 * kref.c: TEMPORARY dtype conversions, inputs, oracle and row reduction
 * (kref.h) until the kernels module's C code is on main.
 */
#include "kref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

size_t ev_kref_dtype_size(const char *dtype)
{
    return strcmp(dtype, "fp32") ? 2 : 4;
}

/* Bits of a float and back. */
static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* fp16 -> fp32 (exact). */
static float h2f(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f)
        return u2f(s | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0));
    if (e == 0)
        return (s ? -1.0f : 1.0f) * ldexpf((float)m, -24);
    return u2f(s | ((e + 112) << 23) | (m << 13));
}

/* fp32 -> fp16, round to nearest even, canonical NaN. */
static uint16_t f2h(float f)
{
    uint32_t u = f2u(f), s = (u >> 16) & 0x8000;
    float a = fabsf(f);
    if (isnan(f))
        return 0x7e00;
    if (a >= 65520.0f)
        return (uint16_t)(s | 0x7c00);
    if (a < 6.103515625e-05f) {    /* subnormal: multiples of 2^-24 */
        float q = a * 16777216.0f; /* exact */
        return (uint16_t)(s | (uint32_t)nearbyintf(q));
    }
    uint32_t au = u & 0x7fffffffu;
    uint32_t mant = au & 0x7fffff, exp = (au >> 23) - 112;
    uint32_t r = (exp << 10) | (mant >> 13), rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
        r++;
    return (uint16_t)(s | r);
}

/* bf16 <-> fp32. */
static float b2f(uint16_t b)
{
    return u2f((uint32_t)b << 16);
}
static uint16_t f2b(float f)
{
    uint32_t u = f2u(f);
    if (isnan(f))
        return 0x7fc0;
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

/* Element i of a dtype array, widened to fp32. */
static float load(const char *dt, const void *base, size_t i)
{
    if (dt[2] == '3')
        return ((const float *)base)[i];
    if (dt[0] == 'f')
        return h2f(((const uint16_t *)base)[i]);
    return b2f(((const uint16_t *)base)[i]);
}

/* Stores v (rounded) into element i. */
static void store(const char *dt, void *base, size_t i, float v)
{
    if (dt[2] == '3')
        ((float *)base)[i] = isnan(v) ? u2f(0x7fc00000u) : v;
    else if (dt[0] == 'f')
        ((uint16_t *)base)[i] = f2h(v);
    else
        ((uint16_t *)base)[i] = f2b(v);
}

/* splitmix64 step. */
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

ev_status ev_kref_input(const ev_proto_case *c, int64_t seed, int64_t case_index, void **buf, size_t *len,
                        ev_err *err)
{
    size_t es = ev_kref_dtype_size(c->dtype), n = 0, bytes;
    uint64_t s = (uint64_t)seed * UINT64_C(0x100000001B3) ^ (uint64_t)case_index;
    void *p;

    if (c->rows > 0)
        n = (size_t)(c->rows - 1) * (size_t)c->stride + (size_t)c->cols;
    if (ev_size_mul(n ? n : 1, es, &bytes))
        return ev_err_set(err, EV_ERANGE, "input: too large");
    p = malloc(bytes);
    if (!p)
        return ev_err_set(err, EV_ENOMEM, "input: out of memory (%zu bytes)", bytes);
    for (size_t i = 0; i < n; i++) {
        size_t col = i % (size_t)c->stride;
        float v;
        if (col >= (size_t)c->cols)
            v = 1.0e4f; /* padding: would show in any sum that reads it */
        else
            v = (float)((double)(mix(&s) >> 11) * 0x1p-53 * 2.0 - 1.0);
        store(c->dtype, p, i, v);
    }
    *buf = p;
    *len = n * es;
    return EV_OK;
}

void ev_kref_reduce_rows(const ev_proto_case *c, const void *in, void *out, int64_t r0, int64_t r1)
{
    int is_max = !strcmp(c->op, "reduce_max");

    for (int64_t r = r0; r < r1; r++) {
        size_t base = (size_t)r * (size_t)c->stride;
        float acc = is_max ? -INFINITY : 0.0f;
        int nan = 0;
        for (int64_t j = 0; j < c->cols; j++) {
            float v = load(c->dtype, in, base + (size_t)j);
            if (isnan(v))
                nan = 1;
            if (is_max)
                acc = v > acc ? v : acc;
            else
                acc += v;
        }
        store(c->dtype, out, (size_t)r, nan ? NAN : acc);
    }
}

void ev_kref_validate(const ev_proto_case *c, const void *in, const void *out, double factor,
                      ev_kref_check *res)
{
    int is_max = !strcmp(c->op, "reduce_max");
    double p = c->dtype[2] == '3' ? 0x1p-24 : c->dtype[0] == 'f' ? 0x1p-11 : 0x1p-8;
    ev_kref_check r = {1, 0, 0, 0};

    for (int64_t row = 0; row < c->rows; row++) {
        size_t base = (size_t)row * (size_t)c->stride;
        double sum = 0, abs_sum = 0, mx = -INFINITY;
        int nan = 0;
        for (int64_t j = 0; j < c->cols; j++) {
            double v = load(c->dtype, in, base + (size_t)j);
            if (isnan(v))
                nan = 1;
            sum += v;
            abs_sum += fabs(v);
            mx = v > mx ? v : mx;
        }
        float got = load(c->dtype, out, (size_t)row);
        if (nan) {
            if (!isnan(got))
                r.mismatches++;
            continue;
        }
        if (is_max) {
            unsigned char want[4], have[4];
            size_t es = ev_kref_dtype_size(c->dtype);
            char tmp[4];
            store(c->dtype, tmp, 0, (float)mx);
            memcpy(want, tmp, es);
            memcpy(have, (const char *)out + (size_t)row * es, es);
            if (memcmp(want, have, es))
                r.mismatches++;
            double e = fabs((double)got - mx);
            if (!(e <= r.max_abs_err))
                r.max_abs_err = isnan(e) ? INFINITY : e;
        } else {
            double bound = factor * ((double)c->cols * 0x1p-24 * abs_sum + p * fabs(sum));
            double e = fabs((double)got - sum);
            if (!(e <= bound))
                r.mismatches++;
            if (!(e <= r.max_abs_err))
                r.max_abs_err = isnan(e) ? INFINITY : e;
            if (bound > r.bound)
                r.bound = bound;
        }
    }
    if (!isfinite(r.max_abs_err))
        r.max_abs_err = 1e308; /* recorded as a finite marker; mismatches says why */
    r.passed = r.mismatches == 0;
    *res = r;
}
