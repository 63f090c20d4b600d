/*
 * sha256.h: SHA-256 of buffers, streams and files (OpenSSL EVP), and hex.
 * OpenSSL's 1-for-success codes are translated to ev_status here, once.
 */
#ifndef EV_SHA256_H
#define EV_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define EV_SHA256_LEN     32
#define EV_SHA256_HEX_LEN 64 /* plus one for the NUL */

typedef struct ev_sha256 ev_sha256; /* opaque streaming context */

/* Digest of n bytes at p into out[32]. */
ev_status ev_sha256_buf(const void *p, size_t n, uint8_t out[EV_SHA256_LEN]);
/* Streaming: new -> update* -> final; free is NULL-safe. */
ev_status ev_sha256_new(ev_sha256 **out);
ev_status ev_sha256_update(ev_sha256 *h, const void *p, size_t n);
ev_status ev_sha256_final(ev_sha256 *h, uint8_t out[EV_SHA256_LEN]);
void ev_sha256_free(ev_sha256 *h);
/* Digest of a whole file, read in chunks; EV_EIO with err set on failure. */
ev_status ev_sha256_file(const char *path, uint8_t out[EV_SHA256_LEN], ev_err *err);
/* Convenience: digest of p as 64 lowercase hex digits + NUL into hex[65]. */
ev_status ev_sha256_hex(const void *p, size_t n, char hex[EV_SHA256_HEX_LEN + 1]);

/* Lowercase hex of n bytes into out (2n+1 bytes incl. NUL). */
void ev_hex_encode(const uint8_t *p, size_t n, char *out);
/* Decodes exactly 2n hex digits (either case) into out[n]; EV_EFORMAT otherwise. */
ev_status ev_hex_decode(const char *hex, size_t n, uint8_t *out);

#endif
