/*
 * validate.c: validation under a protocol (validate.h): the case's shape
 * and oracle rows, the output check with the protocol's tolerances, and
 * the checkable-case rule.
 */
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "inputs.h"
#include "plants.h"

ev_status ev_case_shape(const ev_proto_case *c, ev_shape *s, ev_err *err)
{
    ev_shape r;

    if (ev_op_parse(c->op, &r.op) || ev_dtype_parse(c->dtype, &r.dtype))
        return ev_err_set(err, EV_EINVAL, "binding refused: op %s dtype %s", c->op, c->dtype);
    r.rows = c->rows;
    r.cols = c->cols;
    r.stride = c->stride;
    *s = r;
    return EV_OK;
}

void ev_output_check(const ev_protocol *p, const ev_shape *s, const void *in, const ev_oracle_row *rows,
                     const void *out, ev_validation *v)
{
    ev_err e;
    size_t es = ev_dtype_size(s->dtype), row = (size_t)s->stride * es;
    double f = p->sum_bound_factor;
    int64_t depth = p->sum_depth;

    if (rows ? ev_oracle_validate_rows(s, rows, out, depth, v, &e)
             : ev_oracle_validate(s, in, out, depth, v, &e)) {
        memset(v, 0, sizeof *v);
        v->mismatches = s->rows;
        v->first_bad = 0;
        return;
    }
    if (v->passed || ev_op_combine(s->op) != EV_COMBINE_SUM || !(f > 1))
        return;
    /* A wider SUM bound (tolerances.sum_bound_factor > 1): recheck row by
     * row; a row passes when the oracle passed it, or when its error is
     * finite, non-zero and within factor x its bound. */
    v->mismatches = 0;
    v->first_bad = -1;
    v->bound *= f;
    for (int64_t r = 0; r < s->rows; r++) {
        ev_shape one = *s;
        ev_validation w;
        const unsigned char *o1 = (const unsigned char *)out + (size_t)r * es;
        one.rows = 1;
        if ((rows ? ev_oracle_validate_rows(&one, &rows[r], o1, depth, &w, &e)
                  : ev_oracle_validate(&one, (const unsigned char *)in + (size_t)r * row, o1, depth, &w,
                                       &e)) ||
            !(w.passed || (w.max_abs_err > 0 && w.max_abs_err <= f * w.bound))) {
            if (v->first_bad < 0)
                v->first_bad = r;
            v->mismatches++;
        }
    }
    v->passed = v->mismatches == 0;
}

ev_status ev_case_oracle_rows(const ev_protocol *p, size_t ci, ev_shape *s, ev_oracle_row **rows, ev_err *err)
{
    ev_inputs_stream z;
    ev_oracle_row *r;
    void *row;
    ev_status rc;

    *rows = NULL;
    if (ci >= p->n_cases)
        return ev_err_set(err, EV_EINVAL, "case %zu is not in the protocol", ci);
    if ((rc = ev_case_shape(&p->cases[ci], s, err)))
        return rc;
    r = malloc((s->rows > 0 ? (size_t)s->rows : 1) * sizeof *r);
    row = malloc((size_t)s->cols * ev_dtype_size(s->dtype));
    if (!r || !row) {
        free(r);
        free(row);
        return ev_err_set(err, EV_ENOMEM, "case %zu: no memory for its oracle rows", ci);
    }
    ev_inputs_stream_init(&z, (uint64_t)p->seed, (uint64_t)ci);
    for (int64_t i = 0; i < s->rows; i++) {
        ev_inputs_stream_row(s, &z, row);
        ev_oracle_reduce_row(s->op, s->dtype, row, s->cols, &r[i]);
    }
    free(row);
    *rows = r;
    return EV_OK;
}

/* A value as the reasons print it: %.9g (every fp32 value read back
 * exactly), "nan", "inf", "-inf". */
static const char *num(double v, char *t, size_t cap)
{
    if (isnan(v))
        snprintf(t, cap, "nan");
    else
        snprintf(t, cap, "%.9g", v);
    return t;
}

