/*
 * check_model.c: the cost model (src/model/) and `evident fit`.
 *
 * - The seed table (tests/fixtures/seed16.csv, the 48 medians of
 *   seeds/000_*.txt, S = 24) reproduces the checkpoint's coefficients,
 *   decisions, policy score and largest LOGO residuals.
 * - Each subset solve (Householder QR) agrees with a long-double
 *   normal-equations reference; on seeded random tables the answer meets
 *   the KKT conditions and no feasible subset has a smaller objective,
 *   including tables whose unconstrained optimum is negative.
 * - The decision rule's strict threshold and tie rules.
 * - Every bad-CSV refusal names the line; the CLI exits 0/1/2 and writes
 *   nothing on failure; model.json is the same bytes whatever the row order
 *   and its doubles read back to the same bits.
 */
#include <check.h>

#include "progress.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.h"
#include "model/model.h"
#include "runner/model_store.h"
#include "reduce_cpu.h"
#include "store/store.h"

/* ---- helpers ---------------------------------------------------------------- */

static const char *fixture_path(void)
{
    const char *p = getenv("EV_FIXTURES");
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/seed16.csv", p ? p : "tests/fixtures");
    return buf;
}

/* Reads the seed fixture into observations (the test fails otherwise). */
static ev_obs *load_seed(size_t *n)
{
    ev_buf b = EV_BUF_INIT;
    ev_err err;
    ev_obs *obs = NULL;
    ck_assert_msg(ev_read_file(fixture_path(), &b, &err) == EV_OK, "%s", err.msg);
    ck_assert_msg(ev_obs_from_csv(b.data, b.len, &obs, n, &err) == EV_OK, "%s", err.msg);
    ev_buf_free(&b);
    return obs;
}

/* Fits obs with S = 24 and threshold 0.05. */
static ev_fit *fit_obs(const ev_obs *obs, size_t n)
{
    ev_fit_input in = {obs, n, NULL, 0, 24, 0.05, EV_SCHEDS_DEFAULT};
    ev_fit *f = NULL;
    ev_err err;
    ck_assert_msg(ev_model_fit(&in, &f, &err) == EV_OK, "%s", err.msg);
    return f;
}

/* xorshift64*: the seeded generator of the random tables. */
static uint64_t rng_state;
static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}
static double rng_unit(void) /* [0, 1) */
{
    return (double)(rng_next() >> 11) / 9007199254740992.0;
}

/* ---- the seed table --------------------------------------------------------- */

/*
 * The tolerance on a0 and aD: the table's medians are rounded to 4
 * decimals, so each differs from the checkpoint's unrounded median by at
 * most 5e-5 us.  On the active set {a0, aD} the solution is linear in y,
 * c = M y with M = (X'WX)^-1 X'W, so the rounding moves c_j by at most
 * 5e-5 * sum_i |M_ji|.  The bound is computed here in long double from the
 * same design matrix (features and weights are exact).
 */
static void rounding_bounds(const ev_fit *f, size_t n_obs, const ev_obs *obs, long double bound[2])
{
    (void)f;
    long double g00 = 0, g01 = 0, g11 = 0;
    long double *x0 = calloc(n_obs, sizeof *x0), *x2 = calloc(n_obs, sizeof *x2),
                *w = calloc(n_obs, sizeof *w);
    /* 8 geometries of 6 observations each: w = 1 / 48 for every one */
    for (size_t i = 0; i < n_obs; i++) {
        ev_features ft;
        ck_assert(ev_model_features(obs[i].rows, obs[i].cols,
                                    ev_sched_rows(obs[i].sched, obs[i].default_rows), 24, &ft) == EV_OK);
        x0[i] = 1;
        x2[i] = ft.D;
        w[i] = 1.0L / 48;
        g00 += w[i];
        g01 += w[i] * x2[i];
        g11 += w[i] * x2[i] * x2[i];
    }
    long double det = g00 * g11 - g01 * g01;
    bound[0] = bound[1] = 0;
    for (size_t i = 0; i < n_obs; i++) {
        long double m0 = (g11 * w[i] * x0[i] - g01 * w[i] * x2[i]) / det;
        long double m1 = (-g01 * w[i] * x0[i] + g00 * w[i] * x2[i]) / det;
        bound[0] += fabsl(m0) * 5e-5L;
        bound[1] += fabsl(m1) * 5e-5L;
    }
    free(x0);
    free(x2);
    free(w);
}

START_TEST(test_seed_table_reproduces_the_checkpoint_coefficients)
{
    size_t n;
    ev_obs *obs = load_seed(&n);
    ck_assert_uint_eq(n, 48);
    ev_fit *f = fit_obs(obs, n);
    const ev_nnls *r = ev_fit_nnls(f);
    long double bound[2];
    rounding_bounds(f, n, obs, bound);
    /* the checkpoint's own unrounded coefficients */
    const double a0 = 0.9028899747245084, aD = 0.00011327031090119965;
    ck_assert_uint_eq(r->best, EV_MASK_A0 | EV_MASK_AD);
    ck_assert(r->coef.aP == 0.0);
    ck_assert_msg(fabsl((long double)r->coef.a0 - a0) <= bound[0], "a0 %.17g off by more than %Lg",
                  r->coef.a0, bound[0]);
    ck_assert_msg(fabsl((long double)r->coef.aD - aD) <= bound[1], "aD %.17g off by more than %Lg",
                  r->coef.aD, bound[1]);
    /* the bound is tight enough to mean something: under 1e-4 on a0 and
     * under 1e-8 on aD (0.01% of either coefficient at most) */
    ck_assert(bound[0] < 1e-4L && bound[1] < 1e-8L);
    /* and the printed figures: a0 = 0.90290, aD = 1.1327e-4 */
    ck_assert(fabs(r->coef.a0 - 0.90290) <= 5e-6);
    ck_assert(fabs(r->coef.aD - 1.1327e-4) <= 5e-9);
    /* the unconstrained optimum and {aP, aD} put aP below zero */
    ck_assert_int_eq(r->subset[7].status, EV_SUBSET_NEGATIVE);
    ck_assert_int_eq(r->subset[6].status, EV_SUBSET_NEGATIVE);
    ck_assert(r->subset[7].coef.aP < 0);
    ck_assert_int_eq(r->subset[0].status, EV_SUBSET_FEASIBLE);
    ck_assert_uint_eq(r->n_rows, 48);
    /* every fold chose {a0, aD} too and is trained on 7 geometries */
    ck_assert_uint_eq(ev_fit_fold_count(f), 8);
    for (size_t i = 0; i < 8; i++) {
        const ev_nnls *fd = ev_fit_fold(f, i, NULL, NULL, NULL);
        ck_assert_uint_eq(fd->n_rows, 42);
        ck_assert(fd->coef.aP == 0.0);
    }
    ev_fit_free(f);
    free(obs);
}
END_TEST

START_TEST(test_seed_table_selects_rows1_for_14_cases_and_keeps_both_1024x512_defaults)
{
    size_t n;
    ev_obs *obs = load_seed(&n);
    ev_fit *f = fit_obs(obs, n);
    ck_assert_uint_eq(ev_fit_case_count(f), 16);
    int rows1 = 0, rows1_logo = 0;
    for (size_t i = 0; i < 16; i++) {
        const ev_fit_case *c = ev_fit_case_at(f, i);
        ck_assert(c->has_logo);
        if (c->rows == 1024 && c->cols == 512) {
            ck_assert_int_eq(c->full.selected, EV_SCHED_DEFAULT);
            ck_assert_int_eq(c->logo.selected, EV_SCHED_DEFAULT);
        } else {
            rows1 += c->full.selected == EV_SCHED_ROWS1;
            rows1_logo += c->logo.selected == EV_SCHED_ROWS1;
        }
    }
    ck_assert_int_eq(rows1, 14);
    ck_assert_int_eq(rows1_logo, 14);
    ev_fit_free(f);
    free(obs);
}
END_TEST

/*
 * The checkpoint's geomean 0.56988747 came from unrounded medians; the
 * table's 4-decimal rounding moves each ratio by at most about 1e-4
 * relative, so only the printed 5 digits (0.56989, +-5e-6) are asserted.
 */
START_TEST(test_seed_table_policy_geomean_is_0_56989_in_full_fit_and_logo)
{
    size_t n;
    ev_obs *obs = load_seed(&n);
    ev_fit *f = fit_obs(obs, n);
    ck_assert_msg(fabs(ev_fit_policy_geomean(f, 0) - 0.56989) <= 5e-6, "%.10f", ev_fit_policy_geomean(f, 0));
    ck_assert_msg(fabs(ev_fit_policy_geomean(f, 1) - 0.56989) <= 5e-6, "%.10f", ev_fit_policy_geomean(f, 1));
    /* no selected regressions: every ratio <= 1 means the geomean is < 1 */
    ev_fit_free(f);
    free(obs);
}
END_TEST

/* The checkpoint: max LOGO relative residual +82.06% (BF16 MAX 128x2048
 * rows1), max absolute 3.898 us; asserted to the printed digits. */
START_TEST(test_seed_table_largest_logo_residuals_match_the_checkpoint)
{
    size_t n;
    ev_obs *obs = load_seed(&n);
    ev_fit *f = fit_obs(obs, n);
    ev_fit_maxres m;
    ev_fit_max_residual(f, 1, &m);
    ck_assert_msg(fabs(100.0 * m.rel - 82.06) <= 0.005, "%.4f%%", 100.0 * m.rel);
    const ev_fit_case *c = ev_fit_case_at(f, m.rel_case);
    ck_assert_str_eq(c->op, "reduce_max");
    ck_assert_str_eq(c->dtype, "bf16");
    ck_assert_int_eq(c->rows, 128);
    ck_assert_int_eq(c->cols, 2048);
    ck_assert_int_eq(m.rel_sched, EV_SCHED_ROWS1);
    ck_assert_msg(fabs(fabs(m.abs) - 3.898) <= 0.0005, "%.6f", m.abs);
    ev_fit_free(f);
    free(obs);
}
END_TEST

/* ---- the solve against a long-double reference ------------------------------- */

