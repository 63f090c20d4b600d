/*
 * plants.h: every op of every replay checked on input it cannot predict
 * (docs/defenses.md, "Every op earns its time").  One definition, for the
 * worker, the cpu backend, the cuda kernels (kernels/plants_dev.cu), the torch
 * peer's library (build/libevident_ops.so) and verify-bundle: the
 * functions below are EV_HD (kernels/hd.h), static inline because the
 * device needs their bodies in its translation unit.
 *
 * Terms.  A job's graph has `ops` ops; op i reads variant i mod V (V
 * copies of the case's base input, at secret offsets) and writes output
 * slot i.  Epoch e of a replay is ops eV .. eV+V-1: before it a plant
 * node restores the previous epoch's planted elements from the pristine
 * base and plants, in each variant j, one plant in each of m = min(R,
 * EV_PLANT_ROWS) strata of R/m rows: a secret count of elements (its
 * sites, 1 + the successes of up to EV_PLANT_SITES - 1 secret draws of
 * chance 1/4 in a row), each in a secret row of the stratum at a secret
 * column with a secret value; after the replay a check node compares
 * every op's planted rows with their expected output, poisons them, and
 * folds the count of mismatches into a tag chain.  Replays are counted from 1 (cold samples
 * and graph replays alike) by the device's own counter; the seed lives
 * only in our nodes' parameters.
 *
 * Why a secret count (store schema 7; one site a plant before, which
 * ev_plant_sites_at keeps for the bundles stored so): where every
 * stratum held exactly one planted element, a kernel could read each row
 * only up to it (a plant is larger than the data), answer the rest from
 * the row's output kept from an unplanted call, and pass every check
 * reading about half the input (tests/cheats/plantstop.c).  Now no
 * kernel knows that it has seen every planted element of a row or of a
 * stratum before it has read all of them: after any number of plants
 * found, another follows with a chance of 1/4 (up to EV_PLANT_SITES), and
 * every site moves its row's output past twice the bound, all of a
 * plant's the same way (no two cancel).
 *
 * Values.  A planted value moves its row's expected output by more than
 * twice the row's validation bound, as stored (the planted value is
 * exactly representable in every dtype: no rounding):
 *   reduce_sum: v = +-q 2^e, q in [64, 128), e per row (ev_plant_rows),
 *     the sign one for all sites of a plant:
 *     |v - x| >= 64 2^e - 1 > 2 B_hi, where B_hi bounds the check's bound of
 *     every planted version of the row (factor x ev_oracle_sum_bound of
 *     |ref| + K (1 + 128 2^e) and abs_sum + K 128 2^e, K the most sites):
 *     the check uses B_hi;
 *   reduce_max: v = q 2^-6, q = floor(64 max) + 1 + t, t in [32, 96) for
 *     each site: a new row maximum, compared bit for bit (the largest of
 *     the row's sites);
 *   reduce_min: v = q 2^-6, q = ceil(64 min) - 1 - t, t in [32, 96): a new
 *     row minimum, compared bit for bit;
 *   reduce_mean: v = +-q 2^e as for the sum, the expected mean moving by
 *     (v - x)/N: |v - x| / N > 2 B_hi, B_hi the mean's bound (factor x
 *     ev_oracle_mean_bound) of every planted version of the row.
 * A new op adds its case to the switches of ev_plant_rows, ev_plant_site_value,
 * ev_plant_make and ev_plant_ok (one rule per op, beside its oracle);
 * ev_plant_rows refuses an op without one, so no case of it is checkable.
 */
#ifndef EV_PLANTS_H
#define EV_PLANTS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "binding.h"
#include "hd.h"
#include "oracle.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* m, the plants (strata) per variant and epoch: min(R, EV_PLANT_ROWS). */
#define EV_PLANT_ROWS 256
/* The most sites (planted elements) of one plant, and the store schema
 * from which a plant has a secret count of them (1 before). */
