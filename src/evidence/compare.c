/*
 * compare.c: `evident compare A B` (compare.h): per case and arm the ratio
 * B / A, its interval and significance, from each bundle's figures rebuilt
 * from its samples.csv, written as markdown or JSON with a summary.
 *
 * Cases are matched by identity (op, shape, stride, dtype, B: the case
 * label), not by index, so two protocols that share cases compare on those;
 * arms by name.  Each bundle is read as the report reads it (report.c's
 * lookups), with validation.json's "figures" replaced by the ones rebuilt
 * from the raw samples, so a derived member that was edited cannot move a
 * comparison.  What a ratio is called is report_call.c's rule (one rule for
 * the report, the results and this comparison), with the larger of the two
 * runs' noise floors.
 */
#include "evidence/compare.h"

#include "report_int.h"

#include "sha256.h"
#include "evidence/figures.h"
#include "evidence/figures_rebuild.h"
#include "jbuild.h"

/* One bundle as the comparison reads it. */
typedef struct side {
    rep r;
    int loaded;
    char root[EV_SHA256_HEX_LEN + 1]; /* "" when the members hold no receipts.json */
    rp_facts facts;
    rp_notes notes;
} side;

/* One compared case and arm. */
typedef struct crow {
    const cJSON *c; /* A's case */
    const char *arm;
    rp_arm_stat a, b;
    int has_ratio, has_ci, gated;
    double ratio, lo, hi;
    rp_call call;
    const char *verdict, *basis, *why; /* why: no ratio, no interval, or why not called */
    char whybuf[300];
} crow;

/* What the two runs measured (their sources/ members) and, where that
 * differs, how far the code both share moved: the peers' own B / A. */
typedef struct code_view {
    size_t files_a, files_b;
    size_t n;          /* files that differ or are on one side only */
    const char **path; /* [n], after "sources/" */
    char *only;        /* [n]: 0 in both (other bytes), 'A' or 'B' on that side only */
    int shift_shown;   /* the setups are the same and the sources differ: the peers' shift applies */
    size_t pairs, called;
    double lo, hi; /* the peers' smallest and largest B / A */
    char arms[64]; /* the peers that had a ratio, ", " between */
} code_view;

#define SRC_PREFIX "sources/"

/* Fills the sources part of *cv from A's members a[0..na) and B's b[0..nb):
 * every measured file, by name and bytes.  EV_ENOMEM. */
static ev_status code_sources(const ev_member *a, size_t na, const ev_member *b, size_t nb, code_view *cv)
{
    const size_t pl = strlen(SRC_PREFIX);
    memset(cv, 0, sizeof *cv);
    cv->path = calloc(na + nb + 1, sizeof *cv->path);
    cv->only = calloc(na + nb + 1, 1);
    if (!cv->path || !cv->only)
        return EV_ENOMEM;
    for (size_t i = 0; i < na; i++) {
        if (strncmp(a[i].name, SRC_PREFIX, pl))
            continue;
        cv->files_a++;
        const ev_member *o = ev_member_find(b, nb, a[i].name);
        if (o && o->len == a[i].len && (!a[i].len || !memcmp(o->data, a[i].data, a[i].len)))
            continue;
        cv->path[cv->n] = a[i].name + pl;
        cv->only[cv->n++] = o ? 0 : 'A';
    }
    for (size_t i = 0; i < nb; i++) {
        if (strncmp(b[i].name, SRC_PREFIX, pl))
            continue;
        cv->files_b++;
        if (!ev_member_find(a, na, b[i].name)) {
            cv->path[cv->n] = b[i].name + pl;
            cv->only[cv->n++] = 'B';
        }
    }
    return EV_OK;
}

/* 1 when A and B measured the same files, byte for byte (an A/A pair). */
static int code_same(const code_view *cv)
{
    return cv->files_a > 0 && cv->n == 0;
}

/* The peers' shift over rows v[0..n) (cub and torch-compile: their code is
 * their version, which the setup compares), shown where the setups are the
 * same and the measured sources are not. */
