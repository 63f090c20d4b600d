/*
 * report_call.c: when a ratio is called a difference (report_int.h), one
 * rule for the report, the results and the comparison of two runs
 * (docs/intervals.md, "Calling a difference"), auto against the best peer
 * by it, and what they say of the run a bundle measured: its noise floor
 * (opening a bundle, rp_rep_open, measures it), its device, host and peer
 * versions, and which of their checks its format could not give.
 *
 * The noise floor is measured by the run itself: the recheck phase runs
 * every case's default arm again at the end of the run, in a process of
 * its own, so log(recheck median / main median) is an A/A ratio of two
 * processes of the same code within the run.  The floor is
 * RP_FLOOR_FACTOR times the largest of them over the cases, and at least
 * RP_FLOOR_MIN_PCT percent.  With one round a ratio is called a
 * difference only beyond it; with rounds it is the resolution an interval
 * must reach for "not significant" to be said with confidence.
 */
#include "report_int.h"

/* ---- the floor ---------------------------------------------------------------- */

/* The figures' hot median of job j (figures "jobs", by job key).  Returns
 * 1 and sets *v when it is a positive number. */
static int fig_median(const rep *r, const cJSON *j, double *v)
{
    char key[200];
    const char *k = j ? ev_jr_str(j, "job_key") : NULL;
    if (!k)
        return 0;
    snprintf(key, sizeof key, "F|%s", k);
    return rp_jnum(rp_ix_find(r, key), "median_us", v) && *v > 0 && isfinite(*v);
}

/* See report_int.h. */
int rp_floor_get(const rep *r, rp_floor *f)
{
    const cJSON *c;
    memset(f, 0, sizeof *f);
    f->case_index = -1;
    cJSON_ArrayForEach(c, r->cases)
    {
        int64_t idx = rp_jint(c, "case_index", -1);
        double m, k;
        if (!fig_median(r, rp_find_job(r, idx, "default", "main"), &m) ||
            !fig_median(r, rp_find_job(r, idx, "default", "recheck"), &k))
            continue;
        double d = fabs(log(k / m));
        if (!f->n_cases || d > f->max_drift) {
            f->max_drift = d;
            f->case_index = idx;
        }
        f->n_cases++;
    }
    f->measured = f->n_cases > 0;
    f->log_floor = log1p(RP_FLOOR_MIN_PCT / 100.0);
    if (f->measured && RP_FLOOR_FACTOR * f->max_drift > f->log_floor)
        f->log_floor = RP_FLOOR_FACTOR * f->max_drift;
    f->pct = 100.0 * expm1(f->log_floor);
    return f->measured;
}

/* See report_int.h. */
void rp_floor_max(const rp_floor *a, const rp_floor *b, rp_floor *out)
{
    const rp_floor *w = !a->measured ? b : !b->measured ? a : a->log_floor >= b->log_floor ? a : b;
    *out = *w;
    if (!a->measured || !b->measured)
        out->measured = 0; /* a side without a floor leaves the pair without one */
}

/* See report_int.h. */
const char *rp_floor_text(const rp_floor *f, char *t, size_t cap)
{
    char a[48], b[48];
    if (!f->measured)
        snprintf(t, cap, "none measured (no case has both a main and a recheck default job with a median)");
    else
        snprintf(t, cap,
                 "%s%%: %.2f x the largest recheck drift (%s%% on case %" PRId64 ", of %zu cases), at least "
                 "%.0f%%",
                 rp_fmt(a, f->pct, 2), RP_FLOOR_FACTOR, rp_fmt(b, 100.0 * expm1(f->max_drift), 2),
                 f->case_index, f->n_cases, RP_FLOOR_MIN_PCT);
    return t;
}

/* ---- the call ------------------------------------------------------------------- */

