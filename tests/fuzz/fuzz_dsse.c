/*
 * fuzz_dsse.c: libFuzzer target for the DSSE envelope reader
 * (src/sign/dsse.c): ev_dsse_parse over each input, never crashing, with
 * only EV_OK or EV_EFORMAT as answers; an accepted envelope must give its
 * payload and signature back through the canonical base64 (decode of the
 * encoding is the identity), its PAE must be built, and its signature
 * checked against a fixed key must be refused (EV_EVERIFY), not crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sign/dsse.h"
#include "sign/key.h"

/* Returns 1 when base64 of p[0..n) decodes back to the same bytes. */
static int round_trips(const void *p, size_t n)
{
    ev_buf e = EV_BUF_INIT, d = EV_BUF_INIT;
    int ok = !ev_base64_encode(p, n, &e) && !ev_base64_decode(e.data, e.len, &d, NULL) && d.len == n &&
             (n == 0 || !memcmp(d.data, p, n));
    ev_buf_free(&e);
    ev_buf_free(&d);
    return ok;
}

/* libFuzzer's entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ev_key *key;
    ev_dsse d = {0};
    ev_err err;
    if (!key && ev_key_generate(&key, NULL))
        abort();
    ev_status rc = ev_dsse_parse((const char *)data, size, &d, &err);
    if (rc != EV_OK && rc != EV_EFORMAT)
        abort();
    if (rc == EV_OK) {
        if (!d.payload_type || !round_trips(d.payload.data, d.payload.len) || !round_trips(d.sig, d.sig_n))
            abort();
        ev_buf pae = EV_BUF_INIT;
        if (ev_dsse_pae(d.payload_type, d.payload.data, d.payload.len, &pae))
            abort();
        ev_buf_free(&pae);
        ev_status v = ev_dsse_verify(&d, key, &err);
        if (v != EV_EVERIFY)
            abort(); /* a fuzzed envelope signed by a key made here: never */
    }
    ev_dsse_clear(&d);
    return 0;
}