/*
 * Reference: the same weighted, scaled subset system solved through its
 * normal equations in long double by Gaussian elimination with partial
 * pivoting.  Returns 0 and c[0..k), or -1 when the pivot vanishes.
 */
static int ref_solve(const double *X, const double *y, const double *w, size_t n, const double *scale,
                     unsigned mask, long double *c)
{
    int cols[3], k = 0;
    for (int j = 0; j < 3; j++)
        if (mask & (1u << j))
            cols[k++] = j;
    long double G[3][4] = {{0}};
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < k; a++) {
            long double xa = (long double)X[3 * i + cols[a]] / scale[cols[a]];
            for (int b = 0; b < k; b++)
                G[a][b] += w[i] * xa * ((long double)X[3 * i + cols[b]] / scale[cols[b]]);
            G[a][k] += w[i] * xa * y[i];
        }
    for (int p = 0; p < k; p++) {
        int piv = p;
        for (int r = p + 1; r < k; r++)
            if (fabsl(G[r][p]) > fabsl(G[piv][p]))
                piv = r;
        if (G[piv][p] == 0)
            return -1;
        for (int q = 0; q <= k; q++) {
            long double t = G[p][q];
            G[p][q] = G[piv][q];
            G[piv][q] = t;
        }
        for (int r = p + 1; r < k; r++) {
            long double m = G[r][p] / G[p][p];
            for (int q = p; q <= k; q++)
                G[r][q] -= m * G[p][q];
        }
    }
    for (int p = k - 1; p >= 0; p--) {
        long double s = G[p][k];
        for (int q = p + 1; q < k; q++)
            s -= G[p][q] * c[q];
        c[p] = s / G[p][p];
    }
    /* back to unscaled coefficients */
    for (int a = 0; a < k; a++)
        c[a] /= scale[cols[a]];
    return 0;
}

/* Coefficient j of c. */
static double coef_at(const ev_coef *c, int j)
{
    return j == 0 ? c->a0 : j == 1 ? c->aP : c->aD;
}

/* A random table: features of real bindings (R 1..4096, N 1..8192,
 * b in {1,2,4,8}, S in {24, 132}); y from random coefficients of either
 * sign (so some unconstrained optima are negative) plus noise, kept > 0. */
static void random_table(size_t n, double *X, double *y, double *w, int negative)
{
    int64_t S = (rng_next() & 1) ? 24 : 132;
    double c0 = 0.5 + rng_unit(), cP = (rng_unit() - 0.5) * 0.01, cD = rng_unit() * 2e-4;
    if (negative)
        cP = -0.002 - 0.01 * rng_unit(); /* the unconstrained aP is negative */
    for (size_t i = 0; i < n; i++) {
        ev_features ft;
        int64_t R = 1 + (int64_t)(rng_next() % 4096), N = 1 + (int64_t)(rng_next() % 8192);
        int64_t b = (int64_t)1 << (rng_next() % 4);
        ck_assert(ev_model_features(R, N, b, S, &ft) == EV_OK);
        X[3 * i] = 1.0;
        X[3 * i + 1] = ft.P;
        X[3 * i + 2] = ft.D;
        double q = c0 + cP * ft.P + cD * ft.D;
        y[i] = fabs(q) * (1.0 + 0.2 * (rng_unit() - 0.5)) + 0.01;
        w[i] = 0.1 + rng_unit();
    }
}

/*
 * Tolerance: |c - c_ref| <= 1e-9 * max(|c_ref_j| * scale_j) / scale_j.
 * Householder QR's error is about cond(A) * 2.2e-16; the random designs
 * here have cond(A) below about 1e5 after scaling, and the long-double
 * normal equations add cond^2 * 1.1e-19 ~ 1e-9 at worst; 1e-9 of the
 * largest scaled coefficient covers both with margin.
 */
START_TEST(test_each_subset_solve_matches_a_long_double_reference)
{
    rng_state = 0x9e3779b97f4a7c15ull;
    int compared = 0;
    for (int t = 0; t < 200; t++) {
        size_t n = 4 + rng_next() % 60;
        double X[3 * 64], y[64], w[64];
        random_table(n, X, y, w, t % 3 == 0);
        ev_nnls r;
        ev_err err;
        ck_assert_msg(ev_model_nnls(X, y, w, n, &r, &err) == EV_OK, "%s", err.msg);
        for (unsigned m = 1; m < 8; m++) {
            long double c[3];
            if (r.subset[m].status == EV_SUBSET_SINGULAR)
                continue;
            ck_assert_int_eq(ref_solve(X, y, w, n, r.scale, m, c), 0);
            long double big = 0;
            int k = 0;
            for (int j = 0; j < 3; j++)
                if (m & (1u << j)) {
                    long double s = fabsl(c[k++]) * r.scale[j];
                    if (s > big)
                        big = s;
                }
            k = 0;
            for (int j = 0; j < 3; j++) {
                if (!(m & (1u << j))) {
                    ck_assert(coef_at(&r.subset[m].coef, j) == 0.0);
                    continue;
                }
                long double d = fabsl((long double)coef_at(&r.subset[m].coef, j) - c[k++]) * r.scale[j];
                ck_assert_msg(d <= 1e-9L * big, "table %d mask %u coef %d: off by %Lg of %Lg", t, m, j, d,
                              big);
            }
            compared++;
        }
    }
    ck_assert_int_ge(compared, 1000);
}
END_TEST

/*
 * KKT at the chosen answer c: with g = X'W(Xc - y) (half the gradient),
 * g_j = 0 where c_j > 0 and g_j >= 0 where c_j = 0, each within
 * 1e-9 * sum_i w_i |x_ij| (|pred_i| + |y_i|), the size of the terms whose
 * cancellation forms g_j.  No feasible subset has a smaller objective.
 */
START_TEST(test_kkt_holds_at_the_answer_on_random_tables)
{
    rng_state = 0xd1b54a32d192ed03ull;
    int negative_unconstrained = 0, boundary = 0;
    for (int t = 0; t < 300; t++) {
        size_t n = 3 + rng_next() % 60;
        double X[3 * 64], y[64], w[64];
        random_table(n, X, y, w, t % 2 == 0);
        ev_nnls r;
        ev_err err;
        ck_assert_msg(ev_model_nnls(X, y, w, n, &r, &err) == EV_OK, "%s", err.msg);
        if (r.subset[7].status == EV_SUBSET_NEGATIVE)
            negative_unconstrained++;
        if (r.best != 7)
            boundary++;
        double c[3] = {r.coef.a0, r.coef.aP, r.coef.aD};
        for (int j = 0; j < 3; j++) {
            ck_assert(c[j] >= 0.0);
            long double g = 0, mag = 0;
            for (size_t i = 0; i < n; i++) {
                long double pred = (long double)c[0] * X[3 * i] + (long double)c[1] * X[3 * i + 1] +
                                   (long double)c[2] * X[3 * i + 2];
                g += w[i] * X[3 * i + j] * (pred - y[i]);
                mag += w[i] * fabsl(X[3 * i + j]) * (fabsl(pred) + fabsl(y[i]));
            }
            long double tol = 1e-9L * mag;
            if (c[j] > 0.0)
                ck_assert_msg(fabsl(g) <= tol, "table %d coef %d active: gradient %Lg > %Lg", t, j, g, tol);
            else
                ck_assert_msg(g >= -tol, "table %d coef %d at zero: gradient %Lg < 0", t, j, g);
        }
        for (unsigned m = 0; m < 8; m++)
            if (r.subset[m].status == EV_SUBSET_FEASIBLE)
                ck_assert(r.subset[m].objective >= r.subset[r.best].objective);
    }
    ck_assert_int_ge(negative_unconstrained, 100);
    ck_assert_int_ge(boundary, 100);
}
END_TEST

START_TEST(test_a_zero_column_is_left_unscaled_and_its_subsets_are_singular)
{
    double X[3 * 4] = {1, 0, 2, 1, 0, 4, 1, 0, 6, 1, 0, 9};
    double y[4] = {2, 3, 4, 5.5}, w[4] = {1, 1, 1, 1};
    ev_nnls r;
    ck_assert(ev_model_nnls(X, y, w, 4, &r, NULL) == EV_OK);
    ck_assert(r.scale[1] == 1.0);
    ck_assert(r.scale[2] == 9.0);
    ck_assert_int_eq(r.subset[EV_MASK_AP].status, EV_SUBSET_SINGULAR);
    ck_assert_int_eq(r.subset[7].status, EV_SUBSET_SINGULAR);
    ck_assert(isnan(r.subset[7].objective));
    ck_assert_int_eq(r.subset[EV_MASK_A0 | EV_MASK_AD].status, EV_SUBSET_FEASIBLE);
    ck_assert_uint_eq(r.best, EV_MASK_A0 | EV_MASK_AD);
    /* the empty subset's objective is the weighted sum of squares of y */
    ck_assert(r.subset[0].objective == 4.0 + 9.0 + 16.0 + 30.25);
    ck_assert(fabs(r.coef.a0 - 1.0) < 1e-12 && fabs(r.coef.aD - 0.5) < 1e-12);
}
END_TEST

START_TEST(test_an_exact_tie_goes_to_fewer_coefficients)
{
    /* y = 2 exactly: {a0} and {a0, aP} (aP = 0 exactly) tie at 0 */
    double X[3 * 3] = {1, 1, 1, 1, 2, 2, 1, 3, 3};
    double y[3] = {2, 2, 2}, w[3] = {1, 1, 1};
    ev_nnls r;
    ck_assert(ev_model_nnls(X, y, w, 3, &r, NULL) == EV_OK);
    ck_assert_uint_eq(r.best, EV_MASK_A0);
    ck_assert(r.coef.a0 == 2.0);
}
END_TEST

/* ---- features and decisions ------------------------------------------------ */

