/*
 * key.h: Ed25519 keys for signed receipts, on OpenSSL's libcrypto (the one
 * wrapper that turns OpenSSL's return codes into ev_status).  A key is read
 * from and written as PEM: PKCS#8 for the private half, SubjectPublicKeyInfo
 * for the public half, the files `openssl pkey` reads and writes.  A key's id
 * is the lowercase hex SHA-256 of its public half's DER (SubjectPublicKeyInfo);
 * the Sigstore bundle's publicKey hint is the base64 of the same digest.
 */
#ifndef EV_SIGN_KEY_H
#define EV_SIGN_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "sha256.h"
#include "status.h"

#define EV_ED25519_SIG_LEN 64
/* Key files are a few hundred bytes; anything larger is not one. */
#define EV_KEY_FILE_MAX (64u * 1024u)

typedef struct ev_key ev_key; /* opaque: an Ed25519 key, private or public only */

/* Generates a fresh Ed25519 key pair.  OUT: *out (ev_key_free); EV_ECRYPTO
 * (err says why) when OpenSSL cannot. */
ev_status ev_key_generate(ev_key **out, ev_err *err);

/* Writes the private half as PEM to priv_path (mode 0600) and the public
 * half as PEM to pub_path (mode 0644), each created exclusively: when
 * either name exists nothing is written (EV_EIO: a key is never
 * overwritten, neither half).  On failure the private file is removed
 * again.  EV_EINVAL when k holds no private half. */
ev_status ev_key_write(const ev_key *k, const char *priv_path, const char *pub_path, ev_err *err);

/* Reads a PEM key file: a public key, or a private key (whose public half is
 * then used too).  want_private: refuse a public-only file.  OUT: *out.
 * EV_EIO when the file cannot be read (a FIFO or device included);
 * EV_EFORMAT when it is no PEM key, not an Ed25519 one (err names the type
 * found), or encrypted with a passphrase (never prompted for: err says how
 * to decrypt it); EV_EUSAGE, as ssh refuses it, for a private key whose
 * mode lets group or others read or write it. */
ev_status ev_key_load(const char *path, int want_private, ev_key **out, ev_err *err);

/* Signs msg[0..n) (pure Ed25519, no pre-hash).  OUT: sig (64 bytes).
 * EV_EINVAL without a private half; EV_ECRYPTO when OpenSSL fails. */
ev_status ev_key_sign(const ev_key *k, const void *msg, size_t n, uint8_t sig[EV_ED25519_SIG_LEN],
                      ev_err *err);

/* Returns EV_OK when sig[0..sig_n) is k's signature of msg[0..n);
 * EV_EVERIFY when it is not (a wrong length included); EV_ECRYPTO when
 * OpenSSL could not check at all. */
ev_status ev_key_verify(const ev_key *k, const void *msg, size_t n, const uint8_t *sig, size_t sig_n,
                        ev_err *err);

/* The key id: hex SHA-256 of the public half's DER (lives as long as k). */
const char *ev_key_id(const ev_key *k);
/* The same digest as bytes (EV_SHA256_LEN of them). */
const uint8_t *ev_key_id_raw(const ev_key *k);

void ev_key_free(ev_key *k); /* NULL-safe */

#endif