#define EV_PLANT_SITES       4
#define EV_PLANT_SITES_SINCE 7

/* What every plant and check node of a job is given (kernel parameters:
 * the seed is in no buffer a kernel under test could read). */
typedef struct ev_plant_cfg {
    uint64_t seed;                 /* the attempt's secret seed (getrandom) */
    int32_t op, dtype;             /* ev_op, ev_dtype */
    int64_t rows, cols, stride;    /* the case's shape (stride in elements) */
    int64_t m;                     /* planted rows per variant and epoch */
    int64_t variants, ops, epochs; /* V, ops, E = ceil(ops / V) */
    int64_t kept_op;               /* the op whose output the check keeps (ev_plant_kept_op) */
    uint32_t poison;               /* the attempt's output poison bits (ev_plant_poison) */
    int64_t sites;                 /* the most sites of a plant (ev_plant_sites_at) */
} ev_plant_cfg;

/* A row's figures for its plants (ev_plant_rows, once per job). */
typedef struct ev_plant_row {
    double ref;   /* the oracle's reference: SUM the FP64 sum, MAX the maximum */
    double bound; /* SUM: B_hi, the check's bound for any plant of the row; MAX: 0 */
    int32_t k;    /* SUM: e (plant magnitude q 2^e); MAX: floor(64 max) + 1 */
    int32_t ok;   /* 1: plantable; 0: no plant moves the row far enough (ev_plant_rows says why) */
} ev_plant_row;

/* One plant (ev_plant_make): its n sites, the elements written, and what
 * each row it touches must then output.  A row is checked once, at its
 * first site (own 1); a later site of the same row has own 0, and a site
 * that repeats an earlier site's element own -1 (not planted). */
typedef struct ev_plant {
    int32_t n;                     /* its sites: 1 .. cfg sites */
    int32_t ok;                    /* 1: planted; 0: a row it touches is not plantable */
    int64_t row[EV_PLANT_SITES];   /* site i's row (of the plant's stratum) */
    int64_t col[EV_PLANT_SITES];   /* and column */
    uint32_t bits[EV_PLANT_SITES]; /* the planted element's storage bits */
    int32_t own[EV_PLANT_SITES];   /* 1, 0 or -1, above */
    double value[EV_PLANT_SITES];  /* the planted element's value */
    double expect[EV_PLANT_SITES]; /* own 1: the row's expected output (SUM: within bound of it; MAX: it) */
    double bound[EV_PLANT_SITES];  /* own 1: SUM the check's bound; MAX 0 */
    uint32_t out_bits[EV_PLANT_SITES]; /* own 1: MAX the expected output's bits */
} ev_plant;

/* The first mismatch a check saw in an attempt (advisory: the tag is the
 * verdict).  kind 0: an output outside its bound; 1: a row no plant could
 * be made for. */
typedef struct ev_plant_miss {
    int64_t replay, op, row, kind;
    double value, expect, bound;
} ev_plant_miss;

/* The device's (or the cpu backend's) check state: ours, beside no
 * buffer of a kernel under test. */
typedef struct ev_plant_state {
    uint64_t r_next;         /* the replay the next plant and check serve (from 1) */
    uint64_t tag;            /* T(r_next - 1) */
    unsigned long long mism; /* mismatches of the check running now (its last block resets it) */
    unsigned int ticket;     /* blocks of the check running now that finished */
    unsigned int first_set;  /* 1: first holds the attempt's first mismatch */
    ev_plant_miss first;
} ev_plant_state;

/* ---- the counter-based hash ---------------------------------------------- */

/* splitmix64's finaliser of z + the golden ratio. */
EV_HD static inline uint64_t ev_ph_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The hash of (seed, domain, a, b, c): every secret of an attempt is one
 * of these, each use its own domain. */
EV_HD static inline uint64_t ev_ph(uint64_t seed, uint64_t domain, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t h = ev_ph_mix(seed ^ ev_ph_mix(domain));
    h = ev_ph_mix(h ^ a);
    h = ev_ph_mix(h ^ (b * 0xd1b54a32d192ed03ull));
    return ev_ph_mix(h ^ (c * 0xaef17502108ef2d9ull));
}