static void code_peers(const crow *v, size_t n, int same_setup, code_view *cv)
{
    cv->shift_shown = same_setup && !code_same(cv) && cv->files_a > 0;
    for (size_t i = 0; i < n && cv->shift_shown; i++) {
        if (!v[i].has_ratio || !(ev_is_arm(v[i].arm, EV_ARM_CUB) || ev_is_arm(v[i].arm, EV_ARM_TORCH)))
            continue;
        if (!strstr(cv->arms, v[i].arm)) {
            size_t l = strlen(cv->arms);
            snprintf(cv->arms + l, sizeof cv->arms - l, "%s%s", l ? ", " : "", v[i].arm);
        }
        cv->lo = cv->pairs ? fmin(cv->lo, v[i].ratio) : v[i].ratio;
        cv->hi = cv->pairs ? fmax(cv->hi, v[i].ratio) : v[i].ratio;
        cv->pairs++;
        cv->called += v[i].call == RP_CALL_ABOVE || v[i].call == RP_CALL_BELOW;
    }
}

/* The name of differing file i as the document gives it, into t[cap]. */
static const char *code_path_text(const code_view *cv, size_t i, char *t, size_t cap)
{
    if (cv->only[i])
        snprintf(t, cap, "%s (only in %c)", cv->path[i], cv->only[i]);
    else
        snprintf(t, cap, "%s", cv->path[i]);
    return t;
}

static void code_free(code_view *cv)
{
    free(cv->path);
    free(cv->only);
}

/* The measured-sources paragraph of the markdown (a leading blank line). */
static ev_status put_md_code(ev_buf *b, const code_view *cv)
{
    char t[48], u[48];
    ev_status rc;
    if (code_same(cv))
        return ev_buf_printf(b,
                             "\nMeasured sources: the same in A and B (%zu files, byte for byte): an A/A "
                             "comparison, so a difference called is between the two runs, not in the code.\n",
                             cv->files_a);
    if (!cv->files_a && !cv->files_b)
        return ev_buf_puts(b, "\nMeasured sources: neither bundle carries them (sources/).\n");
    rc =
        ev_buf_printf(b, "\nMeasured sources: %zu %s (", cv->n, cv->n == 1 ? "file differs" : "files differ");
    for (size_t i = 0; i < cv->n && i < 12 && !rc; i++) {
        char name[600];
        rc = ev_buf_puts(b, i ? ", " : "");
        if (!rc)
            rc = rp_put_md(b, code_path_text(cv, i, name, sizeof name));
    }
    if (!rc && cv->n > 12)
        rc = ev_buf_printf(b, ", and %zu more", cv->n - 12);
    if (!rc)
        rc = ev_buf_puts(b, "): a ratio holds the change and the shift between the two runs.");
    if (!rc && cv->shift_shown && cv->pairs)
        rc = ev_buf_printf(
            b,
            " The peers (%s: the same versions in A and B) moved B / A from %s to %s (%zu pairs, "
            "%zu called): read a change's ratio against that.",
            cv->arms, rp_fmt(t, cv->lo, 3), rp_fmt(u, cv->hi, 3), cv->pairs, cv->called);
    else if (!rc && cv->shift_shown)
        rc = ev_buf_puts(b, " No peer has a ratio here, so that shift is not bounded.");
    if (!rc)
        rc = ev_buf_puts(b, "\n");
    return rc;
}

/* The measured sources and the peers' shift into JSON object root. */
static void put_json_code(ev_jb *jb, cJSON *root, const code_view *cv)
{
    cJSON *x = ev_jb_obj(jb, root, "sources");
    ev_jb_bool(jb, x, "same", code_same(cv));
    ev_jb_i64(jb, x, "files_a", (int64_t)cv->files_a);
    ev_jb_i64(jb, x, "files_b", (int64_t)cv->files_b);
    cJSON *d = ev_jb_arr(jb, x, "differ");
    for (size_t i = 0; i < cv->n && !jb->rc; i++) {
        char t[600];
        ev_jb_str(jb, d, NULL, code_path_text(cv, i, t, sizeof t));
    }
    if (!cv->shift_shown || !cv->pairs) {
        ev_jb_null(jb, root, "peers_shift");
        return;
    }
    cJSON *p = ev_jb_obj(jb, root, "peers_shift");
    ev_jb_str(jb, p, "arms", cv->arms);
    ev_jb_i64(jb, p, "pairs", (int64_t)cv->pairs);
    ev_jb_dbl(jb, p, "min", 1, cv->lo, NULL);
    ev_jb_dbl(jb, p, "max", 1, cv->hi, NULL);
    ev_jb_i64(jb, p, "called", (int64_t)cv->called);
}

