/*
 * select.h: the selector's decision: the cost model (model.h,
 * ev_model_decide) picks a schedule among a protocol's declared ones for
 * any binding, and the kernels' launch plan (kernels/selector.h) plans it.
 * The worker's auto arm and the verifier's check of its graph receipts
 * call this one function.
 */
#ifndef EV_SELECT_H
#define EV_SELECT_H

#include <stdint.h>

#include "model.h"
#include "selector.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Decides with the model (coef NULL: default) for shape s, default rows B,
 * S = SMs (cuda) or worker threads (cpu), among the declared schedules
 * scheds (a protocol's model_schedules, EV_SCHED_BIT mask), and plans the
 * selected schedule.  R = 0 is the default without asking the model
 * (nothing is launched).  OUT: *out, and *dec when dec is non-NULL
 * (predictions of every schedule).  EV_EINVAL as ev_model_decide.
 */
ev_status ev_selector_select(ev_sel_backend be, const ev_shape *s, int64_t B, const ev_coef *coef, int64_t S,
                             double threshold, unsigned scheds, ev_launch_plan *out, ev_decision *dec,
                             ev_err *err);

#ifdef __cplusplus
}
#endif

#endif
