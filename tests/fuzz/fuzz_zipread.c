/*
 * fuzz_zipread.c: libFuzzer target for the hardened zip reader (zipread.c).
 *
 * Feeds each input as a whole archive and checks the reader's promises:
 * a verdict (members with no problem, or at least one problem) and never a
 * crash; every problem line printable (no byte an attacker could use to
 * forge an output line); every member allow-listed, NUL-terminated, held
 * to its size and hashed right.  Limits are smaller than the defaults so a
 * run stays inside libFuzzer's memory cap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "verify/zipread.h"

/* Aborts (a finding) when s holds a byte outside printable ASCII. */
static void assert_printable(const char *s)
{
    if (!s)
        abort();
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            abort();
}

/* libFuzzer's entry point: one input, one verdict. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ev_zip_limits lim = {1000, 16u << 20, 64u << 20, 200, 64u << 10};
    ev_zip_problems *pr = NULL;
    ev_zip *z = NULL;
    ev_err err;
    ev_status rc;
    size_t i;

    if (ev_zip_problems_new(&pr))
        return 0;
    rc = ev_zip_read_mem(data, size, &lim, &z, pr, &err);
    if (rc == EV_OK) {
        if (!z || ev_zip_problems_count(pr) != 0)
            abort();
        for (i = 0; i < ev_zip_count(z); i++) {
            const ev_zip_member *m = ev_zip_at(z, i);
            uint8_t h[EV_SHA256_LEN];
            assert_printable(m->name);
            if (!m->name[0] || m->name[0] == '/' || strstr(m->name, "..") == m->name)
                abort();
            if (m->data[m->size] != 0 || ev_zip_find(z, m->name) != m)
                abort();
            if (ev_sha256_buf(m->data, m->size, h) || memcmp(h, m->sha256, sizeof h))
                abort();
        }
        ev_zip_free(z);
    } else if (rc == EV_EVERIFY) {
        if (z || ev_zip_problems_count(pr) == 0)
            abort();
        for (i = 0; i < ev_zip_problems_count(pr); i++) {
            const ev_zip_problem *q = ev_zip_problems_at(pr, i);
            assert_printable(q->check);
            assert_printable(q->member);
            assert_printable(q->reason);
        }
    } else if (rc != EV_ENOMEM) {
        abort();
    }
    ev_zip_problems_free(pr);
    return 0;
}
