/*
 * report.c: report.html and the markdown case table, from bundle members.
 *
 * The report reads validation.json (run, jobs, cases, drift), model.json
 * (coefficients, decisions, held-out regret) and provenance.json, and
 * writes plain HTML tables: failures and skips first, then per case every
 * arm's hot median, the model, held-out regret and drift.  Everything is
 * formatted with fixed printf conversions, so the same members give the
 * same bytes on every host.
 */
#include "bundle/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "stats.h"

/* The parsed members a report is drawn from. */
typedef struct rep {
    cJSON *val;   /* validation.json (required) */
    cJSON *model; /* model.json, or NULL */
    cJSON *prov;  /* provenance.json, or NULL */
    const cJSON *jobs, *cases;
    char **arms; /* arm columns of the case table, in display order */
    size_t n_arms;
    struct kv *ix; /* lookups by key (see rep_index) */
    size_t n_ix;
} rep;

/* One index entry: a key naming what the object is, and the object. */
typedef struct kv {
    char *key;
    const cJSON *obj;
    size_t order; /* insertion order: the first of equal keys wins */
} kv;

/* ---- reading helpers ------------------------------------------------------ */

/* The string at key, or NULL when absent or not a string. */
static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Returns 1 and sets *out when key holds a number, else 0. */
static int jnum(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return 0;
    *out = v->valuedouble;
    return 1;
}

/* The integer at key, or dflt when it is not a number. */
static int64_t jint(const cJSON *o, const char *key, int64_t dflt)
{
    double v;
    return jnum(o, key, &v) ? (int64_t)v : dflt;
}

/* Returns 1 when key holds true. */
static int jtrue(const cJSON *o, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* Parses member name of m[0..n) into *out (NULL when absent and !required).
 * EV_EFORMAT with err naming the member when it is required and missing, or
 * present and not strict JSON. */
static ev_status parse_member(const ev_member *m, size_t n, const char *name, int required, cJSON **out,
                              ev_err *err)
{
    const ev_member *x = ev_member_find(m, n, name);
    *out = NULL;
    if (!x) {
        if (required)
            return ev_err_set(err, EV_EFORMAT, "report: %s: missing", name);
        return EV_OK;
    }
    ev_status rc = ev_json_parse(x->data ? x->data : "", x->len, 0, out, err);
    if (rc)
        ev_err_prefix(err, "report: %s", name);
    return rc;
}

/* ---- writing helpers ------------------------------------------------------- */

/* Appends s with &, <, >, " and ' escaped (NULL appends "-"). */
static ev_status put_esc(ev_buf *b, const char *s)
{
    ev_status rc = EV_OK;
    if (!s)
        return ev_buf_puts(b, "-");
    for (const char *p = s; *p && !rc; p++) {
        switch (*p) {
        case '&':
            rc = ev_buf_puts(b, "&amp;");
            break;
        case '<':
            rc = ev_buf_puts(b, "&lt;");
            break;
        case '>':
            rc = ev_buf_puts(b, "&gt;");
            break;
        case '"':
            rc = ev_buf_puts(b, "&quot;");
            break;
        case '\'':
            rc = ev_buf_puts(b, "&#39;");
            break;
        default:
            rc = ev_buf_append(b, p, 1);
            break;
        }
    }
    return rc;
}

/* Appends s as a markdown table cell ('|' escaped; NULL appends "-"). */
static ev_status put_md(ev_buf *b, const char *s)
{
    ev_status rc = EV_OK;
    if (!s)
        return ev_buf_puts(b, "-");
    for (const char *p = s; *p && !rc; p++)
        rc = *p == '|' ? ev_buf_puts(b, "\\|") : ev_buf_append(b, p, 1);
    return rc;
}

/* Appends "<td>escaped s</td>" (class cls when non-NULL). */
static ev_status td(ev_buf *b, const char *cls, const char *s)
{
    ev_status rc = cls ? ev_buf_printf(b, "<td class=\"%s\">", cls) : ev_buf_puts(b, "<td>");
    if (!rc)
        rc = put_esc(b, s);
    if (!rc)
        rc = ev_buf_puts(b, "</td>");
    return rc;
}

/* Formats a double with d decimals into t (or "-" when not finite). */
static const char *fmt(char t[48], double v, int d)
{
    if (!isfinite(v))
        snprintf(t, 48, "-");
    else
        snprintf(t, 48, "%.*f", d, v);
    return t;
}

/* ---- lookups --------------------------------------------------------------- */

/* Orders index entries by key, then insertion order. */
static int cmp_kv(const void *pa, const void *pb)
{
    const kv *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

/* The object of the first entry with key, or NULL. */
static const cJSON *ix_find(const rep *r, const char *key)
{
    size_t lo = 0, hi = r->n_ix;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(r->ix[mid].key, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n_ix && !strcmp(r->ix[lo].key, key) ? r->ix[lo].obj : NULL;
}

/* Writes the decision key of a case-like object (op, dtype, R, N, B). */
static void decision_key(const cJSON *c, char *key, size_t cap)
{
    const char *op = jstr(c, "op"), *dt = jstr(c, "dtype");
    snprintf(key, cap, "D|%s|%s|%" PRId64 "|%" PRId64 "|%" PRId64, op ? op : "?", dt ? dt : "?",
             jint(c, "rows", -1), jint(c, "cols", -1), jint(c, "default_rows", -1));
}

/* Appends an entry (key copied).  EV_ENOMEM. */
static ev_status ix_add(rep *r, size_t *cap, const char *key, const cJSON *obj)
{
    if (r->n_ix == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        kv *v = realloc(r->ix, nc * sizeof *v);
        if (!v)
            return EV_ENOMEM;
        r->ix = v;
        *cap = nc;
    }
    size_t l = strlen(key);
    char *k = malloc(l + 1);
    if (!k)
        return EV_ENOMEM;
    memcpy(k, key, l + 1);
    r->ix[r->n_ix].key = k;
    r->ix[r->n_ix].obj = obj;
    r->ix[r->n_ix].order = r->n_ix;
    r->n_ix++;
    return EV_OK;
}

/*
 * Indexes what the tables look up: jobs by (case, phase, arm) when not a
 * retry ("J|"), retries by the job they retry ("R|"), the figures' jobs
 * by key ("F|"), pairs by (case, arm, against) ("P|"), the estimates over
 * rounds by (case, arm) ("A|"), and the model's decisions by case
 * identity ("D|").
 */
static ev_status rep_index(rep *r)
{
    size_t cap = 0;
    char key[400];
    ev_status rc = EV_OK;
    const cJSON *j, *f = cJSON_GetObjectItemCaseSensitive(r->val, "figures");
    cJSON_ArrayForEach(j, r->jobs)
    {
        const char *ro = jstr(j, "retry_of"), *a = jstr(j, "arm"), *p = jstr(j, "phase");
        if (rc)
            break;
        if (ro) {
            snprintf(key, sizeof key, "R|%s", ro);
            rc = ix_add(r, &cap, key, j);
        } else if (a && p) {
            snprintf(key, sizeof key, "J|%" PRId64 "|%s|%s", jint(j, "case_index", -1), p, a);
            rc = ix_add(r, &cap, key, j);
        }
    }
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(f, "jobs"))
    {
        const char *k = jstr(j, "job_key");
        if (rc || !k)
            continue;
        snprintf(key, sizeof key, "F|%s", k);
        rc = ix_add(r, &cap, key, j);
    }
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(f, "pairs"))
    {
        const char *a = jstr(j, "arm"), *g = jstr(j, "against");
        if (rc || !a || !g)
            continue;
        snprintf(key, sizeof key, "P|%" PRId64 "|%s|%s", jint(j, "case_index", -1), a, g);
        rc = ix_add(r, &cap, key, j);
    }
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(f, "arms"))
    {
        const char *a = jstr(j, "arm");
        if (rc || !a)
            continue;
        snprintf(key, sizeof key, "A|%" PRId64 "|%s", jint(j, "case_index", -1), a);
        rc = ix_add(r, &cap, key, j);
    }
    const cJSON *decs = r->model ? cJSON_GetObjectItemCaseSensitive(r->model, "decisions") : NULL;
    cJSON_ArrayForEach(j, decs)
    {
        if (rc)
            break;
        decision_key(j, key, sizeof key);
        rc = ix_add(r, &cap, key, j);
    }
    if (!rc && r->n_ix)
        qsort(r->ix, r->n_ix, sizeof *r->ix, cmp_kv);
    return rc;
}

/* ---- what the tables show ------------------------------------------------- */

