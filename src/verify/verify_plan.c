/*
 * verify_plan.c: check 4, "plan".  The job plan is regenerated from
 * protocol.json with the runner's own pure functions (src/runner/plan.h)
 * and compared job by job with validation.json: every planned job appears
 * exactly once, with its phase, case, arm, label and plan order; attempts
 * are numbered 1..k, every attempt but the last was interrupted, and each
 * attempt's outcome is re-derived from its process record
 * (ev_outcome_derive); the rescue jobs are regenerated from those derived
 * outcomes (one retry-1 per retryable main or policy failure); any job
 * that is neither planned nor a rescue job is an added job; and the run
 * and rescue status are re-derived from the outcomes.  The cases and the
 * protocol id are held to protocol.json too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "names.h"
#include "evidence/attempt.h"
#include "evidence/projections.h"
#include "runner/plan.h"
#include "runner/fault_rules.h"
#include "runner/protocol.h"
#include "sha256.h"
#include "store/outcome.h"
#include "verify_int.h"
#include "vocab.h"
#include "strs.h"

#define VP EV_MEMBER_VALIDATION

/* qsort comparator: jobs by job_id. */
static int vp_cmp_id(const void *a, const void *b)
{
    int64_t x = ((const vb_vjob *)a)->job_id, y = ((const vb_vjob *)b)->job_id;
    return x < y ? -1 : x > y;
}

/* qsort comparator over vb_vjob pointers: by job_key. */
static int vp_cmp_key(const void *a, const void *b)
{
    return strcmp((*(vb_vjob *const *)a)->key, (*(vb_vjob *const *)b)->key);
}

/* Re-derives the outcome of one attempt from its record (ev_attempt_read,
 * the one reader).  Returns 0 and sets *out and *stages (how many
 * validation stages it has, 0..2), or -1 when the record is malformed
 * (reason in *why). */
static int vp_derive_attempt(const cJSON *a, ev_outcome *out, int *stages, ev_attempt_rec *rec,
                             const char **why)
{
    if (ev_attempt_read(a, rec, why))
        return -1;
    *stages = rec->stages;
    *out = ev_outcome_derive(&rec->facts);
    return 0;
}

/* 1 when the free text s (NULL: none) holds no absolute path the
 * exporter's redaction (ev_bundle_redact, docs/bundle-format.md) would
 * still replace; -1 when out of memory. */
static int vp_redacted(const char *s)
{
    ev_buf b = EV_BUF_INIT;
    int ok;
    if (!s)
        return 1;
    if (ev_bundle_redact(s, &b)) {
        ev_buf_free(&b);
        return -1;
    }
    ok = b.len == strlen(s) && !memcmp(b.data ? b.data : "", s, b.len);
    ev_buf_free(&b);
    return ok;
}

/* Checks one job's attempts and re-derives its outcome into j->derived;
 * with proto (the parsed protocol.json, or NULL), holds each attempt of a
 * fault arm to its declared end (ev_fault_problem). */
static void vp_job_outcome(vb_vjob *j, const ev_protocol *proto, ev_vreport *r)
{
    int64_t last = 0;
    int last_null = 0;
    size_t k = 0;
    ev_outcome oc = EV_OUT_INTERRUPTED;
    j->derived_ok = 1;
    if (ev_jr_i64_null(j->j, "last_attempt", &last, &last_null)) {
        vr_fail(r, VR_PLAN, VP, "job %s: last_attempt is not an integer or null", j->key);
        j->derived_ok = 0;
    }
    const cJSON *a;
    cJSON_ArrayForEach(a, j->attempts)
    {
        int64_t n;
        const char *why = NULL;
        const char *rec = ev_jr_str(a, "outcome");
        k++;
        if (ev_jr_i64(a, "attempt", &n) || n != (int64_t)k) {
            vr_fail(r, VR_PLAN, VP, "job %s: attempt %zu is not numbered %zu (attempts are 1, 2, ...)",
                    j->key, k, k);
            j->derived_ok = 0;
            continue;
        }
        int stages = 0;
        int64_t ns;
        const cJSON *proc = cJSON_GetObjectItemCaseSensitive(a, "process");
        static const char *const texts[] = {"skip_reason", "protocol_error", "stderr_tail"};
        for (size_t t = 0; cJSON_IsObject(proc) && t < 3; t++) {
            int red = vp_redacted(ev_jr_str(proc, texts[t]));
            if (red < 0)
                r->oom = 1;
            else if (!red)
                vr_fail(r, VR_PLAN, VP,
                        "job %s attempt %zu: process.%s holds an absolute path (not redacted)", j->key, k,
                        texts[t]);
        }
        if (ev_jr_ns(a, "started_ns", &ns)) {
            vr_fail(r, VR_PLAN, VP, "job %s attempt %zu: started_ns is not a decimal string", j->key, k);
            j->derived_ok = 0;
            continue;
        }
        ev_attempt_rec ar;
        if (vp_derive_attempt(a, &oc, &stages, &ar, &why)) {
            vr_fail(r, VR_PLAN, VP, "job %s attempt %zu: %s", j->key, k, why);
            j->derived_ok = 0;
            continue;
        }
        {
            char fw[400];
            const char *bad = ev_fault_problem(proto, j->arm, ev_is_phase(j->phase, EV_PHASE_RESCUE),
                                               &ar.facts, ev_jr_str(proc, "stderr_tail"), fw, sizeof fw);
            if (bad)
                vr_fail(r, VR_PLAN, VP, "job %s attempt %zu: %s", j->key, k, bad);
        }
        /* a completed attempt of a case validated its output twice: a
         * stage deleted (with the derived members recomputed) cannot turn a
         * failed validation into a completion */
        const char *sp = ev_stages_problem(oc, j->case_index >= 0, stages);
        if (sp)
            vr_fail(r, VR_PLAN, VP, "job %s attempt %zu: %s (%d stage(s))", j->key, k, sp, stages);
        if (!rec || strcmp(rec, ev_outcome_name(oc)))
            vr_fail(r, VR_PLAN, VP, "job %s attempt %zu: outcome %s, but its process record gives %s", j->key,
                    k, rec ? rec : "(none)", ev_outcome_name(oc));
        if (k < (size_t)cJSON_GetArraySize(j->attempts) && oc != EV_OUT_INTERRUPTED)
            vr_fail(r, VR_PLAN, VP,
                    "job %s attempt %zu: %s, yet attempted again (only an interrupted attempt is rerun)",
                    j->key, k, ev_outcome_name(oc));
    }
    if (k == 0 ? !last_null : (last_null || last != (int64_t)k))
        vr_fail(r, VR_PLAN, VP, "job %s: last_attempt does not name its last attempt (%zu)", j->key, k);
    if (k == 0)
        oc = EV_OUT_INTERRUPTED;
    j->derived = (int)oc;
    if (j->derived_ok && (!j->outcome || strcmp(j->outcome, ev_outcome_name(oc))))
        vr_fail(r, VR_PLAN, VP, "job %s: outcome %s, but its last attempt's process record gives %s", j->key,
                j->outcome ? j->outcome : "(none)", ev_outcome_name(oc));
}

