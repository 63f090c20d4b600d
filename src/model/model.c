/*
 * model.c: the cost model (docs/model.md): features, the
 * decision rule, NNLS by enumerating the eight active subsets of
 * {a0, aP, aD} (each solved by Householder QR of the weighted, max-abs
 * scaled system), the full fit, leave-one-geometry-out folds, the policy
 * score, residuals and held-out regret.
 *
 * Determinism: every sum runs in a fixed order over observations sorted by
 * (R, N, B, op, dtype, schedule), so the result does not depend on the
 * input order; the build has no FP contraction and no fast-math, so the
 * same input gives the same bits at -O0, -O2 and under sanitizers.
 */
#include "model_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_cpu.h"

const char *const ev_coef_names[3] = {"a0", "aP", "aD"};

/* See model.h. */
int ev_scheds_valid(unsigned scheds)
{
    return (scheds & EV_SCHED_BIT(EV_SCHED_DEFAULT)) && !(scheds & ~EV_SCHEDS_ALL);
}

/* 1 when s is a fixed-rows candidate whose rows equal B: the default itself. */
static int sched_implied(ev_sched s, int64_t B)
{
    return s != EV_SCHED_DEFAULT && s < EV_MODEL_SCHEDS && ev_sched_rows(s, B) == B;
}

/* ceil(a / b) for a >= 0, b >= 1, without overflow. */
static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/*
 * Features of a binding: one = 1, P = ceil(R / b), D = ceil(P / S) * b * W
 * with W the smallest power of two >= N.  Integers are exact; D is formed
 * in int64 and converted once.  EV_EINVAL when R, N, b or S is below 1;
 * EV_ERANGE when W or D overflows int64.  OUT: *out.
 */
ev_status ev_model_features(int64_t R, int64_t N, int64_t b, int64_t S, ev_features *out)
{
    return ev_model_features_g(R, N, b, 1, S, out);
}

/* See model.h: the form's P and D with each row over G programs. */
ev_status ev_model_features_g(int64_t R, int64_t N, int64_t b, int64_t G, int64_t S, ev_features *out)
{
    if (R < 1 || N < 1 || b < 1 || S < 1 || G < 1)
        return EV_EINVAL;
    int64_t W = 1;
    while (W < N) {
        if (W > INT64_MAX / 2)
            return EV_ERANGE;
        W *= 2;
    }
    if (W % G != 0)
        return EV_EINVAL;
    int64_t P;
    if (__builtin_mul_overflow(ceil_div(R, b), G, &P))
        return EV_ERANGE;
    int64_t waves = ceil_div(P, S);
    int64_t D;
    if (__builtin_mul_overflow(waves, b, &D) || __builtin_mul_overflow(D, W / G, &D))
        return EV_ERANGE;
    out->one = 1.0;
    out->P = (double)P;
    out->D = (double)D;
    return EV_OK;
}

/* See model.h. */
ev_status ev_sched_features(ev_sched s, int64_t R, int64_t N, ev_dtype dt, int64_t B, int64_t S,
                            ev_features *out)
{
    int64_t b = ev_sched_rows_of(s, B, N, dt), G = ev_sched_split_of(s, N, dt);
    if (b < 1 || G < 1)
        return EV_EINVAL;
    return ev_model_features_g(R, N, b, G, S, out);
}

/* q = a0 + aP * P + aD * D, summed left to right. */
double ev_model_predict(const ev_coef *c, const ev_features *f)
{
    double q = c->a0 * f->one;
    q = q + c->aP * f->P;
    q = q + c->aD * f->D;
    return q;
}

/*
 * The decision rule (see model.h).  Every fixed-rows schedule is
 * predicted, short where it applies; only the declared candidates are
 * weighed against the default.  OUT: *out.
 */
ev_status ev_model_decide(const ev_coef *c, int64_t R, int64_t N, ev_dtype dt, int64_t B, int64_t S,
                          double threshold, unsigned scheds, ev_decision *out)
{
    if (!c || !out || !(threshold >= 0.0 && threshold < 1.0) || !ev_scheds_valid(scheds) ||
        ev_dtype_size(dt) == 0)
        return EV_EINVAL;
    ev_decision d;
    int64_t rows[EV_SCHED_COUNT];
    for (int s = 0; s < EV_SCHED_COUNT; s++) {
        ev_features f;
        rows[s] = ev_sched_rows_of((ev_sched)s, B, N, dt);
        d.predicted[s] = NAN;
        if (rows[s] < 1 && s >= EV_MODEL_SCHEDS)
            continue; /* short or split on rows it does not apply to */
        ev_status rc = ev_sched_features((ev_sched)s, R, N, dt, B, S, &f);
        if (rc)
            return rc;
        d.predicted[s] = ev_model_predict(c, &f);
    }
    double bar = (1.0 - threshold) * d.predicted[EV_SCHED_DEFAULT];
    d.selected = EV_SCHED_DEFAULT;
    for (int s = EV_SCHED_DEFAULT + 1; s < EV_SCHED_COUNT; s++) {
        if (!(scheds & EV_SCHED_BIT(s)) || rows[s] < 1 || (rows[s] == B && s != EV_SCHED_SPLIT))
            continue; /* not declared, not applying, or the default itself */
        if (!(d.predicted[s] < bar))
            continue;
        /* strictly lower wins; equal keeps the earlier */
        if (d.selected == EV_SCHED_DEFAULT || d.predicted[s] < d.predicted[d.selected])
            d.selected = (ev_sched)s;
    }
    d.rows_per_program = rows[d.selected];
    *out = d;
    return EV_OK;
}

