/*
 * run_view.h: one view of a run, the facts of its jobs that the model's
 * observations and the figures are computed from.  Three readers fill it
 * from their own sources: the store loader (runner/model_store.c, from
 * SQLite), the exporter (bundle/export_members.c, from the rows it
 * loaded) and the verifier (verify/verify_refit.c, from the members it
 * parsed), and evident compare's rebuild (evidence/figures_rebuild.c,
 * from a bundle's raw members).  What is computed from it is computed
 * once: ev_view_observe (the fit's observations, model_obs.c) and
 * ev_figures_build (evidence/figures.h), so no reader can fit another
 * model or print other figures than the others.
 *
 * The view borrows every string and array: the reader that filled it
 * owns them and keeps them while the view is used.
 */
#ifndef EV_RUN_VIEW_H
#define EV_RUN_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "status.h"

/* One case of the run's protocol. */
typedef struct ev_view_case {
    int64_t case_index;
    const char *op, *dtype;
    int64_t rows, cols, default_rows;
    int holdout; /* its role is holdout */
} ev_view_case;

/* One job: what the plan made it and what its last attempt recorded. */
typedef struct ev_view_job {
    const char *job_key, *phase, *arm;
    int64_t round;       /* the plan's round of the job, 1.. (ev_plan_label_round of its label) */
    int64_t case_index;  /* -1: no case (reference arms) */
    int retry;           /* 1: a rescue job (retry_of set) */
    const char *outcome; /* ev_outcome_name of the job's outcome ("interrupted" without an attempt) */
    int has_binding;     /* the last attempt recorded a binding, */
    int64_t threads;     /* its thread count (S) */
    const double *hot;   /* per_op_us of the last attempt's hot samples, */
    size_t n_hot;        /* in samples.csv order (sample_index ascending) */
    const double *cold;  /* the same for cold samples */
    size_t n_cold;
    int has_clock; /* any hot sample of the last attempt has an SM clock */
    int64_t clock_min, clock_max;
    int uncaptured; /* 1: its last attempt ran in the timed loop, not in a CUDA graph (ev_view_capture) */
} ev_view_job;

typedef struct ev_run_view {
    const ev_view_case *cases; /* in case_index order */
    size_t n_cases;
    const ev_view_job *jobs; /* in job_id order */
    size_t n_jobs;
    int64_t seed;     /* the protocol's */
    unsigned scheds;  /* the protocol's model_schedules (EV_SCHEDS_DEFAULT when it declares none) */
    double threshold; /* the protocol's decision_threshold */
} ev_run_view;

/* Widens j's SM clock range by one hot sample's clock (MHz): the range is
 * over the last attempt's hot samples that recorded one.  Each reader of
 * the samples calls it per such sample. */
void ev_view_clock(ev_view_job *j, int64_t mhz);

/*
 * The job's hot median (us per op), the one every reader's observation
 * uses: the median of its last attempt's hot samples when the job
 * completed and has any (and they are numbers).  OUT: *has (0: none) and
 * *out.  EV_ENOMEM.
 */
ev_status ev_view_hot_median(const ev_view_job *j, int *has, double *out);

/* The fit's observations from a view. */
typedef struct ev_view_obs {
    ev_obs *obs; /* n_obs of them (malloc'd: ev_view_obs_free) */
    size_t n_obs;
    ev_excluded *excluded; /* n_excluded, NULL when none */
    size_t n_excluded;
    int64_t sms; /* S: the thread count the usable rounds bound, 1 when none did */
    int bound;   /* 1 when a usable round bound S (some case has completed jobs) */
} ev_view_obs;

/*
 * The fit's observations of v (model.h, ev_obs_select, case by case in
 * the view's order): each main-phase, original job of a declared schedule
 * is one round of its case's schedule, usable when completed with a binding and hot samples (ev_view_hot_median).
 * OUT: *o.  EV_ENOMEM; EV_EFIT when the usable rounds bound different
 * thread counts (err says which).
 */
ev_status ev_view_observe(const ev_run_view *v, ev_view_obs *o, ev_err *err);

/* The fit's input over o and v's threshold and schedules (borrows o). */
ev_fit_input ev_view_fit_input(const ev_run_view *v, const ev_view_obs *o);

/* Frees what ev_view_observe allocated; leaves *o empty. */
void ev_view_obs_free(ev_view_obs *o);

#endif
