/*
 * check_kernels.c: the cpu kernels and their helpers: dtype conversions
 * (exhaustive, against GCC's _Float16 and an FP64 rounding reference), the
 * reductions against the FP64 oracle on odd shapes and special values, bit
 * identity across threads and schedules, the documented summation order,
 * the binding refusals, the SUM bound on adversarial inputs, the input
 * generator and the schedule receipts; and a host mirror of the CUDA MAX
 * (integer keys, reduce_default.cuh) against the CPU twin, over every
 * 16-bit pattern and on rows of NaN, -0/+0, Inf and subnormals.
 *
 * The two exhaustive sweeps over all 2^32 float patterns run as 16 slices
 * each (one forked test per slice, own timeout).  EV_CHECK_QUICK=1 (e.g.
 * under ASan) samples every 61st pattern instead.
 */
#include <check.h>

#include "progress.h"
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "dtype.h"
#include "inputs.h"
#include "oracle.h"
#include "plants.h"
#include "reduce_cpu.h"
#include "model/select.h"
#include "selector.h"

#define SLICES 16

/* Returns the step of the exhaustive sweeps: 1, or 61 when EV_CHECK_QUICK is set. */
static uint64_t sweep_step(void)
{
    const char *q = getenv("EV_CHECK_QUICK");
    return (q != NULL && q[0] == '1') ? 61 : 1;
}

/* The reference fp32 -> fp16 conversion: GCC's _Float16 (F16C instruction). */
__attribute__((target("f16c"))) static uint16_t gcc_to_fp16(float f)
{
    _Float16 h = (_Float16)f;
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}

/* The reference fp16 -> fp32 conversion: GCC's _Float16 (libgcc). */
static float gcc_from_fp16(uint16_t u)
{
    _Float16 h;
    memcpy(&h, &u, 2);
    return (float)h;
}

/* The bf16 RNE of finite d computed in double: scale to the target ulp,
 * round the scaled value to an integer by hand (ties to even), scale back. */
static double fp64_round_bf16(double d, double ulp)
{
    double a = fabs(d);
    double q = a / ulp;            /* exact: ulp is a power of two */
    double f = (double)(int64_t)q; /* q < 2^25: truncation is floor */
    double diff = q - f;
    if (diff > 0.5 || (diff == 0.5 && ((int64_t)f & 1)))
        f += 1.0;
    a = f * ulp;
    if (a >= 0x1p128)
        a = INFINITY;
    return copysign(a, d);
}

START_TEST(test_fp16_widens_like_gcc_float16_for_all_patterns)
{
    for (uint32_t i = 0; i < 65536; i++) {
        float ours = ev_fp16_to_f32((uint16_t)i), ref = gcc_from_fp16((uint16_t)i);
        /* no passing ck_assert in hot loops: check logs each one to a file */
        if (isnan(ref) ? !isnan(ours) : ev_f32_bits(ours) != ev_f32_bits(ref))
            ck_abort_msg("fp16 %04x: %08x != %08x", i, ev_f32_bits(ours), ev_f32_bits(ref));
    }
}
END_TEST

