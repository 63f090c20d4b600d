/*
 * check_stats.c: tests of median, type-7 quantile, geometric means and
 * sorting against values computed by hand (the arithmetic is in the
 * comments; every expected double is the IEEE result of that arithmetic,
 * asserted bit for bit), plus the refusals.
 */
#include <check.h>

#include "progress.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Asserts a and b have the same bits. */
#define ck_same_bits(a, b)                                                                                   \
    do {                                                                                                     \
        double x_ = (a), y_ = (b);                                                                           \
        ck_assert_msg(memcmp(&x_, &y_, sizeof x_) == 0, "%.17g != %.17g", x_, y_);                           \
    } while (0)

START_TEST(test_median_of_an_odd_count_is_the_middle_value)
{
    double v[] = {3, 1, 2}, m = 0;
    double w[] = {7.5};
    ck_assert_int_eq(ev_median(v, 3, &m), EV_OK); /* sorted 1 2 3 -> 2 */
    ck_same_bits(m, 2.0);
    ck_assert_int_eq(ev_median(w, 1, &m), EV_OK);
    ck_same_bits(m, 7.5);
    ck_assert(v[0] == 3 && v[1] == 1 && v[2] == 2); /* input not modified */
}
END_TEST

START_TEST(test_median_of_an_even_count_uses_a_plus_half_the_difference)
{
    double v[] = {4, 1, 3, 2}, m = 0;
    /* sorted 1 2 3 4: 2 + (3 - 2) / 2 = 2.5 */
    ck_assert_int_eq(ev_median(v, 4, &m), EV_OK);
    ck_same_bits(m, 2.5);
    /* {2.4, 0.3}: a + (b - a) / 2 = 0.3 + 2.1 / 2 = 0.3 + 1.05 -> 1.35 in
     * doubles, whereas (a + b) / 2 = 2.7 / 2 gives 1.3499999999999999: the
     * header's formula is the one used. */
    {
        double u[] = {2.4, 0.3};
        ck_assert_int_eq(ev_median(u, 2, &m), EV_OK);
        ck_same_bits(m, 1.35);
        ck_assert((0.3 + 2.4) / 2 != 1.35);
    }
    /* Equal middles: 5 + 0 / 2 = 5. */
    {
        double u[] = {5, 9, 5, 1};
        ck_assert_int_eq(ev_median(u, 4, &m), EV_OK);
        ck_same_bits(m, 5.0);
    }
}
END_TEST

START_TEST(test_median_is_independent_of_input_order)
{
    double a[] = {0.1, 0.7, 0.3, 0.2, 0.9, 0.4}, b[] = {0.9, 0.4, 0.1, 0.3, 0.7, 0.2}, x, y;
    /* sorted 0.1 0.2 0.3 0.4 0.7 0.9: 0.3 + (0.4 - 0.3) / 2 */
    ck_assert_int_eq(ev_median(a, 6, &x), EV_OK);
    ck_assert_int_eq(ev_median(b, 6, &y), EV_OK);
    ck_same_bits(x, y);
    ck_same_bits(x, 0.3 + (0.4 - 0.3) / 2);
}
END_TEST

START_TEST(test_median_refuses_empty_input_and_nan)
{
    double v[] = {1, NAN, 3}, m = 42;
    ck_assert_int_eq(ev_median(v, 0, &m), EV_EINVAL);
    ck_assert_int_eq(ev_median(v, 3, &m), EV_EINVAL);
    ck_same_bits(m, 42.0);
}
END_TEST

START_TEST(test_quantile_type_7_matches_hand_computed_values)
{
    double x[] = {5, 3, 1, 4, 2}, q = 0;
    double y[] = {40, 10, 30, 20};
    /* n = 5, sorted 1..5: p = 0 -> h = 0 -> 1; p = 1 -> h = 4 -> 5. */
    ck_assert_int_eq(ev_quantile(x, 5, 0, &q), EV_OK);
    ck_same_bits(q, 1.0);
    ck_assert_int_eq(ev_quantile(x, 5, 1, &q), EV_OK);
    ck_same_bits(q, 5.0);
    /* p = 0.25: h = 4 * 0.25 = 1 -> x[1] = 2. */
    ck_assert_int_eq(ev_quantile(x, 5, 0.25, &q), EV_OK);
    ck_same_bits(q, 2.0);
    /* p = 0.1: h = 4 * 0.1 = 0.4 -> 1 + 0.4 * (2 - 1) = 1.4. */
    ck_assert_int_eq(ev_quantile(x, 5, 0.1, &q), EV_OK);
    ck_same_bits(q, 1.4);
    /* n = 4, sorted 10 20 30 40, p = 0.9: h = 3 * 0.9 = 2.7, floor 2,
     * 30 + 0.7 * (40 - 30) = 37 (numpy.quantile gives 37.0). */
    ck_assert_int_eq(ev_quantile(y, 4, 0.9, &q), EV_OK);
    ck_same_bits(q, 37.0);
    /* p = 0.5 equals the median: h = 1.5 -> 20 + 0.5 * 10 = 25. */
    ck_assert_int_eq(ev_quantile(y, 4, 0.5, &q), EV_OK);
    ck_same_bits(q, 25.0);
    /* One value: every quantile is that value. */
    ck_assert_int_eq(ev_quantile(y, 1, 0.7, &q), EV_OK);
    ck_same_bits(q, 40.0);
}
END_TEST

