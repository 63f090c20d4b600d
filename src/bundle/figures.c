/*
 * figures.c: intervals, exact Mann-Whitney p-values, tails and across-case
 * summaries from raw samples (see figures.h and docs/bundle-format.md).
 *
 * Randomness is splitmix64 with a state derived from the run seed and a
 * label naming the figure, so each interval is reproducible on its own and
 * independent of the order figures are computed in.  That is what lets the
 * bootstrap intervals (nearly all of the cost: 2000 resamples of every
 * job and pair) be computed first, spread over threads (boot_all), and
 * then written in document order: the bits do not depend on the threads.
 */
#include "bundle/figures.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "stats.h"
#include "bundle/jbuild.h"
#include "runner/plan.h"

/* ---- randomness ----------------------------------------------------------- */

/* FNV-1a, 64 bits, of the NUL-terminated s. */
static uint64_t fnv1a64(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= UINT64_C(1099511628211);
    }
    return h;
}

/* splitmix64: advances *state and returns the next 64 random bits. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* A uniform index in [0, n), n < 2^32: the top 32 bits scaled by n. */
static size_t draw(uint64_t *state, size_t n)
{
    return (size_t)(((splitmix64(state) >> 32) * (uint64_t)n) >> 32);
}

/* A uniform double in [0, 1): the top 53 bits of the next output. */
static double uniform01(uint64_t *state)
{
    return (double)(splitmix64(state) >> 11) * 0x1p-53;
}

/* ---- the exact distribution of a bootstrap median's ranks ---------------- */

/*
 * A resample draws n positions of the sorted sample uniformly with
 * replacement; its median is sorted[X1] (odd n) or the mean of sorted[X1]
 * and sorted[X2] (even n), X1, X2 the order statistics k1 = (n-1)/2 and
 * k2 = n/2 of the drawn positions.  Their law depends only on n:
 *
 *   P(X1 <= i) = P(Bin(n, (i+1)/n) >= k1+1)                       (cdf)
 *   even n, given X1 = i:  P(X2 > i) = up_i = num_i / P(X1 = i), where
 *     num_i = P(X1 = i, X2 > i) = b_i - b_{i-1} ((n-1-i)/(n-i))^m,
 *     b_i = P(Bin(n, (i+1)/n) = k1+1), b_{-1} = 0, m = n - k1 - 1;
 *   and given X1 = i < X2, the m draws above i are uniform on i+1..n-1,
 *     so P(X2 >= j) = ((n-j)/(n-1-i))^m for j > i.
 *
 * So a resample's median takes one uniform (inverse cdf: X1 = the least i
 * with u < cdf[i]) and, for even n, a second: X2 = i when u2 >= up_i, else
 * the least j > i with ((n-1-j)/(n-1-i))^m < 1 - u2/up_i.  Everything is
 * computed with + - * / only (no libm), so the bits are the same on every
 * IEEE-754 platform built without contraction.
 */
typedef struct mtab {
    size_t n;
    double *cdf; /* n: P(X1 <= i), cdf[n-1] = 1 */
    double *up;  /* n: P(X2 > X1 | X1 = i), even n (all 0 for odd n) */
    /* where to search: guide[k] = the least i with cdf[i] > k / 2^gbits,
     * k = 0 .. 2^gbits (a u in [k, k+1) / 2^gbits has its answer in
     * guide[k] .. guide[k+1]; exact, since u is a multiple of 2^-53) */
    uint32_t *guide;
    int gbits;
} mtab;

/* x^e by squaring (e >= 0), basic operations only. */
static double ipow(double x, size_t e)
{
    double r = 1.0;
    while (e) {
        if (e & 1)
            r *= x;
        x *= x;
        e >>= 1;
    }
    return r;
}

/*
 * Bin(n, p) with p = a/n (1 <= a <= n): OUT *tail = P(>= k), *pk =
 * P(= k) (k <= n).  The pmf is built outward from its mode with weight 1
 * by the ratios of consecutive terms, then normalised: no overflow, and
 * terms below the double range are 0.
 */
static void binom_at(size_t n, size_t a, size_t k, double *tail, double *pk)
{
    if (a >= n) {
        *tail = 1.0;
        *pk = k == n ? 1.0 : 0.0;
        return;
    }
    double odds = (double)a / (double)(n - a); /* p / (1 - p) */
    size_t mode = (n + 1) * a / n;
    if (mode > n)
        mode = n;
    double total = 1.0, above = mode >= k ? 1.0 : 0.0, atk = mode == k ? 1.0 : 0.0, w = 1.0;
    for (size_t m = mode + 1; m <= n && w != 0; m++) {
        w = w * ((double)(n - m + 1) / (double)m) * odds;
        total += w;
        if (m >= k)
            above += w;
        if (m == k)
            atk = w;
    }
    w = 1.0;
    for (size_t m = mode; m-- > 0 && w != 0;) {
        w = w * ((double)(m + 1) / (double)(n - m)) / odds;
        total += w;
        if (m >= k)
            above += w;
        if (m == k)
            atk = w;
    }
    *tail = above / total;
    *pk = atk / total;
}

/* Builds the table of n (1 <= n <= EV_FIG_EXACT_MAX).  OUT: *t (free with
 * mtab_free); EV_ENOMEM leaves *t empty. */
static ev_status mtab_init(size_t n, mtab *t)
{
    size_t k1 = (n - 1) / 2, m = n - k1 - 1;
    double prev_cdf = 0.0, prev_b = 0.0;
    t->n = n;
    t->gbits = 0;
    while (t->gbits < 16 && ((size_t)1 << t->gbits) < n)
        t->gbits++;
    t->cdf = calloc(n, sizeof *t->cdf);
    t->up = calloc(n, sizeof *t->up);
    t->guide = calloc(((size_t)1 << t->gbits) + 1, sizeof *t->guide);
    if (!t->cdf || !t->up || !t->guide) {
        free(t->cdf);
        free(t->up);
        free(t->guide);
        t->cdf = t->up = NULL;
        t->guide = NULL;
        return EV_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        double c, b;
        binom_at(n, i + 1, k1 + 1, &c, &b);
        if (c < prev_cdf)
            c = prev_cdf; /* rounding: keep the cdf monotone */
        if (i == n - 1)
            c = 1.0;
        t->cdf[i] = c;
        if (n % 2 == 0 && i < n - 1) {
            double p1 = c - prev_cdf;
            double num = b - prev_b * ipow((double)(n - 1 - i) / (double)(n - i), m);
            double up = p1 > 0 && num > 0 ? num / p1 : 0.0;
            t->up[i] = up > 1.0 ? 1.0 : up;
        }
        prev_cdf = c;
        prev_b = b;
    }
    size_t g = (size_t)1 << t->gbits, i = 0;
    for (size_t k = 0; k <= g; k++) {
        double at = ldexp((double)k, -t->gbits); /* exact */
        while (i < n - 1 && !(t->cdf[i] > at))
            i++;
        t->guide[k] = (uint32_t)i; /* k = g: at = 1, i = n - 1 (a bound only) */
    }
    return EV_OK;
}