START_TEST(test_fp32_narrows_to_fp16_like_gcc_float16_for_every_pattern)
{
    uint64_t lo = (uint64_t)_i << 28, hi = lo + (1ull << 28), step = sweep_step(), bad = 0;
    for (uint64_t i = lo; i < hi; i += step) {
        float f = ev_f32_from_bits((uint32_t)i);
        uint16_t ours = ev_f32_to_fp16(f);
        uint16_t ref = isnan(f) ? EV_FP16_QNAN : gcc_to_fp16(f);
        if (ours != ref && bad++ == 0)
            ck_abort_msg("fp32 %08llx -> fp16 %04x, _Float16 gives %04x", (unsigned long long)i, ours, ref);
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(test_bf16_widens_exactly_for_all_patterns)
{
    for (uint32_t i = 0; i < 65536; i++) {
        float f = ev_bf16_to_f32((uint16_t)i);
        if ((i & 0x7fff) > 0x7f80) {
            if (!isnan(f))
                ck_abort_msg("bf16 %04x is not NaN", i);
        } else if (ev_f32_bits(f) != i << 16 || ev_f32_to_bf16(f) != i) { /* exact round trip */
            ck_abort_msg("bf16 %04x widens to %08x", i, ev_f32_bits(f));
        }
    }
}
END_TEST

START_TEST(test_fp32_narrows_to_bf16_like_an_fp64_rne_reference_for_every_pattern)
{
    /* slice _i covers 16 biased exponents of both signs */
    uint64_t step = sweep_step(), bad = 0;
    for (uint32_t sign = 0; sign < 2; sign++) {
        for (uint32_t e = (uint32_t)_i * 16; e < (uint32_t)_i * 16 + 16; e++) {
            int ue = e == 0 ? -126 : (int)e - 127; /* exponent of the binade */
            double ulp = ldexp(1.0, ue - 7);
            for (uint64_t m = 0; m < (1u << 23); m += step) {
                uint32_t u = (sign << 31) | (e << 23) | (uint32_t)m;
                float f = ev_f32_from_bits(u);
                uint16_t ours = ev_f32_to_bf16(f);
                uint32_t ref;
                if (isnan(f)) {
                    ref = EV_BF16_QNAN;
                } else if (isinf(f)) {
                    ref = u >> 16;
                } else {
                    float r = (float)fp64_round_bf16((double)f, ulp);
                    if ((ev_f32_bits(r) & 0xffffu) != 0)
                        ck_abort_msg("fp64 reference of %08x is not a bf16 value", u);
                    ref = ev_f32_bits(r) >> 16;
                }
                if (ours != ref && bad++ == 0)
                    ck_abort_msg("fp32 %08x -> bf16 %04x, fp64 reference gives %04x", u, ours, ref);
            }
        }
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(test_every_nan_narrows_to_the_canonical_nan)
{
    uint32_t nans[] = {0x7f800001u, 0xff800001u, 0x7fc00000u, 0xffffffffu, 0x7fa5a5a5u};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        float f = ev_f32_from_bits(nans[i]);
        ck_assert_uint_eq(ev_f32_to_fp16(f), EV_FP16_QNAN);
        ck_assert_uint_eq(ev_f32_to_bf16(f), EV_BF16_QNAN);
        ck_assert_uint_eq(ev_f32_canonical(f), EV_FP32_QNAN);
    }
    /* a few hand-checked roundings */
    ck_assert_uint_eq(ev_f32_to_fp16(65504.0f), 0x7bffu);
    ck_assert_uint_eq(ev_f32_to_fp16(65519.99f), 0x7bffu);
    ck_assert_uint_eq(ev_f32_to_fp16(65520.0f), 0x7c00u);
    ck_assert_uint_eq(ev_f32_to_fp16(0x1p-25f), 0x0000u);
    ck_assert_uint_eq(ev_f32_to_fp16(0x1.000002p-25f), 0x0001u);
    ck_assert_uint_eq(ev_f32_to_fp16(-0x1p-24f), 0x8001u);
    ck_assert_uint_eq(ev_f32_to_bf16(1.00390625f), 0x3f80u); /* tie to even, down */
    ck_assert_uint_eq(ev_f32_to_bf16(1.01171875f), 0x3f82u); /* tie to even, up */
}
END_TEST

/* ---- reductions -------------------------------------------------------- */

/* A bound buffer pair made by the test: input from the generator. */
typedef struct fixture {
    ev_binding b;
    unsigned char *in, *out;
} fixture;

/* Allocates and fills a fixture for s (input span exactly as needed + pad). */
static void fixture_make(fixture *f, const ev_shape *s, uint64_t seed, size_t pad)
{
    size_t es = ev_dtype_size(s->dtype);
    size_t in_span =
        s->rows > 0 ? ((size_t)(s->rows - 1) * (size_t)s->stride + (size_t)s->cols) * es + pad : pad;
    size_t out_span = (size_t)s->rows * es;
    ev_err err;
    memset(f, 0, sizeof *f);
    f->in = malloc(in_span + 16);
    f->out = malloc(out_span + 16);
    ck_assert_ptr_nonnull(f->in);
    ck_assert_ptr_nonnull(f->out);
    ck_assert_int_eq(ev_inputs_fill(s, seed, 7, f->in, in_span, &err), EV_OK);
    ev_inputs_poison_output(f->out, out_span);
    f->b.shape = *s;
    f->b.in = f->in;
    f->b.in_span = in_span;
    f->b.out = f->out;
    f->b.out_span = out_span;
    ck_assert_msg(ev_binding_check(&f->b, &err) == EV_OK, "%s", err.msg);
}

/* Frees a fixture's buffers. */
static void fixture_free(fixture *f)
{
    free(f->in);
    free(f->out);
}

/* Runs s through the pool with b rows per task; returns the validation. */
static ev_validation run_and_validate(ev_cpu_pool *pool, fixture *f, int64_t rows_per_task)
{
    ev_cpu_receipt plan;
    ev_validation v;
    ev_err err;
    ck_assert_int_eq(
        ev_reduce_cpu_plan(&f->b.shape, "default", rows_per_task, ev_cpu_pool_threads(pool), &plan, &err),
        EV_OK);
    ck_assert_msg(ev_reduce_cpu_run(pool, &f->b, &plan, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_oracle_validate(&f->b.shape, f->in, f->out, 0, &v, &err), EV_OK);
    return v;
}

static const int64_t odd_shapes[][3] = {
    /* rows, cols, stride */
    {0, 5, 5},        {1, 1, 1}, {1, 257, 257},   {3, 257, 300},   {37, 257, 257},
    {17, 1024, 1024}, {5, 1, 9}, {2, 8191, 8193}, {4, 4097, 4097}, {3, 33, 64},
};

/* ---- plants (kernels/plants.h) ---------------------------------------- */

/* A case's input, oracle rows and plant rows, for the plant tests. */
typedef struct plant_fix {
    ev_shape s;
    unsigned char *in;
    size_t len;
    ev_oracle_row *o;
    ev_plant_row *pr;
} plant_fix;

static void plant_fix_make(plant_fix *f, ev_op op, ev_dtype d, int64_t rows, int64_t cols, int64_t depth,
                           double factor)
{
    ev_err err;
    f->s = (ev_shape){op, d, rows, cols, cols};
    f->len = (size_t)(rows * cols) * ev_dtype_size(d);
    f->in = malloc(f->len);
    f->o = malloc((size_t)rows * sizeof *f->o);
    f->pr = malloc((size_t)rows * sizeof *f->pr);
    ck_assert(f->in && f->o && f->pr);
    ck_assert_int_eq(ev_inputs_fill(&f->s, 11, (uint64_t)cols, f->in, f->len, &err), EV_OK);
    ck_assert_int_eq(ev_oracle_rows(&f->s, f->in, f->o, &err), EV_OK);
    ck_assert_msg(ev_plant_rows(&f->s, depth, factor, EV_PLANT_SITES, f->o, f->pr, &err) == EV_OK, "%s",
                  err.msg);
}

static void plant_fix_free(plant_fix *f)
{
    free(f->in);
    free(f->o);
    free(f->pr);
}

/*
 * Every plant, as stored (its bits widened), is the value the rule says,
 * and moves its row's expected output by more than twice the bound the
 * check applies, a bound that holds for the planted row as reduced again
 * in full (SUM, and MEAN over N; under sum_depth and sum_bound_factor too),
 * or is a new row maximum (MAX) or minimum (MIN): for every dtype, op, and
 * thousands of plants.  Replays,
 * epochs, variants and plants give other sites, in their strata.
 */
START_TEST(test_a_plant_moves_its_rows_expected_output_past_twice_its_bound)
{
    static const struct {
        int64_t rows, cols, depth;
        double factor;
    } shapes[] = {{17, 1024, 0, 1}, {8, 131072, 8192, 1}, {3, 8191, 0, 1}, {300, 96, 0, 4}, {1, 1, 0, 1}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (int op = 0; op < EV_OP_COUNT; op++)
            for (int d = 0; d < EV_DTYPE_COUNT; d++) {
                plant_fix f;
                ev_plant_cfg c;
                size_t es = ev_dtype_size((ev_dtype)d), rb = (size_t)shapes[k].cols * es;
                unsigned char *row = malloc(rb);
                int64_t seen_site = 0;
                plant_fix_make(&f, (ev_op)op, (ev_dtype)d, shapes[k].rows, shapes[k].cols, shapes[k].depth,
                               shapes[k].factor);
                ev_plant_config(&c, 0x5eed0000u + k, &f.s, 3, 7);
                ck_assert_int_eq(c.m, shapes[k].rows < 256 ? shapes[k].rows : 256);
                ck_assert_int_eq(c.epochs, 3);
                for (uint64_t r = 1; r <= 40; r++)
                    for (int64_t e = 0; e < c.epochs; e++)
                        for (int64_t j = 0; j < c.variants; j++)
                            for (int64_t q = 0; q < c.m; q++) {
                                ev_plant p;
                                ck_assert(ev_plant_make(&c, f.pr, r, e, j, q, f.in, &p));
                                ck_assert(p.n >= 1 && p.n <= EV_PLANT_SITES);
                                for (int32_t i = 0; i < p.n; i++) {
                                    int64_t kk, at = p.row[i] * f.s.stride + p.col[i];
                                    double x = ev_dtype_load((ev_dtype)d, f.in, (size_t)at);
                                    ev_oracle_row o;
                                    ck_assert(p.row[i] >= q * c.rows / c.m &&
                                              p.row[i] < (q + 1) * c.rows / c.m);
                                    ck_assert(ev_dtype_load((ev_dtype)d, &p.bits[i], 0) == p.value[i]);
                                    if (p.own[i] < 0)
                                        continue; /* a repeat of an earlier site: not planted */
                                    if (op == EV_OP_SUM || op == EV_OP_MEAN) {
                                        double n = op == EV_OP_MEAN ? (double)f.s.cols : 1;
                                        /* every site alone moves its row past twice the bound, all one way */
                                        ck_assert(fabs(p.value[i] - x) / n > 2.0 * f.pr[p.row[i]].bound);
                                        ck_assert((p.value[i] < 0) == (p.value[0] < 0));
                                    } else {
                                        ck_assert(op == EV_OP_MAX ? p.value[i] > f.o[p.row[i]].ref
                                                                  : p.value[i] < f.o[p.row[i]].ref);
                                    }
                                    if (p.own[i] != 1)
                                        continue; /* its row is checked at an earlier site */
                                    ck_assert(ev_plant_planted(&c, r, e, j, p.row[i], &kk) && kk == q);
                                    memcpy(row, f.in + (size_t)p.row[i] * (size_t)f.s.stride * es, rb);
                                    ck_assert(ev_plant_in_row(&c, f.pr, r, e, j, p.row[i], row));
                                    for (int32_t t = i; t < p.n; t++)
                                        if (p.row[t] == p.row[i] && p.own[t] >= 0)
                                            ck_assert(ev_dtype_load((ev_dtype)d, row, (size_t)p.col[t]) ==
                                                      p.value[t]);
                                    ev_oracle_reduce_row(f.s.op, f.s.dtype, row, f.s.cols, &o);
                                    if (op == EV_OP_MAX || op == EV_OP_MIN) {
                                        ck_assert(o.ref == p.expect[i]);
                                        ck_assert(ev_dtype_load((ev_dtype)d, &p.out_bits[i], 0) ==
                                                  p.expect[i]);
                                    } else {
                                        double f1 = shapes[k].factor;
                                        double b =
                                            f1 *
                                            (op == EV_OP_MEAN
                                                 ? ev_oracle_mean_bound(f.s.dtype, f.s.cols, shapes[k].depth,
                                                                        o.ref, o.abs_sum)
                                                 : ev_oracle_sum_bound(f.s.dtype, f.s.cols, shapes[k].depth,
                                                                       o.ref, o.abs_sum));
                                        ck_assert(p.bound[i] >= b);
                                        ck_assert(fabs(p.expect[i] - o.ref) <= 1e-9 * (fabs(o.ref) + 1.0));
                                    }
                                    seen_site++;
                                }
                            }
                ck_assert_int_gt(seen_site, 0);
                free(row);
                plant_fix_free(&f);
            }
}
END_TEST

/* The FP32 sum of row r of f in index order, as its dtype stores it. */
static uint32_t honest_bits(const plant_fix *f, const unsigned char *in, int64_t r, double *y)
{
    float a = -0.0f;
    unsigned char out[4];
    for (int64_t c = 0; c < f->s.cols; c++)
        a += ev_dtype_load(f->s.dtype, in, (size_t)(r * f->s.stride + c));
    if (f->s.op == EV_OP_MEAN)
        a /= (float)f->s.cols;
    if (f->s.op == EV_OP_MAX || f->s.op == EV_OP_MIN) {
        int max = f->s.op == EV_OP_MAX;
        a = max ? -INFINITY : INFINITY;
        for (int64_t c = 0; c < f->s.cols; c++) {
            float x = ev_dtype_load(f->s.dtype, in, (size_t)(r * f->s.stride + c));
            a = (max ? x > a : x < a) ? x : a;
        }
    }
    ev_dtype_store(f->s.dtype, out, 0, a);
    *y = ev_dtype_load(f->s.dtype, out, 0);
    return ev_dtype_size(f->s.dtype) == 4
               ? (uint32_t)out[0] | (uint32_t)out[1] << 8 | (uint32_t)out[2] << 16 | (uint32_t)out[3] << 24
               : (uint32_t)out[0] | (uint32_t)out[1] << 8;
}

/*
 * The host's plant and check nodes (the cpu backend's): ops that reduce
 * their own variant honestly leave the tag the seed gives for every op
 * right, replay after replay, and every variant equals the base once the
 * last plant is restored; one op skipped in one replay (its slot left as
 * the last check poisoned it) changes the tag from then on, and the first
 * mismatch names that replay, op and row.  An honest op on the unplanted
 * base fails the planted check (the plant moved the row).
 */
START_TEST(test_the_host_plant_and_check_nodes_pass_honest_ops_and_name_a_skipped_one)
{
    for (int op = 0; op < EV_OP_COUNT; op++)
        for (int d = 0; d < EV_DTYPE_COUNT; d++) {
            plant_fix f;
            ev_plant_cfg c;
            ev_plant_state st;
            enum { V = 3, OPS = 8 };
            void *var[V], *slot[OPS];
            size_t es = ev_dtype_size((ev_dtype)d);
            unsigned char *kept;
            plant_fix_make(&f, (ev_op)op, (ev_dtype)d, 40, 300, 0, 1);
            ev_plant_config(&c, 77 + (uint64_t)d, &f.s, V, OPS);
            for (int j = 0; j < V; j++) {
                var[j] = malloc(f.len);
                memcpy(var[j], f.in, f.len);
            }
            for (int i = 0; i < OPS; i++)
                slot[i] = calloc((size_t)f.s.rows, es);
            kept = calloc((size_t)f.s.rows, es);
            memset(&st, 0, sizeof st);
            st.r_next = 1;
            st.tag = ev_plant_tag0(c.seed);
            for (uint64_t r = 1; r <= 4; r++) {
                for (int64_t e = 0; e < c.epochs; e++) {
                    ev_plant_host(&c, f.pr, r, e, e ? r : r - 1, e ? e - 1 : c.epochs - 1, 1, f.in, var);
                    for (int64_t i = e * V; i < (e + 1) * V && i < OPS; i++) {
                        if (r == 3 && i == 5)
                            continue; /* the skipped op */
                        for (int64_t row = 0; row < f.s.rows; row++) {
                            double y;
                            uint32_t b = honest_bits(&f, var[i % V], row, &y);
                            memcpy((unsigned char *)slot[i] + (size_t)row * es, &b, es);
                        }
                    }
                }
                ev_check_host(&c, f.pr, OPS, f.in, slot, kept, &st);
                ck_assert_int_eq(st.r_next, r + 1);
                if (r < 3) {
                    ck_assert_msg(st.tag == ev_plant_tag_after(c.seed, r) && !st.first_set, "%s %s replay %d",
                                  ev_op_name((ev_op)op), ev_dtype_name((ev_dtype)d), (int)r);
                } else {
                    ck_assert(st.tag != ev_plant_tag_after(c.seed, r) && st.first_set);
                    ck_assert_int_eq(st.first.replay, 3);
                    ck_assert_int_eq(st.first.op, 5);
                    ck_assert_int_eq(st.first.kind, 0);
                }
            }
            /* the last plant restored: every variant is the base again */
            ev_plant_host(&c, f.pr, 0, 0, st.r_next - 1, c.epochs - 1, 0, f.in, var);
            for (int j = 0; j < V; j++)
                ck_assert(!memcmp(var[j], f.in, f.len));
            /* the base's own output is not the planted row's */
            {
                ev_plant p;
                double y;
                ck_assert(ev_plant_make(&c, f.pr, 9, 0, 0, 0, f.in, &p));
                uint32_t b = honest_bits(&f, f.in, p.row[0], &y);
                ck_assert(p.own[0] == 1 && !ev_plant_ok(&c, &p, 0, b, y));
            }
            for (int j = 0; j < V; j++)
                free(var[j]);
            for (int i = 0; i < OPS; i++)
                free(slot[i]);
            free(kept);
            plant_fix_free(&f);
        }
}
END_TEST

/* Op i's output as a kernel that stops early makes it: each row from the
 * base input (kept from an unplanted call) where it sees no change; stop
 * 0 reads a row only up to its first changed element (the rest from the
 * base); stop 1 reads a stratum's rows in order and only up to its first
 * changed row, whole (the stratum's other rows from the base). */
static void early_stop_op(const plant_fix *f, const ev_plant_cfg *c, const unsigned char *var, int stop,
                          unsigned char *slot)
{
    size_t es = ev_dtype_size(f->s.dtype), rb = (size_t)f->s.cols * es;
    unsigned char *buf = malloc(rb);
    plant_fix one = *f;
    ck_assert_ptr_nonnull(buf);
    one.s.rows = 1;
    for (int64_t k = 0; k < c->m; k++) {
        int64_t lo = k * c->rows / c->m, hi = (k + 1) * c->rows / c->m, found = 0;
        for (int64_t r = lo; r < hi; r++) {
            const unsigned char *b = f->in + (size_t)r * (size_t)f->s.stride * es, *v = var + (b - f->in);
            double y;
            uint32_t bits;
            memcpy(buf, b, rb);
            if (stop == 0) {
                for (size_t at = 0; at < rb; at += es)
                    if (memcmp(b + at, v + at, es)) {
                        memcpy(buf + at, v + at, es);
                        break;
                    }
            } else if (!found && memcmp(b, v, rb)) {
                memcpy(buf, v, rb);
                found = 1;
            }
            bits = honest_bits(&one, buf, 0, &y);
            memcpy(slot + (size_t)r * es, &bits, es);
        }
    }
    free(buf);
}

/*
 * No kernel knows that it has seen every planted element before it has
 * read them all (kernels/plants.h, "Why a secret count"): a kernel that
 * reads each row only up to its first changed element, or each stratum
 * only up to its first changed row, and answers the rest from the base
 * it kept, fails the host's check within a few replays, for every op and
 * dtype, where strata are one row and where they are several.  With one
 * site a plant (store schema 6: c.sites 1) the first of them passed every
 * check: the hole this rule closes.  A plant's count of sites is 1 with a
 * chance of 3/4 and at most EV_PLANT_SITES.
 */
START_TEST(test_a_kernel_that_stops_at_the_first_plant_it_finds_fails_the_check)
{
    static const int64_t shapes[][2] = {{33, 128}, {700, 64}};
    enum { V = 3, OPS = 9 };
    int64_t n_count[EV_PLANT_SITES + 1] = {0}, plants = 0;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (int op = 0; op < EV_OP_COUNT; op++)
            for (int d = 0; d < EV_DTYPE_COUNT; d++)
                for (int stop = 0; stop < 2; stop++)
                    for (int64_t sites = 1; sites <= EV_PLANT_SITES; sites += EV_PLANT_SITES - 1) {
                        plant_fix f;
                        ev_plant_cfg c;
                        ev_plant_state st;
                        void *var[V], *slot[OPS];
                        size_t es = ev_dtype_size((ev_dtype)d);
                        int caught = 0;
                        plant_fix_make(&f, (ev_op)op, (ev_dtype)d, shapes[k][0], shapes[k][1], 0, 1);
                        ev_plant_config(&c, 4000 + (uint64_t)(op * 8 + d), &f.s, V, OPS);
                        ck_assert_int_eq(c.sites, EV_PLANT_SITES);
                        c.sites = sites;
                        for (int j = 0; j < V; j++) {
                            var[j] = malloc(f.len);
                            memcpy(var[j], f.in, f.len);
                        }
                        for (int i = 0; i < OPS; i++)
                            slot[i] = calloc((size_t)f.s.rows, es);
                        memset(&st, 0, sizeof st);
                        st.r_next = 1;
                        st.tag = ev_plant_tag0(c.seed);
                        for (uint64_t r = 1; r <= 3 && !caught; r++) {
                            for (int64_t e = 0; e < c.epochs; e++) {
                                ev_plant_host(&c, f.pr, r, e, e ? r : r - 1, e ? e - 1 : c.epochs - 1, 1,
                                              f.in, var);
                                for (int64_t i = e * V; i < (e + 1) * V && i < OPS; i++)
                                    early_stop_op(&f, &c, var[i % V], stop, slot[i]);
                                for (int64_t j = 0; j < V && sites > 1; j++)
                                    for (int64_t q = 0; q < c.m; q++) {
                                        ev_plant p;
                                        ck_assert(ev_plant_make(&c, f.pr, r, e, j, q, NULL, &p));
                                        n_count[p.n]++;
                                        plants++;
                                    }
                            }
                            ev_check_host(&c, f.pr, OPS, f.in, slot, NULL, &st);
                            caught = st.first_set;
                        }
                        /* (a stratum of one row read whole to its first change is honest) */
                        if (sites > 1 && (stop == 0 || f.s.rows > EV_PLANT_ROWS))
                            ck_assert_msg(caught, "%s %s %lldx%lld: a kernel stopping at its first %s passed",
                                          ev_op_name((ev_op)op), ev_dtype_name((ev_dtype)d),
                                          (long long)shapes[k][0], (long long)shapes[k][1],
                                          stop ? "changed row of a stratum" : "changed element of a row");
                        else if (stop == 0 || f.s.rows > EV_PLANT_ROWS)
                            ck_assert_msg(!caught, "one site a plant: the early stop should have passed");
                        for (int j = 0; j < V; j++)
                            free(var[j]);
                        for (int i = 0; i < OPS; i++)
                            free(slot[i]);
                        plant_fix_free(&f);
                    }
    ck_assert_int_eq(n_count[0], 0);
    ck_assert_msg(n_count[1] > 0.70 * (double)plants && n_count[1] < 0.80 * (double)plants,
                  "%lld of %lld plants have one site", (long long)n_count[1], (long long)plants);
    ck_assert_int_gt(n_count[EV_PLANT_SITES], 0);
}
END_TEST

/* An op without a plant rule (one an op vocabulary gains before its rule
 * in kernels/plants.h) is refused by name, never planted and checked as
 * if it were another op: ev_plant_rows fails naming the op and where its
 * rule goes, ev_plant_make plants nothing and ev_plant_ok accepts
 * nothing. */
START_TEST(test_an_op_without_a_plant_rule_is_refused_not_planted_as_another)
{
    ev_shape s = {EV_OP_COUNT, EV_DTYPE_FP32, 2, 64, 64};
    ev_oracle_row o[2] = {{0}};
    ev_plant_row pr[2];
    ev_plant_cfg c;
    ev_plant p;
    ev_err err = {""};
    char want[64];
    o[0].ref = o[1].ref = 1.0;
    o[0].abs_sum = o[1].abs_sum = 8.0;
    ck_assert_int_eq(ev_plant_rows(&s, 0, 1, EV_PLANT_SITES, o, pr, &err), EV_EINVAL);
    snprintf(want, sizeof want, "op %d has no plant rule", (int)EV_OP_COUNT);
    ck_assert_msg(strstr(err.msg, want) && strstr(err.msg, "kernels/plants.h"), "%s", err.msg);
    ev_plant_config(&c, 99, &s, 2, 100);
    pr[0] = pr[1] = (ev_plant_row){1.0, 0.5, 0, 1};
    ck_assert_int_eq(ev_plant_make(&c, pr, 1, 0, 0, 0, NULL, &p), 0);
    ck_assert_int_eq(p.ok, 0);
    p.expect[0] = 1.0;
    p.bound[0] = 1.0;
    ck_assert_int_eq(ev_plant_ok(&c, &p, 0, 0x3f800000u, 1.0), 0);
}
END_TEST

/* The cpu backend's replay (a table of each replay's plants, computed once:
 * ev_plant_table, ev_plant_apply, ev_check_table) plants the same bytes
 * and gives the same tags, poison and first mismatch as the plant and
 * check functions that compute as they go (ev_plant_host, ev_check_host),
 * replay after replay, for honest ops and for a skipped one. */
START_TEST(test_the_cpu_backends_table_of_plants_is_the_same_plants_and_checks)
{
    for (int op = 0; op < EV_OP_COUNT; op++) {
        plant_fix f;
        ev_plant_cfg c;
        ev_plant_state sa, sb;
        enum { V = 4, OPS = 10 };
        void *va[V], *vb[V], *oa[OPS], *ob[OPS];
        size_t es = 4;
        unsigned char ka[64 * 4], kb[64 * 4];
        plant_fix_make(&f, (ev_op)op, EV_DTYPE_FP32, 64, 200, 0, 1);
        ev_plant_config(&c, 4242, &f.s, V, OPS);
        ev_plant *tab = calloc((size_t)(c.epochs * c.variants * c.m), sizeof *tab);
        ck_assert_ptr_nonnull(tab);
        for (int j = 0; j < V; j++) {
            va[j] = malloc(f.len);
            vb[j] = malloc(f.len);
            memcpy(va[j], f.in, f.len);
            memcpy(vb[j], f.in, f.len);
        }
        for (int i = 0; i < OPS; i++) {
            oa[i] = calloc((size_t)f.s.rows, es);
            ob[i] = calloc((size_t)f.s.rows, es);
        }
        memset(&sa, 0, sizeof sa);
        sa.r_next = 1;
        sa.tag = ev_plant_tag0(c.seed);
        sb = sa;
        for (uint64_t r = 1; r <= 3; r++) {
            ev_plant_apply(&c, tab, c.epochs - 1, 0, f.in, vb);
            ev_plant_table(&c, f.pr, r, f.in, tab);
            for (int64_t e = 0; e < c.epochs; e++) {
                ev_plant_host(&c, f.pr, r, e, e ? r : r - 1, e ? e - 1 : c.epochs - 1, 1, f.in, va);
                if (e > 0)
                    ev_plant_apply(&c, tab, e - 1, 0, f.in, vb);
                ev_plant_apply(&c, tab, e, 1, f.in, vb);
                for (int j = 0; j < V; j++)
                    ck_assert(!memcmp(va[j], vb[j], f.len));
                for (int64_t i = e * V; i < (e + 1) * V && i < OPS; i++) {
                    if (r == 2 && i == 6)
                        continue;
                    for (int64_t row = 0; row < f.s.rows; row++) {
                        double y;
                        uint32_t bits = honest_bits(&f, va[i % V], row, &y);
                        memcpy((unsigned char *)oa[i] + (size_t)row * es, &bits, es);
                        memcpy((unsigned char *)ob[i] + (size_t)row * es, &bits, es);
                    }
                }
            }
            ev_check_host(&c, f.pr, OPS, f.in, oa, ka, &sa);
            ev_check_table(&c, tab, OPS, ob, kb, &sb);
            ck_assert(sa.tag == sb.tag && sa.r_next == sb.r_next && sa.first_set == sb.first_set);
            ck_assert(!memcmp(ka, kb, sizeof ka));
            for (int i = 0; i < OPS; i++)
                ck_assert(!memcmp(oa[i], ob[i], (size_t)f.s.rows * es));
        }
        ck_assert(sa.first_set && sa.first.replay == 2 && sa.first.op == 6 && sb.first.op == 6 &&
                  sa.first.row == sb.first.row);
        for (int j = 0; j < V; j++) {
            free(va[j]);
            free(vb[j]);
        }
        for (int i = 0; i < OPS; i++) {
            free(oa[i]);
            free(ob[i]);
        }
        free(tab);
        plant_fix_free(&f);
    }
}
END_TEST

/* The secret layout: each buffer at a 256-aligned offset, none
 * overlapping, at least the guard apart and before the end; another seed
 * or salt gives another layout; the poison is a NaN of its dtype and the
 * kept op one of the ops. */
START_TEST(test_the_layout_of_variants_and_slots_is_a_secret_of_the_seed)
{
    size_t off[40], off2[40], total, total2;
    ev_err err;
    ck_assert_int_eq(ev_plant_layout(1, 1, 40, 512, EV_PLANT_ROWS * 16, off, &total, &err), EV_OK);
    for (size_t i = 0; i < 40; i++) {
        ck_assert_uint_eq(off[i] % 256, 0);
        ck_assert(off[i] + 512 + EV_PLANT_ROWS * 16 <= total);
        for (size_t k = 0; k < 40; k++)
            if (k != i)
                ck_assert(off[k] + 512 + EV_PLANT_ROWS * 16 <= off[i] ||
                          off[i] + 512 + EV_PLANT_ROWS * 16 <= off[k]);
    }
    ck_assert_int_eq(ev_plant_layout(2, 1, 40, 512, EV_PLANT_ROWS * 16, off2, &total2, &err), EV_OK);
    ck_assert(memcmp(off, off2, sizeof off));
    ck_assert_int_eq(ev_plant_layout(1, 2, 40, 512, EV_PLANT_ROWS * 16, off2, &total2, &err), EV_OK);
    ck_assert(memcmp(off, off2, sizeof off));
    for (uint64_t seed = 0; seed < 64; seed++) {
        uint32_t a = ev_plant_poison(seed, EV_DTYPE_FP32), h = ev_plant_poison(seed, EV_DTYPE_FP16),
                 b = ev_plant_poison(seed, EV_DTYPE_BF16);
        ck_assert(isnan(ev_f32_from_bits(a)) && isnan(ev_fp16_to_f32((uint16_t)h)) &&
                  isnan(ev_bf16_to_f32((uint16_t)b)));
        ck_assert_int_lt(ev_plant_kept_op(seed, 100), 100);
    }
    ck_assert(ev_plant_poison(1, EV_DTYPE_FP32) != ev_plant_poison(2, EV_DTYPE_FP32));
    /* V: as many as half the cache holds, else the budget; 2 .. ops */
    ck_assert_int_eq(ev_plant_variants(65536, 50 << 20, INT64_C(2) << 30, 100), 100);
    ck_assert_int_eq(ev_plant_variants(1 << 20, 50 << 20, INT64_C(2) << 30, 100), 25);
    ck_assert_int_eq(ev_plant_variants(20 << 20, 50 << 20, INT64_C(2) << 30, 100), 2);
    ck_assert_int_eq(ev_plant_variants(INT64_C(256) << 20, 50 << 20, INT64_C(2) << 30, 100), 8);
    ck_assert_int_eq(ev_plant_variants(INT64_C(3) << 30, 50 << 20, INT64_C(2) << 30, 100), 2);
}
END_TEST

START_TEST(test_reductions_match_the_oracle_on_odd_shapes)
{
    ev_cpu_pool *pool = NULL;
    ev_err err;
    ck_assert_int_eq(ev_cpu_pool_new(3, &pool, &err), EV_OK);
    for (size_t k = 0; k < sizeof odd_shapes / sizeof odd_shapes[0]; k++) {
        for (int op = 0; op < EV_OP_COUNT; op++) {
            for (int d = 0; d < EV_DTYPE_COUNT; d++) {
                ev_shape s = {(ev_op)op, (ev_dtype)d, odd_shapes[k][0], odd_shapes[k][1], odd_shapes[k][2]};
                fixture f;
                ev_validation v;
                fixture_make(&f, &s, 42 + k, 6);
                v = run_and_validate(pool, &f, 2);
                ck_assert_msg(v.passed, "%s %s %lldx%lld stride %lld: %lld mismatches (row %lld)",
                              ev_op_name(s.op), ev_dtype_name(s.dtype), (long long)s.rows, (long long)s.cols,
                              (long long)s.stride, (long long)v.mismatches, (long long)v.first_bad);
                if (s.op == EV_OP_SUM && s.rows > 0)
                    ck_assert(v.bound > 0.0);
                fixture_free(&f);
            }
        }
    }
    ev_cpu_pool_free(pool);
}
END_TEST

START_TEST(test_zero_rows_writes_nothing)
{
    ev_cpu_pool *pool = NULL;
    ev_err err;
    ev_cpu_receipt plan;
    unsigned char in[8], out[8];
    ev_binding b = {{EV_OP_SUM, EV_DTYPE_FP32, 0, 2, 2}, in, 0, out, 0, 0, 0, 0, 0};
    memset(out, 0x5a, sizeof out);
    ck_assert_int_eq(ev_binding_check(&b, &err), EV_OK);
    ck_assert_int_eq(ev_cpu_pool_new(2, &pool, &err), EV_OK);
    ck_assert_int_eq(ev_reduce_cpu_plan(&b.shape, "rows1", 1, 2, &plan, &err), EV_OK);
    ck_assert_int_eq(plan.tasks, 0);
    ck_assert_int_eq(plan.threads, 0);
    ck_assert_int_eq(ev_reduce_cpu_run(pool, &b, &plan, &err), EV_OK);
    for (size_t i = 0; i < sizeof out; i++)
        ck_assert_uint_eq(out[i], 0x5a);
    ev_cpu_pool_free(pool);
}
END_TEST

/* Writes the float v into element i of a dtype-d row. */
static void put(ev_dtype d, unsigned char *row, size_t i, float v)
{
    ev_dtype_store(d, row, i, v);
}

START_TEST(test_nan_signed_zero_and_infinities_reduce_as_torch_does)
{
    for (int d = 0; d < EV_DTYPE_COUNT; d++) {
        /* rows: {NaN among values}, {-0,-0}, {-0,+0}, {+Inf,1}, {+Inf,-Inf}, {-Inf,-Inf}, {1,NaN at end} */
        ev_dtype dt = (ev_dtype)d;
        const int R = 7, N = 300;
        unsigned char in[7 * 300 * 4], out[7 * 4];
        float expect_sum[7], expect_max[7], expect_min[7], expect_mean[7];
        for (int r = 0; r < R; r++)
            for (int c = 0; c < N; c++)
                put(dt, in, (size_t)(r * N + c), (r == 1 || r == 2) ? -0.0f : 0.25f);
        put(dt, in, 0 * N + 17, NAN);
        put(dt, in, 2 * N + 150, 0.0f);
        put(dt, in, 3 * N + 5, INFINITY);
        put(dt, in, 4 * N + 5, INFINITY);
        put(dt, in, 4 * N + 299, -INFINITY);
        for (int c = 0; c < N; c++)
            put(dt, in, (size_t)(5 * N + c), -INFINITY);
        put(dt, in, 6 * N + 299, NAN);
        expect_sum[0] = NAN;
        expect_max[0] = NAN;
        expect_sum[1] = -0.0f;
        expect_max[1] = -0.0f;
        expect_sum[2] = 0.0f;
        expect_max[2] = 0.0f;
        expect_sum[3] = INFINITY;
        expect_max[3] = INFINITY;
        expect_sum[4] = NAN;
        expect_max[4] = INFINITY;
        expect_sum[5] = -INFINITY;
        expect_max[5] = -INFINITY;
        expect_sum[6] = NAN;
        expect_max[6] = NAN;
        /* MIN: the order's least, -0 below +0 (torch.amin) */
        expect_min[0] = NAN;
        expect_min[1] = -0.0f;
        expect_min[2] = -0.0f;
        expect_min[3] = 0.25f;
        expect_min[4] = -INFINITY;
        expect_min[5] = -INFINITY;
        expect_min[6] = NAN;
        /* MEAN: the sum over N (NaN and infinities as the sum's) */
        expect_mean[0] = NAN;
        expect_mean[1] = -0.0f;
        expect_mean[2] = 0.0f;
        expect_mean[3] = INFINITY;
        expect_mean[4] = NAN;
        expect_mean[5] = -INFINITY;
        expect_mean[6] = NAN;
        for (int op = 0; op < EV_OP_COUNT; op++) {
            ev_binding b = {{(ev_op)op, dt, R, N, N}, in, sizeof in, out, sizeof out, 0, 0, 0, 0};
            ev_err err;
            ev_validation v;
            ck_assert_int_eq(ev_binding_check(&b, &err), EV_OK);
            ev_reduce_rows(&b, 0, R);
            for (int r = 0; r < R; r++) {
                ev_combine c = ev_op_combine((ev_op)op);
                float e = ev_op_finish((ev_op)op) == EV_FINISH_MEAN ? expect_mean[r]
                          : c == EV_COMBINE_SUM                     ? expect_sum[r]
                          : c == EV_COMBINE_MAX                     ? expect_max[r]
                                                                    : expect_min[r];
                float y = ev_dtype_load(dt, out, (size_t)r);
                if (isnan(e))
                    ck_assert_uint_eq(ev_f32_bits(y), EV_FP32_QNAN); /* canonical NaN, widened */
                else
                    ck_assert_msg(ev_f32_bits(y) == ev_f32_bits(e), "%s %s row %d: %a, want %a",
                                  ev_op_name((ev_op)op), ev_dtype_name(dt), r, y, e);
            }
            ck_assert_int_eq(ev_oracle_validate(&b.shape, in, out, 0, &v, &err), EV_OK);
            ck_assert(v.passed);
        }
    }
}
END_TEST

/* ---- host mirror of the CUDA MAX on keys (reduce_default.cuh) ----------- */

/* The twin's 16-bit unsigned key (reduce_cpu.c). */
static uint32_t twin_key16(uint32_t u)
{
    return (u & 0x8000u) ? (~u & 0xffffu) : (u | 0x8000u);
}

/* ev_key2: two 16-bit keys of a word, both halves at once. */
static uint32_t mirror_key2(uint32_t w)
{
    uint32_t s = w & 0x80008000u;
    return w ^ (s - (s >> 15));
}

/* Half k (0 low, 1 high) of w as a sign-extended 16-bit key. */
static int32_t mirror_half(uint32_t w, int k)
{
    return (int32_t)(int16_t)(uint16_t)(k ? w >> 16 : w & 0xffffu);
}

/* max.s16x2 / min.s16x2. */
static uint32_t mirror_vmax2(uint32_t a, uint32_t b, int want_max)
{
    uint32_t r = 0;
    for (int k = 0; k < 2; k++) {
        int32_t x = mirror_half(a, k), y = mirror_half(b, k);
        int32_t m = want_max ? (x > y ? x : y) : (x < y ? x : y);
        r |= ((uint32_t)m & 0xffffu) << (16 * k);
    }
    return r;
}

/* ev_unkey16. */
static uint32_t mirror_unkey16(int32_t k)
{
    return ((uint32_t)k ^ ((uint32_t)(k >> 31) & 0x7fffu)) & 0xffffu;
}

/* ev_mk<DT>::key for fp32. */
static int32_t mirror_key32(uint32_t u)
{
    return (int32_t)(u ^ ((uint32_t)((int32_t)u >> 31) >> 1));
}

START_TEST(test_max_keys_order_every_16_bit_pattern_as_the_twin_does)
{
    /* fp16 and bf16: key = twin key - 0x8000 in both halves, key -> pattern
     * round trips, and NaN exactly when the key leaves [key(-Inf), key(+Inf)] */
    const uint32_t pinf[2] = {0x7c00u, 0x7f80u};
    const int32_t kpos[2] = {0x7c00, 0x7f80}, kneg[2] = {-31745, -32641};
    for (int d = 0; d < 2; d++) {
        ck_assert_int_eq(mirror_half(mirror_key2(pinf[d] | 0x8000u), 0), kneg[d]);
        for (uint32_t h = 0; h < 65536; h++) {
            uint32_t k2 = mirror_key2(h * 0x10001u);
            int32_t k = mirror_half(k2, 0);
            int nan = (h & 0x7fffu) > pinf[d];
            ck_assert_int_eq(mirror_half(k2, 1), k);
            ck_assert_int_eq(k, (int32_t)twin_key16(h) - 0x8000);
            ck_assert_uint_eq(mirror_unkey16(k), h);
            ck_assert_int_eq(k > kpos[d] || k < kneg[d], nan);
            /* the other half of the word never leaks into this one */
            ck_assert_int_eq(mirror_half(mirror_key2(h | 0x80000000u), 0), k);
            ck_assert_int_eq(mirror_half(mirror_key2(h | 0x7fff0000u), 0), k);
        }
    }
}
END_TEST

START_TEST(test_max_keys_order_fp32_patterns_as_the_twin_does)
{
    uint32_t u = 0;
    for (uint64_t i = 0; i < (1u << 22); i++, u += 0x400u + (uint32_t)(i & 0x3ffu)) {
        int32_t k = mirror_key32(u);
        uint32_t twin = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
        int nan = (u & 0x7fffffffu) > 0x7f800000u;
        ck_assert_int_eq(k, (int32_t)(twin - 0x80000000u));
        ck_assert_uint_eq((uint32_t)k ^ ((uint32_t)(k >> 31) >> 1), u);
        ck_assert_int_eq(k > 0x7f800000 || k < (int32_t)0x807fffffu, nan);
    }
    ck_assert_int_eq(mirror_key32(0xff800000u), (int32_t)0x807fffffu);
    ck_assert_int_lt(mirror_key32(0x80000000u), mirror_key32(0u)); /* -0 below +0 */
}
END_TEST

/* Returns the mirror of the CUDA MAX (least: MIN) of one row (storage bits
 * of the output): 16-bit words folded two at a time (an odd tail element
 * duplicated into both halves, as ev_acc16::elem does), then a word of the
 * pad element (ev_pad: -Inf for MAX, +Inf for MIN, as a partial chunk is
 * padded), hi/lo keys, NaN test, decode of hi (MIN: lo). */
static uint32_t mirror_row_extreme(ev_dtype d, const unsigned char *row, int64_t n, int least)
{
    if (d == EV_DTYPE_FP32) {
        int32_t hi = (int32_t)0x807fffffu, lo = 0x7f800000;
        for (int64_t i = 0; i <= n; i++) {
            uint32_t u = least ? 0x7f800000u : 0xff800000u; /* i == n: the pad */
            if (i < n)
                memcpy(&u, row + i * 4, 4);
            int32_t k = mirror_key32(u);
            hi = k > hi ? k : hi;
            lo = k < lo ? k : lo;
        }
        if (hi > 0x7f800000 || lo < (int32_t)0x807fffffu)
            return EV_FP32_QNAN;
        int32_t k = least ? lo : hi;
        return (uint32_t)k ^ ((uint32_t)(k >> 31) >> 1);
    }
    {
        int32_t kpos = d == EV_DTYPE_FP16 ? 0x7c00 : 0x7f80, kneg = d == EV_DTYPE_FP16 ? -31745 : -32641;
        uint32_t hi2 = ((uint32_t)kneg & 0xffffu) * 0x10001u, lo2 = (uint32_t)kpos * 0x10001u;
        int32_t hi, lo;
        for (int64_t i = 0; i < n; i += 2) {
            uint16_t a, b;
            memcpy(&a, row + i * 2, 2);
            b = a;
            if (i + 1 < n)
                memcpy(&b, row + i * 2 + 2, 2);
            uint32_t k = mirror_key2((uint32_t)a | (uint32_t)b << 16);
            hi2 = mirror_vmax2(hi2, k, 1);
            lo2 = mirror_vmax2(lo2, k, 0);
        }
        { /* the pad word */
            uint32_t p = least ? (d == EV_DTYPE_FP16 ? 0x7c007c00u : 0x7f807f80u)
                               : (d == EV_DTYPE_FP16 ? 0xfc00fc00u : 0xff80ff80u);
            hi2 = mirror_vmax2(hi2, mirror_key2(p), 1);
            lo2 = mirror_vmax2(lo2, mirror_key2(p), 0);
        }
        hi = mirror_half(hi2, 0) > mirror_half(hi2, 1) ? mirror_half(hi2, 0) : mirror_half(hi2, 1);
        lo = mirror_half(lo2, 0) < mirror_half(lo2, 1) ? mirror_half(lo2, 0) : mirror_half(lo2, 1);
        if (hi > kpos || lo < kneg)
            return d == EV_DTYPE_FP16 ? 0x7e00u : 0x7fc0u;
        return mirror_unkey16(least ? lo : hi);
    }
}

START_TEST(test_max_and_min_on_keys_give_the_twin_bits_on_special_rows)
{
    /* rows mixing NaN (both signs, payloads), -0/+0, +-Inf, subnormals and
     * ordinary values, drawn from a fixed LCG; odd N leaves a tail element */
    const uint32_t specials16[2][10] = {
        {0x7e00u, 0xfc05u, 0x8000u, 0x0000u, 0x7c00u, 0xfc00u, 0x0001u, 0x83ffu, 0x3c00u, 0xbc00u},
        {0x7fc0u, 0xff85u, 0x8000u, 0x0000u, 0x7f80u, 0xff80u, 0x0001u, 0x807fu, 0x3f80u, 0xbf80u}};
    const uint32_t specials32[10] = {0x7fc00000u, 0xff800123u, 0x80000000u, 0u,          0x7f800000u,
                                     0xff800000u, 0x00000001u, 0x807fffffu, 0x3f800000u, 0xbf800000u};
    uint64_t st = 12345;
    for (int d = 0; d < EV_DTYPE_COUNT; d++) {
        ev_dtype dt = (ev_dtype)d;
        size_t es = ev_dtype_size(dt);
        for (int trial = 0; trial < 3000; trial++) {
            unsigned char in[37 * 4], out[4];
            int64_t n = 1 + trial % 37;
            int mode = trial % 5; /* 0: only specials; 1-4: mostly ordinary values */
            for (int64_t i = 0; i < n; i++) {
                uint32_t u, pick;
                st = st * 6364136223846793005ull + 1442695040888963407ull;
                pick = (uint32_t)(st >> 33);
                if (mode == 0 || pick % (8 * (uint32_t)mode) == 0) {
                    uint32_t j = (pick >> 8) % 10;
                    u = dt == EV_DTYPE_FP32 ? specials32[j] : specials16[dt == EV_DTYPE_BF16][j];
                } else {
                    u = dt == EV_DTYPE_FP32 ? (pick & 0xbfffffffu) : ((pick >> 5) & 0xbfffu);
                }
                if (es == 4) {
                    memcpy(in + i * 4, &u, 4);
                } else {
                    uint16_t h = (uint16_t)u;
                    memcpy(in + i * 2, &h, 2);
                }
            }
            for (int least = 0; least < 2; least++) {
                ev_binding b = {
                    {least ? EV_OP_MIN : EV_OP_MAX, dt, 1, n, n}, in, (size_t)n * es, out, es, 0, 0, 0, 0};
                uint32_t got = 0, want = mirror_row_extreme(dt, in, n, least);
                ev_reduce_rows(&b, 0, 1);
                memcpy(&got, out, es);
                ck_assert_msg(got == want, "%s %s n=%lld trial %d: twin %#x, keys %#x",
                              ev_op_name(b.shape.op), ev_dtype_name(dt), (long long)n, trial, got, want);
            }
        }
    }
}
END_TEST

START_TEST(test_outputs_are_bit_identical_across_threads_and_schedules)
{
    ev_shape shapes[] = {{EV_OP_MAX, EV_DTYPE_FP16, 301, 515, 520},
                         {EV_OP_SUM, EV_DTYPE_BF16, 301, 515, 520},
                         {EV_OP_SUM, EV_DTYPE_FP32, 64, 3000, 3001},
                         {EV_OP_MAX, EV_DTYPE_FP32, 64, 3000, 3001}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        fixture f;
        unsigned char *first = NULL;
        size_t n = (size_t)shapes[k].rows * ev_dtype_size(shapes[k].dtype);
        fixture_make(&f, &shapes[k], 9, 0);
        for (int threads = 1; threads <= 4; threads++) {
            ev_cpu_pool *pool = NULL;
            ev_err err;
            ck_assert_int_eq(ev_cpu_pool_new(threads, &pool, &err), EV_OK);
            for (int64_t b = 1; b <= 8; b *= 2) {
                ev_validation v;
                ev_inputs_poison_output(f.out, n);
                v = run_and_validate(pool, &f, b);
                ck_assert(v.passed);
                if (first == NULL) {
                    first = malloc(n);
                    memcpy(first, f.out, n);
                } else {
                    ck_assert_msg(memcmp(first, f.out, n) == 0, "shape %zu threads %d b %lld differs", k,
                                  threads, (long long)b);
                }
            }
            ev_cpu_pool_free(pool);
        }
        free(first);
        fixture_free(&f);
    }
}
END_TEST

START_TEST(test_sum_repeats_bit_for_bit_in_one_run)
{
    ev_shape s = {EV_OP_SUM, EV_DTYPE_FP16, 129, 2049, 2049};
    fixture f;
    ev_cpu_pool *pool = NULL;
    ev_err err;
    size_t n = 129 * 2;
    unsigned char first[129 * 2];
    fixture_make(&f, &s, 5, 0);
    ck_assert_int_eq(ev_cpu_pool_new(2, &pool, &err), EV_OK);
    run_and_validate(pool, &f, 4);
    memcpy(first, f.out, n);
    for (int rep = 0; rep < 20; rep++) {
        ev_inputs_poison_output(f.out, n);
        run_and_validate(pool, &f, 4);
        ck_assert(memcmp(first, f.out, n) == 0);
    }
    ev_cpu_pool_free(pool);
    fixture_free(&f);
}
END_TEST

/* The documented order, written lane by lane as a GPU thread runs it. */
static float lane_order_sum(const float *x, int64_t n, int64_t t, int64_t v)
{
    float lane[1024];
    for (int64_t l = 0; l < t; l++) {
        float slot[8];
        for (int64_t j = 0; j < v; j++)
            slot[j] = -0.0f;
        for (int64_t c = l; c * v < n; c += t)
            for (int64_t j = 0; j < v && c * v + j < n; j++)
                slot[j] = slot[j] + x[c * v + j];
        for (int64_t m = v / 2; m >= 1; m /= 2)
            for (int64_t j = 0; j < m; j++)
                slot[j] = slot[j] + slot[j + m];
        lane[l] = slot[0];
    }
    for (int64_t w = 0; w < t / 32; w++) /* xor butterfly, read as lane 0 */
        for (int64_t m = 16; m >= 1; m /= 2)
            for (int64_t l = 0; l < m; l++)
                lane[w * 32 + l] = lane[w * 32 + l] + lane[w * 32 + l + m];
    for (int64_t m = t / 64; m >= 1; m /= 2)
        for (int64_t w = 0; w < m; w++)
            lane[w * 32] = lane[w * 32] + lane[(w + m) * 32];
    return lane[0];
}

START_TEST(test_sum_follows_the_documented_lane_order)
{
    int64_t ns[] = {1, 7, 127, 128, 129, 1000, 4097, 70001};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        ev_shape s = {EV_OP_SUM, EV_DTYPE_FP32, 1, ns[k], ns[k]};
        fixture f;
        float want;
        fixture_make(&f, &s, 11 + k, 0);
        /* make the order matter: large and tiny magnitudes */
        for (int64_t i = 0; i < ns[k]; i += 3)
            ((float *)(void *)f.in)[i] *= 0x1p20f;
        want = lane_order_sum((const float *)(const void *)f.in, ns[k], ev_reduce_lanes(ns[k], EV_DTYPE_FP32),
                              4);
        ev_reduce_rows(&f.b, 0, 1);
        ck_assert_msg(ev_f32_bits(want) == ev_f32_bits(ev_dtype_load(EV_DTYPE_FP32, f.out, 0)), "N=%lld",
                      (long long)ns[k]);
        fixture_free(&f);
    }
    ck_assert_int_eq(ev_reduce_lanes(256, EV_DTYPE_FP16), 32);
    ck_assert_int_eq(ev_reduce_lanes(4096, EV_DTYPE_BF16), 128);
    ck_assert_int_eq(ev_reduce_lanes(8192, EV_DTYPE_FP32), 512);
    ck_assert_int_eq(ev_reduce_lanes(1048576, EV_DTYPE_FP32), 1024);
    ck_assert_int_eq(ev_reduce_vec(EV_DTYPE_FP16), 8);
}
END_TEST

START_TEST(test_sum_bound_holds_on_adversarial_inputs)
{
    /* row 0: 2^24 then ones in the same partial (each one is lost in FP32);
     * row 1: alternating +-big with small values (cancellation);
     * row 2: values just below the fp16 rounding boundary */
    const int64_t N = 4096;
    float *x = malloc((size_t)(3 * N) * 4);
    float out[3];
    ev_binding b = {{EV_OP_SUM, EV_DTYPE_FP32, 3, N, N}, x, (size_t)(3 * N) * 4, out, sizeof out, 0, 0, 0, 0};
    ev_err err;
    ev_validation v;
    int64_t L = ev_reduce_lanes(N, EV_DTYPE_FP32) * 4;
    for (int64_t i = 0; i < N; i++) {
        x[i] = (i == 0) ? 0x1p24f : ((i % L) == 0 ? 1.0f : 0.0f);
        x[N + i] = (i % 2 ? -1.0f : 1.0f) * 0x1p20f + (float)(i % 7) * 0x1p-4f;
        x[2 * N + i] = 1.0009765625f;
    }
    ck_assert_int_eq(ev_binding_check(&b, &err), EV_OK);
    ev_reduce_rows(&b, 0, 3);
    /* the lost ones make row 0 differ from the exact sum: the bound must still hold */
    ck_assert(out[0] != (float)(0x1p24 + (double)((N - 1) / L)));
    ck_assert_int_eq(ev_oracle_validate(&b.shape, x, out, 0, &v, &err), EV_OK);
    ck_assert_msg(v.passed, "row %lld", (long long)v.first_bad);
    ck_assert(v.max_abs_err > 0.0);
    ck_assert(v.max_abs_err <= v.bound);
    /* and the validator fails an output just outside the bound */
    {
        ev_oracle_row o;
        ev_oracle_reduce_row(EV_OP_SUM, EV_DTYPE_FP32, x + N, N, &o);
        out[1] = (float)(o.ref + 1.01 * ev_oracle_sum_bound(EV_DTYPE_FP32, N, 0, o.ref, o.abs_sum)) + 1.0f;
        ck_assert_int_eq(ev_oracle_validate(&b.shape, x, out, 0, &v, &err), EV_OK);
        ck_assert(!v.passed);
        ck_assert_int_eq(v.mismatches, 1);
        ck_assert_int_eq(v.first_bad, 1);
    }
    free(x);
}
END_TEST

/* tolerances.sum_depth (oracle.h): depth 0 or >= N is gamma(N), bit for
 * bit; below N the bound is gamma(D) sum|x| plus the oracle's own error;
 * the documented order (depth about N / (t V) + log2(t V)) passes it on a
 * long row where an all-zero output passes gamma(N) and not gamma(D). */
START_TEST(test_a_declared_sum_depth_tightens_the_bound_and_the_documented_order_meets_it)
{
    const int64_t N = 131072;
    ev_shape s = {EV_OP_SUM, EV_DTYPE_FP32, 4, N, N};
    fixture f;
    ev_validation v;
    ev_err err;
    float zero[4] = {0, 0, 0, 0};

    ck_assert(ev_oracle_sum_slack(N, 0) == ev_oracle_gamma(N));
    ck_assert(ev_oracle_sum_slack(N, N) == ev_oracle_gamma(N));
    ck_assert(ev_oracle_sum_slack(N, 2 * N) == ev_oracle_gamma(N));
    ck_assert(ev_oracle_sum_slack(N, 1024) > ev_oracle_gamma(1024));
    ck_assert(ev_oracle_sum_slack(N, 1024) < 1.001 * ev_oracle_gamma(1024));
    ck_assert(ev_oracle_sum_bound(EV_DTYPE_FP32, N, 0, 3.0, 1e4) ==
              ev_oracle_sum_bound(EV_DTYPE_FP32, N, N, 3.0, 1e4));
    fixture_make(&f, &s, 11, 0);
    ev_reduce_rows(&f.b, 0, 4);
    ck_assert_int_eq(ev_oracle_validate(&s, f.in, f.out, 1024, &v, &err), EV_OK);
    ck_assert_msg(v.passed, "row %lld", (long long)v.first_bad);
    ck_assert(v.max_abs_err <= v.bound);
    ck_assert_int_eq(ev_oracle_validate(&s, f.in, zero, 0, &v, &err), EV_OK);
    ck_assert(v.passed); /* gamma(N) cannot tell zeros */
    ck_assert_int_eq(ev_oracle_validate(&s, f.in, zero, 1024, &v, &err), EV_OK);
    ck_assert(!v.passed);
    fixture_free(&f);
}
END_TEST

/* The row-by-row stream and the one-row rewrites give the bytes the
 * whole-span writers give (the verifier regenerates inputs with them). */
START_TEST(test_row_streams_give_the_bytes_of_the_whole_span_writers)
{
    ev_shape s = {EV_OP_SUM, EV_DTYPE_BF16, 5, 37, 40};
    size_t es = 2, span = ((size_t)4 * 40 + 37) * es;
    unsigned char *a = malloc(span), *b = malloc(span), row[37 * 2];
    ev_inputs_stream z;
    ev_err err;

    ck_assert_int_eq(ev_inputs_fill(&s, 99, 3, a, span, &err), EV_OK);
    ev_inputs_stream_init(&z, 99, 3);
    for (int64_t r = 0; r < s.rows; r++) {
        ev_inputs_stream_row(&s, &z, row);
        ck_assert_int_eq(memcmp(row, a + (size_t)r * 40 * es, sizeof row), 0);
    }
    memcpy(b, a, span);
    ev_inputs_second_set(&s, 1234, b);
    for (int64_t r = 0; r < s.rows; r++) {
        ev_inputs_second_row(&s, 1234, r, row);
        ck_assert_int_eq(memcmp(row, b + (size_t)r * 40 * es, sizeof row), 0);
    }
    memcpy(b, a, span);
    ev_inputs_rewrite_row(&s, 77, 3, b);
    ev_inputs_new_row(&s, 77, 3, row);
    ck_assert_int_eq(memcmp(row, b + (size_t)3 * 40 * es, sizeof row), 0);
    ck_assert_int_ne(memcmp(row, a + (size_t)3 * 40 * es, sizeof row), 0);
    free(a);
    free(b);
}
END_TEST

START_TEST(test_validator_rejects_a_wrong_max_and_a_noncanonical_nan)
{
    ev_shape s = {EV_OP_MAX, EV_DTYPE_BF16, 4, 100, 100};
    fixture f;
    ev_validation v;
    ev_err err;
    uint16_t h;
    fixture_make(&f, &s, 3, 0);
    ev_reduce_rows(&f.b, 0, 4);
    ck_assert_int_eq(ev_oracle_validate(&s, f.in, f.out, 0, &v, &err), EV_OK);
    ck_assert(v.passed);
    memcpy(&h, f.out + 2, 2);
    h ^= 1; /* one ulp off */
    memcpy(f.out + 2, &h, 2);
    ck_assert_int_eq(ev_oracle_validate(&s, f.in, f.out, 0, &v, &err), EV_OK);
    ck_assert(!v.passed);
    ck_assert_int_eq(v.first_bad, 1);
    /* a NaN row must hold the canonical NaN, not the poison */
    ev_dtype_store(EV_DTYPE_BF16, f.in, 250, NAN);
    ev_inputs_poison_output(f.out, 8);
    ev_reduce_rows(&f.b, 0, 4);
    ck_assert_int_eq(ev_oracle_validate(&s, f.in, f.out, 0, &v, &err), EV_OK);
    ck_assert(v.passed);
    h = 0x7fc1;
    memcpy(f.out + 4, &h, 2);
    ck_assert_int_eq(ev_oracle_validate(&s, f.in, f.out, 0, &v, &err), EV_OK);
    ck_assert(!v.passed);
    fixture_free(&f);
}
END_TEST

/* The MEAN bound (kernels/oracle.h): the twin's quotient (one division)
 * and torch's form (a product with the FP32 reciprocal of N) both pass on
 * every row, an output just past the bound on either side does not, and
 * the bound is the documented e + ulp_d(|ref| + e)/2. */
START_TEST(test_the_mean_bound_admits_the_division_and_the_reciprocal_product_and_nothing_past_it)
{
    for (int d = 0; d < EV_DTYPE_COUNT; d++) {
        ev_shape s = {EV_OP_MEAN, (ev_dtype)d, 40, 3001, 3001};
        fixture f;
        ev_validation v;
        ev_oracle_row rows[40];
        ev_err err;
        fixture_make(&f, &s, 77 + d, 0);
        ev_reduce_rows(&f.b, 0, s.rows);
        ck_assert_int_eq(ev_oracle_rows(&s, f.in, rows, &err), EV_OK);
        ck_assert_int_eq(ev_oracle_validate_rows(&s, rows, f.out, 0, &v, &err), EV_OK);
        ck_assert_msg(v.passed, "%s: the twin's means fail", ev_dtype_name(s.dtype));
        for (int64_t r = 0; r < s.rows; r++) {
            ev_shape one = s;
            one.rows = 1;
            unsigned char o[4];
            double n = (double)s.cols, ref = rows[r].ref;
            double g = ev_oracle_sum_slack(s.cols, 0) * rows[r].abs_sum;
            double e = g / n + ev_oracle_gamma(3) * (fabs(ref) + g / n);
            double bound = ev_oracle_mean_bound(s.dtype, s.cols, 0, ref, rows[r].abs_sum);
            ck_assert(bound == e + 0.5 * ev_oracle_ulp(s.dtype, fabs(ref) + e));
            /* torch's mean: the FP32 sum times the FP32 reciprocal of N */
            float sum = (float)(ref * n);
            ev_dtype_store(s.dtype, o, 0, sum * (1.0f / (float)s.cols));
            ck_assert_int_eq(ev_oracle_validate_rows(&one, &rows[r], o, 0, &v, &err), EV_OK);
            ck_assert_msg(v.passed, "%s row %lld: the reciprocal product fails", ev_dtype_name(s.dtype),
                          (long long)r);
            /* past the bound on either side: the first stored value beyond it */
            for (int side = -1; side <= 1; side += 2) {
                float y = (float)(ref + side * bound);
                ev_dtype_store(s.dtype, o, 0, y);
                while (fabs((double)ev_dtype_load(s.dtype, o, 0) - ref) <= bound) {
                    y = nextafterf(y, side > 0 ? INFINITY : -INFINITY);
                    ev_dtype_store(s.dtype, o, 0, y);
                }
                ck_assert_int_eq(ev_oracle_validate_rows(&one, &rows[r], o, 0, &v, &err), EV_OK);
                ck_assert_msg(!v.passed, "%s row %lld: an output past the bound passes",
                              ev_dtype_name(s.dtype), (long long)r);
            }
        }
        fixture_free(&f);
    }
}
END_TEST

/* The oracle's rows computed ahead (a staged job computes them before
 * its gate) give ev_oracle_validate's verdict and numbers exactly, for a
 * correct output and for a wrong one, on every op and dtype. */
START_TEST(test_validating_against_rows_computed_ahead_equals_validating_the_input)
{
    static const ev_dtype dts[] = {EV_DTYPE_FP32, EV_DTYPE_FP16, EV_DTYPE_BF16};
    for (int op = 0; op < EV_OP_COUNT; op++)
        for (size_t d = 0; d < 3; d++) {
            ev_shape s = {(ev_op)op, dts[d], 37, 257, 260};
            fixture f;
            ev_validation a, b;
            ev_oracle_row rows[37];
            ev_err err;
            fixture_make(&f, &s, 11 + d, 0);
            ev_reduce_rows(&f.b, 0, s.rows);
            ck_assert_int_eq(ev_oracle_rows(&s, f.in, rows, &err), EV_OK);
            for (int wrong = 0; wrong < 2; wrong++) {
                if (wrong)
                    f.out[ev_dtype_size(s.dtype) * 6 - 1] ^= 0x40; /* row 5, an exponent bit */
                ck_assert_int_eq(ev_oracle_validate(&s, f.in, f.out, 0, &a, &err), EV_OK);
                ck_assert_int_eq(ev_oracle_validate_rows(&s, rows, f.out, 0, &b, &err), EV_OK);
                ck_assert_int_eq(a.passed, !wrong);
                ck_assert_int_eq(a.passed, b.passed);
                ck_assert_int_eq(a.mismatches, b.mismatches);
                ck_assert_int_eq(a.first_bad, b.first_bad);
                ck_assert(a.max_abs_err == b.max_abs_err && a.bound == b.bound);
            }
            fixture_free(&f);
        }
    ev_shape bad = {EV_OP_SUM, EV_DTYPE_FP32, 2, 8, 4};
    ev_oracle_row r2[2];
    ev_err err;
    float x[16] = {0};
    ck_assert_int_eq(ev_oracle_rows(&bad, x, r2, &err), EV_EINVAL);
}
END_TEST

START_TEST(test_unwritten_rows_fail_validation)
{
    ev_shape s = {EV_OP_SUM, EV_DTYPE_FP16, 9, 64, 64};
    fixture f;
    ev_validation v;
    ev_err err;
    fixture_make(&f, &s, 3, 0);
    ev_reduce_rows(&f.b, 0, 8); /* the last row keeps its poison */
    ck_assert_int_eq(ev_oracle_validate(&s, f.in, f.out, 0, &v, &err), EV_OK);
    ck_assert(!v.passed);
    ck_assert_int_eq(v.first_bad, 8);
    fixture_free(&f);
}
END_TEST

/* ---- binding ----------------------------------------------------------- */

/* Returns the status of checking b and copies the reason into msg. */
static ev_status check_binding(ev_binding b, char *msg, size_t n)
{
    ev_err err;
    ev_status rc;
    err.msg[0] = '\0';
    rc = ev_binding_check(&b, &err);
    snprintf(msg, n, "%s", err.msg);
    return rc;
}

START_TEST(test_binding_refuses_each_bad_request_with_its_reason)
{
    static _Alignas(256) unsigned char mem[4096];
    unsigned char *in = mem, *out = mem + 2048;
    char msg[512];
    ev_binding ok = {{EV_OP_SUM, EV_DTYPE_FP32, 4, 10, 12}, in, (3 * 12 + 10) * 4, out, 16, 0, 0, 0, 0};
    ev_binding b;

    ck_assert_int_eq(check_binding(ok, msg, sizeof msg), EV_OK);

    b = ok;
    b.shape.cols = 0;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "N = 0"));
    b = ok;
    b.shape.stride = 9;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "stride 9 is less than N = 10"));
    b = ok;
    b.in_span -= 1;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "input span"));
    b = ok;
    b.out_span = 15;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "output span"));
    b = ok;
    b.in = in + 2;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "input"));
    ck_assert_ptr_nonnull(strstr(msg, "not aligned"));
    b = ok;
    b.out = out + 1;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "output"));
    ck_assert_ptr_nonnull(strstr(msg, "not aligned"));
    b = ok;
    b.out = in + 180; /* inside the input span */
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "overlap"));
    b = ok;
    b.out = in - 8;
    b.out_span = 16; /* output runs into the input */
    b.out = mem + 2048;
    b.in = mem + 2048 + 8;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "overlap"));
    b = ok;
    b.shape.rows = -1;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    b = ok;
    b.shape.rows = INT64_MAX / 2;
    b.shape.stride = INT64_MAX / 2;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "overflow"));
    b = ok;
    b.in = NULL;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "NULL"));
    b = ok;
    b.shape.dtype = (ev_dtype)9;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_EINVAL);
    /* adjacent spans do not overlap; R = 0 needs no bytes at all */
    b = ok;
    b.out = in + b.in_span;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_OK);
    b = ok;
    b.shape.rows = 0;
    b.in_span = 0;
    b.out_span = 0;
    ck_assert_int_eq(check_binding(b, msg, sizeof msg), EV_OK);
}
END_TEST