START_TEST(test_quantile_at_one_half_equals_the_median_bit_for_bit)
{
    double v[] = {0.3, 2.4, 1.7, 9.1, 0.05, 3.3}, q, m;
    ck_assert_int_eq(ev_quantile(v, 6, 0.5, &q), EV_OK);
    ck_assert_int_eq(ev_median(v, 6, &m), EV_OK);
    /* sorted 0.05 0.3 1.7 2.4 3.3 9.1: 1.7 + (2.4 - 1.7) / 2 */
    ck_same_bits(q, m);
    ck_same_bits(m, 1.7 + (2.4 - 1.7) / 2);
}
END_TEST

START_TEST(test_quantile_refuses_bad_p_and_bad_values)
{
    double v[] = {1, 2, 3}, bad[] = {1, NAN}, q = 42;
    ck_assert_int_eq(ev_quantile(v, 3, -0.01, &q), EV_EINVAL);
    ck_assert_int_eq(ev_quantile(v, 3, 1.01, &q), EV_EINVAL);
    ck_assert_int_eq(ev_quantile(v, 3, NAN, &q), EV_EINVAL);
    ck_assert_int_eq(ev_quantile(v, 0, 0.5, &q), EV_EINVAL);
    ck_assert_int_eq(ev_quantile(bad, 2, 0.5, &q), EV_EINVAL);
    ck_same_bits(q, 42.0);
}
END_TEST

START_TEST(test_geomean_matches_hand_computed_values)
{
    double g = 0;
    /* {2, 8}: exp((log 2 + log 8) / 2) = exp(2 log 2) = 4 (exact in doubles). */
    double a[] = {8, 2};
    /* {1, 4}: exp((0 + log 4) / 2) = exp(log 2) = 2. */
    double b[] = {4, 1};
    /* {1, 10, 100}: exp((0 + 2.302585092994046 + 4.605170185988092) / 3)
     * = exp(2.302585092994046) = 10.000000000000002 (one ulp above 10). */
    double c[] = {100, 1, 10};
    /* {0.5, 2}: exp((-log 2 + log 2) / 2) = exp(0) = 1. */
    double d[] = {2, 0.5};
    ck_assert_int_eq(ev_geomean(a, 2, &g), EV_OK);
    ck_same_bits(g, 4.0);
    ck_assert_int_eq(ev_geomean(b, 2, &g), EV_OK);
    ck_same_bits(g, 2.0);
    ck_assert_int_eq(ev_geomean(c, 3, &g), EV_OK);
    ck_same_bits(g, 10.000000000000002);
    ck_assert_int_eq(ev_geomean(d, 2, &g), EV_OK);
    ck_same_bits(g, 1.0);
}
END_TEST

START_TEST(test_geomean_is_independent_of_input_order)
{
    double a[] = {0.7, 1.3, 0.2, 5.5, 0.9}, b[] = {5.5, 0.9, 1.3, 0.7, 0.2}, x, y;
    ck_assert_int_eq(ev_geomean(a, 5, &x), EV_OK);
    ck_assert_int_eq(ev_geomean(b, 5, &y), EV_OK);
    ck_same_bits(x, y);
    /* In sorted order: (log 0.2 + log 0.7 + log 0.9 + log 1.3 + log 5.5) / 5,
     * computed at run time by the same libm (volatile: no compile-time
     * folding, which may round differently). */
    {
        volatile double s0 = 0.2, s1 = 0.7, s2 = 0.9, s3 = 1.3, s4 = 5.5;
        double sum = 0;
        sum += log(s0);
        sum += log(s1);
        sum += log(s2);
        sum += log(s3);
        sum += log(s4);
        ck_same_bits(x, exp(sum / 5));
    }
}
END_TEST

