/*
 * plants.c: the host side of the plants (plants.h): each row's plant
 * figures, the attempt's configuration and tag, the secret layout of the
 * variants and output slots, and the plant and check nodes as host
 * functions for the cpu backend (the cuda backend's are kernels/plants_dev.cu,
 * on the same inline rules).
 */
#include "plants.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"

/* The largest finite magnitude of dtype d, less nothing: an expected
 * output at or past it would overflow. */
static double finite_max(int32_t d)
{
    return d == EV_DTYPE_FP16 ? 65504.0 : d == EV_DTYPE_BF16 ? 3.3895313892515355e38 : 3.4028234663852886e38;
}

/* The validation bound of a row of shape s (factor f) whose oracle value is
 * ref and whose sum of |x_i| is abs_sum: the SUM or the MEAN bound. */
static double row_bound(const ev_shape *s, int64_t depth, double f, double ref, double abs_sum)
{
    if (s->op == EV_OP_MEAN)
        return f * ev_oracle_mean_bound(s->dtype, s->cols, depth, ref, abs_sum);
    return f * ev_oracle_sum_bound(s->dtype, s->cols, depth, ref, abs_sum);
}

/* One row's SUM or MEAN plant figures: the exponent e of its plants (q 2^e,
 * q in [64, 128)) and B_hi over up to K sites in the row, or ok 0.  A MEAN
 * plant moves the expected output by (v - x)/N, so its v is N times a SUM
 * plant's.  See plants.h for the rule. */
static void sum_row(const ev_shape *s, int64_t depth, double f, int64_t K, const ev_oracle_row *o,
                    ev_plant_row *out)
{
    int32_t emin = s->dtype == EV_DTYPE_FP16 ? -24 : -120, emax = s->dtype == EV_DTYPE_FP16 ? 8 : 120;
    double n = s->op == EV_OP_MEAN ? (double)s->cols : 1.0;
    double b = row_bound(s, depth, f, o->ref, o->abs_sum);
    memset(out, 0, sizeof *out);
    out->ref = o->ref;
    if (!isfinite(o->ref) || !isfinite(b))
        return;
    for (int it = 0; it < 64; it++) {
        double t = 2.5 * b * n + 1.5, wmax, hi;
        int ex;
        (void)frexp(t / 64.0, &ex); /* t / 64 <= 2^ex */
        if (ex < emin)
            ex = emin;
        if (ex > emax)
            return;
        wmax = ldexp(128.0, ex) * (double)K; /* K sites' worth (K = 1: the figures of schema 6 and before) */
        hi = row_bound(s, depth, f, fabs(o->ref) + ((double)K + wmax) / n, o->abs_sum + wmax);
        if (!isfinite(hi) || fabs(o->ref) + ((double)K + wmax) / n + hi >= finite_max(s->dtype))
            return;
        if ((ldexp(64.0, ex) - 1.0) / n > 2.0 * hi) {
            out->bound = hi;
            out->k = ex;
            out->ok = 1;
            return;
        }
        b = hi > 1.25 * b ? hi : 1.25 * b;
    }
}

ev_status ev_plant_rows(const ev_shape *s, int64_t depth, double factor, int64_t sites,
                        const ev_oracle_row *o, ev_plant_row *out, ev_err *err)
{
    double f = factor > 1 ? factor : 1;
    int64_t K = sites < 1 ? 1 : sites > EV_PLANT_SITES ? EV_PLANT_SITES : sites;
    if (s->op != EV_OP_SUM && s->op != EV_OP_MAX && s->op != EV_OP_MIN && s->op != EV_OP_MEAN)
        return ev_err_set(
            err, EV_EINVAL,
            "op %d has no plant rule: add its case to ev_plant_rows, ev_plant_site_value, ev_plant_make and "
            "ev_plant_ok (kernels/plants.h) beside its oracle",
            (int)s->op);
    for (int64_t r = 0; r < s->rows; r++) {
        ev_plant_row *p = &out[r];
        switch (s->op) {
        case EV_OP_MAX: {
            double q0 = floor(64.0 * o[r].ref) + 1.0;
            memset(p, 0, sizeof *p);
            p->ref = o[r].ref;
            p->ok = isfinite(o[r].ref) && q0 + 95.0 < 256.0 && q0 + 32.0 > -256.0;
            p->k = p->ok ? (int32_t)q0 : 0;
            break;
        }
        case EV_OP_MIN: {
            double q0 = ceil(64.0 * o[r].ref) - 1.0;
            memset(p, 0, sizeof *p);
            p->ref = o[r].ref;
            p->ok = isfinite(o[r].ref) && q0 - 95.0 > -256.0 && q0 - 32.0 < 256.0;
            p->k = p->ok ? (int32_t)q0 : 0;
            break;
        }
        default: /* EV_OP_SUM, EV_OP_MEAN */
            sum_row(s, depth, f, K, &o[r], p);
            break;
        }
        if (!p->ok)
            return ev_err_set(
                err, EV_EINVAL,
                "row %lld cannot be planted: no %s value moves its expected output (%.6g) by "
                "more than twice its bound within %s's range (the case's tolerance is too wide: "
                "sum_bound_factor, sum_depth)",
                (long long)r, ev_dtype_name(s->dtype), o[r].ref, ev_dtype_name(s->dtype));
    }
    return EV_OK;
}

