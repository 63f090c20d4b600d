/*
 * verify_report.c: the verification report: per check a verdict, every
 * failure (the first VR_MAX_KEPT kept verbatim, the rest counted) and
 * informational notes; rendered as text for people and as JSON for CI.
 * Recording never fails the caller: an allocation failure while recording
 * marks the report failed (oom) so a short report can never read as PASS.
 */
#include "verify_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static const char *const vr_names[VR_NCHECKS] = {
    "archive",  "members", "formats", "plan",   "protocol",
    "rederive", "sources", "compare", "attest", "rebuild",
};

static const char *const vr_titles[VR_NCHECKS] = {
    "hardened archive reading",
    "members equal their receipts",
    "strict JSON and CSV formats",
    "job plan regenerated from protocol.json",
    "protocol kept (warm-up, calibration, flush, sample counts)",
    "derived numbers rebuilt from the raw records",
    "sources equal the source tree",
    "two bundles compared",
    "signed raw records (in-toto, DSSE, Ed25519)",
    "external kernels rebuilt from the bundle's members",
};

/* Returns the short name of check c ("archive" ...), or "?" when out of range. */
const char *vr_name(int c)
{
    if (c < 0 || c >= VR_NCHECKS)
        return "?";
    return vr_names[c];
}

/* Allocates an empty report for path.  OUT: *out; EV_ENOMEM otherwise. */
ev_status vr_new(const char *path, ev_vreport **out)
{
    ev_vreport *r = calloc(1, sizeof *r);
    if (!r)
        return EV_ENOMEM;
    r->path = strdup(path ? path : "-");
    if (!r->path) {
        free(r);
        return EV_ENOMEM;
    }
    *out = r;
    return EV_OK;
}

/* Marks check c as part of the report. */
void vr_use(ev_vreport *r, int c)
{
    if (c >= 0 && c < VR_NCHECKS)
        r->checks[c].used = 1;
}

/* Formats into a new string; NULL on allocation failure. */
static char *vr_vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

/* Appends (member, text) to a capped list; on allocation failure sets oom.
 * Takes ownership of text. */
static void vr_push(ev_vreport *r, vr_item **items, size_t *n, size_t *cap, size_t *total, const char *member,
                    char *text)
{
    (*total)++;
    if (!text) {
        r->oom = 1;
        return;
    }
    if (*n >= VR_MAX_KEPT) {
        free(text);
        return;
    }
    if (ev_grow((void **)items, cap, *n, sizeof **items)) {
        r->oom = 1;
        free(text);
        return;
    }
    char *m = strdup(member ? member : "-");
    if (!m) {
        r->oom = 1;
        free(text);
        return;
    }
    (*items)[*n].member = m;
    (*items)[*n].text = text;
    (*n)++;
}

/* Records a failure of check c; the verdict becomes FAIL. */
void vr_fail(ev_vreport *r, int c, const char *member, const char *fmt, ...)
{
    if (c < 0 || c >= VR_NCHECKS)
        return;
    vr_check *k = &r->checks[c];
    k->used = 1;
    k->verdict = EV_VERDICT_FAIL;
    va_list ap;
    va_start(ap, fmt);
    char *text = vr_vformat(fmt, ap);
    va_end(ap);
    vr_push(r, &k->fails, &k->n_fails, &k->cap_fails, &k->n_fails_total, member, text);
}

/* Records a note under check c; the verdict is unchanged. */
void vr_note(ev_vreport *r, int c, const char *member, const char *fmt, ...)
{
    if (c < 0 || c >= VR_NCHECKS)
        return;
    vr_check *k = &r->checks[c];
    k->used = 1;
    va_list ap;
    va_start(ap, fmt);
    char *text = vr_vformat(fmt, ap);
    va_end(ap);
    vr_push(r, &k->notes, &k->n_notes, &k->cap_notes, &k->n_notes_total, member, text);
}

/* Marks check c not run with a reason, unless it already failed. */
void vr_not_run(ev_vreport *r, int c, const char *fmt, ...)
{
    if (c < 0 || c >= VR_NCHECKS)
        return;
    vr_check *k = &r->checks[c];
    k->used = 1;
    if (k->verdict == EV_VERDICT_FAIL || k->not_run_reason)
        return;
    k->verdict = EV_VERDICT_NOT_RUN;
    va_list ap;
    va_start(ap, fmt);
    k->not_run_reason = vr_vformat(fmt, ap);
    va_end(ap);
    if (!k->not_run_reason)
        r->oom = 1;
}