const char *ev_validation_explain(const ev_protocol *p, const ev_shape *s, const ev_oracle_row *rows,
                                  const void *out, size_t len, const char *stage, char *t, size_t cap)
{
    ev_validation v, w;
    ev_shape one = *s;
    size_t es = ev_dtype_size(s->dtype);
    char got[40], want[40], err[40], bound[64];
    double y, ref;
    int64_t r;

    if (s->rows < 1 || len != (size_t)s->rows * es) {
        snprintf(t, cap, "%s stage: an output of %zu bytes where %lld rows of %s are %zu", stage, len,
                 (long long)s->rows, ev_dtype_name(s->dtype), (size_t)(s->rows > 0 ? s->rows : 0) * es);
        return t;
    }
    ev_output_check(p, s, NULL, rows, out, &v);
    if (v.passed || v.first_bad < 0) {
        snprintf(t, cap, "%s stage: the output passes the oracle here", stage);
        return t;
    }
    r = v.first_bad;
    one.rows = 1;
    ev_output_check(p, &one, NULL, &rows[r], (const unsigned char *)out + (size_t)r * es, &w);
    y = (double)ev_dtype_load(s->dtype, out, (size_t)r);
    ref = rows[r].ref;
    if (ev_op_combine(s->op) != EV_COMBINE_SUM && !isnan(ref))
        ref = (double)ev_dtype_round(s->dtype, (float)ref); /* the extreme is a stored value */
    if (ev_op_combine(s->op) != EV_COMBINE_SUM)
        snprintf(bound, sizeof bound, "; %s is bit-exact", ev_op_name(s->op));
    else
        snprintf(bound, sizeof bound, ", bound %s", num(w.bound, err, sizeof err));
    if (isfinite(y) && isfinite(ref))
        num(fabs(y - ref), err, sizeof err);
    else
        snprintf(err, sizeof err, "not finite");
    snprintf(
        t, cap,
        "%s stage: %lld of %lld rows wrong; the first, row %lld, is %s where %s is expected (error %s%s)",
        stage, (long long)v.mismatches, (long long)s->rows, (long long)r, num(y, got, sizeof got),
        num(ref, want, sizeof want), err, bound);
    return t;
}

const char *ev_validation_numbers(const char *stage, const char *op, int64_t mismatches, int64_t rows,
                                  double max_abs_err, double bound, char *t, size_t cap)
{
    char e[40], b[64], x[40];
    ev_op o;
    if (op && !ev_op_parse(op, &o) && ev_op_combine(o) != EV_COMBINE_SUM)
        snprintf(b, sizeof b, "; %s is bit-exact", op);
    else
        snprintf(b, sizeof b, ", bound %s", num(bound, x, sizeof x));
    snprintf(t, cap, "%s stage: %lld of %lld rows wrong (largest finite error %s%s)", stage,
             (long long)mismatches, (long long)rows, num(max_abs_err, e, sizeof e), b);
    return t;
}

unsigned char ev_blind_byte(int k)
{
    static const unsigned char b[EV_BLIND_PATTERNS] = {0x00, EV_POISON_OUT_BYTE, EV_POISON_OUT_BYTE2};
    return k >= 0 && k < EV_BLIND_PATTERNS ? b[k] : 0;
}

const char *ev_blind_name(int k)
{
    static const char *const n[EV_BLIND_PATTERNS] = {
        "an all-zero output",
        "an output left as the first poison (0xff bytes)",
        "an output left as the second poison (0x7f bytes)",
    };
    return k >= 0 && k < EV_BLIND_PATTERNS ? n[k] : "?";
}

/* The chance bound (1 - k n/N)^draws of an omission of n of N elements. */
static double miss_free(double k, int64_t n, int64_t N, double draws)
{
    return pow(1.0 - k * (double)n / (double)N, draws);
}

/* The candidate omissions the data refinement weighs: N/2, N/4, ... 1
 * element, and N/16 (at least one element) first.  OUT: n[*count]. */
static void candidates(int64_t N, int64_t *n, size_t *count)
{
    size_t c = 0;
    n[c++] = N / 16 > 0 ? N / 16 : 1;
    for (int64_t x = N / 2; x >= 1 && c < 64; x /= 2)
        n[c++] = x;
    *count = c;
}

/*
 * The data refinement of a SUM or MEAN case's detection (ev_case_detection:
 * when m x ops is too small for the bound that holds for any input): with
 * the case's own input (the protocol's seed makes it, and an omission
 * fixed before it is seen cannot depend on it), a planted row r catches
 * an omission of its last n elements with a chance of at least
 *   p_r = (n/N)/2 + (1 - n/N) [|S_r| > 2 B_r]
 * (S_r the sum of the omitted elements, over N for a mean; B_r the check's bound of the row's
 * plants, ev_plant_rows: when the plant is not among them the output is
 * off by S_r plus the kernel's own error, itself within B_r), and an op
 * passes with a chance of prod over strata of the mean of (1 - p_r) over
 * the stratum's rows (one planted row each).  OUT: miss[i], the hot
 * sample's chance for omission n[i].  EV_EINVAL naming a row that cannot
 * be planted; EV_ENOMEM.
 */