#define EV_PH_SITE   1u
#define EV_PH_TAG0   2u
#define EV_PH_TAG    3u
#define EV_PH_KEPT   4u
#define EV_PH_POISON 5u
#define EV_PH_LAYOUT 6u
#define EV_PH_SITES  7u

/* ---- the attempt's secrets ----------------------------------------------- */

/* The op whose output the check node keeps (copied before it poisons). */
EV_HD static inline int64_t ev_plant_kept_op(uint64_t seed, int64_t ops)
{
    return ops > 0 ? (int64_t)(ev_ph(seed, EV_PH_KEPT, 0, 0, 0) % (uint64_t)ops) : 0;
}

/* The attempt's output poison: a NaN of dtype d with a secret payload and
 * sign (the low 16 bits for fp16 and bf16). */
EV_HD static inline uint32_t ev_plant_poison(uint64_t seed, int32_t d)
{
    uint64_t h = ev_ph(seed, EV_PH_POISON, 0, 0, 0);
    uint32_t sign = (uint32_t)(h >> 63);
    if (d == EV_DTYPE_FP16)
        return sign << 15 | 0x7c00u | (((uint32_t)h & 0x3ffu) | 1u);
    if (d == EV_DTYPE_BF16)
        return sign << 15 | 0x7f80u | (((uint32_t)h & 0x7fu) | 1u);
    return sign << 31 | 0x7f800000u | (((uint32_t)h & 0x7fffffu) | 1u);
}

/* The tag chain: T(0), and T(r) from T(r - 1) and replay r's mismatches. */
EV_HD static inline uint64_t ev_plant_tag0(uint64_t seed)
{
    return ev_ph(seed, EV_PH_TAG0, 0, 0, 0);
}
EV_HD static inline uint64_t ev_plant_tag_step(uint64_t tag, uint64_t seed, uint64_t r, uint64_t mism)
{
    return ev_ph_mix(tag ^ ev_ph(seed, EV_PH_TAG, r, mism, 0));
}

/* ---- plants -------------------------------------------------------------- */

/* The storage bits of (neg ? -1 : 1) a 2^e in dtype d, for an integer
 * 0 <= a < 256 whose value the dtype holds exactly (ev_plant_rows keeps e
 * in range): built, not rounded. */
EV_HD static inline uint32_t ev_plant_bits(int32_t d, int neg, uint32_t a, int32_t e)
{
    int p = 0;
    uint32_t s = neg ? 1u : 0u, frac;
    int32_t x;
    if (a == 0)
        return d == EV_DTYPE_FP32 ? s << 31 : s << 15;
    while ((a >> (p + 1)) != 0)
        p++;
    frac = a - (1u << p);
    x = e + p; /* the value is 1.frac x 2^x */
    if (d == EV_DTYPE_FP32)
        return s << 31 | (uint32_t)(x + 127) << 23 | frac << (23 - p);
    if (d == EV_DTYPE_BF16)
        return s << 15 | (uint32_t)(x + 127) << 7 | frac << (7 - p);
    if (x + 15 >= 1)
        return s << 15 | (uint32_t)(x + 15) << 10 | frac << (10 - p);
    return s << 15 | a << (e + 24); /* fp16 subnormal: a 2^(e + 24) ulps of 2^-24 */
}

/* The most sites of a plant in a run of store schema `schema`. */
EV_HD static inline int64_t ev_plant_sites_at(int64_t schema)
{
    return schema >= EV_PLANT_SITES_SINCE ? EV_PLANT_SITES : 1;
}

/* Site i of plant k (0 <= k < m) of variant j in epoch e of replay r: a
 * row of stratum k (rows [kR/m, (k+1)R/m)) and a column, from a hash of
 * the seed (site 0's of EV_PH_SITE, as every plant's before schema 7; each
 * other's of EV_PH_SITES).  OUT: *row, *col; the hash the site's value is
 * drawn from. */
