/*
 * model.h: the cost model (docs/model.md).
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
#include "dtype.h"
#include "selector.h" /* the schedules' geometry: ev_sched_rows_of, ev_sched_split_of */
#include "status.h"

/*
 * Schedules (ev_sched, its names: the vocabulary, src/common/vocab.h).
 * default = the case's own B; rowsK = K rows per program;
 * short = several short rows a warp (kernels/reduce_short.cuh), whose
 * rows per program depend on the row (ev_sched_rows_of); split = one long
 * row over G programs (a thread block cluster, kernels/reduce_split.cuh),
 * G from the row (ev_sched_split_of).  The first
 * EV_MODEL_SCHEDS are the fixed-rows schedules the model always predicts;
 * which schedules it fits and chooses from is a protocol's
 * "model_schedules" (a mask of EV_SCHED_BIT, EV_SCHEDS_DEFAULT when
 * absent).
 */
#define EV_MODEL_SCHEDS 4 /* default, rows1, rows2, rows4 */

/* A set of schedules: bit s for ev_sched s.  EV_SCHEDS_DEFAULT is the set
 * of a protocol without "model_schedules" (the seed's three). */
#define EV_SCHED_BIT(s) (1u << (unsigned)(s))
#define EV_SCHEDS_DEFAULT                                                                                    \
    (EV_SCHED_BIT(EV_SCHED_DEFAULT) | EV_SCHED_BIT(EV_SCHED_ROWS1) | EV_SCHED_BIT(EV_SCHED_ROWS2))
#define EV_SCHEDS_ALL ((1u << EV_SCHED_COUNT) - 1u)
/* 1 when scheds is a set a fit or a decision accepts: it holds default
 * and no bit beyond EV_SCHED_COUNT. */
int ev_scheds_valid(unsigned scheds);

typedef struct ev_coef {
    double a0, aP, aD;
} ev_coef;

/* The features of one binding under b rows per program. */
typedef struct ev_features {
    double one, P, D; /* 1, P, ceil(P/S) * b * W */
} ev_features;
ev_status ev_model_features(int64_t R, int64_t N, int64_t b, int64_t S, ev_features *out);
/* As ev_model_features with each row over G programs: P = ceil(R / b) *
 * G, D = ceil(P / S) * b * (W / G); G = 1 is ev_model_features.
 * EV_EINVAL when G is below 1 or does not divide W. */
ev_status ev_model_features_g(int64_t R, int64_t N, int64_t b, int64_t G, int64_t S, ev_features *out);
/*
 * The features of schedule s for R rows of N columns of dtype dt, default
 * rows B, S SMs or threads: ev_model_features_g with b = ev_sched_rows_of
 * and G = ev_sched_split_of.  The one function the fit, the decision and
 * the verifier's refit form features with.  EV_EINVAL where s does not
 * apply, as ev_model_features_g otherwise.  OUT: *out.
 */
ev_status ev_sched_features(ev_sched s, int64_t R, int64_t N, ev_dtype dt, int64_t B, int64_t S,
                            ev_features *out);
/* Predicted microseconds per op. */
double ev_model_predict(const ev_coef *c, const ev_features *f);

/* A decision for any binding (R, N, B, S): not a lookup by case. */
typedef struct ev_decision {
    double predicted[EV_SCHED_COUNT]; /* us per op: the four fixed-rows schedules, and short
                                         where it applies (NaN elsewhere) */
    ev_sched selected;                /* default or one of the declared candidates */
    int64_t rows_per_program;         /* of the selected schedule */
} ev_decision;

/*
 * Decides among the schedules of scheds (ev_scheds_valid) for R rows of N
 * columns of dtype dt, default rows B, S SMs or threads.  Candidates are
 * the declared schedules other than default, in enum order (rows1, rows2,
 * rows4, short), less those whose rows per program equal B (the default
 * itself) and those that do not apply (ev_sched_rows_of 0).  A candidate
 * qualifies only when pred < (1 - threshold) * pred_default (strict); the
 * lowest qualifying wins, an equal prediction keeps the earlier; none
 * keeps the default.  EV_EINVAL for R, N, B, S below 1, a threshold
 * outside [0, 1) or not finite, a bad dt or scheds; EV_ERANGE when a
 * feature overflows.  OUT: *out.
 */
ev_status ev_model_decide(const ev_coef *c, int64_t R, int64_t N, ev_dtype dt, int64_t B, int64_t S,
                          double threshold, unsigned scheds, ev_decision *out);

/* ---- fitting ----------------------------------------------------------- */

/* A case's role (ev_role) is the vocabulary's (src/common/vocab.h). */

typedef struct ev_obs {
    char op[EV_OP_NAME_MAX];       /* an op (src/common/vocab.h) */
    char dtype[EV_DTYPE_NAME_MAX]; /* a dtype */
    int64_t rows, cols, default_rows;
    ev_sched sched;
    double median_us;
    ev_role role;
    int64_t line; /* 1-based CSV line it came from; 0 when not from a CSV */
} ev_obs;