int64_t ev_plant_variants(int64_t input_bytes, int64_t cache_bytes, int64_t budget, int64_t ops)
{
    int64_t room = input_bytes <= cache_bytes / 2 ? cache_bytes / 2 : budget, v;
    if (input_bytes <= 0)
        return 2;
    v = room / input_bytes;
    if (v > ops)
        v = ops;
    return v < 2 ? 2 : v;
}

void ev_plant_config(ev_plant_cfg *c, uint64_t seed, const ev_shape *s, int64_t variants, int64_t ops)
{
    memset(c, 0, sizeof *c);
    c->seed = seed;
    c->op = (int32_t)s->op;
    c->dtype = (int32_t)s->dtype;
    c->rows = s->rows;
    c->cols = s->cols;
    c->stride = s->stride;
    c->m = s->rows < EV_PLANT_ROWS ? s->rows : EV_PLANT_ROWS;
    c->variants = variants;
    c->ops = ops;
    c->epochs = variants > 0 ? (ops + variants - 1) / variants : 0;
    c->kept_op = ev_plant_kept_op(seed, ops);
    c->poison = ev_plant_poison(seed, c->dtype);
    c->sites = EV_PLANT_SITES;
}

uint64_t ev_plant_tag_after(uint64_t seed, uint64_t n)
{
    uint64_t t = ev_plant_tag0(seed);
    for (uint64_t r = 1; r <= n; r++)
        t = ev_plant_tag_step(t, seed, r, 0);
    return t;
}

