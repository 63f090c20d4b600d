/*
 * figures_stats.c: the statistics of the figures (figures_int.h): seeded
 * randomness (splitmix64 from the run seed and a label), the exact law of a
 * bootstrap median's ranks, the exact Mann-Whitney test, quantiles, and
 * the bootstrap intervals, computed over threads with the same bits as in
 * one.
 */
#include "figures_int.h"

/* ---- randomness ----------------------------------------------------------- */

/* FNV-1a, 64 bits, of the NUL-terminated s. */
uint64_t fg_fnv1a64(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= UINT64_C(1099511628211);
    }
    return h;
}

/* splitmix64: advances *state and returns the next 64 random bits. */
uint64_t fg_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* A uniform index in [0, n), n < 2^32: the top 32 bits scaled by n. */
size_t fg_draw(uint64_t *state, size_t n)
{
    return (size_t)(((fg_splitmix64(state) >> 32) * (uint64_t)n) >> 32);
}

/* A uniform double in [0, 1): the top 53 bits of the next output. */
static double uniform01(uint64_t *state)
{
    return (double)(fg_splitmix64(state) >> 11) * 0x1p-53;
}

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
ev_status fg_mtab_init(size_t n, mtab *t)
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
void fg_mtab_free(mtab *t)
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
    if (fg_mtab_init(n, &t))
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
    fg_mtab_free(&t);
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

/* Prepares v[0..n) (n < 2^32, no NaN).  OUT: *s (free with fsamp_free). */
ev_status fg_fsamp_init(const double *v, size_t n, fsamp *s)
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
void fg_fsamp_free(fsamp *s)
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
        count[s->rank[fg_draw(st, n)]]++;
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
ev_status fg_job_stats(const double *j, const fsamp *s, double *med, double *p95)
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
ev_status fg_interval(double *v, size_t n, double *lo, double *hi)
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
    t->ok = !fg_interval(boot, EV_FIG_RESAMPLES, &t->lo, &t->hi);
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
ev_status fg_boot_all(btask *t, size_t n, size_t max_hot)
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
