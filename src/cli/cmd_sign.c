/*
 * cmd_sign.c: 'evident keygen --out KEY' and 'evident sign BUNDLE.zip --key
 * KEY [--out FILE] [--sigstore-bundle FILE]'.
 *
 * keygen writes an Ed25519 key pair: KEY (PKCS#8 PEM, mode 0600, never
 * over an existing file) and KEY.pub (public PEM).  sign reads the bundle
 * with the hardened reader, builds the in-toto Statement of its raw
 * members and records (src/sign/attest.h), signs it into a DSSE envelope
 * and writes BUNDLE.zip.intoto.json (or --out), and with --sigstore-bundle
 * the same envelope as a Sigstore bundle v0.3 ('-' for either: stdout;
 * options and paths are read by the shared parser, cli_args.c).  Exit 0 success, 1 the
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

static const char keygen_usage[] =
    "usage: evident keygen --out KEY\n"
    "\n"
    "Writes a new Ed25519 key pair: KEY, the private key (PEM, mode 0600) and\n"
    "KEY.pub, the public key (PEM); when either exists nothing is written.\n"
    "Keep KEY on the host that measures; publish KEY.pub beside the bundle.\n"
    "\n"
    "exit status: 0 success, 2 usage error or unwritable path\n";

static const char sign_usage[] =
    "usage: evident sign BUNDLE.zip --key KEY [--out FILE] [--sigstore-bundle FILE]\n"
    "\n"
    "Signs the raw records of a bundle (protocol.json, samples.csv, sources/,\n"
    "outputs/, each environment and process record, every other record of\n"
    "every attempt): an in-toto Statement v1\n"
    "with SLSA provenance v1, in a DSSE envelope signed with Ed25519.  A\n"
    "re-export with new derivation code keeps the signature valid; a changed\n"
    "raw record breaks it.  verify-bundle BUNDLE.zip --key KEY.pub checks it.\n"
    "\n"
    "  --key FILE              the private key 'evident keygen' wrote (mode 600:\n"
    "                          one group or others can read is refused; an\n"
    "                          encrypted one too, never prompted for)\n"
    "  --out FILE              the envelope (default BUNDLE.zip.intoto.json)\n"
    "  --sigstore-bundle FILE  also write the envelope as a Sigstore bundle v0.3\n"
    "                          (public-key hint, no transparency-log entry)\n"
    "\n"
    "exit status: 0 success, 1 not a bundle that can be signed, 2 usage or unreadable path\n";

int ev_cmd_keygen(int argc, char **argv)
{
    static const ev_cli_opt opts[] = {{"--out", 1}};
    const char *out = NULL, *v = NULL;
    ev_cli cli;
    int k_opt, code;

    ev_cli_init(&cli, "evident keygen", opts, 1, argc, argv);
    while ((k_opt = ev_cli_step(&cli, keygen_usage, &v, &code)) != EV_CLI_END) {
        switch (k_opt) {
        case EV_CLI_EXIT:
            return code;
        case EV_CLI_POSITIONAL:
            return ev_cli_unexpected(&cli, v);
        default:
            out = v;
            break;
        }
    }
    if (!out || !out[0])
        return ev_cli_usage(cli.cmd, "--out KEY is required");
    if (ev_cli_is_std(out))
        return ev_cli_usage(cli.cmd, "--out -: a key pair is two files (KEY and KEY.pub), not stdout");
    if ((code = ev_cli_output(cli.cmd, "--out", out)))
        return code;
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
    static const ev_cli_opt opts[] = {{"--key", 1}, {"--out", 1}, {"--sigstore-bundle", 1}};
    const char *in = NULL, *key = NULL, *out = NULL, *sig_bundle = NULL, *v = NULL;
    ev_cli cli;
    int k_opt, bad;

    ev_cli_init(&cli, "evident sign", opts, 3, argc, argv);
    while ((k_opt = ev_cli_step(&cli, sign_usage, &v, &bad)) != EV_CLI_END) {
        switch (k_opt) {
        case EV_CLI_EXIT:
            return bad;
        case EV_CLI_POSITIONAL:
            if (in)
                return ev_cli_usage(cli.cmd, "one bundle only ('%s')", v);
            in = v;
            break;
        case 0:
            key = v;
            break;
        case 1:
            out = v;
            break;
        default:
            sig_bundle = v;
            break;
        }
    }
    if (!in || !key)
        return ev_cli_usage(cli.cmd, "a bundle and --key KEY are required");
    if (ev_cli_is_std(in))
        return ev_cli_usage(cli.cmd, "the bundle must be a file, not '-' (the envelope is named after it)");
    if (out && sig_bundle && ev_cli_is_std(out) && ev_cli_is_std(sig_bundle))
        return ev_cli_usage(cli.cmd, "--out and --sigstore-bundle cannot both be '-'");
    if ((bad = ev_cli_input(cli.cmd, "bundle", in)) || (bad = ev_cli_input(cli.cmd, "--key", key)) ||
        (out && (bad = ev_cli_output(cli.cmd, "--out", out))) ||
        (sig_bundle && (bad = ev_cli_output(cli.cmd, "--sigstore-bundle", sig_bundle))))
        return bad;

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
    if ((code = ev_cli_write("evident sign", path.data, text.data, text.len)))
        goto out;
    code = EV_EXIT_FAIL;
    if (sig_bundle) {
        if ((rc = ev_attest_sigstore_bundle(env, k, &sb)))
            goto out;
        if ((code = ev_cli_write("evident sign", sig_bundle, sb.data, sb.len)))
            goto out;
    }
    if (!ev_cli_is_std(path.data))
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
