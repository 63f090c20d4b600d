/*
 * dsse.h: DSSE envelopes (github.com/secure-systems-lab/dsse, v1.0) and the
 * strict base64 they carry.
 *
 * An envelope is {"payload": base64(body), "payloadType": TYPE,
 * "signatures": [{"keyid": ID, "sig": base64(sig)}]}; the bytes signed are
 * PAE(TYPE, body) = "DSSEv1" SP len(TYPE) SP TYPE SP len(body) SP body, the
 * lengths in ASCII decimal.  Reading is strict, since an envelope comes from
 * anyone: at most EV_DSSE_MAX_BYTES (the caller refuses a larger file by its
 * size, before reading it), JSON by src/common/json.h (duplicate keys,
 * trailing bytes, bad UTF-8 refused), only the three keys above, exactly
 * one signature, and canonical standard base64 (padding required, no
 * whitespace, no URL alphabet, unused low bits zero), so one envelope has
 * one spelling.
 */
#ifndef EV_SIGN_DSSE_H
#define EV_SIGN_DSSE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "sign/key.h"
#include "status.h"

#define EV_DSSE_MAX_BYTES (16u * 1024u * 1024u)
#define EV_DSSE_INTOTO    "application/vnd.in-toto+json"

/* An envelope as read.  Strings are owned; ev_dsse_clear frees them. */
typedef struct ev_dsse {
    char *payload_type;
    ev_buf payload; /* the decoded body */
    char *keyid;    /* NULL when the signature names none */
    uint8_t *sig;   /* decoded signature bytes */
    size_t sig_n;
} ev_dsse;

/* Appends PAE(type, body[0..n)) to out.  EV_ENOMEM. */
ev_status ev_dsse_pae(const char *type, const void *body, size_t n, ev_buf *out);

/* Appends the canonical standard base64 of p[0..n) to out.  EV_ENOMEM. */
ev_status ev_base64_encode(const void *p, size_t n, ev_buf *out);

/* Decodes s[0..n) when it is canonical standard base64 (see above) into out
 * (appended).  EV_EFORMAT with err naming the offending offset otherwise;
 * out is then left as it was. */
ev_status ev_base64_decode(const char *s, size_t n, ev_buf *out, ev_err *err);

/* Parses envelope bytes p[0..n).  OUT: *d (ev_dsse_clear); untouched on
 * failure.  EV_EFORMAT with err giving the one reason (size, JSON, keys,
 * types, signature count, base64); EV_ENOMEM. */
ev_status ev_dsse_parse(const char *p, size_t n, ev_dsse *d, ev_err *err);

void ev_dsse_clear(ev_dsse *d); /* NULL-safe; leaves *d empty */

/* Signs PAE(type, body) with k and builds the envelope.  OUT: *env, a tree
 * with keys payload, payloadType, signatures (cJSON_Delete).  EV_ENOMEM,
 * EV_ECRYPTO, EV_EINVAL (no private half). */
ev_status ev_dsse_sign(const ev_key *k, const char *type, const void *body, size_t n, cJSON **env,
                       ev_err *err);

/* Checks d's one signature over PAE(d's type, d's payload) with k.  EV_OK,
 * or EV_EVERIFY with err saying why (the keyid must be present and be k's,
 * although DSSE makes it optional: evident's envelopes always carry it;
 * the signature must verify); EV_ECRYPTO/EV_ENOMEM when it cannot check. */
ev_status ev_dsse_verify(const ev_dsse *d, const ev_key *k, ev_err *err);

#endif
