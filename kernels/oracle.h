/*
 * oracle.h: the FP64 oracle and the output validator.
 *
 * The oracle reduces each row in double, by the op's combine
 * (src/common/vocab.h): sum from -0.0 in index order; max and min with NaN
 * first and -0 below +0.  The validator compares an output array with it:
 *   MAX, MIN: bit-exact against the oracle's value rounded to the dtype
 *        (the extreme of stored values is itself stored exactly); a NaN row
 *        must hold the canonical NaN of the dtype.
 *   SUM: |out - ref| <= bound(row), with
 *          g     = gamma(N) * sum |x_i|,  gamma(N) = N*u / (1 - N*u), u = 2^-24
 *          bound = g + ulp_d(|ref| + g) / 2
 *        g bounds the error of any FP32 summation order of N terms
 *        (Higham, Accuracy and Stability, thm 4.3: each term takes part in
 *        at most N-1 roundings of relative size <= u; gamma(N) > gamma(N-1)
 *        also covers the oracle's own FP64 error, N * 2^-53 * sum|x|, for
 *        N < 2^28).  The half ulp of the output dtype d at |ref| + g covers
 *        the final RNE into the storage dtype (ulp is non-decreasing in
 *        magnitude, and the FP32 sum lies within g of ref).  A row whose
 *        ref is NaN must hold the canonical NaN; a ref of +-Inf must be
 *        matched exactly; an output of +-Inf passes only where |ref| + g
 *        reaches the dtype's overflow threshold with the same sign.
 *        N*u >= 1 gives an infinite bound (N >= 2^24; not reached by any
 *        protocol).
 *        With a declared depth D < N (a protocol's tolerances.sum_depth:
 *        every term takes part in at most D roundings, as in any blocked or
 *        tree order whose deepest chain is D additions), the same theorem
 *        gives g = gamma(D) * sum |x_i| for the kernel, plus the oracle's
 *        own FP64 error on ref and on sum |x_i| (each at most
 *        N 2^-53 / (1 - N 2^-53) relative), which gamma(N) covered above:
 *          g = (gamma(D) + gamma64(2N)) * sum |x_i|.
 *        D <= 0 or D >= N is the bound above, bit for bit.
 *   MEAN (combine SUM, finish MEAN: the FP32 sum s divided by N, then
 *        stored): ref is the FP64 sum S over N, and with g the SUM bound's
 *        g above (any order, or depth D), |s - S| <= g, so |s/N - ref| <=
 *        g/N.  The quotient q is s divided by N with at most three
 *        roundings of relative size <= u (N to FP32 when N >= 2^24, then
 *        one division; or 1/N and a multiplication, as torch's mean does),
 *        so |q - s/N| <= gamma(3) |s/N| <= gamma(3) (|ref| + g/N)
 *        (Higham, lemma 3.1).  With e = g/N + gamma(3) (|ref| + g/N):
 *          bound = e + ulp_d(|ref| + e) / 2
 *        the half ulp covering the final RNE into the storage dtype, as
 *        for SUM.  An output of +-Inf passes only where the FP32 sum could
 *        overflow (|ref| N + g at FP32's threshold) or the quotient could
 *        round to Inf in the dtype (|ref| + e at its threshold), with
 *        ref's sign; a NaN or infinite ref is matched as for SUM.  The
 *        oracle's own FP64 division (2^-53 |ref|) is inside gamma(3)'s
 *        slack.
 */
#ifndef EV_ORACLE_H
#define EV_ORACLE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "binding.h"
#include "hd.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The oracle for one row of n elements of dtype d at row. */
typedef struct ev_oracle_row {
    double ref;     /* the FP64 value of the row's op: the sum, max, min or mean (NaN when
                       any element is NaN) */
    double abs_sum; /* sum of |x_i| (ops of combine SUM; 0 for MAX and MIN) */
} ev_oracle_row;
void ev_oracle_reduce_row(ev_op op, ev_dtype d, const void *row, int64_t n, ev_oracle_row *out);

/*
 * The SUM bound's functions are defined here, inline, for host and device
 * alike (EV_HD): the worker, the verifier and the cuda check kernel
 * (kernels/plants_dev.cu) evaluate one definition, so a planted row's bound
 * is the same number on the GPU, in the worker and in verify-bundle
 * (kernels/plants.h).
 */

/* gamma(N) = N u / (1 - N u), u = 2^-24; +Inf when N u >= 1. */
EV_HD static inline double ev_oracle_gamma(int64_t n)
{
    double nu = (double)n * ldexp(1.0, -24);
    if (nu >= 1.0)
        return INFINITY;
    return nu / (1.0 - nu);
}

