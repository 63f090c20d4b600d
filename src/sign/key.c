/*
 * key.c: Ed25519 key generation, PEM files, signing and verifying through
 * OpenSSL 3's EVP interface (EVP_PKEY_ED25519, EVP_DigestSign/Verify with a
 * NULL digest: pure Ed25519).  ossl_status is the one place OpenSSL's
 * "1 for success" and its error queue become an ev_status.
 */
#include "sign/key.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "buf.h"

struct ev_key {
    EVP_PKEY *pk;
    int has_private;
    uint8_t id[EV_SHA256_LEN];
    char id_hex[EV_SHA256_HEX_LEN + 1];
};

/* The translation point: ok == 1 is EV_OK; anything else is EV_ECRYPTO with
 * err saying what failed and OpenSSL's first queued reason (the queue is
 * then cleared).  Returns the status. */
static ev_status ossl_status(int ok, const char *what, ev_err *err)
{
    if (ok == 1)
        return EV_OK;
    unsigned long e = ERR_get_error();
    char why[256] = "no OpenSSL reason";
    if (e)
        ERR_error_string_n(e, why, sizeof why);
    ERR_clear_error();
    return ev_err_set(err, EV_ECRYPTO, "%s: %s", what, why);
}

/* Fills k->id and k->id_hex from k->pk's public DER.  EV_ECRYPTO/EV_ENOMEM. */
static ev_status key_fill_id(ev_key *k, ev_err *err)
{
    unsigned char *der = NULL;
    int n = i2d_PUBKEY(k->pk, &der);
    if (n <= 0)
        return ossl_status(0, "encode the public key", err);
    ev_status rc = ev_sha256_buf(der, (size_t)n, k->id);
    OPENSSL_free(der);
    if (!rc)
        ev_hex_encode(k->id, EV_SHA256_LEN, k->id_hex);
    return rc;
}

/* Wraps pk (taking it) into a new ev_key.  OUT: *out.  Frees pk on failure. */
static ev_status key_wrap(EVP_PKEY *pk, int has_private, ev_key **out, ev_err *err)
{
    ev_key *k = calloc(1, sizeof *k);
    if (!k) {
        EVP_PKEY_free(pk);
        return ev_err_set(err, EV_ENOMEM, "out of memory");
    }
    k->pk = pk;
    k->has_private = has_private;
    ev_status rc = key_fill_id(k, err);
    if (rc) {
        ev_key_free(k);
        return rc;
    }
    *out = k;
    return EV_OK;
}

ev_status ev_key_generate(ev_key **out, ev_err *err)
{
    EVP_PKEY *pk = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    ev_status rc = ossl_status(ctx != NULL, "create an Ed25519 context", err);
    if (!rc)
        rc = ossl_status(EVP_PKEY_keygen_init(ctx), "start Ed25519 key generation", err);
    if (!rc)
        rc = ossl_status(EVP_PKEY_keygen(ctx, &pk), "generate an Ed25519 key", err);
    EVP_PKEY_CTX_free(ctx);
    if (rc)
        return rc;
    return key_wrap(pk, 1, out, err);
}

/* Returns PEM text of k (private when priv, else public) in *out (empty on
 * entry).  EV_ECRYPTO / EV_ENOMEM. */
static ev_status key_pem(const ev_key *k, int priv, ev_buf *out, ev_err *err)
{
    BIO *bio = BIO_new(BIO_s_mem());
    ev_status rc = ossl_status(bio != NULL, "create a memory BIO", err);
    if (!rc)
        rc = ossl_status(priv ? PEM_write_bio_PrivateKey(bio, k->pk, NULL, NULL, 0, NULL, NULL)
                              : PEM_write_bio_PUBKEY(bio, k->pk),
                         priv ? "write the private key as PEM" : "write the public key as PEM", err);
    if (!rc) {
        char *p = NULL;
        long n = BIO_get_mem_data(bio, &p);
        rc = n > 0 ? ev_buf_append(out, p, (size_t)n) : ossl_status(0, "read the PEM text", err);
    }
    BIO_free(bio);
    return rc;
}

/* Writes p[0..n) to a new file path with the given mode (O_EXCL: never
 * over an existing file) and fsyncs it.  EV_EIO (err says why); a partial
 * file is removed. */