EV_HD static inline uint64_t ev_plant_site_i(const ev_plant_cfg *c, uint64_t r, int64_t e, int64_t j,
                                             int64_t k, int64_t i, int64_t *row, int64_t *col)
{
    uint64_t h = i == 0 ? ev_ph(c->seed, EV_PH_SITE, r, (uint64_t)e << 32 ^ (uint64_t)j, (uint64_t)k)
                        : ev_ph(c->seed, EV_PH_SITES, r, (uint64_t)e << 32 ^ (uint64_t)j,
                                (uint64_t)k << 8 ^ (uint64_t)i);
    int64_t lo = k * c->rows / c->m, hi = (k + 1) * c->rows / c->m;
    *row = lo + (int64_t)(h % (uint64_t)(hi - lo));
    *col = (int64_t)(ev_ph_mix(h ^ 0x5851f42d4c957f2dull) % (uint64_t)c->cols);
    return ev_ph_mix(h ^ 0x14057b7ef767814full);
}

/* The plant's count of sites: 1, then one more for each of up to
 * c->sites - 1 draws in a row of chance 1/4 (two bits of a hash of its
 * own: 0 is a success). */
EV_HD static inline int32_t ev_plant_count(const ev_plant_cfg *c, uint64_t r, int64_t e, int64_t j, int64_t k)
{
    uint64_t h = ev_ph(c->seed, EV_PH_SITES, r, (uint64_t)e << 32 ^ (uint64_t)j, (uint64_t)k << 8);
    int32_t n = 1;
    while (n < c->sites && n < EV_PLANT_SITES && ((h >> (2 * (n - 1))) & 3u) == 0)
        n++;
    return n;
}

/* The plant's sites alone: OUT row[n], col[n], own[n] (ev_plant's) and,
 * where hv is not NULL, hv[n] (each site's value hash); returns n.  What a
 * restore needs, without the values. */
EV_HD static inline int32_t ev_plant_sites(const ev_plant_cfg *c, uint64_t r, int64_t e, int64_t j, int64_t k,
                                           int64_t *row, int64_t *col, int32_t *own, uint64_t *hv)
{
    int32_t n = ev_plant_count(c, r, e, j, k);
    for (int32_t i = 0; i < n; i++) {
        int dup = 0, later = 0;
        uint64_t h = ev_plant_site_i(c, r, e, j, k, i, &row[i], &col[i]);
        if (hv)
            hv[i] = h;
        for (int32_t q = 0; q < i; q++)
            if (row[q] == row[i] && own[q] >= 0) {
                if (col[q] == col[i])
                    dup = 1;
                else
                    later = 1;
            }
        own[i] = dup ? -1 : later ? 0 : 1;
    }
    return n;
}

/* The stratum of row `row` (0 <= row < R): the k with kR/m <= row < (k+1)R/m. */
EV_HD static inline int64_t ev_plant_stratum(const ev_plant_cfg *c, int64_t row)
{
    int64_t k = row * c->m / c->rows;
    while (k + 1 < c->m && (k + 1) * c->rows / c->m <= row)
        k++;
    while (k > 0 && k * c->rows / c->m > row)
        k--;
    return k;
}

/* Whether row `row` holds a site of its stratum's plant of variant j in
 * epoch e of replay r.  OUT: *k, the plant. */
EV_HD static inline int ev_plant_planted(const ev_plant_cfg *c, uint64_t r, int64_t e, int64_t j, int64_t row,
                                         int64_t *k)
{
    int64_t rows[EV_PLANT_SITES], cols[EV_PLANT_SITES];
    int32_t own[EV_PLANT_SITES], n;
    if (c->m < 1 || row < 0 || row >= c->rows)
        return 0;
    *k = ev_plant_stratum(c, row);
    n = ev_plant_sites(c, r, e, j, *k, rows, cols, own, NULL);
    for (int32_t i = 0; i < n; i++)
        if (rows[i] == row && own[i] >= 0)
            return 1;
    return 0;
}