START_TEST(test_features_pad_width_to_a_power_of_two_and_count_waves)
{
    ev_features f;
    ck_assert(ev_model_features(37, 257, 4, 24, &f) == EV_OK);
    ck_assert(f.one == 1.0 && f.P == 10.0 && f.D == 1.0 * 4 * 512);
    ck_assert(ev_model_features(1024, 512, 1, 24, &f) == EV_OK);
    ck_assert(f.P == 1024.0 && f.D == 43.0 * 1 * 512);
    ck_assert(ev_model_features(3, 1, 1, 1, &f) == EV_OK);
    ck_assert(f.D == 3.0);
    ck_assert_int_eq(ev_model_features(0, 5, 1, 1, &f), EV_EINVAL);
    ck_assert_int_eq(ev_model_features(5, 0, 1, 1, &f), EV_EINVAL);
    ck_assert_int_eq(ev_model_features(5, 5, 1, 0, &f), EV_EINVAL);
    ck_assert_int_eq(ev_model_features(INT64_MAX, INT64_MAX, 1, 1, &f), EV_ERANGE);
}
END_TEST

START_TEST(test_a_candidate_exactly_at_the_threshold_keeps_the_default)
{
    /* a0 = aP = 0, aD = 1, R = 2, N = 1, S = 1: default B4 = 4, rows1 = rows2 = 2 */
    ev_coef c = {0, 0, 1};
    ev_decision d;
    ck_assert(ev_model_decide(&c, 2, 1, EV_DTYPE_FP32, 4, 1, 0.5, EV_SCHEDS_DEFAULT, &d) ==
              EV_OK); /* bar = 2: not strictly lower */
    ck_assert(d.predicted[EV_SCHED_DEFAULT] == 4.0 && d.predicted[EV_SCHED_ROWS1] == 2.0);
    ck_assert_int_eq(d.selected, EV_SCHED_DEFAULT);
    ck_assert_int_eq(d.rows_per_program, 4);
    ck_assert(ev_model_decide(&c, 2, 1, EV_DTYPE_FP32, 4, 1, 0.49, EV_SCHEDS_DEFAULT, &d) == EV_OK);
    ck_assert_int_eq(d.selected, EV_SCHED_ROWS1); /* equal rows1/rows2 prefer rows1 */
    ck_assert_int_eq(d.rows_per_program, 1);
}
END_TEST

START_TEST(test_the_lowest_qualifying_candidate_wins)
{
    /* pred = 100 - P, R = 20, B = 4: default 95, rows1 80, rows2 90 */
    ev_coef c = {100, -1, 0};
    ev_decision d;
    ck_assert(ev_model_decide(&c, 20, 8, EV_DTYPE_FP32, 4, 24, 0.05, EV_SCHEDS_DEFAULT, &d) == EV_OK);
    ck_assert_int_eq(d.selected, EV_SCHED_ROWS1);
    /* pred = P: default 5, rows1 20, rows2 10: nothing qualifies */
    ev_coef c2 = {0, 1, 0};
    ck_assert(ev_model_decide(&c2, 20, 8, EV_DTYPE_FP32, 4, 24, 0.05, EV_SCHEDS_DEFAULT, &d) == EV_OK);
    ck_assert_int_eq(d.selected, EV_SCHED_DEFAULT);
    /* pred = 100 + P with rows2 only below: R = 3, B = 1 (rows1 is the default, skipped) */
    ev_coef c3 = {100, 1, 0};
    ck_assert(ev_model_decide(&c3, 30, 8, EV_DTYPE_FP32, 1, 24, 0.05, EV_SCHEDS_DEFAULT, &d) == EV_OK);
    ck_assert(d.predicted[EV_SCHED_ROWS1] == d.predicted[EV_SCHED_DEFAULT]);
    ck_assert_int_eq(d.selected, EV_SCHED_ROWS2); /* 115 < 0.95 * 130 */
}
END_TEST

START_TEST(test_rows4_is_predicted_but_selected_only_when_declared_and_not_the_default)
{
    /* R = 8, N = 1, S = 2, aP = 2, aD = 1: default B8 10, rows4 8, rows2 12, rows1 20 */
    ev_coef c = {0, 2, 1};
    ev_decision d;
    const unsigned with4 = EV_SCHEDS_DEFAULT | EV_SCHED_BIT(EV_SCHED_ROWS4);
    ck_assert(ev_model_decide(&c, 8, 1, EV_DTYPE_FP32, 8, 2, 0.05, EV_SCHEDS_DEFAULT, &d) == EV_OK);
    ck_assert(d.predicted[EV_SCHED_DEFAULT] == 10.0);
    ck_assert(d.predicted[EV_SCHED_ROWS4] == 8.0);
    ck_assert_int_eq(d.selected, EV_SCHED_DEFAULT); /* not declared */
    ck_assert(ev_model_decide(&c, 8, 1, EV_DTYPE_FP32, 8, 2, 0.05, with4, &d) == EV_OK);
    ck_assert_int_eq(d.selected, EV_SCHED_ROWS4); /* 8 < 0.95 * 10 */
    ck_assert_int_eq(d.rows_per_program, 4);
    /* B = 4: rows4 is the default itself (8 = 8), skipped; rows2 12, rows1 20 */
    ck_assert(ev_model_decide(&c, 8, 1, EV_DTYPE_FP32, 4, 2, 0.05, with4, &d) == EV_OK);
    ck_assert(d.predicted[EV_SCHED_ROWS4] == d.predicted[EV_SCHED_DEFAULT]);
    ck_assert_int_eq(d.selected, EV_SCHED_DEFAULT);
    ck_assert_int_eq(d.rows_per_program, 4);
}
END_TEST

/* short's b is 128 / p (ev_sched_rows_of): p = 8 threads a row of 256
 * fp16 (32 chunks), so 16 rows a program; 130x96 fp32 is 24 chunks, p = 8,
 * b = 16; 17x1024 fp16 (128 chunks) is not short's. */
START_TEST(test_short_rows_per_program_are_128_over_its_threads_a_row)
{
    ck_assert_int_eq(ev_sched_rows_of(EV_SCHED_SHORT, 8, 256, EV_DTYPE_FP16), 16);
    ck_assert_int_eq(ev_sched_rows_of(EV_SCHED_SHORT, 8, 96, EV_DTYPE_FP32), 16);
    ck_assert_int_eq(ev_sched_rows_of(EV_SCHED_SHORT, 8, 64, EV_DTYPE_FP16), 64);
    ck_assert_int_eq(ev_sched_rows_of(EV_SCHED_SHORT, 8, 16, EV_DTYPE_FP32), 128);
    ck_assert_int_eq(ev_sched_rows_of(EV_SCHED_SHORT, 4, 1024, EV_DTYPE_FP16), 0);
    ck_assert_int_eq(ev_sched_rows_of(EV_SCHED_DEFAULT, 8, 1024, EV_DTYPE_FP16), 8);
    ck_assert_int_eq(ev_sched_rows_of(EV_SCHED_ROWS4, 8, 1024, EV_DTYPE_FP16), 4);
    ck_assert_int_eq(ev_sched_rows_of(EV_SCHED_COUNT, 8, 1024, EV_DTYPE_FP16), 0);
}
END_TEST

/* split applies where the padded row holds more than 64 KiB
 * (ev_split_programs): G = 8 programs of one row each, b = 1; everything
 * else has G = 1.  16384 fp32 columns are exactly 64 KiB: not split's. */
START_TEST(test_split_applies_only_to_rows_over_64_kib_padded)
{
    ck_assert_int_eq(ev_split_programs(16384, EV_DTYPE_FP32), 0);
    ck_assert_int_eq(ev_split_programs(16385, EV_DTYPE_FP32), 8);
    ck_assert_int_eq(ev_split_programs(32768, EV_DTYPE_BF16), 0);
    ck_assert_int_eq(ev_split_programs(32769, EV_DTYPE_FP16), 8);
    ck_assert_int_eq(ev_split_programs(1048576, EV_DTYPE_FP32), 8);
    ck_assert_int_eq(ev_split_programs(0, EV_DTYPE_FP32), 0);
    ck_assert_int_eq(ev_split_programs(INT64_MAX, EV_DTYPE_FP32), 0);
    ck_assert_int_eq(ev_sched_rows_of(EV_SCHED_SPLIT, 4, 1048576, EV_DTYPE_FP32), 1);
    ck_assert_int_eq(ev_sched_rows_of(EV_SCHED_SPLIT, 4, 8191, EV_DTYPE_BF16), 0);
    ck_assert_int_eq(ev_sched_split_of(EV_SCHED_SPLIT, 1048576, EV_DTYPE_FP32), 8);
    ck_assert_int_eq(ev_sched_split_of(EV_SCHED_SPLIT, 8192, EV_DTYPE_FP32), 0);
    ck_assert_int_eq(ev_sched_split_of(EV_SCHED_ROWS1, 1048576, EV_DTYPE_FP32), 1);
    ck_assert_int_eq(ev_sched_split_of(EV_SCHED_DEFAULT, 1048576, EV_DTYPE_FP32), 1);
    ev_sched s;
    ck_assert_int_eq(ev_sched_parse("split", &s), 0);
    ck_assert_int_eq(s, EV_SCHED_SPLIT);
    ck_assert_str_eq(ev_sched_name(EV_SCHED_SPLIT), "split");
}
END_TEST

/* split's features in the seed's form: P = R G programs of b = 1 row of W
 * / G columns, D = ceil(P / S) b W / G.  32x1048576 fp32, S = 132: P =
 * 256, D = 2 x 131072; rows1 there: P = 32, D = 1048576.  G = 1 is
 * ev_model_features; a G that does not divide W is refused. */
START_TEST(test_split_features_count_g_programs_a_row_of_w_over_g)
{
    ev_features f, g;
    ck_assert(ev_sched_features(EV_SCHED_SPLIT, 32, 1048576, EV_DTYPE_FP32, 4, 132, &f) == EV_OK);
    ck_assert(f.one == 1.0 && f.P == 256.0 && f.D == 262144.0);
    ck_assert(ev_sched_features(EV_SCHED_ROWS1, 32, 1048576, EV_DTYPE_FP32, 4, 132, &f) == EV_OK);
    ck_assert(f.P == 32.0 && f.D == 1048576.0);
    ck_assert(ev_model_features_g(37, 257, 4, 1, 24, &f) == EV_OK);
    ck_assert(ev_model_features(37, 257, 4, 24, &g) == EV_OK);
    ck_assert(f.P == g.P && f.D == g.D);
    ck_assert_int_eq(ev_model_features_g(3, 100, 1, 3, 24, &f), EV_EINVAL); /* W = 128 */
    ck_assert_int_eq(ev_model_features_g(3, 100, 1, 0, 24, &f), EV_EINVAL);
    ck_assert_int_eq(ev_sched_features(EV_SCHED_SPLIT, 3, 8191, EV_DTYPE_BF16, 4, 132, &f), EV_EINVAL);
}
END_TEST