START_TEST(test_binding_records_alignment_capped_at_256)
{
    static _Alignas(512) unsigned char mem[2048];
    ev_binding b = {{EV_OP_MAX, EV_DTYPE_FP16, 2, 3, 5}, mem + 6, 64, mem + 1024, 4, 0, 0, 0, 0};
    ev_err err;
    ck_assert_int_eq(ev_binding_check(&b, &err), EV_OK);
    ck_assert_uint_eq(b.in_align, 2);
    ck_assert_uint_eq(b.out_align, 256);
    ck_assert_uint_eq(b.in_need, 16);
    ck_assert_uint_eq(b.out_need, 4);
    ck_assert_uint_eq(ev_binding_align(mem + 16), 16);
}
END_TEST

/* ---- inputs, receipts, pool -------------------------------------------- */

START_TEST(test_inputs_are_the_same_bytes_for_a_seed_and_case)
{
    ev_shape s = {EV_OP_SUM, EV_DTYPE_FP16, 3, 5, 8};
    unsigned char a[48], b[48], c[48];
    ev_err err;
    ck_assert_int_eq(ev_inputs_fill(&s, 1, 2, a, sizeof a, &err), EV_OK);
    ck_assert_int_eq(ev_inputs_fill(&s, 1, 2, b, sizeof b, &err), EV_OK);
    ck_assert_int_eq(ev_inputs_fill(&s, 1, 3, c, sizeof c, &err), EV_OK);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    ck_assert(memcmp(a, c, sizeof a) != 0);
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 8; k++) {
            uint16_t h;
            memcpy(&h, a + (r * 8 + k) * 2, 2);
            if (k >= 5) {
                ck_assert_uint_eq(h, EV_POISON_FP16);
            } else {
                float f = ev_fp16_to_f32(h);
                ck_assert(f >= -1.0f && f <= 1.0f);
            }
        }
    }
    ck_assert_int_eq(ev_inputs_fill(&s, 1, 2, a, 20, &err), EV_EINVAL);
}
END_TEST