/* Loads members m[0..n) into s with the figures rebuilt from samples.csv
 * (printed and parsed back, so every number is a plain number node).
 * EV_EFORMAT / EV_ENOMEM with err set. */
static ev_status side_load(const ev_member *m, size_t n, side *s, ev_err *err)
{
    cJSON *fig = NULL, *plain = NULL;
    ev_buf t = EV_BUF_INIT;
    const ev_member *rc_m = ev_member_find(m, n, "receipts.json");
    ev_status rc = ev_figures_rebuild(m, n, &fig, err);
    if (!rc && (rc = ev_json_print(fig, 0, &t)))
        ev_err_set(err, rc, "out of memory");
    if (!rc)
        rc = ev_json_parse(t.data, t.len, 0, &plain, err);
    cJSON_Delete(fig);
    ev_buf_free(&t);
    if (rc)
        return rc;
    s->root[0] = '\0';
    if (rc_m && ev_sha256_hex(rc_m->data ? rc_m->data : "", rc_m->len, s->root))
        s->root[0] = '\0';
    rc = rp_rep_open(m, n, plain, &s->r, err);
    s->loaded = 1;
    if (!rc) {
        rp_facts_get(&s->r, &s->facts);
        rp_format_notes(&s->r, m, n, &s->notes);
    }
    return rc;
}

/* Appends "what (a / b)" to t[cap] when a and b differ ("; " between). */
static void differ(char *t, size_t cap, const char *what, const char *a, const char *b)
{
    size_t l = strlen(t);
    if (strcmp(a, b))
        snprintf(t + l, cap - l, "%s%s (%s / %s)", l ? "; " : "", what, a, b);
}

/* Writes into t[cap] how A's and B's setups differ: protocol, backend,
 * device, driver, runtime and (where both stores kept them) peer versions;
 * "" when they do not. */
static void setup_differences(const side *A, const side *B, char *t, size_t cap)
{
    const rp_facts *a = &A->facts, *b = &B->facts;
    t[0] = '\0';
    differ(t, cap, "protocol", a->protocol_id, b->protocol_id);
    differ(t, cap, "backend", a->backend, b->backend);
    differ(t, cap, "device", a->device, b->device);
    differ(t, cap, "driver", a->driver, b->driver);
    differ(t, cap, "runtime", a->runtime, b->runtime);
    if (a->has_peers && b->has_peers)
        differ(t, cap, "peer versions", a->peers[0] ? a->peers : "none", b->peers[0] ? b->peers : "none");
}

/* B's case with the same identity as A's case c, or NULL. */
static const cJSON *find_case(const rep *b, const cJSON *c)
{
    char want[160], have[160];
    const cJSON *x;
    rp_case_label(c, want, sizeof want);
    cJSON_ArrayForEach(x, b->cases) if (!strcmp(rp_case_label(x, have, sizeof have), want)) return x;
    return NULL;
}

/* 1 when b's arm columns hold arm. */
static int has_arm(const rep *b, const char *arm)
{
    for (size_t i = 0; i < b->n_arms; i++)
        if (!strcmp(b->arms[i], arm))
            return 1;
    return 0;
}

/* Fills row w of A's case ca / B's case cb and arm, called against floor
 * fl (the larger of the two runs' noise floors). */
