/*
 * fuzz_zipread.c: libFuzzer target for the hardened zip reader (zipread.c).
 *
 * Feeds each input as a whole archive and checks the reader's promises:
 * a verdict (members with no problem, or at least one problem) and never a
 * crash; every problem line printable (no byte an attacker could use to
 * forge an output line); every member allow-listed, NUL-terminated, held
 * to its size and hashed right.  Each input is read a second time with
 * samples.csv streamed (ev_zip_read_mem_stream), which must give the same
 * verdict, problems and members, its pieces the member's bytes, and never
 * a byte past its declared size.  Limits are smaller than the defaults so
 * a run stays inside libFuzzer's memory cap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "zipread.h"

/* Aborts (a finding) when s holds a byte outside printable ASCII. */
static void assert_printable(const char *s)
{
    if (!s)
        abort();
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            abort();
}

/* What the stream handed over. */
typedef struct sink {
    unsigned char *p;
    size_t n, cap;
    uint64_t size;
} sink;

static void sink_put(void *ctx, const unsigned char *p, size_t n, uint64_t size)
{
    sink *k = ctx;
    if (k->n + n > size || (k->size && k->size != size))
        abort(); /* past the declared size, or the size changed */
    k->size = size;
    if (k->n + n > k->cap) {
        size_t cap = (k->n + n) * 2;
        unsigned char *q = realloc(k->p, cap);
        if (!q)
            abort();
        k->p = q;
        k->cap = cap;
    }
    memcpy(k->p + k->n, p, n);
    k->n += n;
}

/* Reads the input again with samples.csv streamed; aborts unless it agrees
 * with the whole reading (rc, problems pr, members z). */
static void streamed_agrees(const uint8_t *data, size_t size, const ev_zip_limits *lim, ev_status rc,
                            const ev_zip_problems *pr, const ev_zip *z)
{
    sink k = {NULL, 0, 0, 0};
    ev_zip_stream st = {"samples.csv", sink_put, &k};
    ev_zip_problems *pr2 = NULL;
    ev_zip *z2 = NULL;
    ev_err err;
    if (ev_zip_problems_new(&pr2))
        abort();
    ev_status rc2 = ev_zip_read_mem_stream(data, size, lim, &st, &z2, pr2, &err);
    if (rc == EV_ENOMEM || rc2 == EV_ENOMEM) /* the reader's own failure: no verdict to compare */
        goto out;
    if (rc2 != rc || ev_zip_problems_count(pr2) != ev_zip_problems_count(pr))
        abort();
    for (size_t i = 0; i < ev_zip_problems_count(pr); i++) {
        const ev_zip_problem *a = ev_zip_problems_at(pr, i), *b = ev_zip_problems_at(pr2, i);
        if (strcmp(a->check, b->check) || strcmp(a->member, b->member) || strcmp(a->reason, b->reason))
            abort();
    }
    if (rc == EV_OK) {
        if (ev_zip_count(z2) != ev_zip_count(z))
            abort();
        for (size_t i = 0; i < ev_zip_count(z); i++) {
            const ev_zip_member *a = ev_zip_at(z, i), *b = ev_zip_at(z2, i);
            if (strcmp(a->name, b->name) || a->size != b->size || a->crc32 != b->crc32 ||
                memcmp(a->sha256, b->sha256, sizeof a->sha256))
                abort();
            if (!strcmp(a->name, "samples.csv")) {
                if (b->data || k.n != a->size || (k.n && memcmp(k.p, a->data, k.n)))
                    abort();
            } else if (!b->data || memcmp(a->data, b->data, a->size + 1)) {
                abort();
            }
        }
        if (!ev_zip_find(z, "samples.csv") && k.n)
            abort();
    }
out:
    ev_zip_free(z2);
    ev_zip_problems_free(pr2);
    free(k.p);
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
    streamed_agrees(data, size, &lim, rc, pr, z);
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
