/*
 * model_store.h: the fit's observations read from an evidence store: the
 * run's view (model/run_view.h) filled from the store and observed by the
 * one rule (ev_view_observe), as the exporter and the verifier observe
 * theirs.  It reads the run's protocol and plan labels, so it stands with
 * the runner: `evident run`'s fit phase and `evident fit --db` call it.
 */
#ifndef EV_MODEL_STORE_H
#define EV_MODEL_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "status.h"

struct ev_store;

/*
 * The fit's observations for run_id: main-phase hot medians (median of
 * per_op_us = elapsed_ms * 1000 / (replays * ops_per_graph), in double,
 * over the hot samples of the job's last attempt) of the declared
 * schedules scheds (ev_obs_select's rule) of every case whose jobs
 * completed; holdout
 * cases with role holdout.  A case with a missing or failed job (or R or N
 * below 1) is listed in *excl with the reason, in the exporter's words
 * ("rows2: failed-exit"; several joined by "; ").  *sms is the bindings'
 * thread count (S, ev_obs_sms); EV_EFIT when no usable round bound one.
 * OUT: *obs, *n, *excl, *n_excl (malloc'd; *excl NULL when empty), *sms.
 */
ev_status ev_obs_from_store(struct ev_store *s, int64_t run_id, unsigned scheds, ev_obs **obs, size_t *n,
                            ev_excluded **excl, size_t *n_excl, int64_t *sms, ev_err *err);

/* The declared schedules of run_id: its stored protocol's
 * "model_schedules" (runner/protocol.h; EV_SCHEDS_DEFAULT when the bytes
 * do not parse, as the exporter reads them).  EV_ENOTFOUND for no such
 * run.  OUT: *scheds. */
ev_status ev_obs_run_scheds(struct ev_store *s, int64_t run_id, unsigned *scheds, ev_err *err);

#endif
