/*
 * check_sign.c: signed receipts (src/sign/, verify-bundle's check 9) through
 * the real binaries: keygen, sign, verify --key, --vsa, the Sigstore bundle,
 * interoperability with implementations written elsewhere (the openssl
 * command line and Debian's python3-cryptography, each verifying over the
 * PAE bytes the test computes from the envelope), and the bad inputs a
 * signer or a verifier of signatures meets, each with its exit code and
 * reason (docs/threat-model.md).
 *
 * A good bundle is built once: a synthetic store through the store API
 * (src/verify/fixture/vfixture.h) exported by the real exporter.  Tampered
 * envelopes are written by the tests: re-signed with the right key when
 * the point is what the statement says, not the signature.
 */
#include <check.h>

#include "progress.h"
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "bundle/export.h"
#include "bundle/zipwrite.h"
#include "evidence/raw_subjects.h"
#include "evidence/receipts.h"
#include "json.h"
#include "runner/record.h"
#include "sha256.h"
#include "sign/attest.h"
#include "sign/dsse.h"
#include "sign/key.h"
#include "verify/fixture/vfixture.h"
#include "zipread.h"

static char g_dir[256];   /* mkdtemp directory of this run */
static char g_good[300];  /* the good bundle, signed: g_good.intoto.json */
static char g_key[300];   /* its private key; g_key.pub the public one */
static char g_env[320];   /* the good envelope */
static char g_last[2048]; /* the last stderr line of the last sh() */

static const char src_kernel[] = "/* reduce kernels */\nint ev_k;\n";
static const char src_default[] = "/* the default entry */\n";
static const char src_runner[] = "/* runner */\nint ev_r;\n";
static const char src_schema[] = "-- schema\n";
static const ev_vfix_source g_sources[] = {
    {"db/schema.sql", src_schema, sizeof src_schema - 1},
    {"kernels/reduce.c", src_kernel, sizeof src_kernel - 1},
    {"kernels/reduce_default.cuh", src_default, sizeof src_default - 1},
    {"src/runner/worker.c", src_runner, sizeof src_runner - 1},
};

/* Runs the shell command made from fmt (stdout to g_dir/out.txt, stderr to
 * g_dir/err.txt, whose last line goes to g_last).  Returns the exit code. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[4096], body[3800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && (%s) >out.txt 2>err.txt", g_dir, body);
    int st = system(cmd);
    ev_buf e = EV_BUF_INIT;
    char path[320];
    snprintf(path, sizeof path, "%s/err.txt", g_dir);
    g_last[0] = '\0';
    if (!ev_read_file(path, &e, NULL) && e.len) {
        while (e.len && e.data[e.len - 1] == '\n')
            e.data[--e.len] = '\0';
        const char *nl = strrchr(e.data, '\n');
        snprintf(g_last, sizeof g_last, "%s", nl ? nl + 1 : e.data);
    }
    ev_buf_free(&e);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Returns 1 when the last sh()'s stdout holds text. */
static int out_has(const char *text)
{
    ev_buf o = EV_BUF_INIT;
    char path[320];
    snprintf(path, sizeof path, "%s/out.txt", g_dir);
    int has = !ev_read_file(path, &o, NULL) && o.data && strstr(o.data, text);
    ev_buf_free(&o);
    return has;
}

/* The build directory's binaries (EV_BUILD, default build), absolute. */
static const char *bin(const char *name)
{
    static char buf[4][600];
    static int k;
    char cwd[400];
    const char *b = getenv("EV_BUILD");
    if (!getcwd(cwd, sizeof cwd))
        abort();
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s/%s", cwd, b && b[0] ? b : "build", name);
    return buf[k];
}

/* Builds the good bundle, a key and its envelope, once. */
static void build_fixtures(void)
{
    ev_err err = {{0}};
    char db[300], root[65];
    snprintf(g_dir, sizeof g_dir, "%s/check_sign.XXXXXX", ev_test_tmp());
    if (!mkdtemp(g_dir))
        abort();
    ev_vfix_opts o = {6, 7, 2, 0, g_sources, sizeof g_sources / sizeof g_sources[0], 0, 0};
    snprintf(db, sizeof db, "%s/good.db", g_dir);
    snprintf(g_good, sizeof g_good, "%s/good.zip", g_dir);
    if (ev_vfix_build(db, &o, &err) || ev_export_file(db, 0, g_good, root, &err)) {
        fprintf(stderr, "fixture: %s\n", err.msg);
        abort();
    }
    snprintf(g_key, sizeof g_key, "%s/k", g_dir);
    snprintf(g_env, sizeof g_env, "%s.intoto.json", g_good);
    if (sh("'%s' keygen --out k && '%s' sign good.zip --key k --sigstore-bundle good.sigstore.json",
           bin("evident"), bin("evident"))) {
        fprintf(stderr, "fixture: keygen/sign: %s\n", g_last);
        abort();
    }
}

/* Verifies good.zip with the public key and the envelope at env (relative
 * to g_dir); returns the exit code (g_last: the last stderr line). */
static int verify_env(const char *env)
{
    return sh("'%s' good.zip --key k.pub --attestation '%s'", bin("verify-bundle"), env);
}

/* Asserts exit 1 and a FAIL attest line holding substr. */
static void expect_attest_fail(const char *env, const char *substr)
{
    int rc = verify_env(env);
    ck_assert_msg(rc == 1, "%s: exit %d (%s)", env, rc, g_last);
    ck_assert_msg(!strncmp(g_last, "verify-bundle: FAIL attest: ", 28) && strstr(g_last, substr),
                  "%s: last line '%s' lacks '%s'", env, g_last, substr);
}

/* The good envelope, parsed. */
static void good_envelope(ev_dsse *d)
{
    ev_buf t = EV_BUF_INIT;
    ev_err err = {{0}};
    ck_assert_int_eq(ev_read_file(g_env, &t, &err), EV_OK);
    ck_assert_msg(ev_dsse_parse(t.data, t.len, d, &err) == EV_OK, "%s", err.msg);
    ev_buf_free(&t);
}

/* Writes text to g_dir/name. */
static void put(const char *name, const char *p, size_t n)
{
    char path[400];
    ev_err err = {{0}};
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    ck_assert_msg(ev_write_file(path, p, n, &err) == EV_OK, "%s", err.msg);
}