START_TEST(test_cpu_plan_names_the_entry_and_partition)
{
    ev_shape s = {EV_OP_SUM, EV_DTYPE_FP16, 17, 1024, 1024};
    ev_cpu_receipt r;
    ev_err err;
    ck_assert_int_eq(ev_reduce_cpu_plan(&s, "rows2", 2, 4, &r, &err), EV_OK);
    ck_assert_str_eq(r.entry, "reduce_sum_fp16_rows2");
    ck_assert_int_eq(r.tasks, 9);
    ck_assert_int_eq(r.rows_per_task, 2);
    ck_assert_int_eq(r.threads, 4);
    ck_assert_int_eq(r.lanes, 32);
    s.op = EV_OP_MAX;
    s.dtype = EV_DTYPE_BF16;
    ck_assert_int_eq(ev_reduce_cpu_plan(&s, "default", 8, 4, &r, &err), EV_OK);
    ck_assert_str_eq(r.entry, "reduce_max_bf16_default");
    ck_assert_int_eq(r.tasks, 3);
    ck_assert_int_eq(r.threads, 3);
    ck_assert_int_eq(ev_reduce_cpu_plan(&s, "default", 0, 4, &r, &err), EV_EINVAL);
}
END_TEST

/* Task body that counts each task once. */
static void count_task(void *ctx, int64_t task)
{
    int *hits = ctx;
    __atomic_fetch_add(&hits[task], 1, __ATOMIC_RELAXED);
}