/* Builds b->vjobs from validation.json's "jobs"; records structural
 * failures.  Sets b->vjobs_ok when every job is well-formed. */
static void vp_index_jobs(vb_bundle *b, ev_vreport *r)
{
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(b->validation, "jobs");
    if (!cJSON_IsArray(jobs)) {
        vr_fail(r, VR_PLAN, VP, "\"jobs\" is not an array");
        return;
    }
    size_t n = (size_t)cJSON_GetArraySize(jobs);
    b->vjobs = calloc(n ? n : 1, sizeof *b->vjobs);
    if (!b->vjobs) {
        r->oom = 1;
        return;
    }
    int ok = 1;
    size_t i = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        vb_vjob *v = &b->vjobs[i];
        int null_case = 0;
        v->j = j;
        v->key = ev_jr_str(j, "job_key");
        v->phase = ev_jr_str(j, "phase");
        v->arm = ev_jr_str(j, "arm");
        v->label = ev_jr_str(j, "label");
        v->outcome = ev_jr_str(j, "outcome");
        v->attempts = cJSON_GetObjectItemCaseSensitive(j, "attempts");
        const cJSON *ro = cJSON_GetObjectItemCaseSensitive(j, "retry_of");
        v->retry_of = cJSON_IsString(ro) ? ro->valuestring : NULL;
        if (!v->key || !v->phase || !v->arm || !v->label || !v->outcome || !cJSON_IsArray(v->attempts) ||
            ev_jr_i64(j, "job_id", &v->job_id) ||
            ev_jr_i64_null(j, "case_index", &v->case_index, &null_case) ||
            ev_jr_i64(j, "plan_order", &v->plan_order) || !(cJSON_IsString(ro) || cJSON_IsNull(ro))) {
            vr_fail(r, VR_PLAN, VP,
                    "jobs[%zu] lacks job_id, job_key, phase, case_index, arm, label, plan_order, "
                    "retry_of, outcome or attempts of the documented types",
                    i);
            ok = 0;
            continue;
        }
        if (null_case)
            v->case_index = -1;
        i++;
    }
    b->n_vjobs = i;
    qsort(b->vjobs, b->n_vjobs, sizeof *b->vjobs, vp_cmp_id);
    for (size_t k = 1; k < b->n_vjobs; k++)
        if (b->vjobs[k].job_id == b->vjobs[k - 1].job_id) {
            vr_fail(r, VR_PLAN, VP, "job_id %lld appears twice", (long long)b->vjobs[k].job_id);
            ok = 0;
        }
    for (size_t k = 0; k < b->n_vjobs; k++)
        vp_job_outcome(&b->vjobs[k], b->proto, r);
    b->vjobs_ok = ok;
}