/* Signs body (of type) with the good key and writes the envelope to name. */
static void resign(const char *name, const char *type, const char *body, size_t n)
{
    ev_key *k = NULL;
    ev_err err = {{0}};
    cJSON *env = NULL;
    ev_buf t = EV_BUF_INIT;
    ck_assert_int_eq(ev_key_load(g_key, 1, &k, &err), EV_OK);
    ck_assert_int_eq(ev_dsse_sign(k, type, body, n, &env, &err), EV_OK);
    ck_assert_int_eq(ev_json_print(env, 1, &t), EV_OK);
    put(name, t.data, t.len);
    ev_buf_free(&t);
    cJSON_Delete(env);
    ev_key_free(k);
}

/* The good statement, parsed (cJSON_Delete). */
static cJSON *good_statement(void)
{
    ev_dsse d = {0};
    cJSON *st = NULL;
    good_envelope(&d);
    ck_assert_int_eq(ev_json_parse(d.payload.data, d.payload.len, 0, &st, NULL), EV_OK);
    ev_dsse_clear(&d);
    return st;
}

/* Re-signs statement st (printed compactly) into name. */
static void resign_statement(const char *name, const cJSON *st)
{
    ev_buf b = EV_BUF_INIT;
    ck_assert_int_eq(ev_json_print(st, 0, &b), EV_OK);
    resign(name, EV_DSSE_INTOTO, b.data, b.len);
    ev_buf_free(&b);
}

/* The subject object named name in st, or NULL. */
static cJSON *subject_named(cJSON *st, const char *name)
{
    cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(st, "subject"))
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(s, "name");
        if (cJSON_IsString(n) && !strcmp(n->valuestring, name))
            return s;
    }
    return NULL;
}

/* ------------------------------------------------------------ good path */

START_TEST(test_keygen_writes_a_0600_private_key_and_a_public_one_and_never_overwrites)
{
    struct stat st;
    ck_assert_int_eq(stat(g_key, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    ck_assert_int_eq(sh("grep -q 'BEGIN PRIVATE KEY' k && grep -q 'BEGIN PUBLIC KEY' k.pub"), 0);
    ck_assert_int_eq(sh("'%s' keygen --out k", bin("evident")), 2);
    ck_assert_ptr_nonnull(strstr(g_last, "never overwritten"));
    ck_assert_int_eq(sh("openssl pkey -in k -noout"), 0); /* OpenSSL reads it as a key */
}
END_TEST

START_TEST(test_a_signed_bundle_verifies_with_its_public_key)
{
    ck_assert_int_eq(sh("'%s' good.zip --key k.pub", bin("verify-bundle")), 0);
    ck_assert(out_has("\n9 attest    PASS") && out_has("raw records carry a valid signature"));
}
END_TEST

START_TEST(test_the_subjects_are_the_raw_members_and_records_only)
{
    cJSON *st = good_statement();
    ck_assert_ptr_nonnull(subject_named(st, "samples.csv"));
    ck_assert_ptr_nonnull(subject_named(st, "protocol.json"));
    ck_assert_ptr_nonnull(subject_named(st, "sources/kernels/reduce.c"));
    ck_assert_ptr_nonnull(subject_named(st, "validation.json#environment/1"));
    ck_assert_ptr_null(subject_named(st, "validation.json"));
    ck_assert_ptr_null(subject_named(st, "model.json"));
    ck_assert_ptr_null(subject_named(st, "report.html"));
    ck_assert_ptr_null(subject_named(st, "receipts.json"));
    int procs = 0;
    cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(st, "subject"))
    {
        procs += !strncmp(cJSON_GetObjectItemCaseSensitive(s, "name")->valuestring,
                          "validation.json#process/", 24);
    }
    ck_assert_int_gt(procs, 0);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(st, "predicate");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(st, "predicateType")->valuestring, EV_SLSA_PROVENANCE);
    const cJSON *bd = cJSON_GetObjectItemCaseSensitive(p, "buildDefinition");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(bd, "buildType")->valuestring, EV_BUILD_TYPE);
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(bd, "externalParameters"), "protocol"));
    const cJSON *md =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "runDetails"), "metadata");
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(md, "startedOn"));
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(md, "invocationId"));
    cJSON_Delete(st);
}
END_TEST

/* Writes g_dir/name: the bundle at src with member m's bytes replaced by
 * data[0..len), receipts resealed as the exporter seals them. */
static void reseal_member(const char *src, const char *name, const char *m, const void *data, size_t len)
{
    ev_buf raw = EV_BUF_INIT, rec = EV_BUF_INIT;
    ev_err err = {{0}};
    ev_zip *z = NULL;
    ev_zip_problems *pr = NULL;
    ck_assert_int_eq(ev_read_file(src, &raw, &err), EV_OK);
    ck_assert_int_eq(ev_zip_problems_new(&pr), EV_OK);
    ck_assert_int_eq(ev_zip_read_mem(raw.data, raw.len, NULL, &z, pr, &err), EV_OK);
    size_t n = ev_zip_count(z);
    ev_member *ms = calloc(n, sizeof *ms);
    ev_receipt *rc = calloc(n, sizeof *rc);
    char(*hex)[65] = calloc(n, 65);
    size_t k = 0, ri = n;
    for (size_t i = 0; i < n; i++) {
        const ev_zip_member *x = ev_zip_at(z, i);
        ms[i].name = x->name;
        ms[i].data = x->data;
        ms[i].len = (size_t)x->size;
        if (!strcmp(x->name, m)) {
            ms[i].data = data;
            ms[i].len = len;
        }
        if (!strcmp(x->name, "receipts.json")) {
            ri = i;
            continue;
        }
        ev_sha256_hex(ms[i].data, ms[i].len, hex[k]);
        rc[k].name = ms[i].name;
        rc[k].size = (int64_t)ms[i].len;
        rc[k].sha256_hex = hex[k];
        k++;
    }
    ck_assert_uint_lt(ri, n);
    ck_assert_int_eq(ev_receipts_json(EV_BUNDLE_FORMAT, rc, k, &rec), EV_OK);
    ms[ri].data = rec.data;
    ms[ri].len = rec.len;
    char path[400];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    ck_assert_msg(ev_zip_write(path, ms, n, &err) == EV_OK, "%s", err.msg);
    free(ms);
    free(rc);
    free(hex);
    ev_zip_free(z);
    ev_zip_problems_free(pr);
    ev_buf_free(&raw);
    ev_buf_free(&rec);
}

