/*
 * report.c: report.html and the markdown case table, from bundle members.
 *
 * The report reads validation.json (run, jobs, cases, drift), model.json
 * (coefficients, decisions, held-out regret) and provenance.json, and
 * writes plain HTML tables: failures and skips first, then per case every
 * arm's hot median, the model, held-out regret and drift.  Everything is
 * formatted with fixed printf conversions, so the same members give the
 * same bytes on every host.  This file reads, and holds the writing
 * helpers every writer shares (escaping, a markdown cell, a number's fixed
 * format); report_svg.c, report_head.c, report_html.c and report_md.c write
 * (report_int.h lists them, lowest first).
 */
#include "evidence/report.h"

#include "report_int.h"
#include "evidence/attempt.h"
#include "runner/plan.h"
#include "runner/sample_rules.h"
#include "runner/validate.h"

/* ---- reading helpers ------------------------------------------------------ */

/* Returns 1 and sets *out when key holds a number, else 0. */
int rp_jnum(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return 0;
    *out = v->valuedouble;
    return 1;
}

/* The integer at key, or dflt when it is not a number. */
int64_t rp_jint(const cJSON *o, const char *key, int64_t dflt)
{
    double v;
    return rp_jnum(o, key, &v) ? (int64_t)v : dflt;
}