/* See report_int.h. */
rp_call rp_call_of(const rp_ratio *x, const rp_floor *f)
{
    if (!x->has_ratio || !(x->ratio > 0) || !isfinite(x->ratio))
        return RP_CALL_NONE;
    if (!x->replicated) {
        /* one round: a difference only beyond the floor the run measured,
         * and only when the within-process interval excludes 1 too */
        if (!f->measured || !(fabs(log(x->ratio)) > f->log_floor))
            return RP_CALL_NOT_REPLICATED;
        if (x->has_ci && x->lo <= 1.0 && x->hi >= 1.0)
            return RP_CALL_NOT_REPLICATED;
        return x->ratio < 1.0 ? RP_CALL_BELOW : RP_CALL_ABOVE;
    }
    if (!x->has_ci || !(x->lo > 0) || !isfinite(x->hi))
        return RP_CALL_INCONCLUSIVE; /* too few usable rounds for an interval */
    if (x->hi < 1.0)
        return RP_CALL_BELOW;
    if (x->lo > 1.0)
        return RP_CALL_ABOVE;
    /* the interval holds 1: "no difference" only when it also rules out
     * any difference beyond the floor */
    if (-log(x->lo) <= f->log_floor && log(x->hi) <= f->log_floor)
        return RP_CALL_SAME;
    return RP_CALL_INCONCLUSIVE;
}

/* See report_int.h. */
rp_call rp_call_across(const rp_ratio *x, const rp_floor *f)
{
    if (!x->replicated)
        return rp_call_of(x, f); /* one round: the floor already decides */
    if (!x->has_ratio || !(x->ratio > 0) || !isfinite(x->ratio))
        return RP_CALL_NONE;
    if (!x->has_ci || !(x->lo > 0) || !isfinite(x->hi))
        return RP_CALL_INCONCLUSIVE;
    /* two runs: their rounds sample the spread within each run, not the
     * shift between the runs (another hour, another state of the board),
     * which the floor stands for; a difference must clear it */
    if (!f->measured)
        return RP_CALL_INCONCLUSIVE;
    if (log(x->hi) < -f->log_floor)
        return RP_CALL_BELOW;
    if (log(x->lo) > f->log_floor)
        return RP_CALL_ABOVE;
    if (-log(x->lo) <= f->log_floor && log(x->hi) <= f->log_floor)
        return RP_CALL_SAME;
    return RP_CALL_INCONCLUSIVE;
}

/* See report_int.h. */
const char *rp_call_word(rp_call c, int two_runs)
{
    switch (c) {
    case RP_CALL_BELOW:
        return two_runs ? "faster" : "win";
    case RP_CALL_ABOVE:
        return two_runs ? "slower" : "loss";
    case RP_CALL_SAME:
        return two_runs ? "not significant" : "n.s.";
    case RP_CALL_INCONCLUSIVE:
        return "inconclusive";
    case RP_CALL_NOT_REPLICATED:
        return "not replicated";
    case RP_CALL_NONE:
    case RP_CALL_N:
        break;
    }
    return two_runs ? "no ratio" : "-";
}

/* See report_int.h. */
const char *rp_call_class(rp_call c)
{
    return c == RP_CALL_BELOW ? "ok" : c == RP_CALL_ABOVE ? "bad" : NULL;
}

/* See report_int.h. */
int rp_pair_ratio(const cJSON *p, rp_ratio *x)
{
    const cJSON *iv = p ? cJSON_GetObjectItemCaseSensitive(p, "interval") : NULL;
    const char *basis = p ? ev_jr_str(p, "basis") : NULL;
    memset(x, 0, sizeof *x);
    if (!p)
        return 0;
    x->has_ratio = rp_jnum(p, "ratio", &x->ratio);
    x->has_ci = rp_numv(cJSON_GetArrayItem(iv, 0), &x->lo) && rp_numv(cJSON_GetArrayItem(iv, 1), &x->hi);
    /* a bundle from before rounds names no basis: its pairs are within-process */
    x->replicated = basis && !strcmp(basis, "rounds");
    return x->has_ratio;
}

/* See report_int.h. */
rp_call rp_pair_call(const rep *r, const cJSON *p)
{
    rp_ratio x;
    if (!rp_pair_ratio(p, &x))
        return RP_CALL_NONE;
    return rp_call_of(&x, &r->floor);
}