START_TEST(test_geomean_refuses_non_positive_and_non_finite_values)
{
    double g = 42;
    double zero[] = {1, 0}, neg[] = {1, -2}, inf[] = {1, INFINITY}, nan[] = {NAN, 1};
    ck_assert_int_eq(ev_geomean(zero, 0, &g), EV_EINVAL);
    ck_assert_int_eq(ev_geomean(zero, 2, &g), EV_EINVAL);
    ck_assert_int_eq(ev_geomean(neg, 2, &g), EV_EINVAL);
    ck_assert_int_eq(ev_geomean(inf, 2, &g), EV_EINVAL);
    ck_assert_int_eq(ev_geomean(nan, 2, &g), EV_EINVAL);
    ck_same_bits(g, 42.0);
}
END_TEST

START_TEST(test_weighted_geomean_matches_hand_computed_values)
{
    double g = 0;
    double v[] = {8, 2};
    double equal[] = {1, 1}, skew[] = {1, 3}, one[] = {0, 5};
    /* Equal weights: the plain geomean, 4. */
    ck_assert_int_eq(ev_geomean_weighted(v, equal, 2, &g), EV_OK);
    ck_same_bits(g, 4.0);
    /* 2 with weight 3, 8 with weight 1: exp((3 log 2 + 1 log 8) / 4)
     * = exp(6 log 2 / 4) = 2^1.5 = sqrt 8; in doubles 2.82842712474619
     * (one ulp below sqrt(8) = 2.8284271247461903). */
    ck_assert_int_eq(ev_geomean_weighted(v, skew, 2, &g), EV_OK);
    ck_same_bits(g, 2.82842712474619);
    /* Zero weight drops a value: exp(5 log 2 / 5) = 2. */
    ck_assert_int_eq(ev_geomean_weighted(v, one, 2, &g), EV_OK);
    ck_same_bits(g, 2.0);
}
END_TEST

START_TEST(test_weighted_geomean_refuses_bad_weights)
{
    double v[] = {1, 2}, g = 42;
    double neg[] = {1, -1}, zero[] = {0, 0}, inf[] = {INFINITY, 1}, nan[] = {1, NAN};
    double badv[] = {0, 2}, ok[] = {1, 1};
    ck_assert_int_eq(ev_geomean_weighted(v, neg, 2, &g), EV_EINVAL);
    ck_assert_int_eq(ev_geomean_weighted(v, zero, 2, &g), EV_EINVAL);
    ck_assert_int_eq(ev_geomean_weighted(v, inf, 2, &g), EV_EINVAL);
    ck_assert_int_eq(ev_geomean_weighted(v, nan, 2, &g), EV_EINVAL);
    ck_assert_int_eq(ev_geomean_weighted(badv, ok, 2, &g), EV_EINVAL);
    ck_assert_int_eq(ev_geomean_weighted(v, ok, 0, &g), EV_EINVAL);
    ck_same_bits(g, 42.0);
}
END_TEST

START_TEST(test_sort_orders_values_with_negative_zero_first)
{
    double v[] = {3, 0.0, -1, INFINITY, -0.0, -INFINITY, 2}, out[7];
    ck_assert_int_eq(ev_sort_doubles(v, 7, out), EV_OK);
    ck_same_bits(out[0], -INFINITY);
    ck_same_bits(out[1], -1.0);
    ck_same_bits(out[2], -0.0);
    ck_same_bits(out[3], 0.0);
    ck_same_bits(out[4], 2.0);
    ck_same_bits(out[5], 3.0);
    ck_same_bits(out[6], INFINITY);
    ck_same_bits(v[0], 3.0);                           /* the input is a copy */
    ck_assert_int_eq(ev_sort_doubles(v, 7, v), EV_OK); /* in place */
    ck_assert_int_eq(memcmp(v, out, sizeof out), 0);
    ck_assert_int_eq(ev_sort_doubles(v, 0, out), EV_OK);
}
END_TEST

/* The reference orders: by value with -0 before +0 (sort), and by value
 * with -0 == +0, then position (argsort). */
static int ref_cmp(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    if (a != b)
        return a < b ? -1 : 1;
    return (signbit(b) != 0) - (signbit(a) != 0);
}
static const double *g_ref_v;
static int ref_cmp_pos(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    if (g_ref_v[a] != g_ref_v[b])
        return g_ref_v[a] < g_ref_v[b] ? -1 : 1;
    return (a > b) - (a < b);
}

/* Sizes on both sides of the radix threshold, values drawn with many ties,
 * both zeros, infinities, subnormals and negatives: the sort gives the
 * bits of a comparison sort, and the argsort its positions. */