/* With the committed H200 coefficients and split declared, 32x1048576
 * fp32 B4 takes split (predicted 15.8 us against rows1 58.9), also with B
 * = 1, where split's b equals B but it is not the default; split is
 * neither predicted nor chosen on 3x8191 bf16 (16 KiB rows), and without
 * split declared the choice is rows1 as before. */
START_TEST(test_the_h200_coefficients_pick_split_on_32x1048576)
{
    ev_coef c = {1.2617, 3.376e-4, 5.499e-5};
    ev_decision d;
    ck_assert(ev_model_decide(&c, 32, 1048576, EV_DTYPE_FP32, 4, 132, 0.05, EV_SCHEDS_ALL, &d) == EV_OK);
    ck_assert_int_eq(d.selected, EV_SCHED_SPLIT);
    ck_assert_int_eq(d.rows_per_program, 1);
    ck_assert(fabs(d.predicted[EV_SCHED_SPLIT] - 15.76) < 0.01);
    ck_assert(fabs(d.predicted[EV_SCHED_ROWS1] - 58.93) < 0.01);
    ck_assert(ev_model_decide(&c, 32, 1048576, EV_DTYPE_FP32, 1, 132, 0.05, EV_SCHEDS_ALL, &d) == EV_OK);
    ck_assert_int_eq(d.selected, EV_SCHED_SPLIT);
    ck_assert(ev_model_decide(&c, 32, 1048576, EV_DTYPE_FP32, 4, 132, 0.05,
                              EV_SCHEDS_ALL & ~EV_SCHED_BIT(EV_SCHED_SPLIT), &d) == EV_OK);
    ck_assert_int_eq(d.selected, EV_SCHED_ROWS1);
    ck_assert(ev_model_decide(&c, 3, 8191, EV_DTYPE_BF16, 4, 132, 0.05, EV_SCHEDS_ALL, &d) == EV_OK);
    ck_assert(isnan(d.predicted[EV_SCHED_SPLIT]));
    ck_assert_int_eq(d.selected, EV_SCHED_ROWS1);
}
END_TEST

/* The committed H200 run's coefficients (receipts/h200, S = 132) with
 * hopper.json's five schedules: short on 131072x256 fp16 MAX B8 (18.2 us
 * against default 20.9; rows4 26.3), and not on 256x128 bf16, 2048x64
 * fp16 or 1000x100 fp16, which keep the default; with the default set
 * 131072x256 keeps the default too. */
START_TEST(test_the_h200_coefficients_pick_short_on_131072x256_only)
{
    static const struct {
        int64_t R, N, B;
        ev_dtype dt;
        ev_sched want, want_default_set;
    } cs[] = {
        {131072, 256, 8, EV_DTYPE_FP16, EV_SCHED_SHORT, EV_SCHED_DEFAULT},
        {256, 128, 8, EV_DTYPE_BF16, EV_SCHED_DEFAULT, EV_SCHED_DEFAULT},  /* short 1.49 against 1.33 */
        {2048, 64, 8, EV_DTYPE_FP16, EV_SCHED_DEFAULT, EV_SCHED_DEFAULT},  /* short 1.50 against 1.40 */
        {1000, 100, 4, EV_DTYPE_FP16, EV_SCHED_DEFAULT, EV_SCHED_DEFAULT}, /* short 1.50 against 1.40 */
    };
    ev_coef c = {1.2617, 3.376e-4, 5.499e-5};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        ev_decision d, d0;
        ck_assert(ev_model_decide(&c, cs[i].R, cs[i].N, cs[i].dt, cs[i].B, 132, 0.05, EV_SCHEDS_ALL, &d) ==
                  EV_OK);
        ck_assert(ev_model_decide(&c, cs[i].R, cs[i].N, cs[i].dt, cs[i].B, 132, 0.05, EV_SCHEDS_DEFAULT,
                                  &d0) == EV_OK);
        ck_assert_msg(d.selected == cs[i].want,
                      "%lldx%lld: %s (default %.4f rows1 %.4f rows2 %.4f rows4 %.4f "
                      "short %.4f)",
                      (long long)cs[i].R, (long long)cs[i].N, ev_sched_name(d.selected),
                      d.predicted[EV_SCHED_DEFAULT], d.predicted[EV_SCHED_ROWS1], d.predicted[EV_SCHED_ROWS2],
                      d.predicted[EV_SCHED_ROWS4], d.predicted[EV_SCHED_SHORT]);
        ck_assert_int_eq(d0.selected, cs[i].want_default_set);
        ck_assert(isfinite(d.predicted[EV_SCHED_SHORT]));
    }
    ev_decision d;
    ck_assert(ev_model_decide(&c, 131072, 256, EV_DTYPE_FP16, 8, 132, 0.05, EV_SCHEDS_ALL, &d) == EV_OK);
    ck_assert(fabs(d.predicted[EV_SCHED_SHORT] - 18.2) < 0.05);
    ck_assert(fabs(d.predicted[EV_SCHED_DEFAULT] - 20.9) < 0.05);
    ck_assert_int_eq(d.rows_per_program, 16);
}
END_TEST

/* short on rows it does not fit is neither predicted nor a candidate,
 * even where it would be cheap; a set without default or a bad dtype is
 * refused. */
START_TEST(test_short_does_not_apply_to_long_rows_and_a_bad_set_is_refused)
{
    ev_coef c = {0, 1, 0}; /* pred = P: short's 128 rows a program would win */
    ev_decision d;
    ck_assert(ev_model_decide(&c, 8192, 8192, EV_DTYPE_FP32, 4, 132, 0.05, EV_SCHEDS_ALL, &d) == EV_OK);
    ck_assert(isnan(d.predicted[EV_SCHED_SHORT]));
    ck_assert_int_eq(d.selected, EV_SCHED_DEFAULT);
    ck_assert(ev_model_decide(&c, 8192, 16, EV_DTYPE_FP32, 4, 132, 0.05, EV_SCHEDS_ALL, &d) == EV_OK);
    ck_assert_int_eq(d.selected, EV_SCHED_SHORT); /* 64 programs against 2048 */
    ck_assert_int_eq(d.rows_per_program, 128);
    ck_assert_int_eq(ev_model_decide(&c, 8, 8, EV_DTYPE_FP32, 4, 24, 0.05, EV_SCHED_BIT(EV_SCHED_ROWS1), &d),
                     EV_EINVAL);
    ck_assert_int_eq(ev_model_decide(&c, 8, 8, EV_DTYPE_FP32, 4, 24, 0.05, 1u << EV_SCHED_COUNT | 1u, &d),
                     EV_EINVAL);
    ck_assert_int_eq(ev_model_decide(&c, 8, 8, (ev_dtype)99, 4, 24, 0.05, EV_SCHEDS_DEFAULT, &d), EV_EINVAL);
}
END_TEST

/* The seed table with a rows4 row (0.9 of the default) after each default
 * row whose B is not 4: malloc'd, its length in *m, the rows4 rows' count
 * in *n4. */
static ev_obs *seed_with_rows4(const ev_obs *seed, size_t n, size_t *m, size_t *n4)
{
    ev_obs *obs = calloc(2 * n, sizeof *obs);
    ck_assert_ptr_nonnull(obs);
    *m = *n4 = 0;
    for (size_t i = 0; i < n; i++) {
        obs[(*m)++] = seed[i];
        if (seed[i].sched == EV_SCHED_DEFAULT && seed[i].default_rows != 4) {
            obs[*m] = seed[i];
            obs[*m].sched = EV_SCHED_ROWS4;
            obs[(*m)++].median_us = seed[i].median_us * 0.9;
            (*n4)++;
        }
    }
    return obs;
}

/* A declared rows4 is fitted on calibration cases (and implied by the
 * default where B = 4), written in model.json with the declared list; a
 * declared schedule missing from a case, or short under a set without it,
 * is refused; the default set keeps model.json free of both keys. */
START_TEST(test_a_declared_schedule_is_fitted_and_required)
{
    size_t n, m, n4;
    ev_obs *seed = load_seed(&n);
    ev_obs *obs = seed_with_rows4(seed, n, &m, &n4);
    ev_err err = {{0}};
    ev_fit *f = NULL;
    ev_buf js = EV_BUF_INIT;
    const unsigned with4 = EV_SCHEDS_DEFAULT | EV_SCHED_BIT(EV_SCHED_ROWS4);
    ck_assert_uint_eq(n4, 8);
    ev_fit_input in = {seed, n, NULL, 0, 24, 0.05, with4};
    ck_assert_int_eq(ev_model_fit(&in, &f, &err), EV_EFORMAT); /* the seed table has no rows4 */
    ck_assert_msg(strstr(err.msg, "has no rows4 row"), "%s", err.msg);
    in.obs = obs;
    in.n_obs = m;
    ck_assert_msg(ev_model_fit(&in, &f, &err) == EV_OK, "%s", err.msg);
    ck_assert_uint_eq(ev_fit_nnls(f)->n_rows, n + n4); /* every declared calibration observation */
    for (size_t k = 0; k < ev_fit_case_count(f); k++) {
        const ev_fit_case *c = ev_fit_case_at(f, k);
        if (c->default_rows == 4)
            ck_assert(c->observed[EV_SCHED_ROWS4] == c->observed[EV_SCHED_DEFAULT]);
    }
    ck_assert_int_eq(ev_fit_to_json(f, &js, &err), EV_OK);
    ck_assert_ptr_nonnull(
        strstr(js.data, "\"model_schedules\":\t[\"default\", \"rows1\", \"rows2\", \"rows4\"]"));
    ck_assert_ptr_null(strstr(js.data, "\"short\""));
    ck_assert_ptr_nonnull(strstr(js.data, "min observed of default, rows1, rows2, rows4;"));
    ev_fit_free(f);
    f = NULL;
    ev_buf_free(&js);
    /* the default set: neither key, rows4 rows predicted, not fitted */
    in.scheds = EV_SCHEDS_DEFAULT;
    ck_assert_msg(ev_model_fit(&in, &f, &err) == EV_OK, "%s", err.msg);
    ck_assert_uint_eq(ev_fit_nnls(f)->n_rows, n);
    ck_assert_int_eq(ev_fit_to_json(f, &js, &err), EV_OK);
    ck_assert_ptr_null(strstr(js.data, "model_schedules"));
    ev_fit_free(f);
    f = NULL;
    ev_buf_free(&js);
    /* short under a set without it; short on rows it does not fit */
    obs[0].sched = EV_SCHED_SHORT; /* 17x1024 fp16: 128 chunks */
    ck_assert_int_eq(ev_model_fit(&in, &f, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "schedule short is not one of the declared model_schedules"), "%s",
                  err.msg);
    in.scheds = EV_SCHEDS_ALL;
    ck_assert_int_eq(ev_model_fit(&in, &f, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "schedule short does not apply to 1024 columns of fp16"), "%s", err.msg);
    in.scheds = EV_SCHED_BIT(EV_SCHED_ROWS1);
    ck_assert_int_eq(ev_model_fit(&in, &f, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "does not hold default"), "%s", err.msg);
    free(obs);
    free(seed);
}
END_TEST