/* Compares validation.json's run and cases with protocol.json. */
static void vp_run_and_cases(vb_bundle *b, const ev_protocol *proto, ev_vreport *r)
{
    const vb_member *pm = vb_find(b, EV_MEMBER_PROTOCOL);
    char id[EV_SHA256_HEX_LEN + 1];
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    if (ev_sha256_hex(pm->data, pm->len, id)) {
        r->oom = 1;
        return;
    }
    const char *rid = ev_jr_str(run, "protocol_id");
    if (!rid || strcmp(rid, id))
        vr_fail(r, VR_PLAN, VP, "run.protocol_id is not the SHA-256 of protocol.json (%s)", id);
    int red = vp_redacted(ev_jr_str(run, "protocol_path"));
    if (red < 0)
        r->oom = 1;
    else if (!red)
        vr_fail(r, VR_PLAN, VP, "run.protocol_path holds an absolute path (not redacted)");
    int64_t ns;
    const cJSON *fin = cJSON_GetObjectItemCaseSensitive(run, "finished_ns");
    if (ev_jr_ns(run, "created_ns", &ns) || (!cJSON_IsNull(fin) && ev_jr_ns(run, "finished_ns", &ns)))
        vr_fail(r, VR_PLAN, VP,
                "run.created_ns or run.finished_ns is not a decimal string (*_ns fields are)");
    int64_t seed;
    if (ev_jr_i64(run, "seed", &seed) || seed != proto->seed)
        vr_fail(r, VR_PLAN, VP, "run.seed is not protocol.json's seed %lld", (long long)proto->seed);
    if (b->provenance) {
        const char *pid = ev_jr_str(b->provenance, "protocol_id");
        if (!pid || strcmp(pid, id))
            vr_fail(r, VR_PLAN, EV_MEMBER_PROVENANCE, "protocol_id is not the SHA-256 of protocol.json (%s)",
                    id);
    }
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(b->validation, "cases");
    if (!cJSON_IsArray(cases) || (size_t)cJSON_GetArraySize(cases) != proto->n_cases) {
        vr_fail(r, VR_PLAN, VP, "cases: not the %zu cases of protocol.json", proto->n_cases);
        return;
    }
    size_t i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        const ev_proto_case *pc = &proto->cases[i];
        int64_t ci, rows, cols, stride, dr;
        const char *op = ev_jr_str(c, "op"), *dt = ev_jr_str(c, "dtype"), *role = ev_jr_str(c, "role");
        if (ev_jr_i64(c, "case_index", &ci) || ev_jr_i64(c, "rows", &rows) || ev_jr_i64(c, "cols", &cols) ||
            ev_jr_i64(c, "stride", &stride) || ev_jr_i64(c, "default_rows", &dr) || !op || !dt || !role ||
            ci != (int64_t)i || rows != pc->rows || cols != pc->cols || stride != pc->stride ||
            dr != pc->default_rows || strcmp(op, pc->op) || strcmp(dt, pc->dtype) || strcmp(role, pc->role))
            vr_fail(r, VR_PLAN, VP, "cases[%zu] differs from protocol.json's case %zu", i, i);
        i++;
    }
}

/* Compares a bundle job with the planned one; records every difference. */
static void vp_same_job(const vb_vjob *v, const ev_plan_job *p, const char *want_retry_of, ev_vreport *r)
{
    if (strcmp(v->phase, ev_phase_name(p->phase)) || v->case_index != p->case_index ||
        strcmp(v->arm, p->arm) || strcmp(v->label, p->label))
        vr_fail(r, VR_PLAN, VP, "job %s is relabelled: phase %s, case %lld, arm %s, label %s", p->job_key,
                v->phase, (long long)v->case_index, v->arm, v->label);
    if (v->plan_order != p->plan_order)
        vr_fail(r, VR_PLAN, VP, "job %s: plan_order %lld, the regenerated plan says %lld", p->job_key,
                (long long)v->plan_order, (long long)p->plan_order);
    if (want_retry_of ? (!v->retry_of || strcmp(v->retry_of, want_retry_of)) : v->retry_of != NULL)
        vr_fail(r, VR_PLAN, VP, "job %s: retry_of %s, the regenerated plan says %s", p->job_key,
                v->retry_of ? v->retry_of : "null", want_retry_of ? want_retry_of : "null");
}

/* Each invocation's profile id is the SHA-256 of its environment record
 * (store/outcome.h, the exporter's rule too), and provenance.json names
 * the first invocation's (null when that one recorded none). */
static void vp_environment_copy(const cJSON *x, size_t i, ev_vreport *r);
static void vp_attempt_invocations(const vb_bundle *b, ev_vreport *r);

