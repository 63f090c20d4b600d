/*
 * cmd_sign.c: 'evident keygen --out KEY' and 'evident sign BUNDLE.zip --key
 * KEY [--out FILE] [--sigstore-bundle FILE]'.
 *
 * keygen writes an Ed25519 key pair: KEY (PKCS#8 PEM, mode 0600, never
 * over an existing file) and KEY.pub (public PEM).  sign reads the bundle
 * with the hardened reader, builds the in-toto Statement of its raw
 * members and records (src/sign/attest.h), signs it into a DSSE envelope
 * and writes BUNDLE.zip.intoto.json (or --out), and with --sigstore-bundle
 * the same envelope as a Sigstore bundle v0.3.  Exit 0 success, 1 the
 * file is readable but no bundle that can be signed, 2 usage error or an
 * unreadable or unwritable path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "sign/attest.h"
#include "sign/dsse.h"
#include "sign/key.h"

static const char keygen_usage[] = "usage: evident keygen --out KEY\n"
                                   "\n"
                                   "Writes a new Ed25519 key pair: KEY, the private key (PEM, mode 0600; an\n"
                                   "existing file is never overwritten) and KEY.pub, the public key (PEM).\n"
                                   "Keep KEY on the host that measures; publish KEY.pub beside the bundle.\n"
                                   "\n"
                                   "exit status: 0 success, 2 usage error or unwritable path\n";

static const char sign_usage[] =
    "usage: evident sign BUNDLE.zip --key KEY [--out FILE] [--sigstore-bundle FILE]\n"
    "\n"
    "Signs the raw records of a bundle (protocol.json, samples.csv, sources/,\n"
    "outputs/, each environment and process record): an in-toto Statement v1\n"
    "with SLSA provenance v1, in a DSSE envelope signed with Ed25519.  A\n"
    "re-export with new derivation code keeps the signature valid; a changed\n"
    "raw record breaks it.  verify-bundle BUNDLE.zip --key KEY.pub checks it.\n"
    "\n"
    "  --key FILE              the private key 'evident keygen' wrote\n"
    "  --out FILE              the envelope (default BUNDLE.zip.intoto.json)\n"
    "  --sigstore-bundle FILE  also write the envelope as a Sigstore bundle v0.3\n"
    "                          (public-key hint, no transparency-log entry)\n"
    "\n"
    "exit status: 0 success, 1 not a bundle that can be signed, 2 usage or unreadable path\n";

int ev_cmd_keygen(int argc, char **argv)
{
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(keygen_usage, stdout);
            return EV_EXIT_OK;
        }
        if (!strcmp(a, "--version")) {
            printf("evident keygen %s\n", EV_VERSION);
            return EV_EXIT_OK;
        }
        if (!strcmp(a, "--out") && i + 1 < argc && !out) {
            out = argv[++i];
        } else {
            fprintf(stderr, "evident keygen: unexpected argument '%s' (usage: evident keygen --out KEY)\n",
                    a);
            return EV_EXIT_USAGE;
        }
    }
    if (!out || !out[0]) {
        fprintf(stderr, "evident keygen: --out KEY is required (try --help)\n");
        return EV_EXIT_USAGE;
    }
    ev_err err = {{0}};
    ev_key *k = NULL;
    ev_buf pub = EV_BUF_INIT;
    ev_status rc = ev_buf_printf(&pub, "%s.pub", out);
    if (!rc)
        rc = ev_key_generate(&k, &err);
    if (!rc)
        rc = ev_key_write(k, out, pub.data, &err);
    if (!rc)
        printf("%s\n", ev_key_id(k));
    else
        fprintf(stderr, "evident keygen: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
    ev_key_free(k);
    ev_buf_free(&pub);
    return rc ? EV_EXIT_USAGE : EV_EXIT_OK;
}

int ev_cmd_sign(int argc, char **argv)
{
    const char *in = NULL, *key = NULL, *out = NULL, *sig_bundle = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(sign_usage, stdout);
            return EV_EXIT_OK;
        }
        if (!strcmp(a, "--version")) {
            printf("evident sign %s\n", EV_VERSION);
            return EV_EXIT_OK;
        }
        const char **slot = !strcmp(a, "--key")               ? &key
                            : !strcmp(a, "--out")             ? &out
                            : !strcmp(a, "--sigstore-bundle") ? &sig_bundle
                                                              : NULL;
        if (slot) {
            if (i + 1 >= argc || *slot) {
                fprintf(stderr, "evident sign: %s %s (try --help)\n", a,
                        *slot ? "given twice" : "needs a value");
                return EV_EXIT_USAGE;
            }
            *slot = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "evident sign: unknown argument '%s' (try --help)\n", a);
            return EV_EXIT_USAGE;
        } else if (!in) {
            in = a;
        } else {
            fprintf(stderr, "evident sign: one bundle only ('%s')\n", a);
            return EV_EXIT_USAGE;
        }
    }
    if (!in || !key) {
        fprintf(stderr, "evident sign: a bundle and --key KEY are required (try --help)\n");
        return EV_EXIT_USAGE;
    }

    ev_err err = {{0}};
    ev_key *k = NULL;
    ev_attest_bundle b = {0};
    ev_buf stmt = EV_BUF_INIT, text = EV_BUF_INIT, path = EV_BUF_INIT, sb = EV_BUF_INIT;
    cJSON *env = NULL;
    int code = EV_EXIT_USAGE;
    ev_status rc = ev_key_load(key, 1, &k, &err);
    if (rc)
        goto out;
    if ((rc = ev_attest_bundle_read(in, &b, &err))) {
        code = rc == EV_EFORMAT ? EV_EXIT_FAIL : EV_EXIT_USAGE;
        goto out;
    }
    code = EV_EXIT_FAIL;
    if ((rc = ev_attest_statement(b.m, b.n, &stmt, &err)) ||
        (rc = ev_dsse_sign(k, EV_DSSE_INTOTO, stmt.data, stmt.len, &env, &err)))
        goto out;
    if ((rc = ev_json_print(env, 1, &text)) ||
        (rc = out ? ev_buf_puts(&path, out) : ev_buf_printf(&path, "%s.intoto.json", in)))
        goto out;
    code = EV_EXIT_USAGE;
    if ((rc = ev_write_file(path.data, text.data, text.len, &err)))
        goto out;
    if (sig_bundle) {
        if ((rc = ev_attest_sigstore_bundle(env, k, &sb)) ||
            (rc = ev_write_file(sig_bundle, sb.data, sb.len, &err)))
            goto out;
    }
    printf("%s\n", path.data);
    code = EV_EXIT_OK;
out:
    if (rc)
        fprintf(stderr, "evident sign: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
    cJSON_Delete(env);
    ev_key_free(k);
    ev_attest_bundle_free(&b);
    ev_buf_free(&stmt);
    ev_buf_free(&text);
    ev_buf_free(&path);
    ev_buf_free(&sb);
    return code;
}