/* ---- NNLS ----------------------------------------------------------------- */

/* Number of set bits of a 3-bit mask. */
static int popcount3(unsigned m)
{
    return (int)((m & 1u) + ((m >> 1) & 1u) + ((m >> 2) & 1u));
}

/*
 * Householder QR least squares of A c = b, A n x k column-major (k <= 3),
 * both overwritten.  Singular when a diagonal element of R is at most
 * EV_NNLS_RANK_TOL times the 2-norm of its original column (a zero column
 * is singular).  Returns 0 and writes c[0..k), or -1 when singular (c
 * untouched).
 */
static int householder_lsq(double *A, double *b, size_t n, int k, double *c)
{
    double colnorm[3];
    double diag[3];
    for (int j = 0; j < k; j++) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += A[(size_t)j * n + i] * A[(size_t)j * n + i];
        colnorm[j] = sqrt(s);
    }
    if (n < (size_t)k)
        return -1;
    for (int j = 0; j < k; j++) {
        double *a = A + (size_t)j * n;
        double s = 0.0;
        for (size_t i = (size_t)j; i < n; i++)
            s += a[i] * a[i];
        double alpha = sqrt(s);
        if (!(alpha > EV_NNLS_RANK_TOL * colnorm[j]) || alpha == 0.0)
            return -1;
        double x0 = a[j];
        double beta = x0 >= 0.0 ? -alpha : alpha; /* R_jj, opposite sign to x0 */
        double v0 = x0 - beta;                    /* |v0| = |x0| + alpha > 0 */
        double tau = (beta - x0) / beta;
        /* v = (1, a[j+1..n) / v0) stored in a[j+1..n) */
        for (size_t i = (size_t)j + 1; i < n; i++)
            a[i] = a[i] / v0;
        /* apply H = I - tau v v^T to the later columns and to b */
        for (int cc = j + 1; cc <= k; cc++) {
            double *t = cc < k ? A + (size_t)cc * n : b;
            double dot = t[j];
            for (size_t i = (size_t)j + 1; i < n; i++)
                dot += a[i] * t[i];
            double f = tau * dot;
            t[j] = t[j] - f;
            for (size_t i = (size_t)j + 1; i < n; i++)
                t[i] = t[i] - f * a[i];
        }
        diag[j] = beta;
    }
    /* back substitution: R c = Q^T b (first k entries) */
    double x[3];
    for (int j = k - 1; j >= 0; j--) {
        double s = b[j];
        for (int cc = j + 1; cc < k; cc++)
            s = s - A[(size_t)cc * n + (size_t)j] * x[cc];
        x[j] = s / diag[j];
    }
    for (int j = 0; j < k; j++)
        c[j] = x[j];
    return 0;
}

/* Sets coefficient j (0 a0, 1 aP, 2 aD) of *c. */
static void coef_set(ev_coef *c, int j, double v)
{
    if (j == 0)
        c->a0 = v;
    else if (j == 1)
        c->aP = v;
    else
        c->aD = v;
}

/*
 * Householder QR of M (n x 4, column-major: the three weighted scaled
 * feature columns and the weighted y) reduced to its 4 x 4 upper
 * triangle T (row-major), so that ||M z|| = ||T z|| for every z: each
 * subset's least squares is then solved on T's columns alone.  A column
 * that is already zero below the diagonal is not reflected.  M is
 * overwritten.
 */
static void householder_compress(double *M, size_t n, double T[4][4])
{
    memset(T, 0, 16 * sizeof(double));
    size_t steps = n < 4 ? n : 4;
    for (size_t j = 0; j < steps; j++) {
        double *a = M + j * n;
        double s = 0.0;
        for (size_t i = j; i < n; i++)
            s += a[i] * a[i];
        double alpha = sqrt(s);
        double x0 = a[j];
        if (alpha == 0.0) {
            T[j][j] = 0.0;
        } else {
            double beta = x0 >= 0.0 ? -alpha : alpha;
            double v0 = x0 - beta;
            double tau = (beta - x0) / beta;
            for (size_t i = j + 1; i < n; i++)
                a[i] = a[i] / v0;
            for (size_t cc = j + 1; cc < 4; cc++) {
                double *t = M + cc * n;
                double dot = t[j];
                for (size_t i = j + 1; i < n; i++)
                    dot += a[i] * t[i];
                double f = tau * dot;
                t[j] = t[j] - f;
                for (size_t i = j + 1; i < n; i++)
                    t[i] = t[i] - f * a[i];
            }
            T[j][j] = beta;
        }
        for (size_t cc = j + 1; cc < 4; cc++)
            T[j][cc] = M[cc * n + j];
    }
}