/* Rewrites good.zip into name with member m's text: from -> to, receipts
 * resealed as the exporter seals them. */
static void rewrite_bundle(const char *name, const char *m, const char *from, const char *to)
{
    ev_buf raw = EV_BUF_INIT, rec = EV_BUF_INIT, edited = EV_BUF_INIT;
    ev_err err = {{0}};
    ev_zip *z = NULL;
    ev_zip_problems *pr = NULL;
    ck_assert_int_eq(ev_read_file(g_good, &raw, &err), EV_OK);
    ck_assert_int_eq(ev_zip_problems_new(&pr), EV_OK);
    ck_assert_int_eq(ev_zip_read_mem(raw.data, raw.len, NULL, &z, pr, &err), EV_OK);
    size_t n = ev_zip_count(z);
    ev_member *ms = calloc(n, sizeof *ms);
    ev_receipt *rc = calloc(n, sizeof *rc);
    char(*hex)[65] = calloc(n, 65);
    size_t k = 0, ri = n;
    for (size_t i = 0; i < n; i++) {
        const ev_zip_member *x = ev_zip_at(z, i);
        ms[i].name = x->name;
        ms[i].data = x->data;
        ms[i].len = (size_t)x->size;
        if (!strcmp(x->name, m)) {
            const char *at = memmem(x->data, (size_t)x->size, from, strlen(from));
            ck_assert_ptr_nonnull(at);
            size_t off = (size_t)(at - (const char *)x->data);
            ev_buf_append(&edited, x->data, off);
            ev_buf_puts(&edited, to);
            ev_buf_append(&edited, at + strlen(from), (size_t)x->size - off - strlen(from));
            ms[i].data = edited.data;
            ms[i].len = edited.len;
        }
        if (!strcmp(x->name, "receipts.json")) {
            ri = i;
            continue;
        }
        ev_sha256_hex(ms[i].data, ms[i].len, hex[k]);
        rc[k].name = ms[i].name;
        rc[k].size = (int64_t)ms[i].len;
        rc[k].sha256_hex = hex[k];
        k++;
    }
    ck_assert_uint_lt(ri, n);
    ck_assert_int_eq(ev_receipts_json(EV_BUNDLE_FORMAT, rc, k, &rec), EV_OK);
    ms[ri].data = rec.data;
    ms[ri].len = rec.len;
    char path[400];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    ck_assert_msg(ev_zip_write(path, ms, n, &err) == EV_OK, "%s", err.msg);
    free(ms);
    free(rc);
    free(hex);
    ev_zip_free(z);
    ev_zip_problems_free(pr);
    ev_buf_free(&raw);
    ev_buf_free(&rec);
    ev_buf_free(&edited);
}

START_TEST(test_a_changed_derived_member_keeps_the_signature_and_a_changed_raw_record_breaks_it)
{
    /* report.html is derived: a re-export with other report code changes it
     * (check 6 then says the report differs) while the signature holds */
    rewrite_bundle("derived.zip", "report.html", "<html", "<html data-x=\"new report code\"");
    ck_assert_int_eq(
        sh("'%s' derived.zip --key k.pub --attestation good.zip.intoto.json", bin("verify-bundle")), 1);
    ck_assert(out_has("\n9 attest    PASS") && out_has("\n6 rederive  FAIL"));
    /* samples.csv is raw: any change breaks the signature */
    rewrite_bundle("raw.zip", "samples.csv", "run_id,", "run_id ,");
    ck_assert_int_eq(sh("'%s' raw.zip --key k.pub --attestation good.zip.intoto.json", bin("verify-bundle")),
                     1);
    ck_assert(out_has("FAIL attest: samples.csv: signed digest"));
}
END_TEST

START_TEST(test_the_signature_verifies_with_openssl_and_python3_cryptography_over_pae_we_compute)
{
    /* the test computes PAE itself from the envelope, with python3's json
     * and base64, and hands it to two implementations written elsewhere */
    const char *script =
        "import json,base64\n"
        "e=json.load(open('good.zip.intoto.json'))\n"
        "t=e['payloadType'].encode(); b=base64.b64decode(e['payload'],validate=True)\n"
        "open('pae.bin','wb').write(b'DSSEv1 %d %s %d %s'%(len(t),t,len(b),b))\n"
        "open('sig.bin','wb').write(base64.b64decode(e['signatures'][0]['sig'],validate=True))\n";
    put("pae.py", script, strlen(script));
    ck_assert_int_eq(sh("python3 pae.py"), 0);
    ck_assert_msg(sh("openssl pkeyutl -verify -pubin -inkey k.pub -rawin -in pae.bin -sigfile sig.bin") == 0,
                  "openssl: %s", g_last);
    const char *py = "from cryptography.hazmat.primitives.serialization import load_pem_public_key\n"
                     "k=load_pem_public_key(open('k.pub','rb').read())\n"
                     "k.verify(open('sig.bin','rb').read(), open('pae.bin','rb').read())\n"
                     "print('verified')\n";
    put("pyverify.py", py, strlen(py));
    /* python3-cryptography: the first interpreter that imports it (the
     * PATH's, then Debian's own).  Where none does, the cross-check may be
     * left out only on a DEPS= build (a host without a package manager's
     * network: Debian's python3-cryptography is built for Debian's own
     * python3 and cannot be vendored into another), and it says so; openssl
     * above still verified.  Anywhere else `make deps` installs it, and its
     * absence fails. */
    const char *pys[] = {"python3", "/usr/bin/python3"}, *pyc = NULL;
    char why[2048] = "";
    for (size_t i = 0; i < 2 && !pyc; i++) {
        if (sh("%s -c 'import cryptography'", pys[i]) == 0)
            pyc = pys[i];
        else if (!why[0])
            snprintf(why, sizeof why, "%s", g_last);
    }
    const char *deps = getenv("EV_DEPS");
    if (!pyc && deps && *deps) {
        printf("check_sign: python3-cryptography cross-check left out: neither python3 nor /usr/bin/python3 "
               "imports cryptography (%s), and this build uses DEPS=%s (no package manager here); openssl "
               "verified the signature\n",
               why, deps);
    } else {
        ck_assert_msg(pyc, "python3-cryptography: not importable by python3 (%s): make deps installs it",
                      why);
        ck_assert_msg(sh("%s pyverify.py", pyc) == 0, "python3-cryptography: %s", g_last);
    }
    /* and both refuse a PAE with one bit flipped */
    ck_assert_int_eq(sh("printf '\\001' | dd of=pae.bin bs=1 seek=40 count=1 conv=notrunc 2>/dev/null"), 0);
    ck_assert_int_ne(sh("openssl pkeyutl -verify -pubin -inkey k.pub -rawin -in pae.bin -sigfile sig.bin"),
                     0);
    if (pyc)
        ck_assert_int_ne(sh("%s pyverify.py", pyc), 0);
}
END_TEST