/* A case left out of the fit, with the reason (from the store). */
typedef struct ev_excluded {
    char op[EV_OP_NAME_MAX], dtype[EV_DTYPE_NAME_MAX];
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
    unsigned scheds;  /* the declared schedules (EV_SCHED_BIT mask); 0: EV_SCHEDS_DEFAULT */
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
/* Writes model.json (doubles exact, keys as docs/bundle-format.md, "model.json"). */
ev_status ev_fit_to_json(const ev_fit *f, ev_buf *out, ev_err *err);
/* Writes the model.json of a fit that failed with status rc and reason
 * (ev_model_fit's message; "" gives ev_strerror(rc)): a failed fit is
 * evidence too.  The exporter writes it, the verifier rebuilds it: one
 * definition.  EV_ENOMEM. */
ev_status ev_fit_failed_json(ev_status rc, const char *reason, ev_buf *out);

/* ---- inspecting a fit (tests, the report, the verifier) ----------------- */

/* Active-subset masks: bit 0 = a0, bit 1 = aP, bit 2 = aD (0 = empty). */
#define EV_MASK_A0      1u
#define EV_MASK_AP      2u
#define EV_MASK_AD      4u
#define EV_SUBSET_COUNT 8

typedef enum ev_subset_status {
    EV_SUBSET_FEASIBLE = 0, /* every coefficient >= 0 */
    EV_SUBSET_NEGATIVE,     /* solved, but a coefficient is < 0 */
    EV_SUBSET_SINGULAR      /* the weighted scaled system is rank deficient */
} ev_subset_status;

typedef struct ev_subset_result {
    unsigned mask;
    ev_subset_status status;
    double objective; /* sum w_i (pred_i - y_i)^2; NaN when singular */
    ev_coef coef;     /* unscaled; 0 outside the mask; all 0 when singular */
} ev_subset_result;

/* One NNLS solve (a full fit or a fold). */
typedef struct ev_nnls {
    double scale[3];                          /* max |column| over the training rows (1 for a zero column) */
    ev_subset_result subset[EV_SUBSET_COUNT]; /* indexed by mask */
    unsigned best;                            /* mask of the chosen subset */
    ev_coef coef;                             /* = subset[best].coef */
    size_t n_rows;                            /* training rows */
} ev_nnls;

/*
 * NNLS of y on the columns of X (n rows, row-major n x 3: 1, P, D) with
 * weights w (> 0) by enumerating all eight active subsets.  Each column is
 * divided by its largest absolute value (a zero column left as is); each
 * subset is solved by Householder QR of the weighted scaled system
 * diag(sqrt w) X_S c = diag(sqrt w) y; it is singular when a diagonal
 * element of R is <= EV_NNLS_RANK_TOL times the norm of its column.  The
 * smallest objective among feasible subsets wins; exact ties go to fewer
 * active coefficients, then to the lower mask.  The empty subset (objective
 * sum w y^2) is always feasible, so a result always exists.  OUT: *out.
 */
#define EV_NNLS_RANK_TOL 1e-10
ev_status ev_model_nnls(const double *X, const double *y, const double *w, size_t n, ev_nnls *out,
                        ev_err *err);

/* The full fit's solve. */
const ev_nnls *ev_fit_nnls(const ev_fit *f);
/* Calibration geometries = LOGO folds, sorted by (R, N, B). */
size_t ev_fit_fold_count(const ev_fit *f);
/* Fold i: its held-out geometry and its solve.  NULL when i is out of range. */
const ev_nnls *ev_fit_fold(const ev_fit *f, size_t i, int64_t *R, int64_t *N, int64_t *B);

/* A case (op, dtype, R, N, B) with its decisions, sorted by (R, N, B, op, dtype). */
typedef struct ev_fit_case {
    const char *op, *dtype;
    int64_t rows, cols, default_rows;
    ev_role role;
    ev_decision full;                /* decision of the full fit */
    int has_logo;                    /* calibration cases only */
    ev_decision logo;                /* decision of the fold that held this geometry out */
    double observed[EV_SCHED_COUNT]; /* median, NaN when not observed (an implied
                                         candidate: the default's) */
    unsigned scheds;                 /* the fit's declared schedules */
} ev_fit_case;
size_t ev_fit_case_count(const ev_fit *f);
const ev_fit_case *ev_fit_case_at(const ev_fit *f, size_t i);

/* Geometry-equal-weighted geomean of observed selected / observed default
 * over the calibration cases, with the full-fit (logo = 0) or the LOGO
 * decisions (logo = 1). */
double ev_fit_policy_geomean(const ev_fit *f, int logo);

/* Largest residual by absolute value over the fitted observations
 * (calibration, declared schedules): relative (pred - obs) / obs and
 * absolute pred - obs (us), signed as found.  OUT: *rel, *abs and the case
 * index and schedule of each. */
typedef struct ev_fit_maxres {
    double rel;
    size_t rel_case;
    ev_sched rel_sched;
    double abs;
    size_t abs_case;
    ev_sched abs_sched;
} ev_fit_maxres;
void ev_fit_max_residual(const ev_fit *f, int logo, ev_fit_maxres *out);

/* Held-out regret over holdout cases: observed selected / min observed of
 * the declared schedules.  Plain geometric mean and maximum over the cases;
 * NaN when there are none.  OUT: *n the number of holdout cases. */
void ev_fit_holdout_regret(const ev_fit *f, double *geomean, double *max, size_t *n);
/* Observed selected (full fit) / min observed of c->scheds (those observed). */
double ev_model_holdout_ratio(const ev_fit_case *c);

/* ---- choosing the observations (the store's loader: runner/model_store.h) ---- */

/* What the observation rule needs of one main-phase job of a case: one of
 * its schedules (index = ev_sched), in one round. */
typedef struct ev_obs_job {
    int64_t round;       /* 1.. (the plan's round of the job) */
    const char *outcome; /* its outcome name ("completed", "failed-exit", ...) */
    int has_binding;     /* its last attempt recorded a binding */
    int has_median;      /* and hot samples: median_us is theirs */
    double median_us;
    int64_t threads; /* with has_binding: the thread count (S) it bound */
} ev_obs_job;

/* One schedule of a case over its rounds: zero it, then ev_obs_add each
 * round's job (any order).  A round is usable when completed with a
 * binding and hot samples. */
#define EV_OBS_MAX_ROUNDS 64
typedef struct ev_obs_sched {
    int present;                   /* a job of the schedule is in the run */
    double med[EV_OBS_MAX_ROUNDS]; /* usable rounds' hot medians */
    size_t n_med;
    int64_t why_round;  /* the lowest unusable round, 0 none */
    char why[48];       /* its reason */
    int64_t threads[2]; /* the first two thread counts its usable rounds bound, 0 none */
} ev_obs_sched;
void ev_obs_add(ev_obs_sched *s, const ev_obs_job *j);

/* S, the thread count in the fit's features (ev_fit_input.sms), over a
 * run: zero it and let ev_obs_select fold in every case.  It is the
 * thread count that the usable rounds of the declared schedules bound
 * (excluded cases too); two different counts are a conflict. */
typedef struct ev_obs_sms {
    int64_t S, other; /* the first count, a different one seen after it; 0 none */
} ev_obs_sms;
/* OUT: *S, the count, or 1 when no usable round bound one (a fit with no
 * observation fails for that reason).  EV_EFIT when two rounds bound
 * different counts (err says which: a merged run of hosts with different
 * SM counts has no one S). */
ev_status ev_obs_sms_get(const ev_obs_sms *acc, int64_t *S, ev_err *err);

/* The one case the rule looks at (names are copied). */
typedef struct ev_obs_case {
    const char *op, *dtype;
    int64_t rows, cols, default_rows;
    int holdout;
} ev_obs_case;

/*
 * The one rule choosing the fit's observations (ev_view_observe calls it
 * case by case over the run's view that the store loader, the exporter
 * and the verifier each fill, so the model they fit is the same), over
 * the declared schedules scheds
 * (EV_SCHED_BIT mask, EV_SCHEDS_DEFAULT for a protocol without
 * "model_schedules"; sched[] indexed by ev_sched, the others ignored): a
 * case with R or N below 1 is excluded as "no-op case (R = r, N = n)";
 * otherwise each declared schedule that applies to the case
 * (ev_sched_rows_of > 0; short on longer rows is neither required nor
 * observed) and has no usable round adds its reason (that of its lowest
 * unusable round: "missing", its outcome, "no binding", "no hot samples";
 * a fixed-rows candidate that is not in the run because its rows equal B
 * is implied by the default), the reasons joined by "; ", and a case with
 * any reason is excluded.  A case without one adds an observation per
 * declared, applying schedule present, its median the ev_round_estimate of
 * its usable rounds' medians (a failed round is left out; with one round
 * it is that round's median).  Appends to obs[*n_obs] or to ex[*n_ex]
 * (room for EV_SCHED_COUNT and 1 entries), and folds the declared,
 * applying schedules' thread counts into *sms (ev_obs_sms).
 */
void ev_obs_select(const ev_obs_case *c, const ev_obs_sched sched[EV_SCHED_COUNT], unsigned scheds,
                   ev_obs *obs, size_t *n_obs, ev_excluded *ex, size_t *n_ex, ev_obs_sms *sms);

/*
 * Reads observations from CSV text with header
 * op,rows,cols,dtype,default_rows,schedule,median_us[,role].  Errors name
 * the line.  OUT: *obs (malloc'd), *n.
 */
ev_status ev_obs_from_csv(const char *p, size_t n, ev_obs **obs, size_t *n_obs, ev_err *err);

#endif