/* The first job of case idx, arm and phase (no retry), or NULL. */
static const cJSON *find_job(const rep *r, int64_t idx, const char *arm, const char *phase)
{
    char key[200];
    snprintf(key, sizeof key, "J|%" PRId64 "|%s|%s", idx, phase, arm);
    return ix_find(r, key);
}

/* The rescue job that retried job_key, or NULL. */
static const cJSON *find_retry(const rep *r, const char *job_key)
{
    char key[200];
    if (!job_key)
        return NULL;
    snprintf(key, sizeof key, "R|%s", job_key);
    return ix_find(r, key);
}

/* Writes into t the cell text of job j: its median (4 decimals), or its
 * outcome; when a retry exists, its result is added in parentheses. */
static const char *job_cell(const rep *r, const cJSON *j, char *t, size_t cap)
{
    char a[48], c[48];
    double v;
    if (!j) {
        snprintf(t, cap, "-");
        return t;
    }
    if (jnum(j, "median_us", &v))
        snprintf(t, cap, "%s", fmt(a, v, 4));
    else
        snprintf(t, cap, "%s", jstr(j, "outcome") ? jstr(j, "outcome") : "?");
    const cJSON *retry = find_retry(r, jstr(j, "job_key"));
    if (retry) {
        size_t l = strlen(t);
        if (jnum(retry, "median_us", &v))
            snprintf(t + l, cap - l, " (retry-1: %s)", fmt(c, v, 4));
        else
            snprintf(t + l, cap - l, " (retry-1: %s)", jstr(retry, "outcome") ? jstr(retry, "outcome") : "?");
    }
    return t;
}

/* The figures' estimate over rounds of case idx and arm, or NULL. */
static const cJSON *fig_arm(const rep *r, int64_t idx, const char *arm)
{
    char key[200];
    snprintf(key, sizeof key, "A|%" PRId64 "|%s", idx, arm);
    return ix_find(r, key);
}

/* The cell of case idx and arm in phase: with one round job_cell of its
 * job; with several the estimate over rounds and how many rounds it
 * stands on ("1.2345 (5 rounds)", "1.2345 (4 of 5 rounds)"), or the first
 * round's outcome when none completed. */
static const char *arm_cell(const rep *r, int64_t idx, const char *arm, const char *phase, char *t,
                            size_t cap)
{
    const cJSON *a = fig_arm(r, idx, arm);
    int64_t k = a ? jint(a, "n_rounds", 1) : 1, u = a ? jint(a, "n_usable", 0) : 0;
    double v;
    char x[48];
    if (k <= 1 || !jnum(a, "estimate_us", &v))
        return job_cell(r, find_job(r, idx, arm, phase), t, cap);
    if (u == k)
        snprintf(t, cap, "%s (%" PRId64 " rounds)", fmt(x, v, 4), k);
    else
        snprintf(t, cap, "%s (%" PRId64 " of %" PRId64 " rounds)", fmt(x, v, 4), u, k);
    return t;
}

/* The estimate of case idx and arm over rounds (figures "arms"), or, when
 * the figures have none, the median of its first job in phase.  Returns 1
 * and sets *v when there is one. */
static int arm_estimate(const rep *r, int64_t idx, const char *arm, const char *phase, double *v)
{
    const cJSON *a = fig_arm(r, idx, arm), *j;
    if (a)
        return jnum(a, "estimate_us", v);
    j = find_job(r, idx, arm, phase);
    return j && jnum(j, "median_us", v);
}

/* The short text of a pair's verdict: "win", "loss", "n.s." (not
 * significant), or "-". */
static const char *verdict_short(const cJSON *p)
{
    const char *v = p ? jstr(p, "verdict") : NULL;
    if (!v || !strcmp(v, "no ratio"))
        return "-";
    return strcmp(v, "not significant") ? v : "n.s.";
}

/* Rank of a known arm in the case table (unknown arms after, bytewise). */
static int arm_rank(const char *a)
{
    static const char *const order[] = {"default", "rows1", "rows2", "rows4", "auto", "cub", "torch-compile"};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (!strcmp(a, order[i]))
            return (int)i;
    return 100;
}

/* qsort comparator for arm columns. */
static int cmp_arm(const void *x, const void *y)
{
    const char *a = *(char *const *)x, *b = *(char *const *)y;
    int ra = arm_rank(a), rb = arm_rank(b);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    return strcmp(a, b);
}

/* Collects the arm columns: every arm of a main or policy job with a case. */
static ev_status collect_arms(rep *r)
{
    const cJSON *j;
    cJSON_ArrayForEach(j, r->jobs)
    {
        const char *a = jstr(j, "arm"), *p = jstr(j, "phase");
        if (!a || !p || (strcmp(p, "main") && strcmp(p, "policy")) || jint(j, "case_index", -1) < 0)
            continue;
        int seen = 0;
        for (size_t i = 0; i < r->n_arms && !seen; i++)
            seen = !strcmp(r->arms[i], a);
        if (seen)
            continue;
        char **v = realloc(r->arms, (r->n_arms + 1) * sizeof *v);
        if (!v)
            return EV_ENOMEM;
        r->arms = v;
        size_t l = strlen(a);
        r->arms[r->n_arms] = malloc(l + 1);
        if (!r->arms[r->n_arms])
            return EV_ENOMEM;
        memcpy(r->arms[r->n_arms++], a, l + 1);
    }
    if (r->n_arms)
        qsort(r->arms, r->n_arms, sizeof *r->arms, cmp_arm);
    return EV_OK;
}

/* The phase a case-table arm is read from: policy for auto, else main. */
static const char *arm_phase(const char *arm)
{
    return strcmp(arm, "auto") ? "main" : "policy";
}

/* The model decision for case c (same op, rows, cols, dtype, B), or NULL. */
static const cJSON *find_decision(const rep *r, const cJSON *c)
{
    char key[200];
    decision_key(c, key, sizeof key);
    return ix_find(r, key);
}

/* Writes "op RxN [stride S] dtype BK" of case c into t. */
static const char *case_label(const cJSON *c, char *t, size_t cap)
{
    int64_t rows = jint(c, "rows", 0), cols = jint(c, "cols", 0), stride = jint(c, "stride", 0);
    const char *op = jstr(c, "op"), *dt = jstr(c, "dtype");
    if (stride != cols)
        snprintf(t, cap, "%s %" PRId64 "x%" PRId64 " stride %" PRId64 " %s B%" PRId64, op ? op : "?", rows,
                 cols, stride, dt ? dt : "?", jint(c, "default_rows", 0));
    else
        snprintf(t, cap, "%s %" PRId64 "x%" PRId64 " %s B%" PRId64, op ? op : "?", rows, cols, dt ? dt : "?",
                 jint(c, "default_rows", 0));
    return t;
}

/* Writes into t why job j (not completed) failed, from its last attempt. */
static const char *failure_reason(const cJSON *j, char *t, size_t cap)
{
    const cJSON *atts = cJSON_GetObjectItemCaseSensitive(j, "attempts");
    const cJSON *last = cJSON_GetArrayItem(atts, cJSON_GetArraySize(atts) - 1);
    const cJSON *p = last ? cJSON_GetObjectItemCaseSensitive(last, "process") : NULL;
    const char *o = jstr(j, "outcome");
    double v;
    if (!last) {
        snprintf(t, cap, "never started");
    } else if (!cJSON_IsObject(p)) {
        snprintf(t, cap, "no process record");
    } else if (o && !strcmp(o, "skipped")) {
        snprintf(t, cap, "%s", jstr(p, "skip_reason") ? jstr(p, "skip_reason") : "skipped");
    } else if (jtrue(p, "timed_out")) {
        snprintf(t, cap, "watchdog timeout");
    } else if (jnum(p, "signal", &v)) {
        snprintf(t, cap, "signal %" PRId64, (int64_t)v);
    } else if (jnum(p, "exit_code", &v) && v != 0) {
        snprintf(t, cap, "exit code %" PRId64, (int64_t)v);
    } else if (jstr(p, "protocol_error")) {
        snprintf(t, cap, "%s", jstr(p, "protocol_error"));
    } else if (o && !strcmp(o, "failed-validation")) {
        const cJSON *vs = cJSON_GetObjectItemCaseSensitive(last, "validations"), *x;
        int64_t mism = 0;
        cJSON_ArrayForEach(x, vs) if (!jtrue(x, "passed")) mism += jint(x, "mismatches", 0);
        snprintf(t, cap, "output does not match the oracle (%" PRId64 " mismatches)", mism);
    } else if (jtrue(p, "interrupted")) {
        snprintf(t, cap, "interrupted");
    } else {
        snprintf(t, cap, "-");
    }
    return t;
}

/* ---- html sections ------------------------------------------------------- */

