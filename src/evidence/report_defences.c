/*
 * report_defences.c: which defences held for each arm (docs/defenses.md),
 * from the members alone: the report's per-arm table (report.html's
 * "Defences per arm", the markdown report's last table).  For an arm's
 * completed jobs with a case (every phase), each line counts the jobs a
 * defence held for:
 *   op checks     every cold and hot sample's check tag recorded passed
 *                 (store schema 5: every op of every replay planted and
 *                 checked), and the kept output validated;
 *   plausibility  the ceiling each median was bounded by (validation.json's
 *                 "plausibility": runner/sample_rules.h), counted by name,
 *                 "none" where no ceiling applied;
 *   late work     every hot sample's wall clock recorded (the late-work
 *                 rule held);
 *   GPU hygiene   NVML read after every hot sample (no other process, not
 *                 throttled);
 * and, by what the arm is: slot guards and the input read back (every arm
 * the backend binds; not torch-compile, whose outputs are torch's),
 * the kernel host (an external kernel on cpu, in a run whose environment
 * records its isolation), the rebuild (an external kernel whose build
 * receipt lists what its compiler read: verify-bundle rebuilds it where
 * that compiler is).  An arm without a completed job says so.
 * Deterministic: arms in the case table's order, the lines in this order.
 */
#include "report_int.h"

#include "evidence/figures.h"
#include "member.h"
#include "runner/sample_rules.h"

/* Counts of an arm's completed jobs for which each defence held. */
typedef struct arm_def {
    int64_t jobs, checks, kept, late, hygiene;
    int64_t uncaptured;      /* jobs that ran in the timed loop, not a CUDA graph (figures.h) */
    int64_t hot[4], cold[4]; /* by ev_rule_ceiling: none, memory, l2, largest */
    int plaus;               /* some job states its plausibility */
} arm_def;

/* 1 when every element of array a is a number >= 0 (and a has one). */
static int all_known(const cJSON *a)
{
    const cJSON *x;
    double v;
    if (!cJSON_IsArray(a) || !a->child)
        return 0;
    cJSON_ArrayForEach(x, a) if (!rp_numv(x, &v) || v < 0) return 0;
    return 1;
}

/* Counts o's "bound_by" in n[], indexed by ev_rule_ceiling (whose names
 * runner/sample_rules.h owns); nothing when it names none of them. */
static void count_ceiling(const cJSON *o, int64_t n[4])
{
    const char *c = ev_jr_str(o, "bound_by");
    for (int k = EV_RULE_CEIL_NONE; c && k <= EV_RULE_CEIL_LARGEST; k++)
        if (!strcmp(c, ev_rule_ceiling_name((ev_rule_ceiling)k)))
            n[k]++;
}

/* Fills *d from arm's completed jobs with a case. */
static void gather(const rep *r, const char *arm, arm_def *d)
{
    const cJSON *j;
    memset(d, 0, sizeof *d);
    cJSON_ArrayForEach(j, r->jobs)
    {
        const char *a = ev_jr_str(j, "arm"), *oc = ev_jr_str(j, "outcome");
        if (!a || strcmp(a, arm) || rp_jint(j, "case_index", -1) < 0 || !oc || strcmp(oc, "completed"))
            continue;
        const cJSON *atts = cJSON_GetObjectItemCaseSensitive(j, "attempts");
        const cJSON *last = cJSON_GetArrayItem(atts, cJSON_GetArraySize(atts) - 1);
        const cJSON *ops = cJSON_GetObjectItemCaseSensitive(last, "op_checks"), *x;
        const cJSON *kept = cJSON_GetObjectItemCaseSensitive(last, "op_kept");
        const cJSON *dev = cJSON_GetObjectItemCaseSensitive(last, "device");
        const cJSON *pl = cJSON_GetObjectItemCaseSensitive(j, "plausibility");
        int ok = cJSON_IsArray(ops) && ops->child != NULL;
        d->jobs++;
        cJSON_ArrayForEach(x, ops) ok &= rp_jtrue(x, "passed");
        d->checks += ok;
        d->kept += cJSON_IsObject(kept) && rp_jtrue(kept, "passed");
        d->late += all_known(cJSON_GetObjectItemCaseSensitive(dev, "hot_wall_ms"));
        d->hygiene += all_known(cJSON_GetObjectItemCaseSensitive(dev, "hot_other_processes"));
        {
            ev_view_job fj;
            memset(&fj, 0, sizeof fj);
            ev_view_capture(&fj, dev);
            d->uncaptured += fj.uncaptured;
        }
        if (cJSON_IsObject(pl)) {
            d->plaus = 1;
            count_ceiling(cJSON_GetObjectItemCaseSensitive(pl, "hot"), d->hot);
            count_ceiling(cJSON_GetObjectItemCaseSensitive(pl, "cold"), d->cold);
        }
    }
}

