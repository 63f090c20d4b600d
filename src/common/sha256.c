/*
 * sha256.c: SHA-256 of buffers, streams and files through OpenSSL's EVP
 * interface, and lowercase hex encoding/decoding.
 *
 * OpenSSL reports success as 1 and failure as 0 (or NULL); every such call
 * goes through ossl_ok() below, the one place where those codes become
 * ev_status (EV_ECRYPTO).
 */
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "buf.h"

struct ev_sha256 {
    EVP_MD_CTX *ctx;
    int finished; /* 1 after ev_sha256_final: further use is refused */
};

/* Translates an OpenSSL 1-for-success return into ev_status. */
static ev_status ossl_ok(int r)
{
    return r == 1 ? EV_OK : EV_ECRYPTO;
}

/* Starts a streaming digest.  OUT: *out (free with ev_sha256_free);
 * untouched on failure (EV_ENOMEM, EV_ECRYPTO). */
ev_status ev_sha256_new(ev_sha256 **out)
{
    ev_status rc = EV_OK;
    ev_sha256 *h = calloc(1, sizeof *h);

    if (!h)
        return EV_ENOMEM;
    h->ctx = EVP_MD_CTX_new();
    if (!h->ctx) {
        rc = EV_ENOMEM;
        goto out;
    }
    rc = ossl_ok(EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL));
    if (rc)
        goto out;
    *out = h;
    h = NULL;
out:
    ev_sha256_free(h);
    return rc;
}

/* Feeds n bytes; EV_EINVAL after final, EV_ECRYPTO if OpenSSL fails. */
ev_status ev_sha256_update(ev_sha256 *h, const void *p, size_t n)
{
    if (h->finished)
        return EV_EINVAL;
    if (n == 0)
        return EV_OK;
    return ossl_ok(EVP_DigestUpdate(h->ctx, p, n));
}

/* Finishes the digest into out[32] (written only on success).  The context
 * cannot be updated afterwards (EV_EINVAL); it must still be freed. */
ev_status ev_sha256_final(ev_sha256 *h, uint8_t out[EV_SHA256_LEN])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    ev_status rc;

    if (h->finished)
        return EV_EINVAL;
    h->finished = 1;
    rc = ossl_ok(EVP_DigestFinal_ex(h->ctx, md, &len));
    if (rc)
        return rc;
    if (len != EV_SHA256_LEN)
        return EV_ECRYPTO;
    memcpy(out, md, EV_SHA256_LEN);
    return EV_OK;
}

/* Frees a streaming context; NULL-safe. */
void ev_sha256_free(ev_sha256 *h)
{
    if (!h)
        return;
    EVP_MD_CTX_free(h->ctx);
    free(h);
}

/* One-shot digest of p[0..n) into out[32] (written only on success). */
ev_status ev_sha256_buf(const void *p, size_t n, uint8_t out[EV_SHA256_LEN])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    static const char empty = 0;
    ev_status rc;

    rc = ossl_ok(EVP_Digest(n ? p : &empty, n, md, &len, EVP_sha256(), NULL));
    if (rc)
        return rc;
    if (len != EV_SHA256_LEN)
        return EV_ECRYPTO;
    memcpy(out, md, EV_SHA256_LEN);
    return EV_OK;
}

/* Digest of the file at path, read in 64 KiB chunks.  out written only on
 * success; EV_EIO with err "path: reason" when it cannot be read. */
ev_status ev_sha256_file(const char *path, uint8_t out[EV_SHA256_LEN], ev_err *err)
{
    enum { CHUNK = 65536 };
    ev_status rc = EV_OK;
    ev_sha256 *h = NULL;
    unsigned char *chunk = NULL;
    int fd = -1;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = ev_err_set(err, EV_EIO, "%s: cannot open: %s", path, strerror(errno));
        goto out;
    }
    chunk = malloc(CHUNK);
    if (!chunk) {
        rc = ev_err_set(err, EV_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    rc = ev_sha256_new(&h);
    if (rc) {
        ev_err_set(err, rc, "%s: cannot start digest: %s", path, ev_strerror(rc));
        goto out;
    }
    for (;;) {
        size_t got;
        if ((rc = ev_read_some(fd, path, chunk, CHUNK, &got, err)))
            goto out;
        if (got == 0)
            break;
        rc = ev_sha256_update(h, chunk, got);
        if (rc) {
            ev_err_set(err, rc, "%s: digest failed: %s", path, ev_strerror(rc));
            goto out;
        }
    }
    rc = ev_sha256_final(h, out);
    if (rc)
        ev_err_set(err, rc, "%s: digest failed: %s", path, ev_strerror(rc));
out:
    if (fd >= 0)
        close(fd);
    free(chunk);
    ev_sha256_free(h);
    return rc;
}

/* Digest of p[0..n) as 64 lowercase hex digits + NUL in hex[65]. */
ev_status ev_sha256_hex(const void *p, size_t n, char hex[EV_SHA256_HEX_LEN + 1])
{
    uint8_t md[EV_SHA256_LEN];
    ev_status rc = ev_sha256_buf(p, n, md);
    if (rc)
        return rc;
    ev_hex_encode(md, sizeof md, hex);
    return EV_OK;
}

/* Writes 2n lowercase hex digits and a NUL into out. */
void ev_hex_encode(const uint8_t *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;

    for (i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

/* Returns the value of hex digit c (either case), or -1. */
static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Decodes hex, which must be exactly 2n hex digits followed by its NUL
 * (a shorter or longer string, or any non-hex character, is EV_EFORMAT).
 * out[n] is written only on success.
 */
ev_status ev_hex_decode(const char *hex, size_t n, uint8_t *out)
{
    size_t i, digits;

    if (ev_size_mul(n, 2, &digits))
        return EV_EFORMAT;
    for (i = 0; i < digits; i++)
        if (hex_value(hex[i]) < 0) /* also stops at the NUL of a short string */
            return EV_EFORMAT;
    if (hex[digits] != '\0')
        return EV_EFORMAT;
    for (i = 0; i < n; i++)
        out[i] = (uint8_t)(hex_value(hex[2 * i]) << 4 | hex_value(hex[2 * i + 1]));
    return EV_OK;
}