START_TEST(test_pool_runs_every_task_exactly_once_across_batches)
{
    ev_cpu_pool *pool = NULL;
    ev_err err;
    int hits[100];
    ck_assert_int_eq(ev_cpu_pool_new(4, &pool, &err), EV_OK);
    for (int batch = 1; batch <= 100; batch++) {
        memset(hits, 0, sizeof hits);
        ev_cpu_pool_run(pool, batch, count_task, hits);
        for (int i = 0; i < 100; i++)
            ck_assert_int_eq(hits[i], i < batch ? 1 : 0);
    }
    ev_cpu_floor(pool);
    {
        uint64_t buf[1000];
        uint64_t want = 0;
        for (int i = 0; i < 1000; i++) {
            buf[i] = (uint64_t)i * 0x9e3779b97f4a7c15ull;
            want ^= buf[i];
        }
        ck_assert_uint_eq(ev_cpu_stream_read(pool, buf, sizeof buf), want);
    }
    ck_assert(ev_cpu_llc_bytes() > 0);
    ev_cpu_pool_free(pool);
    ev_cpu_pool_free(NULL);
    ck_assert_int_eq(ev_cpu_pool_new(0, &pool, &err), EV_EINVAL);
}
END_TEST

START_TEST(test_selector_reproduces_the_seed_decisions_and_launch_shapes)
{
    /* the seed's coefficients (S = 24): rows1 for 17x1024 B4, default for 1024x512 B4 */
    ev_coef seed = {0.9028899747245084, 0.0, 0.00011327031090119965};
    ev_shape a = {EV_OP_SUM, EV_DTYPE_FP16, 17, 1024, 1024};
    ev_shape d = {EV_OP_MAX, EV_DTYPE_FP16, 1024, 512, 512};
    ev_launch_plan p;
    ev_decision dec;
    ev_err err;
    ck_assert_int_eq(
        ev_selector_select(EV_SEL_CUDA, &a, 4, &seed, 24, 0.05, EV_SCHEDS_DEFAULT, &p, &dec, &err), EV_OK);
    ck_assert_int_eq(dec.selected, EV_SCHED_ROWS1);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_rows1");
    ck_assert_int_eq(p.grid[0], 17);
    ck_assert_int_eq(p.block[0], 32);
    ck_assert_int_eq(p.grid[1] * p.grid[2] * p.block[1] * p.block[2], 1);
    ck_assert_int_eq(
        ev_selector_select(EV_SEL_CUDA, &d, 4, &seed, 24, 0.05, EV_SCHEDS_DEFAULT, &p, &dec, &err), EV_OK);
    ck_assert_int_eq(dec.selected, EV_SCHED_DEFAULT);
    ck_assert_str_eq(p.entry, "reduce_max_fp16_default");
    ck_assert_int_eq(p.grid[0], 256);
    ck_assert_int_eq(p.block[0], 128);
    /* no coefficients: the default; the cpu receipt is tasks x rows per task */
    ck_assert_int_eq(ev_selector_select(EV_SEL_CPU, &a, 4, NULL, 2, 0.05, EV_SCHEDS_DEFAULT, &p, NULL, &err),
                     EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_default");
    ck_assert_int_eq(p.grid[0], 5);
    ck_assert_int_eq(p.block[0], 4);
    /* large rows: 1024 threads, and b * t above 1024 is capped */
    a.cols = 1048576;
    a.stride = 1048576;
    a.dtype = EV_DTYPE_FP32;
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_ROWS4, 4, 0, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp32_rows4");
    ck_assert_int_eq(p.block[0], 1024);
    ck_assert_int_eq(p.grid[0], 5);
    ck_assert_int_eq(p.lanes, 1024);
    /* R = 0: an empty grid */
    a.rows = 0;
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 4, 0, &p, &err), EV_OK);
    ck_assert_int_eq(p.grid[0], 0);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 0, 0, &p, &err), EV_EINVAL);
}
END_TEST