/* See model.h.  EV_EINVAL for a non-finite X or y, or w not finite and > 0;
 * EV_ENOMEM.  OUT: *out.
 *
 * How: M = diag(sqrt w) [X / scale, y] is reduced once by Householder QR to
 * a 4 x 4 triangle T (householder_compress); for each subset S the least
 * squares min ||T[:, S] c - T[:, 3]|| is solved by Householder QR of that
 * small system (householder_lsq), which has the same solution as the QR of
 * diag(sqrt w) X_S; column norms are kept by the orthogonal reduction, so
 * the rank test is the one of the full system.  The objective of every
 * subset is then summed explicitly over the rows, in row order.
 */
ev_status ev_model_nnls(const double *X, const double *y, const double *w, size_t n, ev_nnls *out,
                        ev_err *err)
{
    ev_status rc = EV_OK;
    double *M = NULL;
    ev_nnls r;
    memset(&r, 0, sizeof r);
    size_t bytes;
    if (ev_size_mul(n, 4 * sizeof(double), &bytes)) {
        rc = ev_err_set(err, EV_ENOMEM, "nnls: %zu rows is too many", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(y[i]) || !isfinite(w[i]) || !(w[i] > 0.0) || !isfinite(X[3 * i]) ||
            !isfinite(X[3 * i + 1]) || !isfinite(X[3 * i + 2])) {
            rc = ev_err_set(err, EV_EINVAL, "nnls: row %zu has a non-finite value or weight <= 0", i);
            goto out;
        }
    }
    M = malloc(bytes ? bytes : 1);
    if (!M) {
        rc = ev_err_set(err, EV_ENOMEM, "nnls: out of memory for %zu rows", n);
        goto out;
    }
    r.n_rows = n;
    for (int j = 0; j < 3; j++) {
        double m = 0.0;
        for (size_t i = 0; i < n; i++)
            if (fabs(X[3 * i + (size_t)j]) > m)
                m = fabs(X[3 * i + (size_t)j]);
        r.scale[j] = m > 0.0 ? m : 1.0; /* a zero column is left as is */
    }
    for (size_t i = 0; i < n; i++) {
        double sw = sqrt(w[i]);
        for (size_t j = 0; j < 3; j++)
            M[j * n + i] = sw * (X[3 * i + j] / r.scale[j]);
        M[3 * n + i] = sw * y[i];
    }
    double T[4][4];
    householder_compress(M, n, T);
    for (unsigned mask = 0; mask < EV_SUBSET_COUNT; mask++) {
        ev_subset_result *sr = &r.subset[mask];
        sr->mask = mask;
        int cols[3], k = 0;
        for (int j = 0; j < 3; j++)
            if (mask & (1u << j))
                cols[k++] = j;
        double cs[3] = {0.0, 0.0, 0.0}; /* scaled coefficients, column order */
        if (k > 0) {
            double A[3 * 4], b[4], sol[3];
            for (int q = 0; q < k; q++)
                for (int i = 0; i < 4; i++)
                    A[q * 4 + i] = T[i][cols[q]];
            for (int i = 0; i < 4; i++)
                b[i] = T[i][3];
            if (n < (size_t)k || householder_lsq(A, b, 4, k, sol)) {
                sr->status = EV_SUBSET_SINGULAR;
                sr->objective = NAN;
                continue;
            }
            for (int q = 0; q < k; q++)
                cs[cols[q]] = sol[q] + 0.0; /* no -0 */
        }
        sr->status = EV_SUBSET_FEASIBLE;
        for (int j = 0; j < 3; j++) {
            if (cs[j] < 0.0)
                sr->status = EV_SUBSET_NEGATIVE;
            coef_set(&sr->coef, j, cs[j] / r.scale[j]);
        }
        double obj = 0.0;
        for (size_t i = 0; i < n; i++) {
            double p = 0.0;
            for (size_t j = 0; j < 3; j++)
                if (mask & (1u << j))
                    p = p + (X[3 * i + j] / r.scale[j]) * cs[j];
            double e = p - y[i];
            obj += w[i] * (e * e);
        }
        sr->objective = obj;
    }
    /* the empty subset is always feasible, so best is always set */
    r.best = 0;
    for (unsigned mask = 1; mask < EV_SUBSET_COUNT; mask++) {
        const ev_subset_result *sr = &r.subset[mask], *b = &r.subset[r.best];
        if (sr->status != EV_SUBSET_FEASIBLE)
            continue;
        if (sr->objective < b->objective ||
            (sr->objective == b->objective && popcount3(mask) < popcount3(r.best)))
            r.best = mask;
    }
    r.coef = r.subset[r.best].coef;
    *out = r;
out:
    free(M);
    return rc;
}

/* ---- fitting ---------------------------------------------------------------- */

/* 1 when op is an op of the vocabulary. */
static int op_known(const char *op)
{
    ev_op w;
    return !ev_op_parse(op, &w);
}

