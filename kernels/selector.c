/*
 * selector.c: launch plans and model-driven selection (see selector.h).
 */
#include "selector.h"

#include <stdio.h>
#include <string.h>

#include "reduce_cpu.h"

ev_status ev_selector_plan(ev_sel_backend be, const ev_shape *s, ev_sched sched, int64_t B, int64_t threads,
                           ev_launch_plan *out, ev_err *err)
{
    ev_launch_plan p;
    int64_t b, t, n;
    int len;

    if ((unsigned)s->op >= EV_OP_COUNT || ev_dtype_size(s->dtype) == 0 || s->rows < 0 || s->cols < 1 ||
        s->stride < s->cols)
        return ev_err_set(err, EV_EINVAL, "selector: bad shape");
    if (B < 1 || (unsigned)sched >= EV_SCHED_COUNT)
        return ev_err_set(err, EV_EINVAL, "selector: B = %lld, schedule %d", (long long)B, (int)sched);
    if (be == EV_SEL_CPU && threads < 1)
        return ev_err_set(err, EV_EINVAL, "selector: %lld cpu threads", (long long)threads);
    b = ev_sched_rows_of(sched, B, s->cols, s->dtype);
    t = ev_reduce_lanes(s->cols, s->dtype);
    if (b < 1 && sched == EV_SCHED_SPLIT)
        return ev_err_set(err, EV_EINVAL,
                          "selector: split is for rows over 64 KiB padded, not %lld %s elements",
                          (long long)s->cols, ev_dtype_name(s->dtype));
    if (b < 1)
        return ev_err_set(
            err, EV_EINVAL,
            "selector: short is for rows of at most 32 chunks of 16 bytes, not %lld %s elements",
            (long long)s->cols, ev_dtype_name(s->dtype));
    memset(&p, 0, sizeof p);
    len = snprintf(p.entry, sizeof p.entry, "%s_%s_%s", ev_op_name(s->op), ev_dtype_name(s->dtype),
                   ev_sched_name(sched));
    if (len < 0 || (size_t)len >= sizeof p.entry)
        return ev_err_set(err, EV_EINVAL, "selector: entry name too long");
    n = s->rows / b + (s->rows % b != 0);
    p.sched = sched;
    p.rows_per_program = b;
    p.lanes = t;
    p.cluster = be == EV_SEL_CUDA ? ev_sched_split_of(sched, s->cols, s->dtype) : 1;
    if (n > INT64_MAX / p.cluster)
        return ev_err_set(err, EV_EINVAL, "selector: %lld rows over %lld programs each overflow a grid",
                          (long long)s->rows, (long long)p.cluster);
    p.grid[0] = n * p.cluster;
    p.grid[1] = p.grid[2] = 1;
    p.block[1] = p.block[2] = 1;
    if (be == EV_SEL_CUDA && sched == EV_SCHED_SPLIT) {
        p.block[0] = t / p.cluster;
    } else if (be == EV_SEL_CUDA && sched == EV_SCHED_SHORT) {
        p.block[0] = EV_SHORT_PROGRAM;
    } else if (be == EV_SEL_CUDA) {
        /* rt threads a row (reduce_cpu.h, ev_row_threads: t lanes, or
         * fewer threads holding them: the thin program, paired lanes),
         * whole warps; a grid that fills the device runs its rows as
         * passes of fewer threads (EV_PROGRAM_THREADS); threads is S here */
        int64_t rt = ev_row_threads(s->cols, s->stride, s->dtype, b);
        int64_t cap =
            threads > 0 && n >= 2 * threads ? (rt > EV_PROGRAM_THREADS ? rt : EV_PROGRAM_THREADS) : 1024;
        int64_t th = b > cap / rt ? cap : b * rt;
        p.block[0] = (th + 31) / 32 * 32;
    } else {
        p.block[0] = b;
    }
    *out = p;
    return EV_OK;
}

ev_status ev_selector_select(ev_sel_backend be, const ev_shape *s, int64_t B, const ev_coef *coef, int64_t S,
                             double threshold, unsigned scheds, ev_launch_plan *out, ev_decision *dec,
                             ev_err *err)
{
    ev_decision d;
    ev_status rc;

    memset(&d, 0, sizeof d);
    d.selected = EV_SCHED_DEFAULT;
    d.rows_per_program = B;
    /* R = 0 launches nothing, whatever the schedule: there is nothing for
     * the model to decide (it has no features for R = 0), so the choice is
     * the default and the plan an empty grid. */
    if (coef != NULL && s->rows > 0) {
        if (S < 1)
            return ev_err_set(err, EV_EINVAL, "selector: S = %lld", (long long)S);
        rc = ev_model_decide(coef, s->rows, s->cols, s->dtype, B, S, threshold, scheds, &d);
        if (rc)
            return ev_err_set(err, rc, "selector: the model could not decide R=%lld N=%lld B=%lld S=%lld",
                              (long long)s->rows, (long long)s->cols, (long long)B, (long long)S);
    }
    rc = ev_selector_plan(be, s, d.selected, B, S, out, err);
    if (rc)
        return rc;
    if (dec != NULL)
        *dec = d;
    return EV_OK;
}