/*
 * The short schedule's arithmetic (kernels/reduce_short.cuh), executed
 * here as its threads do it: thread k of p holds lanes k + p*m, m < 4
 * (each lane's chunk added to -0.0, then the slot tree), adds
 * (u0 + u2) + (u1 + u3), then the shuffle steps d = p/2 .. 1.  Its sum
 * must equal the CPU twin's bits for every row length it takes, in each
 * dtype: the header comment's proof, checked.
 */
static float short_order_sum(ev_dtype dt, const unsigned char *row, int64_t n)
{
    int64_t V = ev_reduce_vec(dt), p = ev_short_threads(n, dt), full = n / V, part = n - full * V;
    float x[8];
    for (int64_t k = 0; k < p; k++) {
        float u[4];
        for (int64_t m = 0; m < 4; m++) {
            int64_t lane = k + p * m, cnt = lane < full ? V : lane == full ? part : 0;
            float a[8];
            for (int64_t j = 0; j < V; j++)
                a[j] = -0.0f + (j < cnt ? ev_dtype_load(dt, row, (size_t)(lane * V + j)) : -0.0f);
            for (int64_t h = V / 2; h >= 1; h /= 2)
                for (int64_t j = 0; j < h; j++)
                    a[j] = a[j] + a[j + h];
            u[m] = a[0];
        }
        x[k] = (u[0] + u[2]) + (u[1] + u[3]);
    }
    for (int64_t d = p / 2; d >= 1; d /= 2) {
        float y[8];
        for (int64_t k = 0; k < p; k++)
            y[k] = x[k] + x[k ^ d];
        memcpy(x, y, sizeof y);
    }
    return x[0];
}

START_TEST(test_short_schedule_order_equals_the_documented_order)
{
    static const ev_dtype dts[] = {EV_DTYPE_FP32, EV_DTYPE_FP16, EV_DTYPE_BF16};
    for (size_t d = 0; d < 3; d++) {
        int64_t V = ev_reduce_vec(dts[d]);
        for (int64_t n = 1; n <= 32 * V; n++) {
            ev_shape s = {EV_OP_SUM, dts[d], 3, n, n};
            fixture f;
            ck_assert_int_gt(ev_short_threads(n, dts[d]), 0);
            fixture_make(&f, &s, (uint64_t)(97 * n + d), 0);
            /* make the order matter: large and tiny magnitudes, and -0 */
            for (int64_t i = 0; i < 3 * n; i += 3)
                ev_dtype_store(dts[d], f.in, (size_t)i, ev_dtype_load(dts[d], f.in, (size_t)i) * 4096.0f);
            ev_dtype_store(dts[d], f.in, (size_t)(n - 1), -0.0f);
            ev_reduce_rows(&f.b, 0, 3);
            for (int64_t r = 0; r < 3; r++) {
                unsigned char got[4], want[4];
                const unsigned char *row =
                    (const unsigned char *)f.in + (size_t)(r * n) * ev_dtype_size(dts[d]);
                ev_dtype_store(dts[d], got, 0, short_order_sum(dts[d], row, n));
                memcpy(want, (const unsigned char *)f.out + (size_t)r * ev_dtype_size(dts[d]),
                       ev_dtype_size(dts[d]));
                ck_assert_msg(!memcmp(got, want, ev_dtype_size(dts[d])), "%s N=%lld row %lld",
                              ev_dtype_name(dts[d]), (long long)n, (long long)r);
            }
            fixture_free(&f);
        }
        ck_assert_int_eq(ev_short_threads(32 * V + 1, dts[d]), 0);
    }
    /* threads a row: four chunks a thread at most */
    ck_assert_int_eq(ev_short_threads(1, EV_DTYPE_FP16), 1);
    ck_assert_int_eq(ev_short_threads(64, EV_DTYPE_FP16), 2);
    ck_assert_int_eq(ev_short_threads(128, EV_DTYPE_BF16), 4);
    ck_assert_int_eq(ev_short_threads(256, EV_DTYPE_FP16), 8);
    ck_assert_int_eq(ev_short_threads(100, EV_DTYPE_FP32), 8);
    ck_assert_int_eq(ev_short_threads(0, EV_DTYPE_FP32), 0);
}
END_TEST