static const char style[] = "body{font-family:sans-serif;margin:2em;color:#111}"
                            "table{border-collapse:collapse;margin:0.5em 0 1.5em 0}"
                            "th,td{border:1px solid #999;padding:0.2em 0.5em;text-align:left}"
                            "td.n{text-align:right;font-family:monospace}"
                            "td.bad{background:#fdd}td.ok{background:#dfd}"
                            "code{font-family:monospace}";

/* The run and provenance table. */
static ev_status sec_run(const rep *r, ev_buf *b)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r->val, "run");
    const char *st = jstr(run, "status"), *rs = jstr(run, "rescue_status");
    char t[64];
    ev_status rc = ev_buf_puts(b, "<h2>Run</h2>\n<table>\n");
    snprintf(t, sizeof t, "%" PRId64, jint(run, "run_id", -1));
    if (!rc)
        rc = ev_buf_puts(b, "<tr><th>run</th>");
    if (!rc)
        rc = td(b, NULL, t);
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n<tr><th>backend</th>");
    if (!rc)
        rc = td(b, NULL, jstr(run, "backend"));
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n<tr><th>status</th>");
    if (!rc)
        rc = td(b, st && !strcmp(st, "completed") ? "ok" : "bad", st ? st : jstr(run, "status_reason"));
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n<tr><th>rescue status</th>");
    if (!rc)
        rc = td(b, rs ? (!strcmp(rs, "completed-after-rescue") ? "ok" : "bad") : NULL, rs ? rs : "none");
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n<tr><th>protocol id</th>");
    if (!rc)
        rc = td(b, NULL, jstr(run, "protocol_id"));
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n<tr><th>protocol path</th>");
    if (!rc)
        rc = td(b, NULL, jstr(run, "protocol_path"));
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n");
    if (r->prov && !rc) {
        static const char *const keys[] = {"git_commit", "source_tree_hash", "profile_id", "exporter"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0] && !rc; i++) {
            rc = ev_buf_printf(b, "<tr><th>%s</th>", keys[i]);
            if (!rc)
                rc = td(b, NULL, jstr(r->prov, keys[i]));
            if (!rc)
                rc = ev_buf_puts(b, "</tr>\n");
        }
        if (!rc)
            rc = ev_buf_puts(b, "<tr><th>git_dirty</th>");
        if (!rc)
            rc = td(b, NULL, jtrue(r->prov, "git_dirty") ? "yes" : "no");
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    return rc;
}

/* Outcome counts, then every job that did not complete, with its reason. */
static ev_status sec_failures(const rep *r, ev_buf *b)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(r->val, "summary");
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(sum, "jobs_by_outcome"), *x;
    ev_status rc =
        ev_buf_puts(b, "<h2>Failures and skips</h2>\n<table>\n<tr><th>outcome</th><th>jobs</th></tr>\n");
    cJSON_ArrayForEach(x, by)
    {
        char t[32];
        snprintf(t, sizeof t, "%" PRId64, cJSON_IsNumber(x) ? (int64_t)x->valuedouble : 0);
        if (!rc)
            rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, x->string);
        if (!rc)
            rc = td(b, "n", t);
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    size_t n_bad = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, r->jobs)
    {
        const char *o = jstr(j, "outcome");
        if (!o || !strcmp(o, "completed") || rc)
            continue;
        if (n_bad++ == 0)
            rc = ev_buf_puts(b, "<table>\n<tr><th>job</th><th>outcome</th><th>attempts</th><th>reason</th>"
                                "<th>retry</th></tr>\n");
        char reason[600], att[32], retry[96];
        const cJSON *rj = find_retry(r, jstr(j, "job_key"));
        snprintf(att, sizeof att, "%d", cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "attempts")));
        snprintf(retry, sizeof retry, "%s", rj ? (jstr(rj, "outcome") ? jstr(rj, "outcome") : "?") : "-");
        if (!rc)
            rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, jstr(j, "job_key"));
        if (!rc)
            rc = td(b, "bad", o);
        if (!rc)
            rc = td(b, "n", att);
        if (!rc)
            rc = td(b, NULL, failure_reason(j, reason, sizeof reason));
        if (!rc)
            rc = td(b, NULL, retry);
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, n_bad ? "</table>\n" : "<p>Every job completed.</p>\n");
    return rc;
}

/* Per case: every arm's hot median, the recheck, and the model's choice. */
static ev_status sec_cases(const rep *r, ev_buf *b)
{
    ev_status rc =
        ev_buf_puts(b, "<h2>Hot medians per case (microseconds per op)</h2>\n"
                       "<p>Median of the hot samples of the job's last attempt; with several "
                       "rounds the estimate over them (the geometric mean of the completed rounds' "
                       "medians) and how many rounds it stands on; only completed "
                       "jobs claim a median, others show their outcome.</p>\n"
                       "<table>\n<tr><th>#</th><th>case</th><th>role</th>");
    for (size_t i = 0; i < r->n_arms && !rc; i++) {
        rc = ev_buf_puts(b, "<th>");
        if (!rc)
            rc = put_esc(b, r->arms[i]);
        if (!rc)
            rc = ev_buf_puts(b, "</th>");
    }
    if (!rc)
        rc = ev_buf_puts(b, "<th>recheck</th><th>selected (full)</th><th>selected (LOGO)</th></tr>\n");
    const cJSON *c;
    cJSON_ArrayForEach(c, r->cases)
    {
        if (rc)
            break;
        int64_t idx = jint(c, "case_index", -1);
        char t[200], lab[160];
        snprintf(t, sizeof t, "%" PRId64, idx);
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, "n", t);
        if (!rc)
            rc = td(b, NULL, case_label(c, lab, sizeof lab));
        if (!rc)
            rc = td(b, NULL, jstr(c, "role"));
        for (size_t i = 0; i < r->n_arms && !rc; i++) {
            const cJSON *j = find_job(r, idx, r->arms[i], arm_phase(r->arms[i]));
            double v;
            rc = td(b, j && !jnum(j, "median_us", &v) ? "bad" : "n",
                    arm_cell(r, idx, r->arms[i], arm_phase(r->arms[i]), t, sizeof t));
        }
        if (!rc)
            rc = td(b, "n", job_cell(r, find_job(r, idx, "default", "recheck"), t, sizeof t));
        const cJSON *d = find_decision(r, c);
        if (!rc)
            rc = td(b, NULL, d ? jstr(d, "selected") : NULL);
        if (!rc)
            rc = td(b, NULL, d ? jstr(d, "logo_selected") : NULL);
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");

    /* Reference arms: jobs without a case. */
    size_t n_ref = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, r->jobs)
    {
        if (rc || cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "case_index")))
            continue;
        char t[200];
        if (n_ref++ == 0)
            rc = ev_buf_puts(b, "<h3>Reference arms</h3>\n<table>\n<tr><th>arm</th><th>phase</th>"
                                "<th>hot median (us per op)</th></tr>\n");
        if (!rc)
            rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, jstr(j, "arm"));
        if (!rc)
            rc = td(b, NULL, jstr(j, "phase"));
        if (!rc)
            rc = td(b, "n", job_cell(r, j, t, sizeof t));
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc && n_ref)
        rc = ev_buf_puts(b, "</table>\n");
    return rc;
}