/* bsearch comparator over int64_t. */
static int vp_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}
static void vp_environments(const vb_bundle *b, ev_vreport *r)
{
    const cJSON *invs = cJSON_GetObjectItemCaseSensitive(b->validation, "invocations"), *x;
    const char *first = NULL; /* the first invocation's profile id (NULL: it has none) */
    size_t i = 0;
    if (!cJSON_IsArray(invs)) {
        vr_fail(r, VR_PLAN, VP, "\"invocations\" is not an array");
        return;
    }
    cJSON_ArrayForEach(x, invs)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(x, "profile_id"),
                    *rec = cJSON_GetObjectItemCaseSensitive(x, "environment_record");
        i++;
        int64_t ns;
        if (ev_jr_ns(x, "started_ns", &ns))
            vr_fail(r, VR_PLAN, VP, "invocation %zu: started_ns is not a decimal string", i);
        if (cJSON_IsNull(id) && cJSON_IsNull(rec))
            continue; /* an invocation whose probe recorded no environment (first stays NULL) */
        if (!cJSON_IsString(id) || !cJSON_IsString(rec)) {
            vr_fail(r, VR_PLAN, VP,
                    "invocation %zu: profile_id and environment_record must be strings or both null", i);
            continue;
        }
        if (i == 1)
            first = id->valuestring;
        if (!ev_profile_id_matches(rec->valuestring, strlen(rec->valuestring), id->valuestring))
            vr_fail(r, VR_PLAN, VP,
                    "invocation %zu: profile_id %.12s... is not the SHA-256 of its environment_record", i,
                    id->valuestring);
    }
    i = 0;
    cJSON_ArrayForEach(x, invs)
    {
        i++;
        vp_environment_copy(x, i, r);
    }
    const char *pid = ev_jr_str(b->provenance, "profile_id");
    if (b->provenance && (first ? !pid || strcmp(pid, first) : pid != NULL))
        vr_fail(r, VR_PLAN, EV_MEMBER_PROVENANCE, "profile_id %s is not the first invocation's (%s)",
                pid ? pid : "null", first ? first : "null");
}

/* An invocation's "environment" (and its reason) is the parsed copy of its
 * environment_record, as evidence/projections.h makes it: equal when both
 * print to the same bytes with numbers canonical. */
static void vp_environment_copy(const cJSON *x, size_t i, ev_vreport *r)
{
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(x, "environment_record"),
                *have = cJSON_GetObjectItemCaseSensitive(x, "environment");
    const char *why_have = ev_jr_str(x, "environment_reason");
    cJSON *want = NULL, *copy = NULL;
    char why[256];
    ev_buf a = EV_BUF_INIT, c = EV_BUF_INIT;
    if (ev_proj_environment(cJSON_IsString(rec) ? rec->valuestring : NULL, &want, why, sizeof why)) {
        r->oom = 1;
        return;
    }
    if (!want) {
        if (!cJSON_IsNull(have) || !why_have || strcmp(why_have, why))
            vr_fail(r, VR_PLAN, VP, "invocation %zu: environment is not null with environment_reason \"%s\"",
                    i, why);
        return;
    }
    if (why_have || !cJSON_IsObject(have) || !(copy = cJSON_Duplicate(have, 1)) ||
        ev_json_canon_numbers(copy) || ev_json_print(want, 1, &a) || ev_json_print(copy, 1, &c) ||
        a.len != c.len || memcmp(a.data, c.data, a.len))
        vr_fail(r, VR_PLAN, VP,
                "invocation %zu: environment is not the parsed copy of its environment_record", i);
    cJSON_Delete(want);
    cJSON_Delete(copy);
    ev_buf_free(&a);
    ev_buf_free(&c);
}

/* The invocations are listed in invocation_id order, and each attempt's
 * invocation_id names one of them (docs/bundle-format.md): an attempt
 * cannot be credited to an invocation, a host or an environment the
 * bundle does not hold. */
static void vp_attempt_invocations(const vb_bundle *b, ev_vreport *r)
{
    const cJSON *invs = cJSON_GetObjectItemCaseSensitive(b->validation, "invocations"), *x;
    size_t n = cJSON_IsArray(invs) ? (size_t)cJSON_GetArraySize(invs) : 0, k = 0;
    int64_t *ids = calloc(n + 1, sizeof *ids);
    if (!ids) {
        r->oom = 1;
        return;
    }
    cJSON_ArrayForEach(x, invs)
    {
        if (ev_jr_i64(x, "invocation_id", &ids[k]) || (k && ids[k] <= ids[k - 1])) {
            vr_fail(r, VR_PLAN, VP, "invocation %zu: invocation_id missing or not above the one before it",
                    k + 1);
            free(ids);
            return;
        }
        k++;
    }
    for (size_t i = 0; i < b->n_vjobs; i++) {
        const cJSON *a;
        size_t at = 0;
        cJSON_ArrayForEach(a, b->vjobs[i].attempts)
        {
            int64_t id;
            at++;
            if (ev_jr_i64(a, "invocation_id", &id) || !bsearch(&id, ids, n, sizeof *ids, vp_cmp_i64))
                vr_fail(r, VR_PLAN, VP, "job %s attempt %zu: invocation_id names no invocation of the bundle",
                        b->vjobs[i].key, at);
        }
    }
    free(ids);
}

/* An attempt's hold on the device: from its release (started_ns) to its
 * process's end (ended_ns). */
typedef struct vp_hold {
    int64_t inv, started, ended;
    const char *key;
    size_t attempt;
} vp_hold;

static int vp_cmp_hold(const void *a, const void *b)
{
    const vp_hold *x = a, *y = b;
    if (x->inv != y->inv)
        return x->inv < y->inv ? -1 : 1;
    return x->started < y->started ? -1 : x->started > y->started;
}