START_TEST(test_the_sigstore_bundle_wraps_the_same_envelope_with_a_key_hint_and_no_tlog)
{
    cJSON *b = NULL, *e = NULL;
    char path[400];
    snprintf(path, sizeof path, "%s/good.sigstore.json", g_dir);
    ck_assert_int_eq(ev_json_parse_file(path, 0, &b, NULL), EV_OK);
    ck_assert_int_eq(ev_json_parse_file(g_env, 0, &e, NULL), EV_OK);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(b, "mediaType")->valuestring, EV_SIGSTORE_BUNDLE_V3);
    const cJSON *vm = cJSON_GetObjectItemCaseSensitive(b, "verificationMaterial");
    const cJSON *hint =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(vm, "publicKey"), "hint");
    ck_assert(cJSON_IsString(hint) && strlen(hint->valuestring) == 44);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(vm, "tlogEntries")), 0);
    ck_assert(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(b, "dsseEnvelope"), e, 1));
    cJSON_Delete(b);
    cJSON_Delete(e);
}
END_TEST

START_TEST(test_vsa_records_the_verdict_signed_when_a_key_is_given)
{
    ck_assert_int_eq(sh("'%s' good.zip --key k.pub --vsa vsa.json --vsa-key k", bin("verify-bundle")), 0);
    ev_dsse d = {0};
    ev_buf t = EV_BUF_INIT;
    ev_key *k = NULL;
    cJSON *st = NULL;
    char path[400];
    snprintf(path, sizeof path, "%s/vsa.json", g_dir);
    ck_assert_int_eq(ev_read_file(path, &t, NULL), EV_OK);
    ck_assert_int_eq(ev_dsse_parse(t.data, t.len, &d, NULL), EV_OK);
    ck_assert_int_eq(ev_key_load(g_key, 0, &k, NULL), EV_OK);
    ck_assert_int_eq(ev_dsse_verify(&d, k, NULL), EV_OK);
    ck_assert_int_eq(ev_json_parse(d.payload.data, d.payload.len, 0, &st, NULL), EV_OK);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(st, "predicateType")->valuestring, EV_SLSA_VSA);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(st, "predicate");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "verificationResult")->valuestring, "PASSED");
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(p, "timeVerified"));
    uint8_t sha[32];
    char hex[65];
    ck_assert_int_eq(ev_sha256_file(g_good, sha, NULL), EV_OK);
    ev_hex_encode(sha, 32, hex);
    const cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "subject"), 0);
    ck_assert_str_eq(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s0, "digest"), "sha256")
            ->valuestring,
        hex);
    cJSON_Delete(st);
    ev_dsse_clear(&d);
    ev_buf_free(&t);
    ev_key_free(k);
    /* a failed verdict is summarised as FAILED (unsigned: the bare statement) */
    rewrite_bundle("raw2.zip", "samples.csv", "run_id,", "run_id ,");
    ck_assert_int_eq(sh("'%s' raw2.zip --key k.pub --attestation good.zip.intoto.json --vsa vsa2.json",
                        bin("verify-bundle")),
                     1);
    ck_assert_int_eq(sh("grep -q '\"verificationResult\":\"FAILED\"' vsa2.json"), 0);
}
END_TEST

/* ------------------------------------------------------------ bad input */

START_TEST(test_a_wrong_key_fails)
{
    ck_assert_int_eq(sh("'%s' keygen --out other > other.id", bin("evident")), 0);
    ck_assert_int_eq(sh("'%s' good.zip --key other.pub", bin("verify-bundle")), 1);
    ck_assert_msg(strstr(g_last, "FAIL attest:") && strstr(g_last, "keyid"), "%s", g_last);
    /* with the other key's id put in, the signature itself fails */
    ev_dsse d = {0};
    good_envelope(&d);
    ck_assert_int_eq(sh("sed 's/\"keyid\":[[:space:]]*\"[0-9a-f]*\"/\"keyid\": \"'$(cat other.id)'\"/' "
                        "good.zip.intoto.json > otherid.json && ! cmp -s otherid.json good.zip.intoto.json"),
                     0);
    ck_assert_int_eq(sh("'%s' good.zip --key other.pub --attestation otherid.json", bin("verify-bundle")), 1);
    ck_assert_msg(strstr(g_last, "PAE signature check") && strstr(g_last, "wrong key"), "%s", g_last);
    ev_dsse_clear(&d);
}
END_TEST

/* Writes the good envelope with one bit flipped in the decoded payload
 * (which_sig = 0) or signature (1), base64 re-encoded canonically. */
static void flip_envelope(const char *name, int which_sig, size_t byte)
{
    ev_dsse d = {0};
    good_envelope(&d);
    uint8_t *p = which_sig ? d.sig : (uint8_t *)d.payload.data;
    p[byte] ^= 0x01;
    ev_buf pb = EV_BUF_INIT, sb = EV_BUF_INIT, t = EV_BUF_INIT;
    ev_base64_encode(d.payload.data, d.payload.len, &pb);
    ev_base64_encode(d.sig, d.sig_n, &sb);
    ev_buf_printf(&t,
                  "{\"payload\": \"%s\", \"payloadType\": \"%s\", \"signatures\": [{\"keyid\": \"%s\", "
                  "\"sig\": \"%s\"}]}\n",
                  pb.data, d.payload_type, d.keyid, sb.data);
    put(name, t.data, t.len);
    ev_buf_free(&pb);
    ev_buf_free(&sb);
    ev_buf_free(&t);
    ev_dsse_clear(&d);
}