/* Frees what mtab_init allocated (NULL-safe fields). */
static void mtab_free(mtab *t)
{
    free(t->cdf);
    free(t->up);
    free(t->guide);
    memset(t, 0, sizeof *t);
}

/* Draws (X1, X2) from table t with the uniforms of *st.  OUT: *i, *j. */
static void mtab_draw(const mtab *t, uint64_t *st, size_t *i_out, size_t *j_out)
{
    size_t n = t->n;
    double u = uniform01(st);
    size_t k = (size_t)ldexp(u, t->gbits); /* exact: u is a multiple of 2^-53 */
    size_t lo = t->guide[k], hi = t->guide[k + 1];
    while (lo < hi) { /* the least i with u < cdf[i] (cdf[n-1] = 1 > u) */
        size_t mid = lo + (hi - lo) / 2;
        if (u < t->cdf[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t i = lo, j = lo;
    if (n % 2 == 0) {
        double u2 = uniform01(st);
        if (u2 < t->up[i]) {
            double w = 1.0 - u2 / t->up[i], span = (double)(n - 1 - i);
            size_t m = n - (n - 1) / 2 - 1;
            j = i + 1;
            while (j < n - 1 && !(ipow((double)(n - 1 - j) / span, m) < w))
                j++;
        }
    }
    *i_out = i;
    *j_out = j;
}

/* See figures.h. */
ev_status ev_fig_median_dist(size_t n, double *p)
{
    mtab t;
    if (!n || n > EV_FIG_EXACT_MAX)
        return EV_ERANGE;
    if (mtab_init(n, &t))
        return EV_ENOMEM;
    size_t m = n - (n - 1) / 2 - 1;
    memset(p, 0, n * n * sizeof *p);
    for (size_t i = 0; i < n; i++) {
        double p1 = t.cdf[i] - (i ? t.cdf[i - 1] : 0.0);
        p[i * n + i] = p1 * (1.0 - t.up[i]);
        if (t.up[i] > 0) {
            double span = (double)(n - 1 - i);
            for (size_t j = i + 1; j < n; j++)
                p[i * n + j] =
                    p1 * t.up[i] * (ipow((double)(n - j) / span, m) - ipow((double)(n - 1 - j) / span, m));
        }
    }
    mtab_free(&t);
    return EV_OK;
}

/* ---- the exact Mann-Whitney test ---------------------------------------------- */

/* See figures.h. */
ev_status ev_fig_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u_out,
                              double *p_out)
{
    if (!na || !nb || na + nb > EV_FIG_MWU_MAX_TOTAL)
        return EV_ERANGE;
    /* U: pairs with a < b, ties counting one half (as 2U to stay integer) */
    uint64_t twice_u = 0;
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            twice_u += a[i] < b[j] ? 2u : a[i] == b[j] ? 1u : 0u;
    /* The null distribution: coefficients of the Gaussian binomial
     * [na + nb choose na]_q = prod_{i=1..na} (1 - q^(nb+i)) / (1 - q^i),
     * every intermediate an integer below 2^53 (exact in double). */
    size_t deg = na * nb;
    double *c = calloc(deg + 1, sizeof *c);
    if (!c)
        return EV_ENOMEM;
    c[0] = 1.0;
    for (size_t i = 1; i <= na; i++) {
        size_t m = nb + i;
        for (size_t k = deg; k >= m; k--) /* multiply by (1 - q^m) */
            c[k] -= c[k - m];
        for (size_t k = i; k <= deg; k++) /* divide by (1 - q^i) */
            c[k] += c[k - i];
    }
    double total = 0.0, lower = 0.0, upper = 0.0;
    for (size_t k = 0; k <= deg; k++) {
        total += c[k];
        if (2 * (uint64_t)k <= twice_u)
            lower += c[k];
        if (2 * (uint64_t)k >= twice_u)
            upper += c[k];
    }
    free(c);
    double p = 2.0 * (lower < upper ? lower : upper) / total;
    *u_out = (double)twice_u / 2.0;
    *p_out = p > 1.0 ? 1.0 : p;
    return EV_OK;
}

/* ---- building blocks ----------------------------------------------------------- */

/* The jobs a case's arm is read from, sorted by (case_index, arm, round,
 * job order): phase main or policy, no retry, case_index >= 0. */
typedef struct findex {
    const ev_fig_job **v;
    size_t n;
    const ev_fig_job *base; /* the input's jobs, for indexes into per-job arrays */
} findex;

/* The round of a job: from the label, the last part of its key
 * (ev_plan_label_round: "initial" 1, "round-<r>" r). */
static int64_t job_round(const ev_fig_job *j)
{
    const char *slash = strrchr(j->job_key, '/');
    return ev_plan_label_round(slash ? slash + 1 : j->job_key);
}

/* Orders index entries by case, arm, round, then input order (pointer order). */
static int cmp_entry(const void *pa, const void *pb)
{
    const ev_fig_job *a = *(const ev_fig_job *const *)pa, *b = *(const ev_fig_job *const *)pb;
    if (a->case_index != b->case_index)
        return a->case_index < b->case_index ? -1 : 1;
    int c = strcmp(a->arm, b->arm);
    if (c)
        return c;
    int64_t ra = job_round(a), rb = job_round(b);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Builds the index of in's eligible jobs.  EV_ENOMEM. */
static ev_status index_build(const ev_fig_input *in, findex *ix)
{
    ix->v = calloc(in->n_jobs + 1, sizeof *ix->v);
    ix->n = 0;
    ix->base = in->jobs;
    if (!ix->v)
        return EV_ENOMEM;
    for (size_t i = 0; i < in->n_jobs; i++) {
        const ev_fig_job *j = &in->jobs[i];
        /* main (round 1) and policy (auto; with rounds, rounds 2..k of
         * every arm) */
        if (j->case_index >= 0 && !j->retry && (!strcmp(j->phase, "main") || !strcmp(j->phase, "policy")))
            ix->v[ix->n++] = j;
    }
    qsort(ix->v, ix->n, sizeof *ix->v, cmp_entry);
    return EV_OK;
}

/* The jobs of case idx and arm, one per round in round order: *n of them
 * from the returned slot (*n is 0 when there is none). */
static const ev_fig_job *const *find_rounds(const findex *ix, int64_t idx, const char *arm, size_t *n)
{
    size_t lo = 0, hi = ix->n, k = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const ev_fig_job *j = ix->v[mid];
        int c = j->case_index != idx ? (j->case_index < idx ? -1 : 1) : strcmp(j->arm, arm);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo + k < ix->n && ix->v[lo + k]->case_index == idx && !strcmp(ix->v[lo + k]->arm, arm))
        k++;
    *n = k;
    return ix->v + lo;
}

/* Returns 1 when j is completed with hot samples. */
static int usable(const ev_fig_job *j)
{
    return j && j->n_hot > 0 && !strcmp(j->outcome, "completed");
}

/* A sample list prepared for resampling: its values sorted ascending and,
 * for each original position, the rank of its value there. */
typedef struct fsamp {
    double *sorted;
    uint32_t *rank;
    size_t n;
    const mtab *mt; /* the exact rank law of n, or NULL: resample */
} fsamp;

/* Prepares v[0..n) (n < 2^32, no NaN).  OUT: *s (free with fsamp_free). */
static ev_status fsamp_init(const double *v, size_t n, fsamp *s)
{
    uint32_t *order = calloc(n + 1, sizeof *order);
    s->sorted = calloc(n + 1, sizeof *s->sorted);
    s->rank = calloc(n + 1, sizeof *s->rank);
    s->n = n;
    s->mt = NULL;
    if (!order || !s->sorted || !s->rank || ev_argsort_doubles(v, n, order)) {
        free(order);
        return EV_ENOMEM;
    }
    /* by value, then position: equal values keep their order */
    for (size_t r = 0; r < n; r++) {
        s->sorted[r] = v[order[r]];
        s->rank[order[r]] = (uint32_t)r;
    }
    free(order);
    return EV_OK;
}

/* Frees what fsamp_init allocated (NULL-safe fields). */
static void fsamp_free(fsamp *s)
{
    free(s->sorted);
    free(s->rank);
    memset(s, 0, sizeof *s);
}

/*
 * The median of one bootstrap resample of s.  With a rank table (n <=
 * EV_FIG_EXACT_MAX) its ranks are drawn from their exact law (mtab_draw).
 * Otherwise n positions are drawn with replacement (draw(st, n) each) and
 * the median found from the drawn ranks by counting (the drawn values,
 * sorted, are sorted[] at the drawn ranks, sorted).  Either way the value
 * is ev_median's expression of the two middle values.  count holds n
 * counters.
 */
static double resample_median(uint64_t *st, const fsamp *s, uint32_t *count)
{
    size_t n = s->n, k1 = (n - 1) / 2, k2 = n / 2, cum = 0;
    double a = 0, b = 0;
    int have_a = 0;
    if (s->mt) { /* the exact law of the ranks: one or two uniforms */
        size_t i, j;
        mtab_draw(s->mt, st, &i, &j);
        a = s->sorted[i];
        b = s->sorted[j];
        return n % 2 ? a : a + (b - a) / 2;
    }
    memset(count, 0, n * sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[s->rank[draw(st, n)]]++;
    for (size_t r = 0; r < n; r++) {
        cum += count[r];
        if (!have_a && cum > k1) {
            a = s->sorted[r];
            have_a = 1;
        }
        if (cum > k2) {
            b = s->sorted[r];
            break;
        }
    }
    return n % 2 ? a : a + (b - a) / 2;
}

/* Ascending order of doubles (no NaN here). */
static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/*
 * Sorts v[0..n) ascending in place (no NaN).  When every value has its sign
 * bit clear (+0, positive, +inf) the order is unique and ev_sort_doubles
 * (a radix sort) gives it; otherwise qsort, as always (equal -0 and +0 in
 * the order it leaves them).
 */
static void sort_doubles(double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (signbit(v[i])) {
            qsort(v, n, sizeof *v, cmp_double);
            return;
        }
    (void)ev_sort_doubles(v, n, v);
}

/* Type-7 quantile of sorted s[0..n), n >= 1: ev_quantile's expression. */
static double sorted_quantile(const double *s, size_t n, double p)
{
    double h = (double)(n - 1) * p, fl = floor(h);
    size_t lo = (size_t)fl;
    if (lo >= n - 1)
        return s[n - 1];
    return s[lo] + (h - fl) * (s[lo + 1] - s[lo]);
}

/*
 * The median and P95 of a job's hot samples j[0..n) from s, their sorted
 * list (fsamp_init of the same values): the bits of ev_median and
 * ev_quantile(.., 0.95), without sorting again.  The sorted lists can
 * differ only in the order of tied -0 and +0, which changes at most the
 * sign of a zero result: a zero result is recomputed by ev_median /
 * ev_quantile themselves.  OUT: *med, *p95.
 */
static ev_status job_stats(const double *j, const fsamp *s, double *med, double *p95)
{
    size_t n = s->n;
    ev_status rc = EV_OK;
    double m =
        n % 2 ? s->sorted[n / 2] : s->sorted[n / 2 - 1] + (s->sorted[n / 2] - s->sorted[n / 2 - 1]) / 2;
    double q = sorted_quantile(s->sorted, n, 0.95);
    if (m == 0)
        rc = ev_median(j, n, &m);
    if (!rc && q == 0)
        rc = ev_quantile(j, n, 0.95, &q);
    if (!rc) {
        *med = m;
        *p95 = q;
    }
    return rc;
}

/* The central EV_FIG_LEVEL interval (type-7 quantiles) of v[0..n). */
static ev_status interval(double *v, size_t n, double *lo, double *hi)
{
    double tail = (1.0 - EV_FIG_LEVEL) / 2.0;
    for (size_t i = 0; i < n; i++)
        if (isnan(v[i]))
            return EV_ERANGE;
    /* v is scratch: sort it in place once, then the type-7 formula of
     * src/common/stats.c (ev_quantile), the same expression, so the same bits */
    sort_doubles(v, n);
    *lo = sorted_quantile(v, n, tail);
    *hi = sorted_quantile(v, n, 1.0 - tail);
    return EV_OK;
}

/* ---- bootstrap intervals, precomputed in parallel ------------------------- */

/* One bootstrap interval to compute: of a job's median (y NULL) or of the
 * ratio of two jobs' medians, with the state of its label. */
typedef struct btask {
    const fsamp *x, *y;
    uint64_t state;
    double lo, hi;
    int ok;
} btask;

/* The work shared by the threads of boot_all. */
typedef struct bwork {
    btask *t;
    size_t n;
    size_t next; /* next task to take (atomic) */
    size_t max_hot;
    ev_status rc;
} bwork;

/* Computes task t with scratch count (max_hot counters) and boot. */
static void boot_one(btask *t, uint32_t *count, double *boot)
{
    uint64_t st = t->state;
    for (size_t r = 0; r < EV_FIG_RESAMPLES; r++) {
        if (!t->y) {
            boot[r] = resample_median(&st, t->x, count);
        } else {
            double a = resample_median(&st, t->x, count);
            double c = resample_median(&st, t->y, count);
            boot[r] = a / c;
        }
    }
    t->ok = !interval(boot, EV_FIG_RESAMPLES, &t->lo, &t->hi);
}

/* A thread of boot_all: takes tasks until none is left. */
static void *boot_thread(void *arg)
{
    bwork *w = arg;
    uint32_t *count = calloc(w->max_hot + 1, sizeof *count);
    double *boot = calloc(EV_FIG_RESAMPLES, sizeof *boot);
    if (!count || !boot) {
        __atomic_store_n(&w->rc, EV_ENOMEM, __ATOMIC_RELAXED);
    } else {
        for (;;) {
            size_t i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED);
            if (i >= w->n)
                break;
            boot_one(&w->t[i], count, boot);
        }
    }
    free(count);
    free(boot);
    return NULL;
}

/* Computes every task of t[0..n), on up to 8 threads (one per online CPU;
 * the calling thread is one of them).  Returns EV_ENOMEM when a thread
 * could not get its scratch (the results are then incomplete). */
static ev_status boot_all(btask *t, size_t n, size_t max_hot)
{
    bwork w = {t, n, 0, max_hot, EV_OK};
    pthread_t th[8];
    size_t nt = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t want = cpus > 1 ? (size_t)(cpus > 8 ? 8 : cpus) : 1;
    if (want > n)
        want = n ? n : 1;
    for (size_t i = 1; i < want; i++) {
        if (pthread_create(&th[nt], NULL, boot_thread, &w))
            break; /* fewer threads: the others take the work */
        nt++;
    }
    boot_thread(&w);
    for (size_t i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    return w.rc;
}

/* ---- per job ---------------------------------------------------------------- */

/* Adds the per-job figures (median, P95, cold/hot, clock range). */
static void add_jobs(ev_jb *b, const ev_fig_input *in, const btask *const *jt, const double *jmed,
                     const double *jp95, cJSON *root)
{
    cJSON *arr = ev_jb_arr(b, root, "jobs");
    for (size_t i = 0; i < in->n_jobs && !b->rc; i++) {
        const ev_fig_job *j = &in->jobs[i];
        cJSON *o = ev_jb_obj(b, arr, NULL);
        double med = 0, p95 = 0, cmed = 0;
        int ok = usable(j);
        const char *why = strcmp(j->outcome, "completed") ? j->outcome : "no hot samples";
        ev_jb_str(b, o, "job_key", j->job_key);
        ev_jb_i64(b, o, "n_hot", (int64_t)j->n_hot);
        if (ok) {
            med = jmed[i];
            p95 = jp95[i];
        }
        ev_jb_dbl(b, o, "median_us", ok, med, why);
        /* the median's own bootstrap interval (label "job:<job_key>"),
         * computed beforehand by boot_all */
        double lo = 0, hi = 0;
        int ci_ok = 0;
        if (ok && !b->rc && jt[i]) {
            lo = jt[i]->lo;
            hi = jt[i]->hi;
            ci_ok = jt[i]->ok;
        }
        if (ok) {
            cJSON *ci = ev_jb_arr(b, o, "median_ci");
            ev_jb_dbl(b, ci, NULL, ci_ok, lo, NULL);
            ev_jb_dbl(b, ci, NULL, ci_ok, hi, NULL);
        } else {
            ev_jb_dbl(b, o, "median_ci", 0, 0, why);
        }
        ev_jb_dbl(b, o, "p95_us", ok, p95, why);
        int cok = ok && j->n_cold > 0;
        if (cok && !b->rc)
            b->rc = ev_median(j->cold, j->n_cold, &cmed);
        ev_jb_dbl(b, o, "cold_over_hot", cok, cmed / med, ok ? "no cold samples" : why);
        if (j->has_clock) {
            ev_jb_i64(b, o, "sm_clock_min_mhz", j->clock_min);
            ev_jb_i64(b, o, "sm_clock_max_mhz", j->clock_max);
        } else {
            ev_jb_put(b, o, "sm_clock_min_mhz", b->rc ? NULL : cJSON_CreateNull());
            ev_jb_put(b, o, "sm_clock_max_mhz", b->rc ? NULL : cJSON_CreateNull());
        }
    }
}

/* ---- per case and pair ------------------------------------------------------------ */

/* The arm pairs compared, in this order. */
typedef struct pair {
    const char *arm, *against;
} pair;

static const pair pairs[] = {
    {"rows1", "default"},
    {"rows2", "default"},
    {"rows4", "default"},
    {"auto", "default"},
    {"default", "cub"},
    {"rows1", "cub"},
    {"rows2", "cub"},
    {"rows4", "cub"},
    {"auto", "cub"},
    {"default", "torch-compile"},
    {"rows1", "torch-compile"},
    {"rows2", "torch-compile"},
    {"rows4", "torch-compile"},
    {"auto", "torch-compile"},
};
#define N_PAIRS (sizeof pairs / sizeof pairs[0])

/* An external kernel's arm ("ext-...", runner/ext_kernel.h) is compared
 * with our default, auto and both peers, after the pairs above. */
static const char *const ext_against[] = {"default", "auto", "cub", "torch-compile"};
#define N_EXT_AGAINST (sizeof ext_against / sizeof ext_against[0])

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The pairs of this run: the fixed ones, then each external arm of the
 * jobs (in name order) against ext_against.  OUT: *out (malloc'd), *n. */
static ev_status pair_list(const ev_fig_input *in, pair **out, size_t *n)
{
    const char **ext = malloc((in->n_jobs + 1) * sizeof *ext);
    size_t n_ext = 0, k = 0;
    pair *pl;

    if (!ext)
        return EV_ENOMEM;
    for (size_t i = 0; i < in->n_jobs; i++) {
        const char *a = in->jobs[i].arm;
        int seen = 0;
        if (strncmp(a, "ext-", 4))
            continue;
        for (size_t q = 0; q < n_ext && !seen; q++)
            seen = !strcmp(ext[q], a);
        if (!seen)
            ext[n_ext++] = a;
    }
    qsort(ext, n_ext, sizeof *ext, cmp_str);
    pl = malloc((N_PAIRS + n_ext * N_EXT_AGAINST) * sizeof *pl);
    if (!pl) {
        free(ext);
        return EV_ENOMEM;
    }
    for (size_t p = 0; p < N_PAIRS; p++)
        pl[k++] = pairs[p];
    for (size_t e = 0; e < n_ext; e++)
        for (size_t q = 0; q < N_EXT_AGAINST; q++)
            pl[k++] = (pair){ext[e], ext_against[q]};
    free(ext);
    *out = pl;
    *n = k;
    return EV_OK;
}

/* A case's arm pair over its rounds: the rounds in which both arms'
 * jobs are usable, paired by round number. */
typedef struct rpair {
    size_t n;                  /* paired rounds */
    const ev_fig_job *x1, *y1; /* the first paired round's jobs; with n = 0
                                   the first jobs, x1 the unusable one if any */
    double mean, sd;           /* of log(median x / median y) over them; sd when n >= 2 */
    double ratio, lo, hi;      /* the headline ratio and its interval */
    int has_ci;
    const char *verdict; /* "win", "loss", "not significant" */
} rpair;

/* Pairs the rounds X[0..nx) and Y[0..ny) (each in round order) of a case. */
static void pair_rounds(const ev_fig_input *in, const double *jmed, const ev_fig_job *const *X, size_t nx,
                        const ev_fig_job *const *Y, size_t ny, rpair *rp)
{
    double sum = 0, ss = 0;
    size_t i = 0, j = 0;

    memset(rp, 0, sizeof *rp);
    rp->x1 = nx ? X[0] : NULL;
    rp->y1 = ny ? Y[0] : NULL;
    /* two passes over the merged rounds: the mean, then the squares */
    for (int pass = 0; pass < 2; pass++) {
        size_t n = 0;
        for (i = 0, j = 0; i < nx && j < ny;) {
            int64_t ri = job_round(X[i]), rj = job_round(Y[j]);
            if (ri < rj) {
                i++;
                continue;
            }
            if (rj < ri) {
                j++;
                continue;
            }
            if (usable(X[i]) && usable(Y[j])) {
                double l = log(jmed[X[i] - in->jobs]) - log(jmed[Y[j] - in->jobs]);
                if (!n && !pass) {
                    rp->x1 = X[i];
                    rp->y1 = Y[j];
                }
                if (!pass)
                    sum += l;
                else
                    ss += (l - rp->mean) * (l - rp->mean);
                n++;
            }
            i++;
            j++;
        }
        if (!pass) {
            rp->n = n;
            rp->mean = n ? sum / (double)n : 0;
        }
    }
    if (rp->n >= 2)
        rp->sd = sqrt(ss / (double)(rp->n - 1));
}

/* Sets rp's headline: over rounds (k > 1: exp of the mean log ratio, a
 * t interval on it) or within the one round's processes (k = 1: the ratio
 * of medians and its bootstrap interval bt); then the verdict. */
static void pair_headline(rpair *rp, int64_t k, const double *jmed, const ev_fig_input *in, const btask *bt)
{
    double t;
    if (!rp->n)
        return;
    if (k == 1) {
        rp->ratio = jmed[rp->x1 - in->jobs] / jmed[rp->y1 - in->jobs];
        rp->has_ci = bt && bt->ok;
        rp->lo = rp->has_ci ? bt->lo : 0;
        rp->hi = rp->has_ci ? bt->hi : 0;
    } else {
        rp->ratio = exp(rp->mean);
        if (rp->n >= 2 && !ev_t975((int64_t)rp->n - 1, &t)) {
            double half = t * rp->sd / sqrt((double)rp->n);
            rp->lo = exp(rp->mean - half);
            rp->hi = exp(rp->mean + half);
            rp->has_ci = isfinite(rp->lo) && isfinite(rp->hi);
        }
    }
    rp->verdict = rp->has_ci && rp->hi < 1.0   ? "win"
                  : rp->has_ci && rp->lo > 1.0 ? "loss"
                                               : "not significant";
}

/* Adds one pair object for case idx to arr (and a tail disclosure to tails). */
static void add_pair(ev_jb *b, int64_t idx, const pair *pr, int64_t k, const rpair *rp, const btask *bt,
                     const ev_fig_input *in, const double *jmed, const double *jp95, cJSON *arr, cJSON *tails)
{
    cJSON *o = ev_jb_obj(b, arr, NULL);
    char why[160];
    ev_jb_i64(b, o, "case_index", idx);
    ev_jb_str(b, o, "arm", pr->arm);
    ev_jb_str(b, o, "against", pr->against);
    ev_jb_str(b, o, "basis", k > 1 ? "rounds" : "within-process");
    ev_jb_i64(b, o, "n_rounds", (int64_t)rp->n);
    ev_jb_str(b, o, "arm_job", rp->x1->job_key);
    ev_jb_str(b, o, "against_job", rp->y1->job_key);
    if (!rp->n) {
        const ev_fig_job *bad = !usable(rp->x1) ? rp->x1 : !usable(rp->y1) ? rp->y1 : NULL;
        if (bad)
            snprintf(why, sizeof why, "%s %s", bad->arm,
                     strcmp(bad->outcome, "completed") ? bad->outcome : "no hot samples");
        else
            snprintf(why, sizeof why, "no round in which both arms completed");
        ev_jb_dbl(b, o, "ratio", 0, 0, why);
        ev_jb_str(b, o, "verdict", "no ratio");
        return;
    }
    ev_jb_dbl(b, o, "ratio", 1, rp->ratio, NULL);
    if (rp->has_ci) {
        cJSON *ci = ev_jb_arr(b, o, "interval");
        ev_jb_dbl(b, ci, NULL, 1, rp->lo, NULL);
        ev_jb_dbl(b, ci, NULL, 1, rp->hi, NULL);
    } else {
        ev_jb_dbl(b, o, "interval", 0, 0,
                  k > 1 ? "one paired round: no interval over rounds"
                        : "the bootstrap interval is not finite");
    }
    ev_jb_bool(b, o, "significant", rp->has_ci && (rp->hi < 1.0 || rp->lo > 1.0));
    ev_jb_str(b, o, "verdict", rp->verdict);
    ev_jb_dbl(b, o, "log_ratio_mean", 1, rp->mean, NULL);
    ev_jb_dbl(b, o, "log_ratio_sd", rp->n >= 2, rp->sd, "one paired round");

    /* within the first paired round's two processes */
    const ev_fig_job *x = rp->x1, *y = rp->y1;
    size_t xi = (size_t)(x - in->jobs), yi = (size_t)(y - in->jobs);
    double ratio = jmed[xi] / jmed[yi], p95r = jp95[xi] / jp95[yi];
    double lo = bt ? bt->lo : 0, hi = bt ? bt->hi : 0, u = 0, p = 0;
    int ci_ok = bt && bt->ok;
    ev_status mrc = ev_fig_mann_whitney(x->hot, x->n_hot, y->hot, y->n_hot, &u, &p);
    if (mrc == EV_ENOMEM && !b->rc)
        b->rc = mrc;
    cJSON *w = ev_jb_obj(b, o, "within");
    ev_jb_i64(b, w, "round", job_round(x));
    ev_jb_i64(b, w, "n_arm", (int64_t)x->n_hot);
    ev_jb_i64(b, w, "n_against", (int64_t)y->n_hot);
    ev_jb_dbl(b, w, "ratio_of_medians", 1, ratio, NULL);
    ev_jb_dbl(b, w, "ci_low", ci_ok, lo, "not finite");
    ev_jb_dbl(b, w, "ci_high", ci_ok, hi, "not finite");
    ev_jb_dbl(b, w, "mwu_u", !mrc, u, "too many samples for the exact test");
    ev_jb_dbl(b, w, "mwu_p", !mrc, p, "too many samples for the exact test");
    ev_jb_dbl(b, w, "p95_ratio", 1, p95r, NULL);
    int tail = rp->ratio < 1.0 && p95r > 1.0;
    ev_jb_bool(b, o, "tail_disclosure", tail);
    if (tail) {
        cJSON *t = ev_jb_obj(b, tails, NULL);
        ev_jb_i64(b, t, "case_index", idx);
        ev_jb_str(b, t, "arm", pr->arm);
        ev_jb_str(b, t, "against", pr->against);
        ev_jb_dbl(b, t, "ratio", 1, rp->ratio, NULL);
        ev_jb_dbl(b, t, "p95_ratio", 1, p95r, NULL);
    }
}

/* Sorted distinct case indexes of the indexed jobs.  OUT: *out, *n. */
static ev_status case_list(const findex *ix, int64_t **out, size_t *n)
{
    int64_t *v = calloc(ix->n + 1, sizeof *v);
    size_t k = 0;
    if (!v)
        return EV_ENOMEM;
    for (size_t i = 0; i < ix->n; i++)
        if (!k || v[k - 1] != ix->v[i]->case_index)
            v[k++] = ix->v[i]->case_index;
    *out = v;
    *n = k;
    return EV_OK;
}

/* ---- across cases -------------------------------------------------------------- */

/* Adds the across-case summary of pair pr: per case its arms' estimates
 * mx[i], my[i] (over rounds), its headline ratio hr[i] and verdict vd[i]. */
static void add_across(ev_jb *b, const ev_fig_input *in, const pair *pr, const int64_t *idx, const double *mx,
                       const double *my, const double *hr, const char *const *vd, size_t n, cJSON *arr)
{
    cJSON *o = ev_jb_obj(b, arr, NULL);
    ev_jb_str(b, o, "arm", pr->arm);
    ev_jb_str(b, o, "against", pr->against);
    ev_jb_i64(b, o, "n_cases", (int64_t)n);
    cJSON *cs = ev_jb_arr(b, o, "cases");
    for (size_t i = 0; i < n; i++)
        ev_jb_i64(b, cs, NULL, idx[i]);
    if (!n) {
        ev_jb_dbl(b, o, "ratio_of_sums", 0, 0, "no case with both arms completed");
        return;
    }
    fsamp fr = {NULL, NULL, 0, NULL};
    double *ratios = calloc(n, sizeof *ratios), *logs = calloc(n, sizeof *logs),
           *rs = calloc(EV_FIG_RESAMPLES, sizeof *rs), *gm = calloc(EV_FIG_RESAMPLES, sizeof *gm);
    uint32_t *count = calloc(n, sizeof *count);
    if (!ratios || !logs || !rs || !gm || !count) {
        if (!b->rc)
            b->rc = EV_ENOMEM;
        goto out;
    }
    double sx = 0, sy = 0, geo = 0;
    int64_t wins = 0, losses = 0, not_sig = 0;
    int geo_ok = 1;
    for (size_t i = 0; i < n; i++) {
        sx += mx[i];
        sy += my[i];
        ratios[i] = hr[i];
        wins += !strcmp(vd[i], "win");
        losses += !strcmp(vd[i], "loss");
        not_sig += strcmp(vd[i], "win") && strcmp(vd[i], "loss");
        geo_ok &= isfinite(ratios[i]) && ratios[i] > 0;
    }
    if (geo_ok && !b->rc)
        b->rc = ev_geomean(ratios, n, &geo);
    if (geo_ok && !b->rc)
        b->rc = fsamp_init(ratios, n, &fr);
    for (size_t r = 0; geo_ok && !b->rc && r < n; r++)
        logs[r] = log(fr.sorted[r]);
    char label[160];
    snprintf(label, sizeof label, "across:%s:%s", pr->arm, pr->against);
    uint64_t st = (uint64_t)in->seed ^ fnv1a64(label);
    for (size_t r = 0; r < EV_FIG_RESAMPLES && !b->rc; r++) {
        double bx = 0, by = 0, sum = 0;
        memset(count, 0, n * sizeof *count);
        for (size_t i = 0; i < n; i++) {
            size_t k = draw(&st, n);
            bx += mx[k];
            by += my[k];
            if (geo_ok)
                count[fr.rank[k]]++;
        }
        rs[r] = bx / by;
        /* ev_geomean of the drawn ratios: logs summed in ascending order */
        for (size_t q = 0; geo_ok && q < n; q++)
            for (uint32_t c = 0; c < count[q]; c++)
                sum += logs[q];
        gm[r] = exp(sum / (double)n);
    }
    double lo = 0, hi = 0, glo = 0, ghi = 0;
    int ok_rs = !b->rc && !interval(rs, EV_FIG_RESAMPLES, &lo, &hi);
    int ok_gm = !b->rc && geo_ok && !interval(gm, EV_FIG_RESAMPLES, &glo, &ghi);
    ev_jb_dbl(b, o, "ratio_of_sums", 1, sx / sy, NULL);
    cJSON *ci = ev_jb_arr(b, o, "ratio_of_sums_ci");
    ev_jb_dbl(b, ci, NULL, ok_rs, lo, NULL);
    ev_jb_dbl(b, ci, NULL, ok_rs, hi, NULL);
    ev_jb_dbl(b, o, "geomean_ratio", geo_ok, geo, "a per-case ratio is not positive and finite");
    if (geo_ok) {
        cJSON *gci = ev_jb_arr(b, o, "geomean_ratio_ci");
        ev_jb_dbl(b, gci, NULL, ok_gm, glo, NULL);
        ev_jb_dbl(b, gci, NULL, ok_gm, ghi, NULL);
    } else {
        ev_jb_dbl(b, o, "geomean_ratio_ci", 0, 0, "a per-case ratio is not positive and finite");
    }
    ev_jb_i64(b, o, "wins", wins);
    ev_jb_i64(b, o, "losses", losses);
    ev_jb_i64(b, o, "not_significant", not_sig);
out:
    fsamp_free(&fr);
    free(ratios);
    free(logs);
    free(rs);
    free(gm);
    free(count);
}

/* ---- per case and arm, over rounds ------------------------------------------------ */

/* The estimate over rounds (ev_round_estimate) of the usable jobs among
 * X[0..n).  EV_EINVAL when none is usable. */
static ev_status estimate(const ev_fig_job *const *X, size_t n, const ev_fig_input *in, const double *jmed,
                          double *out)
{
    double v[EV_FIG_MAX_ROUNDS];
    size_t m = 0;
    for (size_t i = 0; i < n && m < EV_FIG_MAX_ROUNDS; i++)
        if (usable(X[i]))
            v[m++] = jmed[X[i] - in->jobs];
    return m ? ev_round_estimate(v, m, out) : EV_EINVAL;
}

/* Adds "arms": per case and arm (index order) its rounds' medians and the
 * estimate over them. */
static void add_arms(ev_jb *b, const findex *ix, const double *jmed, cJSON *root)
{
    cJSON *arr = ev_jb_arr(b, root, "arms");
    for (size_t i = 0; i < ix->n && !b->rc;) {
        size_t n;
        const ev_fig_job *const *X = find_rounds(ix, ix->v[i]->case_index, ix->v[i]->arm, &n);
        cJSON *o = ev_jb_obj(b, arr, NULL);
        ev_jb_i64(b, o, "case_index", X[0]->case_index);
        ev_jb_str(b, o, "arm", X[0]->arm);
        ev_jb_i64(b, o, "n_rounds", (int64_t)n);
        cJSON *rs = ev_jb_arr(b, o, "round_medians_us");
        double v[EV_FIG_MAX_ROUNDS], est = 0;
        size_t m = 0;
        for (size_t q = 0; q < n; q++) {
            int ok = usable(X[q]);
            double med = ok ? jmed[X[q] - ix->base] : 0;
            ev_jb_dbl(b, rs, NULL, ok, med, NULL);
            if (ok && m < EV_FIG_MAX_ROUNDS)
                v[m++] = med;
        }
        ev_jb_i64(b, o, "n_usable", (int64_t)m);
        int eok = m && !ev_round_estimate(v, m, &est);
        ev_jb_dbl(b, o, "estimate_us", eok, est, "no round completed with hot samples");
        i += n ? n : 1;
    }
}

/* ---- entry points -------------------------------------------------------------- */

/* See figures.h. */
ev_status ev_figures_build(const ev_fig_input *in, cJSON **out, ev_err *err)
{
    ev_jb b = {EV_OK};
    int64_t *cases = NULL;
    size_t n_cases = 0, max_hot = 1;
    double *mx = NULL, *my = NULL, *hr = NULL;
    const char **vd = NULL;
    rpair *rps = NULL;
    int64_t k = 1; /* the run's rounds: the highest round of an indexed job */
    btask *tasks = NULL, **jt = NULL, **pt = NULL;
    size_t n_tasks = 0;
    fsamp *fs = NULL;
    mtab *mts = NULL;                  /* one rank table per distinct n_hot */
    double *jmed = NULL, *jp95 = NULL; /* per usable job: median, P95 of hot */
    size_t n_mts = 0;
    findex ix = {NULL, 0, NULL};
    int64_t *used = NULL;
    cJSON *root = NULL;
    pair *pl = NULL;
    size_t n_pl = 0;

    for (size_t i = 0; i < in->n_jobs; i++) {
        const ev_fig_job *j = &in->jobs[i];
        for (size_t q = 0; q < j->n_hot; q++)
            if (isnan(j->hot[q]))
                return ev_err_set(err, EV_EINVAL, "figures: %s: a hot sample is NaN", j->job_key);
        for (size_t q = 0; q < j->n_cold; q++)
            if (isnan(j->cold[q]))
                return ev_err_set(err, EV_EINVAL, "figures: %s: a cold sample is NaN", j->job_key);
        if (j->n_hot > max_hot)
            max_hot = j->n_hot;
    }
    if (max_hot >= UINT32_MAX)
        return ev_err_set(err, EV_ERANGE, "figures: a job has 2^32 or more hot samples");
    if ((b.rc = index_build(in, &ix)) || (b.rc = case_list(&ix, &cases, &n_cases)) ||
        (b.rc = pair_list(in, &pl, &n_pl)))
        goto out;
    fs = calloc(in->n_jobs + 1, sizeof *fs);
    mts = calloc(in->n_jobs + 1, sizeof *mts);
    jmed = calloc(in->n_jobs + 1, sizeof *jmed);
    jp95 = calloc(in->n_jobs + 1, sizeof *jp95);
    if (!fs || !mts || !jmed || !jp95) {
        b.rc = EV_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < in->n_jobs && !b.rc; i++) {
        if (!usable(&in->jobs[i]))
            continue;
        b.rc = fsamp_init(in->jobs[i].hot, in->jobs[i].n_hot, &fs[i]);
        if (!b.rc)
            b.rc = job_stats(in->jobs[i].hot, &fs[i], &jmed[i], &jp95[i]);
    }
    for (size_t i = 0; i < in->n_jobs && !b.rc; i++) {
        size_t n = in->jobs[i].n_hot, t = 0;
        if (!usable(&in->jobs[i]) || !n || n > EV_FIG_EXACT_MAX)
            continue;
        while (t < n_mts && mts[t].n != n)
            t++;
        if (t == n_mts && !(b.rc = mtab_init(n, &mts[t])))
            n_mts++;
        fs[i].mt = &mts[t];
    }
    if (b.rc)
        goto out;
    /* Every bootstrap interval first (boot_all), then the document. */
    tasks = calloc(in->n_jobs + n_pl * n_cases + 1, sizeof *tasks);
    jt = calloc(in->n_jobs + 1, sizeof *jt);
    pt = calloc(n_pl * n_cases + 1, sizeof *pt);
    if (!tasks || !jt || !pt) {
        b.rc = EV_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < in->n_jobs; i++) {
        if (!usable(&in->jobs[i]))
            continue;
        char label[160];
        snprintf(label, sizeof label, "job:%s", in->jobs[i].job_key);
        tasks[n_tasks] = (btask){&fs[i], NULL, (uint64_t)in->seed ^ fnv1a64(label), 0, 0, 0};
        jt[i] = &tasks[n_tasks++];
    }
    /* the rounds paired, per pair and case; the first paired round's
     * bootstrap interval is a task */
    rps = calloc(n_pl * n_cases + 1, sizeof *rps);
    if (!rps) {
        b.rc = EV_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < ix.n; i++)
        if (job_round(ix.v[i]) > k)
            k = job_round(ix.v[i]);
    for (size_t p = 0; p < n_pl; p++)
        for (size_t c = 0; c < n_cases; c++) {
            size_t nx, ny;
            const ev_fig_job *const *X = find_rounds(&ix, cases[c], pl[p].arm, &nx);
            const ev_fig_job *const *Y = find_rounds(&ix, cases[c], pl[p].against, &ny);
            rpair *rp = &rps[p * n_cases + c];
            if (!nx || !ny)
                continue;
            pair_rounds(in, jmed, X, nx, Y, ny, rp);
            if (!rp->n)
                continue;
            char label[160];
            snprintf(label, sizeof label, "pair:%" PRId64 ":%s:%s", cases[c], pl[p].arm, pl[p].against);
            tasks[n_tasks] = (btask){
                &fs[rp->x1 - in->jobs], &fs[rp->y1 - in->jobs], (uint64_t)in->seed ^ fnv1a64(label), 0, 0, 0};
            pt[p * n_cases + c] = &tasks[n_tasks++];
        }
    if ((b.rc = boot_all(tasks, n_tasks, max_hot)))
        goto out;
    mx = calloc(n_cases + 1, sizeof *mx);
    my = calloc(n_cases + 1, sizeof *my);
    hr = calloc(n_cases + 1, sizeof *hr);
    vd = calloc(n_cases + 1, sizeof *vd);
    used = calloc(n_cases + 1, sizeof *used);
    root = cJSON_CreateObject();
    if (!mx || !my || !hr || !vd || !used || !root) {
        b.rc = EV_ENOMEM;
        goto out;
    }

    cJSON *m = ev_jb_obj(&b, root, "method");
    ev_jb_str(&b, m, "bootstrap",
              "percentile interval of the ratio of medians over samples resampled with replacement "
              "(each arm on its own); across cases, cases resampled with replacement (paired: both arms of a "
              "case move together)");
    ev_jb_i64(&b, m, "resamples", EV_FIG_RESAMPLES);
    ev_jb_dbl(&b, m, "level", 1, EV_FIG_LEVEL, NULL);
    ev_jb_i64(&b, m, "seed", in->seed);
    ev_jb_str(&b, m, "rng",
              "splitmix64; state = seed XOR fnv1a64(label); index = ((next >> 32) * n) >> 32; "
              "uniform = (next >> 11) * 2^-53");
    ev_jb_str(&b, m, "resampled_median",
              "for n <= 4096 samples, the ranks of a resample's median are drawn from their exact law (one "
              "uniform by inverse CDF for the lower middle rank, a second for the upper when n is even), "
              "the same distribution as n draws with replacement; above, n draws with replacement");
    ev_jb_str(&b, m, "quantile", "type 7 (linear), as src/common/stats.h");
    ev_jb_str(&b, m, "mann_whitney",
              "exact two-sided p = min(1, 2 min(P(U <= u), P(U >= u))) under no ties; U counts pairs with "
              "arm < against (ties one half)");
    ev_jb_dbl(&b, m, "alpha", 1, EV_FIG_ALPHA, NULL);
    ev_jb_str(
        &b, m, "rounds",
        "a pair's ratio, interval and verdict: with k > 1 rounds, over the n rounds in which both arms' jobs "
        "completed (paired by round): ratio = exp(mean of log(median arm / median against)), interval = "
        "exp(mean -+ t(0.975, n - 1) sd / sqrt(n)) (Student t over rounds as independent replicates; none "
        "when n < 2); with one round (basis within-process) the ratio of medians and its bootstrap "
        "interval, which describe the two processes only. verdict: win when the interval lies below 1, "
        "loss when above, not significant otherwise. 'within' holds the first paired round's "
        "within-process figures");
    ev_jb_str(&b, m, "estimate",
              "per case and arm over rounds: the hot median of its one usable round, else the geometric mean "
              "of its usable rounds' hot medians (src/common/stats.h, ev_round_estimate)");
    ev_jb_str(&b, m, "tails",
              "P95 is the empirical type-7 quantile of the hot samples; seven samples support only "
              "descriptive quantiles, not tail guarantees");

    add_jobs(&b, in, (const btask *const *)jt, jmed, jp95, root);

    add_arms(&b, &ix, jmed, root);

    cJSON *parr = ev_jb_arr(&b, root, "pairs");
    cJSON *tails = ev_jb_arr(&b, root, "tail_disclosures");
    cJSON *across = ev_jb_arr(&b, root, "across");
    for (size_t p = 0; p < n_pl && !b.rc; p++) {
        size_t n_used = 0;
        int planned = 0;
        for (size_t c = 0; c < n_cases && !b.rc; c++) {
            rpair *rp = &rps[p * n_cases + c];
            if (!rp->x1 || !rp->y1)
                continue;
            planned = 1;
            pair_headline(rp, k, jmed, in, pt[p * n_cases + c]);
            add_pair(&b, cases[c], &pl[p], k, rp, pt[p * n_cases + c], in, jmed, jp95, parr, tails);
            if (rp->n && !b.rc) {
                size_t nx, ny;
                const ev_fig_job *const *X = find_rounds(&ix, cases[c], pl[p].arm, &nx);
                const ev_fig_job *const *Y = find_rounds(&ix, cases[c], pl[p].against, &ny);
                if (estimate(X, nx, in, jmed, &mx[n_used]) || estimate(Y, ny, in, jmed, &my[n_used]))
                    continue; /* cannot happen: a paired round is usable */
                hr[n_used] = rp->ratio;
                vd[n_used] = rp->verdict;
                used[n_used++] = cases[c];
            }
        }
        if (planned)
            add_across(&b, in, &pl[p], used, mx, my, hr, vd, n_used, across);
    }
out:
    free(pl);
    free(cases);
    free(tasks);
    free(jt);
    free(pt);
    if (fs)
        for (size_t i = 0; i < in->n_jobs; i++)
            fsamp_free(&fs[i]);
    free(fs);
    for (size_t t = 0; t < n_mts; t++)
        mtab_free(&mts[t]);
    free(mts);
    free(jmed);
    free(jp95);
    free(ix.v);
    free(mx);
    free(my);
    free(hr);
    free(vd);
    free(rps);
    free(used);
    if (b.rc) {
        cJSON_Delete(root);
        return ev_err_set(err, b.rc, "figures: %s", ev_strerror(b.rc));
    }
    *out = root;
    return EV_OK;
}

/* See figures.h. */
ev_status ev_figures_canon(cJSON *tree)
{
    return ev_json_canon_numbers(tree);
}