/* The model: coefficients, decisions, policy score and held-out regret. */
static ev_status sec_model(const rep *r, ev_buf *b)
{
    char t[48];
    double v;
    ev_status rc = ev_buf_puts(b, "<h2>Cost model</h2>\n");
    if (!r->model)
        return rc ? rc : ev_buf_puts(b, "<p>No model.json.</p>\n");
    if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r->model, "fit"))) {
        if (!rc)
            rc = ev_buf_puts(b, "<p>The fit failed: ");
        if (!rc)
            rc = put_esc(b, jstr(r->model, "fit_reason"));
        if (!rc)
            rc = ev_buf_puts(b, "</p>\n");
        return rc;
    }
    if (!rc)
        rc = ev_buf_puts(b, "<p><code>");
    if (!rc)
        rc = put_esc(b, jstr(r->model, "model"));
    if (!rc)
        rc = ev_buf_printf(b, "</code>, S = %" PRId64 ", threshold %s</p>\n", jint(r->model, "sms", 0),
                           jnum(r->model, "threshold", &v) ? fmt(t, v, 4) : "-");
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(r->model, "coefficients");
    if (!rc)
        rc = ev_buf_puts(b, "<table>\n<tr><th>a0</th><th>aP</th><th>aD</th></tr>\n<tr>");
    static const char *const names[3] = {"a0", "aP", "aD"};
    for (int k = 0; k < 3 && !rc; k++) {
        char e[48];
        if (jnum(co, names[k], &v))
            snprintf(e, sizeof e, "%.6g", v);
        else
            snprintf(e, sizeof e, "-");
        rc = td(b, "n", e);
    }
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n</table>\n");
    if (!rc)
        rc = ev_buf_printf(
            b,
            "<p>Policy score (geometry-weighted geometric mean of observed selected / default): "
            "full fit %s, LOGO ",
            jnum(r->model, "policy_geomean", &v) ? fmt(t, v, 5) : "-");
    if (!rc)
        rc = ev_buf_printf(b, "%s.</p>\n", jnum(r->model, "policy_geomean_logo", &v) ? fmt(t, v, 5) : "-");

    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(r->model, "excluded"), *x;
    if (!rc && cJSON_GetArraySize(ex) > 0) {
        rc = ev_buf_puts(
            b, "<h3>Cases left out of the fit</h3>\n<table>\n<tr><th>case</th><th>reason</th></tr>\n");
        cJSON_ArrayForEach(x, ex)
        {
            char lab[160];
            if (rc)
                break;
            rc = ev_buf_puts(b, "<tr>");
            if (!rc)
                rc = td(b, NULL, case_label(x, lab, sizeof lab));
            if (!rc)
                rc = td(b, NULL, jstr(x, "reason"));
            if (!rc)
                rc = ev_buf_puts(b, "</tr>\n");
        }
        if (!rc)
            rc = ev_buf_puts(b, "</table>\n");
    }

    /* decisions against what was measured */
    const cJSON *decs = cJSON_GetObjectItemCaseSensitive(r->model, "decisions");
    if (!rc && cJSON_GetArraySize(decs) > 0) {
        rc = ev_buf_puts(b, "<h3>Decisions against measurements</h3>\n<table>\n<tr><th>case</th><th>role</th>"
                            "<th>selected</th><th>LOGO</th><th>predicted selected / default</th>"
                            "<th>observed selected / default</th><th>fastest observed</th></tr>\n");
        cJSON_ArrayForEach(x, decs)
        {
            static const char *const sc[3] = {"default", "rows1", "rows2"};
            const cJSON *pr = cJSON_GetObjectItemCaseSensitive(x, "predicted");
            const cJSON *ob = cJSON_GetObjectItemCaseSensitive(x, "observed");
            const char *sel = jstr(x, "selected");
            double ps = 0, pd = 0, os = 0, od = 0, best = 0;
            const char *fastest = NULL;
            char lab[160], u[48];
            for (int k = 0; k < 3; k++) {
                double v2;
                if (jnum(ob, sc[k], &v2) && (!fastest || v2 < best)) {
                    fastest = sc[k];
                    best = v2;
                }
            }
            if (rc)
                break;
            rc = ev_buf_puts(b, "<tr>");
            if (!rc)
                rc = td(b, NULL, case_label(x, lab, sizeof lab));
            if (!rc)
                rc = td(b, NULL, jstr(x, "role"));
            if (!rc)
                rc = td(b, NULL, sel);
            if (!rc)
                rc = td(b, NULL, jstr(x, "logo_selected"));
            if (!rc)
                rc = td(b, "n",
                        sel && jnum(pr, sel, &ps) && jnum(pr, "default", &pd) ? fmt(u, ps / pd, 4) : "-");
            if (!rc) {
                int have = sel && jnum(ob, sel, &os) && jnum(ob, "default", &od);
                rc = td(b, have && os / od > 1.0 ? "n bad" : "n", have ? fmt(u, os / od, 4) : "-");
            }
            if (!rc)
                rc = td(b, NULL, fastest);
            if (!rc)
                rc = ev_buf_puts(b, "</tr>\n");
        }
        if (!rc)
            rc = ev_buf_puts(b, "</table>\n");
    }

    const cJSON *hr = cJSON_GetObjectItemCaseSensitive(r->model, "holdout_regret");
    if (!rc)
        rc = ev_buf_puts(b, "<h3>Held-out regret</h3>\n");
    if (!rc && jint(hr, "n", 0) == 0)
        rc = ev_buf_puts(b, "<p>No holdout cases.</p>\n");
    else if (!rc) {
        rc = ev_buf_puts(b, "<table>\n<tr><th>case</th><th>selected</th><th>regret</th></tr>\n");
        cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(hr, "cases"))
        {
            char lab[160];
            if (rc)
                break;
            rc = ev_buf_puts(b, "<tr>");
            if (!rc)
                rc = td(b, NULL, case_label(x, lab, sizeof lab));
            if (!rc)
                rc = td(b, NULL, jstr(x, "selected"));
            if (!rc)
                rc = td(b, "n", jnum(x, "regret", &v) ? fmt(t, v, 5) : "-");
            if (!rc)
                rc = ev_buf_puts(b, "</tr>\n");
        }
        if (!rc)
            rc = ev_buf_printf(b, "</table>\n<p>Geometric mean %s, ",
                               jnum(hr, "geomean", &v) ? fmt(t, v, 5) : "-");
        if (!rc)
            rc = ev_buf_printf(b, "maximum %s.</p>\n", jnum(hr, "max", &v) ? fmt(t, v, 5) : "-");
    }
    return rc;
}

/* ---- figures (issue 7): charts and tables -------------------------------------- */

/* Reads a number node, raw exact text or parsed.  Returns 1 and sets *v. */
static int numv(const cJSON *n, double *v)
{
    if (cJSON_IsNumber(n)) {
        *v = n->valuedouble;
        return 1;
    }
    return 0;
}

/* The figures' per-job object of job_key, or NULL. */
static const cJSON *fig_job(const rep *r, const char *job_key)
{
    char key[200];
    if (!job_key)
        return NULL;
    snprintf(key, sizeof key, "F|%s", job_key);
    return ix_find(r, key);
}

/* Reads median_us and median_ci of the figures job of j.  Returns 1 when
 * all three are numbers. */
static int job_interval(const rep *r, const cJSON *j, double *med, double *lo, double *hi)
{
    const cJSON *f = j ? fig_job(r, jstr(j, "job_key")) : NULL;
    const cJSON *ci = f ? cJSON_GetObjectItemCaseSensitive(f, "median_ci") : NULL;
    return f && jnum(f, "median_us", med) && numv(cJSON_GetArrayItem(ci, 0), lo) &&
           numv(cJSON_GetArrayItem(ci, 1), hi);
}

/* Per case: a chart of every arm's hot median and its interval, the floor
 * marked (x axis linear from 0). */
static ev_status sec_case_charts(const rep *r, ev_buf *b)
{
    const int W = 640, L = 120, R = 600, H = 18;
    double floor_us = 0;
    const cJSON *fj = NULL, *j;
    cJSON_ArrayForEach(j, r->jobs)
    {
        const char *a = jstr(j, "arm");
        if (a && !strcmp(a, "floor"))
            fj = j;
    }
    int have_floor = fj && jnum(fj, "median_us", &floor_us);
    ev_status rc =
        ev_buf_puts(b, "<h2>Hot medians with 95% bootstrap intervals, per case</h2>\n"
                       "<p>Dot: median of the hot samples (us per op); bar: its percentile bootstrap "
                       "interval (validation.json figures); dashed line: the per-op launch floor.</p>\n");
    const cJSON *c;
    cJSON_ArrayForEach(c, r->cases)
    {
        int64_t idx = jint(c, "case_index", -1);
        double vmax = have_floor ? floor_us : 0;
        size_t rows = 0;
        for (size_t i = 0; i < r->n_arms; i++) {
            double m, lo, hi;
            if (job_interval(r, find_job(r, idx, r->arms[i], arm_phase(r->arms[i])), &m, &lo, &hi)) {
                rows++;
                if (hi > vmax)
                    vmax = hi;
            }
        }
        char lab[160];
        if (rc)
            break;
        rc = ev_buf_puts(b, "<h3>");
        if (!rc)
            rc = put_esc(b, case_label(c, lab, sizeof lab));
        if (!rc)
            rc = ev_buf_puts(b, "</h3>\n");
        if (rc || !rows || !(vmax > 0)) {
            if (!rc)
                rc = ev_buf_puts(b, "<p>No completed arm.</p>\n");
            continue;
        }
        vmax *= 1.1;
        int h = (int)rows * H + 30;
        rc = ev_buf_printf(b,
                           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                           "role=\"img\">\n",
                           W, h);
        size_t row = 0;
        for (size_t i = 0; i < r->n_arms && !rc; i++) {
            double m, lo, hi;
            if (!job_interval(r, find_job(r, idx, r->arms[i], arm_phase(r->arms[i])), &m, &lo, &hi))
                continue;
            double y = 10.0 + (double)row * H + H / 2.0;
            double x0 = L + (R - L) * lo / vmax, x1 = L + (R - L) * hi / vmax, xm = L + (R - L) * m / vmax;
            rc = ev_buf_printf(b, "<text x=\"4\" y=\"%.2f\" font-size=\"12\">", y + 4);
            if (!rc)
                rc = put_esc(b, r->arms[i]);
            if (!rc)
                rc = ev_buf_printf(
                    b,
                    "</text><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                    "stroke=\"#333\" stroke-width=\"2\"/><circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" "
                    "fill=\"#1f77b4\"/><text x=\"%.2f\" y=\"%.2f\" font-size=\"10\">%.4f</text>\n",
                    x0, y, x1, y, xm, y, x1 + 4, y + 4, m);
            row++;
        }
        double axis = 10.0 + (double)rows * H;
        if (!rc)
            rc = ev_buf_printf(
                b,
                "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"#999\"/>"
                "<text x=\"%d\" y=\"%.2f\" font-size=\"10\">0</text>"
                "<text x=\"%d\" y=\"%.2f\" font-size=\"10\" text-anchor=\"end\">%.4g us</text>\n",
                L, axis, R, axis, L, axis + 12, R, axis + 12, vmax);
        if (!rc && have_floor) {
            double xf = L + (R - L) * floor_us / vmax;
            rc = ev_buf_printf(b,
                               "<line x1=\"%.2f\" y1=\"4\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#d62728\" "
                               "stroke-dasharray=\"4 3\"/><text x=\"%.2f\" y=\"%.2f\" font-size=\"10\" "
                               "fill=\"#d62728\">floor %.4g us</text>\n",
                               xf, xf, axis, xf + 12, axis + 12, floor_us);
        }
        if (!rc)
            rc = ev_buf_puts(b, "</svg>\n");
    }
    return rc;
}