START_TEST(test_one_flipped_bit_in_the_payload_fails)
{
    flip_envelope("flip-payload.json", 0, 100);
    expect_attest_fail("flip-payload.json", "does not verify");
}
END_TEST

START_TEST(test_one_flipped_bit_in_the_signature_fails)
{
    flip_envelope("flip-sig.json", 1, 10);
    expect_attest_fail("flip-sig.json", "does not verify");
}
END_TEST

START_TEST(test_one_flipped_bit_in_a_subject_digest_fails_even_when_re_signed)
{
    cJSON *st = good_statement();
    cJSON *s = subject_named(st, "protocol.json");
    cJSON *sha = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "digest"), "sha256");
    char *h = sha->valuestring;
    h[0] = h[0] == '0' ? '1' : (char)(h[0] ^ 0x01); /* '1'<->'0', 'a'<->'`' stays hex below */
    if (!((h[0] >= '0' && h[0] <= '9') || (h[0] >= 'a' && h[0] <= 'f')))
        h[0] = h[0] == '`' ? 'b' : '0';
    resign_statement("flip-digest.json", st);
    expect_attest_fail("flip-digest.json", "protocol.json: signed digest");
    cJSON_Delete(st);
}
END_TEST

START_TEST(test_a_subject_list_missing_a_raw_member_fails)
{
    cJSON *st = good_statement();
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(st, "subject");
    int i = 0;
    cJSON *s;
    cJSON_ArrayForEach(s, arr)
    {
        if (!strcmp(cJSON_GetObjectItemCaseSensitive(s, "name")->valuestring, "samples.csv"))
            break;
        i++;
    }
    cJSON_DeleteItemFromArray(arr, i);
    resign_statement("missing.json", st);
    expect_attest_fail("missing.json", "samples.csv: raw member or record missing");
    cJSON_Delete(st);
}
END_TEST

START_TEST(test_a_subject_list_naming_an_extra_member_fails)
{
    cJSON *st = good_statement();
    cJSON *extra = cJSON_Duplicate(subject_named(st, "samples.csv"), 1);
    cJSON_ReplaceItemInObjectCaseSensitive(extra, "name", cJSON_CreateString("model.json"));
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(st, "subject"), extra);
    resign_statement("extra.json", st);
    expect_attest_fail("extra.json", "model.json: extra subject");
    cJSON_Delete(st);
}
END_TEST

START_TEST(test_two_signatures_fail)
{
    ck_assert_int_eq(sh("/usr/bin/python3 -c \"import json; e=json.load(open('good.zip.intoto.json')); "
                        "e['signatures']*=2; json.dump(e, open('two.json','w'))\""),
                     0);
    expect_attest_fail("two.json", "2 signatures");
}
END_TEST

START_TEST(test_another_payload_type_fails)
{
    ev_dsse d = {0};
    good_envelope(&d);
    resign("type.json", "application/json", d.payload.data, d.payload.len);
    ev_dsse_clear(&d);
    expect_attest_fail("type.json", "payloadType is 'application/json'");
}
END_TEST

START_TEST(test_non_canonical_base64_fails)
{
    /* a signature's last base64 digit changed in its unused low bits: it
     * decodes to the same bytes with a lax decoder */
    ck_assert_int_eq(sh("/usr/bin/python3 -c \"import json; e=json.load(open('good.zip.intoto.json')); "
                        "s=e['signatures'][0]['sig']; "
                        "a='ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'; "
                        "c=s[-3]; s=s[:-3]+a[a.index(c)^1]+s[-2:]; e['signatures'][0]['sig']=s; "
                        "json.dump(e, open('b64.json','w'))\""),
                     0);
    expect_attest_fail("b64.json", "not canonical");
    /* no padding */
    ck_assert_int_eq(sh("/usr/bin/python3 -c \"import json; e=json.load(open('good.zip.intoto.json')); "
                        "e['signatures'][0]['sig']=e['signatures'][0]['sig'].rstrip('='); "
                        "json.dump(e, open('b64pad.json','w'))\""),
                     0);
    expect_attest_fail("b64pad.json", "padding required");
    /* URL-safe alphabet */
    const char *url =
        "{\"payload\": \"-_-_\", \"payloadType\": \"x\", \"signatures\": [{\"sig\": \"AAAA\"}]}";
    put("b64url.json", url, strlen(url));
    expect_attest_fail("b64url.json", "only A-Z");
}
END_TEST

START_TEST(test_a_truncated_envelope_fails)
{
    ck_assert_int_eq(sh("head -c 200 good.zip.intoto.json > trunc.json"), 0);
    expect_attest_fail("trunc.json", "not strict JSON");
    put("empty.json", "", 0);
    expect_attest_fail("empty.json", "not strict JSON");
}
END_TEST

START_TEST(test_a_1_gib_envelope_is_refused_by_its_size_unread)
{
    char path[400];
    snprintf(path, sizeof path, "%s/huge.json", g_dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)1 << 30), 0); /* sparse: no disk, no reading */
    close(fd);
    expect_attest_fail("huge.json", "refused unread");
    unlink(path);
}
END_TEST

START_TEST(test_duplicate_json_keys_fail_in_the_envelope_and_in_the_payload)
{
    ck_assert_int_eq(
        sh("sed 's/\"payloadType\":/\"payloadType\": \"x\", \"payloadType\":/' good.zip.intoto.json > "
           "dup.json"),
        0);
    expect_attest_fail("dup.json", "duplicate");
    const char *body = "{\"_type\": \"https://in-toto.io/Statement/v1\", \"_type\": \"x\", \"subject\": []}";
    resign("dup-payload.json", EV_DSSE_INTOTO, body, strlen(body));
    expect_attest_fail("dup-payload.json", "duplicate");
}
END_TEST

