/*
 * verify_attest.c: check 9, "attest", and the verification summary.
 *
 * With --key KEY.pub the verifier reads the DSSE envelope (--attestation,
 * default <bundle>.intoto.json), refusing it by its size before reading
 * (EV_DSSE_MAX_BYTES), checks its payloadType, its one signature over the
 * PAE bytes with the key, and that the in-toto Statement's subjects are
 * exactly the bundle's raw members and records (evidence/raw_subjects.h,
 * the rule `evident sign` used), each with the member's SHA-256.  Every
 * problem is a failure of "attest"; a key or an envelope that cannot be
 * read at all is exit 2, not a FAIL.
 *
 * ev_vreport_vsa writes a SLSA VSA of the report's verdict.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "evidence/raw_subjects.h"
#include "json.h"
#include "sign/attest.h"
#include "sign/dsse.h"
#include "sign/key.h"
#include "verify_int.h"

/* ev_attest_check's callback: records one failure under "attest". */
static void va_fail(void *ctx, const char *subject, const char *reason)
{
    vr_fail(ctx, VR_ATTEST, subject, "%s", reason);
}

/* Reads the envelope at path into *out when it is a regular file of at
 * most EV_DSSE_MAX_BYTES; a larger one is recorded as a failure (*too_big
 * = 1) without reading it.  EV_EIO (err says why) when it cannot be
 * opened or read. */
static ev_status va_read_envelope(const char *path, ev_buf *out, int *too_big, ev_vreport *r, ev_err *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ev_err_set(err, EV_EIO,
                          "--attestation '%s': %s (sign the bundle with 'evident sign', or name the "
                          "envelope with --attestation)",
                          path, strerror(errno));
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    close(fd);
    if (!ok)
        return ev_err_set(err, EV_EIO, "--attestation '%s' is not a regular file", path);
    if ((uint64_t)st.st_size > EV_DSSE_MAX_BYTES) {
        vr_fail(r, VR_ATTEST, path, "the envelope is %lld bytes, more than the %u-byte cap: refused unread",
                (long long)st.st_size, EV_DSSE_MAX_BYTES);
        *too_big = 1;
        return EV_OK;
    }
    ev_status rc = ev_read_file_max(path, EV_DSSE_MAX_BYTES, out, err);
    if (rc == EV_ERANGE) { /* it grew while we looked */
        vr_fail(r, VR_ATTEST, path, "the envelope is more than the %u-byte cap: refused", EV_DSSE_MAX_BYTES);
        *too_big = 1;
        return EV_OK;
    }
    return rc ? (rc == EV_ENOMEM ? rc : EV_EIO) : EV_OK;
}

ev_status vc_attest(vb_bundle *b, const ev_verify_opts *o, ev_vreport *r, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_key *k = NULL;
    ev_buf path = EV_BUF_INIT, text = EV_BUF_INIT;
    ev_dsse d = {0};
    ev_subjects subj = {0};
    ev_member_sha *ms = NULL;
    ev_err why = {{0}};
    int too_big = 0;

    vr_use(r, VR_ATTEST);
    if ((rc = ev_key_load(o->key, 0, &k, err))) {
        if (rc != EV_ENOMEM)
            rc = EV_EIO; /* a key file that is no key: a usage error, exit 2 */
        goto out;
    }
    if ((rc = o->attestation ? ev_buf_puts(&path, o->attestation)
                             : ev_buf_printf(&path, "%s.intoto.json", r->path)))
        goto out;
    if ((rc = va_read_envelope(path.data, &text, &too_big, r, err)) || too_big)
        goto out;
    free(r->attestation_path);
    r->attestation_path = strdup(path.data);
    if (!r->attestation_path ||
        (rc = ev_sha256_hex(text.data ? text.data : "", text.len, r->attestation_sha))) {
        rc = EV_ENOMEM;
        goto out;
    }
    if ((rc = ev_dsse_parse(text.data ? text.data : "", text.len, &d, &why))) {
        if (rc == EV_ENOMEM)
            goto out;
        vr_fail(r, VR_ATTEST, path.data, "%s", why.msg);
        rc = EV_OK;
        goto out;
    }
    if (strcmp(d.payload_type, EV_DSSE_INTOTO)) {
        vr_fail(r, VR_ATTEST, path.data, "payloadType is '%.80s', not %s: not an in-toto statement",
                d.payload_type, EV_DSSE_INTOTO);
        goto out;
    }
    if ((rc = ev_dsse_verify(&d, k, &why))) {
        if (rc != EV_EVERIFY)
            goto out;
        vr_fail(r, VR_ATTEST, path.data, "%s: wrong key, or the payload or signature changed after signing",
                why.msg);
        rc = EV_OK;
        goto out;
    }
    ms = calloc(b->n ? b->n : 1, sizeof *ms);
    if (!ms) {
        rc = EV_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < b->n; i++) {
        ms[i].name = b->m[i].name;
        ms[i].sha256_hex = b->m[i].sha_hex;
    }
    int rule = ev_attest_rule(d.payload.data ? d.payload.data : "", d.payload.len);
    if (rule < 0) {
        vr_fail(r, VR_ATTEST, path.data,
                "the statement names a subject rule this verifier does not know (not %s): a newer evident "
                "signed it; verify with that one",
                EV_SUBJECT_RULE_2);
        goto out;
    }
    if ((rc = ev_raw_subjects(ms, b->n, b->validation, rule, &subj, &why))) {
        if (rc == EV_ENOMEM)
            goto out;
        vr_fail(r, VR_ATTEST, EV_MEMBER_VALIDATION,
                "%s (check 3 says why): its raw records cannot be matched", why.msg);
        rc = EV_OK;
        goto out;
    }
    if (ev_attest_check(d.payload.data ? d.payload.data : "", d.payload.len, &subj, va_fail, r) == 0) {
        r->signed_ok = 1;
        vr_note(r, VR_ATTEST, path.data, "signed by key %s; %zu raw subjects equal the bundle's",
                ev_key_id(k), subj.n);
        if (rule == 1)
            vr_note(r, VR_ATTEST, path.data,
                    "signed under subject rule 1 (a statement naming no subject_rule): its subjects are the "
                    "raw members and the environment and process records, so each attempt's warm-up, "
                    "calibrations, flush, binding, graph nodes, validations, sample checks, cold timings and "
                    "device record are NOT covered by this signature and could change without breaking it; "
                    "'evident sign' on the measuring host signs them all (rule %s)",
                    EV_SUBJECT_RULE_2);
    }
out:
    if (rc == EV_ENOMEM)
        ev_err_set(err, rc, "out of memory checking the attestation");
    ev_key_free(k);
    ev_buf_free(&path);
    ev_buf_free(&text);
    ev_dsse_clear(&d);
    ev_subjects_free(&subj);
    free(ms);
    return rc;
}