static void compare_one(const side *A, const side *B, const cJSON *ca, const cJSON *cb, const char *arm,
                        const ev_compare_opts *o, const rp_floor *fl, crow *w)
{
    char f[48];
    memset(w, 0, sizeof *w);
    w->c = ca;
    w->arm = arm;
    rp_arm_stat_get(&A->r, rp_jint(ca, "case_index", -1), arm, &w->a);
    rp_arm_stat_get(&B->r, rp_jint(cb, "case_index", -1), arm, &w->b);
    w->call = RP_CALL_NONE;
    w->verdict = rp_call_word(RP_CALL_NONE, 1);
    if (!w->a.has_est || !w->b.has_est || !(w->a.est_us > 0) || !(w->b.est_us > 0)) {
        const side *x = !w->a.has_est || !(w->a.est_us > 0) ? A : B;
        const cJSON *cx = x == A ? ca : cb;
        const char *oc = "?";
        char reason[250] = "";
        rp_arm_outcome(&x->r, rp_jint(cx, "case_index", -1), arm, &oc, reason, sizeof reason);
        snprintf(w->whybuf, sizeof w->whybuf, "%s: %s%s%s", x == A ? "A" : "B", oc, reason[0] ? ", " : "",
                 reason);
        w->why = w->whybuf;
        return;
    }
    w->has_ratio = 1;
    w->ratio = w->b.est_us / w->a.est_us;
    w->basis = w->a.basis && w->b.basis && !strcmp(w->a.basis, w->b.basis) ? w->a.basis : "mixed";
    if (w->a.has_ci && w->b.has_ci) {
        double va = w->a.log_se * w->a.log_se, vb = w->b.log_se * w->b.log_se;
        double t = ev_welch_t975(va, w->a.dof, vb, w->b.dof), half = t * sqrt(va + vb);
        double d = w->b.log_mean - w->a.log_mean;
        w->lo = exp(d - half);
        w->hi = exp(d + half);
        w->has_ci = isfinite(w->lo) && isfinite(w->hi);
    }
    rp_ratio x = {1, w->ratio, w->has_ci, w->lo, w->hi, !strcmp(w->basis, "rounds")};
    rp_floor res = *fl;
    /* with a gate, rounds resolve to the larger of the floor and the gate:
     * the question is whether a slow-down beyond the gate hides in the
     * interval (one-round calls stay the floor's) */
    if (o->gate && x.replicated && log1p(o->fail_slower / 100.0) > res.log_floor) {
        res.log_floor = log1p(o->fail_slower / 100.0);
        res.pct = o->fail_slower;
    }
    w->call = rp_call_across(&x, &res);
    w->verdict = rp_call_word(w->call, 1);
    if (w->call == RP_CALL_INCONCLUSIVE && !w->has_ci) {
        snprintf(w->whybuf, sizeof w->whybuf,
                 "too few usable rounds for an interval (A %" PRId64 " of %" PRId64 ", B %" PRId64
                 " of %" PRId64 ")",
                 w->a.n_usable, w->a.n_rounds, w->b.n_usable, w->b.n_rounds);
        w->why = w->whybuf;
    } else if (w->call == RP_CALL_INCONCLUSIVE) {
        snprintf(w->whybuf, sizeof w->whybuf, "too noisy: the interval holds 1 and reaches beyond +-%s%%%s",
                 rp_fmt(f, res.pct, 2), res.pct > fl->pct ? " (the gate)" : " (the noise floor)");
        w->why = w->whybuf;
    } else if (w->call == RP_CALL_NOT_REPLICATED) {
        if (fl->measured)
            snprintf(w->whybuf, sizeof w->whybuf, "one round: within the noise floor of %s%%%s",
                     rp_fmt(f, fl->pct, 2),
                     w->has_ci && w->lo <= 1.0 && w->hi >= 1.0 ? ", or its within-process interval holds 1"
                                                               : "");
        else
            snprintf(w->whybuf, sizeof w->whybuf, "one round, and no noise floor measured");
        w->why = w->whybuf;
    }
    w->gated = o->gate && w->call == RP_CALL_ABOVE && w->ratio > 1.0 + o->fail_slower / 100.0;
}

/* The counts and geometric mean over rows v[0..n). */
typedef struct csum {
    rp_counts k; /* per call */
    size_t none, gated, n_ratio;
    int has_geo;
    double geo;
} csum;

/* Sums v[0..n) into *s.  EV_ENOMEM. */
static ev_status summarise(const crow *v, size_t n, csum *s)
{
    double *r = malloc((n ? n : 1) * sizeof *r);
    memset(s, 0, sizeof *s);
    if (!r)
        return EV_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].has_ratio) {
            s->none++;
            continue;
        }
        r[s->n_ratio++] = v[i].ratio;
        s->k.n[v[i].call]++;
        s->gated += v[i].gated;
    }
    s->has_geo = s->n_ratio && !ev_geomean(r, s->n_ratio, &s->geo);
    free(r);
    return EV_OK;
}

