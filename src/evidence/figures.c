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
 * The recipe is here; the statistics are in figures_stats.c (figures_int.h).
 */
#include "evidence/figures.h"

#include "figures_int.h"
#include "runner/sample_rules.h"

/* ---- building blocks ----------------------------------------------------------- */

/* The jobs a case's arm is read from, sorted by (case_index, arm, round,
 * job order): phase main or policy, no retry, case_index >= 0. */
typedef struct findex {
    const ev_view_job **v;
    size_t n;
    const ev_view_job *base; /* the input's jobs, for indexes into per-job arrays */
} findex;

/* Orders index entries by case, arm, round, then input order (pointer order). */
static int cmp_entry(const void *pa, const void *pb)
{
    const ev_view_job *a = *(const ev_view_job *const *)pa, *b = *(const ev_view_job *const *)pb;
    if (a->case_index != b->case_index)
        return a->case_index < b->case_index ? -1 : 1;
    int c = strcmp(a->arm, b->arm);
    if (c)
        return c;
    if (a->round != b->round)
        return a->round < b->round ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Builds the index of in's eligible jobs.  EV_ENOMEM. */
static ev_status index_build(const ev_run_view *in, findex *ix)
{
    ix->v = calloc(in->n_jobs + 1, sizeof *ix->v);
    ix->n = 0;
    ix->base = in->jobs;
    if (!ix->v)
        return EV_ENOMEM;
    for (size_t i = 0; i < in->n_jobs; i++) {
        const ev_view_job *j = &in->jobs[i];
        /* main (round 1) and policy (auto; with rounds, rounds 2..k of
         * every arm) */
        if (j->case_index >= 0 && !j->retry &&
            (ev_is_phase(j->phase, EV_PHASE_MAIN) || ev_is_phase(j->phase, EV_PHASE_POLICY)))
            ix->v[ix->n++] = j;
    }
    qsort(ix->v, ix->n, sizeof *ix->v, cmp_entry);
    return EV_OK;
}

/* The jobs of case idx and arm, one per round in round order: *n of them
 * from the returned slot (*n is 0 when there is none). */
static const ev_view_job *const *find_rounds(const findex *ix, int64_t idx, const char *arm, size_t *n)
{
    size_t lo = 0, hi = ix->n, k = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const ev_view_job *j = ix->v[mid];
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
static int usable(const ev_view_job *j)
{
    return j && j->n_hot > 0 && !strcmp(j->outcome, "completed");
}

void ev_view_capture(ev_view_job *f, const cJSON *d)
{
    const cJSON *c = cJSON_IsObject(d) ? cJSON_GetObjectItemCaseSensitive(d, "capture") : NULL;
    f->uncaptured =
        cJSON_IsString(c) && !strncmp(c->valuestring, EV_RULE_NOT_CAPTURED, strlen(EV_RULE_NOT_CAPTURED));
}

/* 1 when x and y can be ranked against each other: both captured in a
 * CUDA graph (as every arm of ours is), or both not. */
static int rankable(const ev_view_job *x, const ev_view_job *y)
{
    return x->uncaptured == y->uncaptured;
}

/* ---- per job ---------------------------------------------------------------- */

/* Adds the per-job figures (median, P95, cold/hot, clock range). */
static void add_jobs(ev_jb *b, const ev_run_view *in, const btask *const *jt, const double *jmed,
                     const double *jp95, cJSON *root)
{
    cJSON *arr = ev_jb_arr(b, root, "jobs");
    for (size_t i = 0; i < in->n_jobs && !b->rc; i++) {
        const ev_view_job *j = &in->jobs[i];
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

/* An arm pair compared. */
typedef struct pair {
    const char *arm, *against;
} pair;

/* The most pairs of our arms: against default, every other schedule and
 * auto; against each peer of one arm, every schedule and auto. */
#define N_PAIRS_MAX ((size_t)EV_SCHED_COUNT * (1 + EV_ARM_KIND_COUNT))
/* What an external kernel's arm is compared with: default, auto and each
 * peer of one arm. */
#define N_EXT_AGAINST_MAX ((size_t)2 + EV_ARM_KIND_COUNT)

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The pairs of this run, in this order: every schedule but default, then
 * auto, against default; every schedule, then auto, against each peer of
 * one arm (cub, torch-compile: the vocabulary's order); then each external
 * kernel's arm of the jobs (in name order) against default, auto and each
 * peer of one arm, and against every external arm before it in name order
 * (two kernels of one's own, measured in the same rounds, are compared
 * with each other).  OUT: *out (malloc'd), *n. */
static ev_status pair_list(const ev_run_view *in, pair **out, size_t *n)
{
    const char **ext = malloc((in->n_jobs + 1) * sizeof *ext);
    const char *dflt = ev_sched_name(EV_SCHED_DEFAULT), *aut = ev_arm_kind_name(EV_ARM_AUTO);
    const char *against[N_EXT_AGAINST_MAX];
    size_t n_ext = 0, k = 0, n_against = 0;
    pair *pl;

    if (!ext)
        return EV_ENOMEM;
    against[n_against++] = dflt;
    against[n_against++] = aut;
    for (int a = 0; a < EV_ARM_KIND_COUNT; a++)
        if (ev_arm_kind_peer((ev_arm_kind)a) && ev_arm_kind_name((ev_arm_kind)a))
            against[n_against++] = ev_arm_kind_name((ev_arm_kind)a);
    for (size_t i = 0; i < in->n_jobs; i++) {
        const char *a = in->jobs[i].arm;
        ev_arm_kind kind;
        ev_sched s;
        int seen = 0;
        if (ev_arm_builtin(a, &kind, &s) || kind != EV_ARM_EXTERNAL)
            continue;
        for (size_t q = 0; q < n_ext && !seen; q++)
            seen = !strcmp(ext[q], a);
        if (!seen)
            ext[n_ext++] = a;
    }
    qsort(ext, n_ext, sizeof *ext, cmp_str);
    pl = malloc((N_PAIRS_MAX + n_ext * (n_against + n_ext)) * sizeof *pl);
    if (!pl) {
        free(ext);
        return EV_ENOMEM;
    }
    for (int s = 0; s < EV_SCHED_COUNT; s++)
        if (s != EV_SCHED_DEFAULT)
            pl[k++] = (pair){ev_sched_name((ev_sched)s), dflt};
    pl[k++] = (pair){aut, dflt};
    for (size_t q = 2; q < n_against; q++) { /* the peers of one arm */
        for (int s = 0; s < EV_SCHED_COUNT; s++)
            pl[k++] = (pair){ev_sched_name((ev_sched)s), against[q]};
        pl[k++] = (pair){aut, against[q]};
    }
    for (size_t e = 0; e < n_ext; e++) {
        for (size_t q = 0; q < n_against; q++)
            pl[k++] = (pair){ext[e], against[q]};
        for (size_t q = 0; q < e; q++)
            pl[k++] = (pair){ext[e], ext[q]};
    }
    free(ext);
    *out = pl;
    *n = k;
    return EV_OK;
}

/* A case's arm pair over its rounds: the rounds in which both arms'
 * jobs are usable, paired by round number. */
typedef struct rpair {
    size_t n;                   /* paired rounds */
    const ev_view_job *x1, *y1; /* the first paired round's jobs; with n = 0
                                   the first jobs, x1 the unusable one if any */
    double mean, sd;            /* of log(median x / median y) over them; sd when n >= 2 */
    double ratio, lo, hi;       /* the headline ratio and its interval */
    int has_ci;
    const char *verdict; /* "win", "loss", "not significant" */
} rpair;

/* Pairs the rounds X[0..nx) and Y[0..ny) (each in round order) of a case. */
static void pair_rounds(const ev_run_view *in, const double *jmed, const ev_view_job *const *X, size_t nx,
                        const ev_view_job *const *Y, size_t ny, rpair *rp)
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
            int64_t ri = X[i]->round, rj = Y[j]->round;
            if (ri < rj) {
                i++;
                continue;
            }
            if (rj < ri) {
                j++;
                continue;
            }
            if (usable(X[i]) && usable(Y[j]) && rankable(X[i], Y[j])) {
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
static void pair_headline(rpair *rp, int64_t k, const double *jmed, const ev_run_view *in, const btask *bt)
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
                     const ev_run_view *in, const double *jmed, const double *jp95, cJSON *arr, cJSON *tails)
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
        const ev_view_job *bad = !usable(rp->x1) ? rp->x1 : !usable(rp->y1) ? rp->y1 : NULL;
        if (bad)
            snprintf(why, sizeof why, "%s %s", bad->arm,
                     strcmp(bad->outcome, "completed") ? bad->outcome : "no hot samples");
        else if (!rankable(rp->x1, rp->y1))
            snprintf(why, sizeof why,
                     "%s not graph-captured (it ran in the timed loop): not ranked against a captured arm",
                     rp->x1->uncaptured ? rp->x1->arm : rp->y1->arm);
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
    const ev_view_job *x = rp->x1, *y = rp->y1;
    size_t xi = (size_t)(x - in->jobs), yi = (size_t)(y - in->jobs);
    double ratio = jmed[xi] / jmed[yi], p95r = jp95[xi] / jp95[yi];
    double lo = bt ? bt->lo : 0, hi = bt ? bt->hi : 0, u = 0, p = 0;
    int ci_ok = bt && bt->ok;
    ev_status mrc = ev_fig_mann_whitney(x->hot, x->n_hot, y->hot, y->n_hot, &u, &p);
    if (mrc == EV_ENOMEM && !b->rc)
        b->rc = mrc;
    cJSON *w = ev_jb_obj(b, o, "within");
    ev_jb_i64(b, w, "round", x->round);
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
static void add_across(ev_jb *b, const ev_run_view *in, const pair *pr, const int64_t *idx, const double *mx,
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
        b->rc = fg_fsamp_init(ratios, n, &fr);
    for (size_t r = 0; geo_ok && !b->rc && r < n; r++)
        logs[r] = log(fr.sorted[r]);
    char label[160];
    snprintf(label, sizeof label, "across:%s:%s", pr->arm, pr->against);
    uint64_t st = (uint64_t)in->seed ^ fg_fnv1a64(label);
    for (size_t r = 0; r < EV_FIG_RESAMPLES && !b->rc; r++) {
        double bx = 0, by = 0, sum = 0;
        memset(count, 0, n * sizeof *count);
        for (size_t i = 0; i < n; i++) {
            size_t k = fg_draw(&st, n);
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
    int ok_rs = !b->rc && !fg_interval(rs, EV_FIG_RESAMPLES, &lo, &hi);
    int ok_gm = !b->rc && geo_ok && !fg_interval(gm, EV_FIG_RESAMPLES, &glo, &ghi);
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
    fg_fsamp_free(&fr);
    free(ratios);
    free(logs);
    free(rs);
    free(gm);
    free(count);
}

/* ---- per case and arm, over rounds ------------------------------------------------ */

/* The estimate over rounds (ev_round_estimate) of the usable jobs among
 * X[0..n).  EV_EINVAL when none is usable. */
static ev_status estimate(const ev_view_job *const *X, size_t n, const ev_run_view *in, const double *jmed,
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
        const ev_view_job *const *X = find_rounds(ix, ix->v[i]->case_index, ix->v[i]->arm, &n);
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

/* Holds every job's samples to what the statistics can take: none NaN,
 * fewer than 2^32 hot samples.  OUT: *max_hot, the most hot samples of a
 * job (at least 1).  EV_EINVAL or EV_ERANGE naming the job. */
static ev_status check_samples(const ev_run_view *in, size_t *max_hot, ev_err *err)
{
    *max_hot = 1;
    for (size_t i = 0; i < in->n_jobs; i++) {
        const ev_view_job *j = &in->jobs[i];
        for (size_t q = 0; q < j->n_hot; q++)
            if (isnan(j->hot[q]))
                return ev_err_set(err, EV_EINVAL, "figures: %s: a hot sample is NaN", j->job_key);
        for (size_t q = 0; q < j->n_cold; q++)
            if (isnan(j->cold[q]))
                return ev_err_set(err, EV_EINVAL, "figures: %s: a cold sample is NaN", j->job_key);
        if (j->n_hot > *max_hot)
            *max_hot = j->n_hot;
    }
    if (*max_hot >= UINT32_MAX)
        return ev_err_set(err, EV_ERANGE, "figures: a job has 2^32 or more hot samples");
    return EV_OK;
}

/* Every usable job's sorted samples (fs[i]), median and P95 (jmed, jp95),
 * and for n_hot up to EV_FIG_EXACT_MAX the rank table of its median (one
 * per distinct n_hot, in mts[0..*n_mts)).  EV_ENOMEM. */
static ev_status job_stats(const ev_run_view *in, fsamp *fs, mtab *mts, size_t *n_mts, double *jmed,
                           double *jp95)
{
    ev_status rc = EV_OK;
    for (size_t i = 0; i < in->n_jobs && !rc; i++) {
        if (!usable(&in->jobs[i]))
            continue;
        rc = fg_fsamp_init(in->jobs[i].hot, in->jobs[i].n_hot, &fs[i]);
        if (!rc)
            rc = fg_job_stats(in->jobs[i].hot, &fs[i], &jmed[i], &jp95[i]);
    }
    for (size_t i = 0; i < in->n_jobs && !rc; i++) {
        size_t n = in->jobs[i].n_hot, t = 0;
        if (!usable(&in->jobs[i]) || !n || n > EV_FIG_EXACT_MAX)
            continue;
        while (t < *n_mts && mts[t].n != n)
            t++;
        if (t == *n_mts && !(rc = fg_mtab_init(n, &mts[t])))
            (*n_mts)++;
        fs[i].mt = &mts[t];
    }
    return rc;
}

/* The bootstrap tasks of the jobs: one per usable job (its median),
 * seeded by its key, appended to tasks[*n_tasks...]; jt[i] is job i's. */
static void job_tasks(const ev_run_view *in, fsamp *fs, btask *tasks, size_t *n_tasks, btask **jt)
{
    for (size_t i = 0; i < in->n_jobs; i++) {
        if (!usable(&in->jobs[i]))
            continue;
        char label[160];
        snprintf(label, sizeof label, "job:%s", in->jobs[i].job_key);
        tasks[*n_tasks] = (btask){&fs[i], NULL, (uint64_t)in->seed ^ fg_fnv1a64(label), 0, 0, 0};
        jt[i] = &tasks[(*n_tasks)++];
    }
}

/* The rounds paired, per pair and case (rps[p * n_cases + c]); the first
 * paired round's bootstrap interval is a task, appended to
 * tasks[*n_tasks...] and pointed at by pt[p * n_cases + c]. */
static void pair_tasks(const ev_run_view *in, const findex *ix, const int64_t *cases, size_t n_cases,
                       const pair *pl, size_t n_pl, const double *jmed, fsamp *fs, rpair *rps, btask *tasks,
                       size_t *n_tasks, btask **pt)
{
    for (size_t p = 0; p < n_pl; p++)
        for (size_t c = 0; c < n_cases; c++) {
            size_t nx, ny;
            const ev_view_job *const *X = find_rounds(ix, cases[c], pl[p].arm, &nx);
            const ev_view_job *const *Y = find_rounds(ix, cases[c], pl[p].against, &ny);
            rpair *rp = &rps[p * n_cases + c];
            if (!nx || !ny)
                continue;
            pair_rounds(in, jmed, X, nx, Y, ny, rp);
            if (!rp->n)
                continue;
            char label[160];
            snprintf(label, sizeof label, "pair:%" PRId64 ":%s:%s", cases[c], pl[p].arm, pl[p].against);
            tasks[*n_tasks] = (btask){&fs[rp->x1 - in->jobs],
                                      &fs[rp->y1 - in->jobs],
                                      (uint64_t)in->seed ^ fg_fnv1a64(label),
                                      0,
                                      0,
                                      0};
            pt[p * n_cases + c] = &tasks[(*n_tasks)++];
        }
}

/* Adds "method": how every figure below is computed, in words, with the
 * resamples, the level, the seed and alpha. */
static void add_method(ev_jb *b, cJSON *root, int64_t seed)
{
    cJSON *m = ev_jb_obj(b, root, "method");
    ev_jb_str(b, m, "bootstrap",
              "percentile interval of the ratio of medians over samples resampled with replacement "
              "(each arm on its own); across cases, cases resampled with replacement (paired: both arms of a "
              "case move together)");
    ev_jb_i64(b, m, "resamples", EV_FIG_RESAMPLES);
    ev_jb_dbl(b, m, "level", 1, EV_FIG_LEVEL, NULL);
    ev_jb_i64(b, m, "seed", seed);
    ev_jb_str(b, m, "rng",
              "splitmix64; state = seed XOR fnv1a64(label); index = ((next >> 32) * n) >> 32; "
              "uniform = (next >> 11) * 2^-53");
    ev_jb_str(b, m, "resampled_median",
              "for n <= 4096 samples, the ranks of a resample's median are drawn from their exact law (one "
              "uniform by inverse CDF for the lower middle rank, a second for the upper when n is even), "
              "the same distribution as n draws with replacement; above, n draws with replacement");
    ev_jb_str(b, m, "quantile", "type 7 (linear), as src/common/stats.h");
    ev_jb_str(b, m, "mann_whitney",
              "exact two-sided p = min(1, 2 min(P(U <= u), P(U >= u))) under no ties; U counts pairs with "
              "arm < against (ties one half)");
    ev_jb_dbl(b, m, "alpha", 1, EV_FIG_ALPHA, NULL);
    ev_jb_str(
        b, m, "rounds",
        "a pair's ratio, interval and verdict: with k > 1 rounds, over the n rounds in which both arms' jobs "
        "completed (paired by round): ratio = exp(mean of log(median arm / median against)), interval = "
        "exp(mean -+ t(0.975, n - 1) sd / sqrt(n)) (Student t over rounds as independent replicates; none "
        "when n < 2); with one round (basis within-process) the ratio of medians and its bootstrap "
        "interval, which describe the two processes only. verdict: win when the interval lies below 1, "
        "loss when above, not significant otherwise. 'within' holds the first paired round's "
        "within-process figures");
    ev_jb_str(b, m, "estimate",
              "per case and arm over rounds: the hot median of its one usable round, else the geometric mean "
              "of its usable rounds' hot medians (src/common/stats.h, ev_round_estimate)");
    ev_jb_str(b, m, "tails",
              "P95 is the empirical type-7 quantile of the hot samples; seven samples support only "
              "descriptive quantiles, not tail guarantees");
}

/* ---- entry points -------------------------------------------------------------- */

/* See figures.h. */
ev_status ev_figures_build(const ev_run_view *in, cJSON **out, ev_err *err)
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

    if ((b.rc = check_samples(in, &max_hot, err)))
        return b.rc;
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
    b.rc = job_stats(in, fs, mts, &n_mts, jmed, jp95);
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
    job_tasks(in, fs, tasks, &n_tasks, jt);
    /* the rounds paired, per pair and case; the first paired round's
     * bootstrap interval is a task */
    rps = calloc(n_pl * n_cases + 1, sizeof *rps);
    if (!rps) {
        b.rc = EV_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < ix.n; i++)
        if (ix.v[i]->round > k)
            k = ix.v[i]->round;
    pair_tasks(in, &ix, cases, n_cases, pl, n_pl, jmed, fs, rps, tasks, &n_tasks, pt);
    if ((b.rc = fg_boot_all(tasks, n_tasks, max_hot)))
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

    add_method(&b, root, in->seed);

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
                const ev_view_job *const *X = find_rounds(&ix, cases[c], pl[p].arm, &nx);
                const ev_view_job *const *Y = find_rounds(&ix, cases[c], pl[p].against, &ny);
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
            fg_fsamp_free(&fs[i]);
    free(fs);
    for (size_t t = 0; t < n_mts; t++)
        fg_mtab_free(&mts[t]);
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