/* 1 when dtype is a dtype of the vocabulary. */
static int dtype_known(const char *dt)
{
    ev_dtype w;
    return !ev_dtype_parse(dt, &w);
}

/* Length of s within cap, 0..cap (s need not be terminated within cap). */
static size_t bounded_len(const char *s, size_t cap)
{
    size_t i = 0;
    while (i < cap && s[i])
        i++;
    return i;
}

/* Writes "line L" or "observation op RxN dtype B=.. sched" into buf. */
static void obs_where(const ev_obs *o, char *buf, size_t cap)
{
    int lo = (int)bounded_len(o->op, sizeof o->op), ld = (int)bounded_len(o->dtype, sizeof o->dtype);
    if (o->line > 0)
        snprintf(buf, cap, "line %lld", (long long)o->line);
    else
        snprintf(buf, cap, "observation %.*s %lldx%lld %.*s B%lld %s", lo, o->op, (long long)o->rows,
                 (long long)o->cols, ld, o->dtype, (long long)o->default_rows, ev_sched_name(o->sched));
}

/* Orders by geometry (R, N, B), then op, dtype, schedule. */
static int obs_cmp(const void *pa, const void *pb)
{
    const ev_obs *a = pa, *b = pb;
    if (a->rows != b->rows)
        return a->rows < b->rows ? -1 : 1;
    if (a->cols != b->cols)
        return a->cols < b->cols ? -1 : 1;
    if (a->default_rows != b->default_rows)
        return a->default_rows < b->default_rows ? -1 : 1;
    int c = strncmp(a->op, b->op, sizeof a->op);
    if (c)
        return c < 0 ? -1 : 1;
    c = strncmp(a->dtype, b->dtype, sizeof a->dtype);
    if (c)
        return c < 0 ? -1 : 1;
    if (a->sched != b->sched)
        return a->sched < b->sched ? -1 : 1;
    /* equal keys (duplicates, refused below): keep line order stable */
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return 0;
}

/* 1 when a and b are the same geometry. */
static int same_geom(const ev_obs *a, const ev_obs *b)
{
    return a->rows == b->rows && a->cols == b->cols && a->default_rows == b->default_rows;
}

/* 1 when a and b are the same case (geometry, op, dtype). */
static int same_case(const ev_obs *a, const ev_obs *b)
{
    return same_geom(a, b) && !strncmp(a->op, b->op, sizeof a->op) &&
           !strncmp(a->dtype, b->dtype, sizeof a->dtype);
}

/* 1 when observation o carries fitting weight: a calibration observation
 * of a declared schedule. */
static int obs_fitted(const ev_obs *o, unsigned scheds)
{
    return o->role == EV_ROLE_CALIBRATION && (scheds & EV_SCHED_BIT(o->sched));
}

/* o's dtype into *dt.  -1 when it is not a known dtype. */
static int obs_dtype(const ev_obs *o, ev_dtype *dt)
{
    char name[sizeof o->dtype + 1];
    size_t l = bounded_len(o->dtype, sizeof o->dtype);
    memcpy(name, o->dtype, l);
    name[l] = '\0';
    return ev_dtype_parse(name, dt) ? -1 : 0;
}

/* Rows per program of o's schedule (ev_sched_rows_of; 0 for an unknown
 * dtype or a schedule that does not apply). */
static int64_t obs_rows(const ev_obs *o)
{
    ev_dtype dt;
    if (obs_dtype(o, &dt))
        return 0;
    return ev_sched_rows_of(o->sched, o->default_rows, o->cols, dt);
}

/* The features of o's binding under its schedule (ev_sched_features). */
static ev_status obs_features(const ev_obs *o, int64_t sms, ev_features *f)
{
    ev_dtype dt;
    if (obs_dtype(o, &dt))
        return EV_EINVAL;
    return ev_sched_features(o->sched, o->rows, o->cols, dt, o->default_rows, sms, f);
}

/* Validates one observation (not its relations) against the declared
 * schedules.  EV_EFORMAT with err. */