/* Element i of dtype d at p as its raw bits, and bits b widened (exact). */
EV_HD static inline uint32_t ev_plant_elem(int32_t d, const void *p, int64_t i)
{
    if (d == EV_DTYPE_FP32)
        return ((const uint32_t *)p)[i];
    return ((const uint16_t *)p)[i];
}
EV_HD static inline double ev_plant_widen(int32_t d, uint32_t b)
{
    if (d == EV_DTYPE_FP16) {
        uint32_t ex = (b >> 10) & 31u, man = b & 1023u;
        double v;
        if (ex == 31u) { /* the double of the same class and payload */
            uint64_t q = (uint64_t)(b >> 15 & 1u) << 63 | 0x7ff0000000000000ull | (uint64_t)man << 42;
            memcpy(&v, &q, sizeof v);
            return v;
        }
        v = ex == 0 ? ldexp((double)man, -24) : ldexp((double)(man | 1024u), (int)ex - 25);
        return (b >> 15) & 1u ? -v : v;
    }
    {
        uint32_t u = d == EV_DTYPE_FP32 ? b : b << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return (double)f;
    }
}

/* Site i's planted value for row figures pr (hv: the site's hash; neg:
 * the plant's sign, SUM and MEAN).  OUT: *bits.  The op's rule above. */
EV_HD static inline double ev_plant_site_value(const ev_plant_cfg *c, const ev_plant_row *pr, uint64_t hv,
                                               int neg, uint32_t *bits)
{
    switch (c->op) {
    case EV_OP_MAX:
    case EV_OP_MIN: {
        int32_t q = c->op == EV_OP_MAX ? pr->k + 32 + (int32_t)(hv & 63u) : pr->k - 32 - (int32_t)(hv & 63u);
        *bits = ev_plant_bits(c->dtype, q < 0, (uint32_t)(q < 0 ? -q : q), -6);
        return ldexp((double)q, -6);
    }
    default: { /* EV_OP_SUM, EV_OP_MEAN */
        uint32_t q = 64u + (uint32_t)(hv & 63u);
        *bits = ev_plant_bits(c->dtype, neg, q, pr->k);
        return ldexp(neg ? -(double)q : (double)q, pr->k);
    }
    }
}

/*
 * Plant k of variant j in epoch e of replay r, for row figures rows[R]:
 * its sites, their values, and each row's expected output with the base
 * elements at its sites (base: the pristine input; NULL reads them as 0,
 * for what needs only the sites and bits).  OUT: *p.  Returns 1, or 0
 * when a row it touches is not plantable (p->ok 0), or the op has no rule.
 */
EV_HD static inline int ev_plant_make(const ev_plant_cfg *c, const ev_plant_row *rows, uint64_t r, int64_t e,
                                      int64_t j, int64_t k, const void *base, ev_plant *p)
{
    uint64_t hv[EV_PLANT_SITES];
    int neg;
    p->n = ev_plant_sites(c, r, e, j, k, p->row, p->col, p->own, hv);
    p->ok = c->op == EV_OP_SUM || c->op == EV_OP_MEAN || c->op == EV_OP_MAX || c->op == EV_OP_MIN;
    for (int32_t i = 0; i < p->n; i++)
        p->ok = p->ok && rows[p->row[i]].ok;
    if (!p->ok)
        return 0;
    neg = (int)((hv[0] >> 6) & 1u);
    for (int32_t i = 0; i < p->n; i++)
        p->value[i] = ev_plant_site_value(c, &rows[p->row[i]], hv[i], neg, &p->bits[i]);
    for (int32_t i = 0; i < p->n; i++) {
        const ev_plant_row *pr = &rows[p->row[i]];
        double ex = pr->ref;
        int32_t best = i;
        if (p->own[i] != 1)
            continue;
        for (int32_t q = i; q < p->n; q++) { /* the row's sites, in order */
            double x;
            if (p->row[q] != p->row[i] || p->own[q] < 0)
                continue;
            x = base ? ev_plant_widen(c->dtype,
                                      ev_plant_elem(c->dtype, base, p->row[q] * c->stride + p->col[q]))
                     : 0.0;
            if (c->op == EV_OP_MEAN)
                ex = ex + (p->value[q] - x) / (double)c->cols;
            else if (c->op == EV_OP_SUM)
                ex = ex - x + p->value[q];
            else if (c->op == EV_OP_MAX ? p->value[q] > p->value[best] : p->value[q] < p->value[best])
                best = q;
        }
        if (c->op == EV_OP_SUM || c->op == EV_OP_MEAN) {
            p->expect[i] = ex;
            p->bound[i] = pr->bound;
            p->out_bits[i] = 0;
        } else {
            p->expect[i] = p->value[best];
            p->bound[i] = 0;
            p->out_bits[i] = p->bits[best];
        }
    }
    return 1;
}