static ev_status detection_data(const ev_protocol *p, size_t ci, const ev_shape *s, int64_t m,
                                const int64_t *n, size_t count, double *miss, ev_err *err)
{
    size_t es = ev_dtype_size(s->dtype);
    int64_t R = s->rows, N = s->cols;
    double *acc = calloc((size_t)m * count, sizeof *acc), *size = calloc((size_t)m, sizeof *size);
    unsigned char *row = malloc((size_t)N * es);
    ev_inputs_stream z;
    ev_shape one = *s;
    ev_status rc = EV_OK;

    if (!acc || !size || !row) {
        rc = ev_err_set(err, EV_ENOMEM, "cases[%zu]: no memory for its detection", ci);
        goto out;
    }
    one.rows = 1;
    ev_inputs_stream_init(&z, (uint64_t)p->seed, (uint64_t)ci);
    for (int64_t r = 0, k = 0; r < R; r++) {
        ev_oracle_row o;
        ev_plant_row pr;
        while (k + 1 < m && (k + 1) * R / m <= r)
            k++; /* r's stratum */
        ev_inputs_stream_row(s, &z, row);
        ev_oracle_reduce_row(s->op, s->dtype, row, N, &o);
        if ((rc = ev_plant_rows(&one, p->sum_depth, p->sum_bound_factor, ev_plant_sites_at(p->plan_schema),
                                &o, &pr, err))) {
            ev_err_prefix(err, "cases[%zu]: row %lld", ci, (long long)r);
            goto out;
        }
        size[k] += 1;
        for (size_t i = 0; i < count; i++) {
            double sum = 0, f = (double)n[i] / (double)N;
            for (int64_t c = N - n[i]; c < N; c++)
                sum += (double)ev_dtype_load(s->dtype, row, (size_t)c);
            if (s->op == EV_OP_MEAN)
                sum /= (double)N; /* the omission's shift of the mean */
            acc[(size_t)k * count + i] += 1.0 - (0.5 * f + (fabs(sum) > 2.0 * pr.bound ? 1.0 - f : 0.0));
        }
    }
    for (size_t i = 0; i < count; i++) {
        double op = 1;
        for (int64_t k = 0; k < m; k++)
            op *= size[k] > 0 ? acc[(size_t)k * count + i] / size[k] : 1.0;
        miss[i] = pow(op, (double)p->ops_per_graph);
    }
out:
    free(acc);
    free(size);
    free(row);
    return rc;
}

ev_status ev_case_detection(const ev_protocol *p, size_t ci, ev_detection *d, ev_err *err)
{
    const ev_proto_case *c = &p->cases[ci];
    int64_t R = c->rows, N = c->cols, ops = p->ops_per_graph, m = R < EV_PLANT_ROWS ? R : EV_PLANT_ROWS, n16;
    ev_op op;
    int known = ev_op_parse(c->op, &op) == 0, sum = known && ev_op_combine(op) == EV_COMBINE_SUM;
    double k = sum ? 0.5 : 1.0, f = p->sum_bound_factor > 1 ? p->sum_bound_factor : 1;
    double draws = (double)m * (double)ops, phi;
    ev_status rc;

    memset(d, 0, sizeof *d);
    if (!known)
        return ev_err_set(err, EV_EINVAL,
                          "cases[%zu]: %s has no plant rule and no detection rule (kernels/plants.h, "
                          "ev_case_detection): no case of it is checkable",
                          ci, c->op);
    d->rows_planted = m;
    d->slack = sum ? f * ev_oracle_sum_slack(N, p->sum_depth) : 0;
    n16 = N / 16 > 0 ? N / 16 : 1;
    d->miss_cold = m > 0 ? miss_free(k, n16, N, (double)m) : 1.0;
    d->miss_hot = m > 0 ? miss_free(k, n16, N, draws) : 1.0;
    /* the fewest omitted elements n with (1 - k n/N)^(m ops) <= EV_DETECT_MISS */
    phi = draws > 0 ? (1.0 - pow(EV_DETECT_MISS, 1.0 / draws)) / k : 2.0;
    d->omit = phi <= 1.0 ? (int64_t)ceil(phi * (double)N - 1e-9) : N + 1;
    if (d->omit < 1)
        d->omit = 1;
    while (d->omit <= N && draws > 0 && miss_free(k, d->omit, N, draws) > EV_DETECT_MISS)
        d->omit++; /* the rounding of the closed form, made exact */
    if (sum && m > 0 && d->miss_hot > EV_DETECT_MISS && d->slack < EV_PLANT_SLACK) {
        /* too few draws for the bound of any input: the case's own input decides */
        int64_t n[64];
        double miss[64];
        size_t count;
        ev_shape s;
        if ((rc = ev_case_shape(c, &s, err)))
            return rc;
        candidates(N, n, &count);
        if ((rc = detection_data(p, ci, &s, m, n, count, miss, err)))
            return rc;
        d->data = 1;
        d->miss_hot = miss[0];
        for (size_t i = 1; i < count; i++)
            if (miss[i] <= EV_DETECT_MISS && n[i] < d->omit)
                d->omit = n[i];
    }
    d->resolution = d->omit <= N ? (double)d->omit / (double)N : 1.0;
    return EV_OK;
}