/* The pair object (figures) of case idx, arm and against, or NULL. */
static const cJSON *fig_pair(const rep *r, int64_t idx, const char *arm, const char *against)
{
    char key[200];
    snprintf(key, sizeof key, "P|%" PRId64 "|%s|%s", idx, arm, against);
    return ix_find(r, key);
}

static int md_best_peer(const rep *r, int64_t idx, const char **name, double *v);

/* The pair auto / best peer of case idx (figures), or NULL. */
static const cJSON *auto_pair(const rep *r, int64_t idx)
{
    const char *peer;
    double v;
    return md_best_peer(r, idx, &peer, &v) ? fig_pair(r, idx, "auto", peer) : NULL;
}

/* Reads a pair's interval [lo, hi].  Returns 1 when both are numbers. */
static int pair_interval(const cJSON *p, double *lo, double *hi)
{
    const cJSON *iv = p ? cJSON_GetObjectItemCaseSensitive(p, "interval") : NULL;
    return numv(cJSON_GetArrayItem(iv, 0), lo) && numv(cJSON_GetArrayItem(iv, 1), hi);
}

/* auto / best peer per case (log scale, the 1.0 line drawn). */
static ev_status sec_auto_vs_peer(const rep *r, ev_buf *b)
{
    const int W = 640, L = 170, R = 600, H = 18;
    double lo_all = 0.5, hi_all = 2.0;
    size_t rows = 0;
    const cJSON *c;
    ev_status rc =
        ev_buf_puts(b, "<h2>auto / best peer per case</h2>\n<p>Ratio of auto to the fastest completed "
                       "peer of the case, with its 95% interval (over rounds; with one round within the two "
                       "processes only); green: a win (interval below 1), red: a loss (above 1), grey: not "
                       "significant (the interval holds 1).  Log scale.</p>\n");
    /* first pass: the range */
    cJSON_ArrayForEach(c, r->cases)
    {
        const cJSON *p = auto_pair(r, jint(c, "case_index", -1));
        double lo, hi;
        if (pair_interval(p, &lo, &hi) && lo > 0) {
            rows++;
            lo_all = lo < lo_all ? lo : lo_all;
            hi_all = hi > hi_all ? hi : hi_all;
        }
    }
    if (rc || !rows)
        return rc ? rc : ev_buf_puts(b, "<p>No case has both auto and a peer completed on this host.</p>\n");
    double l0 = log(lo_all / 1.1), l1 = log(hi_all * 1.1);
    rc = ev_buf_printf(b,
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\">\n",
                       W, (int)rows * H + 30);
    size_t row = 0;
    cJSON_ArrayForEach(c, r->cases)
    {
        int64_t idx = jint(c, "case_index", -1);
        double lo, hi, m;
        const cJSON *p = auto_pair(r, idx);
        if (rc || !pair_interval(p, &lo, &hi) || !jnum(p, "ratio", &m) || !(lo > 0))
            continue;
        char lab[200], cl[160];
        const char *vd = verdict_short(p);
        snprintf(lab, sizeof lab, "%s vs %s (%s)", case_label(c, cl, sizeof cl), jstr(p, "against"), vd);
        double y = 10.0 + (double)row * H + H / 2.0;
        double x0 = L + (R - L) * (log(lo) - l0) / (l1 - l0), x1 = L + (R - L) * (log(hi) - l0) / (l1 - l0),
               xm = L + (R - L) * (log(m) - l0) / (l1 - l0);
        rc = ev_buf_printf(b, "<text x=\"4\" y=\"%.2f\" font-size=\"10\">", y + 4);
        if (!rc)
            rc = put_esc(b, lab);
        if (!rc)
            rc = ev_buf_printf(b,
                               "</text><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\" "
                               "stroke-width=\"2\"/><circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\"/>\n",
                               x0, y, x1, y, xm, y,
                               !strcmp(vd, "win")    ? "#2ca02c"
                               : !strcmp(vd, "loss") ? "#d62728"
                                                     : "#888888");
        row++;
    }
    double x1 = L + (R - L) * (0.0 - l0) / (l1 - l0), axis = 10.0 + (double)rows * H;
    if (!rc)
        rc = ev_buf_printf(
            b,
            "<line x1=\"%.2f\" y1=\"4\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#999\" "
            "stroke-dasharray=\"4 3\"/><text x=\"%.2f\" y=\"%.2f\" font-size=\"10\">1.0</text>\n"
            "</svg>\n",
            x1, x1, axis, x1 - 8, axis + 12);
    return rc;
}

