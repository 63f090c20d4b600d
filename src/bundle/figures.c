/*
 * figures.c: intervals, exact Mann-Whitney p-values, tails and across-case
 * summaries from raw samples (see figures.h and docs/bundle-format.md).
 *
 * Randomness is splitmix64 with a state derived from the run seed and a
 * label naming the figure, so each interval is reproducible on its own and
 * independent of the order figures are computed in.
 */
#include "bundle/figures.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "stats.h"

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

/* A builder with a sticky status (as in export.c). */
typedef struct fb {
    ev_status rc;
} fb;

/* Adds item under key (or to an array); frees item and sets rc on failure. */
static cJSON *f_put(fb *b, cJSON *parent, const char *key, cJSON *item)
{
    if (b->rc || !parent || !item) {
        if (!b->rc)
            b->rc = EV_ENOMEM;
        cJSON_Delete(item);
        return NULL;
    }
    cJSON_bool ok =
        cJSON_IsArray(parent) ? cJSON_AddItemToArray(parent, item) : cJSON_AddItemToObject(parent, key, item);
    if (!ok) {
        cJSON_Delete(item);
        b->rc = EV_ENOMEM;
        return NULL;
    }
    return item;
}
static cJSON *f_obj(fb *b, cJSON *p, const char *k)
{
    return f_put(b, p, k, b->rc ? NULL : cJSON_CreateObject());
}
static cJSON *f_arr(fb *b, cJSON *p, const char *k)
{
    return f_put(b, p, k, b->rc ? NULL : cJSON_CreateArray());
}
static void f_str(fb *b, cJSON *o, const char *k, const char *s)
{
    f_put(b, o, k, b->rc ? NULL : s ? cJSON_CreateString(s) : cJSON_CreateNull());
}
static void f_bool(fb *b, cJSON *o, const char *k, int v)
{
    f_put(b, o, k, b->rc ? NULL : cJSON_CreateBool(v ? 1 : 0));
}
static void f_int(fb *b, cJSON *o, const char *k, int64_t v)
{
    if (!b->rc && o)
        b->rc = cJSON_IsArray(o) ? ev_json_push_i64(o, v) : ev_json_add_i64(o, k, v);
}
/* A double (raw exact text), or null with "<k>_reason" when !has or not finite. */
static void f_dbl(fb *b, cJSON *o, const char *k, int has, double v, const char *reason)
{
    if (b->rc || !o)
        return;
    if (has && isfinite(v)) {
        b->rc = cJSON_IsArray(o) ? ev_json_push_double(o, v) : ev_json_add_double(o, k, v);
        return;
    }
    char rk[96];
    snprintf(rk, sizeof rk, "%s_reason", k);
    f_put(b, o, k, cJSON_CreateNull());
    if (!cJSON_IsArray(o))
        f_str(b, o, rk, has ? "not finite" : reason);
}

/* The job of case idx and arm (policy phase for auto, else main; no retry). */
static const ev_fig_job *find(const ev_fig_input *in, int64_t idx, const char *arm)
{
    const char *phase = strcmp(arm, "auto") ? "main" : "policy";
    for (size_t i = 0; i < in->n_jobs; i++) {
        const ev_fig_job *j = &in->jobs[i];
        if (j->case_index == idx && !j->retry && !strcmp(j->arm, arm) && !strcmp(j->phase, phase))
            return j;
    }
    return NULL;
}

/* Returns 1 when j is completed with hot samples. */
static int usable(const ev_fig_job *j)
{
    return j && j->n_hot > 0 && !strcmp(j->outcome, "completed");
}

/* Median of n values drawn with replacement from v (scratch holds n). */
static ev_status resample_median(uint64_t *st, const double *v, size_t n, double *scratch, double *out)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = v[draw(st, n)];
    return ev_median(scratch, n, out);
}

/* The central EV_FIG_LEVEL interval (type-7 quantiles) of v[0..n). */
static ev_status interval(const double *v, size_t n, double *lo, double *hi)
{
    double tail = (1.0 - EV_FIG_LEVEL) / 2.0;
    ev_status rc = ev_quantile(v, n, tail, lo);
    if (!rc)
        rc = ev_quantile(v, n, 1.0 - tail, hi);
    return rc;
}