ev_status ev_plant_layout(uint64_t seed, uint64_t salt, size_t n, size_t item, size_t guard, size_t *off,
                          size_t *total, ev_err *err)
{
    size_t *perm = malloc((n ? n : 1) * sizeof *perm), at = 0;
    if (!perm)
        return ev_err_set(err, EV_ENOMEM, "layout: out of memory");
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    for (size_t i = n; i > 1; i--) { /* Fisher-Yates: perm[place] is the buffer there */
        size_t j = (size_t)(ev_ph(seed, EV_PH_LAYOUT, salt, i, 0) % i), t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    for (size_t p = 0; p < n; p++) {
        at += guard + 256 * (size_t)(ev_ph(seed, EV_PH_LAYOUT, salt, p, 1) % 16);
        off[perm[p]] = at;
        at += item;
    }
    free(perm);
    *total = at + guard;
    return EV_OK;
}

/* Reads element i of dtype d at base as its raw bits. */
static uint32_t raw_bits(int32_t d, const void *base, size_t i)
{
    if (d == EV_DTYPE_FP32) {
        uint32_t u;
        memcpy(&u, (const unsigned char *)base + i * 4, 4);
        return u;
    } else {
        uint16_t h;
        memcpy(&h, (const unsigned char *)base + i * 2, 2);
        return h;
    }
}

/* Writes raw bits u to element i of dtype d at base. */
static void put_bits(int32_t d, void *base, size_t i, uint32_t u)
{
    if (d == EV_DTYPE_FP32) {
        memcpy((unsigned char *)base + i * 4, &u, 4);
    } else {
        uint16_t h = (uint16_t)u;
        memcpy((unsigned char *)base + i * 2, &h, 2);
    }
}

void ev_plant_host(const ev_plant_cfg *c, const ev_plant_row *rows, uint64_t r, int64_t e, uint64_t pr,
                   int64_t pe, int plant, const void *base, void *const *var)
{
    size_t es = ev_dtype_size((ev_dtype)c->dtype);
    for (int64_t j = 0; j < c->variants; j++) {
        unsigned char *v = var[j];
        for (int64_t k = 0; pr >= 1 && k < c->m; k++) {
            int64_t row[EV_PLANT_SITES], col[EV_PLANT_SITES];
            int32_t own[EV_PLANT_SITES], n = ev_plant_sites(c, pr, pe, j, k, row, col, own, NULL);
            for (int32_t i = 0; i < n; i++) {
                size_t at = ((size_t)row[i] * (size_t)c->stride + (size_t)col[i]) * es;
                memcpy(v + at, (const unsigned char *)base + at, es);
            }
        }
        for (int64_t k = 0; plant && k < c->m; k++) {
            ev_plant p;
            if (ev_plant_make(c, rows, r, e, j, k, NULL, &p))
                for (int32_t i = 0; i < p.n; i++)
                    if (p.own[i] >= 0)
                        put_bits(c->dtype, v, (size_t)p.row[i] * (size_t)c->stride + (size_t)p.col[i],
                                 p.bits[i]);
        }
    }
}

/* Records the attempt's first mismatch in st. */
static void first_miss(ev_plant_state *st, uint64_t r, int64_t op, int64_t row, int64_t kind, double value,
                       double expect, double bound)
{
    if (st->first_set)
        return;
    st->first_set = 1;
    st->first.replay = (int64_t)r;
    st->first.op = op;
    st->first.row = row;
    st->first.kind = kind;
    st->first.value = value;
    st->first.expect = expect;
    st->first.bound = bound;
}

/* Checks slot's rows of plant p (op `op` of replay r; made with the base,
 * ev_plant_make's 1, or not: ok 0), copying none, poisoning each row it
 * checked.  Returns the mismatches. */
static uint64_t check_plant(const ev_plant_cfg *c, const ev_plant *p, uint64_t r, int64_t op, void *slot,
                            ev_plant_state *st)
{
    uint64_t mism = 0;
    if (!p->ok) {
        first_miss(st, r, op, p->row[0], 1, NAN, NAN, NAN);
        for (int32_t i = 0; i < p->n; i++)
            if (p->own[i] == 1)
                put_bits(c->dtype, slot, (size_t)p->row[i], c->poison);
        return 1;
    }
    for (int32_t i = 0; i < p->n; i++) {
        if (p->own[i] != 1)
            continue;
        uint32_t b = raw_bits(c->dtype, slot, (size_t)p->row[i]);
        double y = ev_dtype_load((ev_dtype)c->dtype, slot, (size_t)p->row[i]);
        if (!ev_plant_ok(c, p, i, b, y)) {
            mism++;
            first_miss(st, r, op, p->row[i], 0, y, p->expect[i], p->bound[i]);
        }
        put_bits(c->dtype, slot, (size_t)p->row[i], c->poison);
    }
    return mism;
}

void ev_check_host(const ev_plant_cfg *c, const ev_plant_row *rows, int64_t n_ops, const void *base,
                   void *const *slot, void *kept, ev_plant_state *st)
{
    size_t es = ev_dtype_size((ev_dtype)c->dtype);
    uint64_t r = st->r_next, mism = 0;
    if (kept && c->kept_op < n_ops && c->rows > 0)
        memcpy(kept, slot[c->kept_op], (size_t)c->rows * es);
    for (int64_t i = 0; i < n_ops; i++) {
        int64_t e = i / c->variants, j = i % c->variants;
        for (int64_t k = 0; k < c->m; k++) {
            ev_plant p;
            (void)ev_plant_make(c, rows, r, e, j, k, base, &p);
            mism += check_plant(c, &p, r, i, slot[i], st);
        }
    }
    st->tag = ev_plant_tag_step(st->tag, c->seed, r, mism);
    st->r_next = r + 1;
}

int ev_plant_put_row(const ev_plant_cfg *c, const ev_plant *p, int64_t row, void *rowbuf)
{
    int hit = 0;
    for (int32_t i = 0; p->ok && i < p->n; i++)
        if (p->row[i] == row && p->own[i] >= 0) {
            put_bits(c->dtype, rowbuf, (size_t)p->col[i], p->bits[i]);
            hit = 1;
        }
    return hit;
}

int ev_plant_in_row(const ev_plant_cfg *c, const ev_plant_row *rows, uint64_t r, int64_t e, int64_t j,
                    int64_t row, void *rowbuf)
{
    int64_t k;
    ev_plant p;
    return ev_plant_planted(c, r, e, j, row, &k) && ev_plant_make(c, rows, r, e, j, k, NULL, &p) &&
           ev_plant_put_row(c, &p, row, rowbuf);
}

void ev_plant_oracle_rows(const ev_plant_cfg *c, const ev_plant_row *prow, uint64_t r, const ev_shape *s,
                          const void *input, ev_oracle_row *rows)
{
    int64_t e = c->variants ? c->kept_op / c->variants : 0, j = c->variants ? c->kept_op % c->variants : 0;
    size_t es = ev_dtype_size(s->dtype), rb = (size_t)s->cols * es;
    unsigned char *buf = malloc(rb ? rb : 1);
    if (!buf)
        return;
    for (int64_t k = 0; k < c->m; k++) {
        ev_plant p;
        if (!ev_plant_make(c, prow, r, e, j, k, NULL, &p))
            continue;
        for (int32_t i = 0; i < p.n; i++) {
            if (p.own[i] != 1)
                continue; /* each planted row once */
            memcpy(buf, (const unsigned char *)input + (size_t)p.row[i] * (size_t)s->stride * es, rb);
            if (ev_plant_put_row(c, &p, p.row[i], buf))
                ev_oracle_reduce_row(s->op, s->dtype, buf, s->cols, &rows[p.row[i]]);
        }
    }
    free(buf);
}

void ev_plant_table(const ev_plant_cfg *c, const ev_plant_row *rows, uint64_t r, const void *base,
                    ev_plant *tab)
{
    for (int64_t e = 0; e < c->epochs; e++)
        for (int64_t j = 0; j < c->variants; j++)
            for (int64_t k = 0; k < c->m; k++)
                (void)ev_plant_make(c, rows, r, e, j, k, base, &tab[(e * c->variants + j) * c->m + k]);
}

void ev_plant_apply(const ev_plant_cfg *c, const ev_plant *tab, int64_t e, int plant, const void *base,
                    void *const *var)
{
    size_t es = ev_dtype_size((ev_dtype)c->dtype);
    for (int64_t j = 0; j < c->variants; j++)
        for (int64_t k = 0; k < c->m; k++) {
            const ev_plant *p = &tab[(e * c->variants + j) * c->m + k];
            for (int32_t s = 0; s < p->n; s++) {
                size_t i = (size_t)p->row[s] * (size_t)c->stride + (size_t)p->col[s];
                if (!plant)
                    memcpy((unsigned char *)var[j] + i * es, (const unsigned char *)base + i * es, es);
                else if (p->ok && p->own[s] >= 0)
                    put_bits(c->dtype, var[j], i, p->bits[s]);
            }
        }
}

void ev_check_table(const ev_plant_cfg *c, const ev_plant *tab, int64_t n_ops, void *const *slot, void *kept,
                    ev_plant_state *st)
{
    size_t es = ev_dtype_size((ev_dtype)c->dtype);
    uint64_t r = st->r_next, mism = 0;
    if (kept && c->kept_op < n_ops && c->rows > 0)
        memcpy(kept, slot[c->kept_op], (size_t)c->rows * es);
    for (int64_t i = 0; i < n_ops; i++) {
        const ev_plant *p = &tab[i * c->m]; /* op i: epoch i / V, variant i mod V: entry (e V + j) m */
        for (int64_t k = 0; k < c->m; k++, p++)
            mism += check_plant(c, p, r, i, slot[i], st);
    }
    st->tag = ev_plant_tag_step(st->tag, c->seed, r, mism);
    st->r_next = r + 1;
}