/*
 * One job on the device at a time (docs/runner.md, "Staged processes"):
 * within an invocation, every attempt with a process started after the
 * attempt before it ended.  A staged worker touches the device only after
 * its release, and its release is its started_ns, so this is the record
 * that no other job's device work fell inside a job's timed windows.
 */
static void vp_device_serial(const vb_bundle *b, ev_vreport *r)
{
    size_t n = 0, cap = 0;
    vp_hold *h = NULL;
    for (size_t i = 0; i < b->n_vjobs; i++) {
        const cJSON *a;
        size_t at = 0;
        cJSON_ArrayForEach(a, b->vjobs[i].attempts)
        {
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(a, "process");
            vp_hold x;
            at++;
            if (!cJSON_IsObject(p) || ev_jr_i64(a, "invocation_id", &x.inv) ||
                ev_jr_ns(a, "started_ns", &x.started) || ev_jr_ns(p, "ended_ns", &x.ended))
                continue; /* refused above, or no process: nothing held the device */
            x.key = b->vjobs[i].key;
            x.attempt = at;
            if (n == cap) {
                size_t nc = cap ? 2 * cap : 256;
                vp_hold *g = realloc(h, nc * sizeof *h);
                if (!g) {
                    free(h);
                    r->oom = 1;
                    return;
                }
                h = g;
                cap = nc;
            }
            h[n++] = x;
        }
    }
    if (n)
        qsort(h, n, sizeof *h, vp_cmp_hold);
    for (size_t k = 1; k < n; k++) {
        if (h[k].inv == h[k - 1].inv && h[k].started < h[k - 1].ended) {
            vr_fail(
                r, VR_PLAN, VP,
                "job %s attempt %zu started at %lld ns, before job %s attempt %zu ended at %lld ns: two jobs "
                "held the device at once (the runner releases one job at a time)",
                h[k].key, h[k].attempt, (long long)h[k].started, h[k - 1].key, h[k - 1].attempt,
                (long long)h[k - 1].ended);
            break;
        }
    }
    free(h);
}

/* Every file of every external kernel the protocol declares for the run's
 * backend (its translation unit and the files it includes) is in the
 * bundle (sources/external/<arm>/<file>, ext_kernel.h's
 * ev_ext_member_path): the bundle holds the bytes that ran. */
static void vp_kernel_sources(const vb_bundle *b, ev_vreport *r)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    const char *be = ev_jr_str(run, "backend");
    for (size_t i = 0; b->proto && be && i < b->proto->n_kernels; i++) {
        ev_strs files = EV_STRS_INIT;
        if (ev_ext_closure(&b->proto->kernels[i], 1, be, NULL, &files, NULL)) {
            r->oom = 1;
            return;
        }
        for (size_t j = 0; j < files.n; j++) {
            char member[EV_EXT_MEMBER_MAX + 16];
            snprintf(member, sizeof member, EV_MEMBER_SOURCES "%s", files.v[j]);
            if (!vb_find(b, member))
                vr_fail(
                    r, VR_PLAN, EV_MEMBER_PROTOCOL,
                    "kernel %s: its %s source %s is not in the bundle (%s): the bytes that ran are missing",
                    b->proto->kernels[i].name, be, ev_ext_file(&b->proto->kernels[i], be, j), member);
        }
        ev_strs_free(&files);
    }
}

/* ---- shards (docs/runner.md, "Shards") ---------------------------------- */

/* The shards a bundle lists: count (1 for an unsharded bundle, which has
 * no "shards" member and no invocation naming one) and, per invocation,
 * the shard it ran. */
typedef struct vp_shards {
    int64_t count;
    int64_t *inv; /* (invocation_id, shard index) pairs, sorted by id */
    size_t n_inv;
    int ok; /* the listing is well-formed (else count is 1, and the plan check says so) */
} vp_shards;

/*
 * Reads and checks validation.json's "shards" (count, partition, list)
 * against each invocation's "shard": the same count, an index below it,
 * phase main or rest, each listed shard's invocations exactly those that
 * name it, and every shard of the count holding at least one invocation
 * (a bundle of a subset of the shards FAILs here, and names the jobs it
 * lacks below).  OUT: *sh (inv malloc'd).
 */