START_TEST(test_a_bad_binding_or_threshold_is_refused)
{
    ev_coef c = {1, 0, 0};
    ev_decision d;
    ck_assert_int_eq(ev_model_decide(&c, 0, 8, EV_DTYPE_FP32, 4, 24, 0.05, EV_SCHEDS_DEFAULT, &d), EV_EINVAL);
    ck_assert_int_eq(ev_model_decide(&c, 8, 8, EV_DTYPE_FP32, 0, 24, 0.05, EV_SCHEDS_DEFAULT, &d), EV_EINVAL);
    ck_assert_int_eq(ev_model_decide(&c, 8, 8, EV_DTYPE_FP32, 4, 24, 1.0, EV_SCHEDS_DEFAULT, &d), EV_EINVAL);
    ck_assert_int_eq(ev_model_decide(&c, 8, 8, EV_DTYPE_FP32, 4, 24, NAN, EV_SCHEDS_DEFAULT, &d), EV_EINVAL);
}
END_TEST

/* ---- refusals ------------------------------------------------------------------ */

static const char seed_head[] = "op,rows,cols,dtype,default_rows,schedule,median_us\n";

/* Parses and fits text (header added); returns the status, err filled. */
static ev_status fit_text(const char *body, ev_err *err)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s%s", seed_head, body);
    ev_obs *obs = NULL;
    size_t n = 0;
    ev_status rc = ev_obs_from_csv(buf, strlen(buf), &obs, &n, err);
    if (!rc) {
        ev_fit_input in = {obs, n, NULL, 0, 24, 0.05, EV_SCHEDS_DEFAULT};
        ev_fit *f = NULL;
        rc = ev_model_fit(&in, &f, err);
        ev_fit_free(f);
    }
    free(obs);
    return rc;
}

/* Two good geometries (lines 2-7) to which each bad case adds a line 8+. */
static const char two_geoms[] = "reduce_sum,17,1024,fp16,4,default,2.1989\n"
                                "reduce_sum,17,1024,fp16,4,rows1,0.9235\n"
                                "reduce_sum,17,1024,fp16,4,rows2,1.3005\n"
                                "reduce_sum,1024,512,fp16,4,default,2.7475\n"
                                "reduce_sum,1024,512,fp16,4,rows1,3.1183\n"
                                "reduce_sum,1024,512,fp16,4,rows2,3.0472\n";

/* Asserts that two_geoms + extra is refused with EV_EFORMAT naming `line` and `why`. */
static void assert_refused(const char *extra, const char *line, const char *why)
{
    char body[2048];
    ev_err err = {{0}};
    snprintf(body, sizeof body, "%s%s", two_geoms, extra);
    ev_status rc = fit_text(body, &err);
    ck_assert_msg(rc == EV_EFORMAT, "accepted (%d): %s", rc, extra);
    ck_assert_msg(strstr(err.msg, line) != NULL, "'%s' does not name %s", err.msg, line);
    ck_assert_msg(strstr(err.msg, why) != NULL, "'%s' does not say %s", err.msg, why);
}

START_TEST(test_the_two_geometry_table_is_accepted)
{
    ev_err err;
    ck_assert_msg(fit_text(two_geoms, &err) == EV_OK, "%s", err.msg);
}
END_TEST

START_TEST(test_an_unknown_schedule_is_refused_with_its_line)
{
    assert_refused("reduce_sum,17,1024,fp16,4,rows3,1.0\n", "line 8", "schedule");
}
END_TEST

START_TEST(test_an_unknown_op_is_refused_with_its_line)
{
    assert_refused("reduce_prod,17,1024,fp16,4,rows4,1.0\n", "line 8", "op");
}
END_TEST

START_TEST(test_a_non_positive_median_is_refused_with_its_line)
{
    assert_refused("reduce_sum,17,1024,fp16,4,rows4,0\n", "line 8", "positive");
    assert_refused("reduce_sum,17,1024,fp16,4,rows4,-1.5\n", "line 8", "positive");
}
END_TEST

START_TEST(test_a_nan_or_non_numeric_median_is_refused_with_its_line)
{
    assert_refused("reduce_sum,17,1024,fp16,4,rows4,nan\n", "line 8", "");
    assert_refused("reduce_sum,17,1024,fp16,4,rows4,fast\n", "line 8", "");
    assert_refused("reduce_sum,17,1024,fp16,4,rows4,\n", "line 8", "");
}
END_TEST

START_TEST(test_a_duplicate_observation_is_refused_with_both_lines)
{
    assert_refused("reduce_sum,1024,512,fp16,4,rows1,3.2\n", "line 8", "duplicate");
    assert_refused("reduce_sum,1024,512,fp16,4,rows1,3.2\n", "line 6", "duplicate");
}
END_TEST

START_TEST(test_a_case_without_a_default_row_is_refused)
{
    assert_refused("reduce_max,17,1024,fp16,4,rows1,0.9\nreduce_max,17,1024,fp16,4,rows2,1.3\n", "line 8",
                   "no default row");
}
END_TEST

START_TEST(test_a_candidate_equal_to_the_default_may_be_left_out)
{
    ev_err err = {{0}};
    /* B = 1: rows1 is the default itself; its row may be absent */
    char body[1024];
    snprintf(body, sizeof body, "%sreduce_sum,64,64,fp32,1,default,2.0\nreduce_sum,64,64,fp32,1,rows2,1.5\n",
             two_geoms);
    ck_assert_msg(fit_text(body, &err) == EV_OK, "%s", err.msg);
    /* but not for B = 4 */
    assert_refused("reduce_sum,64,64,fp32,4,default,2.0\nreduce_sum,64,64,fp32,4,rows2,1.5\n", "line 8",
                   "no rows1 row");
}
END_TEST

START_TEST(test_fewer_than_two_geometries_are_refused)
{
    ev_err err = {{0}};
    ck_assert_int_eq(fit_text("reduce_sum,17,1024,fp16,4,default,2.1989\n"
                              "reduce_sum,17,1024,fp16,4,rows1,0.9235\n"
                              "reduce_sum,17,1024,fp16,4,rows2,1.3005\n"
                              "reduce_max,17,1024,fp16,4,default,2.1989\n"
                              "reduce_max,17,1024,fp16,4,rows1,0.9235\n"
                              "reduce_max,17,1024,fp16,4,rows2,1.3005\n",
                              &err),
                     EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "fewer than two") != NULL, "%s", err.msg);
    /* a holdout geometry does not count */
    char buf[4096];
    snprintf(buf, sizeof buf,
             "op,rows,cols,dtype,default_rows,schedule,median_us,role\n%s"
             "reduce_sum,64,64,fp32,4,default,2,holdout\n"
             "reduce_sum,64,64,fp32,4,rows1,1,holdout\n"
             "reduce_sum,64,64,fp32,4,rows2,1.5,holdout\n",
             "reduce_sum,17,1024,fp16,4,default,2.1989,calibration\n"
             "reduce_sum,17,1024,fp16,4,rows1,0.9235,calibration\n"
             "reduce_sum,17,1024,fp16,4,rows2,1.3005,calibration\n");
    ev_obs *obs = NULL;
    size_t n = 0;
    ck_assert_msg(ev_obs_from_csv(buf, strlen(buf), &obs, &n, &err) == EV_OK, "%s", err.msg);
    ev_fit_input in = {obs, n, NULL, 0, 24, 0.05, EV_SCHEDS_DEFAULT};
    ev_fit *f = NULL;
    ck_assert_int_eq(ev_model_fit(&in, &f, &err), EV_EFORMAT);
    ck_assert_ptr_null(f);
    free(obs);
}
END_TEST

START_TEST(test_rows_or_cols_below_one_are_refused_with_their_line)
{
    assert_refused("reduce_sum,0,1024,fp16,4,default,1.0\n", "line 8", "below 1");
    assert_refused("reduce_sum,17,0,fp16,4,default,1.0\n", "line 8", "below 1");
    assert_refused("reduce_sum,17,-3,fp16,4,default,1.0\n", "line 8", "below 1");
}
END_TEST

START_TEST(test_an_unknown_role_is_refused_with_its_line)
{
    ev_err err = {{0}};
    char buf[2048];
    snprintf(buf, sizeof buf,
             "op,rows,cols,dtype,default_rows,schedule,median_us,role\n"
             "reduce_sum,17,1024,fp16,4,default,2.1989,training\n");
    ev_obs *obs = NULL;
    size_t n = 0;
    ck_assert_int_eq(ev_obs_from_csv(buf, strlen(buf), &obs, &n, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "line 2") && strstr(err.msg, "role"), "%s", err.msg);
}
END_TEST

