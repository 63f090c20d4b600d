/*
 * oracle.c: the FP64 oracle and the validator (see oracle.h for the bound
 * and why it holds).
 */
#include "oracle.h"

#include <math.h>
#include <string.h>

#include "dtype.h"

/* The oracle of each op, by its combine and finish (src/common/vocab.h):
 * the row's FP64 value here, its acceptance rule in check_row. */
void ev_oracle_reduce_row(ev_op op, ev_dtype d, const void *row, int64_t n, ev_oracle_row *out)
{
    ev_combine c = ev_op_combine(op);
    double acc = c == EV_COMBINE_SUM ? -0.0 : c == EV_COMBINE_MAX ? -INFINITY : INFINITY;
    double abs_sum = 0.0;
    int nan = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = (double)ev_dtype_load(d, row, (size_t)i);
        if (isnan(x)) {
            nan = 1;
            continue;
        }
        if (c == EV_COMBINE_SUM) {
            acc += x;
            abs_sum += fabs(x);
        } else if (c == EV_COMBINE_MAX ? x > acc || (x == acc && x == 0.0 && !signbit(x))
                                       : x < acc || (x == acc && x == 0.0 && signbit(x))) {
            acc = x; /* the order's extreme, -0 below +0 */
        }
    }
    out->ref = nan ? NAN : acc;
    out->abs_sum = c == EV_COMBINE_SUM ? abs_sum : 0.0;
    if (ev_op_finish(op) == EV_FINISH_MEAN && !nan)
        out->ref = acc / (double)n; /* the mean; abs_sum stays the sum's, for the bound */
}

/* Returns the dtype's overflow threshold: values of at least this magnitude
 * round to Inf (max finite + half an ulp). */
static double ev_overflow_threshold(ev_dtype d)
{
    switch (d) {
    case EV_DTYPE_FP16:
        return 65520.0;
    case EV_DTYPE_BF16:
        return ldexp(255.0 * 2.0 + 1.0, 119); /* (2 - 2^-8) * 2^127 */
    default:
        return ldexp((double)((1u << 25) - 1u), 103); /* (2 - 2^-24) * 2^127 */
    }
}

/* Returns the raw storage bits of element i of out (dtype d). */
static uint32_t ev_out_bits(ev_dtype d, const void *out, size_t i)
{
    if (d == EV_DTYPE_FP32) {
        uint32_t u;
        memcpy(&u, (const unsigned char *)out + i * 4, 4);
        return u;
    } else {
        uint16_t h;
        memcpy(&h, (const unsigned char *)out + i * 2, 2);
        return h;
    }
}

/* Returns the storage bits of the fp32 value f rounded to dtype d. */
static uint32_t ev_round_bits(ev_dtype d, float f)
{
    switch (d) {
    case EV_DTYPE_FP16:
        return ev_f32_to_fp16(f);
    case EV_DTYPE_BF16:
        return ev_f32_to_bf16(f);
    default:
        return ev_f32_canonical(f);
    }
}

/* Checks output row i against its oracle o, folding the result into *r. */
static void check_row(const ev_shape *s, const ev_oracle_row *o, const void *out, int64_t i, int64_t depth,
                      ev_validation *r)
{
    uint32_t got = ev_out_bits(s->dtype, out, (size_t)i);
    double y = (double)ev_dtype_load(s->dtype, out, (size_t)i);
    int ok;

    if (isnan(o->ref)) {
        ok = got == ev_round_bits(s->dtype, NAN);
    } else if (ev_op_combine(s->op) != EV_COMBINE_SUM) { /* MAX, MIN: exact */
        ok = got == ev_round_bits(s->dtype, (float)o->ref);
        if (ok && isfinite(y) && fabs(y - o->ref) > r->max_abs_err)
            r->max_abs_err = fabs(y - o->ref);
    } else if (isinf(o->ref)) {
        ok = y == o->ref;
    } else {
        int mean = ev_op_finish(s->op) == EV_FINISH_MEAN;
        double bound = mean ? ev_oracle_mean_bound(s->dtype, s->cols, depth, o->ref, o->abs_sum)
                            : ev_oracle_sum_bound(s->dtype, s->cols, depth, o->ref, o->abs_sum);
        if (bound > r->bound)
            r->bound = bound;
        if (isnan(y)) {
            ok = 0;
        } else if (isinf(y)) {
            /* an overflow the value could reach on its way: SUM's into the
             * dtype; MEAN's FP32 sum, or its quotient into the dtype */
            double g = ev_oracle_sum_slack(s->cols, depth) * o->abs_sum;
            ok = (y > 0) == (o->ref > 0) &&
                 (mean ? fabs(o->ref) * (double)s->cols + g >= ev_overflow_threshold(EV_DTYPE_FP32) ||
                             fabs(o->ref) + ev_oracle_mean_slack(s->cols, depth, o->ref, o->abs_sum) >=
                                 ev_overflow_threshold(s->dtype)
                       : fabs(o->ref) + g >= ev_overflow_threshold(s->dtype));
        } else {
            double e = fabs(y - o->ref);
            ok = e <= bound;
            if (e > r->max_abs_err)
                r->max_abs_err = e;
        }
    }
    if (!ok) {
        r->passed = 0;
        r->mismatches++;
        if (r->first_bad < 0)
            r->first_bad = i;
    }
}

static int bad_shape(const ev_shape *s)
{
    return (unsigned)s->op >= EV_OP_COUNT || ev_dtype_size(s->dtype) == 0 || s->rows < 0 || s->cols < 1 ||
           s->stride < s->cols;
}

ev_status ev_oracle_rows(const ev_shape *s, const void *in, ev_oracle_row *rows, ev_err *err)
{
    size_t es = ev_dtype_size(s->dtype);

    if (bad_shape(s))
        return ev_err_set(err, EV_EINVAL, "oracle: bad shape");
    for (int64_t i = 0; i < s->rows; i++)
        ev_oracle_reduce_row(s->op, s->dtype, (const unsigned char *)in + (size_t)i * (size_t)s->stride * es,
                             s->cols, &rows[i]);
    return EV_OK;
}

ev_status ev_oracle_validate_rows(const ev_shape *s, const ev_oracle_row *rows, const void *out,
                                  int64_t depth, ev_validation *v, ev_err *err)
{
    ev_validation r = {1, 0.0, 0.0, 0, -1};

    if (bad_shape(s))
        return ev_err_set(err, EV_EINVAL, "validate: bad shape");
    for (int64_t i = 0; i < s->rows; i++)
        check_row(s, &rows[i], out, i, depth, &r);
    *v = r;
    return EV_OK;
}

ev_status ev_oracle_validate(const ev_shape *s, const void *in, const void *out, int64_t depth,
                             ev_validation *v, ev_err *err)
{
    ev_validation r = {1, 0.0, 0.0, 0, -1};
    size_t es = ev_dtype_size(s->dtype);

    if (bad_shape(s))
        return ev_err_set(err, EV_EINVAL, "validate: bad shape");
    for (int64_t i = 0; i < s->rows; i++) {
        ev_oracle_row o;
        ev_oracle_reduce_row(s->op, s->dtype, (const unsigned char *)in + (size_t)i * (size_t)s->stride * es,
                             s->cols, &o);
        check_row(s, &o, out, i, depth, &r);
    }
    *v = r;
    return EV_OK;
}