/* Marks an optional check as not asked for. */
void vr_not_requested(ev_vreport *r, int c)
{
    if (c < 0 || c >= VR_NCHECKS)
        return;
    r->checks[c].used = 1;
    r->checks[c].verdict = EV_VERDICT_NOT_REQUESTED;
}

/* Returns the number of failures recorded under c (kept or counted). */
size_t vr_fail_count(const ev_vreport *r, int c)
{
    if (c < 0 || c >= VR_NCHECKS)
        return 0;
    return r->checks[c].n_fails_total;
}

/* Frees every item of a list. */
static void vr_items_free(vr_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(items[i].member);
        free(items[i].text);
    }
    free(items);
}

void ev_vreport_free(ev_vreport *r)
{
    if (!r)
        return;
    for (int c = 0; c < VR_NCHECKS; c++) {
        vr_items_free(r->checks[c].fails, r->checks[c].n_fails);
        vr_items_free(r->checks[c].notes, r->checks[c].n_notes);
        free(r->checks[c].not_run_reason);
    }
    free(r->path);
    free(r->attestation_path);
    free(r);
}

int ev_vreport_out_of_memory(const ev_vreport *r)
{
    return r && r->oom;
}

int ev_vreport_passed(const ev_vreport *r)
{
    if (!r || r->oom)
        return 0;
    int any = 0;
    for (int c = 0; c < VR_NCHECKS; c++) {
        const vr_check *k = &r->checks[c];
        if (!k->used)
            continue;
        if (k->verdict == EV_VERDICT_FAIL || k->verdict == EV_VERDICT_NOT_RUN)
            return 0;
        if (k->verdict == EV_VERDICT_PASS)
            any = 1;
    }
    return any;
}

size_t ev_vreport_failures(const ev_vreport *r)
{
    size_t n = 0;
    if (!r)
        return 0;
    for (int c = 0; c < VR_NCHECKS; c++)
        n += r->checks[c].n_fails_total;
    return n;
}

int ev_vreport_first_failure(const ev_vreport *r, const char **check, const char **member,
                             const char **reason)
{
    if (!r)
        return 0;
    for (int c = 0; c < VR_NCHECKS; c++) {
        const vr_check *k = &r->checks[c];
        if (k->used && k->n_fails > 0) {
            *check = vr_names[c];
            *member = k->fails[0].member;
            *reason = k->fails[0].text;
            return 1;
        }
    }
    for (int c = 0; c < VR_NCHECKS; c++) {
        const vr_check *k = &r->checks[c];
        if (k->used && k->verdict == EV_VERDICT_NOT_RUN) {
            *check = vr_names[c];
            *member = "-";
            *reason = k->not_run_reason ? k->not_run_reason : "not run";
            return 1;
        }
    }
    if (r->oom) {
        *check = "report";
        *member = "-";
        *reason = "out of memory while recording failures";
        return 1;
    }
    return 0;
}

/* Returns the word for a verdict. */
static const char *vr_verdict_word(ev_verdict v)
{
    switch (v) {
    case EV_VERDICT_PASS:
        return "PASS";
    case EV_VERDICT_FAIL:
        return "FAIL";
    case EV_VERDICT_NOT_RUN:
        return "NOT RUN";
    case EV_VERDICT_NOT_REQUESTED:
        return "not requested";
    }
    return "?";
}

/* The sentence saying what the verdict shows. */
static const char *vr_meaning(const ev_vreport *r)
{
    if (r->compare)
        return "differences between the two bundles are listed under compare; "
               "timings are reported as ratios, not gated";
    if (!ev_vreport_passed(r))
        return "the bundle is not valid evidence";
    if (r->signed_ok && r->root_expected && r->root_matches)
        return "internally consistent, its root digest equals the expected root, and its raw records carry a "
               "valid signature of the given key";
    if (r->signed_ok)
        return "internally consistent, and its raw records carry a valid signature of the given key (who "
               "holds that key is for the reader to know)";
    if (r->root_expected && r->root_matches)
        return "internally consistent, and its root digest equals the expected root "
               "(authentic as far as that root is)";
    return "internally consistent; authenticity NOT shown: pass --expect-root with the "
           "committed ROOT to bind it";
}