START_TEST(test_unreadable_key_or_envelope_exits_2_and_a_key_of_another_type_too)
{
    ck_assert_int_eq(sh("'%s' good.zip --key no-such.pub", bin("verify-bundle")), 2);
    ck_assert_ptr_nonnull(strstr(g_last, "no-such.pub"));
    ck_assert_int_eq(sh("'%s' good.zip --key k.pub --attestation no-such.json", bin("verify-bundle")), 2);
    ck_assert_ptr_nonnull(strstr(g_last, "no-such.json"));
    ck_assert_int_eq(sh("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.pem && "
                        "openssl pkey -in ec.pem -pubout -out ec.pub"),
                     0);
    ck_assert_int_eq(sh("'%s' good.zip --key ec.pub", bin("verify-bundle")), 2);
    ck_assert_msg(strstr(g_last, "not Ed25519"), "%s", g_last);
    ck_assert_int_eq(sh("'%s' good.zip --key k.pub --attestation .", bin("verify-bundle")), 2);
    ck_assert_int_eq(sh("'%s' good.zip --attestation x.json", bin("verify-bundle")), 2);
    ck_assert_int_eq(sh("'%s' sign good.zip --key k.pub", bin("evident")), 2);
    ck_assert_ptr_nonnull(strstr(g_last, "private"));
}
END_TEST

START_TEST(test_strict_base64_round_trips_and_pae_is_as_specified)
{
    ev_buf e = EV_BUF_INIT, d = EV_BUF_INIT, p = EV_BUF_INIT;
    const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        ev_buf_reset(&e);
        ev_buf_reset(&d);
        ck_assert_int_eq(ev_base64_encode(in[i], strlen(in[i]), &e), EV_OK);
        ck_assert_str_eq(e.data, want[i]);
        ck_assert_int_eq(ev_base64_decode(e.data, e.len, &d, NULL), EV_OK);
        ck_assert_uint_eq(d.len, strlen(in[i]));
        ck_assert(!memcmp(d.data, in[i], d.len));
    }
    ck_assert_int_eq(ev_base64_decode("Zh==", 4, &d, NULL), EV_EFORMAT);
    ck_assert_int_eq(ev_base64_decode("Zm9=", 4, &d, NULL), EV_EFORMAT);
    ck_assert_int_eq(ev_base64_decode("Z===", 4, &d, NULL), EV_EFORMAT);
    ck_assert_int_eq(ev_base64_decode("Zg=a", 4, &d, NULL), EV_EFORMAT);
    ck_assert_int_eq(ev_base64_decode("Zg\n=", 4, &d, NULL), EV_EFORMAT);
    /* the DSSE specification's example */
    ck_assert_int_eq(ev_dsse_pae("http://example.com/HelloWorld", "hello world", 11, &p), EV_OK);
    ck_assert_str_eq(p.data, "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
    ev_buf_free(&e);
    ev_buf_free(&d);
    ev_buf_free(&p);
}
END_TEST

/* As ssh refuses an unprotected private key: a private key readable or
 * writable by group or others (0644, 0640, 0666) is refused by sign and by
 * verify-bundle (exit 2, saying the mode and the chmod), before it is
 * used; 0600 and 0400 are taken. */
START_TEST(test_a_private_key_group_or_world_can_read_is_refused_as_ssh_refuses_it)
{
    static const char *const modes[] = {"644", "640", "666", "604"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        ck_assert_int_eq(sh("cp k kmode && chmod %s kmode", modes[i]), 0);
        ck_assert_int_eq(sh("'%s' sign good.zip --key kmode --out m.json", bin("evident")), 2);
        ck_assert_msg(strstr(g_last, "kmode") && strstr(g_last, "group or others") &&
                          strstr(g_last, "chmod 600"),
                      "mode %s: %s", modes[i], g_last);
        ck_assert_int_eq(sh("test ! -e m.json"), 0);
        ck_assert_int_eq(sh("'%s' good.zip --key kmode", bin("verify-bundle")), 2);
        ck_assert_msg(strstr(g_last, "group or others"), "verify, mode %s: %s", modes[i], g_last);
        ck_assert_int_eq(sh("rm -f kmode"), 0);
    }
    ck_assert_int_eq(
        sh("cp k kmode && chmod 400 kmode && '%s' sign good.zip --key kmode --out m.json && rm -f "
           "kmode m.json",
           bin("evident")),
        0);
    /* a public key may be read by anyone */
    ck_assert_int_eq(sh("chmod 644 k.pub && '%s' good.zip --key k.pub", bin("verify-bundle")), 0);
}
END_TEST

/* keygen never overwrites either half: an existing KEY.pub (or KEY) is a
 * refusal before anything is written, and both files stay as they were. */
START_TEST(test_keygen_overwrites_neither_half_of_an_existing_pair)
{
    ck_assert_int_eq(sh("echo mine > only.pub"), 0);
    ck_assert_int_eq(sh("'%s' keygen --out only", bin("evident")), 2);
    ck_assert_msg(strstr(g_last, "only.pub") && strstr(g_last, "never overwritten"), "%s", g_last);
    ck_assert_int_eq(sh("test ! -e only && test \"$(cat only.pub)\" = mine"), 0);
    ck_assert_int_eq(sh("cp k.pub keep.pub && '%s' keygen --out k", bin("evident")), 2);
    ck_assert_int_eq(sh("cmp k.pub keep.pub"), 0);
}
END_TEST

/* A passphrase-protected key: no prompt and no wait (stdin closed, no
 * controlling terminal, a time limit that is only a guard), exit 2 with
 * a message that says it is encrypted and what to do. */
START_TEST(test_an_encrypted_key_is_refused_without_a_prompt_and_says_so)
{
    ck_assert_int_eq(sh("openssl genpkey -algorithm ed25519 -aes-256-cbc -pass pass:secret -out enc.pem && "
                        "chmod 600 enc.pem"),
                     0);
    ck_assert_int_eq(
        sh("timeout 60 setsid '%s' sign good.zip --key enc.pem --out e.json </dev/null", bin("evident")), 2);
    ck_assert_msg(strstr(g_last, "enc.pem") && strstr(g_last, "encrypted") && strstr(g_last, "openssl pkey"),
                  "%s", g_last);
    ck_assert_int_eq(sh("test ! -e e.json"), 0);
}
END_TEST

