/*
 * model.h: the cost model of DESIGN.md ("Cost model").
 *
 *   q = a0 + aP * P + aD * ceil(P / S) * b * W
 *
 * R valid rows, N columns, W = smallest power of two >= N, b rows per
 * program, P = ceil(R / b), S = SM count (cuda) or worker threads (cpu).
 * Fit: NNLS by enumerating the eight active subsets of {a0, aP, aD},
 * geometry-equal weights, per-column max-abs scaling from the training rows
 * only; leave-one-geometry-out (LOGO) folds; decisions with a strict 5%
 * threshold.  Deterministic to the bit: no fast-math, no FP contraction.
 */
#ifndef EV_MODEL_H
#define EV_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "status.h"

/* Schedules.  default = the case's own B; rowsK = K rows per program. */
typedef enum ev_sched {
    EV_SCHED_DEFAULT = 0,
    EV_SCHED_ROWS1,
    EV_SCHED_ROWS2,
    EV_SCHED_ROWS4,
    EV_SCHED_COUNT
} ev_sched;

const char *ev_sched_name(ev_sched s);               /* "default", "rows1", ... */
int ev_sched_parse(const char *name, ev_sched *out); /* 0 ok, -1 unknown */
/* Rows per program of s for a case whose default is B. */
int64_t ev_sched_rows(ev_sched s, int64_t default_rows);

typedef struct ev_coef {
    double a0, aP, aD;
} ev_coef;

/* The features of one binding under b rows per program. */
typedef struct ev_features {
    double one, P, D; /* 1, P, ceil(P/S) * b * W */
} ev_features;
ev_status ev_model_features(int64_t R, int64_t N, int64_t b, int64_t S, ev_features *out);
/* Predicted microseconds per op. */
double ev_model_predict(const ev_coef *c, const ev_features *f);

/* A decision for any binding (R, N, B, S): not a lookup by case. */
typedef struct ev_decision {
    double predicted[EV_SCHED_COUNT]; /* us per op, every schedule */
    ev_sched selected;                /* default, rows1 or rows2 */
    int64_t rows_per_program;         /* of the selected schedule */
} ev_decision;

/*
 * Decides: a candidate (rows1, rows2) is selected only when its prediction
 * is strictly more than `threshold` (0.05) lower than the default's, i.e.
 * pred < (1 - threshold) * pred_default; the lowest qualifying wins; equal
 * rows1/rows2 prefer rows1; otherwise default.  rows4 is predicted, never
 * selected.  When B equals a candidate's rows, that candidate is the default.
 */
ev_status ev_model_decide(const ev_coef *c, int64_t R, int64_t N, int64_t B, int64_t S, double threshold,
                          ev_decision *out);

/* ---- fitting ----------------------------------------------------------- */

typedef enum ev_role { EV_ROLE_CALIBRATION = 0, EV_ROLE_HOLDOUT = 1 } ev_role;

typedef struct ev_obs {
    char op[16];   /* reduce_sum | reduce_max */
    char dtype[8]; /* fp32 | fp16 | bf16 */
    int64_t rows, cols, default_rows;
    ev_sched sched;
    double median_us;
    ev_role role;
} ev_obs;

/* A case left out of the fit, with the reason (from the store). */
typedef struct ev_excluded {
    char op[16], dtype[8];
    int64_t rows, cols, default_rows;
    char reason[160];
} ev_excluded;

typedef struct ev_fit_input {
    const ev_obs *obs;
    size_t n_obs;
    const ev_excluded *excluded;
    size_t n_excluded;
    int64_t sms;      /* S */
    double threshold; /* 0.05 */
} ev_fit_input;

typedef struct ev_fit ev_fit; /* opaque result: coefficients, folds, decisions ... */

/*
 * Validates the observations (unknown op/schedule, non-positive or NaN
 * median, duplicates, a case without default, fewer than two calibration
 * geometries, R or N below 1: EV_EFORMAT with err naming the observation)
 * and fits.  OUT: *out.
 */
ev_status ev_model_fit(const ev_fit_input *in, ev_fit **out, ev_err *err);
void ev_fit_free(ev_fit *f); /* NULL-safe */
const ev_coef *ev_fit_coef(const ev_fit *f);
/* Writes model.json (doubles exact, keys as DESIGN.md and the issue list). */
ev_status ev_fit_to_json(const ev_fit *f, ev_buf *out, ev_err *err);

/*
 * Reads observations from CSV text with header
 * op,rows,cols,dtype,default_rows,schedule,median_us[,role].  Errors name
 * the line.  OUT: *obs (malloc'd), *n.
 */
ev_status ev_obs_from_csv(const char *p, size_t n, ev_obs **obs, size_t *n_obs, ev_err *err);

#endif
