/*
 * model_int.h: the body of ev_fit, shared by the files of src/model/
 * (model.c fits, model_json.c writes model.json).  Nothing outside
 * src/model/ includes it.
 */
#ifndef EV_MODEL_INT_H
#define EV_MODEL_INT_H

#include "model.h"

/* A calibration or holdout geometry [R, N, B, W] (W follows from N). */
typedef struct ev_geom {
    int64_t rows, cols, default_rows, width;
    int calibration; /* has at least one calibration case */
    size_t n_fit;    /* fitted observations (calibration, declared schedules) */
    size_t fold;     /* fold index when calibration */
} ev_geom;

/* Per fitted or observed observation: predictions and residuals. */
typedef struct ev_obs_res {
    int fitted;                  /* calibration, of a declared schedule */
    double pred_full, pred_logo; /* pred_logo NaN when not a calibration obs */
} ev_obs_res;

typedef struct ev_case_int {
    ev_fit_case pub;
    size_t geom;
    size_t obs[EV_SCHED_COUNT]; /* index into ev_fit.obs, or SIZE_MAX */
} ev_case_int;

typedef struct ev_fold {
    size_t geom; /* held-out geometry */
    ev_nnls nnls;
} ev_fold;

struct ev_fit {
    ev_obs *obs; /* sorted by (R, N, B, op, dtype, sched) */
    size_t n_obs;
    ev_obs_res *res;  /* n_obs */
    size_t *obs_geom; /* n_obs: geometry index of each observation */
    ev_excluded *excluded;
    size_t n_excluded;
    int64_t sms;
    double threshold;
    unsigned scheds; /* declared schedules (EV_SCHED_BIT mask) */

    ev_geom *geoms; /* sorted by (R, N, B) */
    size_t n_geoms;
    size_t n_cal_geoms;
    double *geom_weight; /* per geometry: weight of each of its observations in the full fit */

    ev_case_int *cases; /* sorted by (R, N, B, op, dtype) */
    size_t n_cases;

    ev_nnls full;
    ev_fold *folds; /* n_cal_geoms */

    double policy_geomean, policy_geomean_logo;
    ev_fit_maxres maxres_full, maxres_logo;
    double regret_geomean, regret_max;
    size_t n_holdout;
};

/* Names of the three coefficients, in column order. */
extern const char *const ev_coef_names[3];

#endif