static ev_status obs_check(const ev_obs *o, int64_t sms, unsigned scheds, ev_err *err)
{
    char where[200];
    obs_where(o, where, sizeof where);
    if (bounded_len(o->op, sizeof o->op) == sizeof o->op || !op_known(o->op))
        return ev_err_set(err, EV_EFORMAT, "%s: unknown op", where);
    if (bounded_len(o->dtype, sizeof o->dtype) == sizeof o->dtype || !dtype_known(o->dtype))
        return ev_err_set(err, EV_EFORMAT, "%s: unknown dtype", where);
    if ((unsigned)o->sched >= EV_SCHED_COUNT)
        return ev_err_set(err, EV_EFORMAT, "%s: unknown schedule", where);
    if (o->sched >= EV_MODEL_SCHEDS && !(scheds & EV_SCHED_BIT(o->sched)))
        return ev_err_set(err, EV_EFORMAT, "%s: schedule %s is not one of the declared model_schedules",
                          where, ev_sched_name(o->sched));
    if (o->role != EV_ROLE_CALIBRATION && o->role != EV_ROLE_HOLDOUT)
        return ev_err_set(err, EV_EFORMAT, "%s: unknown role", where);
    if (o->rows < 1)
        return ev_err_set(err, EV_EFORMAT, "%s: rows (R) %lld is below 1", where, (long long)o->rows);
    if (o->cols < 1)
        return ev_err_set(err, EV_EFORMAT, "%s: cols (N) %lld is below 1", where, (long long)o->cols);
    if (o->default_rows < 1)
        return ev_err_set(err, EV_EFORMAT, "%s: default_rows (B) %lld is below 1", where,
                          (long long)o->default_rows);
    if (isnan(o->median_us))
        return ev_err_set(err, EV_EFORMAT, "%s: median_us is NaN", where);
    if (!(o->median_us > 0.0) || !isfinite(o->median_us))
        return ev_err_set(err, EV_EFORMAT, "%s: median_us %g is not positive and finite", where,
                          o->median_us);
    ev_features f;
    if (obs_rows(o) < 1)
        return ev_err_set(err, EV_EFORMAT, "%s: schedule %s does not apply to %lld columns of %.*s", where,
                          ev_sched_name(o->sched), (long long)o->cols,
                          (int)bounded_len(o->dtype, sizeof o->dtype), o->dtype);
    if (obs_features(o, sms, &f))
        return ev_err_set(err, EV_EFORMAT, "%s: features overflow (R, N or B too large)", where);
    return EV_OK;
}

/* Frees f and everything it owns; NULL-safe. */
void ev_fit_free(ev_fit *f)
{
    if (!f)
        return;
    free(f->obs);
    free(f->res);
    free(f->excluded);
    free(f->geoms);
    free(f->geom_weight);
    free(f->obs_geom);
    free(f->cases);
    free(f->folds);
    free(f);
}

/* Returns a zeroed array of n elements of size sz, or NULL (also for overflow). */
static void *calloc_n(size_t n, size_t sz)
{
    size_t t;
    if (ev_size_mul(n ? n : 1, sz, &t))
        return NULL;
    return calloc(n ? n : 1, sz);
}

/*
 * Solves the NNLS on the fitted observations, leaving out geometry `skip`
 * (SIZE_MAX: none), with equal total weight per training geometry (each
 * observation of geometry g weighs 1 / (G * n_g), so the weights sum to 1).
 * feat holds 3 features per observation; X, y, w are scratch of n_obs
 * rows.  OUT: *out.
 */
static ev_status solve_on(const ev_fit *f, const double *feat, size_t skip, double *X, double *y, double *w,
                          ev_nnls *out, ev_err *err)
{
    size_t G = f->n_cal_geoms - (skip != SIZE_MAX ? 1 : 0);
    size_t m = 0;
    for (size_t i = 0; i < f->n_obs; i++) {
        size_t g = f->obs_geom[i];
        if (!f->res[i].fitted || g == skip)
            continue;
        memcpy(X + 3 * m, feat + 3 * i, 3 * sizeof(double));
        y[m] = f->obs[i].median_us;
        w[m] = 1.0 / ((double)G * (double)f->geoms[g].n_fit);
        m++;
    }
    return ev_model_nnls(X, y, w, m, out, err);
}

/* Copies a string field of at most cap bytes (not necessarily terminated)
 * into dst[cap]. */