/* See report_int.h. */
void rp_count_calls(const rep *r, const char *arm, const char *against, rp_counts *n)
{
    const cJSON *c;
    memset(n, 0, sizeof *n);
    cJSON_ArrayForEach(c, r->cases)
    {
        const cJSON *p = rp_fig_pair(r, rp_jint(c, "case_index", -1), arm, against);
        rp_call k = rp_pair_call(r, p);
        if (k != RP_CALL_NONE)
            n->n[k]++;
    }
}

/* See report_int.h. */
const char *rp_counts_text(const rp_counts *n, char *t, size_t cap)
{
    snprintf(t, cap, "%zu wins / %zu losses / %zu n.s. / %zu inconclusive / %zu not replicated",
             n->n[RP_CALL_BELOW], n->n[RP_CALL_ABOVE], n->n[RP_CALL_SAME], n->n[RP_CALL_INCONCLUSIVE],
             n->n[RP_CALL_NOT_REPLICATED]);
    return t;
}

/* See report_int.h. */
const char *rp_basis_text(const rep *r, char *t, size_t cap)
{
    char fl[300];
    int64_t k = rp_rounds_of(r);
    rp_floor_text(&r->floor, fl, sizeof fl);
    if (k > 1)
        snprintf(t, cap,
                 "%" PRId64 " rounds (each its own processes): a ratio's 95%% interval is over rounds; it is "
                 "called a difference when the interval excludes 1, no difference (n.s.) when it lies "
                 "within the noise floor, inconclusive otherwise (too few or too noisy rounds). Noise floor: "
                 "%s",
                 k, fl);
    else if (r->floor.measured)
        snprintf(t, cap,
                 "1 round: not replicated. Its intervals are within-process and do not cover the "
                 "variation between processes, so a ratio is called a difference only beyond the noise "
                 "floor the run measured, %s; every other ratio is not replicated",
                 fl);
    else
        snprintf(t, cap,
                 "1 round: not replicated, and the run measured no noise floor (%s): no ratio is called a "
                 "difference",
                 fl);
    return t;
}

/* Returns 1 when case idx has auto / best peer: sets *peer, *ratio (the
 * figures pair's headline ratio; without figures the ratio of the
 * estimates) and *call (rp_pair_call of the pair; without figures the
 * ratio read as one round's, rp_call_of).  0 (nothing written) when auto
 * or every peer lacks an estimate.  The case table's column and the
 * headline's counts. */
int rp_auto_vs_best(const rep *r, int64_t idx, const char **peer, double *ratio, rp_call *call)
{
    const char *pn;
    double au, pu;
    rp_ratio x;
    if (!rp_arm_estimate(r, idx, "auto", "policy", &au) || !rp_md_best_peer(r, idx, &pn, &pu))
        return 0;
    const cJSON *ap = rp_fig_pair(r, idx, "auto", pn);
    if (ap && !rp_pair_ratio(ap, &x))
        return 0;
    if (!ap) {
        memset(&x, 0, sizeof x);
        x.has_ratio = 1;
        x.ratio = au / pu;
    }
    *peer = pn;
    *ratio = x.ratio;
    *call = rp_call_of(&x, &r->floor);
    return 1;
}

/* See report_int.h. */
ev_status rp_rep_open(const ev_member *m, size_t n, cJSON *figures, rep *r, ev_err *err)
{
    ev_status rc = rp_rep_load_with(m, n, figures, r, err);
    if (!rc)
        rp_floor_get(r, &r->floor);
    return rc;
}

/* ---- the run's facts -------------------------------------------------------------- */

/* The environment record of the run's first invocation, or NULL. */
static const cJSON *first_environment(const rep *r)
{
    const cJSON *inv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r->val, "invocations"), 0);
    const cJSON *e = inv ? cJSON_GetObjectItemCaseSensitive(inv, "environment") : NULL;
    return cJSON_IsObject(e) ? e : NULL;
}

/* Adds "arm name version" for each version of device record d to t[cap]
 * unless it is there ("; " between them). */