/* Pair tables: per case, then across cases, then tail disclosures. */
static ev_status sec_pairs(const rep *r, ev_buf *b)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(r->val, "figures"), *p;
    char t[48], u[48], w[48];
    double v, lo, hi;
    ev_status rc =
        ev_buf_puts(b, "<h2>Arm comparisons</h2>\n<p>Ratio (arm / against) with its 95% interval and "
                       "verdict: over rounds (paired by round, a t interval on the mean log ratio) when the "
                       "run has several, else the ratio of hot medians with its percentile bootstrap "
                       "interval within the two processes only.  A ratio whose interval holds 1 is not "
                       "significant (n.s.), neither a win nor a loss.  Beside it, within the first paired "
                       "round: the bootstrap interval, the exact two-sided Mann-Whitney p (7 against 7 "
                       "samples cannot go below 2/3432) and the ratio of empirical P95s (descriptive "
                       "only).</p>\n<table>\n<tr><th>case</th><th>arm</th><th>against</th><th>rounds</th>"
                       "<th>ratio</th><th>interval</th><th>verdict</th><th>within-process interval</th>"
                       "<th>p</th><th>P95 ratio</th></tr>\n");
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(f, "pairs"))
    {
        if (rc)
            break;
        snprintf(t, sizeof t, "%" PRId64, jint(p, "case_index", -1));
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, "n", t);
        if (!rc)
            rc = td(b, NULL, jstr(p, "arm"));
        if (!rc)
            rc = td(b, NULL, jstr(p, "against"));
        snprintf(t, sizeof t, "%" PRId64, jint(p, "n_rounds", 0));
        if (!rc)
            rc = td(b, "n", t);
        if (!jnum(p, "ratio", &v)) {
            if (!rc)
                rc = ev_buf_puts(b, "<td colspan=\"6\">");
            if (!rc)
                rc = put_esc(b, jstr(p, "ratio_reason"));
            if (!rc)
                rc = ev_buf_puts(b, "</td></tr>\n");
            continue;
        }
        const char *vd = verdict_short(p);
        const char *cls = !strcmp(vd, "win") ? "n ok" : !strcmp(vd, "loss") ? "n bad" : "n";
        const cJSON *wi = cJSON_GetObjectItemCaseSensitive(p, "within");
        if (!rc)
            rc = td(b, cls, fmt(t, v, 4));
        if (!rc && pair_interval(p, &lo, &hi)) {
            char iv[100];
            snprintf(iv, sizeof iv, "[%s, %s]", fmt(u, lo, 4), fmt(w, hi, 4));
            rc = td(b, "n", iv);
        } else if (!rc) {
            rc = td(b, "n", "-");
        }
        if (!rc)
            rc = td(b, cls, vd);
        if (!rc && jnum(wi, "ci_low", &lo) && jnum(wi, "ci_high", &hi)) {
            char iv[100];
            snprintf(iv, sizeof iv, "[%s, %s]", fmt(u, lo, 4), fmt(w, hi, 4));
            rc = td(b, "n", iv);
        } else if (!rc) {
            rc = td(b, "n", "-");
        }
        if (!rc) {
            if (jnum(wi, "mwu_p", &v))
                snprintf(t, sizeof t, "%.4g", v);
            else
                snprintf(t, sizeof t, "-");
            rc = td(b, "n", t);
        }
        if (!rc)
            rc = td(b, jtrue(p, "tail_disclosure") ? "n bad" : "n",
                    jnum(wi, "p95_ratio", &v) ? fmt(t, v, 4) : "-");
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n<h3>Across cases</h3>\n<table>\n<tr><th>arm</th><th>against</th>"
                            "<th>cases</th><th>ratio of sums</th><th>interval</th><th>geomean ratio</th>"
                            "<th>interval</th><th>wins / losses / not significant</th></tr>\n");
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(f, "across"))
    {
        if (rc)
            break;
        snprintf(t, sizeof t, "%" PRId64, jint(p, "n_cases", 0));
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, jstr(p, "arm"));
        if (!rc)
            rc = td(b, NULL, jstr(p, "against"));
        if (!rc)
            rc = td(b, "n", t);
        static const char *const keys[2][2] = {{"ratio_of_sums", "ratio_of_sums_ci"},
                                               {"geomean_ratio", "geomean_ratio_ci"}};
        for (int k = 0; k < 2 && !rc; k++) {
            const cJSON *ci = cJSON_GetObjectItemCaseSensitive(p, keys[k][1]);
            rc = td(b, "n", jnum(p, keys[k][0], &v) ? fmt(t, v, 4) : "-");
            if (!rc && numv(cJSON_GetArrayItem(ci, 0), &lo) && numv(cJSON_GetArrayItem(ci, 1), &hi)) {
                char iv[100];
                snprintf(iv, sizeof iv, "[%s, %s]", fmt(u, lo, 4), fmt(w, hi, 4));
                rc = td(b, "n", iv);
            } else if (!rc) {
                rc = td(b, "n", "-");
            }
        }
        snprintf(t, sizeof t, "%" PRId64 " / %" PRId64 " / %" PRId64, jint(p, "wins", 0),
                 jint(p, "losses", 0), jint(p, "not_significant", 0));
        if (!rc)
            rc = td(b, "n", t);
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n<h3>Tail disclosures</h3>\n");
    const cJSON *tails = cJSON_GetObjectItemCaseSensitive(f, "tail_disclosures");
    if (!rc && cJSON_GetArraySize(tails) == 0)
        return ev_buf_puts(b, "<p>No case whose median improves while its empirical P95 regresses.</p>\n");
    if (!rc)
        rc = ev_buf_puts(b, "<p>The median improves but the empirical P95 regresses (descriptive only):</p>\n"
                            "<table>\n<tr><th>case</th><th>arm</th><th>against</th><th>ratio</th>"
                            "<th>P95 ratio</th></tr>\n");
    cJSON_ArrayForEach(p, tails)
    {
        if (rc)
            break;
        snprintf(t, sizeof t, "%" PRId64, jint(p, "case_index", -1));
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, "n", t);
        if (!rc)
            rc = td(b, NULL, jstr(p, "arm"));
        if (!rc)
            rc = td(b, NULL, jstr(p, "against"));
        if (!rc)
            rc = td(b, "n", jnum(p, "ratio", &v) ? fmt(u, v, 4) : "-");
        if (!rc)
            rc = td(b, "n bad", jnum(p, "p95_ratio", &v) ? fmt(u, v, 4) : "-");
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    return rc;
}

/* Per job: median, interval, P95, cold / hot, SM clock range. */
static ev_status sec_jobs(const rep *r, ev_buf *b)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(r->val, "figures"), *j;
    char t[48], u[48], w[48];
    double v, lo, hi;
    ev_status rc =
        ev_buf_puts(b, "<h2>Per job</h2>\n<table>\n<tr><th>job</th><th>hot samples</th><th>median</th>"
                       "<th>interval</th><th>P95</th><th>cold / hot</th><th>SM clock (MHz)</th></tr>\n");
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(f, "jobs"))
    {
        if (rc)
            break;
        snprintf(t, sizeof t, "%" PRId64, jint(j, "n_hot", 0));
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, NULL, jstr(j, "job_key"));
        if (!rc)
            rc = td(b, "n", t);
        if (!rc)
            rc = td(b, "n", jnum(j, "median_us", &v) ? fmt(t, v, 4) : jstr(j, "median_us_reason"));
        const cJSON *ci = cJSON_GetObjectItemCaseSensitive(j, "median_ci");
        if (!rc && numv(cJSON_GetArrayItem(ci, 0), &lo) && numv(cJSON_GetArrayItem(ci, 1), &hi)) {
            char iv[100];
            snprintf(iv, sizeof iv, "[%s, %s]", fmt(u, lo, 4), fmt(w, hi, 4));
            rc = td(b, "n", iv);
        } else if (!rc) {
            rc = td(b, "n", "-");
        }
        if (!rc)
            rc = td(b, "n", jnum(j, "p95_us", &v) ? fmt(t, v, 4) : "-");
        if (!rc)
            rc = td(b, "n", jnum(j, "cold_over_hot", &v) ? fmt(t, v, 3) : "-");
        if (!rc) {
            double a, c;
            if (jnum(j, "sm_clock_min_mhz", &a) && jnum(j, "sm_clock_max_mhz", &c))
                snprintf(t, sizeof t, "%.0f - %.0f", a, c);
            else
                snprintf(t, sizeof t, "not recorded");
            rc = td(b, "n", t);
        }
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    return rc;
}

/* The model's residuals: observed against predicted (full fit), y = x drawn. */
static ev_status sec_residuals(const rep *r, ev_buf *b)
{
    const cJSON *res = r->model ? cJSON_GetObjectItemCaseSensitive(r->model, "residuals") : NULL;
    const cJSON *obs = cJSON_GetObjectItemCaseSensitive(res, "observations"), *o;
    const int S = 360, M = 40;
    double vmax = 0, x, y;
    cJSON_ArrayForEach(o, obs)
    {
        if (jnum(o, "observed", &x) && jnum(o, "predicted", &y)) {
            vmax = x > vmax ? x : vmax;
            vmax = y > vmax ? y : vmax;
        }
    }
    if (!(vmax > 0))
        return EV_OK;
    vmax *= 1.05;
    ev_status rc =
        ev_buf_printf(b,
                      "<h3>Residuals (full fit)</h3>\n<p>Each observation's predicted against "
                      "observed median (us per op); blue: fitted, orange: held out; the diagonal is "
                      "a perfect prediction.</p>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"%d\" height=\"%d\" role=\"img\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
                      "y2=\"%d\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n<rect x=\"%d\" y=\"%d\" "
                      "width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
                      S + 2 * M, S + 2 * M, M, S + M, S + M, M, M, M, S, S);
    cJSON_ArrayForEach(o, obs)
    {
        if (rc)
            break;
        if (!jnum(o, "observed", &x) || !jnum(o, "predicted", &y))
            continue;
        rc = ev_buf_printf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n", M + S * x / vmax,
                           M + S - S * y / vmax, jtrue(o, "fitted") ? "#1f77b4" : "#ff7f0e");
    }
    if (!rc)
        rc = ev_buf_printf(b,
                           "<text x=\"%d\" y=\"%d\" font-size=\"11\">observed (max %.4g)</text>"
                           "<text x=\"4\" y=\"%d\" font-size=\"11\">predicted</text>\n</svg>\n",
                           M, S + M + 28, vmax, M - 8);
    return rc;
}

