/*
 * validate.c: validation under a protocol (validate.h): the case's shape
 * and oracle rows, the output check with the protocol's tolerances, and
 * the checkable-case rule.
 */
#include "validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "inputs.h"

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

ev_status ev_case_checkable(const ev_protocol *p, size_t ci, ev_err *err)
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