/*
 * A program of several rows gets at most max(t, EV_PROGRAM_THREADS)
 * threads where its grid fills the device (P >= 2 S) and up to 1024 where
 * it does not (docs/perf-notes.md, "program threads": the passes cost
 * small grids 1.4x, and 1024-thread programs cost full grids 1.1-1.2x).
 */
START_TEST(test_selector_caps_a_full_grid_s_programs_at_fewer_threads)
{
    ev_shape big = {EV_OP_SUM, EV_DTYPE_BF16, 16384, 4096, 4096}; /* t = 128, P = 2048 at B = 8 */
    ev_shape wide = {EV_OP_SUM, EV_DTYPE_FP32, 8192, 8192, 8192}; /* t = 512 */
    ev_shape few = {EV_OP_SUM, EV_DTYPE_FP32, 96, 2048, 2048};    /* t = 128, P = 12 at B = 8 */
    ev_launch_plan p;
    ev_err err;
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &big, EV_SCHED_DEFAULT, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], EV_PROGRAM_THREADS);
    ck_assert_int_eq(p.grid[0], 2048);
    ck_assert_int_eq(p.rows_per_program, 8);
    /* the same grid on a device of 1100 SMs does not fill it */
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &big, EV_SCHED_DEFAULT, 8, 1100, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 1024);
    /* never fewer than a row's lanes */
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &wide, EV_SCHED_ROWS2, 4, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 512);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &few, EV_SCHED_DEFAULT, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 1024);
    /* S unknown (0): no cap */
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &big, EV_SCHED_DEFAULT, 8, 0, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 1024);
    /* the cpu receipt is unchanged: rows per task */
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CPU, &big, EV_SCHED_DEFAULT, 8, 2, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 8);
}
END_TEST

/*
 * Launch rule 2 (kernels/selector.h, docs/perf-notes.md v11): a default or
 * rowsK program of a SUM of b >= 4 lean rows of t = 32 lanes and at most
 * two chunks a lane, every row on 16 bytes and of whole chunks, on a grid
 * of at least S programs, runs as the packed entry with half the threads
 * (two rows a warp); everything else plans as under rule 1, which the
 * verifier still applies to bundles whose code declares no rule.  Each
 * condition's boundary is a measured loss (b = 2, MAX, a grid under S).
 * An unknown rule is refused.
 */
START_TEST(test_selector_plans_the_packed_program_under_launch_rule_2_only)
{
    ev_shape a = {EV_OP_SUM, EV_DTYPE_FP16, 1024, 512, 512};  /* 64 chunks: t = 32, two a lane */
    ev_shape x = {EV_OP_MAX, EV_DTYPE_FP16, 1024, 512, 512};  /* the same rows, MAX */
    ev_shape f = {EV_OP_SUM, EV_DTYPE_FP16, 17, 1024, 1024};  /* 128 chunks: four a lane */
    ev_shape u = {EV_OP_SUM, EV_DTYPE_FP16, 100, 1000, 1003}; /* rows not on 16 bytes */
    ev_shape q = {EV_OP_SUM, EV_DTYPE_FP32, 37, 257, 257};    /* a partial chunk */
    ev_shape g = {EV_OP_SUM, EV_DTYPE_BF16, 256, 128, 128};   /* 16 chunks, lean at b = 4: 64 programs */
    ev_launch_plan p, p1;
    ev_err err;
    ck_assert_int_ge(EV_LAUNCH_RULE, 2);
    ck_assert_int_eq(ev_reduce_lanes(512, EV_DTYPE_FP16), 32);
    /* default (b = 4, 256 programs on 132 SMs): 128 threads become 64 */
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 4, 132, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_pack");
    ck_assert_int_eq(p.sched, EV_SCHED_DEFAULT);
    ck_assert_int_eq(p.block[0], 64);
    ck_assert_int_eq(p.grid[0], 256);
    ck_assert_int_eq(p.rows_per_program, 4);
    ck_assert_int_eq(p.lanes, 32);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 4, 132, &p1, &err), EV_OK);
    ck_assert(!memcmp(&p, &p1, sizeof p)); /* the current rule packs these rows too */
    ck_assert_int_eq(ev_selector_plan_rule(1, EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 4, 132, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_default");
    ck_assert_int_eq(p.block[0], 128);
    /* rows4: packed; rows2 (one warp a block packed: slower) and rows1 not */
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, &a, EV_SCHED_ROWS4, 4, 132, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_pack");
    ck_assert_int_eq(p.block[0], 64);
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, &a, EV_SCHED_ROWS2, 4, 132, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_rows2");
    ck_assert_int_eq(p.block[0], 64);
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, &a, EV_SCHED_ROWS1, 4, 132, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_rows1");
    /* a grid of fewer programs than SMs, or S unknown: not packed */
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 4, 257, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_default");
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 4, 0, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_default");
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, &g, EV_SCHED_ROWS4, 8, 132, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_bf16_rows4");
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, &g, EV_SCHED_ROWS4, 8, 64, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_bf16_pack");
    ck_assert_int_eq(p.block[0], 64);
    /* MAX, four chunks a lane, rows off 16 bytes, a partial chunk: as rule 1 */
    const ev_shape *keep[] = {&x, &f, &u, &q};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, keep[i], EV_SCHED_DEFAULT, 4, 2, &p, &err),
                         EV_OK);
        ck_assert_int_eq(ev_selector_plan_rule(1, EV_SEL_CUDA, keep[i], EV_SCHED_DEFAULT, 4, 2, &p1, &err),
                         EV_OK);
        ck_assert_msg(!memcmp(&p, &p1, sizeof p), "shape %zu: %s under rule 2, %s under rule 1", i, p.entry,
                      p1.entry);
        ck_assert_ptr_null(strstr(p.entry, "_pack"));
    }
    /* the cpu receipt is the same under both rules */
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CPU, &a, EV_SCHED_DEFAULT, 4, 2, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_default");
    ck_assert_int_eq(p.block[0], 4);
    /* rules this code does not know */
    ck_assert_int_eq(ev_selector_plan_rule(0, EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 4, 132, &p, &err),
                     EV_EINVAL);
    ck_assert_int_eq(
        ev_selector_plan_rule(EV_LAUNCH_RULE + 1, EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 4, 132, &p, &err),
        EV_EINVAL);
}
END_TEST

/*
 * Launch rule 3 (kernels/selector.h, docs/perf-notes.md "v12
 * experiment"): a default or rowsK program of b rows of at most 32 chunks
 * that the thin program does not take at four chunks a thread runs thin
 * at one chunk a thread, q = min(8, pow2ceil(chunks)) threads a row,
 * where b q >= 32 (a warp of whole rows); the programs the thin rule
 * takes already keep their threads, and fewer rows (b q < 32) keep t
 * lanes (a row alone at 8 threads lost).  Where it applies it comes
 * before rule 2's packed program, which takes rows of 32 threads only
 * (measured 0.84-0.90 of the packed one on 2048x64 fp16).
 */
START_TEST(test_selector_plans_thin_programs_at_one_chunk_a_thread_under_launch_rule_3)
{
    ev_shape n = {EV_OP_SUM, EV_DTYPE_FP16, 2048, 64, 64};   /* 8 chunks: q = 8, p = 2 */
    ev_shape x = {EV_OP_MAX, EV_DTYPE_FP16, 2048, 64, 64};   /* the same rows, MAX (never packed) */
    ev_shape g = {EV_OP_SUM, EV_DTYPE_BF16, 256, 128, 128};  /* 16 chunks: q = 8, p = 4 */
    ev_shape h = {EV_OP_MAX, EV_DTYPE_FP16, 1000, 100, 100}; /* 13 chunks, a partial one: q = 8, p = 4 */
    ev_shape w = {EV_OP_SUM, EV_DTYPE_FP16, 1024, 512, 512}; /* 64 chunks: not thin */
    ev_launch_plan p, p1;
    ev_err err;
    if (!EV_THIN)
        return;
    ck_assert_int_eq(EV_LAUNCH_RULE, 3);
    /* 2048x64 fp16 default (b = 8): rule 2 packs it (8 rows of 32 lanes
     * in 128 threads), rule 3 runs it thin, 8 threads a row */
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, &n, EV_SCHED_DEFAULT, 8, 132, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_pack");
    ck_assert_int_eq(p.block[0], 128);
    ck_assert_int_eq(ev_selector_plan_rule(3, EV_SEL_CUDA, &n, EV_SCHED_DEFAULT, 8, 132, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_default");
    ck_assert_int_eq(p.block[0], 64);
    ck_assert_int_eq(p.grid[0], 256);
    ck_assert_int_eq(p.rows_per_program, 8);
    ck_assert_int_eq(p.lanes, 32);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &n, EV_SCHED_DEFAULT, 8, 132, &p1, &err), EV_OK);
    ck_assert(!memcmp(&p, &p1, sizeof p)); /* the current rule */
    ck_assert_int_eq(ev_row_threads_rule(3, &n, 8), 8);
    ck_assert_int_eq(ev_row_threads_rule(2, &n, 8), 32);
    ck_assert_int_eq(ev_row_threads_rule(1, &n, 8), 32);
    ck_assert_int_eq(ev_row_threads_rule(EV_LAUNCH_RULE, &n, 8), 8);
    /* rows4 (b q = 32): thin; rows2 (16) and rows1 (8): t lanes */
    ck_assert_int_eq(ev_selector_plan_rule(3, EV_SEL_CUDA, &n, EV_SCHED_ROWS4, 8, 132, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp16_rows4");
    ck_assert_int_eq(p.block[0], 32);
    ck_assert_int_eq(ev_row_threads_rule(3, &n, 2), 32);
    ck_assert_int_eq(ev_row_threads_rule(3, &n, 1), 32);
    /* MAX alike (rule 2 never packs it) */
    ck_assert_int_eq(ev_selector_plan_rule(3, EV_SEL_CUDA, &x, EV_SCHED_DEFAULT, 8, 132, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_max_fp16_default");
    ck_assert_int_eq(p.block[0], 64);
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, &x, EV_SCHED_DEFAULT, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 256);
    /* 256x128 bf16: rows4 (b q = 32) thin at 8 threads; the default (b =
     * 8, b p = 32) is thin already and keeps its 4 threads a row */
    ck_assert_int_eq(ev_row_threads_rule(3, &g, 4), 8);
    ck_assert_int_eq(ev_row_threads_rule(2, &g, 4), 32);
    ck_assert_int_eq(ev_row_threads_rule(3, &g, 8), 4);
    ck_assert_int_eq(ev_row_threads_rule(2, &g, 8), 4);
    ck_assert_int_eq(ev_selector_plan_rule(3, EV_SEL_CUDA, &g, EV_SCHED_ROWS4, 8, 64, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_bf16_rows4"); /* rule 2 packs it on 64 SMs */
    ck_assert_int_eq(p.block[0], 32);
    /* 1000x100 fp16, a partial chunk: rows1 (b q = 8) keeps t lanes, the
     * default (b = 4: b p = 16 >= 8 on such rows, EV_THIN_RULE 2) its p */
    ck_assert_int_eq(ev_row_threads_rule(3, &h, 1), 32);
    ck_assert_int_eq(ev_row_threads_rule(3, &h, 4), ev_row_threads_rule(2, &h, 4));
    /* rows of more than 32 chunks, and the cpu receipt: as rule 2 */
    ck_assert_int_eq(ev_selector_plan_rule(3, EV_SEL_CUDA, &w, EV_SCHED_DEFAULT, 4, 132, &p, &err), EV_OK);
    ck_assert_int_eq(ev_selector_plan_rule(2, EV_SEL_CUDA, &w, EV_SCHED_DEFAULT, 4, 132, &p1, &err), EV_OK);
    ck_assert(!memcmp(&p, &p1, sizeof p));
    ck_assert_int_eq(ev_selector_plan_rule(3, EV_SEL_CPU, &n, EV_SCHED_DEFAULT, 8, 2, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 8);
    /* short keeps its own program */
    ck_assert_int_eq(ev_selector_plan_rule(3, EV_SEL_CUDA, &n, EV_SCHED_SHORT, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], EV_SHORT_PROGRAM);
    ck_assert_int_eq(p.rows_per_program, 64);
}
END_TEST

/* The rule a selector.h declares (what the verifier reads from a bundle's
 * sources/): its #define EV_LAUNCH_RULE, 1 where it declares none (code
 * measured before the rule had a number), -1 where the line is malformed. */
START_TEST(test_the_launch_rule_is_read_from_the_declaring_source)
{
    static const char two[] = "/* x */\n#ifndef X\n#define EV_LAUNCH_RULE 2 /* packed */\n#endif\n";
    static const char none[] = "#define EV_LAUNCH_RULES 7\n/* #define EV_LAUNCH_RULE 9 */\nint x;\n";
    static const char bad[] = "#define EV_LAUNCH_RULE two\n";
    static const char twice[] = "#define EV_LAUNCH_RULE 2\n#define EV_LAUNCH_RULE 3\n";
    ck_assert_int_eq(ev_launch_rule_declared(two, sizeof two - 1), 2);
    ck_assert_int_eq(ev_launch_rule_declared(none, sizeof none - 1), 1);
    ck_assert_int_eq(ev_launch_rule_declared("", 0), 1);
    ck_assert_int_eq(ev_launch_rule_declared(bad, sizeof bad - 1), -1);
    ck_assert_int_eq(ev_launch_rule_declared(twice, sizeof twice - 1), -1);
    /* not NUL-terminated: only n bytes are read */
    ck_assert_int_eq(ev_launch_rule_declared(two, 20), 1);
    /* this tree's code declares the rule it plans by, where the verifier reads it */
    {
        FILE *f = fopen(EV_LAUNCH_RULE_SOURCE, "rb");
        char text[16384];
        size_t n;
        ck_assert_msg(f != NULL, "%s: not found (run from the repository root)", EV_LAUNCH_RULE_SOURCE);
        n = fread(text, 1, sizeof text, f);
        fclose(f);
        ck_assert_int_lt(n, sizeof text);
        ck_assert_int_eq(ev_launch_rule_declared(text, n), EV_LAUNCH_RULE);
    }
}
END_TEST

/* v8, the thin program (kernels/reduce_default.cuh): on cuda a default or
 * rowsK program of rows of at most 32 chunks has p = ev_short_threads
 * threads a row, b p rounded up to whole warps and at most 1024; longer
 * rows keep b t; the cpu receipt is unchanged. */
START_TEST(test_selector_plans_thin_programs_for_rows_of_at_most_32_chunks)
{
    ev_shape a = {EV_OP_SUM, EV_DTYPE_BF16, 256, 128, 128};    /* 16 chunks: p = 4 */
    ev_shape m = {EV_OP_MAX, EV_DTYPE_FP16, 131072, 256, 256}; /* 32 chunks: p = 8 */
    ev_shape l = {EV_OP_SUM, EV_DTYPE_FP16, 64, 257, 257};     /* 33 chunks: t lanes */
    ev_launch_plan p;
    ev_err err;
    ck_assert_int_eq(ev_thin_threads(128, EV_DTYPE_BF16), EV_THIN ? 4 : 0);
    ck_assert_int_eq(ev_thin_threads(257, EV_DTYPE_FP16), 0);
    if (!EV_THIN)
        return;
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 32); /* 8 rows x 4 threads */
    ck_assert_int_eq(p.grid[0], 32);
    ck_assert_int_eq(p.lanes, 32);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_ROWS1, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 32); /* b p = 4 < 32: t = 32 lanes, not the thin program */
    ck_assert_int_eq(p.grid[0], 256);
    ck_assert_int_eq(ev_row_threads(128, 128, EV_DTYPE_BF16, 1), ev_reduce_lanes(128, EV_DTYPE_BF16));
    ck_assert_int_eq(ev_row_threads(256, 256, EV_DTYPE_FP16, 4), 8); /* b p = 32: thin */
    /* b p = 16 on lean rows (whole chunks on 16 bytes): t lanes under
     * either rule; on rows of a partial chunk (or not on 16 bytes) the
     * thin program from b p = 8 under EV_THIN_RULE 2 */
    ck_assert_int_eq(ev_row_threads(64, 64, EV_DTYPE_FP16, 8), 32); /* launch rule 3 reaches further */
    ck_assert_int_eq(ev_row_threads(100, 100, EV_DTYPE_FP16, 4), EV_THIN_RULE == 2 ? 4 : 32);
    ck_assert_int_eq(ev_row_threads(100, 100, EV_DTYPE_FP16, 2), EV_THIN_RULE == 2 ? 4 : 32); /* b p = 8 */
    ck_assert_int_eq(ev_row_threads(100, 100, EV_DTYPE_FP16, 1), 32); /* b p = 4: t lanes */
    ck_assert_int_eq(ev_row_threads(64, 68, EV_DTYPE_FP16, 8), EV_THIN_RULE == 2 ? 2 : 32);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 64, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 256);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 1000, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 1024); /* 4000 threads: passes of 256 rows */
    ck_assert_int_eq(p.grid[0], 1);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &m, EV_SCHED_DEFAULT, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 64);
    ck_assert_int_eq(p.grid[0], 16384);
    /* short keeps its own program */
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &m, EV_SCHED_SHORT, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], EV_SHORT_PROGRAM);
    /* 33 chunks: t = 32 lanes a row */
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &l, EV_SCHED_DEFAULT, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 256);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CPU, &a, EV_SCHED_DEFAULT, 8, 2, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 8);
}
END_TEST

