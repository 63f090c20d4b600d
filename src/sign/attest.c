/*
 * attest.c: the run's in-toto Statement with its SLSA provenance
 * predicate, the Statement's check against a bundle, the Sigstore bundle
 * wrapper and the VSA (attest.h).
 */
#include "sign/attest.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "sign/dsse.h"
#include "zipread.h"
#include "member.h"

ev_status ev_attest_rfc3339(int64_t t_ns, char buf[40])
{
    int64_t s = t_ns / 1000000000, ns = t_ns % 1000000000;
    if (ns < 0) {
        ns += 1000000000;
        s--;
    }
    time_t tt = (time_t)s;
    struct tm tm;
    if (!gmtime_r(&tt, &tm))
        return EV_ERANGE;
    char day[24];
    if (!strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm))
        return EV_ERANGE;
    int w = snprintf(buf, 40, "%s.%09" PRId64 "Z", day, ns);
    return w > 0 && w < 40 ? EV_OK : EV_ERANGE;
}

/* Parses member name of m[0..n) as strict JSON.  OUT: *out.  EV_EFORMAT
 * (err names it) when missing or malformed; EV_ENOMEM. */
static ev_status parse_member(const ev_member *m, size_t n, const char *name, cJSON **out, ev_err *err)
{
    const ev_member *x = ev_member_find(m, n, name);
    if (!x)
        return ev_err_set(err, EV_EFORMAT, "the bundle has no %s: not a delivery.zip", name);
    ev_status rc = ev_member_json(name, x->data, x->len, 0, NULL, out, err);
    if (rc && rc != EV_ENOMEM) {
        ev_err_prefix(err, "%s", name);
        rc = EV_EFORMAT;
    }
    return rc;
}

/* Adds key = the RFC 3339 text of the decimal-ns string field src_key of
 * src, when that is a string of digits; nothing otherwise.  EV_ENOMEM. */
static ev_status add_time(cJSON *dst, const char *key, const cJSON *src, const char *src_key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, src_key);
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return EV_OK;
    char *end = NULL;
    long long t = strtoll(v->valuestring, &end, 10);
    char buf[40];
    if (*end || ev_attest_rfc3339((int64_t)t, buf))
        return EV_OK;
    return ev_json_add_str(dst, key, buf);
}

/* Returns a copy of src's string field key, or of fallback. */
static const char *str_or(const cJSON *src, const char *key, const char *fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, key);
    return cJSON_IsString(v) ? v->valuestring : fallback;
}

/* Builds the SLSA provenance v1 predicate from the parsed members.
 * OUT: *out.  EV_ENOMEM. */