/* Whether an output element (its raw bits, and its value y as the
 * caller's dtype loader widened it) is the right answer of the row of
 * plant p's site i (own 1). */
EV_HD static inline int ev_plant_ok(const ev_plant_cfg *c, const ev_plant *p, int32_t i, uint32_t bits,
                                    double y)
{
    switch (c->op) {
    case EV_OP_MAX:
    case EV_OP_MIN:
        return bits == p->out_bits[i];
    case EV_OP_SUM:
    case EV_OP_MEAN:
        return !isnan(y) && !isinf(y) && fabs(y - p->expect[i]) <= p->bound[i];
    default:
        return 0;
    }
}

/* ---- host functions (kernels/plants.c) ------------------------------------ */

/*
 * The figures of every row's plants (ev_plant_row) from the oracle's rows
 * o[R] of a case of shape s, under the protocol's sum_depth and
 * sum_bound_factor (below 1 counts as 1), for plants of at most `sites`
 * sites (ev_plant_sites_at).  EV_EINVAL naming the first row
 * that cannot be planted (its bound too wide for a plant to move it by
 * twice the bound within the dtype's range) in err; OUT: out[R].
 */
ev_status ev_plant_rows(const ev_shape *s, int64_t depth, double factor, int64_t sites,
                        const ev_oracle_row *o, ev_plant_row *out, ev_err *err);

/*
 * V, the variants of a job's input of input_bytes (docs/defenses.md): as
 * many copies as fit in half the cache (cache_bytes: L2 on cuda, the
 * last-level cache on cpu) when the input fits there, so that the hot
 * replays read them from the cache as one input was read before; else as
 * many as fit in the protocol's variant budget
 * (reference.<backend>.variant_budget_bytes); at most ops and at least 2.
 * An empty input gets 2.  The worker and verify-bundle call it.
 */
int64_t ev_plant_variants(int64_t input_bytes, int64_t cache_bytes, int64_t budget, int64_t ops);

/* The plant configuration of an attempt (seed, shape, V variants of
 * `ops` ops), with this build's sites (EV_PLANT_SITES; a reader of an
 * older bundle sets sites by ev_plant_sites_at). */
void ev_plant_config(ev_plant_cfg *c, uint64_t seed, const ev_shape *s, int64_t variants, int64_t ops);

/* T(n): the tag after n replays of no mismatch. */
uint64_t ev_plant_tag_after(uint64_t seed, uint64_t n);

/*
 * The secret layout of n buffers of item bytes each (a multiple of 256)
 * in one allocation: a permutation of the buffers from the seed, with a
 * gap of guard bytes plus a secret multiple of 256 (0 .. 15 x 256) before
 * each and guard bytes after the last.  salt tells layouts of one attempt
 * apart.  OUT: off[n] (buffer i's byte offset, 256-aligned when guard is),
 * *total.  EV_ENOMEM.
 */