/* An envelope whose signature names no keyid FAILs: evident sign always
 * writes the key's id, and a verifier told which key to expect holds the
 * envelope to naming it (one envelope, one spelling). */
START_TEST(test_an_envelope_without_a_keyid_fails)
{
    ev_buf t = EV_BUF_INIT, out = EV_BUF_INIT;
    ev_err err = {{0}};
    ck_assert_int_eq(ev_read_file(g_env, &t, &err), EV_OK);
    cJSON *env = cJSON_Parse(t.data);
    ck_assert_ptr_nonnull(env);
    cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(env, "signatures"), 0);
    cJSON_DeleteItemFromObjectCaseSensitive(s0, "keyid");
    ck_assert_int_eq(ev_json_print(env, 1, &out), EV_OK);
    put("nokeyid.json", out.data, out.len);
    expect_attest_fail("nokeyid.json", "names no keyid");
    cJSON_Delete(env);
    ev_buf_free(&t);
    ev_buf_free(&out);
}
END_TEST

/* A real cpu run of one case (every record kind of the worker's stream),
 * exported to g_dir/<name>.zip and signed with the good key.  Returns the
 * shell's exit code. */
static int write_tiny_run(const char *name)
{
    static const char tiny[] =
        "{\"seed\": 8, \"samples\": 3, \"warmup_ms\": 5, \"target_sample_ms\": 2, \"cold_samples\": 1, "
        "\"host_threads\": 2, \"reference_arms\": false, \"reference\": {\"cpu\": {\"ceiling_max_bytes\": "
        "1048576}}, \"arms\": [\"default\"], \"cases\": [{\"op\": "
        "\"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", \"default_rows\": 4}]}\n";
    char cwd[400];
    put("tiny.json", tiny, sizeof tiny - 1);
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    /* evident run finds the measured closure in its working directory */
    return sh(
        "cd '%s' && '%s' run --protocol '%s/tiny.json' --backend cpu --db '%s/%s.db' >/dev/null && "
        "'%s' export --db '%s/%s.db' --out '%s/%s.zip' >/dev/null && cd '%s' && '%s' sign %s.zip --key k "
        ">/dev/null",
        cwd, bin("evident"), g_dir, g_dir, name, bin("evident"), g_dir, name, g_dir, name, g_dir,
        bin("evident"), name);
}

/* The first leaf (number, string or boolean) under v, depth first, or NULL. */
static cJSON *first_leaf(cJSON *v)
{
    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
        return v;
    for (cJSON *c = v->child; c; c = c->next) {
        cJSON *l = first_leaf(c);
        if (l)
            return l;
    }
    return NULL;
}

/* Changes leaf l: a number by +1, a string by one more character, a
 * boolean flipped. */
static void change_leaf(cJSON *l)
{
    if (cJSON_IsNumber(l)) {
        cJSON_SetNumberValue(l, l->valuedouble + 1);
    } else if (cJSON_IsString(l)) {
        char t[600];
        snprintf(t, sizeof t, "%sx", l->valuestring);
        ck_assert_ptr_nonnull(cJSON_SetValuestring(l, t));
    } else {
        ck_assert(cJSON_IsBool(l));
        l->type = cJSON_IsTrue(l) ? cJSON_False : cJSON_True;
    }
}

/* Every record kind of the worker's stream (runner/record.h: the kinds
 * are taken from the codec table's count, so a kind added later is edited
 * here too, once it has a place) has a place among the signed subjects
 * (ev_raw_record_place), and one record of that kind changed in a bundle of
 * a real run (every kind a run of this build writes: not the schema-4
 * sample check), the envelope left as it was, FAILs check 9 naming the
 * subject that holds it. */
START_TEST(test_every_record_kind_is_signed_and_an_edit_of_any_one_fails_the_signature)
{
    ev_buf raw = EV_BUF_INIT;
    ev_err err = {{0}};
    ck_assert_int_eq(write_tiny_run("rec"), 0);
    ck_assert_int_eq(sh("'%s' rec.zip --key k.pub", bin("verify-bundle")), 0);
    ck_assert_msg(!out_has("subject rule 1"), "a new signature is of rule 1");
    char zip[400];
    snprintf(zip, sizeof zip, "%s/rec.zip", g_dir);
    ck_assert_int_eq(ev_read_file(zip, &raw, &err), EV_OK);
    ev_zip_problems *pr = NULL;
    ev_zip *z = NULL;
    ck_assert_int_eq(ev_zip_problems_new(&pr), EV_OK);
    ck_assert_int_eq(ev_zip_read_mem(raw.data, raw.len, NULL, &z, pr, &err), EV_OK);
    const ev_zip_member *vm = ev_zip_find(z, "validation.json"), *sm = ev_zip_find(z, "samples.csv");
    ck_assert(vm && sm);
    for (int t = 0; t < EV_REC_COUNT; t++) {
        const char *place = ev_raw_record_place(t), *kind = ev_rec_type_name((ev_rec_type)t);
        char name[64], subject[300], want[400];
        ev_buf edited = EV_BUF_INIT;
        ck_assert_msg(place, "record kind %s has no place among the signed subjects", kind);
        if (t == EV_REC_CHECK)
            continue; /* written by store-schema-4 workers only: no run of this build makes one */
        snprintf(name, sizeof name, "edit-%s.zip", kind);
        if (!strcmp(place, "samples.csv")) {
            /* a digit of the last sample row's elapsed_ms changed */
            ck_assert_int_eq(ev_buf_append(&edited, sm->data, (size_t)sm->size), EV_OK);
            char *last = edited.data + edited.len - 2;
            while (*last != '\n')
                last--;
            char *c = last + 1;
            for (int commas = 0; commas < 18; c++)
                commas += *c == ',';
            ck_assert(*c >= '0' && *c <= '9');
            *c = *c == '9' ? '8' : (char)(*c + 1);
            snprintf(subject, sizeof subject, "samples.csv");
        } else {
            cJSON *v = NULL;
            ck_assert_int_eq(ev_json_parse((const char *)vm->data, (size_t)vm->size, 0, &v, &err), EV_OK);
            cJSON *leaf = NULL, *job;
            subject[0] = '\0';
            cJSON_ArrayForEach(job, cJSON_GetObjectItemCaseSensitive(v, "jobs"))
            {
                cJSON *a;
                cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(job, "attempts"))
                {
                    if (!leaf && (leaf = first_leaf(cJSON_GetObjectItemCaseSensitive(a, place))))
                        snprintf(subject, sizeof subject, "validation.json#%s/%s/%d",
                                 strcmp(place, "process") ? "attempt" : "process",
                                 cJSON_GetObjectItemCaseSensitive(job, "job_key")->valuestring,
                                 (int)cJSON_GetObjectItemCaseSensitive(a, "attempt")->valuedouble);
                }
            }
            ck_assert_msg(leaf, "the run's bundle holds no %s record (%s) to edit", kind, place);
            change_leaf(leaf);
            ck_assert_int_eq(ev_json_canon_numbers(v), EV_OK);
            ck_assert_int_eq(ev_json_print(v, 1, &edited), EV_OK);
            cJSON_Delete(v);
        }
        reseal_member(zip, name, place[0] && strchr(place, '.') ? place : "validation.json", edited.data,
                      edited.len);
        ck_assert_int_eq(
            sh("'%s' %s --key k.pub --attestation rec.zip.intoto.json", bin("verify-bundle"), name), 1);
        snprintf(want, sizeof want, "FAIL attest: %s: signed digest", subject);
        ck_assert_msg(out_has(want), "a %s record (%s) edited under the signature: no '%s'", kind, place,
                      want);
        ev_buf_free(&edited);
    }
    ev_zip_free(z);
    ev_zip_problems_free(pr);
    ev_buf_free(&raw);
}
END_TEST