static ev_status provenance_predicate(const cJSON *protocol, const cJSON *prov, const cJSON *val,
                                      const char *proto_sha, cJSON **out)
{
    ev_status rc = EV_ENOMEM;
    cJSON *p = cJSON_CreateObject(), *proto = cJSON_Duplicate(protocol, 1);
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(val, "run");
    const cJSON *invs = cJSON_GetObjectItemCaseSensitive(val, "invocations");
    if (!p || !proto || ev_json_canon_numbers(proto))
        goto out;
    cJSON *bd = cJSON_AddObjectToObject(p, "buildDefinition");
    if (!bd || ev_json_add_str(bd, "buildType", EV_BUILD_TYPE))
        goto out;
    cJSON *ext = cJSON_AddObjectToObject(bd, "externalParameters");
    if (!ext || !cJSON_AddItemToObject(ext, "protocol", proto))
        goto out;
    proto = NULL;
    if (ev_json_add_str(ext, "protocol_id", proto_sha))
        goto out;
    cJSON *in = cJSON_AddObjectToObject(bd, "internalParameters");
    if (!in || ev_json_add_str(in, "backend", str_or(prov, "backend", "unknown")) ||
        ev_json_add_str(in, "subject_rule", EV_SUBJECT_RULE_2))
        goto out;
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(prov, "seed");
    if (cJSON_IsNumber(seed) && ev_json_add_i64(in, "seed", (int64_t)seed->valuedouble))
        goto out;
    cJSON *deps = cJSON_AddArrayToObject(bd, "resolvedDependencies");
    cJSON *src = cJSON_CreateObject();
    if (!deps || !src || !cJSON_AddItemToArray(deps, src)) {
        cJSON_Delete(src);
        goto out;
    }
    cJSON *dg = NULL;
    if (ev_json_add_str(src, "name", "measurement closure (sources/)") ||
        ev_json_add_str(src, "uri", "evident-source-tree:sources/") ||
        !(dg = cJSON_AddObjectToObject(src, "digest")))
        goto out;
    const char *commit = str_or(prov, "git_commit", "unknown");
    if (ev_json_add_str(dg, "sha256", str_or(prov, "source_tree_hash", "unknown")) ||
        (strcmp(commit, "unknown") && ev_json_add_str(dg, "gitCommit", commit)))
        goto out;
    cJSON *ann = cJSON_AddObjectToObject(src, "annotations");
    const cJSON *dirty = cJSON_GetObjectItemCaseSensitive(prov, "git_dirty");
    if (!ann ||
        ev_json_add_str(ann, "digest_sha256", "ev_tree_hash: docs/bundle-format.md, Source-tree hash") ||
        ev_json_add_bool(ann, "git_dirty", cJSON_IsTrue(dirty)))
        goto out;
    cJSON *rd = cJSON_AddObjectToObject(p, "runDetails");
    cJSON *b = rd ? cJSON_AddObjectToObject(rd, "builder") : NULL;
    cJSON *ver = b ? cJSON_CreateObject() : NULL;
    if (!b || !ver || ev_json_add_str(b, "id", EV_BUILDER_ID) || !cJSON_AddItemToObject(b, "version", ver))
        goto out;
    if (ev_json_add_str(ver, "evident", EV_VERSION) ||
        ev_json_add_str(ver, "exporter", str_or(prov, "exporter", "unknown")))
        goto out;
    cJSON *md = cJSON_AddObjectToObject(rd, "metadata");
    if (!md)
        goto out;
    /* invocationId: the run and its invocations, e.g. "run-1/invocations-1,2" */
    ev_buf id = EV_BUF_INIT;
    const cJSON *rid = cJSON_GetObjectItemCaseSensitive(run, "run_id");
    int bad =
        ev_buf_printf(&id, "run-%.0f/invocations-", cJSON_IsNumber(rid) ? rid->valuedouble : 0.0) != EV_OK;
    int first = 1;
    for (const cJSON *i = cJSON_IsArray(invs) ? invs->child : NULL; i && !bad; i = i->next) {
        const cJSON *iid = cJSON_GetObjectItemCaseSensitive(i, "invocation_id");
        bad = ev_buf_printf(&id, "%s%.0f", first ? "" : ",", cJSON_IsNumber(iid) ? iid->valuedouble : 0.0) !=
              EV_OK;
        first = 0;
    }
    bad = bad || ev_json_add_str(md, "invocationId", id.data);
    ev_buf_free(&id);
    if (bad || add_time(md, "startedOn", run, "created_ns") || add_time(md, "finishedOn", run, "finished_ns"))
        goto out;
    *out = p;
    p = NULL;
    rc = EV_OK;
out:
    cJSON_Delete(proto);
    cJSON_Delete(p);
    return rc;
}

/* Adds the subject array of s to st.  EV_ENOMEM. */
static ev_status add_subjects(cJSON *st, const ev_subjects *s)
{
    cJSON *arr = cJSON_AddArrayToObject(st, "subject");
    if (!arr)
        return EV_ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            return EV_ENOMEM;
        }
        cJSON *d = NULL;
        if (ev_json_add_str(o, "name", s->s[i].name) || !(d = cJSON_AddObjectToObject(o, "digest")) ||
            ev_json_add_str(d, "sha256", s->s[i].sha256_hex))
            return EV_ENOMEM;
    }
    return EV_OK;
}