/* ---- per job ---------------------------------------------------------------- */

/* Adds the per-job figures (median, P95, cold/hot, clock range). */
static void add_jobs(fb *b, const ev_fig_input *in, cJSON *root, double *scratch, double *boot)
{
    cJSON *arr = f_arr(b, root, "jobs");
    for (size_t i = 0; i < in->n_jobs && !b->rc; i++) {
        const ev_fig_job *j = &in->jobs[i];
        cJSON *o = f_obj(b, arr, NULL);
        double med = 0, p95 = 0, cmed = 0;
        int ok = usable(j);
        const char *why = strcmp(j->outcome, "completed") ? j->outcome : "no hot samples";
        f_str(b, o, "job_key", j->job_key);
        f_int(b, o, "n_hot", (int64_t)j->n_hot);
        if (ok && !b->rc)
            b->rc = ev_median(j->hot, j->n_hot, &med);
        if (ok && !b->rc)
            b->rc = ev_quantile(j->hot, j->n_hot, 0.95, &p95);
        f_dbl(b, o, "median_us", ok, med, why);
        /* the median's own bootstrap interval (label "job:<job_key>") */
        double lo = 0, hi = 0;
        if (ok && !b->rc) {
            char label[160];
            snprintf(label, sizeof label, "job:%s", j->job_key);
            uint64_t st = (uint64_t)in->seed ^ fnv1a64(label);
            for (size_t r = 0; r < EV_FIG_RESAMPLES && !b->rc; r++)
                b->rc = resample_median(&st, j->hot, j->n_hot, scratch, &boot[r]);
            if (!b->rc)
                b->rc = interval(boot, EV_FIG_RESAMPLES, &lo, &hi);
        }
        if (ok) {
            cJSON *ci = f_arr(b, o, "median_ci");
            f_dbl(b, ci, NULL, 1, lo, NULL);
            f_dbl(b, ci, NULL, 1, hi, NULL);
        } else {
            f_dbl(b, o, "median_ci", 0, 0, why);
        }
        f_dbl(b, o, "p95_us", ok, p95, why);
        int cok = ok && j->n_cold > 0;
        if (cok && !b->rc)
            b->rc = ev_median(j->cold, j->n_cold, &cmed);
        f_dbl(b, o, "cold_over_hot", cok, cmed / med, ok ? "no cold samples" : why);
        if (j->has_clock) {
            f_int(b, o, "sm_clock_min_mhz", j->clock_min);
            f_int(b, o, "sm_clock_max_mhz", j->clock_max);
        } else {
            f_put(b, o, "sm_clock_min_mhz", b->rc ? NULL : cJSON_CreateNull());
            f_put(b, o, "sm_clock_max_mhz", b->rc ? NULL : cJSON_CreateNull());
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

/* Adds one pair object for case idx to arr (and a tail disclosure to tails). */
static void add_pair(fb *b, const ev_fig_input *in, int64_t idx, const pair *pr, const ev_fig_job *x,
                     const ev_fig_job *y, cJSON *arr, cJSON *tails, double *scratch, double *boot)
{
    cJSON *o = f_obj(b, arr, NULL);
    char why[160];
    f_int(b, o, "case_index", idx);
    f_str(b, o, "arm", pr->arm);
    f_str(b, o, "against", pr->against);
    f_str(b, o, "arm_job", x->job_key);
    f_str(b, o, "against_job", y->job_key);
    if (!usable(x) || !usable(y)) {
        const ev_fig_job *bad = usable(x) ? y : x;
        snprintf(why, sizeof why, "%s %s", bad->arm,
                 strcmp(bad->outcome, "completed") ? bad->outcome : "no hot samples");
        f_dbl(b, o, "ratio_of_medians", 0, 0, why);
        return;
    }
    double mx = 0, my = 0, px = 0, py = 0;
    if (!b->rc)
        b->rc = ev_median(x->hot, x->n_hot, &mx);
    if (!b->rc)
        b->rc = ev_median(y->hot, y->n_hot, &my);
    if (!b->rc)
        b->rc = ev_quantile(x->hot, x->n_hot, 0.95, &px);
    if (!b->rc)
        b->rc = ev_quantile(y->hot, y->n_hot, 0.95, &py);
    if (b->rc)
        return;
    double ratio = mx / my, p95r = px / py;
    char label[160];
    snprintf(label, sizeof label, "pair:%" PRId64 ":%s:%s", idx, pr->arm, pr->against);
    uint64_t st = (uint64_t)in->seed ^ fnv1a64(label);
    for (size_t r = 0; r < EV_FIG_RESAMPLES && !b->rc; r++) {
        double a = 0, c = 0;
        b->rc = resample_median(&st, x->hot, x->n_hot, scratch, &a);
        if (!b->rc)
            b->rc = resample_median(&st, y->hot, y->n_hot, scratch, &c);
        boot[r] = a / c;
    }
    double lo = 0, hi = 0, u = 0, p = 0;
    if (!b->rc)
        b->rc = interval(boot, EV_FIG_RESAMPLES, &lo, &hi);
    ev_status mrc = ev_fig_mann_whitney(x->hot, x->n_hot, y->hot, y->n_hot, &u, &p);
    if (mrc == EV_ENOMEM && !b->rc)
        b->rc = mrc;
    f_int(b, o, "n_arm", (int64_t)x->n_hot);
    f_int(b, o, "n_against", (int64_t)y->n_hot);
    f_dbl(b, o, "ratio_of_medians", 1, ratio, NULL);
    f_dbl(b, o, "ci_low", 1, lo, NULL);
    f_dbl(b, o, "ci_high", 1, hi, NULL);
    f_dbl(b, o, "mwu_u", !mrc, u, "too many samples for the exact test");
    f_dbl(b, o, "mwu_p", !mrc, p, "too many samples for the exact test");
    if (!mrc)
        f_bool(b, o, "significant", p < EV_FIG_ALPHA);
    else
        f_put(b, o, "significant", b->rc ? NULL : cJSON_CreateNull());
    f_dbl(b, o, "p95_ratio", 1, p95r, NULL);
    int tail = ratio < 1.0 && p95r > 1.0;
    f_bool(b, o, "tail_disclosure", tail);
    if (tail) {
        cJSON *t = f_obj(b, tails, NULL);
        f_int(b, t, "case_index", idx);
        f_str(b, t, "arm", pr->arm);
        f_str(b, t, "against", pr->against);
        f_dbl(b, t, "ratio_of_medians", 1, ratio, NULL);
        f_dbl(b, t, "p95_ratio", 1, p95r, NULL);
    }
}

/* Sorted distinct case indexes (>= 0) of the jobs.  OUT: *out, *n. */
static ev_status case_list(const ev_fig_input *in, int64_t **out, size_t *n)
{
    int64_t *v = calloc(in->n_jobs + 1, sizeof *v);
    size_t k = 0;
    if (!v)
        return EV_ENOMEM;
    for (size_t i = 0; i < in->n_jobs; i++) {
        int64_t c = in->jobs[i].case_index;
        if (c < 0)
            continue;
        size_t pos = 0;
        while (pos < k && v[pos] < c)
            pos++;
        if (pos < k && v[pos] == c)
            continue;
        memmove(v + pos + 1, v + pos, (k - pos) * sizeof *v);
        v[pos] = c;
        k++;
    }
    *out = v;
    *n = k;
    return EV_OK;
}

/* ---- across cases -------------------------------------------------------------- */

/* Adds the across-case summary of pair pr (per-case medians mx[i], my[i]). */
static void add_across(fb *b, const ev_fig_input *in, const pair *pr, const int64_t *idx, const double *mx,
                       const double *my, size_t n, cJSON *arr)
{
    cJSON *o = f_obj(b, arr, NULL);
    f_str(b, o, "arm", pr->arm);
    f_str(b, o, "against", pr->against);
    f_int(b, o, "n_cases", (int64_t)n);
    cJSON *cs = f_arr(b, o, "cases");
    for (size_t i = 0; i < n; i++)
        f_int(b, cs, NULL, idx[i]);
    if (!n) {
        f_dbl(b, o, "ratio_of_sums", 0, 0, "no case with both arms completed");
        return;
    }
    double *ratios = calloc(n, sizeof *ratios), *rs = calloc(EV_FIG_RESAMPLES, sizeof *rs),
           *gm = calloc(EV_FIG_RESAMPLES, sizeof *gm), *tmp = calloc(n, sizeof *tmp);
    if (!ratios || !rs || !gm || !tmp) {
        if (!b->rc)
            b->rc = EV_ENOMEM;
        goto out;
    }
    double sx = 0, sy = 0, geo = 0;
    int64_t wins = 0, losses = 0, ties = 0;
    for (size_t i = 0; i < n; i++) {
        sx += mx[i];
        sy += my[i];
        ratios[i] = mx[i] / my[i];
        wins += ratios[i] < 1.0;
        losses += ratios[i] > 1.0;
        ties += ratios[i] == 1.0;
    }
    if (!b->rc)
        b->rc = ev_geomean(ratios, n, &geo);
    char label[160];
    snprintf(label, sizeof label, "across:%s:%s", pr->arm, pr->against);
    uint64_t st = (uint64_t)in->seed ^ fnv1a64(label);
    for (size_t r = 0; r < EV_FIG_RESAMPLES && !b->rc; r++) {
        double bx = 0, by = 0;
        for (size_t i = 0; i < n; i++) {
            size_t k = draw(&st, n);
            bx += mx[k];
            by += my[k];
            tmp[i] = ratios[k];
        }
        rs[r] = bx / by;
        b->rc = ev_geomean(tmp, n, &gm[r]);
    }
    double lo = 0, hi = 0, glo = 0, ghi = 0;
    if (!b->rc)
        b->rc = interval(rs, EV_FIG_RESAMPLES, &lo, &hi);
    if (!b->rc)
        b->rc = interval(gm, EV_FIG_RESAMPLES, &glo, &ghi);
    f_dbl(b, o, "ratio_of_sums", 1, sx / sy, NULL);
    cJSON *ci = f_arr(b, o, "ratio_of_sums_ci");
    f_dbl(b, ci, NULL, 1, lo, NULL);
    f_dbl(b, ci, NULL, 1, hi, NULL);
    f_dbl(b, o, "geomean_ratio", 1, geo, NULL);
    cJSON *gci = f_arr(b, o, "geomean_ratio_ci");
    f_dbl(b, gci, NULL, 1, glo, NULL);
    f_dbl(b, gci, NULL, 1, ghi, NULL);
    f_int(b, o, "wins", wins);
    f_int(b, o, "losses", losses);
    f_int(b, o, "ties", ties);
out:
    free(ratios);
    free(rs);
    free(gm);
    free(tmp);
}

/* ---- entry points -------------------------------------------------------------- */

/* See figures.h. */
ev_status ev_figures_build(const ev_fig_input *in, cJSON **out, ev_err *err)
{
    fb b = {EV_OK};
    int64_t *cases = NULL;
    size_t n_cases = 0, max_hot = 1;
    double *scratch = NULL, *boot = NULL, *mx = NULL, *my = NULL;
    int64_t *used = NULL;
    cJSON *root = NULL;

    for (size_t i = 0; i < in->n_jobs; i++) {
        const ev_fig_job *j = &in->jobs[i];
        for (size_t k = 0; k < j->n_hot; k++)
            if (isnan(j->hot[k]))
                return ev_err_set(err, EV_EINVAL, "figures: %s: a hot sample is NaN", j->job_key);
        for (size_t k = 0; k < j->n_cold; k++)
            if (isnan(j->cold[k]))
                return ev_err_set(err, EV_EINVAL, "figures: %s: a cold sample is NaN", j->job_key);
        if (j->n_hot > max_hot)
            max_hot = j->n_hot;
    }
    if ((b.rc = case_list(in, &cases, &n_cases)))
        goto out;
    scratch = calloc(max_hot, sizeof *scratch);
    boot = calloc(EV_FIG_RESAMPLES, sizeof *boot);
    mx = calloc(n_cases + 1, sizeof *mx);
    my = calloc(n_cases + 1, sizeof *my);
    used = calloc(n_cases + 1, sizeof *used);
    root = cJSON_CreateObject();
    if (!scratch || !boot || !mx || !my || !used || !root) {
        b.rc = EV_ENOMEM;
        goto out;
    }

    cJSON *m = f_obj(&b, root, "method");
    f_str(&b, m, "bootstrap",
          "percentile interval of the ratio of medians over samples resampled with replacement "
          "(each arm on its own); across cases, cases resampled with replacement (paired: both arms of a "
          "case move together)");
    f_int(&b, m, "resamples", EV_FIG_RESAMPLES);
    f_dbl(&b, m, "level", 1, EV_FIG_LEVEL, NULL);
    f_int(&b, m, "seed", in->seed);
    f_str(&b, m, "rng", "splitmix64; state = seed XOR fnv1a64(label); index = ((next >> 32) * n) >> 32");
    f_str(&b, m, "quantile", "type 7 (linear), as src/common/stats.h");
    f_str(&b, m, "mann_whitney",
          "exact two-sided p = min(1, 2 min(P(U <= u), P(U >= u))) under no ties; U counts pairs with "
          "arm < against (ties one half)");
    f_dbl(&b, m, "alpha", 1, EV_FIG_ALPHA, NULL);
    f_str(&b, m, "tails",
          "P95 is the empirical type-7 quantile of the hot samples; seven samples support only "
          "descriptive quantiles, not tail guarantees");

    add_jobs(&b, in, root, scratch, boot);

    cJSON *parr = f_arr(&b, root, "pairs");
    cJSON *tails = f_arr(&b, root, "tail_disclosures");
    cJSON *across = f_arr(&b, root, "across");
    for (size_t p = 0; p < N_PAIRS && !b.rc; p++) {
        size_t n_used = 0;
        for (size_t c = 0; c < n_cases && !b.rc; c++) {
            const ev_fig_job *x = find(in, cases[c], pairs[p].arm), *y = find(in, cases[c], pairs[p].against);
            if (!x || !y)
                continue;
            add_pair(&b, in, cases[c], &pairs[p], x, y, parr, tails, scratch, boot);
            if (usable(x) && usable(y) && !b.rc) {
                b.rc = ev_median(x->hot, x->n_hot, &mx[n_used]);
                if (!b.rc)
                    b.rc = ev_median(y->hot, y->n_hot, &my[n_used]);
                used[n_used++] = cases[c];
            }
        }
        int planned = 0;
        for (size_t c = 0; c < n_cases && !planned; c++)
            planned = find(in, cases[c], pairs[p].arm) && find(in, cases[c], pairs[p].against);
        if (planned)
            add_across(&b, in, &pairs[p], used, mx, my, n_used, across);
    }
out:
    free(cases);
    free(scratch);
    free(boot);
    free(mx);
    free(my);
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
    for (cJSON *it = tree ? tree->child : NULL; it;) {
        cJSON *next = it->next;
        if (cJSON_IsNumber(it)) {
            char t[32];
            if (ev_json_format_double(it->valuedouble, t))
                return EV_EFORMAT;
            cJSON *raw = cJSON_CreateRaw(t);
            if (!raw)
                return EV_ENOMEM;
            cJSON_bool ok = cJSON_IsObject(tree)
                                ? cJSON_ReplaceItemInObjectCaseSensitive(tree, it->string, raw)
                                : cJSON_ReplaceItemViaPointer(tree, it, raw);
            if (!ok) {
                cJSON_Delete(raw);
                return EV_ENOMEM;
            }
        } else if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
            ev_status rc = ev_figures_canon(it);
            if (rc)
                return rc;
        }
        it = next;
    }
    return EV_OK;
}
