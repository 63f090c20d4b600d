/*
 * dsse.c: PAE, strict base64, and the DSSE envelope's reader and writer
 * (dsse.h says what is refused and why).
 */
#include "sign/dsse.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

static const char b64_alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

ev_status ev_dsse_pae(const char *type, const void *body, size_t n, ev_buf *out)
{
    ev_status rc = ev_buf_printf(out, "DSSEv1 %zu %s %zu ", strlen(type), type, n);
    if (!rc && n)
        rc = ev_buf_append(out, body, n);
    return rc;
}

ev_status ev_base64_encode(const void *p, size_t n, ev_buf *out)
{
    const uint8_t *s = p;
    ev_status rc = ev_buf_append(out, "", 0);
    for (size_t i = 0; !rc && i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        size_t left = n - i;
        if (left > 1)
            v |= (uint32_t)s[i + 1] << 8;
        if (left > 2)
            v |= s[i + 2];
        char q[4] = {b64_alpha[(v >> 18) & 63], b64_alpha[(v >> 12) & 63],
                     left > 1 ? b64_alpha[(v >> 6) & 63] : '=', left > 2 ? b64_alpha[v & 63] : '='};
        rc = ev_buf_append(out, q, 4);
    }
    return rc;
}

/* Returns the 6-bit value of base64 character c, or -1. */
static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

ev_status ev_base64_decode(const char *s, size_t n, ev_buf *out, ev_err *err)
{
    if (n % 4)
        return ev_err_set(err, EV_EFORMAT, "base64 of %zu characters: not a multiple of 4 (padding required)",
                          n);
    size_t start = out->len;
    ev_status rc = ev_buf_append(out, "", 0);
    for (size_t i = 0; !rc && i < n; i += 4) {
        int v[4], pad = 0;
        for (int j = 0; j < 4; j++) {
            unsigned char c = (unsigned char)s[i + j];
            if (c == '=' && i + 4 == n && j >= 2 && (j == 3 || s[i + 3] == '=')) {
                v[j] = 0;
                pad++;
                continue;
            }
            v[j] = pad ? -1 : b64_value(c);
            if (v[j] < 0) {
                rc = ev_err_set(err, EV_EFORMAT,
                                "base64 character %zu is %s%c%s: only A-Z a-z 0-9 + / and final '=' padding",
                                i + j, c >= 0x20 && c < 0x7f ? "'" : "byte 0x",
                                c >= 0x20 && c < 0x7f ? c : '?', c >= 0x20 && c < 0x7f ? "'" : "");
                break;
            }
        }
        if (rc)
            break;
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff))) {
            rc = ev_err_set(err, EV_EFORMAT,
                            "base64 is not canonical: the unused bits before the padding at %zu "
                            "are not zero",
                            i);
            break;
        }
        uint8_t b[3] = {(uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w};
        rc = ev_buf_append(out, b, (size_t)(3 - pad));
    }
    if (rc) {
        out->len = start;
        if (out->data)
            out->data[start] = '\0';
    }
    return rc;
}

void ev_dsse_clear(ev_dsse *d)
{
    if (!d)
        return;
    free(d->payload_type);
    ev_buf_free(&d->payload);
    free(d->keyid);
    free(d->sig);
    memset(d, 0, sizeof *d);
}

/* Returns 1 when key is one of the NULL-terminated names. */
static int key_in(const char *key, const char *const *names)
{
    for (; *names; names++)
        if (!strcmp(key, *names))
            return 1;
    return 0;
}

/* EV_EFORMAT naming the first key of object o not among names. */
static ev_status only_keys(const cJSON *o, const char *const *names, const char *where, ev_err *err)
{
    for (const cJSON *c = o->child; c; c = c->next)
        if (!key_in(c->string, names))
            return ev_err_set(err, EV_EFORMAT, "%s has the unknown key '%s'", where, c->string);
    return EV_OK;
}