static void copy_field(char *dst, const char *src, size_t cap)
{
    size_t l = bounded_len(src, cap);
    if (l == cap)
        l = cap - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

/* Builds geometries and cases over the sorted observations and checks their
 * relations (duplicates, roles, missing schedules, two geometries).
 * EV_EFORMAT / EV_ENOMEM with err; on failure f is left for ev_fit_free. */
static ev_status build_cases(ev_fit *f, ev_err *err)
{
    char where[200];
    size_t n = f->n_obs;
    f->obs_geom = calloc_n(n, sizeof(size_t));
    f->geoms = calloc_n(n, sizeof(ev_geom));
    f->cases = calloc_n(n, sizeof(ev_case_int));
    f->geom_weight = calloc_n(n, sizeof(double));
    if (!f->obs_geom || !f->geoms || !f->cases || !f->geom_weight)
        return ev_err_set(err, EV_ENOMEM, "fit: out of memory");
    for (size_t i = 0; i < n; i++) {
        const ev_obs *o = &f->obs[i];
        if (i > 0 && same_case(o, o - 1) && o->sched == (o - 1)->sched) {
            obs_where(o, where, sizeof where);
            char first[200];
            obs_where(o - 1, first, sizeof first);
            return ev_err_set(err, EV_EFORMAT,
                              "%s: duplicate observation (%s has the same op, rows, "
                              "cols, dtype, default_rows and schedule)",
                              where, first);
        }
        if (i == 0 || !same_geom(o, o - 1)) {
            ev_geom *g = &f->geoms[f->n_geoms++];
            g->rows = o->rows;
            g->cols = o->cols;
            g->default_rows = o->default_rows;
            g->width = 1;
            while (g->width < o->cols)
                g->width *= 2;
        }
        size_t gi = f->n_geoms - 1;
        f->obs_geom[i] = gi;
        if (i == 0 || !same_case(o, o - 1)) {
            ev_case_int *c = &f->cases[f->n_cases++];
            c->geom = gi;
            c->pub.op = o->op;
            c->pub.dtype = o->dtype;
            c->pub.rows = o->rows;
            c->pub.cols = o->cols;
            c->pub.default_rows = o->default_rows;
            c->pub.role = o->role;
            c->pub.scheds = f->scheds;
            for (int s = 0; s < EV_SCHED_COUNT; s++) {
                c->obs[s] = SIZE_MAX;
                c->pub.observed[s] = NAN;
            }
        }
        ev_case_int *c = &f->cases[f->n_cases - 1];
        if (o->role != c->pub.role) {
            obs_where(o, where, sizeof where);
            return ev_err_set(err, EV_EFORMAT, "%s: role %s differs from the role of the case's other rows",
                              where, ev_role_name(o->role));
        }
        c->obs[o->sched] = i;
        c->pub.observed[o->sched] = o->median_us;
        f->res[i].fitted = obs_fitted(o, f->scheds);
        if (f->res[i].fitted) {
            f->geoms[gi].n_fit++;
            f->geoms[gi].calibration = 1;
        }
    }
    for (size_t k = 0; k < f->n_cases; k++) {
        ev_case_int *c = &f->cases[k];
        ev_dtype dt = EV_DTYPE_FP32;
        ev_dtype_parse(c->pub.dtype, &dt); /* known: obs_check */
        for (int q = 0; q < EV_SCHED_COUNT; q++) {
            ev_sched need = (ev_sched)q;
            if (!(f->scheds & EV_SCHED_BIT(q)) || c->obs[q] != SIZE_MAX ||
                ev_sched_rows_of(need, c->pub.default_rows, c->pub.cols, dt) < 1)
                continue; /* not declared, observed, or not applying (short on long rows) */
            if (sched_implied(need, c->pub.default_rows) && c->obs[EV_SCHED_DEFAULT] != SIZE_MAX) {
                /* the candidate is the default itself (rowsK with B = K): implied, not fitted */
                c->pub.observed[q] = c->pub.observed[EV_SCHED_DEFAULT];
                continue;
            }
            size_t any = SIZE_MAX;
            for (int s = 0; s < EV_SCHED_COUNT; s++)
                if (c->obs[s] != SIZE_MAX && any == SIZE_MAX)
                    any = c->obs[s];
            obs_where(&f->obs[any], where, sizeof where);
            return ev_err_set(err, EV_EFORMAT, "%s: case %s %lldx%lld %s B%lld has no %s row", where,
                              c->pub.op, (long long)c->pub.rows, (long long)c->pub.cols, c->pub.dtype,
                              (long long)c->pub.default_rows, ev_sched_name(need));
        }
    }
    for (size_t g = 0; g < f->n_geoms; g++)
        if (f->geoms[g].calibration)
            f->geoms[g].fold = f->n_cal_geoms++;
    if (f->n_cal_geoms < 2)
        return ev_err_set(err, EV_EFORMAT,
                          "fewer than two calibration geometries (%zu): "
                          "leave-one-geometry-out needs at least two",
                          f->n_cal_geoms);
    return EV_OK;
}

/* Geometry-equal-weighted geomean of observed selected / observed default
 * over calibration cases, with full (logo = 0) or LOGO decisions. */
static double policy_geomean(const ev_fit *f, int logo)
{
    double total = 0.0;
    size_t k = 0;
    while (k < f->n_cases) {
        size_t g = f->cases[k].geom;
        double sum = 0.0;
        size_t cnt = 0;
        for (; k < f->n_cases && f->cases[k].geom == g; k++) {
            const ev_case_int *c = &f->cases[k];
            if (c->pub.role != EV_ROLE_CALIBRATION)
                continue;
            ev_sched s = logo ? c->pub.logo.selected : c->pub.full.selected;
            sum += log(c->pub.observed[s] / c->pub.observed[EV_SCHED_DEFAULT]);
            cnt++;
        }
        if (cnt)
            total += sum / (double)cnt;
    }
    return exp(total / (double)f->n_cal_geoms);
}

/* Largest residuals (by absolute value; the first found on ties) over the
 * fitted observations. */
static void max_residual(const ev_fit *f, int logo, ev_fit_maxres *out)
{
    ev_fit_maxres m = {0.0, 0, EV_SCHED_DEFAULT, 0.0, 0, EV_SCHED_DEFAULT};
    for (size_t k = 0; k < f->n_cases; k++) {
        const ev_case_int *c = &f->cases[k];
        for (int s = 0; s < EV_SCHED_COUNT; s++) {
            size_t i = c->obs[s];
            if (i == SIZE_MAX || !f->res[i].fitted)
                continue;
            double pred = logo ? f->res[i].pred_logo : f->res[i].pred_full;
            double y = f->obs[i].median_us;
            double a = pred - y, r = (pred - y) / y;
            if (fabs(r) > fabs(m.rel)) {
                m.rel = r;
                m.rel_case = k;
                m.rel_sched = (ev_sched)s;
            }
            if (fabs(a) > fabs(m.abs)) {
                m.abs = a;
                m.abs_case = k;
                m.abs_sched = (ev_sched)s;
            }
        }
    }
    *out = m;
}

/* Validates, sorts, fits (full and LOGO) and scores.  See model.h. */
ev_status ev_model_fit(const ev_fit_input *in, ev_fit **out, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_fit *f = NULL;
    double *feat = NULL, *X = NULL, *y = NULL, *w = NULL;
    if (!in || !out || (!in->obs && in->n_obs)) {
        rc = ev_err_set(err, EV_EINVAL, "fit: missing input");
        goto out;
    }
    if (in->sms < 1) {
        rc = ev_err_set(err, EV_EFORMAT, "fit: S (SM count or threads) %lld is below 1", (long long)in->sms);
        goto out;
    }
    if (!(in->threshold >= 0.0 && in->threshold < 1.0)) {
        rc = ev_err_set(err, EV_EFORMAT, "fit: threshold %g is outside [0, 1)", in->threshold);
        goto out;
    }
    unsigned scheds = in->scheds ? in->scheds : EV_SCHEDS_DEFAULT;
    if (!ev_scheds_valid(scheds)) {
        rc = ev_err_set(err, EV_EFORMAT, "fit: schedule set 0x%x does not hold default", scheds);
        goto out;
    }
    for (size_t i = 0; i < in->n_obs; i++)
        if ((rc = obs_check(&in->obs[i], in->sms, scheds, err)))
            goto out;
    f = calloc(1, sizeof *f);
    if (!f) {
        rc = ev_err_set(err, EV_ENOMEM, "fit: out of memory");
        goto out;
    }
    f->sms = in->sms;
    f->threshold = in->threshold;
    f->scheds = scheds;
    f->n_obs = in->n_obs;
    f->obs = calloc_n(in->n_obs, sizeof(ev_obs));
    f->res = calloc_n(in->n_obs, sizeof(ev_obs_res));
    f->excluded = calloc_n(in->n_excluded, sizeof(ev_excluded));
    if (!f->obs || !f->res || !f->excluded) {
        rc = ev_err_set(err, EV_ENOMEM, "fit: out of memory");
        goto out;
    }
    for (size_t i = 0; i < in->n_obs; i++) {
        f->obs[i] = in->obs[i];
        copy_field(f->obs[i].op, in->obs[i].op, sizeof f->obs[i].op);
        copy_field(f->obs[i].dtype, in->obs[i].dtype, sizeof f->obs[i].dtype);
    }
    for (size_t i = 0; i < in->n_excluded; i++) {
        f->excluded[i] = in->excluded[i];
        copy_field(f->excluded[i].op, in->excluded[i].op, sizeof f->excluded[i].op);
        copy_field(f->excluded[i].dtype, in->excluded[i].dtype, sizeof f->excluded[i].dtype);
        copy_field(f->excluded[i].reason, in->excluded[i].reason, sizeof f->excluded[i].reason);
    }
    f->n_excluded = in->n_excluded;
    if (in->n_obs)
        qsort(f->obs, f->n_obs, sizeof *f->obs, obs_cmp);
    if ((rc = build_cases(f, err)))
        goto out;

    feat = calloc_n(f->n_obs, 3 * sizeof(double));
    X = calloc_n(f->n_obs, 3 * sizeof(double));
    y = calloc_n(f->n_obs, sizeof(double));
    w = calloc_n(f->n_obs, sizeof(double));
    f->folds = calloc_n(f->n_cal_geoms, sizeof(ev_fold));
    if (!feat || !X || !y || !w || !f->folds) {
        rc = ev_err_set(err, EV_ENOMEM, "fit: out of memory");
        goto out;
    }
    for (size_t i = 0; i < f->n_obs; i++) {
        const ev_obs *o = &f->obs[i];
        ev_features ft;
        rc = obs_features(o, f->sms, &ft);
        if (rc) { /* checked in obs_check */
            rc = ev_err_set(err, EV_EFORMAT, "fit: features overflow");
            goto out;
        }
        feat[3 * i] = ft.one;
        feat[3 * i + 1] = ft.P;
        feat[3 * i + 2] = ft.D;
    }
    for (size_t g = 0; g < f->n_geoms; g++)
        f->geom_weight[g] =
            f->geoms[g].calibration ? 1.0 / ((double)f->n_cal_geoms * (double)f->geoms[g].n_fit) : 0.0;
    if ((rc = solve_on(f, feat, SIZE_MAX, X, y, w, &f->full, err)))
        goto out;
    for (size_t g = 0; g < f->n_geoms; g++) {
        if (!f->geoms[g].calibration)
            continue;
        ev_fold *fd = &f->folds[f->geoms[g].fold];
        fd->geom = g;
        if ((rc = solve_on(f, feat, g, X, y, w, &fd->nnls, err)))
            goto out;
    }
    for (size_t i = 0; i < f->n_obs; i++) {
        ev_features ft = {feat[3 * i], feat[3 * i + 1], feat[3 * i + 2]};
        f->res[i].pred_full = ev_model_predict(&f->full.coef, &ft);
        const ev_geom *g = &f->geoms[f->obs_geom[i]];
        f->res[i].pred_logo = (g->calibration && f->obs[i].role == EV_ROLE_CALIBRATION)
                                  ? ev_model_predict(&f->folds[g->fold].nnls.coef, &ft)
                                  : NAN;
    }
    for (size_t k = 0; k < f->n_cases; k++) {
        ev_case_int *c = &f->cases[k];
        const ev_geom *g = &f->geoms[c->geom];
        ev_dtype dt = EV_DTYPE_FP32;
        ev_dtype_parse(c->pub.dtype, &dt); /* known: obs_check */
        rc = ev_model_decide(&f->full.coef, c->pub.rows, c->pub.cols, dt, c->pub.default_rows, f->sms,
                             f->threshold, f->scheds, &c->pub.full);
        if (!rc && c->pub.role == EV_ROLE_CALIBRATION) {
            c->pub.has_logo = 1;
            rc = ev_model_decide(&f->folds[g->fold].nnls.coef, c->pub.rows, c->pub.cols, dt,
                                 c->pub.default_rows, f->sms, f->threshold, f->scheds, &c->pub.logo);
        }
        if (rc) {
            rc = ev_err_set(err, rc, "fit: decision failed for %s %lldx%lld", c->pub.op,
                            (long long)c->pub.rows, (long long)c->pub.cols);
            goto out;
        }
    }
    f->policy_geomean = policy_geomean(f, 0);
    f->policy_geomean_logo = policy_geomean(f, 1);
    max_residual(f, 0, &f->maxres_full);
    max_residual(f, 1, &f->maxres_logo);
    {
        double lsum = 0.0, mx = NAN;
        size_t cnt = 0;
        for (size_t k = 0; k < f->n_cases; k++) {
            const ev_case_int *c = &f->cases[k];
            if (c->pub.role != EV_ROLE_HOLDOUT)
                continue;
            double r = ev_model_holdout_ratio(&c->pub);
            lsum += log(r);
            if (cnt == 0 || r > mx)
                mx = r;
            cnt++;
        }
        f->n_holdout = cnt;
        f->regret_geomean = cnt ? exp(lsum / (double)cnt) : NAN;
        f->regret_max = cnt ? mx : NAN;
    }
    *out = f;
    f = NULL;
out:
    ev_fit_free(f);
    free(feat);
    free(X);
    free(y);
    free(w);
    return rc;
}

/* Observed selected / best observed of the declared schedules (full fit;
 * a schedule not observed on the case, short on long rows, is left out). */
double ev_model_holdout_ratio(const ev_fit_case *c)
{
    unsigned scheds = c->scheds ? c->scheds : EV_SCHEDS_DEFAULT;
    double best = c->observed[EV_SCHED_DEFAULT];
    for (int s = EV_SCHED_DEFAULT + 1; s < EV_SCHED_COUNT; s++)
        if ((scheds & EV_SCHED_BIT(s)) && c->observed[s] < best)
            best = c->observed[s];
    return c->observed[c->full.selected] / best;
}

/* ---- accessors -------------------------------------------------------------- */

const ev_coef *ev_fit_coef(const ev_fit *f)
{
    return &f->full.coef;
}
const ev_nnls *ev_fit_nnls(const ev_fit *f)
{
    return &f->full;
}
size_t ev_fit_fold_count(const ev_fit *f)
{
    return f->n_cal_geoms;
}

/* Fold i and its held-out geometry (each OUT may be NULL); NULL past the end. */
const ev_nnls *ev_fit_fold(const ev_fit *f, size_t i, int64_t *R, int64_t *N, int64_t *B)
{
    if (i >= f->n_cal_geoms)
        return NULL;
    const ev_geom *g = &f->geoms[f->folds[i].geom];
    if (R)
        *R = g->rows;
    if (N)
        *N = g->cols;
    if (B)
        *B = g->default_rows;
    return &f->folds[i].nnls;
}

size_t ev_fit_case_count(const ev_fit *f)
{
    return f->n_cases;
}

/* Case i, or NULL past the end. */
const ev_fit_case *ev_fit_case_at(const ev_fit *f, size_t i)
{
    return i < f->n_cases ? &f->cases[i].pub : NULL;
}

double ev_fit_policy_geomean(const ev_fit *f, int logo)
{
    return logo ? f->policy_geomean_logo : f->policy_geomean;
}

void ev_fit_max_residual(const ev_fit *f, int logo, ev_fit_maxres *out)
{
    *out = logo ? f->maxres_logo : f->maxres_full;
}

void ev_fit_holdout_regret(const ev_fit *f, double *geomean, double *max, size_t *n)
{
    if (geomean)
        *geomean = f->regret_geomean;
    if (max)
        *max = f->regret_max;
    if (n)
        *n = f->n_holdout;
}