/* ---- the fit's outputs --------------------------------------------------------- */

START_TEST(test_holdout_cases_get_regret_and_no_weight)
{
    size_t n;
    ev_obs *obs = load_seed(&n);
    ev_obs *more = calloc(n + 3, sizeof *more);
    memcpy(more, obs, n * sizeof *obs);
    /* a holdout case, 8192x8192 fp32 B8: observed default 900, rows1 1000, rows2 850 */
    const double med[3] = {900, 1000, 850};
    for (int s = 0; s < 3; s++) {
        ev_obs *o = &more[n + (size_t)s];
        snprintf(o->op, sizeof o->op, "reduce_sum");
        snprintf(o->dtype, sizeof o->dtype, "fp32");
        o->rows = 8192;
        o->cols = 8192;
        o->default_rows = 8;
        o->sched = (ev_sched)s;
        o->median_us = med[s];
        o->role = EV_ROLE_HOLDOUT;
    }
    ev_fit *f = fit_obs(more, n + 3), *g = fit_obs(obs, n);
    /* no weight: the coefficients are the seed's, bit for bit */
    ck_assert(ev_fit_coef(f)->a0 == ev_fit_coef(g)->a0 && ev_fit_coef(f)->aD == ev_fit_coef(g)->aD);
    ck_assert_uint_eq(ev_fit_fold_count(f), 8);
    double gm, mx;
    size_t nh;
    ev_fit_holdout_regret(f, &gm, &mx, &nh);
    ck_assert_uint_eq(nh, 1);
    const ev_fit_case *hc = NULL;
    for (size_t i = 0; i < ev_fit_case_count(f); i++)
        if (ev_fit_case_at(f, i)->role == EV_ROLE_HOLDOUT)
            hc = ev_fit_case_at(f, i);
    ck_assert_ptr_nonnull(hc);
    ck_assert(!hc->has_logo);
    double expect = med[hc->full.selected] / 850.0;
    ck_assert(gm == expect && mx == expect);
    ev_fit_holdout_regret(g, &gm, &mx, &nh);
    ck_assert_uint_eq(nh, 0);
    ck_assert(isnan(gm));
    ev_fit_free(f);
    ev_fit_free(g);
    free(more);
    free(obs);
}
END_TEST

/* Writes the JSON of a fit of obs into out. */
static void json_of(const ev_obs *obs, size_t n, ev_buf *out)
{
    ev_fit *f = fit_obs(obs, n);
    ev_err err;
    ck_assert_msg(ev_fit_to_json(f, out, &err) == EV_OK, "%s", err.msg);
    ev_fit_free(f);
}

START_TEST(test_model_json_is_the_same_bytes_whatever_the_row_order)
{
    size_t n;
    ev_obs *obs = load_seed(&n);
    ev_buf a = EV_BUF_INIT, b = EV_BUF_INIT;
    json_of(obs, n, &a);
    rng_state = 42;
    for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        size_t j = (size_t)(rng_next() % (i + 1));
        ev_obs t = obs[i];
        obs[i] = obs[j];
        obs[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        obs[i].line = 0; /* lines are not part of the output */
    json_of(obs, n, &b);
    ck_assert_uint_eq(a.len, b.len);
    ck_assert(memcmp(a.data, b.data, a.len) == 0);
    ev_buf_free(&a);
    ev_buf_free(&b);
    free(obs);
}
END_TEST

START_TEST(test_model_json_doubles_read_back_to_the_same_bits)
{
    size_t n;
    ev_obs *obs = load_seed(&n);
    ev_fit *f = fit_obs(obs, n);
    ev_buf b = EV_BUF_INIT;
    ev_err err;
    ck_assert(ev_fit_to_json(f, &b, &err) == EV_OK);
    cJSON *root = NULL;
    ck_assert_msg(ev_json_parse(b.data, b.len, EV_JSON_CANONICAL, &root, &err) == EV_OK, "%s", err.msg);
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(root, "coefficients");
    ck_assert(cJSON_GetObjectItemCaseSensitive(co, "a0")->valuedouble == ev_fit_coef(f)->a0);
    ck_assert(cJSON_GetObjectItemCaseSensitive(co, "aD")->valuedouble == ev_fit_coef(f)->aD);
    ck_assert(cJSON_GetObjectItemCaseSensitive(root, "policy_geomean")->valuedouble ==
              ev_fit_policy_geomean(f, 0));
    static const char *const keys[] = {
        "coefficients",   "active_subset", "scales",   "weights",        "subsets",
        "folds",          "decisions",     "excluded", "policy_geomean", "policy_geomean_logo",
        "holdout_regret", "residuals"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        ck_assert_msg(cJSON_HasObjectItem(root, keys[i]), "no key %s", keys[i]);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "subsets")), 8);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "folds")), 8);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "decisions")), 16);
    const cJSON *d0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "decisions"), 0);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(d0, "selected")->valuestring, "rows1");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(d0, "logo_selected")->valuestring, "rows1");
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "residuals");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(res, "observations")), 48);
    cJSON_Delete(root);
    ev_buf_free(&b);
    ev_fit_free(f);
    free(obs);
}
END_TEST

/* ---- the command line ---------------------------------------------------------- */

/* Runs build/evident with argv (NULL-terminated), stdout and stderr to
 * files in dir; returns the exit status (-1 when it did not exit). */