static void vp_read_shards(const vb_bundle *b, ev_vreport *r, vp_shards *sh)
{
    const cJSON *top = cJSON_GetObjectItemCaseSensitive(b->validation, "shards");
    const cJSON *invs = cJSON_GetObjectItemCaseSensitive(b->validation, "invocations"), *x;
    size_t n = cJSON_IsArray(invs) ? (size_t)cJSON_GetArraySize(invs) : 0;
    int64_t count = 1;

    memset(sh, 0, sizeof *sh);
    sh->count = 1;
    sh->ok = 1;
    if (top && (ev_jr_i64(top, "count", &count) || count < 1 || count > EV_PLAN_MAX_SHARDS)) {
        vr_fail(r, VR_PLAN, VP, "shards.count is not an integer from 1 to %d", EV_PLAN_MAX_SHARDS);
        sh->ok = 0;
        return;
    }
    if (!(sh->inv = calloc(2 * n + 2, sizeof *sh->inv))) {
        ((ev_vreport *)r)->oom = 1;
        return;
    }
    cJSON_ArrayForEach(x, invs)
    {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(x, "shard");
        int64_t id = 0, idx = 0, cnt = 0;
        const char *ph = ev_jr_str(s, "phase");
        ev_jr_i64(x, "invocation_id", &id);
        if (!s)
            continue;
        if (!top) {
            vr_fail(r, VR_PLAN, VP, "invocation %lld names a shard, but the bundle lists no shards",
                    (long long)id);
            sh->ok = 0;
            continue;
        }
        if (ev_jr_i64(s, "index", &idx) || ev_jr_i64(s, "count", &cnt) || cnt != count || idx < 0 ||
            idx >= cnt || !ph || (!ev_is_phase(ph, EV_PHASE_MAIN) && strcmp(ph, "rest"))) {
            vr_fail(r, VR_PLAN, VP,
                    "invocation %lld: its shard is not {index below %lld, count %lld, phase main or rest}",
                    (long long)id, (long long)count, (long long)count);
            sh->ok = 0;
            continue;
        }
        sh->inv[2 * sh->n_inv] = id;
        sh->inv[2 * sh->n_inv + 1] = idx;
        sh->n_inv++;
    }
    if (!top)
        return;
    sh->count = count;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(top, "list");
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != count) {
        vr_fail(r, VR_PLAN, VP, "shards.list does not list the %lld shards", (long long)count);
        sh->ok = 0;
        return;
    }
    int64_t k = 0;
    cJSON_ArrayForEach(x, list)
    {
        const cJSON *ids = cJSON_GetObjectItemCaseSensitive(x, "invocations"), *id;
        int64_t idx = -1;
        size_t want = 0, have = 0;
        for (size_t i = 0; i < sh->n_inv; i++)
            want += sh->inv[2 * i + 1] == k;
        if (ev_jr_i64(x, "index", &idx) || idx != k || !cJSON_IsArray(ids)) {
            vr_fail(r, VR_PLAN, VP, "shards.list[%lld] is not shard %lld with its invocations", (long long)k,
                    (long long)k);
            sh->ok = 0;
        } else {
            cJSON_ArrayForEach(id, ids)
            {
                int found = 0;
                for (size_t i = 0; i < sh->n_inv && cJSON_IsNumber(id); i++)
                    found |= sh->inv[2 * i] == (int64_t)id->valuedouble && sh->inv[2 * i + 1] == k;
                have += found;
                if (!found) {
                    vr_fail(r, VR_PLAN, VP, "shards.list[%lld] names an invocation that is not shard %lld's",
                            (long long)k, (long long)k);
                    sh->ok = 0;
                }
            }
            if (have != want) {
                vr_fail(r, VR_PLAN, VP, "shards.list[%lld] does not list every invocation of shard %lld",
                        (long long)k, (long long)k);
                sh->ok = 0;
            }
        }
        if (!want)
            vr_fail(
                r, VR_PLAN, VP,
                "shard %lld of %lld has no invocation: the bundle holds a subset of the shards (merge every "
                "shard's store)",
                (long long)k, (long long)count);
        k++;
    }
    qsort(sh->inv, sh->n_inv, 2 * sizeof *sh->inv, vp_cmp_i64);
}

/* " (shard I of N)" for a job's messages in a sharded bundle, "" otherwise. */
static const char *vp_shard_note(const vp_shards *sh, int64_t shard)
{
    static _Thread_local char text[64];
    if (sh->count <= 1)
        return "";
    snprintf(text, sizeof text, " (shard %lld of %lld)", (long long)shard, (long long)sh->count);
    return text;
}

/* A sharded bundle's job: its "shard" is the plan's (ev_plan_shard_of's
 * partition), and every attempt ran in an invocation of that shard. */
static void vp_job_shard(const vp_shards *sh, const vb_vjob *v, const ev_plan_job *p, ev_vreport *r)
{
    const cJSON *a;
    int64_t have = -1;
    size_t at = 0;
    if (sh->count <= 1)
        return;
    if (ev_jr_i64(v->j, "shard", &have) || have != p->shard)
        vr_fail(r, VR_PLAN, VP, "job %s: shard %lld, but the partition puts it in shard %lld", p->job_key,
                (long long)have, (long long)p->shard);
    cJSON_ArrayForEach(a, v->attempts)
    {
        int64_t id = 0;
        at++;
        if (ev_jr_i64(a, "invocation_id", &id))
            continue; /* vp_attempt_invocations says so */
        const int64_t *hit = bsearch(&id, sh->inv, sh->n_inv, 2 * sizeof *sh->inv, vp_cmp_i64);
        if (hit && hit[1] != p->shard)
            vr_fail(r, VR_PLAN, VP, "job %s%s: attempt %zu ran in invocation %lld, which is shard %lld's",
                    p->job_key, vp_shard_note(sh, p->shard), at, (long long)id, (long long)hit[1]);
        else if (!hit)
            vr_fail(r, VR_PLAN, VP, "job %s%s: attempt %zu ran in invocation %lld, which names no shard",
                    p->job_key, vp_shard_note(sh, p->shard), at, (long long)id);
    }
}