ev_status ev_plant_layout(uint64_t seed, uint64_t salt, size_t n, size_t item, size_t guard, size_t *off,
                          size_t *total, ev_err *err);

/*
 * The host's plant node (the cpu backend): restores, in each of the V
 * variants, the elements replay pr's epoch pe planted (pr = 0: nothing)
 * from the pristine base, then plants replay r's epoch e (plant 0: restore
 * only).  var[j] and base are inputs of shape (rows, stride).
 */
void ev_plant_host(const ev_plant_cfg *c, const ev_plant_row *rows, uint64_t r, int64_t e, uint64_t pr,
                   int64_t pe, int plant, const void *base, void *const *var);

/*
 * The host's check node: for ops 0 .. n_ops-1 of replay st->r_next (op i
 * of epoch i / V, variant i mod V), every planted row of slot[i] against
 * its plant (ev_plant_ok, at the row's first site), copying slot[kept_op] to kept (R elements)
 * first when kept_op < n_ops; then poisons the rows it checked, folds the
 * mismatches into st->tag and advances st->r_next.  The first mismatch of
 * the attempt goes to st->first.
 */
void ev_check_host(const ev_plant_cfg *c, const ev_plant_row *rows, int64_t n_ops, const void *base,
                   void *const *slot, void *kept, ev_plant_state *st);

/*
 * The cpu backend's replay, the same plants and checks as ev_plant_host
 * and ev_check_host with each plant computed once: ev_plant_table fills
 * tab[(e V + j) m + k] (ops' worth: epochs x V x m entries) with replay
 * r's plants (their sites, bits and expected outputs, x read from base);
 * ev_plant_apply restores (plant 0: the base's bytes at the sites) or
 * plants (plant 1: the bits) epoch e's entries in the V variants;
 * ev_check_table checks ops 0 .. n_ops-1 of replay st->r_next against the
 * table as ev_check_host does (the kept copy first, the poison, the tag).
 * A replay restores the table's last epoch (the previous replay's, still
 * in it) before it fills the table again.
 */
void ev_plant_table(const ev_plant_cfg *c, const ev_plant_row *rows, uint64_t r, const void *base,
                    ev_plant *tab);
void ev_plant_apply(const ev_plant_cfg *c, const ev_plant *tab, int64_t e, int plant, const void *base,
                    void *const *var);
void ev_check_table(const ev_plant_cfg *c, const ev_plant *tab, int64_t n_ops, void *const *slot, void *kept,
                    ev_plant_state *st);

/*
 * Whether row `row` of a variant holds a site of a plant of epoch e of
 * replay r of variant j (its stratum's plant has a site in it), and if so
 * writes the planted bits of every such site into rowbuf (the row's cols
 * elements of dtype, as read): how the worker and verify-bundle rebuild
 * the input an op read.  Returns 1 when it did.
 */
int ev_plant_in_row(const ev_plant_cfg *c, const ev_plant_row *rows, uint64_t r, int64_t e, int64_t j,
                    int64_t row, void *rowbuf);

/* Writes the planted bits of plant p's sites in row `row` into rowbuf (the
 * row's cols elements of dtype, as read): ev_plant_in_row's part for a
 * caller that made the plant once for all its rows.  Returns 1 when any
 * site is there. */
int ev_plant_put_row(const ev_plant_cfg *c, const ev_plant *p, int64_t row, void *rowbuf);

/*
 * The oracle's rows of the input the kept op (c->kept_op) read in replay
 * r: rows[] holds the case's own (every row of input, shape s), and the
 * rows that op's variant had planted in its epoch are reduced again with
 * their plants (ev_plant_in_row).  Rows is updated in place.
 */
void ev_plant_oracle_rows(const ev_plant_cfg *c, const ev_plant_row *prow, uint64_t r, const ev_shape *s,
                          const void *input, ev_oracle_row *rows);

#ifdef __cplusplus
}
#endif

#endif