/* The factor of sum |x_i| in the SUM bound of a row of n terms summed
 * through at most depth roundings: gamma(n) when depth <= 0 or depth >= n,
 * else gamma(depth) + gamma64(2n) (above). */
EV_HD static inline double ev_oracle_sum_slack(int64_t n, int64_t depth)
{
    double n64;
    if (depth <= 0 || depth >= n)
        return ev_oracle_gamma(n);
    n64 = 2.0 * (double)n * ldexp(1.0, -53); /* gamma64(2n): the oracle's own error, ref and abs_sum */
    return ev_oracle_gamma(depth) + n64 / (1.0 - n64);
}

/* The unit in the last place of dtype d at magnitude |x| (subnormal spacing below). */
EV_HD static inline double ev_oracle_ulp(ev_dtype d, double x)
{
    int man_bits = d == EV_DTYPE_FP16 ? 10 : d == EV_DTYPE_BF16 ? 7 : 23;
    int emin = d == EV_DTYPE_FP16 ? -14 : -126;
    int e;
    x = fabs(x);
    if (isinf(x) || isnan(x))
        return INFINITY;
    if (x == 0.0)
        return ldexp(1.0, emin - man_bits);
    (void)frexp(x, &e); /* x = m 2^e, m in [0.5, 1): exponent e - 1 */
    e -= 1;
    if (e < emin)
        e = emin;
    return ldexp(1.0, e - man_bits);
}

/* The SUM bound of one row: g + ulp_d(|ref| + g)/2, g = ev_oracle_sum_slack(n, depth) * abs_sum. */
EV_HD static inline double ev_oracle_sum_bound(ev_dtype d, int64_t n, int64_t depth, double ref,
                                               double abs_sum)
{
    double g = ev_oracle_sum_slack(n, depth) * abs_sum;
    return g + 0.5 * ev_oracle_ulp(d, fabs(ref) + g);
}

/* The MEAN bound's e for a row of n terms (ref: the FP64 mean; abs_sum:
 * the sum of |x_i|): g/n + gamma(3) (|ref| + g/n), g =
 * ev_oracle_sum_slack(n, depth) * abs_sum (above). */
EV_HD static inline double ev_oracle_mean_slack(int64_t n, int64_t depth, double ref, double abs_sum)
{
    double gn = ev_oracle_sum_slack(n, depth) * abs_sum / (double)n;
    return gn + ev_oracle_gamma(3) * (fabs(ref) + gn);
}

/* The MEAN bound of one row: e + ulp_d(|ref| + e)/2, e = ev_oracle_mean_slack(...). */
EV_HD static inline double ev_oracle_mean_bound(ev_dtype d, int64_t n, int64_t depth, double ref,
                                                double abs_sum)
{
    double e = ev_oracle_mean_slack(n, depth, ref, abs_sum);
    return e + 0.5 * ev_oracle_ulp(d, fabs(ref) + e);
}

typedef struct ev_validation {
    int passed;
    double max_abs_err; /* over rows with finite ref and output; 0 when none */
    double bound;       /* the largest per-row bound used (0 for MAX) */
    int64_t mismatches; /* rows outside their bound (MAX: not bit-equal) */
    int64_t first_bad;  /* first mismatching row, -1 when none */
} ev_validation;

/*
 * Validates R outputs at out (host memory, dtype of s) against the oracle
 * of the input at in (host memory laid out as s says), SUM rows under the
 * bound of depth (0: any order).  OUT: *v.  Returns EV_OK whether or not
 * the output passed (v->passed says); EV_EINVAL for a bad shape.
 */
ev_status ev_oracle_validate(const ev_shape *s, const void *in, const void *out, int64_t depth,
                             ev_validation *v, ev_err *err);

/* The oracle of every row of the input at in (laid out as s says), for
 * validating before the output exists (a staged job computes it while
 * another job measures).  OUT: rows[0..R).  EV_EINVAL for a bad shape. */
ev_status ev_oracle_rows(const ev_shape *s, const void *in, ev_oracle_row *rows, ev_err *err);

/* ev_oracle_validate against rows from ev_oracle_rows of the same input:
 * the same verdict, the same numbers. */
ev_status ev_oracle_validate_rows(const ev_shape *s, const ev_oracle_row *rows, const void *out,
                                  int64_t depth, ev_validation *v, ev_err *err);

#ifdef __cplusplus
}
#endif

#endif