static ev_status write_new_private(const char *path, const char *p, size_t n, mode_t mode, ev_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return ev_err_set(err, EV_EIO, "cannot create '%s': %s%s", path, strerror(errno),
                          errno == EEXIST ? " (a key is never overwritten: remove it or pick another name)"
                                          : "");
    ev_status rc = EV_OK;
    if (fchmod(fd, mode) != 0)
        rc = ev_err_set(err, EV_EIO, "cannot set mode %04o on '%s': %s", (unsigned)mode, path,
                        strerror(errno));
    size_t off = 0;
    while (!rc && off < n) {
        ssize_t w = write(fd, p + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = ev_err_set(err, EV_EIO, "cannot write '%s': %s", path, strerror(errno));
        else
            off += (size_t)w;
    }
    if (!rc && fsync(fd) != 0)
        rc = ev_err_set(err, EV_EIO, "cannot sync '%s': %s", path, strerror(errno));
    if (close(fd) != 0 && !rc)
        rc = ev_err_set(err, EV_EIO, "cannot close '%s': %s", path, strerror(errno));
    if (rc)
        unlink(path);
    return rc;
}

ev_status ev_key_write(const ev_key *k, const char *priv_path, const char *pub_path, ev_err *err)
{
    ev_buf priv = EV_BUF_INIT, pub = EV_BUF_INIT;
    ev_status rc = EV_OK;
    if (!k->has_private) {
        rc = ev_err_set(err, EV_EINVAL, "the key holds no private half");
        goto out;
    }
    if ((rc = key_pem(k, 1, &priv, err)) || (rc = key_pem(k, 0, &pub, err)))
        goto out;
    /* Neither half is ever overwritten: both names are checked before
     * anything is written, and each file is then created exclusively. */
    {
        struct stat st;
        const char *taken = !lstat(priv_path, &st) ? priv_path : !lstat(pub_path, &st) ? pub_path : NULL;
        if (taken) {
            rc =
                ev_err_set(err, EV_EIO,
                           "'%s' exists (a key is never overwritten: remove it or pick another name)", taken);
            goto out;
        }
    }
    if ((rc = write_new_private(priv_path, priv.data, priv.len, 0600, err)))
        goto out;
    if ((rc = write_new_private(pub_path, pub.data, pub.len, 0644, err)))
        unlink(priv_path);
out:
    if (priv.data)
        OPENSSL_cleanse(priv.data, priv.len);
    ev_buf_free(&priv);
    ev_buf_free(&pub);
    return rc;
}

/* The passphrase callback OpenSSL calls for an encrypted PEM key: never a
 * prompt (OpenSSL's default reads the terminal, and waits when there is
 * one); it notes that a passphrase was asked for and gives none. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    *(int *)u = 1;
    return -1;
}

/* Reads the key file at path (a regular file of at most EV_KEY_FILE_MAX
 * bytes) into text.  OUT: *mode, its permission bits.  EV_EIO (err says
 * why) or EV_EFORMAT (too large to be a key). */
static ev_status read_key_file(const char *path, ev_buf *text, mode_t *mode, ev_err *err)
{
    struct stat st;
    ev_status rc = ev_read_file_max(path, EV_KEY_FILE_MAX, text, err);
    if (rc == EV_ERANGE)
        return ev_err_set(err, EV_EFORMAT, "key file '%s' is larger than %u bytes: not a PEM key", path,
                          EV_KEY_FILE_MAX);
    if (rc)
        return EV_EIO;
    if (stat(path, &st))
        return ev_err_set(err, EV_EIO, "%s: cannot stat: %s", path, strerror(errno));
    *mode = st.st_mode & 07777;
    return EV_OK;
}

ev_status ev_key_load(const char *path, int want_private, ev_key **out, ev_err *err)
{
    ev_buf text = EV_BUF_INIT;
    EVP_PKEY *pk = NULL;
    mode_t mode = 0;
    int priv = 0, asked = 0;
    ev_status rc = read_key_file(path, &text, &mode, err);
    if (rc)
        goto out;
    BIO *bio = BIO_new_mem_buf(text.data, (int)text.len);
    if (!bio) {
        rc = ossl_status(0, "create a memory BIO", err);
        goto out;
    }
    if (!want_private)
        pk = PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, &asked);
    if (!pk) {
        (void)BIO_reset(bio);
        pk = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, &asked);
        priv = pk != NULL;
    }
    BIO_free(bio);
    ERR_clear_error();
    if (!pk && (asked || strstr(text.data, "-----BEGIN ENCRYPTED PRIVATE KEY-----") ||
                strstr(text.data, "Proc-Type: 4,ENCRYPTED"))) {
        rc = ev_err_set(err, EV_EFORMAT,
                        "'%s' is encrypted with a passphrase: evident reads unencrypted keys and never "
                        "prompts; write a decrypted copy (openssl pkey -in %s -out KEY, then chmod 600 KEY) "
                        "and keep it on the measuring host",
                        path, path);
        goto out;
    }
    if (!pk) {
        rc = ev_err_set(err, EV_EFORMAT, "'%s' holds no PEM %s key: give the file 'evident keygen' wrote",
                        path, want_private ? "private" : "public or private");
        goto out;
    }
    /* As ssh: a private key others can read (or write) is not used. */
    if (priv && (mode & 077)) {
        rc = ev_err_set(err, EV_EUSAGE,
                        "'%s' is a private key readable or writable by group or others (mode %04o): it must "
                        "be yours alone; chmod 600 %s (and ask whether it has leaked)",
                        path, (unsigned)mode, path);
        EVP_PKEY_free(pk);
        goto out;
    }
    if (EVP_PKEY_get_id(pk) != EVP_PKEY_ED25519) {
        rc =
            ev_err_set(err, EV_EFORMAT, "'%s' is a %s key, not Ed25519: give the file 'evident keygen' wrote",
                       path, OBJ_nid2sn(EVP_PKEY_get_id(pk)));
        EVP_PKEY_free(pk);
        goto out;
    }
    rc = key_wrap(pk, priv, out, err);