ev_status ev_attest_statement(const ev_member *m, size_t n, ev_buf *out, ev_err *err)
{
    ev_status rc = EV_OK;
    cJSON *protocol = NULL, *prov = NULL, *val = NULL, *st = NULL, *pred = NULL;
    ev_member_sha *ms = NULL;
    char(*hex)[EV_SHA256_HEX_LEN + 1] = NULL;
    ev_subjects subj = {0};

    if ((rc = parse_member(m, n, EV_MEMBER_PROTOCOL, &protocol, err)) ||
        (rc = parse_member(m, n, EV_MEMBER_PROVENANCE, &prov, err)) ||
        (rc = parse_member(m, n, EV_MEMBER_VALIDATION, &val, err)))
        goto out;
    ms = calloc(n ? n : 1, sizeof *ms);
    hex = calloc(n ? n : 1, sizeof *hex);
    if (!ms || !hex) {
        rc = ev_err_set(err, EV_ENOMEM, "out of memory");
        goto out;
    }
    const char *proto_sha = NULL;
    for (size_t i = 0; i < n; i++) {
        if ((rc = ev_sha256_hex(m[i].data, m[i].len, hex[i]))) {
            ev_err_set(err, rc, "out of memory");
            goto out;
        }
        ms[i].name = m[i].name;
        ms[i].sha256_hex = hex[i];
        if (!strcmp(m[i].name, EV_MEMBER_PROTOCOL))
            proto_sha = hex[i];
    }
    if ((rc = ev_raw_subjects(ms, n, val, 2, &subj, err)))
        goto out;
    rc = EV_ENOMEM;
    st = cJSON_CreateObject();
    if (!st || ev_json_add_str(st, "_type", EV_INTOTO_STATEMENT) || add_subjects(st, &subj) ||
        ev_json_add_str(st, "predicateType", EV_SLSA_PROVENANCE) ||
        provenance_predicate(protocol, prov, val, proto_sha, &pred) ||
        !cJSON_AddItemToObject(st, "predicate", pred)) {
        cJSON_Delete(pred);
        ev_err_set(err, rc, "out of memory building the statement");
        goto out;
    }
    if ((rc = ev_json_print(st, 0, out)))
        ev_err_set(err, rc, "out of memory printing the statement");
out:
    cJSON_Delete(protocol);
    cJSON_Delete(prov);
    cJSON_Delete(val);
    cJSON_Delete(st);
    ev_subjects_free(&subj);
    free(ms);
    free(hex);
    return rc;
}

/* See attest.h. */
int ev_attest_rule(const char *payload, size_t n)
{
    cJSON *st = NULL;
    int rule = 1;
    if (ev_json_parse(payload, n, 0, &st, NULL))
        return 1; /* ev_attest_check says why */
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "predicate"),
                                         "buildDefinition"),
        "internalParameters");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(in, "subject_rule");
    if (r)
        rule = cJSON_IsString(r) && !strcmp(r->valuestring, EV_SUBJECT_RULE_2) ? 2 : -1;
    cJSON_Delete(st);
    return rule;
}