/* protocol.json parsed into b->proto, where it and validation.json are
 * there to read.  Returns 1 (check 4 not run, or failed, or out of
 * memory: said in r) when the plan cannot be regenerated, else 0. */
static int vp_protocol(vb_bundle *b, ev_vreport *r)
{
    const vb_member *pm = vb_find(b, EV_MEMBER_PROTOCOL);
    if (!pm || !b->protocol) {
        vr_not_run(r, VR_PLAN, "protocol.json is missing or not strict JSON (checks 2, 3)");
        return 1;
    }
    b->proto = calloc(1, sizeof *b->proto);
    if (!b->proto) {
        r->oom = 1;
        return 1;
    }
    ev_err err = {{0}};
    ev_status rc = ev_protocol_parse((const char *)pm->data, pm->len, b->proto, &err);
    if (rc) {
        free(b->proto);
        b->proto = NULL;
        if (rc == EV_ENOMEM)
            r->oom = 1;
        else
            vr_fail(r, VR_PLAN, EV_MEMBER_PROTOCOL, "refused by the protocol parser: %s", err.msg);
        return 1;
    }
    return 0;
}

/* The run and rescue status validation.json states, against those the
 * outcomes give (ev_plan_run_status); a finished run has no job left
 * missing or interrupted. */
static void vp_run_status(vb_bundle *b, ev_vreport *r, const ev_plan *plan, const ev_outcome *outcomes,
                          const ev_plan_job *rescue, const ev_outcome *rescue_oc, size_t n_rescue)
{
    /* Run and rescue status from the outcomes. */
    const char *st = NULL, *rst = NULL;
    ev_plan_run_status(plan, outcomes, rescue, rescue_oc, n_rescue, &st, &rst);
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    const char *have = ev_jr_str(run, "status");
    const cJSON *hr = cJSON_GetObjectItemCaseSensitive(run, "rescue_status");
    if (!have)
        vr_fail(r, VR_PLAN, VP, "run.status is null: the run did not finish (resume it, then export again)");
    else if (strcmp(have, st))
        vr_fail(r, VR_PLAN, VP, "run.status %s, but the outcomes give %s", have, st);
    /* A finished run ran every missing or interrupted attempt again
     * (store/outcome.h, ev_outcome_final): none is left. */
    for (size_t i = 0; have && i < b->n_vjobs; i++) {
        const vb_vjob *j = &b->vjobs[i];
        if (j->derived_ok && !ev_outcome_final((ev_outcome)j->derived))
            vr_fail(r, VR_PLAN, VP, "job %s: run.status %s is set, but the job %s", j->key, have,
                    cJSON_GetArraySize(j->attempts) ? "ends in an interrupted attempt"
                                                    : "was never attempted");
    }
    if (rst ? !(cJSON_IsString(hr) && !strcmp(hr->valuestring, rst)) : !cJSON_IsNull(hr))
        vr_fail(r, VR_PLAN, VP, "run.rescue_status %s, but the outcomes give %s",
                cJSON_IsString(hr) ? hr->valuestring : "null", rst ? rst : "null");
    vr_note(r, VR_PLAN, VP, "%zu planned jobs and %zu rescue jobs regenerated; run status %s%s%s", plan->n,
            n_rescue, st, rst ? ", " : "", rst ? rst : "");
}