/* Returns the word ev_vreport_json uses for verdict v. */
static const char *va_verdict(ev_verdict v)
{
    return v == EV_VERDICT_PASS      ? "pass"
           : v == EV_VERDICT_FAIL    ? "fail"
           : v == EV_VERDICT_NOT_RUN ? "not-run"
                                     : "not-requested";
}

ev_status ev_vreport_vsa(const ev_vreport *r, const char *path, const char *out, const char *key_path,
                         ev_err *err)
{
    ev_status rc = EV_OK;
    ev_key *k = NULL;
    ev_buf stmt = EV_BUF_INIT, text = EV_BUF_INIT, uri = EV_BUF_INIT;
    cJSON *env = NULL;
    uint8_t sha[EV_SHA256_LEN];
    char hex[EV_SHA256_HEX_LEN + 1];
    ev_vsa_check checks[VR_NCHECKS];
    ev_vsa_in in = {0};

    if (key_path && (rc = ev_key_load(key_path, 1, &k, err)))
        goto out;
    if ((rc = ev_sha256_file(path, sha, err)))
        goto out;
    ev_hex_encode(sha, EV_SHA256_LEN, hex);
    const char *base = strrchr(path, '/');
    if ((rc = ev_buf_printf(&uri, "file:%s", base ? base + 1 : path)))
        goto out;
    for (int c = 0; c < VR_NCHECKS; c++) {
        if (!r->checks[c].used)
            continue;
        checks[in.n_checks].name = vr_name(c);
        checks[in.n_checks].verdict = va_verdict(r->checks[c].verdict);
        in.n_checks++;
    }
    in.verifier_version = EV_VERSION;
    in.time_verified_s = (int64_t)time(NULL);
    in.resource_uri = uri.data;
    in.bundle_sha256 = hex;
    in.root_sha256 = r->have_root ? r->root_hex : NULL;
    in.attestation_uri = r->attestation_path;
    in.attestation_sha256 = r->attestation_sha;
    in.checks = checks;
    in.passed = ev_vreport_passed(r);
    in.signature_checked = r->signed_ok;
    if ((rc = ev_attest_vsa(&in, &stmt)))
        goto out;
    if (k) {
        if ((rc = ev_dsse_sign(k, EV_DSSE_INTOTO, stmt.data, stmt.len, &env, err)) ||
            (rc = ev_json_print(env, 1, &text)))
            goto out;
    } else if ((rc = ev_buf_append(&text, stmt.data, stmt.len)) || (rc = ev_buf_puts(&text, "\n"))) {
        goto out;
    }
    rc = ev_write_file(out, text.data, text.len, err);
out:
    if (rc == EV_ENOMEM)
        ev_err_set(err, rc, "out of memory writing the verification summary");
    else if (rc == EV_EFORMAT || rc == EV_ECRYPTO) {
        ev_err_prefix(err, "--vsa-key");
        rc = EV_EIO;
    }
    cJSON_Delete(env);
    ev_key_free(k);
    ev_buf_free(&stmt);
    ev_buf_free(&text);
    ev_buf_free(&uri);
    return rc;
}