static void add_versions(char *t, size_t cap, const char *arm, const cJSON *d)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(d, "versions"))
    {
        char one[160];
        size_t len = strlen(t);
        if (!cJSON_IsString(v))
            continue;
        snprintf(one, sizeof one, "%s %s %s", arm ? arm : "?", v->string, v->valuestring);
        if (!strstr(t, one))
            snprintf(t + len, cap - len, "%s%s", len ? "; " : "", one);
    }
}

/* See report_int.h. */
int rp_peer_versions(const rep *r, char *t, size_t cap)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r->val, "run"), *j, *a;
    t[0] = '\0';
    if (rp_jint(run, "store_schema", 0) < 3)
        return 0;
    cJSON_ArrayForEach(j, r->jobs)
    {
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(j, "attempts"))
        {
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(a, "device");
            if (cJSON_IsObject(d))
                add_versions(t, cap, ev_jr_str(j, "arm"), d);
        }
    }
    return 1;
}

/* Copies s (NULL or "": "-") into t[cap]. */
static void put_fact(char *t, size_t cap, const char *s)
{
    snprintf(t, cap, "%s", s && *s ? s : "-");
}

/* See report_int.h. */
void rp_facts_get(const rep *r, rp_facts *x)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r->val, "run");
    const cJSON *e = first_environment(r);
    const cJSON *d = e ? cJSON_GetObjectItemCaseSensitive(e, "device") : NULL;
    memset(x, 0, sizeof *x);
    put_fact(x->protocol_id, sizeof x->protocol_id, ev_jr_str(run, "protocol_id"));
    put_fact(x->backend, sizeof x->backend, ev_jr_str(run, "backend"));
    put_fact(x->device, sizeof x->device, ev_jr_str(d, "name"));
    put_fact(x->driver, sizeof x->driver, ev_jr_str(d, "driver_version"));
    put_fact(x->runtime, sizeof x->runtime, ev_jr_str(d, "runtime_version"));
    put_fact(x->host_hash, sizeof x->host_hash, ev_jr_str(e, "host_hash"));
    put_fact(x->kernel, sizeof x->kernel, ev_jr_str(e, "kernel"));
    put_fact(x->compiler, sizeof x->compiler, ev_jr_str(e, "compiler"));
    x->has_peers = rp_peer_versions(r, x->peers, sizeof x->peers);
    x->store_schema = rp_jint(run, "store_schema", 0);
}

/* Adds "peer_versions" to o: per arm an object of the versions its
 * attempts' device records name (the first seen of each; a later, other
 * one is added after "; "). */
static void peer_versions_json(ev_jb *b, cJSON *o, const rep *r)
{
    const cJSON *j, *a, *v;
    cJSON *pv = ev_jb_obj(b, o, "peer_versions");
    cJSON_ArrayForEach(j, r->jobs)
    {
        const char *arm = ev_jr_str(j, "arm");
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(j, "attempts"))
        {
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(a, "device");
            cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(d, "versions"))
            {
                if (!arm || !cJSON_IsString(v) || !pv || b->rc)
                    continue;
                cJSON *x = cJSON_GetObjectItemCaseSensitive(pv, arm);
                if (!x)
                    x = ev_jb_obj(b, pv, arm);
                const char *have = x ? ev_jr_str(x, v->string) : NULL;
                if (!have) {
                    ev_jb_str(b, x, v->string, v->valuestring);
                } else if (!strstr(have, v->valuestring)) {
                    char both[300];
                    snprintf(both, sizeof both, "%s; %s", have, v->valuestring);
                    cJSON *s = cJSON_CreateString(both);
                    if (!s || !cJSON_ReplaceItemInObjectCaseSensitive(x, v->string, s)) {
                        cJSON_Delete(s);
                        b->rc = EV_ENOMEM;
                    }
                }
            }
        }
    }
}