/* Appends " name N" for each ceiling counted in n (" -" when none). */
static ev_status put_ceilings(ev_buf *b, const int64_t n[4])
{
    ev_status rc = EV_OK;
    int any = 0;
    for (int k = EV_RULE_CEIL_MEMORY; k <= EV_RULE_CEIL_LARGEST && !rc; k++)
        if (n[k]) {
            rc = ev_buf_printf(b, "%s %s %" PRId64, any ? "," : "", ev_rule_ceiling_name((ev_rule_ceiling)k),
                               n[k]);
            any = 1;
        }
    if (!rc && n[0])
        rc = ev_buf_printf(b, "%s no ceiling %" PRId64, any ? "," : "", n[0]);
    else if (!rc && !any)
        rc = ev_buf_puts(b, " -");
    return rc;
}

/* 1 when the environment of the run's first invocation records how an
 * external kernel ran apart on cpu (runner/khost.h). */
static int kernel_host(const rep *r)
{
    const cJSON *inv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r->val, "invocations"), 0);
    const cJSON *e = inv ? cJSON_GetObjectItemCaseSensitive(inv, "environment") : NULL;
    return cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(e, "kernel_isolation"));
}

/* 1 when proof (proof-receipts.json) holds a build of arm that built and
 * lists its compiler's dependencies (verify-bundle's rebuild reads them). */
static int rebuildable(const cJSON *proof, const char *arm)
{
    const cJSON *inv, *k;
    cJSON_ArrayForEach(inv, cJSON_GetObjectItemCaseSensitive(proof, "external_kernels"))
    {
        cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(inv, "builds"))
        {
            const char *name = ev_jr_str(k, "name");
            if (name && !strcmp(name, arm) && rp_jtrue(k, "ok") &&
                cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(k, "deps")))
                return 1;
        }
    }
    return 0;
}

/* The receipt of arm in proof when it is a Python arm's (language
 * "python": runner/backend_python.h), else NULL. */
static const cJSON *python_receipt(const cJSON *proof, const char *arm)
{
    const cJSON *inv, *k;
    cJSON_ArrayForEach(inv, cJSON_GetObjectItemCaseSensitive(proof, "external_kernels"))
    {
        cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(inv, "builds"))
        {
            const char *name = ev_jr_str(k, "name"), *lang = ev_jr_str(k, "language");
            if (name && lang && !strcmp(name, arm) && !strcmp(lang, "python"))
                return k;
        }
    }
    return NULL;
}

/* Writes arm's line of defences into b (its text, to be escaped by the
 * caller's format). */