/* A statement of the first subject rule (no subject_rule, no attempt
 * subjects: the committed receipts/h200 envelope is one) is checked under
 * its own rule and passes, with a note naming what it leaves unsigned; one
 * naming a rule this verifier does not know FAILs. */
START_TEST(test_a_statement_of_the_first_subject_rule_passes_with_a_note_and_an_unknown_rule_fails)
{
    cJSON *st = good_statement();
    cJSON *in = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "predicate"),
                                         "buildDefinition"),
        "internalParameters");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(in, "subject_rule")->valuestring, EV_SUBJECT_RULE_2);
    cJSON_DeleteItemFromObjectCaseSensitive(in, "subject_rule");
    cJSON *subj = cJSON_GetObjectItemCaseSensitive(st, "subject");
    int dropped = 0;
    for (cJSON *x = subj->child; x;) {
        cJSON *next = x->next;
        if (!strncmp(cJSON_GetObjectItemCaseSensitive(x, "name")->valuestring, "validation.json#attempt/",
                     24)) {
            cJSON_Delete(cJSON_DetachItemViaPointer(subj, x));
            dropped++;
        }
        x = next;
    }
    ck_assert_int_gt(dropped, 0);
    resign_statement("rule1.json", st);
    ck_assert_int_eq(verify_env("rule1.json"), 0);
    ck_assert(out_has("\n9 attest    PASS") && out_has("signed under subject rule 1") &&
              out_has("are NOT covered by this signature"));
    ck_assert_ptr_nonnull(cJSON_AddStringToObject(in, "subject_rule", "evident-subjects/9"));
    resign_statement("rule9.json", st);
    expect_attest_fail("rule9.json", "subject rule this verifier does not know");
    cJSON_Delete(st);
}
END_TEST

static Suite *sign_suite(void)
{
    Suite *s = suite_create("sign");
    TCase *t = tcase_create("sign");
    tcase_set_timeout(t, 480);
    tcase_add_test(t, test_keygen_writes_a_0600_private_key_and_a_public_one_and_never_overwrites);
    tcase_add_test(t, test_a_signed_bundle_verifies_with_its_public_key);
    tcase_add_test(t, test_the_subjects_are_the_raw_members_and_records_only);
    tcase_add_test(t, test_a_changed_derived_member_keeps_the_signature_and_a_changed_raw_record_breaks_it);
    tcase_add_test(t, test_the_signature_verifies_with_openssl_and_python3_cryptography_over_pae_we_compute);
    tcase_add_test(t, test_the_sigstore_bundle_wraps_the_same_envelope_with_a_key_hint_and_no_tlog);
    tcase_add_test(t, test_vsa_records_the_verdict_signed_when_a_key_is_given);
    tcase_add_test(t, test_a_wrong_key_fails);
    tcase_add_test(t, test_one_flipped_bit_in_the_payload_fails);
    tcase_add_test(t, test_one_flipped_bit_in_the_signature_fails);
    tcase_add_test(t, test_one_flipped_bit_in_a_subject_digest_fails_even_when_re_signed);
    tcase_add_test(t, test_a_subject_list_missing_a_raw_member_fails);
    tcase_add_test(t, test_a_subject_list_naming_an_extra_member_fails);
    tcase_add_test(t, test_two_signatures_fail);
    tcase_add_test(t, test_another_payload_type_fails);
    tcase_add_test(t, test_non_canonical_base64_fails);
    tcase_add_test(t, test_a_truncated_envelope_fails);
    tcase_add_test(t, test_a_1_gib_envelope_is_refused_by_its_size_unread);
    tcase_add_test(t, test_duplicate_json_keys_fail_in_the_envelope_and_in_the_payload);
    tcase_add_test(t, test_unreadable_key_or_envelope_exits_2_and_a_key_of_another_type_too);
    tcase_add_test(t, test_strict_base64_round_trips_and_pae_is_as_specified);
    tcase_add_test(t, test_a_private_key_group_or_world_can_read_is_refused_as_ssh_refuses_it);
    tcase_add_test(t, test_keygen_overwrites_neither_half_of_an_existing_pair);
    tcase_add_test(t, test_an_encrypted_key_is_refused_without_a_prompt_and_says_so);
    tcase_add_test(t, test_an_envelope_without_a_keyid_fails);
    tcase_add_test(t, test_every_record_kind_is_signed_and_an_edit_of_any_one_fails_the_signature);
    tcase_add_test(t,
                   test_a_statement_of_the_first_subject_rule_passes_with_a_note_and_an_unknown_rule_fails);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    build_fixtures();
    int failed = ev_check_suite(sign_suite());
    if (!failed) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "check_sign: could not remove %s\n", g_dir);
    }
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