/* Drift of the recheck default against the main default, per case. */
static ev_status sec_drift(const rep *r, ev_buf *b)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(r->val, "drift"), *x;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(d, "cases");
    char t[48];
    double v;
    ev_status rc = ev_buf_puts(b, "<h2>Drift (recheck / main - 1, default arm)</h2>\n");
    if (!rc && cJSON_GetArraySize(cs) == 0)
        return ev_buf_puts(b, "<p>No recheck jobs.</p>\n");
    if (!rc)
        rc = ev_buf_puts(b, "<table>\n<tr><th>case</th><th>main</th><th>recheck</th><th>drift</th></tr>\n");
    cJSON_ArrayForEach(x, cs)
    {
        if (rc)
            break;
        snprintf(t, sizeof t, "%" PRId64, jint(x, "case_index", -1));
        rc = ev_buf_puts(b, "<tr>");
        if (!rc)
            rc = td(b, "n", t);
        if (!rc)
            rc = td(b, "n", jnum(x, "main_median_us", &v) ? fmt(t, v, 4) : jstr(x, "main_median_us_reason"));
        if (!rc)
            rc = td(b, "n",
                    jnum(x, "recheck_median_us", &v) ? fmt(t, v, 4) : jstr(x, "recheck_median_us_reason"));
        if (!rc) {
            if (jnum(x, "drift", &v)) {
                snprintf(t, sizeof t, "%+.3f%%", v * 100.0);
                rc = td(b, "n", t);
            } else {
                rc = td(b, "bad", jstr(x, "drift_reason"));
            }
        }
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    if (!rc && jnum(d, "min", &v)) {
        rc = ev_buf_printf(b, "<p>Drift ranged from %+.3f%%", v * 100.0);
        if (!rc && jnum(d, "max", &v))
            rc = ev_buf_printf(b, " to %+.3f%%.</p>\n", v * 100.0);
    }
    return rc;
}

/* ---- entry points ------------------------------------------------------------ */

/* Frees what rep holds. */
static void rep_free(rep *r)
{
    cJSON_Delete(r->val);
    cJSON_Delete(r->model);
    cJSON_Delete(r->prov);
    for (size_t i = 0; i < r->n_arms; i++)
        free(r->arms[i]);
    free(r->arms);
    for (size_t i = 0; i < r->n_ix; i++)
        free(r->ix[i].key);
    free(r->ix);
    memset(r, 0, sizeof *r);
}

/* Parses the members a report needs into r. */
static ev_status rep_load(const ev_member *m, size_t n, rep *r, ev_err *err)
{
    ev_status rc;
    memset(r, 0, sizeof *r);
    if ((rc = parse_member(m, n, "validation.json", 1, &r->val, err)) ||
        (rc = parse_member(m, n, "model.json", 0, &r->model, err)) ||
        (rc = parse_member(m, n, "provenance.json", 0, &r->prov, err)))
        return rc;
    r->jobs = cJSON_GetObjectItemCaseSensitive(r->val, "jobs");
    r->cases = cJSON_GetObjectItemCaseSensitive(r->val, "cases");
    if (!cJSON_IsArray(r->jobs) || !cJSON_IsArray(r->cases) ||
        !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r->val, "run")))
        return ev_err_set(err, EV_EFORMAT, "report: validation.json: run, cases or jobs missing");
    if ((rc = collect_arms(r)) || (rc = rep_index(r)))
        return ev_err_set(err, rc, "report: out of memory");
    return EV_OK;
}

/* See report.h. */
ev_status ev_report_html(const ev_member *m, size_t n, ev_buf *out, ev_err *err)
{
    rep r;
    ev_buf b = EV_BUF_INIT;
    ev_status rc = rep_load(m, n, &r, err);
    if (rc)
        goto out;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r.val, "run");
    rc = ev_buf_printf(&b,
                       "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<title>evident report: run %" PRId64 "</title>\n<style>%s</style>\n</head>\n<body>\n"
                       "<h1>evident report: run %" PRId64 "</h1>\n"
                       "<p>Generated by <code>evident report</code> from this bundle's other members only; "
                       "<code>verify-bundle</code> regenerates it byte for byte.</p>\n",
                       jint(run, "run_id", -1), style, jint(run, "run_id", -1));
    if (!rc)
        rc = sec_run(&r, &b);
    if (!rc)
        rc = sec_failures(&r, &b);
    if (!rc)
        rc = sec_cases(&r, &b);
    if (!rc)
        rc = sec_case_charts(&r, &b);
    if (!rc)
        rc = sec_auto_vs_peer(&r, &b);
    if (!rc)
        rc = sec_pairs(&r, &b);
    if (!rc)
        rc = sec_model(&r, &b);
    if (!rc)
        rc = sec_residuals(&r, &b);
    if (!rc)
        rc = sec_drift(&r, &b);
    if (!rc)
        rc = sec_jobs(&r, &b);
    if (!rc)
        rc = ev_buf_puts(&b, "</body>\n</html>\n");
    if (rc) {
        ev_err_set(err, rc, "report: out of memory");
        goto out;
    }
    rc = ev_buf_append(out, b.data, b.len);
    if (rc)
        ev_err_set(err, rc, "report: out of memory");
out:
    ev_buf_free(&b);
    rep_free(&r);
    return rc;
}

/* ---- markdown (docs' case table) ------------------------------------------------ */

/* The peers whose fastest completed job is a case's best peer. */
static const char *const md_peers[2] = {"cub", "torch-compile"};

/* Returns 1 and sets *v to the hot median of j when j is completed with
 * one (validation.json claims a median only then), else 0. */
static int md_median(const cJSON *j, double *v)
{
    return j && jnum(j, "median_us", v);
}

/* The reference arm job (no case, phase main, not a retry) of arm, or its
 * rescue retry when the original has no median and the retry has one;
 * NULL when there is none.  *used_retry is set to 1 when the retry is
 * returned, else 0. */
static const cJSON *md_ref_job(const rep *r, const char *arm, int *used_retry)
{
    const cJSON *j = find_job(r, -1, arm, "main"), *rj;
    double v;
    *used_retry = 0;
    if (j && !md_median(j, &v) && (rj = find_retry(r, jstr(j, "job_key"))) && md_median(rj, &v)) {
        *used_retry = 1;
        return rj;
    }
    return j;
}

/* Returns 1 and sets *name and *v to the fastest of the case's peers by
 * their estimate over rounds (figures "arms": main phase, not retries; with
 * one round the median); 0 (nothing written) when no peer completed.
 * Equal estimates go to the first in md_peers. */
static int md_best_peer(const rep *r, int64_t idx, const char **name, double *v)
{
    const char *best = NULL;
    double bm = 0, x;
    for (size_t k = 0; k < sizeof md_peers / sizeof md_peers[0]; k++)
        if (arm_estimate(r, idx, md_peers[k], "main", &x) && (!best || x < bm)) {
            best = md_peers[k];
            bm = x;
        }
    if (!best)
        return 0;
    *name = best;
    *v = bm;
    return 1;
}

/* Returns 1 and sets *bytes to the in_span of the last attempt's binding
 * of job j (the bytes one ceiling op reads) when it is a positive number;
 * else 0. */
static int md_ceiling_bytes(const cJSON *j, double *bytes)
{
    const cJSON *atts = j ? cJSON_GetObjectItemCaseSensitive(j, "attempts") : NULL;
    const cJSON *last = cJSON_GetArrayItem(atts, cJSON_GetArraySize(atts) - 1);
    const cJSON *bind = last ? cJSON_GetObjectItemCaseSensitive(last, "binding") : NULL;
    double v;
    if (!cJSON_IsObject(bind) || !jnum(bind, "in_span", &v) || !(v > 0))
        return 0;
    *bytes = v;
    return 1;
}

/* Appends the header above the table: the run, and the same-run floor and
 * ceiling (as bytes/s when the ceiling's binding says how many bytes an op
 * reads).  Sets *floor_us to the floor's median and *have_floor to 1 when
 * there is one (else *have_floor = 0).  EV_ENOMEM. */