/* Calls fail with a formatted reason and counts it in *n. */
static void failf(ev_attest_fail_fn fail, void *ctx, size_t *n, const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void failf(ev_attest_fail_fn fail, void *ctx, size_t *n, const char *subject, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fail(ctx, subject, why);
    (*n)++;
}

/* Returns the index of name in the sorted e, or -1. */
static long find_subject(const ev_subjects *e, const char *name)
{
    size_t lo = 0, hi = e->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(e->s[mid].name, name);
        if (!c)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Returns 1 when s is 64 lowercase hex digits. */
static int is_hex64_lower(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return i == EV_SHA256_HEX_LEN;
}

size_t ev_attest_check(const char *payload, size_t n, const ev_subjects *expected, ev_attest_fail_fn fail,
                       void *ctx)
{
    size_t bad = 0;
    cJSON *st = NULL;
    ev_err err = {{0}};
    unsigned char *seen = NULL;
    if (ev_json_parse(payload, n, 0, &st, &err)) {
        failf(fail, ctx, &bad, "-", "the payload is not strict JSON: %s", err.msg);
        goto out;
    }
    const char *type = str_or(st, "_type", NULL), *ptype = str_or(st, "predicateType", NULL);
    if (!type || strcmp(type, EV_INTOTO_STATEMENT))
        failf(fail, ctx, &bad, "-", "the payload's _type is %s%s%s, not %s", type ? "'" : "",
              type ? type : "missing", type ? "'" : "", EV_INTOTO_STATEMENT);
    if (!ptype || strcmp(ptype, EV_SLSA_PROVENANCE))
        failf(fail, ctx, &bad, "-", "the payload's predicateType is %s%s%s, not %s", ptype ? "'" : "",
              ptype ? ptype : "missing", ptype ? "'" : "", EV_SLSA_PROVENANCE);
    const cJSON *subj = cJSON_GetObjectItemCaseSensitive(st, "subject");
    if (!cJSON_IsArray(subj)) {
        failf(fail, ctx, &bad, "-", "the payload has no subject array");
        goto out;
    }
    seen = calloc(expected->n ? expected->n : 1, 1);
    if (!seen) {
        failf(fail, ctx, &bad, "-", "out of memory checking the subjects");
        goto out;
    }
    for (const cJSON *s = subj->child; s; s = s->next) {
        const char *name = str_or(s, "name", NULL);
        const cJSON *dg = cJSON_GetObjectItemCaseSensitive(s, "digest");
        const char *sha = str_or(dg, "sha256", NULL);
        if (!name || !sha || !is_hex64_lower(sha)) {
            failf(fail, ctx, &bad, name ? name : "-",
                  "a subject needs a string name and digest.sha256 of 64 lowercase hex digits");
            continue;
        }
        long i = find_subject(expected, name);
        if (i < 0) {
            failf(fail, ctx, &bad, name, "extra subject: not a raw member or record of this bundle");
            continue;
        }
        if (seen[i]++) {
            failf(fail, ctx, &bad, name, "subject named twice");
            continue;
        }
        if (strcmp(sha, expected->s[i].sha256_hex))
            failf(fail, ctx, &bad, name,
                  "signed digest %.16s... differs from the bundle's %.16s...: the raw record "
                  "changed after signing",
                  sha, expected->s[i].sha256_hex);
    }
    for (size_t i = 0; i < expected->n; i++)
        if (!seen[i])
            failf(fail, ctx, &bad, expected->s[i].name,
                  "raw member or record missing from the signed subjects");
out:
    free(seen);
    cJSON_Delete(st);
    return bad;
}

ev_status ev_attest_sigstore_bundle(const cJSON *env, const ev_key *k, ev_buf *out)
{
    ev_status rc = EV_ENOMEM;
    ev_buf hint = EV_BUF_INIT;
    cJSON *b = cJSON_CreateObject(), *e = cJSON_Duplicate(env, 1);
    cJSON *vm = NULL, *pk = NULL;
    if (!b || !e || ev_base64_encode(ev_key_id_raw(k), EV_SHA256_LEN, &hint))
        goto out;
    if (ev_json_add_str(b, "mediaType", EV_SIGSTORE_BUNDLE_V3) ||
        !(vm = cJSON_AddObjectToObject(b, "verificationMaterial")) ||
        !(pk = cJSON_AddObjectToObject(vm, "publicKey")) || ev_json_add_str(pk, "hint", hint.data) ||
        !cJSON_AddArrayToObject(vm, "tlogEntries") || !cJSON_AddItemToObject(b, "dsseEnvelope", e))
        goto out;
    e = NULL;
    rc = ev_json_print(b, 1, out);
out:
    cJSON_Delete(e);
    cJSON_Delete(b);
    ev_buf_free(&hint);
    return rc;
}

ev_status ev_attest_vsa(const ev_vsa_in *in, ev_buf *out)
{
    ev_status rc = EV_ENOMEM;
    cJSON *st = cJSON_CreateObject();
    cJSON *subj = NULL, *s0 = NULL, *d = NULL, *p = NULL, *v = NULL, *ver = NULL, *pol = NULL, *ann = NULL;
    cJSON *checks = NULL, *inputs = NULL, *lv = NULL;
    char when[40];
    if (!st || ev_attest_rfc3339(in->time_verified_s * 1000000000, when))
        goto out;
    when[19] = 'Z'; /* whole seconds: "2026-01-02T03:04:05Z" */
    when[20] = '\0';
    if (ev_json_add_str(st, "_type", EV_INTOTO_STATEMENT) ||
        !(subj = cJSON_AddArrayToObject(st, "subject")) || !(s0 = cJSON_CreateObject()) ||
        !cJSON_AddItemToArray(subj, s0) || ev_json_add_str(s0, "name", in->resource_uri) ||
        !(d = cJSON_AddObjectToObject(s0, "digest")) || ev_json_add_str(d, "sha256", in->bundle_sha256))
        goto out;
    cJSON *sa = NULL;
    if (in->root_sha256 && (!(sa = cJSON_AddObjectToObject(s0, "annotations")) ||
                            ev_json_add_str(sa, "evident_root", in->root_sha256)))
        goto out;
    if (ev_json_add_str(st, "predicateType", EV_SLSA_VSA) ||
        !(p = cJSON_AddObjectToObject(st, "predicate")) || !(v = cJSON_AddObjectToObject(p, "verifier")) ||
        ev_json_add_str(v, "id", EV_VERIFIER_ID) || !(ver = cJSON_AddObjectToObject(v, "version")) ||
        ev_json_add_str(ver, "verify-bundle", in->verifier_version) ||
        ev_json_add_str(p, "timeVerified", when) || ev_json_add_str(p, "resourceUri", in->resource_uri) ||
        !(pol = cJSON_AddObjectToObject(p, "policy")) || ev_json_add_str(pol, "uri", EV_VERIFY_POLICY) ||
        !(ann = cJSON_AddObjectToObject(pol, "annotations")) ||
        !(checks = cJSON_AddArrayToObject(ann, "checks")))
        goto out;
    for (size_t i = 0; i < in->n_checks; i++) {
        cJSON *c = cJSON_CreateObject();
        if (!c || !cJSON_AddItemToArray(checks, c) || ev_json_add_str(c, "check", in->checks[i].name) ||
            ev_json_add_str(c, "verdict", in->checks[i].verdict))
            goto out;
    }
    if (!(inputs = cJSON_AddArrayToObject(p, "inputAttestations")))
        goto out;
    if (in->attestation_uri) {
        cJSON *a = cJSON_CreateObject(), *ad = NULL;
        if (!a || !cJSON_AddItemToArray(inputs, a) || ev_json_add_str(a, "uri", in->attestation_uri) ||
            !(ad = cJSON_AddObjectToObject(a, "digest")) ||
            ev_json_add_str(ad, "sha256", in->attestation_sha256))
            goto out;
    }
    if (ev_json_add_str(p, "verificationResult", in->passed ? "PASSED" : "FAILED") ||
        !(lv = cJSON_AddArrayToObject(p, "verifiedLevels")))
        goto out;
    if (in->passed && in->signature_checked) {
        cJSON *l = cJSON_CreateString("SLSA_BUILD_LEVEL_1");
        if (!l || !cJSON_AddItemToArray(lv, l))
            goto out;
    }
    if (ev_json_add_str(p, "slsaVersion", "1.0"))
        goto out;
    rc = ev_json_print(st, 0, out);
out:
    cJSON_Delete(st);
    return rc;
}

ev_status ev_attest_bundle_read(const char *path, ev_attest_bundle *b, ev_err *err)
{
    ev_attest_bundle x = {0};
    ev_status rc = ev_read_file(path, &x.raw, err);
    if (rc) {
        rc = rc == EV_ENOMEM ? rc : EV_EIO;
        goto out;
    }
    if ((rc = ev_sha256_hex(x.raw.data ? x.raw.data : "", x.raw.len, x.sha256_hex))) {
        ev_err_set(err, rc, "out of memory");
        goto out;
    }
    if ((rc = ev_members_read_zip(x.raw.data ? x.raw.data : "", x.raw.len, &x.z, &x.m, &x.n, err))) {
        if (rc == EV_EFORMAT) { /* name the file */
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            ev_err_set(err, rc, "%s: %s", path, why);
        }
        goto out;
    }
    *b = x;
    memset(&x, 0, sizeof x);
out:
    ev_attest_bundle_free(&x);
    return rc;
}

void ev_attest_bundle_free(ev_attest_bundle *b)
{
    if (!b)
        return;
    free(b->m);
    ev_zip_free(b->z);
    ev_buf_free(&b->raw);
    memset(b, 0, sizeof *b);
}