/* v8, paired lanes (kernels/reduce_default.cuh): a row of t = 64 lanes is
 * one warp on cuda (32 threads a row), so b rows are b warps; t = 32 and
 * t = 128 rows keep t threads. */
START_TEST(test_selector_plans_one_warp_a_row_of_64_lanes)
{
    ev_shape a = {EV_OP_SUM, EV_DTYPE_FP16, 65, 2048, 2048}; /* 4096 bytes: t = 64 */
    ev_shape c = {EV_OP_SUM, EV_DTYPE_FP32, 96, 2048, 2048}; /* t = 128 */
    ev_shape d = {EV_OP_MAX, EV_DTYPE_FP32, 300, 777, 800};  /* t = 64, unaligned end */
    ev_launch_plan p;
    ev_err err;
    ck_assert_int_eq(ev_reduce_lanes(2048, EV_DTYPE_FP16), 64);
    ck_assert_int_eq(ev_row_threads(2048, 2048, EV_DTYPE_FP16, 8), EV_PAIR ? 32 : 64);
    ck_assert_int_eq(ev_row_threads(2048, 2048, EV_DTYPE_FP32, 8), 128);
    ck_assert_int_eq(ev_row_threads(128, 128, EV_DTYPE_BF16, 8),
                     ev_thin_threads(128, EV_DTYPE_BF16) ? 4 : 32);
    ck_assert_int_eq(ev_row_threads(128, 128, EV_DTYPE_BF16, 4), 32); /* 16 threads: not a warp's worth */
    if (!EV_PAIR)
        return;
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_DEFAULT, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 256);
    ck_assert_int_eq(p.lanes, 64);
    ck_assert_int_eq(p.grid[0], 9);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_ROWS1, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 32);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &d, EV_SCHED_DEFAULT, 4, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 128);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &c, EV_SCHED_DEFAULT, 8, 132, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], 1024);
}
END_TEST

START_TEST(test_selector_plans_short_only_for_rows_of_at_most_32_chunks)
{
    ev_shape a = {EV_OP_MAX, EV_DTYPE_FP16, 131072, 256, 256};
    ev_launch_plan p;
    ev_err err;
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_SHORT, 8, 0, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_max_fp16_short");
    ck_assert_int_eq(p.block[0], EV_SHORT_PROGRAM);
    ck_assert_int_eq(p.rows_per_program, EV_SHORT_PROGRAM / 8);
    ck_assert_int_eq(p.grid[0], 131072 / (EV_SHORT_PROGRAM / 8));
    ck_assert_int_eq(p.lanes, 32);
    /* cpu: tasks of the same rows */
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CPU, &a, EV_SCHED_SHORT, 8, 2, &p, &err), EV_OK);
    ck_assert_int_eq(p.block[0], EV_SHORT_PROGRAM / 8);
    /* 257 fp16 elements: 33 chunks, refused with the reason */
    a.cols = a.stride = 257;
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_SHORT, 8, 0, &p, &err), EV_EINVAL);
    ck_assert_msg(strstr(err.msg, "at most 32 chunks") != NULL, "%s", err.msg);
    ck_assert_int_eq(ev_sched_rows(EV_SCHED_SHORT, 8), 0);
    {
        ev_sched sc;
        ck_assert_int_eq(ev_sched_parse("short", &sc), 0);
        ck_assert_int_eq(sc, EV_SCHED_SHORT);
    }
}
END_TEST

/* split (reduce_split.cuh): on cuda a row of more than 64 KiB padded is a
 * cluster of G = 8 blocks of t / G = 128 threads, grid R G; on cpu a row a
 * task (grid R, block 1, cluster 1); shorter rows are refused with the
 * reason, and every other schedule plans a cluster of 1. */
START_TEST(test_selector_plans_split_as_a_cluster_of_8_blocks_a_long_row)
{
    ev_shape a = {EV_OP_SUM, EV_DTYPE_FP32, 32, 1048576, 1048576};
    ev_launch_plan p;
    ev_err err;
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_SPLIT, 4, 0, &p, &err), EV_OK);
    ck_assert_str_eq(p.entry, "reduce_sum_fp32_split");
    ck_assert_int_eq(p.lanes, 1024);
    ck_assert_int_eq(p.cluster, 8);
    ck_assert_int_eq(p.block[0], 128);
    ck_assert_int_eq(p.grid[0], 256);
    ck_assert_int_eq(p.rows_per_program, 1);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CPU, &a, EV_SCHED_SPLIT, 4, 2, &p, &err), EV_OK);
    ck_assert_int_eq(p.cluster, 1);
    ck_assert_int_eq(p.grid[0], 32);
    ck_assert_int_eq(p.block[0], 1);
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_ROWS1, 4, 0, &p, &err), EV_OK);
    ck_assert_int_eq(p.cluster, 1);
    ck_assert_int_eq(p.grid[0], 32);
    a.cols = a.stride = 16384; /* exactly 64 KiB */
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CUDA, &a, EV_SCHED_SPLIT, 4, 0, &p, &err), EV_EINVAL);
    ck_assert_msg(strstr(err.msg, "over 64 KiB") != NULL, "%s", err.msg);
}
END_TEST

/* Builds the suite. */
static Suite *kernels_suite(void)
{
    Suite *s = suite_create("kernels");
    TCase *conv = tcase_create("conversions");
    TCase *sweep = tcase_create("exhaustive");
    TCase *red = tcase_create("reductions");
    TCase *misc = tcase_create("binding");

    tcase_add_test(conv, test_fp16_widens_like_gcc_float16_for_all_patterns);
    tcase_add_test(conv, test_bf16_widens_exactly_for_all_patterns);
    tcase_add_test(conv, test_every_nan_narrows_to_the_canonical_nan);
    /* each slice is 2^28 patterns: ~4-6 s on a loaded host, x10 under ASan */
    tcase_set_timeout(sweep, 480);
    tcase_add_loop_test(sweep, test_fp32_narrows_to_fp16_like_gcc_float16_for_every_pattern, 0, SLICES);
    tcase_add_loop_test(sweep, test_fp32_narrows_to_bf16_like_an_fp64_rne_reference_for_every_pattern, 0,
                        SLICES);
    tcase_set_timeout(red, 240);
    tcase_add_test(red, test_reductions_match_the_oracle_on_odd_shapes);
    tcase_add_test(red, test_a_plant_moves_its_rows_expected_output_past_twice_its_bound);
    tcase_add_test(red, test_the_host_plant_and_check_nodes_pass_honest_ops_and_name_a_skipped_one);
    tcase_add_test(red, test_the_cpu_backends_table_of_plants_is_the_same_plants_and_checks);
    tcase_add_test(red, test_an_op_without_a_plant_rule_is_refused_not_planted_as_another);
    tcase_add_test(red, test_a_kernel_that_stops_at_the_first_plant_it_finds_fails_the_check);
    tcase_add_test(misc, test_the_layout_of_variants_and_slots_is_a_secret_of_the_seed);
    tcase_add_test(red, test_zero_rows_writes_nothing);
    tcase_add_test(red, test_nan_signed_zero_and_infinities_reduce_as_torch_does);
    tcase_add_test(red, test_outputs_are_bit_identical_across_threads_and_schedules);
    tcase_add_test(red, test_sum_repeats_bit_for_bit_in_one_run);
    tcase_add_test(red, test_sum_follows_the_documented_lane_order);
    tcase_add_test(red, test_short_schedule_order_equals_the_documented_order);
    tcase_add_test(red, test_sum_bound_holds_on_adversarial_inputs);
    tcase_add_test(red, test_validator_rejects_a_wrong_max_and_a_noncanonical_nan);
    tcase_add_test(red, test_unwritten_rows_fail_validation);
    tcase_add_test(red, test_validating_against_rows_computed_ahead_equals_validating_the_input);
    tcase_add_test(red, test_max_keys_order_every_16_bit_pattern_as_the_twin_does);
    tcase_add_test(red, test_max_keys_order_fp32_patterns_as_the_twin_does);
    tcase_add_test(red, test_max_and_min_on_keys_give_the_twin_bits_on_special_rows);
    tcase_add_test(red,
                   test_the_mean_bound_admits_the_division_and_the_reciprocal_product_and_nothing_past_it);
    tcase_add_test(misc, test_binding_refuses_each_bad_request_with_its_reason);
    tcase_add_test(misc, test_binding_records_alignment_capped_at_256);
    tcase_add_test(misc, test_inputs_are_the_same_bytes_for_a_seed_and_case);
    tcase_add_test(misc, test_cpu_plan_names_the_entry_and_partition);
    tcase_add_test(misc, test_pool_runs_every_task_exactly_once_across_batches);
    tcase_add_test(misc, test_selector_reproduces_the_seed_decisions_and_launch_shapes);
    tcase_add_test(misc, test_selector_plans_short_only_for_rows_of_at_most_32_chunks);
    tcase_add_test(misc, test_selector_plans_thin_programs_for_rows_of_at_most_32_chunks);
    tcase_add_test(misc, test_selector_plans_the_packed_program_under_launch_rule_2_only);
    tcase_add_test(misc, test_selector_plans_thin_programs_at_one_chunk_a_thread_under_launch_rule_3);
    tcase_add_test(misc, test_the_launch_rule_is_read_from_the_declaring_source);
    tcase_add_test(misc, test_selector_plans_one_warp_a_row_of_64_lanes);
    tcase_add_test(misc, test_selector_caps_a_full_grid_s_programs_at_fewer_threads);
    tcase_add_test(misc, test_selector_plans_split_as_a_cluster_of_8_blocks_a_long_row);
    tcase_add_test(misc, test_a_declared_sum_depth_tightens_the_bound_and_the_documented_order_meets_it);
    tcase_add_test(misc, test_row_streams_give_the_bytes_of_the_whole_span_writers);
    suite_add_tcase(s, conv);
    suite_add_tcase(s, red);
    suite_add_tcase(s, misc);
    suite_add_tcase(s, sweep);
    return s;
}

int main(void)
{
    int failed = ev_check_suite(kernels_suite());
    return failed == 0 ? 0 : 1;
}
