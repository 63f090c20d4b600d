/*
 * backend.c: what both backends of the worker share (backend.h): a case's
 * shape, and the choice of the launch for a reduction job (native arm,
 * auto arm, and the wrong-schedule fault arm), so that the cpu and cuda
 * receipts are both exactly ev_selector_plan's.
 */
#include "backend.h"

#include <string.h>

ev_status ev_backend_schedule(const ev_backend_job *job, const ev_shape *s, ev_sel_backend be, int64_t S,
                              ev_launch_plan *out, ev_err *err)
{
    static const ev_sched wrong[4] = {EV_SCHED_ROWS2, EV_SCHED_ROWS1, EV_SCHED_DEFAULT, EV_SCHED_ROWS4};
    int64_t B = job->c.default_rows;
    ev_launch_plan p;
    ev_sched sched;
    ev_status rc;

    if (job->kind != EV_ARM_AUTO) {
        sched = EV_SCHED_DEFAULT; /* default, and the fault arms that bind as it */
        if (job->arm && ev_sched_parse(job->arm, &sched) && !strncmp(job->arm, "rows", 4))
            return ev_err_set(err, EV_EINVAL, "binding refused: no kernel for schedule %s", job->arm);
        return ev_selector_plan(be, s, sched, B, S, out, err);
    }
    if ((rc = ev_selector_select(be, s, B, job->coef, S, job->threshold, job->scheds, &p, NULL, err)))
        return rc;
    if (job->wrong_schedule) {
        int64_t chosen = p.rows_per_program;
        for (int k = 0; k < 4; k++)
            if (ev_sched_rows(wrong[k], B) != chosen)
                return ev_selector_plan(be, s, wrong[k], B, S, out, err);
        return ev_err_set(err, EV_EINVAL, "wrong-schedule: every schedule has %lld rows", (long long)chosen);
    }
    *out = p;
    return EV_OK;
}

void ev_device_state_unknown(ev_device_state *s)
{
    memset(s, 0, sizeof *s);
    s->other_processes = s->throttle_reasons = s->ecc = s->mig = s->persistence = s->persisting_l2_bytes = -1;
}

void ev_backend_slot_order(const size_t *off, int64_t n, int64_t *order)
{
    for (int64_t i = 0; i < n; i++) { /* insertion by offset (n is ops: small) */
        int64_t k = i;
        while (k > 0 && off[order[k - 1]] > off[i]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
}

ev_status ev_backend_guards(const unsigned char *arena, size_t len, const size_t *off, const int64_t *order,
                            int64_t n, size_t out_len, const char *who, ev_err *err)
{
    size_t lo = 0;
    for (int64_t p = 0; p <= n; p++) {
        int64_t i = p < n ? order[p] : -1;
        size_t hi = i >= 0 ? off[i] : len;
        for (size_t at = lo; at < hi; at++) {
            if (arena[at] == EV_GUARD_BYTE)
                continue;
            if (p == 0)
                return ev_err_set(
                    err, EV_EVERIFY,
                    "external kernel %s wrote outside its output: %zu byte(s) before out[0] of op "
                    "%lld's output",
                    who, hi - at, (long long)i);
            return ev_err_set(
                err, EV_EVERIFY,
                "external kernel %s wrote outside its output: %zu byte(s) past out[rows - 1] of op "
                "%lld's output",
                who, at - lo + 1, (long long)order[p - 1]);
        }
        if (i >= 0)
            lo = off[i] + out_len;
    }
    return EV_OK;
}