/* See report_int.h. */
void rp_facts_json(ev_jb *b, cJSON *o, const rep *r, const rp_facts *x)
{
    cJSON *d = ev_jb_obj(b, o, "device");
    ev_jb_str(b, d, "backend", x->backend);
    ev_jb_str(b, d, "name", x->device);
    ev_jb_str(b, d, "driver_version", x->driver);
    ev_jb_str(b, d, "runtime_version", x->runtime);
    cJSON *h = ev_jb_obj(b, o, "host");
    ev_jb_str(b, h, "host_hash", x->host_hash);
    ev_jb_str(b, h, "kernel", x->kernel);
    ev_jb_str(b, h, "compiler", x->compiler);
    if (x->has_peers) {
        peer_versions_json(b, o, r);
    } else {
        char why[120];
        snprintf(why, sizeof why, "not kept by this bundle's store (schema %" PRId64 "; kept from schema 3)",
                 x->store_schema);
        if (x->store_schema <= 0)
            snprintf(why, sizeof why,
                     "not kept by this bundle's store (it names no schema; kept from schema 3)");
        ev_jb_null(b, o, "peer_versions");
        ev_jb_str(b, o, "peer_versions_reason", why);
    }
}

/* The rounds the protocol member declares (1 when it says none); -1 when
 * the bundle holds no readable protocol.json. */
static int64_t declared_rounds(const ev_member *m, size_t n)
{
    const ev_member *p = ev_member_find(m, n, "protocol.json");
    cJSON *j = p ? cJSON_ParseWithLength(p->data ? p->data : "", p->len) : NULL;
    int64_t k = j ? rp_jint(j, "rounds", 1) : -1;
    cJSON_Delete(j);
    return k;
}

/* Appends note text to *x (dropped when the list is full). */
static void note(rp_notes *x, const char *text)
{
    if (x->n < RP_MAX_NOTES)
        snprintf(x->v[x->n++], sizeof x->v[0], "%s", text);
}

/* See report_int.h. */
void rp_format_notes(const rep *r, const ev_member *m, size_t n, rp_notes *x)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r->val, "run"), *a;
    const cJSON *fig = cJSON_GetObjectItemCaseSensitive(r->val, "figures");
    char t[400];
    int64_t k = declared_rounds(m, n), seen = rp_rounds_of(r), schema = rp_jint(run, "store_schema", 0);
    size_t other = 0;
    memset(x, 0, sizeof *x);
    if (schema < 3) {
        if (schema > 0)
            snprintf(t, sizeof t,
                     "store schema %" PRId64 " (before 3): no peer versions were kept, so they are not shown "
                     "and not compared",
                     schema);
        else
            snprintf(
                t, sizeof t,
                "no store schema named (a store before schema 3): no peer versions were kept, so they are "
                "not shown and not compared");
        note(x, t);
    }
    if (!r->floor.measured)
        note(x, "no recheck drift: the run measured no noise floor, so no one-round ratio is called a "
                "difference");
    if (!cJSON_IsObject(fig)) {
        note(x,
             "validation.json holds no figures (a bundle from before them): estimates are each job's median "
             "and no ratio has an interval");
        return;
    }
    if (k < 1 || k > EV_FIG_MAX_ROUNDS) {
        snprintf(t, sizeof t,
                 "protocol.json declares %" PRId64 " rounds, outside 1..%d: the rounds are read as the jobs "
                 "hold them (%" PRId64 ", at most %d per case and arm)",
                 k, EV_FIG_MAX_ROUNDS, seen, EV_FIG_MAX_ROUNDS);
        note(x, t);
        return;
    }
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(fig, "arms"))
    {
        const char *arm = ev_jr_str(a, "arm");
        /* an arm of the main phase runs in every round; a policy-only arm
         * (auto, a wrong-schedule fault arm) in rounds 2..k */
        int main_arm = arm && rp_find_job(r, rp_jint(a, "case_index", -1), arm, "main");
        int64_t want = main_arm || k == 1 ? k : k - 1;
        if (rp_jint(a, "n_rounds", 1) != want)
            other++;
    }
    if (other) {
        snprintf(t, sizeof t,
                 "%zu case-arm estimates hold another number of rounds than protocol.json's %" PRId64
                 ": rounds are missing from the bundle, and each such estimate stands on the rounds it holds",
                 other, k);
        note(x, t);
    }
}