/* Returns 1 when key holds true. */
int rp_jtrue(const cJSON *o, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* Reads a number node, raw exact text or parsed.  Returns 1 and sets *v. */
int rp_numv(const cJSON *n, double *v)
{
    if (cJSON_IsNumber(n)) {
        *v = n->valuedouble;
        return 1;
    }
    return 0;
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
    ev_status rc = ev_member_json(name, x->data, x->len, 0, NULL, out, err);
    if (rc)
        ev_err_prefix(err, "report: %s", name);
    return rc;
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
const cJSON *rp_ix_find(const rep *r, const char *key)
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
    const char *op = ev_jr_str(c, "op"), *dt = ev_jr_str(c, "dtype");
    snprintf(key, cap, "D|%s|%s|%" PRId64 "|%" PRId64 "|%" PRId64, op ? op : "?", dt ? dt : "?",
             rp_jint(c, "rows", -1), rp_jint(c, "cols", -1), rp_jint(c, "default_rows", -1));
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
        const char *ro = ev_jr_str(j, "retry_of"), *a = ev_jr_str(j, "arm"), *p = ev_jr_str(j, "phase");
        if (rc)
            break;
        if (ro) {
            snprintf(key, sizeof key, "R|%s", ro);
            rc = ix_add(r, &cap, key, j);
        } else if (a && p) {
            snprintf(key, sizeof key, "J|%" PRId64 "|%s|%s", rp_jint(j, "case_index", -1), p, a);
            rc = ix_add(r, &cap, key, j);
        }
    }
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(f, "jobs"))
    {
        const char *k = ev_jr_str(j, "job_key");
        if (rc || !k)
            continue;
        snprintf(key, sizeof key, "F|%s", k);
        rc = ix_add(r, &cap, key, j);
    }
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(f, "pairs"))
    {
        const char *a = ev_jr_str(j, "arm"), *g = ev_jr_str(j, "against");
        if (rc || !a || !g)
            continue;
        snprintf(key, sizeof key, "P|%" PRId64 "|%s|%s", rp_jint(j, "case_index", -1), a, g);
        rc = ix_add(r, &cap, key, j);
    }
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(f, "arms"))
    {
        const char *a = ev_jr_str(j, "arm");
        if (rc || !a)
            continue;
        snprintf(key, sizeof key, "A|%" PRId64 "|%s", rp_jint(j, "case_index", -1), a);
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

/* ---- writing helpers ------------------------------------------------------- */

/* Appends s with &, <, >, " and ' escaped (NULL appends "-"). */
ev_status rp_put_esc(ev_buf *b, const char *s)
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
ev_status rp_put_md(ev_buf *b, const char *s)
{
    ev_status rc = EV_OK;
    if (!s)
        return ev_buf_puts(b, "-");
    for (const char *p = s; *p && !rc; p++)
        rc = *p == '|' ? ev_buf_puts(b, "\\|") : ev_buf_append(b, p, 1);
    return rc;
}

/* Formats a double with d decimals into t (or "-" when not finite). */
const char *rp_fmt(char t[48], double v, int d)
{
    if (!isfinite(v))
        snprintf(t, 48, "-");
    else
        snprintf(t, 48, "%.*f", d, v);
    return t;
}

/* ---- what the tables show ------------------------------------------------- */

/* The first job of case idx, arm and phase (no retry), or NULL. */
const cJSON *rp_find_job(const rep *r, int64_t idx, const char *arm, const char *phase)
{
    char key[200];
    snprintf(key, sizeof key, "J|%" PRId64 "|%s|%s", idx, phase, arm);
    return rp_ix_find(r, key);
}

/* The rescue job that retried job_key, or NULL. */
const cJSON *rp_find_retry(const rep *r, const char *job_key)
{
    char key[200];
    if (!job_key)
        return NULL;
    snprintf(key, sizeof key, "R|%s", job_key);
    return rp_ix_find(r, key);
}

/* The figures' pair arm / against of case idx, or NULL. */
const cJSON *rp_fig_pair(const rep *r, int64_t idx, const char *arm, const char *against)
{
    char key[200];
    snprintf(key, sizeof key, "P|%" PRId64 "|%s|%s", idx, arm, against);
    return rp_ix_find(r, key);
}

/* Writes into t the cell text of job j: its median (4 decimals), or its
 * outcome; when a retry exists, its result is added in parentheses. */
const char *rp_job_cell(const rep *r, const cJSON *j, char *t, size_t cap)
{
    char a[48], c[48];
    double v;
    if (!j) {
        snprintf(t, cap, "-");
        return t;
    }
    if (rp_jnum(j, "median_us", &v))
        snprintf(t, cap, "%s", rp_fmt(a, v, 4));
    else
        snprintf(t, cap, "%s", ev_jr_str(j, "outcome") ? ev_jr_str(j, "outcome") : "?");
    const cJSON *retry = rp_find_retry(r, ev_jr_str(j, "job_key"));
    if (retry) {
        size_t l = strlen(t);
        if (rp_jnum(retry, "median_us", &v))
            snprintf(t + l, cap - l, " (retry-1: %s)", rp_fmt(c, v, 4));
        else
            snprintf(t + l, cap - l, " (retry-1: %s)",
                     ev_jr_str(retry, "outcome") ? ev_jr_str(retry, "outcome") : "?");
    }
    return t;
}

/* The figures' estimate over rounds of case idx and arm, or NULL. */
static const cJSON *fig_arm(const rep *r, int64_t idx, const char *arm)
{
    char key[200];
    snprintf(key, sizeof key, "A|%" PRId64 "|%s", idx, arm);
    return rp_ix_find(r, key);
}

/* The cell of case idx and arm in phase: with one round rp_job_cell of its
 * job; with several the estimate over rounds and how many rounds it
 * stands on ("1.2345 (5 rounds)", "1.2345 (4 of 5 rounds)"), or the first
 * round's outcome when none completed. */
const char *rp_arm_cell(const rep *r, int64_t idx, const char *arm, const char *phase, char *t, size_t cap)
{
    const cJSON *a = fig_arm(r, idx, arm);
    int64_t k = a ? rp_jint(a, "n_rounds", 1) : 1, u = a ? rp_jint(a, "n_usable", 0) : 0;
    double v;
    char x[48];
    if (k <= 1 || !rp_jnum(a, "estimate_us", &v))
        return rp_job_cell(r, rp_find_job(r, idx, arm, phase), t, cap);
    if (u == k)
        snprintf(t, cap, "%s (%" PRId64 " rounds)", rp_fmt(x, v, 4), k);
    else
        snprintf(t, cap, "%s (%" PRId64 " of %" PRId64 " rounds)", rp_fmt(x, v, 4), u, k);
    return t;
}

/* The estimate of case idx and arm over rounds (figures "arms"), or, when
 * the figures have none, the median of its first job in phase.  Returns 1
 * and sets *v when there is one. */
int rp_arm_estimate(const rep *r, int64_t idx, const char *arm, const char *phase, double *v)
{
    const cJSON *a = fig_arm(r, idx, arm), *j;
    if (a)
        return rp_jnum(a, "estimate_us", v);
    j = rp_find_job(r, idx, arm, phase);
    return j && rp_jnum(j, "median_us", v);
}

/* Rank of a known arm in the case table: the schedules, auto, then the
 * peers of one arm, in the vocabulary's order (other arms after,
 * bytewise). */
static int arm_rank(const char *a)
{
    ev_arm_kind k;
    ev_sched s;
    if (ev_arm_builtin(a, &k, &s))
        return 100;
    if (k == EV_ARM_NATIVE)
        return (int)s;
    if (k == EV_ARM_AUTO)
        return EV_SCHED_COUNT;
    if (ev_arm_kind_peer(k) && ev_arm_kind_name(k))
        return EV_SCHED_COUNT + 1 + (int)k;
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
        const char *a = ev_jr_str(j, "arm"), *p = ev_jr_str(j, "phase");
        if (!a || !p || (!ev_is_phase(p, EV_PHASE_MAIN) && !ev_is_phase(p, EV_PHASE_POLICY)) ||
            rp_jint(j, "case_index", -1) < 0)
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
const char *rp_arm_phase(const char *arm)
{
    return ev_phase_name(ev_is_arm(arm, EV_ARM_AUTO) ? EV_PHASE_POLICY : EV_PHASE_MAIN);
}

/* The model decision for case c (same op, rows, cols, dtype, B), or NULL. */
const cJSON *rp_find_decision(const rep *r, const cJSON *c)
{
    char key[200];
    decision_key(c, key, sizeof key);
    return rp_ix_find(r, key);
}

/* Writes "op RxN [stride S] dtype BK" of case c into t. */
const char *rp_case_label(const cJSON *c, char *t, size_t cap)
{
    int64_t rows = rp_jint(c, "rows", 0), cols = rp_jint(c, "cols", 0), stride = rp_jint(c, "stride", 0);
    const char *op = ev_jr_str(c, "op"), *dt = ev_jr_str(c, "dtype");
    if (stride != cols)
        snprintf(t, cap, "%s %" PRId64 "x%" PRId64 " stride %" PRId64 " %s B%" PRId64, op ? op : "?", rows,
                 cols, stride, dt ? dt : "?", rp_jint(c, "default_rows", 0));
    else
        snprintf(t, cap, "%s %" PRId64 "x%" PRId64 " %s B%" PRId64, op ? op : "?", rows, cols, dt ? dt : "?",
                 rp_jint(c, "default_rows", 0));
    return t;
}

/* Writes "IDX: label" of the case whose case_index is idx into t ("IDX"
 * alone when there is none): how the long tables name a case. */
const char *rp_case_name(const rep *r, int64_t idx, char *t, size_t cap)
{
    const cJSON *c;
    char lab[160];
    cJSON_ArrayForEach(c, r->cases) if (rp_jint(c, "case_index", -1) == idx)
    {
        snprintf(t, cap, "%" PRId64 ": %s", idx, rp_case_label(c, lab, sizeof lab));
        return t;
    }
    snprintf(t, cap, "%" PRId64, idx);
    return t;
}

/*
 * Why attempt a of job j failed validation, into t[cap]: each stage that
 * failed, the first from its output member (the first bad row, its value,
 * the expected value, the error and the bound: ev_validation_explain, on
 * the oracle of the case's input regenerated from protocol.json's seed),
 * a stage without an output from its numbers (ev_validation_numbers).
 * Returns 0, or -1 when no stage failed (the attempt failed a check
 * after a timed sample) or the record is unreadable: t untouched.
 */
static int validation_reason(const rep *r, const cJSON *j, const cJSON *a, char *t, size_t cap)
{
    const cJSON *v, *c = NULL;
    int64_t ci = rp_jint(j, "case_index", -1), rows = -1;
    size_t len = 0;
    int n = 0;
    cJSON_ArrayForEach(c, r->cases) if (rp_jint(c, "case_index", -2) == ci) break;
    if (c)
        rows = rp_jint(c, "rows", -1);
    for (int k = 0; k < 2; k++) /* the first stage, then the final one */
        cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(a, "validations"))
        {
            const char *st = ev_jr_str(v, "stage"), *om = ev_jr_str(v, "output_member");
            const ev_member *out = om && r->m ? ev_member_find(r->m, r->n_m, om) : NULL;
            const ev_member *pm = r->m ? ev_member_find(r->m, r->n_m, "protocol.json") : NULL;
            int passed = 1;
            int64_t mism = 0;
            double mae = 0, bound = 0;
            char one[600];
            if (!st || strcmp(st, k ? "final" : "first") || ev_jr_bool(v, "passed", &passed) || passed)
                continue;
            one[0] = '\0';
            if (out && pm && ci >= 0) {
                ev_protocol p;
                ev_shape s;
                ev_oracle_row *o = NULL;
                if (!ev_protocol_parse((const char *)pm->data, pm->len, &p, NULL)) {
                    if (!ev_case_oracle_rows(&p, (size_t)ci, &s, &o, NULL))
                        ev_validation_explain(&p, &s, o, out->data, out->len, st, one, sizeof one);
                    free(o);
                    ev_protocol_free(&p);
                }
            }
            if (!one[0] && !ev_jr_i64(v, "mismatches", &mism)) {
                rp_jnum(v, "max_abs_err", &mae);
                rp_jnum(v, "bound", &bound);
                ev_validation_numbers(st, c ? ev_jr_str(c, "op") : NULL, mism, rows, mae, bound, one,
                                      sizeof one);
            }
            if (one[0] && len < cap) {
                snprintf(t + len, cap - len, "%s%s", n++ ? "; " : "", one);
                len += strlen(t + len);
            }
        }
    return n ? 0 : -1;
}

/* Writes into t why job j (not completed) failed, from its last attempt
 * (ev_attempt_read, the verifier's reader, and ev_attempt_reason); a failed
 * validation says where the output is wrong (validation_reason). */
const char *rp_failure_reason(const rep *r, const cJSON *j, char *t, size_t cap)
{
    const cJSON *atts = cJSON_GetObjectItemCaseSensitive(j, "attempts");
    const cJSON *last = cJSON_GetArrayItem(atts, cJSON_GetArraySize(atts) - 1);
    ev_attempt_rec rec;
    const char *why = NULL, *o = ev_jr_str(j, "outcome");
    if (!last)
        snprintf(t, cap, "never started");
    else if (ev_attempt_read(last, &rec, &why))
        snprintf(t, cap, "malformed attempt record: %s", why);
    else if (o && !strcmp(o, "failed-validation") && !validation_reason(r, j, last, t, cap))
        ;
    else {
        ev_attempt_reason(&rec, o, t, cap);
        /* a broken sample rule: its likely cause and what to do, from the
         * attempt's host facts (sample_rules.h; none in older records) */
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(last, "device");
        ev_rule_attempt ra;
        char cause[600];
        size_t len = strlen(t);
        memset(&ra, 0, sizeof ra);
        if (rec.protocol_error && !strncmp(rec.protocol_error, EV_RULE_PREFIX, strlen(EV_RULE_PREFIX)) &&
            cJSON_IsObject(d)) {
            ev_rule_device_attempt(d, &ra);
            if (ev_rule_cause(&ra.host, cause, sizeof cause), cause[0])
                snprintf(t + len, cap - len, "; %s", cause);
        }
        /* an output that was wrong too (the outcome names the first
         * failure: a rule broken, a process that died after) */
        len = strlen(t);
        if (rec.facts.validation_failed && len + 40 < cap) {
            snprintf(t + len, cap - len, "; and its output was wrong: ");
            if (validation_reason(r, j, last, t + strlen(t), cap - strlen(t)))
                t[len] = '\0';
        }
    }
    return t;
}

/* ---- entry points ------------------------------------------------------------ */

/* Frees what rep holds. */
void rp_rep_free(rep *r)
{
    if (!r->borrowed) {
        cJSON_Delete(r->val);
        cJSON_Delete(r->model);
        cJSON_Delete(r->prov);
    }
    for (size_t i = 0; i < r->n_arms; i++)
        free(r->arms[i]);
    free(r->arms);
    for (size_t i = 0; i < r->n_ix; i++)
        free(r->ix[i].key);
    free(r->ix);
    memset(r, 0, sizeof *r);
}

static ev_status rep_index_all(rep *r, ev_err *err);

/* Parses the members a report needs into r. */
ev_status rp_rep_load(const ev_member *m, size_t n, rep *r, ev_err *err)
{
    return rp_rep_load_with(m, n, NULL, r, err);
}

/* rp_rep_load, with figures (when non-NULL; taken over, freed on failure
 * too) in place of validation.json's "figures". */
ev_status rp_rep_load_with(const ev_member *m, size_t n, cJSON *figures, rep *r, ev_err *err)
{
    ev_status rc;
    memset(r, 0, sizeof *r);
    r->m = m;
    r->n_m = n;
    if ((rc = parse_member(m, n, "validation.json", 1, &r->val, err)) ||
        (rc = parse_member(m, n, "model.json", 0, &r->model, err)) ||
        (rc = parse_member(m, n, "provenance.json", 0, &r->prov, err))) {
        cJSON_Delete(figures);
        return rc;
    }
    if (figures) {
        if (cJSON_IsObject(r->val) && cJSON_GetObjectItemCaseSensitive(r->val, "figures"))
            cJSON_ReplaceItemInObjectCaseSensitive(r->val, "figures", figures);
        else if (!cJSON_IsObject(r->val) || !cJSON_AddItemToObject(r->val, "figures", figures))
            cJSON_Delete(figures);
    }
    return rep_index_all(r, err);
}

/* See report_int.h. */
ev_status rp_rep_borrow(cJSON *val, cJSON *model, cJSON *prov, rep *r, ev_err *err)
{
    memset(r, 0, sizeof *r);
    r->borrowed = 1;
    r->val = val;
    r->model = model;
    r->prov = prov;
    return rep_index_all(r, err);
}

/* The loads' common end: the tables' lookups over r's trees. */
static ev_status rep_index_all(rep *r, ev_err *err)
{
    ev_status rc;
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
/* ---- markdown (docs' case table) ------------------------------------------------ */

/* Returns 1 and sets *v to the hot median of j when j is completed with
 * one (validation.json claims a median only then), else 0. */
int rp_md_median(const cJSON *j, double *v)
{
    return j && rp_jnum(j, "median_us", v);
}

/* The reference arm job (no case, phase main, not a retry) of arm, or its
 * rescue retry when the original has no median and the retry has one;
 * NULL when there is none.  *used_retry is set to 1 when the retry is
 * returned, else 0. */
const cJSON *rp_md_ref_job(const rep *r, const char *arm, int *used_retry)
{
    const cJSON *j = rp_find_job(r, -1, arm, ev_phase_name(EV_PHASE_MAIN)), *rj;
    double v;
    *used_retry = 0;
    if (j && !rp_md_median(j, &v) && (rj = rp_find_retry(r, ev_jr_str(j, "job_key"))) &&
        rp_md_median(rj, &v)) {
        *used_retry = 1;
        return rj;
    }
    return j;
}

/* See report_int.h. */
const cJSON *rp_case_floor(const rep *r, int64_t idx, int *used_retry)
{
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(r->val, "shards"), *j, *rj;
    int64_t n = sh ? rp_jint(sh, "count", 1) : 1, want;
    double v;
    *used_retry = 0;
    if (n <= 1 || idx < 0)
        return NULL;
    want = ev_plan_shard_of(idx, n);
    cJSON_ArrayForEach(j, r->jobs)
    {
        const char *a = ev_jr_str(j, "arm"), *ph = ev_jr_str(j, "phase");
        if (!ev_is_arm(a, EV_ARM_FLOOR) || !ev_is_phase(ph, EV_PHASE_MAIN) || rp_jint(j, "shard", -1) != want)
            continue;
        if (!rp_md_median(j, &v) && (rj = rp_find_retry(r, ev_jr_str(j, "job_key"))) &&
            rp_md_median(rj, &v)) {
            *used_retry = 1;
            return rj;
        }
        return j;
    }
    return NULL;
}

/* Returns 1 and sets *name and *v to the fastest of the case's peers by
 * their estimate over rounds (figures "arms": main phase, not retries; with
 * one round the median); 0 (nothing written) when no peer completed.
 * The peers are those of one arm (cub, torch-compile); equal estimates go
 * to the first in the vocabulary's order. */
int rp_md_best_peer(const rep *r, int64_t idx, const char **name, double *v)
{
    const char *best = NULL;
    double bm = 0, x;
    for (int k = 0; k < EV_ARM_KIND_COUNT; k++) {
        const char *peer = ev_arm_kind_name((ev_arm_kind)k);
        if (ev_arm_kind_peer((ev_arm_kind)k) && peer &&
            rp_arm_estimate(r, idx, peer, ev_phase_name(EV_PHASE_MAIN), &x) && (!best || x < bm)) {
            best = peer;
            bm = x;
        }
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
int rp_md_ceiling_bytes(const cJSON *j, double *bytes)
{
    const cJSON *atts = j ? cJSON_GetObjectItemCaseSensitive(j, "attempts") : NULL;
    const cJSON *last = cJSON_GetArrayItem(atts, cJSON_GetArraySize(atts) - 1);
    const cJSON *bind = last ? cJSON_GetObjectItemCaseSensitive(last, "binding") : NULL;
    double v;
    if (!cJSON_IsObject(bind) || !rp_jnum(bind, "in_span", &v) || !(v > 0))
        return 0;
    *bytes = v;
    return 1;
}

/* The run's rounds: the most rounds of any case and arm in the figures (1
 * without figures). */
int64_t rp_rounds_of(const rep *r)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(r->val, "figures"), *a;
    int64_t k = 1;
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(f, "arms")) if (rp_jint(a, "n_rounds", 1) > k) k =
        rp_jint(a, "n_rounds", 1);
    return k;
}