/* The summary line (no newline). */
static ev_status put_summary(ev_buf *b, const csum *s, const ev_compare_opts *o, const ev_compare_result *res)
{
    char t[48];
    ev_status rc = ev_buf_printf(
        b,
        "B / A over %zu case-arm pairs with a ratio: %zu faster, %zu slower, %zu not significant, %zu "
        "inconclusive, %zu not replicated; %zu without a ratio; geometric mean of B / A %s",
        s->n_ratio, s->k.n[RP_CALL_BELOW], s->k.n[RP_CALL_ABOVE], s->k.n[RP_CALL_SAME],
        s->k.n[RP_CALL_INCONCLUSIVE], s->k.n[RP_CALL_NOT_REPLICATED], s->none,
        s->has_geo ? rp_fmt(t, s->geo, 4) : "-");
    if (!rc && o->gate && res->gate_refused)
        rc = ev_buf_puts(
            b, "; the gate is refused: the runs' setups differ (--allow-different gates across them)");
    else if (!rc && o->gate)
        rc = ev_buf_printf(b, "; %zu slow-downs called and beyond %g%%", s->gated, o->fail_slower);
    return rc;
}

/* The lines before the table: each run, how their setups differ, the
 * notes on what each bundle's format kept from the checks, and the floor. */
static ev_status put_md_head(ev_buf *b, const side *A, const side *B, const rp_floor *fl,
                             const ev_compare_result *res, const code_view *cv)
{
    static const char *const who[2] = {"A", "B"};
    const side *sd[2] = {A, B};
    char fx[300];
    ev_status rc = ev_buf_puts(b, "# evident compare\n\n");
    for (int k = 0; k < 2 && !rc; k++) {
        const cJSON *run = cJSON_GetObjectItemCaseSensitive(sd[k]->r.val, "run");
        const rp_facts *f = &sd[k]->facts;
        rc = ev_buf_printf(b, "- %s: run %" PRId64 ", backend ", who[k], rp_jint(run, "run_id", -1));
        if (!rc)
            rc = rp_put_md(b, f->backend);
        if (!rc)
            rc = ev_buf_puts(b, ", device ");
        if (!rc)
            rc = rp_put_md(b, f->device);
        if (!rc)
            rc = ev_buf_puts(b, ", driver ");
        if (!rc)
            rc = rp_put_md(b, f->driver);
        if (!rc)
            rc = ev_buf_puts(b, ", protocol ");
        if (!rc)
            rc = rp_put_md(b, f->protocol_id);
        if (!rc)
            rc = ev_buf_printf(b, ", %" PRId64 " round(s), root %s; peer versions: ", rp_rounds_of(&sd[k]->r),
                               sd[k]->root[0] ? sd[k]->root : "-");
        if (!rc)
            rc = rp_put_md(b, f->has_peers ? (f->peers[0] ? f->peers : "none") : "not kept by its store");
        if (!rc)
            rc = ev_buf_puts(b, "; noise floor ");
        if (!rc)
            rc = rp_put_md(b, rp_floor_text(&sd[k]->r.floor, fx, sizeof fx));
        if (!rc)
            rc = ev_buf_puts(b, "\n");
        for (size_t i = 0; i < sd[k]->notes.n && !rc; i++) {
            rc = ev_buf_printf(b, "  - %s's format: ", who[k]);
            if (!rc)
                rc = rp_put_md(b, sd[k]->notes.v[i]);
            if (!rc)
                rc = ev_buf_puts(b, "\n");
        }
    }
    if (!rc && res->different) {
        rc = ev_buf_puts(b, "\n**A and B differ in setup:** ");
        if (!rc)
            rc = rp_put_md(b, res->differences);
        if (!rc)
            rc = ev_buf_puts(b, ".  Their ratios mix the change with the setup; a gate over them needs "
                                "--allow-different.\n");
    } else if (!rc) {
        rc = ev_buf_puts(b, "\nA and B have the same protocol, backend, device, driver, runtime and peer "
                            "versions (where both stores kept them).\n");
    }
    if (!rc)
        rc = put_md_code(b, cv);
    if (!rc)
        rc = ev_buf_printf(
            b,
            "\nB / A of each estimate (us per op) from the bundles' raw samples; 95%% interval: "
            "Welch on the log scale over rounds, or from each job's bootstrap interval with one "
            "round (within-process: it does not cover run-to-run variation).  The call: with "
            "rounds on both sides, slower / faster when the whole interval clears the noise floor "
            "(the rounds of a run do not sample the shift between two runs), not significant "
            "when it lies within it, inconclusive otherwise; with one round on "
            "either side, slower / faster only beyond the noise floor, else not replicated.  "
            "Noise floor of this comparison (the larger of the two runs'): %s.\n\n",
            fl->measured ? rp_floor_text(fl, fx, sizeof fx) : "none (a run measured none)");
    return rc;
}

