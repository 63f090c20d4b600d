/*
 * selector.c: the schedules' geometry and the launch plan of a schedule
 * (see selector.h).  The model's choice among them is src/model/select.c.
 */
#include "selector.h"

#include <stdio.h>
#include <string.h>

#include "reduce_cpu.h"

/* See selector.h. */
int64_t ev_sched_rows(ev_sched s, int64_t default_rows)
{
    return s == EV_SCHED_DEFAULT ? default_rows : ev_sched_fixed_rows(s);
}

/* See selector.h. */
int64_t ev_sched_rows_of(ev_sched s, int64_t B, int64_t N, ev_dtype dt)
{
    int64_t p;
    if (s == EV_SCHED_SPLIT)
        return ev_split_programs(N, dt) > 0 ? 1 : 0;
    if (s != EV_SCHED_SHORT)
        return ev_sched_rows(s, B);
    if (ev_dtype_size(dt) == 0 || (p = ev_short_threads(N, dt)) < 1)
        return 0;
    return EV_SHORT_PROGRAM / p;
}

/* See selector.h. */
int64_t ev_sched_split_of(ev_sched s, int64_t N, ev_dtype dt)
{
    return s == EV_SCHED_SPLIT ? ev_split_programs(N, dt) : 1;
}

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
