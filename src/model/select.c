/*
 * select.c: the selector's decision (select.h): the cost model picks the
 * schedule, kernels/selector.h plans its launch.
 */
#include "select.h"

#include <string.h>

/* See select.h. */
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
