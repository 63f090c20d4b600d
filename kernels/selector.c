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

/* See selector.h. */
int ev_launch_rule_declared(const char *text, size_t n)
{
    static const char key[] = "#define EV_LAUNCH_RULE";
    const size_t k = sizeof key - 1;
    int rule = 1, seen = 0;
    for (size_t i = 0; i + k <= n; i++) {
        size_t j = i + k;
        long v = 0;
        if ((i > 0 && text[i - 1] != '\n') || memcmp(text + i, key, k) || j >= n ||
            (text[j] != ' ' && text[j] != '\t'))
            continue;
        while (j < n && (text[j] == ' ' || text[j] == '\t'))
            j++;
        if (j >= n || text[j] < '1' || text[j] > '9' || seen++)
            return -1;
        while (j < n && text[j] >= '0' && text[j] <= '9' && v < 1000000)
            v = v * 10 + (text[j++] - '0');
        if (j < n && text[j] != ' ' && text[j] != '\t' && text[j] != '\n' && text[j] != '/')
            return -1;
        rule = (int)v;
    }
    return rule;
}

/* See selector.h. */
int ev_pack_takes(const ev_shape *s, int64_t b, int64_t rt)
{
    int64_t es = (int64_t)ev_dtype_size(s->dtype), V = es > 0 ? 16 / es : 0;
    return V > 0 && b >= 2 && rt == 32 && ev_reduce_lanes(s->cols, s->dtype) == 32 &&
           (s->stride * es) % 16 == 0 && s->cols % V == 0 && s->cols / V <= 2 * 32;
}

/* See selector.h. */
int64_t ev_row_threads_rule(int rule, const ev_shape *s, int64_t b)
{
    int64_t rt = ev_row_threads(s->cols, s->stride, s->dtype, b), q;
    if (rule < 3 || rt != ev_reduce_lanes(s->cols, s->dtype) ||
        (q = ev_thin_one_chunk_threads(s->cols, s->dtype)) < 1)
        return rt;
    return b >= 32 / q ? q : rt;
}

/* The packed program's plan (launch rule 2, selector.h) in place of p, a
 * cuda default or rowsK plan of s with rt threads a row and n programs on
 * S SMs, where it was measured faster (docs/perf-notes.md, v11): a SUM of
 * b >= 4 rows the packed entry takes (ev_pack_takes), on a grid of at
 * least one program an SM (n >= S > 0), its block whole pairs of warps.
 * Returns 0 where it applies (p changed), else -1 (p as it was). */
static int sel_pack(ev_launch_plan *p, const ev_shape *s, int64_t rt, int64_t n, int64_t S)
{
    char name[sizeof p->entry] = {0};
    int len;
    if (s->op != EV_OP_SUM || p->rows_per_program < 4 || S < 1 || n < S || p->block[0] % 64 != 0 ||
        !ev_pack_takes(s, p->rows_per_program, rt))
        return -1;
    len = snprintf(name, sizeof name, "%s_%s_pack", ev_op_name(s->op), ev_dtype_name(s->dtype));
    if (len < 0 || (size_t)len >= sizeof name)
        return -1;
    memcpy(p->entry, name, sizeof name);
    p->block[0] /= 2;
    return 0;
}

/* See selector.h. */
ev_status ev_selector_plan(ev_sel_backend be, const ev_shape *s, ev_sched sched, int64_t B, int64_t threads,
                           ev_launch_plan *out, ev_err *err)
{
    return ev_selector_plan_rule(EV_LAUNCH_RULE, be, s, sched, B, threads, out, err);
}

/* See selector.h. */
ev_status ev_selector_plan_rule(int rule, ev_sel_backend be, const ev_shape *s, ev_sched sched, int64_t B,
                                int64_t threads, ev_launch_plan *out, ev_err *err)
{
    ev_launch_plan p;
    int64_t b, t, n;
    int len;

    if (rule < 1 || rule > EV_LAUNCH_RULE)
        return ev_err_set(err, EV_EINVAL, "selector: launch rule %d (this code knows 1 to %d)", rule,
                          EV_LAUNCH_RULE);
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
        int64_t rt = ev_row_threads_rule(rule, s, b);
        int64_t cap =
            threads > 0 && n >= 2 * threads ? (rt > EV_PROGRAM_THREADS ? rt : EV_PROGRAM_THREADS) : 1024;
        int64_t th = b > cap / rt ? cap : b * rt;
        p.block[0] = (th + 31) / 32 * 32;
        if (rule >= 2)
            (void)sel_pack(&p, s, rt, n, threads);
    } else {
        p.block[0] = b;
    }
    *out = p;
    return EV_OK;
}