static ev_status md_header(const rep *r, ev_buf *b, double *floor_us, int *have_floor)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r->val, "run");
    const char *st = jstr(run, "status"), *rs = jstr(run, "rescue_status");
    char t[48], u[48];
    double v, bytes;
    int fr, cr;
    const cJSON *fj = md_ref_job(r, "floor", &fr), *cj = md_ref_job(r, "ceiling", &cr);
    *have_floor = 0;
    ev_status rc = ev_buf_printf(b, "Run %" PRId64 " (backend ", jint(run, "run_id", -1));
    if (!rc)
        rc = put_md(b, jstr(run, "backend"));
    if (!rc)
        rc = ev_buf_puts(b, ", protocol ");
    if (!rc)
        rc = put_md(b, jstr(run, "protocol_path"));
    if (!rc)
        rc = ev_buf_puts(b, "): status ");
    if (!rc)
        rc = put_md(b, st ? st : jstr(run, "status_reason"));
    if (!rc)
        rc = ev_buf_puts(b, ", rescue status ");
    if (!rc)
        rc = put_md(b, rs ? rs : "none");
    if (!rc)
        rc = ev_buf_puts(b, ".  Every figure is the median of the hot samples of a job's last attempt, "
                            "in microseconds per op; a job that did not complete shows its outcome and "
                            "enters no ratio.\n\n");
    if (!rc && md_median(fj, &v)) {
        *floor_us = v;
        *have_floor = 1;
        rc = ev_buf_printf(b, "- floor (an empty kernel node, the per-op launch floor): %s us%s\n",
                           fmt(t, v, 4), fr ? " (its rescue retry)" : "");
    } else if (!rc) {
        rc = ev_buf_puts(b, "- floor: ");
        if (!rc)
            rc = put_md(b, fj ? jstr(fj, "outcome") : "not in this run");
        if (!rc)
            rc = ev_buf_puts(b, "; no auto / floor ratio\n");
    }
    if (!rc && md_median(cj, &v)) {
        rc = ev_buf_printf(b, "- ceiling (a streaming read): %s us%s", fmt(t, v, 4),
                           cr ? " (its rescue retry)" : "");
        if (!rc && md_ceiling_bytes(cj, &bytes))
            rc = ev_buf_printf(b, " for %.0f bytes per op = %s GB/s", bytes, fmt(u, bytes / v * 1e-3, 1));
        if (!rc)
            rc = ev_buf_puts(b, "\n");
    } else if (!rc) {
        rc = ev_buf_puts(b, "- ceiling: ");
        if (!rc)
            rc = put_md(b, cj ? jstr(cj, "outcome") : "not in this run");
        if (!rc)
            rc = ev_buf_puts(b, "\n");
    }
    if (!rc)
        rc = ev_buf_puts(
            b, "- best peer: the faster of cub and torch-compile on that case (completed jobs only; with "
               "several rounds by their estimate over rounds); auto / best peer is a win for auto when its "
               "95% interval lies below 1, a loss when above, n.s. (not significant) when it holds 1\n\n");
    return rc;
}

/* The run's rounds: the most rounds of any case and arm in the figures. */
static int64_t rounds_of(const rep *r)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(r->val, "figures"), *a;
    int64_t k = 1;
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(f, "arms")) if (jint(a, "n_rounds", 1) > k) k =
        jint(a, "n_rounds", 1);
    return k;
}

/* Appends the closing line: wins, losses and not significant of auto
 * against the best peer over the cases where both completed (each pair's
 * verdict, verdicts[0..n)), the geometric mean of the ratios (case order)
 * ratios[0..n), and what the intervals stand on (k rounds).  EV_ENOMEM. */
static ev_status md_summary(ev_buf *b, const double *ratios, const char *const *verdicts, size_t n,
                            size_t n_cases, int64_t k)
{
    size_t wins = 0, losses = 0, ns = 0;
    char t[48];
    double g;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(verdicts[i], "win"))
            wins++;
        else if (!strcmp(verdicts[i], "loss"))
            losses++;
        else
            ns++;
    }
    ev_status rc =
        ev_buf_printf(b,
                      "\nauto against the best peer: %zu wins, %zu losses, %zu not significant over the %zu "
                      "of %zu cases where both completed",
                      wins, losses, ns, n, n_cases);
    if (!rc && n && ev_geomean(ratios, n, &g) == EV_OK)
        rc = ev_buf_printf(b, "; geometric mean of auto / best peer %s", fmt(t, g, 3));
    else if (!rc)
        rc = ev_buf_puts(b, "; no geometric mean");
    if (!rc && k > 1)
        rc = ev_buf_printf(b, "; intervals over %lld rounds.\n", (long long)k);
    else if (!rc)
        rc = ev_buf_puts(b, "; one round: the intervals are within-process only.\n");
    return rc;
}

/* See report.h. */
ev_status ev_report_markdown(const ev_member *m, size_t n, ev_buf *out, ev_err *err)
{
    rep r;
    ev_buf b = EV_BUF_INIT;
    double *ratios = NULL, floor_us = 0;
    const char **verdicts = NULL;
    size_t n_ratios = 0, n_cases = 0;
    int have_floor = 0;
    ev_status rc = rep_load(m, n, &r, err);
    if (rc)
        goto out;
    n_cases = (size_t)cJSON_GetArraySize(r.cases);
    ratios = malloc((n_cases ? n_cases : 1) * sizeof *ratios);
    verdicts = malloc((n_cases ? n_cases : 1) * sizeof *verdicts);
    if (!ratios || !verdicts) {
        rc = ev_err_set(err, EV_ENOMEM, "report: out of memory");
        goto out;
    }
    rc = md_header(&r, &b, &floor_us, &have_floor);
    if (!rc)
        rc = ev_buf_puts(&b, "| Operation / shape / storage / B | Role |");
    for (size_t i = 0; i < r.n_arms && !rc; i++) {
        rc = ev_buf_puts(&b, " ");
        if (!rc)
            rc = put_md(&b, r.arms[i]);
        if (!rc)
            rc = ev_buf_puts(&b, " |");
    }
    if (!rc)
        rc = ev_buf_puts(&b, " Best peer | auto / best peer | auto / floor | Recheck | Selection (full) | "
                             "Selection (LOGO) |\n|---|---|");
    for (size_t i = 0; i < r.n_arms && !rc; i++)
        rc = ev_buf_puts(&b, "---:|");
    if (!rc)
        rc = ev_buf_puts(&b, "---|---:|---:|---:|---|---|\n");
    const cJSON *c;
    cJSON_ArrayForEach(c, r.cases)
    {
        char t[200], lab[160], u[48];
        const char *peer = NULL;
        double auto_us = 0, peer_us = 0;
        int64_t idx = jint(c, "case_index", -1);
        if (rc)
            break;
        rc = ev_buf_puts(&b, "| ");
        if (!rc)
            rc = put_md(&b, case_label(c, lab, sizeof lab));
        if (!rc)
            rc = ev_buf_puts(&b, " | ");
        if (!rc)
            rc = put_md(&b, jstr(c, "role"));
        for (size_t i = 0; i < r.n_arms && !rc; i++) {
            rc = ev_buf_puts(&b, " | ");
            if (!rc)
                rc = put_md(&b, arm_cell(&r, idx, r.arms[i], arm_phase(r.arms[i]), t, sizeof t));
        }
        int have_auto = arm_estimate(&r, idx, "auto", "policy", &auto_us);
        int have_peer = md_best_peer(&r, idx, &peer, &peer_us);
        const cJSON *ap = have_peer ? fig_pair(&r, idx, "auto", peer) : NULL;
        double ar = have_auto && have_peer ? auto_us / peer_us : 0;
        /* the pair's headline ratio; without figures the ratio of the
         * estimates, with no verdict (not significant) */
        int have_ratio = have_auto && have_peer && (!ap || jnum(ap, "ratio", &ar));
        if (!rc)
            rc = ev_buf_puts(&b, " | ");
        if (!rc)
            rc = put_md(&b, have_peer ? peer : NULL);
        if (!rc && have_ratio)
            rc = ev_buf_printf(&b, " | %s %s", fmt(u, ar, 3), verdict_short(ap));
        else if (!rc)
            rc = ev_buf_puts(&b, " | -");
        if (!rc)
            rc = ev_buf_printf(&b, " | %s", have_auto && have_floor ? fmt(u, auto_us / floor_us, 3) : "-");
        if (have_ratio) {
            ratios[n_ratios] = ar;
            verdicts[n_ratios++] = verdict_short(ap);
        }
        if (!rc)
            rc = ev_buf_puts(&b, " | ");
        if (!rc)
            rc = put_md(&b, job_cell(&r, find_job(&r, idx, "default", "recheck"), t, sizeof t));
        const cJSON *d = find_decision(&r, c);
        if (!rc)
            rc = ev_buf_puts(&b, " | ");
        if (!rc)
            rc = put_md(&b, d ? jstr(d, "selected") : NULL);
        if (!rc)
            rc = ev_buf_puts(&b, " | ");
        if (!rc)
            rc = put_md(&b, d ? jstr(d, "logo_selected") : NULL);
        if (!rc)
            rc = ev_buf_puts(&b, " |\n");
    }
    if (!rc)
        rc = md_summary(&b, ratios, verdicts, n_ratios, n_cases, rounds_of(&r));
    if (rc) {
        ev_err_set(err, rc, "report: out of memory");
        goto out;
    }
    rc = ev_buf_append(out, b.data ? b.data : "", b.len);
    if (rc)
        ev_err_set(err, rc, "report: out of memory");
out:
    free(ratios);
    free(verdicts);
    ev_buf_free(&b);
    rep_free(&r);
    return rc;
}