static ev_status arm_line(const rep *r, const cJSON *proof, const char *arm, const arm_def *d, ev_buf *b)
{
    ev_arm_kind kind = EV_ARM_NATIVE;
    ev_sched sch;
    const char *backend = ev_jr_str(cJSON_GetObjectItemCaseSensitive(r->val, "run"), "backend");
    int ext = !ev_arm_builtin(arm, &kind, &sch) && kind == EV_ARM_EXTERNAL;
    const cJSON *py = ext ? python_receipt(proof, arm) : NULL;
    if (!d->jobs)
        return ev_buf_puts(b, "no completed job (its failures are listed above)");
    ev_status rc = ev_buf_printf(b, "op checks %" PRId64 "/%" PRId64 "; kept output %" PRId64 "/%" PRId64,
                                 d->checks, d->jobs, d->kept, d->jobs);
    if (!rc && d->plaus) {
        rc = ev_buf_printf(b, "; plausibility (%g x the ceiling): hot", EV_RULE_PLAUSIBLE_MARGIN);
        if (!rc)
            rc = put_ceilings(b, d->hot);
        if (!rc)
            rc = ev_buf_puts(b, ", cold");
        if (!rc)
            rc = put_ceilings(b, d->cold);
    } else if (!rc) {
        rc = ev_buf_puts(b, "; plausibility not stated");
    }
    if (!rc && d->late)
        rc = ev_buf_printf(b, "; late work %" PRId64 "/%" PRId64, d->late, d->jobs);
    if (!rc && d->hygiene)
        rc = ev_buf_printf(b, "; GPU hygiene %" PRId64 "/%" PRId64, d->hygiene, d->jobs);
    if (!rc && !ev_is_arm(arm, EV_ARM_TORCH))
        rc = ev_buf_puts(b, "; slot guards, input read back");
    if (py) {
        /* a Python arm: what holds it from outside its process, and the
         * labels of what cannot (each receipt names them in full) */
        const cJSON *nh;
        const char *sep = " ";
        if (!rc && d->uncaptured)
            rc = ev_buf_printf(b,
                               "; not graph-captured in %" PRId64 " of %" PRId64
                               " jobs (the timed loop: not ranked against captured arms)",
                               d->uncaptured, d->jobs);
        if (!rc)
            rc = ev_buf_puts(b, "; its own Python process (memory limit, stdout, exit watched; its files "
                                "members, nothing compiled); not held:");
        cJSON_ArrayForEach(nh, cJSON_GetObjectItemCaseSensitive(py, "not_held"))
        {
            const char *t = cJSON_IsString(nh) ? nh->valuestring : "?", *colon = strchr(t, ':');
            if (!rc)
                rc = ev_buf_printf(b, "%s%.*s", sep, (int)(colon ? colon - t : (ptrdiff_t)strlen(t)), t);
            sep = ", ";
        }
        return rc;
    }
    if (!rc && ext && backend && !strcmp(backend, "cpu") && kernel_host(r))
        rc = ev_buf_puts(b, "; kernel host (its own process, seccomp)");
    if (!rc && ext)
        rc = ev_buf_puts(b, rebuildable(proof, arm)
                                ? "; rebuild from the bundle (its compiler's dependency list)"
                                : "; no dependency list: not rebuildable");
    return rc;
}

/* proof-receipts.json parsed (NULL when absent or malformed). */
static cJSON *proof_of(const ev_member *m, size_t n)
{
    const ev_member *x = ev_member_find(m, n, EV_MEMBER_PROOF);
    cJSON *t = NULL;
    if (x && ev_json_parse(x->data ? (const char *)x->data : "", x->len, 0, &t, NULL))
        t = NULL;
    return t;
}

ev_status rp_sec_defences(const rep *r, const ev_member *m, size_t n, int markdown, ev_buf *b)
{
    cJSON *proof = proof_of(m, n);
    ev_buf line = EV_BUF_INIT;
    ev_status rc =
        markdown
            ? ev_buf_puts(
                  b, "\n## Defences per arm\n\n| Arm | Completed jobs | Defences held |\n|---|---:|---|\n")
            : ev_buf_puts(b, "<h2>Defences per arm</h2>\n<p>For each arm's completed jobs with a case, the "
                             "defences that held (docs/defenses.md): the planted op checks and the kept "
                             "output, the physical plausibility bound (each median within the margin x the "
                             "ceiling that applies: l2, memory, or on cpu the largest the run measured), the "
                             "late-work and hygiene rules where their facts were recorded, and what the "
                             "arm is held to by what it is.</p>\n<table>\n<tr><th>arm</th><th>completed "
                             "jobs</th><th>defences held</th></tr>\n");
    for (size_t i = 0; i < r->n_arms && !rc; i++) {
        arm_def d;
        char t[32];
        gather(r, r->arms[i], &d);
        ev_buf_reset(&line);
        rc = arm_line(r, proof, r->arms[i], &d, &line);
        snprintf(t, sizeof t, "%" PRId64, d.jobs);
        if (!rc && markdown) {
            rc = ev_buf_puts(b, "| ");
            if (!rc)
                rc = rp_put_md(b, r->arms[i]);
            if (!rc)
                rc = ev_buf_printf(b, " | %s | ", t);
            if (!rc)
                rc = rp_put_md(b, line.data ? line.data : "");
            if (!rc)
                rc = ev_buf_puts(b, " |\n");
        } else if (!rc) {
            rc = ev_buf_puts(b, "<tr><td>");
            if (!rc)
                rc = rp_put_esc(b, r->arms[i]);
            if (!rc)
                rc = ev_buf_printf(b, "</td><td class=\"n\">%s</td><td>", t);
            if (!rc)
                rc = rp_put_esc(b, line.data ? line.data : "");
            if (!rc)
                rc = ev_buf_puts(b, "</td></tr>\n");
        }
    }
    if (!rc && !markdown)
        rc = ev_buf_puts(b, "</table>\n");
    ev_buf_free(&line);
    cJSON_Delete(proof);
    return rc;
}