/* Markdown: the two runs, the table, the summary. */
static ev_status put_markdown(ev_buf *b, const side *A, const side *B, const crow *v, size_t n, const csum *s,
                              const ev_compare_opts *o, const rp_floor *fl, const ev_compare_result *res,
                              const code_view *cv)
{
    char t[48], u[48], w[48], lab[160];
    ev_status rc = put_md_head(b, A, B, fl, res, cv);
    if (!rc)
        rc = ev_buf_puts(b, "| case | arm | A us | B us | B / A | 95% interval | basis | call |\n"
                            "|---|---|---:|---:|---:|---:|---|---|\n");
    for (size_t i = 0; i < n && !rc; i++) {
        rc = ev_buf_puts(b, "| ");
        if (!rc)
            rc = rp_put_md(b, rp_case_label(v[i].c, lab, sizeof lab));
        if (!rc)
            rc = ev_buf_puts(b, " | ");
        if (!rc)
            rc = rp_put_md(b, v[i].arm);
        if (!rc)
            rc = ev_buf_printf(b, " | %s | %s | ", v[i].a.has_est ? rp_fmt(t, v[i].a.est_us, 4) : "-",
                               v[i].b.has_est ? rp_fmt(u, v[i].b.est_us, 4) : "-");
        if (!rc && v[i].has_ratio)
            rc = ev_buf_printf(b, "%s", rp_fmt(t, v[i].ratio, 4));
        else if (!rc)
            rc = ev_buf_puts(b, "-");
        if (!rc && v[i].has_ci)
            rc = ev_buf_printf(b, " | [%s, %s] | ", rp_fmt(u, v[i].lo, 4), rp_fmt(w, v[i].hi, 4));
        else if (!rc)
            rc = ev_buf_puts(b, " | - | ");
        if (!rc)
            rc = rp_put_md(b, v[i].basis);
        if (!rc)
            rc = ev_buf_printf(b, " | %s%s%s%s |\n", v[i].verdict, v[i].gated ? " (beyond the gate)" : "",
                               v[i].why ? ": " : "", v[i].why ? v[i].why : "");
    }
    if (!rc)
        rc = ev_buf_puts(b, "\n");
    if (!rc)
        rc = put_summary(b, s, o, res);
    if (!rc)
        rc = ev_buf_puts(b, ".\n");
    return rc;
}

/* JSON: the two runs (their device, host, peer versions, floor and
 * format notes), how they differ, the method, the rows, the summary. */