ev_status ev_vreport_text(const ev_vreport *r, ev_buf *out)
{
    ev_status rc = EV_OK;
    rc = ev_buf_printf(out, "verify-bundle %s\n", r->path);
    if (rc)
        return rc;
    if (r->have_root && (rc = ev_buf_printf(out, "root digest: %s\n", r->root_hex)))
        return rc;
    for (int c = 0; c < VR_NCHECKS; c++) {
        const vr_check *k = &r->checks[c];
        if (!k->used)
            continue;
        rc = ev_buf_printf(out, "%d %-9s %-13s %s\n", c + 1, vr_names[c], vr_verdict_word(k->verdict),
                           vr_titles[c]);
        if (rc)
            return rc;
        if (k->verdict == EV_VERDICT_NOT_RUN && k->not_run_reason &&
            (rc = ev_buf_printf(out, "    not run: %s\n", k->not_run_reason)))
            return rc;
        for (size_t i = 0; i < k->n_fails; i++)
            if ((rc = ev_buf_printf(out, "    FAIL %s: %s: %s\n", vr_names[c], k->fails[i].member,
                                    k->fails[i].text)))
                return rc;
        if (k->n_fails_total > k->n_fails &&
            (rc = ev_buf_printf(out, "    ... and %zu more failures\n", k->n_fails_total - k->n_fails)))
            return rc;
        for (size_t i = 0; i < k->n_notes; i++)
            if ((rc = ev_buf_printf(out, "    note: %s: %s\n", k->notes[i].member, k->notes[i].text)))
                return rc;
        if (k->n_notes_total > k->n_notes &&
            (rc = ev_buf_printf(out, "    ... and %zu more notes\n", k->n_notes_total - k->n_notes)))
            return rc;
    }
    return ev_buf_printf(out, "verdict: %s (%s)\n", ev_vreport_passed(r) ? "PASS" : "FAIL", vr_meaning(r));
}

/* Adds an array of items to obj under key; EV_ENOMEM on failure. */
static ev_status vr_json_items(cJSON *obj, const char *key, const vr_item *items, size_t n)
{
    cJSON *arr = cJSON_AddArrayToObject(obj, key);
    if (!arr)
        return EV_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        cJSON *it = cJSON_CreateObject();
        if (!it || !cJSON_AddItemToArray(arr, it))
            return EV_ENOMEM;
        if (!cJSON_AddStringToObject(it, "member", items[i].member) ||
            !cJSON_AddStringToObject(it, "reason", items[i].text))
            return EV_ENOMEM;
    }
    return EV_OK;
}

ev_status ev_vreport_json(const ev_vreport *r, ev_buf *out)
{
    ev_status rc = EV_OK;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return EV_ENOMEM;
    int passed = ev_vreport_passed(r);
    rc = EV_ENOMEM;
    if (!cJSON_AddStringToObject(root, "bundle", r->path) ||
        !cJSON_AddStringToObject(root, "verdict", passed ? "PASS" : "FAIL") ||
        !cJSON_AddStringToObject(root, "meaning", vr_meaning(r)))
        goto out;
    if (r->have_root) {
        if (!cJSON_AddStringToObject(root, "root", r->root_hex))
            goto out;
    } else if (!cJSON_AddNullToObject(root, "root")) {
        goto out;
    }
    if (!cJSON_AddBoolToObject(root, "root_expected", r->root_expected) ||
        !cJSON_AddBoolToObject(root, "authenticity_shown", passed && r->root_expected && r->root_matches))
        goto out;
    if ((rc = ev_json_add_i64(root, "failure_count", (int64_t)ev_vreport_failures(r))))
        goto out;
    rc = EV_ENOMEM;
    cJSON *checks = cJSON_AddArrayToObject(root, "checks");
    if (!checks)
        goto out;
    for (int c = 0; c < VR_NCHECKS; c++) {
        const vr_check *k = &r->checks[c];
        if (!k->used)
            continue;
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(checks, o))
            goto out;
        const char *v = k->verdict == EV_VERDICT_PASS      ? "pass"
                        : k->verdict == EV_VERDICT_FAIL    ? "fail"
                        : k->verdict == EV_VERDICT_NOT_RUN ? "not-run"
                                                           : "not-requested";
        if (ev_json_add_i64(o, "number", c + 1) || !cJSON_AddStringToObject(o, "check", vr_names[c]) ||
            !cJSON_AddStringToObject(o, "title", vr_titles[c]) || !cJSON_AddStringToObject(o, "verdict", v))
            goto out;
        if (k->not_run_reason && !cJSON_AddStringToObject(o, "not_run_reason", k->not_run_reason))
            goto out;
        if ((rc = ev_json_add_i64(o, "failure_count", (int64_t)k->n_fails_total)) ||
            (rc = vr_json_items(o, "failures", k->fails, k->n_fails)) ||
            (rc = vr_json_items(o, "notes", k->notes, k->n_notes)))
            goto out;
        rc = EV_ENOMEM;
    }
    rc = ev_json_print(root, 1, out);
out:
    cJSON_Delete(root);
    return rc;
}