static int run_evident(const char *dir, char *const *argv)
{
    const char *build = getenv("EV_BUILD");
    char exe[512], outp[600], errp[600];
    snprintf(exe, sizeof exe, "%s/evident", build ? build : "build");
    snprintf(outp, sizeof outp, "%s/stdout", dir);
    snprintf(errp, sizeof errp, "%s/stderr", dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen(outp, "w", stdout) || !freopen(errp, "w", stderr))
            _exit(127);
        execv(exe, argv);
        _exit(127);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* 1 when path exists. */
static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

START_TEST(test_evident_fit_writes_model_json_and_exits_0)
{
    char dir[400], out[600];
    snprintf(dir, sizeof dir, "%s/check_model_XXXXXX", ev_test_tmp());
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/model.json", dir);
    char fx[512];
    snprintf(fx, sizeof fx, "%s", fixture_path());
    char *argv[] = {"evident", "fit", "--observations", fx, "--sms", "24", "--out", out, NULL};
    ck_assert_int_eq(run_evident(dir, argv), 0);
    ck_assert(exists(out));
    /* the same bytes as the library writes */
    ev_buf file = EV_BUF_INIT, lib = EV_BUF_INIT;
    ev_err err;
    ck_assert(ev_read_file(out, &file, &err) == EV_OK);
    size_t n;
    ev_obs *obs = load_seed(&n);
    json_of(obs, n, &lib);
    ck_assert_uint_eq(file.len, lib.len);
    ck_assert(memcmp(file.data, lib.data, lib.len) == 0);
    ev_buf_free(&file);
    ev_buf_free(&lib);
    free(obs);
}
END_TEST

START_TEST(test_evident_fit_refuses_a_bad_table_with_exit_1_and_writes_nothing)
{
    char dir[400], out[600], csv[600];
    snprintf(dir, sizeof dir, "%s/check_model_XXXXXX", ev_test_tmp());
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/model.json", dir);
    snprintf(csv, sizeof csv, "%s/bad.csv", dir);
    FILE *fp = fopen(csv, "w");
    ck_assert_ptr_nonnull(fp);
    fprintf(fp, "%s%sreduce_sum,17,1024,fp16,4,rows9,1.0\n", seed_head, two_geoms);
    fclose(fp);
    char *argv[] = {"evident", "fit", "--observations", csv, "--sms", "24", "--out", out, NULL};
    ck_assert_int_eq(run_evident(dir, argv), 1);
    ck_assert(!exists(out));
    char errp[700];
    snprintf(errp, sizeof errp, "%s/stderr", dir);
    ev_buf e = EV_BUF_INIT;
    ev_err err;
    ck_assert(ev_read_file(errp, &e, &err) == EV_OK);
    ck_assert_msg(e.data && strstr(e.data, "line 8"), "%s", e.data ? e.data : "");
    ev_buf_free(&e);
}
END_TEST

/* --schedules declares a table's schedule set, as a run's protocol does
 * with model_schedules: the seed table with rows4 rows (0.9 of the
 * default where B != 4) is fitted with rows4 under --schedules
 * default,rows1,rows2,rows4, to the bytes the library writes for that
 * set, and without --schedules to the default set's (rows4 predicted, not
 * fitted: no model_schedules key). */
START_TEST(test_evident_fit_schedules_declares_the_tables_set)
{
    char dir[400], out[600], csv[600];
    snprintf(dir, sizeof dir, "%s/check_model_XXXXXX", ev_test_tmp());
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/model.json", dir);
    snprintf(csv, sizeof csv, "%s/with4.csv", dir);
    size_t n, m, n4;
    ev_obs *seed = load_seed(&n);
    ev_obs *obs = seed_with_rows4(seed, n, &m, &n4);
    FILE *fp = fopen(csv, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(seed_head, fp);
    for (size_t i = 0; i < m; i++)
        fprintf(fp, "%s,%lld,%lld,%s,%lld,%s,%.17g\n", obs[i].op, (long long)obs[i].rows,
                (long long)obs[i].cols, obs[i].dtype, (long long)obs[i].default_rows,
                ev_sched_name(obs[i].sched), obs[i].median_us);
    ck_assert_int_eq(fclose(fp), 0);
    ev_err err = {{0}};
    ev_buf file = EV_BUF_INIT, lib = EV_BUF_INIT, table = EV_BUF_INIT;
    ev_obs *back = NULL;
    size_t n_back = 0;
    ck_assert(ev_read_file(csv, &table, &err) == EV_OK);
    ck_assert_msg(ev_obs_from_csv(table.data, table.len, &back, &n_back, &err) == EV_OK, "%s", err.msg);
    const unsigned sets[2] = {EV_SCHEDS_DEFAULT | EV_SCHED_BIT(EV_SCHED_ROWS4), EV_SCHEDS_DEFAULT};
    for (int k = 0; k < 2; k++) {
        char *with[] = {"evident",
                        "fit",
                        "--observations",
                        csv,
                        "--sms",
                        "24",
                        "--schedules",
                        "default,rows1,rows2,rows4",
                        "--out",
                        out,
                        NULL};
        char *without[] = {"evident", "fit", "--observations", csv, "--sms", "24", "--out", out, NULL};
        ck_assert_int_eq(run_evident(dir, k == 0 ? with : without), 0);
        ev_fit *f = NULL;
        ev_fit_input in = {back, n_back, NULL, 0, 24, 0.05, sets[k]};
        ck_assert_msg(ev_model_fit(&in, &f, &err) == EV_OK, "%s", err.msg);
        ck_assert(ev_fit_to_json(f, &lib, &err) == EV_OK);
        ck_assert(ev_read_file(out, &file, &err) == EV_OK);
        ck_assert_uint_eq(file.len, lib.len);
        ck_assert(memcmp(file.data, lib.data, lib.len) == 0);
        ck_assert_uint_eq(ev_fit_nnls(f)->n_rows, k == 0 ? m : n);
        ck_assert((strstr(file.data, "\"model_schedules\"") != NULL) == (k == 0));
        ev_fit_free(f);
        ev_buf_free(&file);
        ev_buf_free(&lib);
    }
    ev_buf_free(&table);
    free(back);
    free(obs);
    free(seed);
}
END_TEST

/* A bad --schedules is a usage error naming the entry: an unknown name, a
 * name twice, a set without default, and any --schedules with --db (the
 * run's protocol declares its set). */
START_TEST(test_evident_fit_refuses_a_bad_schedules_list)
{
    static const struct {
        const char *list, *why;
    } bad[] = {{"default,rows9", "unknown schedule 'rows9'"},
               {"default,rows1,rows1", "'rows1' twice"},
               {"rows1,rows2", "must hold default"},
               {"", "unknown schedule ''"},
               {"default,,rows1", "unknown schedule ''"}};
    char dir[400], fx[512], errp[700];
    snprintf(dir, sizeof dir, "%s/check_model_XXXXXX", ev_test_tmp());
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(fx, sizeof fx, "%s", fixture_path());
    snprintf(errp, sizeof errp, "%s/stderr", dir);
    for (size_t i = 0; i <= sizeof bad / sizeof bad[0]; i++) {
        int db = i == sizeof bad / sizeof bad[0];
        char *argv[] = {"evident", "fit",         db ? "--db" : "--observations",         fx,  "--sms",
                        "24",      "--schedules", (char *)(db ? "default" : bad[i].list), NULL};
        if (db) { /* --db takes no --sms either: only --schedules is left to refuse */
            argv[4] = "--schedules";
            argv[5] = "default";
            argv[6] = NULL;
        }
        ck_assert_int_eq(run_evident(dir, argv), 2);
        ev_buf e = EV_BUF_INIT;
        ev_err err;
        ck_assert(ev_read_file(errp, &e, &err) == EV_OK);
        const char *why = db ? "--db takes the schedules of the run's protocol" : bad[i].why;
        ck_assert_msg(e.data && strstr(e.data, why), "%s: %s", why, e.data ? e.data : "");
        ev_buf_free(&e);
    }
}
END_TEST

START_TEST(test_evident_fit_usage_errors_exit_2)
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/check_model_XXXXXX", ev_test_tmp());
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char fx[512];
    snprintf(fx, sizeof fx, "%s", fixture_path());
    char *no_sms[] = {"evident", "fit", "--observations", fx, NULL};
    ck_assert_int_eq(run_evident(dir, no_sms), 2);
    char *bad_sms[] = {"evident", "fit", "--observations", fx, "--sms", "0", NULL};
    ck_assert_int_eq(run_evident(dir, bad_sms), 2);
    char *bad_thr[] = {"evident", "fit", "--observations", fx, "--sms", "24", "--threshold", "1.5", NULL};
    ck_assert_int_eq(run_evident(dir, bad_thr), 2);
    char *missing[] = {"evident", "fit", "--observations", "/nonexistent/x.csv", "--sms", "24", NULL};
    ck_assert_int_eq(run_evident(dir, missing), 2);
    char *unknown[] = {"evident", "fit", "--frobnicate", NULL};
    ck_assert_int_eq(run_evident(dir, unknown), 2);
    char *help[] = {"evident", "fit", "--help", NULL};
    ck_assert_int_eq(run_evident(dir, help), 0);
    char *version[] = {"evident", "fit", "--version", NULL};
    ck_assert_int_eq(run_evident(dir, version), 0);
}
END_TEST

/* EV_Q_FITS row: appends model_json (column 2) to the ev_buf ctx. */
static ev_status copy_model_json(void *ctx, const ev_row *row)
{
    return ev_buf_puts(ctx, ev_row_text(row, 2));
}

/* ---- from the store ------------------------------------------------------------ */

#define OK(call)                                                                                             \
    do {                                                                                                     \
        ev_status rc_ = (call);                                                                              \
        ck_assert_msg(rc_ == EV_OK, "%s: %s", #call, serr.msg);                                              \
    } while (0)

/*
 * Builds a store at path holding the seed table as a run: 16 calibration
 * cases, main jobs default/rows1/rows2, each one attempt with 7 hot samples
 * whose median per_op_us is the table's median (replays 1000, 100 ops per
 * graph) and a cold sample far off; plus, for the excluded-case checks:
 * case 16 (holdout 4096x4096 fp32 B8) whose rows2 job failed (exit 3), and
 * case 17 (holdout 64x64 fp16 B4) whose rows1 job was interrupted and then
 * completed on attempt 2 (kept) and whose rows2 failed validation.
 * OUT: *run_id.
 */
static void build_seed_store(const char *path, int64_t *run_id)
{
    ev_err serr = {{0}};
    ev_store *s = NULL;
    OK(ev_store_open(path, EV_STORE_CREATE, &s, &serr));
    static const char proto[] = "{}";
    ev_run_row run = {"00", proto, 2, "protocols/seed16.json", "cuda", 1, "unknown", 0, "00", 1};
    int64_t inv;
    OK(ev_store_add_run(s, &run, run_id, &serr));
    OK(ev_store_add_invocation(s, *run_id, 2, 0, "h", &inv, &serr));
    size_t n;
    ev_obs *obs = load_seed(&n);
    int64_t order = 0;
    /* cases in fixture order: every 3 rows are one case's default, rows1, rows2 */
    for (size_t k = 0; k < n / 3 + 2; k++) {
        const ev_obs *o = k < n / 3 ? &obs[3 * k] : NULL;
        ev_case_row c = {(int64_t)k,
                         o ? o->op : "reduce_sum",
                         o ? o->rows : (k == n / 3 ? 4096 : 64),
                         o ? o->cols : (k == n / 3 ? 4096 : 64),
                         o ? o->cols : (k == n / 3 ? 4096 : 64),
                         o ? o->dtype : (k == n / 3 ? "fp32" : "fp16"),
                         o ? o->default_rows : (k == n / 3 ? 8 : 4),
                         o ? "calibration" : "holdout"};
        OK(ev_store_add_case(s, *run_id, &c, &serr));
        for (int q = 0; q < 3; q++) {
            char key[64];
            snprintf(key, sizeof key, "main/%zu/%s/initial", k, ev_sched_name((ev_sched)q));
            ev_job_row j = {key, "main", (int64_t)k, ev_sched_name((ev_sched)q), "initial", 0, order++};
            int64_t job, att;
            OK(ev_store_add_job(s, *run_id, &j, &job, &serr));
            int attempts = (k == n / 3 + 1 && q == 1) ? 2 : 1;
            for (int a = 1; a <= attempts; a++) {
                OK(ev_store_add_attempt(s, job, a, inv, 3, &att, &serr));
                ev_process_row p = {1, 1, 0, 0, 0, 0, 0, 0, NULL, 9, 1, NULL, "0", "", 5, 4};
                if (a < attempts) {
                    p.interrupted = 1;
                    p.has_exit = 0;
                }
                if (k == n / 3 && q == 2)
                    p.exit_code = 3;
                OK(ev_store_add_process(s, att, &p, &serr));
                ev_binding_row b = {c.op, c.dtype, c.rows, c.cols, c.stride, 1, 1, 256, 256, 24};
                OK(ev_store_add_binding(s, att, &b, &serr));
                double m = o ? o[q].median_us : 10.0 + q;
                for (int i = 0; i < 7; i++) {
                    /* per_op_us = elapsed_ms * 1000 / (1000 * 100) = elapsed_ms / 100 */
                    ev_sample_row r = {"hot", i, 1000, 100, (m + 0.001 * (i - 3)) * 100.0, -1};
                    OK(ev_store_add_sample(s, att, &r, &serr));
                }
                ev_sample_row cold = {"cold", 0, 1, 1, 999.0, -1};
                OK(ev_store_add_sample(s, att, &cold, &serr));
                ev_validation_row v = {"first", !(k == n / 3 + 1 && q == 2), 0, 1, 0, "00", NULL, 0};
                OK(ev_store_add_validation(s, att, &v, &serr));
            }
        }
    }
    free(obs);
    ev_store_close(s);
}

/* S, the thread count the fit uses, is one rule over the observed rounds
 * (ev_obs_select folds it in for the store loader, the exporter and the
 * verifier alike): the count the usable rounds of the declared schedules
 * bound, excluded cases included; an unusable round or an undeclared
 * schedule does not count; two counts are refused; none gives 1. */
START_TEST(test_s_is_the_thread_count_the_usable_rounds_bound_and_two_are_refused)
{
    ev_obs obs[2 * EV_SCHED_COUNT];
    ev_excluded ex[2];
    size_t n = 0, nx = 0;
    ev_obs_case c = {"reduce_sum", "fp32", 64, 64, 4, 0};
    ev_obs_sms acc = {0, 0};
    ev_obs_sched sched[EV_SCHED_COUNT];
    int64_t S = 0;
    ev_err serr = {{0}};

    OK(ev_obs_sms_get(&acc, &S, &serr));
    ck_assert_int_eq(S, 1); /* nothing bound: 1 */

    /* a failed round with another count and a round of an undeclared
     * schedule do not count; the usable rounds bound 24 */
    memset(sched, 0, sizeof sched);
    for (int q = 0; q < 3; q++) {
        ev_obs_job ok = {1, "completed", 1, 1, 2.0 + q, 24};
        ev_obs_job bad = {2, "failed-exit", 1, 0, 0.0, 99};
        ev_obs_add(&sched[q], &ok);
        ev_obs_add(&sched[q], &bad);
    }
    ev_obs_job other = {1, "completed", 1, 1, 1.0, 7};
    ev_obs_add(&sched[EV_SCHED_ROWS4], &other);
    ev_obs_select(&c, sched, EV_SCHEDS_DEFAULT, obs, &n, ex, &nx, &acc);
    ck_assert_uint_eq(n, 3);
    OK(ev_obs_sms_get(&acc, &S, &serr));
    ck_assert_int_eq(S, 24);

    /* an excluded case's usable rounds count too: 16 is a second count */
    memset(sched, 0, sizeof sched);
    ev_obs_job sixteen = {1, "completed", 1, 1, 2.0, 16};
    ev_obs_add(&sched[EV_SCHED_DEFAULT], &sixteen);
    ev_obs_select(&c, sched, EV_SCHEDS_DEFAULT, obs, &n, ex, &nx, &acc);
    ck_assert_uint_eq(nx, 1); /* rows1 and rows2 missing */
    ck_assert_int_eq(ev_obs_sms_get(&acc, &S, &serr), EV_EFIT);
    ck_assert_msg(strstr(serr.msg, "24") && strstr(serr.msg, "16"), "%s", serr.msg);
}
END_TEST

START_TEST(test_store_observations_are_hot_medians_of_last_attempts_with_failures_excluded)
{
    char dir[400], db[600];
    snprintf(dir, sizeof dir, "%s/check_model_XXXXXX", ev_test_tmp());
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    int64_t run;
    build_seed_store(db, &run);
    ev_err serr = {{0}};
    ev_store *s = NULL;
    OK(ev_store_open(db, 0, &s, &serr));
    ev_obs *obs = NULL;
    ev_excluded *ex = NULL;
    size_t n = 0, nx = 0;
    int64_t sms = 0;
    OK(ev_obs_from_store(s, run, EV_SCHEDS_DEFAULT, &obs, &n, &ex, &nx, &sms, &serr));
    ck_assert_int_eq(sms, 24);
    ck_assert_uint_eq(n, 48);
    ck_assert_uint_eq(nx, 2);
    ck_assert_int_eq(ex[0].rows, 4096);
    ck_assert_str_eq(ex[0].reason, "rows2: failed-exit");
    ck_assert_int_eq(ex[1].rows, 64);
    ck_assert_str_eq(ex[1].reason, "rows2: failed-validation"); /* rows1's attempt 2 counted */
    size_t sn;
    ev_obs *seed = load_seed(&sn);
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(obs[i].op, seed[i].op);
        ck_assert_int_eq(obs[i].sched, seed[i].sched);
        ck_assert_int_eq(obs[i].role, EV_ROLE_CALIBRATION);
        /* the median sample's elapsed_ms * 1000 / 1e5: within 2 ulp of the table's value */
        ck_assert_msg(fabs(obs[i].median_us - seed[i].median_us) <= 4.5e-16 * seed[i].median_us,
                      "%zu: %.17g vs %.17g", i, obs[i].median_us, seed[i].median_us);
    }
    /* the fit from the store reproduces the CSV fit's decisions */
    ev_fit_input in = {obs, n, ex, nx, sms, 0.05, EV_SCHEDS_DEFAULT};
    ev_fit *f = NULL;
    OK(ev_model_fit(&in, &f, &serr));
    ck_assert(fabs(ev_fit_coef(f)->a0 - 0.90290) <= 5e-6);
    ck_assert(fabs(ev_fit_policy_geomean(f, 0) - 0.56989) <= 5e-6);
    ev_fit_free(f);
    free(seed);
    free(obs);
    free(ex);
    ev_store_close(s);
}
END_TEST

START_TEST(test_evident_fit_db_record_records_the_fit_it_writes)
{
    char dir[400], db[600], out[600];
    snprintf(dir, sizeof dir, "%s/check_model_XXXXXX", ev_test_tmp());
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    snprintf(out, sizeof out, "%s/model.json", dir);
    int64_t run;
    build_seed_store(db, &run);
    char *argv[] = {"evident", "fit", "--db", db, "--record", "--out", out, NULL};
    ck_assert_int_eq(run_evident(dir, argv), 0);
    ev_buf file = EV_BUF_INIT;
    ev_err serr = {{0}};
    OK(ev_read_file(out, &file, &serr));
    ck_assert_ptr_nonnull(strstr(file.data, "rows2: failed-exit"));
    ev_store *s = NULL;
    OK(ev_store_open(db, EV_STORE_READONLY, &s, &serr));
    ev_buf stored = EV_BUF_INIT;
    OK(ev_store_query(s, EV_Q_FITS, run, copy_model_json, &stored, &serr));
    ck_assert_uint_eq(stored.len, file.len);
    ck_assert(memcmp(stored.data, file.data, file.len) == 0);
    ev_store_close(s);
    ev_buf_free(&stored);
    ev_buf_free(&file);
    /* a missing store is an unreadable path: 2 */
    char missing[700];
    snprintf(missing, sizeof missing, "%s/none.db", dir);
    char *argv2[] = {"evident", "fit", "--db", missing, NULL};
    ck_assert_int_eq(run_evident(dir, argv2), 2);
}
END_TEST

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *seed = tcase_create("seed");
    tcase_add_test(seed, test_seed_table_reproduces_the_checkpoint_coefficients);
    tcase_add_test(seed, test_split_applies_only_to_rows_over_64_kib_padded);
    tcase_add_test(seed, test_split_features_count_g_programs_a_row_of_w_over_g);
    tcase_add_test(seed, test_the_h200_coefficients_pick_split_on_32x1048576);
    tcase_add_test(seed, test_seed_table_selects_rows1_for_14_cases_and_keeps_both_1024x512_defaults);
    tcase_add_test(seed, test_seed_table_policy_geomean_is_0_56989_in_full_fit_and_logo);
    tcase_add_test(seed, test_seed_table_largest_logo_residuals_match_the_checkpoint);
    suite_add_tcase(s, seed);

    TCase *solve = tcase_create("solve");
    tcase_set_timeout(solve, 120);
    tcase_add_test(solve, test_each_subset_solve_matches_a_long_double_reference);
    tcase_add_test(solve, test_kkt_holds_at_the_answer_on_random_tables);
    tcase_add_test(solve, test_a_zero_column_is_left_unscaled_and_its_subsets_are_singular);
    tcase_add_test(solve, test_an_exact_tie_goes_to_fewer_coefficients);
    suite_add_tcase(s, solve);

    TCase *dec = tcase_create("decide");
    tcase_add_test(dec, test_features_pad_width_to_a_power_of_two_and_count_waves);
    tcase_add_test(dec, test_a_candidate_exactly_at_the_threshold_keeps_the_default);
    tcase_add_test(dec, test_the_lowest_qualifying_candidate_wins);
    tcase_add_test(dec, test_rows4_is_predicted_but_selected_only_when_declared_and_not_the_default);
    tcase_add_test(dec, test_short_rows_per_program_are_128_over_its_threads_a_row);
    tcase_add_test(dec, test_the_h200_coefficients_pick_short_on_131072x256_only);
    tcase_add_test(dec, test_short_does_not_apply_to_long_rows_and_a_bad_set_is_refused);
    tcase_add_test(dec, test_a_declared_schedule_is_fitted_and_required);
    tcase_add_test(dec, test_a_bad_binding_or_threshold_is_refused);
    suite_add_tcase(s, dec);

    TCase *bad = tcase_create("refusals");
    tcase_add_test(bad, test_the_two_geometry_table_is_accepted);
    tcase_add_test(bad, test_an_unknown_schedule_is_refused_with_its_line);
    tcase_add_test(bad, test_an_unknown_op_is_refused_with_its_line);
    tcase_add_test(bad, test_a_non_positive_median_is_refused_with_its_line);
    tcase_add_test(bad, test_a_nan_or_non_numeric_median_is_refused_with_its_line);
    tcase_add_test(bad, test_a_duplicate_observation_is_refused_with_both_lines);
    tcase_add_test(bad, test_a_case_without_a_default_row_is_refused);
    tcase_add_test(bad, test_a_candidate_equal_to_the_default_may_be_left_out);
    tcase_add_test(bad, test_fewer_than_two_geometries_are_refused);
    tcase_add_test(bad, test_rows_or_cols_below_one_are_refused_with_their_line);
    tcase_add_test(bad, test_an_unknown_role_is_refused_with_its_line);
    suite_add_tcase(s, bad);

    TCase *out = tcase_create("outputs");
    tcase_set_timeout(out, 120);
    tcase_add_test(out, test_holdout_cases_get_regret_and_no_weight);
    tcase_add_test(out, test_model_json_is_the_same_bytes_whatever_the_row_order);
    tcase_add_test(out, test_model_json_doubles_read_back_to_the_same_bits);
    tcase_add_test(out, test_evident_fit_writes_model_json_and_exits_0);
    tcase_add_test(out, test_evident_fit_refuses_a_bad_table_with_exit_1_and_writes_nothing);
    tcase_add_test(out, test_evident_fit_usage_errors_exit_2);
    tcase_add_test(out, test_evident_fit_schedules_declares_the_tables_set);
    tcase_add_test(out, test_evident_fit_refuses_a_bad_schedules_list);
    suite_add_tcase(s, out);

    TCase *st = tcase_create("store");
    tcase_set_timeout(st, 120);
    tcase_add_test(st, test_s_is_the_thread_count_the_usable_rounds_bound_and_two_are_refused);
    tcase_add_test(st, test_store_observations_are_hot_medians_of_last_attempts_with_failures_excluded);
    tcase_add_test(st, test_evident_fit_db_record_records_the_fit_it_writes);
    suite_add_tcase(s, st);
    return s;
}

int main(void)
{
    int failed = ev_check_suite(model_suite());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