static ev_status put_json(ev_buf *b, const side *A, const side *B, const crow *v, size_t n, const csum *s,
                          const ev_compare_opts *o, const rp_floor *fl, const ev_compare_result *res,
                          const code_view *cv)
{
    ev_jb jb = {EV_OK};
    ev_buf line = EV_BUF_INIT;
    cJSON *root = cJSON_CreateObject();
    const side *sd[2] = {A, B};
    static const char *const who[2] = {"a", "b"};
    if (!root)
        jb.rc = EV_ENOMEM;
    ev_jb_str(&jb, root, "format", EV_COMPARE_FORMAT);
    for (int k = 0; k < 2; k++) {
        const cJSON *run = cJSON_GetObjectItemCaseSensitive(sd[k]->r.val, "run");
        cJSON *x = ev_jb_obj(&jb, root, who[k]);
        ev_jb_i64(&jb, x, "run_id", rp_jint(run, "run_id", -1));
        ev_jb_str(&jb, x, "backend", ev_jr_str(run, "backend"));
        ev_jb_str(&jb, x, "protocol_id", ev_jr_str(run, "protocol_id"));
        ev_jb_i64(&jb, x, "rounds", rp_rounds_of(&sd[k]->r));
        ev_jb_str(&jb, x, "root", sd[k]->root[0] ? sd[k]->root : NULL);
        rp_facts_json(&jb, x, &sd[k]->r, &sd[k]->facts);
        rp_floor_json(&jb, x, &sd[k]->r.floor);
        cJSON *notes = ev_jb_arr(&jb, x, "format_notes");
        for (size_t i = 0; i < sd[k]->notes.n; i++)
            ev_jb_str(&jb, notes, NULL, sd[k]->notes.v[i]);
    }
    ev_jb_bool(&jb, root, "same_setup", !res->different);
    ev_jb_str(&jb, root, "differences", res->different ? res->differences : NULL);
    put_json_code(&jb, root, cv);
    rp_floor_json(&jb, root, fl);
    ev_jb_str(
        &jb, root, "method",
        "B / A of the estimates from raw samples; 95% interval exp(d -+ t se), d the difference of the "
        "log estimates, se^2 the sum of their squared standard errors, t from Welch-Satterthwaite's "
        "degrees of freedom (normal for a within-process side). Call: with rounds on both sides, slower "
        "or faster when the whole interval clears the noise floor (the rounds of a run do not sample "
        "the shift between two runs), not significant when it lies within it, "
        "inconclusive otherwise (too few or too noisy rounds); with one round on either side, slower or "
        "faster only beyond the noise floor (the larger of the two runs') with a within-process "
        "interval that excludes 1, else not replicated");
    ev_jb_dbl(&jb, root, "fail_slower_pct", o->gate, o->fail_slower, "not given");
    ev_jb_bool(&jb, root, "gate_refused", res->gate_refused);
    cJSON *arr = ev_jb_arr(&jb, root, "rows");
    for (size_t i = 0; i < n && !jb.rc; i++) {
        char lab[160];
        cJSON *x = ev_jb_obj(&jb, arr, NULL);
        ev_jb_str(&jb, x, "case", rp_case_label(v[i].c, lab, sizeof lab));
        ev_jb_i64(&jb, x, "case_index", rp_jint(v[i].c, "case_index", -1));
        ev_jb_str(&jb, x, "arm", v[i].arm);
        ev_jb_dbl(&jb, x, "a_us", v[i].a.has_est, v[i].a.est_us, "no estimate");
        ev_jb_dbl(&jb, x, "b_us", v[i].b.has_est, v[i].b.est_us, "no estimate");
        ev_jb_dbl(&jb, x, "ratio", v[i].has_ratio, v[i].ratio, v[i].why);
        if (v[i].has_ci) {
            cJSON *ci = ev_jb_arr(&jb, x, "interval");
            ev_jb_dbl(&jb, ci, NULL, 1, v[i].lo, NULL);
            ev_jb_dbl(&jb, ci, NULL, 1, v[i].hi, NULL);
        } else {
            ev_jb_dbl(&jb, x, "interval", 0, 0, v[i].why ? v[i].why : "no interval");
        }
        ev_jb_str(&jb, x, "basis", v[i].basis);
        ev_jb_str(&jb, x, "verdict", v[i].verdict);
        ev_jb_str(&jb, x, "verdict_reason",
                  v[i].call == RP_CALL_INCONCLUSIVE || v[i].call == RP_CALL_NOT_REPLICATED ? v[i].why : NULL);
        ev_jb_bool(&jb, x, "beyond_gate", v[i].gated);
    }
    cJSON *su = ev_jb_obj(&jb, root, "summary");
    ev_jb_i64(&jb, su, "pairs", (int64_t)s->n_ratio);
    ev_jb_i64(&jb, su, "faster", (int64_t)s->k.n[RP_CALL_BELOW]);
    ev_jb_i64(&jb, su, "slower", (int64_t)s->k.n[RP_CALL_ABOVE]);
    ev_jb_i64(&jb, su, "not_significant", (int64_t)s->k.n[RP_CALL_SAME]);
    ev_jb_i64(&jb, su, "inconclusive", (int64_t)s->k.n[RP_CALL_INCONCLUSIVE]);
    ev_jb_i64(&jb, su, "not_replicated", (int64_t)s->k.n[RP_CALL_NOT_REPLICATED]);
    ev_jb_i64(&jb, su, "without_ratio", (int64_t)s->none);
    ev_jb_dbl(&jb, su, "geomean_ratio", s->has_geo, s->geo, "no ratio");
    ev_jb_i64(&jb, su, "beyond_gate", (int64_t)s->gated);
    if (!jb.rc && (jb.rc = put_summary(&line, s, o, res)) == EV_OK &&
        (jb.rc = ev_buf_puts(&line, "")) == EV_OK)
        ev_jb_str(&jb, su, "line", line.data);
    ev_buf_free(&line);
    return ev_jb_finish(&jb, root, b);
}