ev_status ev_dsse_parse(const char *p, size_t n, ev_dsse *d, ev_err *err)
{
    static const char *const env_keys[] = {"payload", "payloadType", "signatures", NULL};
    static const char *const sig_keys[] = {"keyid", "sig", NULL};
    ev_dsse x = {0};
    cJSON *root = NULL;
    ev_buf sig = EV_BUF_INIT;
    ev_status rc = EV_OK;

    if (n > EV_DSSE_MAX_BYTES) {
        rc = ev_err_set(err, EV_EFORMAT, "the envelope is %zu bytes, more than the %u-byte cap", n,
                        EV_DSSE_MAX_BYTES);
        goto out;
    }
    if ((rc = ev_json_parse(p, n, 0, &root, err))) {
        if (rc != EV_ENOMEM) {
            ev_err_prefix(err, "the envelope is not strict JSON");
            rc = EV_EFORMAT;
        }
        goto out;
    }
    rc = EV_EFORMAT;
    if (!cJSON_IsObject(root)) {
        ev_err_set(err, rc, "the envelope is not a JSON object");
        goto out;
    }
    if ((rc = only_keys(root, env_keys, "the envelope", err)))
        goto out;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "payloadType");
    const cJSON *payload = cJSON_GetObjectItemCaseSensitive(root, "payload");
    const cJSON *sigs = cJSON_GetObjectItemCaseSensitive(root, "signatures");
    rc = EV_EFORMAT;
    if (!cJSON_IsString(type) || !cJSON_IsString(payload) || !cJSON_IsArray(sigs)) {
        ev_err_set(err, rc,
                   "the envelope needs the strings payloadType and payload and the array signatures");
        goto out;
    }
    int ns = cJSON_GetArraySize(sigs);
    if (ns != 1) {
        ev_err_set(err, rc,
                   "the envelope holds %d signatures: evident signs with one key, so exactly one is read",
                   ns);
        goto out;
    }
    const cJSON *s0 = sigs->child;
    if (!cJSON_IsObject(s0)) {
        ev_err_set(err, rc, "the signature is not a JSON object");
        goto out;
    }
    if ((rc = only_keys(s0, sig_keys, "the signature", err)))
        goto out;
    const cJSON *sv = cJSON_GetObjectItemCaseSensitive(s0, "sig");
    const cJSON *kid = cJSON_GetObjectItemCaseSensitive(s0, "keyid");
    rc = EV_EFORMAT;
    if (!cJSON_IsString(sv) || (kid && !cJSON_IsString(kid))) {
        ev_err_set(err, rc, "the signature needs a string sig (and keyid, when present, a string)");
        goto out;
    }
    if ((rc = ev_base64_decode(payload->valuestring, strlen(payload->valuestring), &x.payload, err))) {
        ev_err_prefix(err, "payload");
        goto out;
    }
    if ((rc = ev_base64_decode(sv->valuestring, strlen(sv->valuestring), &sig, err))) {
        ev_err_prefix(err, "sig");
        goto out;
    }
    rc = EV_ENOMEM;
    x.payload_type = strdup(type->valuestring);
    x.keyid = kid ? strdup(kid->valuestring) : NULL;
    if (!x.payload_type || (kid && !x.keyid))
        goto out;
    x.sig_n = sig.len;
    x.sig = (uint8_t *)ev_buf_steal(&sig, NULL);
    if (!x.sig)
        goto out;
    *d = x;
    memset(&x, 0, sizeof x);
    rc = EV_OK;
out:
    if (rc == EV_ENOMEM)
        ev_err_set(err, rc, "out of memory reading the envelope");
    cJSON_Delete(root);
    ev_buf_free(&sig);
    ev_dsse_clear(&x);
    return rc;
}

ev_status ev_dsse_sign(const ev_key *k, const char *type, const void *body, size_t n, cJSON **env,
                       ev_err *err)
{
    ev_buf pae = EV_BUF_INIT, b64 = EV_BUF_INIT, s64 = EV_BUF_INIT;
    uint8_t sig[EV_ED25519_SIG_LEN];
    cJSON *root = NULL;
    ev_status rc = ev_dsse_pae(type, body, n, &pae);
    if (!rc)
        rc = ev_key_sign(k, pae.data, pae.len, sig, err);
    if (!rc && !(rc = ev_base64_encode(body, n, &b64)))
        rc = ev_base64_encode(sig, sizeof sig, &s64);
    if (rc)
        goto out;
    rc = EV_ENOMEM;
    root = cJSON_CreateObject();
    if (!root || ev_json_add_str(root, "payload", b64.data) || ev_json_add_str(root, "payloadType", type))
        goto out;
    cJSON *sigs = cJSON_AddArrayToObject(root, "signatures");
    cJSON *s0 = cJSON_CreateObject();
    if (!sigs || !s0 || !cJSON_AddItemToArray(sigs, s0)) {
        cJSON_Delete(s0);
        goto out;
    }
    if (ev_json_add_str(s0, "keyid", ev_key_id(k)) || ev_json_add_str(s0, "sig", s64.data))
        goto out;
    *env = root;
    root = NULL;
    rc = EV_OK;
out:
    if (rc == EV_ENOMEM)
        ev_err_set(err, rc, "out of memory building the envelope");
    cJSON_Delete(root);
    ev_buf_free(&pae);
    ev_buf_free(&b64);
    ev_buf_free(&s64);
    return rc;
}

ev_status ev_dsse_verify(const ev_dsse *d, const ev_key *k, ev_err *err)
{
    /* DSSE makes keyid optional; evident sign always writes it, and an
     * envelope verified against a named key must name that key: one
     * without (or with an empty one) is refused, not let through. */
    if (!d->keyid || !d->keyid[0])
        return ev_err_set(err, EV_EVERIFY,
                          "the envelope's signature names no keyid: evident sign writes the key's id (hex "
                          "SHA-256 of its public key) and verify-bundle requires it to be the given key's %s",
                          ev_key_id(k));
    if (strcmp(d->keyid, ev_key_id(k)))
        return ev_err_set(err, EV_EVERIFY, "the envelope's keyid %.64s is not the given key's %s", d->keyid,
                          ev_key_id(k));
    ev_buf pae = EV_BUF_INIT;
    ev_status rc = ev_dsse_pae(d->payload_type, d->payload.data, d->payload.len, &pae);
    if (rc)
        return ev_err_set(err, rc, "out of memory");
    rc = ev_key_verify(k, pae.data, pae.len, d->sig, d->sig_n, err);
    if (rc == EV_EVERIFY)
        ev_err_prefix(err, "PAE signature check");
    ev_buf_free(&pae);
    return rc;
}