/* The omission rule (ev_case_checkable): EV_EFORMAT naming what is
 * wrong with case ci's plants, or EV_OK. */
static ev_status omission_rule(const ev_protocol *p, size_t ci, ev_err *err)
{
    const ev_proto_case *c = &p->cases[ci];
    ev_detection d;
    ev_status rc = ev_case_detection(p, ci, &d, err);
    if (rc)
        return rc == EV_EINVAL ? ev_err_set(err, EV_EFORMAT, "%s", err->msg) : rc;
    if (d.slack >= EV_PLANT_SLACK)
        return ev_err_set(
            err, EV_EFORMAT,
            "cases[%zu] (%s %lldx%lld %s): its bound is too wide for a plant to move a row's output "
            "by twice it (sum_bound_factor x the bound's slack is %.4g, at least %g): the planted "
            "checks could not tell a kernel that skips work; declare tolerances.sum_depth or a "
            "smaller sum_bound_factor (docs/runner.md, \"Checkable cases\")",
            ci, c->op, (long long)c->rows, (long long)c->cols, c->dtype, d.slack, EV_PLANT_SLACK);
    if (d.miss_hot > EV_DETECT_MISS)
        return ev_err_set(
            err, EV_EFORMAT,
            "cases[%zu] (%s %lldx%lld %s): an output that omits 1/16 of each row's elements passes a "
            "hot sample's planted checks with a chance up to %.3g, above %g (%lld rows planted per op, "
            "%lld ops per graph; it catches an omission of %lld of %lld elements%s): use more rows or "
            "more ops_per_graph (docs/runner.md, \"Checkable cases\")",
            ci, c->op, (long long)c->rows, (long long)c->cols, c->dtype, d.miss_hot, EV_DETECT_MISS,
            (long long)d.rows_planted, (long long)p->ops_per_graph, (long long)d.omit, (long long)c->cols,
            d.data ? ", judged with its own input" : "");
    return EV_OK;
}

ev_status ev_case_checkable(const ev_protocol *p, size_t ci, int rules, ev_err *err)
{
    const ev_proto_case *c;
    ev_inputs_stream z;
    ev_shape s, one;
    ev_oracle_row o, first = {0, 0};
    unsigned char pat[EV_BLIND_PATTERNS][4];
    int alive[EV_BLIND_PATTERNS], n_alive = EV_BLIND_PATTERNS;
    double bound0 = 0; /* row 0's bound, as the check of an all-zero output gave it */
    void *row;
    ev_status rc;

    if (ci >= p->n_cases)
        return ev_err_set(err, EV_EINVAL, "case %zu is not in the protocol", ci);
    c = &p->cases[ci];
    if ((rc = ev_case_shape(c, &s, err)))
        return rc;
    if (s.rows < 1)
        return EV_OK;
    if ((rules & EV_CHECKABLE_OMISSION) && (rc = omission_rule(p, ci, err)))
        return rc;
    if (!(rules & EV_CHECKABLE_BLIND))
        return EV_OK;
    if (!(row = malloc((size_t)s.cols * ev_dtype_size(s.dtype))))
        return ev_err_set(err, EV_ENOMEM, "cases[%zu]: no memory for a row", ci);
    for (int k = 0; k < EV_BLIND_PATTERNS; k++) {
        memset(pat[k], ev_blind_byte(k), sizeof pat[k]);
        alive[k] = 1;
    }
    one = s;
    one.rows = 1;
    ev_inputs_stream_init(&z, (uint64_t)p->seed, (uint64_t)ci);
    for (int64_t r = 0; r < s.rows && n_alive; r++) {
        ev_inputs_stream_row(&s, &z, row);
        ev_oracle_reduce_row(s.op, s.dtype, row, s.cols, &o);
        if (r == 0)
            first = o;
        for (int k = 0; k < EV_BLIND_PATTERNS; k++) {
            ev_validation v;
            if (!alive[k])
                continue;
            ev_output_check(p, &one, NULL, &o, pat[k], &v);
            if (r == 0 && k == 0)
                bound0 = v.bound;
            if (!v.passed) {
                alive[k] = 0;
                n_alive--;
            }
        }
    }
    free(row);
    for (int k = 0; k < EV_BLIND_PATTERNS; k++) {
        if (!alive[k])
            continue;
        return ev_err_set(err, EV_EFORMAT,
                          "cases[%zu] (%s %lldx%lld %s): %s passes its validation on every row (row 0: %s "
                          "%.6g, bound %.6g): it could not tell a kernel that does no work; declare "
                          "tolerances.sum_depth (the deepest chain of additions an arm may use, "
                          "docs/runner.md) or use shorter rows",
                          ci, c->op, (long long)c->rows, (long long)c->cols, c->dtype, ev_blind_name(k),
                          ev_op_name(s.op), first.ref, bound0);
    }
    return EV_OK;
}