/* See compare.h. */
ev_status ev_compare_write(const ev_member *a, size_t na, const ev_member *b, size_t nb,
                           const ev_compare_opts *opts, ev_buf *out, ev_compare_result *res, ev_err *err)
{
    side A, B;
    rp_floor fl;
    ev_compare_result got;
    crow *rows = NULL;
    size_t n = 0, cap;
    csum s;
    code_view cv;
    ev_buf t = EV_BUF_INIT;
    ev_status rc;
    memset(&cv, 0, sizeof cv);
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    memset(&got, 0, sizeof got);
    if ((rc = side_load(a, na, &A, err))) {
        ev_err_prefix(err, "A");
        goto out;
    }
    if ((rc = side_load(b, nb, &B, err))) {
        ev_err_prefix(err, "B");
        goto out;
    }
    if ((rc = code_sources(a, na, b, nb, &cv))) {
        ev_err_set(err, rc, "compare: out of memory");
        goto out;
    }
    setup_differences(&A, &B, got.differences, sizeof got.differences);
    got.different = got.differences[0] != '\0';
    got.gate_refused = opts->gate && got.different && !opts->allow_different;
    ev_compare_opts o = *opts;
    o.gate = opts->gate && !got.gate_refused;
    rp_floor_max(&A.r.floor, &B.r.floor, &fl);
    cap = (size_t)cJSON_GetArraySize(A.r.cases) * (A.r.n_arms ? A.r.n_arms : 1) + 1;
    if (!(rows = calloc(cap, sizeof *rows))) {
        rc = ev_err_set(err, EV_ENOMEM, "compare: out of memory");
        goto out;
    }
    const cJSON *ca;
    cJSON_ArrayForEach(ca, A.r.cases)
    {
        const cJSON *cb = find_case(&B.r, ca);
        int64_t ia = rp_jint(ca, "case_index", -1), ib = cb ? rp_jint(cb, "case_index", -1) : -1;
        for (size_t i = 0; cb && i < A.r.n_arms && n < cap; i++) {
            const char *oc;
            char reason[8];
            /* only the arms both runs planned for this case */
            if (has_arm(&B.r, A.r.arms[i]) &&
                rp_arm_outcome(&A.r, ia, A.r.arms[i], &oc, reason, sizeof reason) &&
                rp_arm_outcome(&B.r, ib, A.r.arms[i], &oc, reason, sizeof reason))
                compare_one(&A, &B, ca, cb, A.r.arms[i], &o, &fl, &rows[n++]);
        }
    }
    code_peers(rows, n, !got.different, &cv);
    if ((rc = summarise(rows, n, &s)) ||
        (rc = o.json ? put_json(&t, &A, &B, rows, n, &s, opts, &fl, &got, &cv)
                     : put_markdown(&t, &A, &B, rows, n, &s, opts, &fl, &got, &cv)) ||
        (rc = ev_buf_append(out, t.data ? t.data : "", t.len))) {
        ev_err_set(err, rc, "compare: out of memory");
        goto out;
    }
    got.gated = s.gated;
    got.inconclusive = s.k.n[RP_CALL_INCONCLUSIVE];
    *res = got;
out:
    free(rows);
    code_free(&cv);
    ev_buf_free(&t);
    if (A.loaded)
        rp_rep_free(&A.r);
    if (B.loaded)
        rp_rep_free(&B.r);
    return rc;
}