START_TEST(test_sort_and_argsort_equal_a_comparison_sort_bit_for_bit)
{
    static const double pool[] = {0.0,      -0.0,      1.0,     -1.0,     2.5, -2.5,  1e-310, -1e-310,
                                  INFINITY, -INFINITY, DBL_MAX, -DBL_MAX, 3.0, 0.125, 1e300,  -7.75};
    uint64_t st = 0x9e3779b97f4a7c15ULL;
    for (size_t n = 0; n <= 1200; n += n < 140 ? 1 : 97) {
        double *v = malloc((n + 1) * sizeof *v), *got = malloc((n + 1) * sizeof *v),
               *want = malloc((n + 1) * sizeof *v);
        uint32_t *ord = malloc((n + 1) * sizeof *ord), *word = malloc((n + 1) * sizeof *word);
        ck_assert(v && got && want && ord && word);
        for (size_t i = 0; i < n; i++) {
            st ^= st << 13;
            st ^= st >> 7;
            st ^= st << 17;
            if (st % 3)
                v[i] = pool[(st >> 8) % (sizeof pool / sizeof pool[0])];
            else
                v[i] = ((double)(int64_t)(st >> 11) - 4503599627370496.0) * 1e-6;
            word[i] = (uint32_t)i;
        }
        memcpy(want, v, n * sizeof *v);
        qsort(want, n, sizeof *want, ref_cmp);
        ck_assert_int_eq(ev_sort_doubles(v, n, got), EV_OK);
        ck_assert_msg(n == 0 || !memcmp(got, want, n * sizeof *v), "sort differs at n = %zu", n);
        g_ref_v = v;
        qsort(word, n, sizeof *word, ref_cmp_pos);
        ck_assert_int_eq(ev_argsort_doubles(v, n, ord), EV_OK);
        ck_assert_msg(n == 0 || !memcmp(ord, word, n * sizeof *ord), "argsort differs at n = %zu", n);
        free(v);
        free(got);
        free(want);
        free(ord);
        free(word);
    }
    double bad[100];
    uint32_t o[100];
    for (int i = 0; i < 100; i++)
        bad[i] = i;
    bad[70] = NAN;
    ck_assert_int_eq(ev_argsort_doubles(bad, 100, o), EV_EINVAL);
    ck_assert_int_eq(ev_sort_doubles(bad, 100, bad), EV_EINVAL);
}
END_TEST

START_TEST(test_sort_refuses_nan_and_leaves_out_untouched)
{
    double v[] = {1, NAN}, out[2] = {7, 7};
    ck_assert_int_eq(ev_sort_doubles(v, 2, out), EV_EINVAL);
    ck_same_bits(out[0], 7.0);
    ck_same_bits(out[1], 7.0);
}
END_TEST

static Suite *stats_suite(void)
{
    Suite *s = suite_create("stats");
    TCase *tc;

    tc = tcase_create("median");
    tcase_add_test(tc, test_median_of_an_odd_count_is_the_middle_value);
    tcase_add_test(tc, test_median_of_an_even_count_uses_a_plus_half_the_difference);
    tcase_add_test(tc, test_median_is_independent_of_input_order);
    tcase_add_test(tc, test_median_refuses_empty_input_and_nan);
    suite_add_tcase(s, tc);

    tc = tcase_create("quantile");
    tcase_add_test(tc, test_quantile_type_7_matches_hand_computed_values);
    tcase_add_test(tc, test_quantile_at_one_half_equals_the_median_bit_for_bit);
    tcase_add_test(tc, test_quantile_refuses_bad_p_and_bad_values);
    suite_add_tcase(s, tc);

    tc = tcase_create("geomean");
    tcase_add_test(tc, test_geomean_matches_hand_computed_values);
    tcase_add_test(tc, test_geomean_is_independent_of_input_order);
    tcase_add_test(tc, test_geomean_refuses_non_positive_and_non_finite_values);
    tcase_add_test(tc, test_weighted_geomean_matches_hand_computed_values);
    tcase_add_test(tc, test_weighted_geomean_refuses_bad_weights);
    suite_add_tcase(s, tc);

    tc = tcase_create("sort");
    tcase_add_test(tc, test_sort_orders_values_with_negative_zero_first);
    tcase_add_test(tc, test_sort_refuses_nan_and_leaves_out_untouched);
    tcase_add_test(tc, test_sort_and_argsort_equal_a_comparison_sort_bit_for_bit);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int failed = ev_check_suite(stats_suite());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