void vc_plan(vb_bundle *b, ev_vreport *r)
{
    ev_err err = {{0}};
    ev_status rc;
    ev_plan plan;
    ev_plan_job *rescue = NULL;
    size_t n_rescue = 0;
    ev_outcome *outcomes = NULL, *rescue_oc = NULL;
    vb_vjob **bykey = NULL;
    unsigned char *matched = NULL;
    vp_shards sh;
    memset(&plan, 0, sizeof plan);
    memset(&sh, 0, sizeof sh);
    vr_use(r, VR_PLAN);

    if (vp_protocol(b, r))
        return;
    if (!b->validation) {
        vr_not_run(r, VR_PLAN, "validation.json is missing or not strict JSON (checks 2, 3)");
        return;
    }
    /* the plan of the schema the run was stored with (plan.h); none named:
     * a bundle of a store before device records */
    int64_t schema = 0;
    if (ev_jr_i64(cJSON_GetObjectItemCaseSensitive(b->validation, "run"), "store_schema", &schema))
        schema = 0;
    b->proto->plan_schema = schema;
    vp_index_jobs(b, r);
    vp_run_and_cases(b, b->proto, r);
    vp_kernel_sources(b, r);
    vp_environments(b, r);
    vp_attempt_invocations(b, r);
    vp_device_serial(b, r);
    vp_read_shards(b, r, &sh);

    if ((rc = ev_plan_build_sharded(b->proto, sh.count, &plan, &err))) {
        if (rc == EV_ENOMEM)
            r->oom = 1;
        else
            vr_fail(r, VR_PLAN, EV_MEMBER_PROTOCOL, "no plan can be built from it: %s", err.msg);
        goto out;
    }
    bykey = malloc((b->n_vjobs ? b->n_vjobs : 1) * sizeof *bykey);
    matched = calloc(b->n_vjobs ? b->n_vjobs : 1, 1);
    outcomes = calloc(plan.n ? plan.n : 1, sizeof *outcomes);
    if (!bykey || !matched || !outcomes) {
        r->oom = 1;
        goto out;
    }
    for (size_t i = 0; i < b->n_vjobs; i++)
        bykey[i] = &b->vjobs[i];
    qsort(bykey, b->n_vjobs, sizeof *bykey, vp_cmp_key);
    for (size_t i = 1; i < b->n_vjobs; i++)
        if (!strcmp(bykey[i]->key, bykey[i - 1]->key))
            vr_fail(r, VR_PLAN, VP, "job %s appears more than once", bykey[i]->key);

    /* Planned main, policy and recheck jobs. */
    for (size_t i = 0; i < plan.n; i++) {
        const ev_plan_job *p = &plan.jobs[i];
        vb_vjob key, *kp = &key;
        key.key = p->job_key;
        vb_vjob **hit = bsearch(&kp, bykey, b->n_vjobs, sizeof *bykey, vp_cmp_key);
        outcomes[i] = EV_OUT_INTERRUPTED;
        if (!hit) {
            vr_fail(r, VR_PLAN, VP, "planned job %s%s is missing (dropped or relabelled)", p->job_key,
                    vp_shard_note(&sh, p->shard));
            continue;
        }
        matched[*hit - b->vjobs] = 1;
        outcomes[i] = (ev_outcome)(*hit)->derived;
        vp_same_job(*hit, p, NULL, r);
        vp_job_shard(&sh, *hit, p, r);
        int64_t rid;
        int rnull = 0;
        if (ev_jr_i64_null((*hit)->j, "retry_of_job_id", &rid, &rnull) || !rnull)
            vr_fail(r, VR_PLAN, VP, "job %s: a planned job, yet retry_of_job_id is not null", p->job_key);
    }

    /* Rescue jobs, regenerated from the derived outcomes. */
    if ((rc = ev_plan_rescue(b->proto, &plan, outcomes, &rescue, &n_rescue, &err))) {
        if (rc == EV_ENOMEM)
            r->oom = 1;
        else
            vr_fail(r, VR_PLAN, EV_MEMBER_PROTOCOL, "no rescue plan: %s", err.msg);
        goto out;
    }
    rescue_oc = calloc(n_rescue ? n_rescue : 1, sizeof *rescue_oc);
    if (!rescue_oc) {
        r->oom = 1;
        goto out;
    }
    for (size_t i = 0; i < n_rescue; i++) {
        const ev_plan_job *p = &rescue[i];
        vb_vjob key, *kp = &key;
        key.key = p->job_key;
        vb_vjob **hit = bsearch(&kp, bykey, b->n_vjobs, sizeof *bykey, vp_cmp_key);
        rescue_oc[i] = EV_OUT_INTERRUPTED;
        if (!hit) {
            vr_fail(r, VR_PLAN, VP,
                    "rescue job %s%s is missing: %s failed retryably and must be retried once", p->job_key,
                    vp_shard_note(&sh, p->shard), plan.jobs[p->retry_of].job_key);
            continue;
        }
        matched[*hit - b->vjobs] = 1;
        rescue_oc[i] = (ev_outcome)(*hit)->derived;
        vp_same_job(*hit, p, plan.jobs[p->retry_of].job_key, r);
        vp_job_shard(&sh, *hit, p, r);
        /* retry_of_job_id names the original's job id. */
        vb_vjob okey, *okp = &okey;
        okey.key = plan.jobs[p->retry_of].job_key;
        vb_vjob **orig = bsearch(&okp, bykey, b->n_vjobs, sizeof *bykey, vp_cmp_key);
        int64_t rid;
        int rnull = 0;
        if (orig &&
            (ev_jr_i64_null((*hit)->j, "retry_of_job_id", &rid, &rnull) || rnull || rid != (*orig)->job_id))
            vr_fail(r, VR_PLAN, VP, "job %s: retry_of_job_id does not name %s (job %lld)", p->job_key,
                    okey.key, (long long)(*orig)->job_id);
    }
    for (size_t i = 0; i < b->n_vjobs; i++)
        if (!matched[i])
            vr_fail(r, VR_PLAN, VP,
                    "job %s (job_id %lld) is not in the plan regenerated from protocol.json (added)",
                    b->vjobs[i].key, (long long)b->vjobs[i].job_id);

    vp_run_status(b, r, &plan, outcomes, rescue, rescue_oc, n_rescue);
    if (sh.count > 1)
        vr_note(r, VR_PLAN, VP,
                "%lld shards, partitioned by case (ev_plan_shard_of), each with its invocations",
                (long long)sh.count);
out:
    free(sh.inv);
    ev_plan_free(&plan);
    free(rescue);
    free(rescue_oc);
    free(outcomes);
    free(bykey);
    free(matched);
}