out:
    if (text.data)
        OPENSSL_cleanse(text.data, text.len);
    ev_buf_free(&text);
    return rc;
}

ev_status ev_key_sign(const ev_key *k, const void *msg, size_t n, uint8_t sig[EV_ED25519_SIG_LEN],
                      ev_err *err)
{
    if (!k->has_private)
        return ev_err_set(err, EV_EINVAL, "signing needs the private key, not the .pub file");
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    size_t sl = EV_ED25519_SIG_LEN;
    ev_status rc = ossl_status(md != NULL, "create a signing context", err);
    if (!rc)
        rc = ossl_status(EVP_DigestSignInit(md, NULL, NULL, NULL, k->pk), "start Ed25519 signing", err);
    if (!rc)
        rc = ossl_status(EVP_DigestSign(md, sig, &sl, msg, n), "sign", err);
    if (!rc && sl != EV_ED25519_SIG_LEN)
        rc = ev_err_set(err, EV_ECRYPTO, "OpenSSL made a %zu-byte Ed25519 signature", sl);
    EVP_MD_CTX_free(md);
    return rc;
}

ev_status ev_key_verify(const ev_key *k, const void *msg, size_t n, const uint8_t *sig, size_t sig_n,
                        ev_err *err)
{
    if (sig_n != EV_ED25519_SIG_LEN)
        return ev_err_set(err, EV_EVERIFY, "the signature is %zu bytes, an Ed25519 signature is 64", sig_n);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    ev_status rc = ossl_status(md != NULL, "create a verifying context", err);
    if (!rc)
        rc = ossl_status(EVP_DigestVerifyInit(md, NULL, NULL, NULL, k->pk), "start Ed25519 verifying", err);
    if (!rc) {
        /* 1: good; 0: a bad signature; below 0: could not check. */
        int v = EVP_DigestVerify(md, sig, sig_n, msg, n);
        if (v == 0) {
            ERR_clear_error();
            rc = ev_err_set(err, EV_EVERIFY, "the signature does not verify with key %s", k->id_hex);
        } else {
            rc = ossl_status(v, "verify", err);
        }
    }
    EVP_MD_CTX_free(md);
    return rc;
}

const char *ev_key_id(const ev_key *k)
{
    return k->id_hex;
}

const uint8_t *ev_key_id_raw(const ev_key *k)
{
    return k->id;
}

void ev_key_free(ev_key *k)
{
    if (!k)
        return;
    EVP_PKEY_free(k->pk);
    free(k);
}
