/*
 * check_zipread.c: the zip-level part of the hostile corpus (verify-bundle
 * check 1).  Each test builds its archive in memory, with a small raw zip
 * writer of its own (so every header field can be made to lie) or with
 * libzip (the writer our bundles use), and states the expected verdict and
 * a substring of the expected reason.
 */
#include <check.h>

#include "progress.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zip.h>
#include <zlib.h>

#include "buf.h"
#include "sha256.h"
#include "zipread.h"

/* ------------------------------------------------------------ raw writer */

/* One member for the raw writer; zero fields take the defaults. */
typedef struct zspec {
    const char *name;
    size_t name_len; /* 0: strlen(name) */
    const void *data;
    size_t len;
    uint16_t method;   /* 8: data deflated here; other values: data stored raw */
    uint16_t flags;    /* general purpose flags, both headers */
    uint16_t made_by;  /* 0: Unix, 2.0 */
    uint32_t ext_attr; /* 0: 0100644 << 16 (regular file) */
    const void *comp;  /* precompressed data (then crc and usize are used) */
    size_t comp_len;
    uint32_t crc;
    uint32_t usize;
    int64_t usize_delta; /* added to the declared uncompressed size */
    uint32_t crc_xor;    /* xored into the declared CRC */
} zspec;

#define ZMAX 8

/* Where the writer put things. */
typedef struct zlayout {
    size_t local[ZMAX], data[ZMAX], central[ZMAX];
    size_t cd_off, cd_size, end;
} zlayout;

/* Appends n bytes or fails the test. */
static void put(ev_buf *b, const void *p, size_t n)
{
    ck_assert_int_eq(ev_buf_append(b, p, n), EV_OK);
}

/* Appends a little-endian 16-bit value. */
static void put16(ev_buf *b, unsigned v)
{
    unsigned char c[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    put(b, c, 2);
}

/* Appends a little-endian 32-bit value. */
static void put32(ev_buf *b, uint32_t v)
{
    unsigned char c[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put(b, c, 4);
}

/* Overwrites 16 and 32-bit little-endian values at offset off of b. */
static void poke16(ev_buf *b, size_t off, unsigned v)
{
    ck_assert_uint_le(off + 2, b->len);
    b->data[off] = (char)v;
    b->data[off + 1] = (char)(v >> 8);
}

static void poke32(ev_buf *b, size_t off, uint32_t v)
{
    poke16(b, off, v & 0xffff);
    poke16(b, off + 2, v >> 16);
}

/* Raw deflate (no zlib header) of p[0..n) appended to out. */
static void deflate_raw(const void *p, size_t n, ev_buf *out)
{
    z_stream z;
    unsigned char chunk[4096];
    int zr;

    memset(&z, 0, sizeof z);
    ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)p;
    z.avail_in = (uInt)n;
    do {
        z.next_out = chunk;
        z.avail_out = sizeof chunk;
        zr = deflate(&z, Z_FINISH);
        ck_assert(zr == Z_OK || zr == Z_STREAM_END);
        put(out, chunk, sizeof chunk - z.avail_out);
    } while (zr != Z_STREAM_END);
    deflateEnd(&z);
}

/* Streams total bytes of zeros through raw deflate into out (a bomb);
 * OUT: *crc, the CRC-32 of the zeros. */
static void deflate_zeros(size_t total, ev_buf *out, uint32_t *crc)
{
    static unsigned char zeros[1 << 20];
    unsigned char chunk[65536];
    z_stream z;
    uLong c = crc32(0L, Z_NULL, 0);
    size_t left = total;
    int zr = Z_OK;

    memset(&z, 0, sizeof z);
    ck_assert_int_eq(deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY), Z_OK);
    while (zr != Z_STREAM_END) {
        size_t take = left < sizeof zeros ? left : sizeof zeros;
        if (z.avail_in == 0 && left) {
            z.next_in = zeros;
            z.avail_in = (uInt)take;
            c = crc32(c, zeros, (uInt)take);
            left -= take;
        }
        do {
            z.next_out = chunk;
            z.avail_out = sizeof chunk;
            zr = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
            ck_assert(zr == Z_OK || zr == Z_STREAM_END || zr == Z_BUF_ERROR);
            put(out, chunk, sizeof chunk - z.avail_out);
        } while (z.avail_out == 0);
    }
    deflateEnd(&z);
    *crc = (uint32_t)c;
}

/* Writes one local or central header for s (central when cd_off_of_local
 * is not SIZE_MAX: then it is the local header's offset). */
static void put_header(ev_buf *b, const zspec *s, int central, size_t local_off, uint32_t crc, uint32_t csize,
                       uint32_t usize)
{
    size_t nlen = s->name_len ? s->name_len : strlen(s->name);

    put32(b, central ? 0x02014b50u : 0x04034b50u);
    if (central)
        put16(b, s->made_by ? s->made_by : 0x0314);
    put16(b, 20);
    put16(b, s->flags);
    put16(b, s->method);
    put16(b, 0x0000); /* time */
    put16(b, 0x0021); /* date: 1980-01-01 */
    put32(b, crc);
    put32(b, csize);
    put32(b, usize);
    put16(b, (unsigned)nlen);
    put16(b, 0); /* extra */
    if (central) {
        put16(b, 0); /* comment */
        put16(b, 0); /* disk */
        put16(b, 0); /* internal attributes */
        put32(b, s->ext_attr ? s->ext_attr : (0100644u << 16));
        put32(b, (uint32_t)local_off);
    }
    put(b, s->name, nlen);
}

/* Builds an archive of the n members s into out (emptied first).
 * OUT: *lay (when non-NULL), where each part went. */
static void zbuild(const zspec *s, size_t n, ev_buf *out, zlayout *lay)
{
    ev_buf comp[ZMAX];
    uint32_t crc[ZMAX], usize[ZMAX];
    zlayout l;
    size_t i;

    ck_assert_uint_le(n, ZMAX);
    memset(&l, 0, sizeof l);
    ev_buf_reset(out);
    for (i = 0; i < n; i++) {
        ev_buf c = EV_BUF_INIT;
        if (s[i].comp) {
            put(&c, s[i].comp, s[i].comp_len);
            crc[i] = s[i].crc;
            usize[i] = s[i].usize;
        } else {
            if (s[i].method == 8)
                deflate_raw(s[i].data, s[i].len, &c);
            else
                put(&c, s[i].data ? s[i].data : "", s[i].len);
            crc[i] = (uint32_t)crc32(0L, s[i].data ? s[i].data : (const void *)"", (uInt)s[i].len);
            usize[i] = (uint32_t)s[i].len;
        }
        crc[i] ^= s[i].crc_xor;
        usize[i] = (uint32_t)((int64_t)usize[i] + s[i].usize_delta);
        comp[i] = c;
    }
    for (i = 0; i < n; i++) {
        l.local[i] = out->len;
        put_header(out, &s[i], 0, 0, crc[i], (uint32_t)comp[i].len, usize[i]);
        l.data[i] = out->len;
        put(out, comp[i].data ? comp[i].data : "", comp[i].len);
    }
    l.cd_off = out->len;
    for (i = 0; i < n; i++) {
        l.central[i] = out->len;
        put_header(out, &s[i], 1, l.local[i], crc[i], (uint32_t)comp[i].len, usize[i]);
    }
    l.cd_size = out->len - l.cd_off;
    l.end = out->len;
    put32(out, 0x06054b50u);
    put16(out, 0);
    put16(out, 0);
    put16(out, (unsigned)n);
    put16(out, (unsigned)n);
    put32(out, (uint32_t)l.cd_size);
    put32(out, (uint32_t)l.cd_off);
    put16(out, 0);
    for (i = 0; i < n; i++)
        ev_buf_free(&comp[i]);
    if (lay)
        *lay = l;
}

/* A good three-member archive: a stored, a deflated and an empty member. */
static void good_zip(ev_buf *out, zlayout *lay)
{
    static const char text[] = "{\"hello\": \"world\", \"n\": 1}\n";
    zspec s[3];

    memset(s, 0, sizeof s);
    s[0].name = "protocol.json";
    s[0].data = text;
    s[0].len = sizeof text - 1;
    s[1].name = "sources/kernels/abc.txt";
    s[1].data = "abc";
    s[1].len = 3;
    s[1].method = 8;
    s[2].name = "outputs/empty.bin";
    s[2].data = "";
    s[2].len = 0;
    zbuild(s, 3, out, lay);
}

/* ------------------------------------------------------------ assertions */

/* Reads b with limits lim; OUT: *z on EV_OK, problems always. */
static ev_status read_buf(const void *p, size_t n, const ev_zip_limits *lim, ev_zip **z, ev_zip_problems **pr)
{
    ev_err err;

    *z = NULL;
    ck_assert_int_eq(ev_zip_problems_new(pr), EV_OK);
    return ev_zip_read_mem(p, n, lim, z, *pr, &err);
}

/* Returns 1 when some problem's reason contains want (and, when member is
 * non-NULL, is about that member). */
static int has_reason(const ev_zip_problems *pr, const char *member, const char *want)
{
    size_t i;

    for (i = 0; i < ev_zip_problems_count(pr); i++) {
        const ev_zip_problem *q = ev_zip_problems_at(pr, i);
        if (strstr(q->reason, want) && (!member || !strcmp(q->member, member)))
            return 1;
    }
    return 0;
}

/* Prints every problem (shown when an expectation fails). */
static void dump(const ev_zip_problems *pr)
{
    size_t i;

    for (i = 0; i < ev_zip_problems_count(pr); i++) {
        const ev_zip_problem *q = ev_zip_problems_at(pr, i);
        fprintf(stderr, "  FAIL %s: %s: %s\n", q->check, q->member, q->reason);
    }
}

/* Asserts that p[0..n) is refused with a problem about member (NULL: any)
 * whose reason contains want. */
static void expect_refused_lim(const void *p, size_t n, const ev_zip_limits *lim, const char *member,
                               const char *want)
{
    ev_zip *z = NULL;
    ev_zip_problems *pr = NULL;
    ev_status rc = read_buf(p, n, lim, &z, &pr);
    int ok = rc == EV_EVERIFY && has_reason(pr, member, want);

    if (!ok) {
        fprintf(stderr, "expected refusal '%s' (member %s), got status %d:\n", want, member ? member : "any",
                rc);
        dump(pr);
    }
    ck_assert_int_eq(rc, EV_EVERIFY);
    ck_assert_ptr_null(z);
    ck_assert_uint_ge(ev_zip_problems_count(pr), 1);
    ck_assert_msg(ok, "no problem with reason '%s'", want);
    ev_zip_problems_free(pr);
}

static void expect_refused(const ev_buf *b, const char *member, const char *want)
{
    expect_refused_lim(b->data, b->len, NULL, member, want);
}

/* Asserts that b is read, and returns the members. */
static ev_zip *expect_read(const void *p, size_t n)
{
    ev_zip *z = NULL;
    ev_zip_problems *pr = NULL;
    ev_status rc = read_buf(p, n, NULL, &z, &pr);

    if (rc != EV_OK)
        dump(pr);
    ck_assert_int_eq(rc, EV_OK);
    ck_assert_uint_eq(ev_zip_problems_count(pr), 0);
    ck_assert_ptr_nonnull(z);
    ev_zip_problems_free(pr);
    return z;
}

#define SHA_ABC   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* ------------------------------------------------------------- good input */

START_TEST(test_good_archive_is_read_with_names_bytes_and_hashes_in_order)
{
    ev_buf b = EV_BUF_INIT;
    ev_zip *z;
    const ev_zip_member *m;

    good_zip(&b, NULL);
    z = expect_read(b.data, b.len);
    ck_assert_uint_eq(ev_zip_count(z), 3);
    m = ev_zip_at(z, 0);
    ck_assert_str_eq(m->name, "protocol.json");
    ck_assert_uint_eq(m->size, 27);
    ck_assert_int_eq(m->method, 0);
    ck_assert_mem_eq(m->data, "{\"hello\": \"world\", \"n\": 1}\n", 27);
    ck_assert_int_eq(m->data[27], 0);
    m = ev_zip_at(z, 1);
    ck_assert_str_eq(m->name, "sources/kernels/abc.txt");
    ck_assert_int_eq(m->method, 8);
    ck_assert_uint_eq(m->size, 3);
    ck_assert_mem_eq(m->data, "abc", 3);
    ck_assert_str_eq(m->sha256_hex, SHA_ABC);
    ck_assert_uint_eq(m->crc32, 0x352441c2u);
    m = ev_zip_at(z, 2);
    ck_assert_str_eq(m->name, "outputs/empty.bin");
    ck_assert_uint_eq(m->size, 0);
    ck_assert_str_eq(m->sha256_hex, SHA_EMPTY);
    ck_assert_ptr_null(ev_zip_at(z, 3));
    ck_assert_ptr_eq(ev_zip_find(z, "sources/kernels/abc.txt"), ev_zip_at(z, 1));
    ck_assert_ptr_eq(ev_zip_find(z, "protocol.json"), ev_zip_at(z, 0));
    ck_assert_ptr_null(ev_zip_find(z, "missing.json"));
    ev_zip_free(z);
    ev_buf_free(&b);
}
END_TEST

/* Builds an archive with libzip in memory (the writer of our bundles). */
static void libzip_zip(ev_buf *out, size_t big)
{
    zip_error_t ze;
    zip_source_t *src, *s;
    zip_t *za;
    zip_int64_t idx, n;
    char *blob = malloc(big), *bytes;
    size_t i;

    ck_assert_ptr_nonnull(blob);
    for (i = 0; i < big; i++)
        blob[i] = (char)('a' + (i * 7 + i / 13) % 26);
    zip_error_init(&ze);
    src = zip_source_buffer_create(NULL, 0, 0, &ze);
    ck_assert_ptr_nonnull(src);
    zip_source_keep(src);
    za = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
    ck_assert_ptr_nonnull(za);
    s = zip_source_buffer(za, "abc", 3, 0);
    idx = zip_file_add(za, "a/abc.txt", s, ZIP_FL_ENC_UTF_8);
    ck_assert_int_ge(idx, 0);
    zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_DEFLATE, 9);
    zip_file_set_dostime(za, (zip_uint64_t)idx, 0, 0x21, 0);
    s = zip_source_buffer(za, blob, big, 0);
    idx = zip_file_add(za, "samples.csv", s, ZIP_FL_ENC_UTF_8);
    ck_assert_int_ge(idx, 0);
    zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
    zip_file_set_dostime(za, (zip_uint64_t)idx, 0, 0x21, 0);
    ck_assert_int_eq(zip_close(za), 0);
    ck_assert_int_eq(zip_source_open(src), 0);
    ck_assert_int_eq(zip_source_seek(src, 0, SEEK_END), 0);
    n = zip_source_tell(src);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(zip_source_seek(src, 0, SEEK_SET), 0);
    bytes = malloc((size_t)n);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_int_eq(zip_source_read(src, bytes, (zip_uint64_t)n), n);
    ev_buf_reset(out);
    put(out, bytes, (size_t)n);
    zip_source_close(src);
    zip_source_free(src);
    free(bytes);
    free(blob);
}

START_TEST(test_archive_written_by_libzip_is_read)
{
    ev_buf b = EV_BUF_INIT;
    ev_zip *z;

    libzip_zip(&b, 200000);
    z = expect_read(b.data, b.len);
    ck_assert_uint_eq(ev_zip_count(z), 2);
    ck_assert_str_eq(ev_zip_at(z, 0)->name, "a/abc.txt");
    ck_assert_str_eq(ev_zip_at(z, 0)->sha256_hex, SHA_ABC);
    ck_assert_str_eq(ev_zip_at(z, 1)->name, "samples.csv");
    ck_assert_uint_eq(ev_zip_at(z, 1)->size, 200000);
    ck_assert_int_eq(ev_zip_at(z, 1)->data[1], 'h');
    ev_zip_free(z);
    ev_buf_free(&b);
}
END_TEST

/* Collects what a stream hands over. */
typedef struct sink {
    ev_buf got;
    size_t calls, biggest;
    uint64_t size;
} sink;

static void sink_put(void *ctx, const unsigned char *p, size_t n, uint64_t size)
{
    sink *k = ctx;
    put(&k->got, p, n);
    k->calls++;
    k->biggest = n > k->biggest ? n : k->biggest;
    k->size = size;
}

/* Reads p[0..n) streaming samples.csv into *k. */
static ev_status read_streamed(const void *p, size_t n, sink *k, ev_zip **z, ev_zip_problems **pr)
{
    ev_zip_stream st = {"samples.csv", sink_put, k};
    ev_err err = {{0}};
    memset(k, 0, sizeof *k);
    *z = NULL;
    ck_assert_int_eq(ev_zip_problems_new(pr), EV_OK);
    return ev_zip_read_mem_stream(p, n, NULL, &st, z, *pr, &err);
}

/* A streamed member reaches put whole and in order, in pieces of at most
 * 1 MiB, with its declared size; it keeps no bytes (data NULL) and has the
 * size, CRC and digest of the member read whole; the others are kept. */
START_TEST(test_a_streamed_member_is_handed_over_whole_in_order_and_not_kept)
{
    ev_buf b = EV_BUF_INIT;
    sink k;
    ev_zip *z, *whole;
    ev_zip_problems *pr;

    libzip_zip(&b, 3000001);
    whole = expect_read(b.data, b.len);
    ck_assert_int_eq(read_streamed(b.data, b.len, &k, &z, &pr), EV_OK);
    const ev_zip_member *m = ev_zip_find(z, "samples.csv"), *w = ev_zip_find(whole, "samples.csv");
    ck_assert_ptr_null(m->data);
    ck_assert_uint_eq(m->size, 3000001);
    ck_assert_str_eq(m->sha256_hex, w->sha256_hex);
    ck_assert_uint_eq(m->crc32, w->crc32);
    ck_assert_uint_eq(k.got.len, 3000001);
    ck_assert_mem_eq(k.got.data, w->data, 3000001);
    ck_assert_uint_ge(k.calls, 3);
    ck_assert_uint_le(k.biggest, (size_t)1 << 20);
    ck_assert_uint_eq(k.size, 3000001);
    ck_assert_str_eq(ev_zip_find(z, "a/abc.txt")->sha256_hex, SHA_ABC);
    ck_assert_mem_eq(ev_zip_find(z, "a/abc.txt")->data, "abc", 3);
    ev_zip_free(z);
    ev_zip_free(whole);
    ev_zip_problems_free(pr);
    ev_buf_free(&k.got);
    ev_buf_free(&b);
}
END_TEST

/* Streamed or not, a wrong CRC and a size field that lies are refused
 * alike, and put never sees a byte past the declared size. */
START_TEST(test_a_streamed_member_is_refused_as_when_read_whole)
{
    static char text[300000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (char)('a' + (i * i) % 26);
    for (int c = 0; c < 2; c++) {
        ev_buf b = EV_BUF_INIT;
        zspec s;
        sink k;
        ev_zip *z;
        ev_zip_problems *pr;
        memset(&s, 0, sizeof s);
        s.name = "samples.csv";
        s.data = text;
        s.len = sizeof text;
        s.method = 8;
        if (c == 0)
            s.crc_xor = 0x10;
        else
            s.usize_delta = -1000;
        zbuild(&s, 1, &b, NULL);
        ck_assert_int_eq(read_streamed(b.data, b.len, &k, &z, &pr), EV_EVERIFY);
        ck_assert_ptr_null(z);
        ck_assert_msg(has_reason(pr, "samples.csv", c == 0 ? "CRC" : "declared size"), "case %d", c);
        ck_assert_uint_le(k.got.len, sizeof text - (c ? 1000 : 0));
        expect_refused(&b, "samples.csv", c == 0 ? "CRC" : "declared size");
        ev_buf_free(&k.got);
        ev_zip_problems_free(pr);
        ev_buf_free(&b);
    }
}
END_TEST

START_TEST(test_empty_archive_has_no_members)
{
    ev_buf b = EV_BUF_INIT;
    ev_zip *z;

    zbuild(NULL, 0, &b, NULL);
    ck_assert_uint_eq(b.len, 22);
    z = expect_read(b.data, b.len);
    ck_assert_uint_eq(ev_zip_count(z), 0);
    ck_assert_ptr_null(ev_zip_find(z, "x"));
    ev_zip_free(z);
    ev_buf_free(&b);
}
END_TEST

/* ------------------------------------------------------ not a zip at all */

START_TEST(test_empty_file_is_refused)
{
    expect_refused_lim("", 0, NULL, "-", "empty file");
}
END_TEST

START_TEST(test_text_file_is_not_a_zip)
{
    static const char text[] = "this is a plain text file, long enough to hold an end record\n";
    expect_refused_lim(text, sizeof text - 1, NULL, "-", "no end record");
    expect_refused_lim("PK", 2, NULL, "-", "shorter than an end record");
}
END_TEST

/* ------------------------------------------------------------ truncations */

START_TEST(test_truncation_inside_the_end_record_is_refused)
{
    ev_buf b = EV_BUF_INIT;

    good_zip(&b, NULL);
    expect_refused_lim(b.data, b.len - 1, NULL, "-", "no end record");
    expect_refused_lim(b.data, b.len - 10, NULL, "-", "no end record");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_truncation_inside_the_central_directory_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zlayout l;

    good_zip(&b, &l);
    expect_refused_lim(b.data, l.central[1] + 10, NULL, "-", "no end record");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_truncation_inside_member_data_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zlayout l;

    good_zip(&b, &l);
    expect_refused_lim(b.data, l.data[0] + 5, NULL, "-", "no end record");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_every_prefix_of_a_good_archive_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    size_t cut;

    good_zip(&b, NULL);
    for (cut = 0; cut < b.len; cut++) {
        ev_zip *z = NULL;
        ev_zip_problems *pr = NULL;
        char *copy = malloc(cut ? cut : 1); /* exact size: ASan sees overreads */
        memcpy(copy, b.data, cut);
        ck_assert_msg(read_buf(copy, cut, NULL, &z, &pr) == EV_EVERIFY, "prefix %zu read", cut);
        ck_assert_ptr_null(z);
        ev_zip_problems_free(pr);
        free(copy);
    }
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_end_record_that_cuts_off_a_member_is_refused)
{
    /* the archive is cut inside the last member's data and a forged end
     * record is appended: the central directory cannot be where it says */
    ev_buf b = EV_BUF_INIT, t = EV_BUF_INIT;
    zlayout l;

    good_zip(&b, &l);
    put(&t, b.data, l.data[1] + 2);
    put(&t, b.data + l.end, 22);
    expect_refused(&t, "-", "central directory out of bounds");
    ev_buf_free(&b);
    ev_buf_free(&t);
}
END_TEST

/* ---------------------------------------------------------- flipped bytes */

START_TEST(test_flipped_byte_in_stored_data_is_a_crc_error)
{
    ev_buf b = EV_BUF_INIT;
    zlayout l;

    good_zip(&b, &l);
    b.data[l.data[0] + 3] ^= 0x20;
    expect_refused(&b, "protocol.json", "CRC");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_flipped_byte_in_deflated_data_is_refused)
{
    static char text[4000];
    ev_buf b = EV_BUF_INIT;
    zlayout l;
    zspec s;
    ev_zip *z = NULL;
    ev_zip_problems *pr = NULL;
    size_t i;

    for (i = 0; i < sizeof text; i++)
        text[i] = (char)('0' + (i * i) % 10);
    memset(&s, 0, sizeof s);
    s.name = "samples.csv";
    s.data = text;
    s.len = sizeof text;
    s.method = 8;
    zbuild(&s, 1, &b, &l);
    ck_assert_uint_gt(l.cd_off - l.data[0], 20);
    b.data[l.data[0] + (l.cd_off - l.data[0]) / 2] ^= 0x01;
    ck_assert_int_eq(read_buf(b.data, b.len, NULL, &z, &pr), EV_EVERIFY);
    ck_assert(has_reason(pr, "samples.csv", "CRC") || has_reason(pr, "samples.csv", "deflate") ||
              has_reason(pr, "samples.csv", "declared size"));
    ev_zip_problems_free(pr);
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_flipped_byte_in_a_local_name_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zlayout l;

    good_zip(&b, &l);
    b.data[l.local[0] + 30] ^= 0x01; /* "protocol.json" -> "qrotocol.json" */
    expect_refused(&b, "protocol.json", "local header name differs");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_flipped_byte_in_a_central_method_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zlayout l;

    good_zip(&b, &l);
    b.data[l.central[1] + 10] ^= 0x02; /* deflate (8) -> 10 */
    expect_refused(&b, "sources/kernels/abc.txt", "does not match the central");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_flipped_signature_of_the_central_directory_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zlayout l;

    good_zip(&b, &l);
    b.data[l.central[2]] ^= 0x01;
    expect_refused(&b, "-", "bad signature");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_wrong_crc_in_both_headers_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zspec s;

    memset(&s, 0, sizeof s);
    s.name = "model.json";
    s.data = "{\"a0\": 0.9029}";
    s.len = 14;
    s.method = 8;
    s.crc_xor = 0x00010000u;
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "model.json", "CRC");
    ev_buf_free(&b);
}
END_TEST

/* ------------------------------------------------- bytes around the zip */

START_TEST(test_junk_after_the_end_record_is_refused)
{
    ev_buf b = EV_BUF_INIT;

    good_zip(&b, NULL);
    put(&b, "junk!", 5);
    expect_refused(&b, "-", "5 trailing bytes after the end record");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_archive_comment_is_refused)
{
    ev_buf b = EV_BUF_INIT;

    good_zip(&b, NULL);
    poke16(&b, b.len - 2, 4);
    put(&b, "note", 4);
    expect_refused(&b, "-", "archive comment of 4 bytes");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_prepended_bytes_are_refused)
{
    ev_buf b = EV_BUF_INIT, t = EV_BUF_INIT;

    good_zip(&b, NULL);
    put(&t, "#!/bin/sh\nexit 0\n", 17);
    put(&t, b.data, b.len);
    expect_refused(&t, "-", "17 bytes prepended");
    ev_buf_free(&b);
    ev_buf_free(&t);
}
END_TEST

START_TEST(test_prepended_bytes_with_adjusted_offsets_are_refused)
{
    /* a self-extractor style archive: offsets rewritten to include the stub */
    ev_buf b = EV_BUF_INIT, t = EV_BUF_INIT;
    zlayout l;
    size_t i;

    good_zip(&b, &l);
    put(&t, "STUB", 4);
    put(&t, b.data, b.len);
    for (i = 0; i < 3; i++)
        poke32(&t, 4 + l.central[i] + 42, (uint32_t)(l.local[i] + 4));
    poke32(&t, 4 + l.end + 16, (uint32_t)(l.cd_off + 4));
    expect_refused(&t, "-", "4 bytes before the first entry");
    ev_buf_free(&b);
    ev_buf_free(&t);
}
END_TEST

START_TEST(test_unaccounted_bytes_between_entries_are_refused)
{
    ev_buf b = EV_BUF_INIT, t = EV_BUF_INIT;
    zlayout l;
    size_t i;

    good_zip(&b, &l);
    put(&t, b.data, l.local[1]);
    put(&t, "hidden", 6);
    put(&t, b.data + l.local[1], b.len - l.local[1]);
    for (i = 1; i < 3; i++)
        poke32(&t, 6 + l.central[i] + 42, (uint32_t)(l.local[i] + 6));
    poke32(&t, 6 + l.end + 16, (uint32_t)(l.cd_off + 6));
    expect_refused(&t, "sources/kernels/abc.txt", "6 unaccounted bytes");
    ev_buf_free(&b);
    ev_buf_free(&t);
}
END_TEST

/* ------------------------------------------------------ layout that lies */

START_TEST(test_overlapping_entries_are_refused)
{
    /* the stored member a.bin carries, inside its own data, a complete local
     * header and data for b.txt; the central directory lists both */
    ev_buf inner = EV_BUF_INIT, b = EV_BUF_INIT;
    zlayout li, l;
    zspec s[2];

    memset(s, 0, sizeof s);
    s[0].name = "b.txt";
    s[0].data = "hello";
    s[0].len = 5;
    zbuild(s, 1, &inner, &li);
    memset(s, 0, sizeof s);
    s[0].name = "a.bin";
    s[0].data = inner.data;
    s[0].len = li.cd_off; /* b.txt's local header and data */
    s[1].name = "b.txt";
    s[1].data = "hello";
    s[1].len = 5;
    zbuild(s, 2, &b, &l);
    /* drop b.txt's own local copy: point its central entry into a.bin */
    poke32(&b, l.central[1] + 42, (uint32_t)l.data[0]);
    expect_refused(&b, NULL, "overlapping entries");
    ev_buf_free(&inner);
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_two_entries_sharing_one_local_header_are_refused)
{
    ev_buf b = EV_BUF_INIT;
    zlayout l;

    good_zip(&b, &l);
    /* entry 1's local offset now points at entry 0's header */
    poke32(&b, l.central[1] + 42, (uint32_t)l.local[0]);
    expect_refused(&b, "sources/kernels/abc.txt", "does not match the central");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_entry_count_mismatch_is_refused)
{
    ev_buf b = EV_BUF_INIT;

    good_zip(&b, NULL);
    poke16(&b, b.len - 22 + 8, 4);
    poke16(&b, b.len - 22 + 10, 4);
    expect_refused(&b, "-",
                   "entry count mismatch: the end record says 4, the central directory "
                   "holds 3");
    poke16(&b, b.len - 22 + 8, 2);
    poke16(&b, b.len - 22 + 10, 2);
    expect_refused(&b, "-", "entry count mismatch");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_zip64_end_record_is_refused)
{
    ev_buf b = EV_BUF_INIT;

    good_zip(&b, NULL);
    poke32(&b, b.len - 22 + 16, 0xffffffffu);
    expect_refused(&b, "-", "ZIP64");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_data_descriptor_flag_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zspec s;

    memset(&s, 0, sizeof s);
    s.name = "a.csv";
    s.data = "x,y\n";
    s.len = 4;
    s.flags = 0x0008;
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "a.csv", "data descriptor");
    ev_buf_free(&b);
}
END_TEST

/* ----------------------------------------------------------------- names */

/* Asserts that a one-member archive named name[0..len) is refused with want. */
static void expect_name_refused(const char *name, size_t len, const char *shown, const char *want)
{
    ev_buf b = EV_BUF_INIT;
    zspec s;

    memset(&s, 0, sizeof s);
    s.name = name;
    s.name_len = len;
    s.data = "x";
    s.len = 1;
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, shown, want);
    ev_buf_free(&b);
}

START_TEST(test_duplicate_names_are_refused)
{
    ev_buf b = EV_BUF_INIT;
    zspec s[3];

    memset(s, 0, sizeof s);
    s[0].name = "samples.csv";
    s[0].data = "a";
    s[0].len = 1;
    s[1].name = "model.json";
    s[1].data = "{}";
    s[1].len = 2;
    s[2].name = "samples.csv";
    s[2].data = "b";
    s[2].len = 1;
    zbuild(s, 3, &b, NULL);
    expect_refused(&b, "samples.csv", "duplicate name: entries 0 and 2");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_dot_dot_name_is_refused)
{
    expect_name_refused("../etc/passwd", 0, "../etc/passwd", "'..' path component");
    expect_name_refused("sources/../../x", 0, "sources/../../x", "'..' path component");
    expect_name_refused("a/./b", 0, "a/./b", "'.' path component");
}
END_TEST

START_TEST(test_absolute_name_is_refused)
{
    expect_name_refused("/etc/passwd", 0, "/etc/passwd", "absolute name");
}
END_TEST

START_TEST(test_backslash_name_is_refused)
{
    expect_name_refused("..\\evil.dll", 0, "..\\x5cevil.dll", "backslash in name");
}
END_TEST

START_TEST(test_nul_in_name_is_refused_and_shown_escaped)
{
    expect_name_refused("model.json\0.exe", 15, "model.json\\x00.exe", "NUL byte in name");
}
END_TEST

START_TEST(test_control_character_in_name_is_refused)
{
    expect_name_refused("report\n.html", 0, "report\\x0a.html", "control character in name");
    expect_name_refused("a\x1b[31m", 0, "a\\x1b[31m", "control character in name");
}
END_TEST

START_TEST(test_names_outside_the_allow_list_are_refused)
{
    expect_name_refused("caf\xc3\xa9.json", 0, "caf\\xc3\\xa9.json", "byte 0xc3 in name");
    expect_name_refused("a b.json", 0, "a b.json", "character ' ' in name");
    expect_name_refused("c:x.json", 0, "c:x.json", "character ':' in name");
    expect_name_refused("a//b", 0, "a//b", "empty path component");
    expect_name_refused("sources/", 0, "sources/", "directory entry");
    expect_name_refused("", 0, "\"\"", "empty name");
}
END_TEST

/* --------------------------------------------------------- entry kinds */

START_TEST(test_symlink_entry_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zspec s;

    memset(&s, 0, sizeof s);
    s.name = "protocol.json";
    s.data = "/etc/passwd";
    s.len = 11;
    s.ext_attr = 0120777u << 16;
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "protocol.json", "symbolic link");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_directory_attributes_are_refused)
{
    ev_buf b = EV_BUF_INIT;
    zspec s;

    memset(&s, 0, sizeof s);
    s.name = "outputs";
    s.len = 0;
    s.ext_attr = (0040755u << 16) | 0x10;
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "outputs", "directory (mode 040755)");
    expect_refused(&b, "outputs", "MS-DOS attributes 0x10");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_encryption_flag_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zspec s;

    memset(&s, 0, sizeof s);
    s.name = "validation.json";
    s.data = "{}";
    s.len = 2;
    s.flags = 0x0001;
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "validation.json", "encrypted member");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_unknown_compression_methods_are_refused)
{
    ev_buf b = EV_BUF_INIT;
    zspec s;

    memset(&s, 0, sizeof s);
    s.name = "samples.csv";
    s.data = "abc";
    s.len = 3;
    s.method = 99;
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "samples.csv", "compression method 99");
    s.method = 12; /* bzip2 */
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "samples.csv", "unsupported compression method 12");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_every_problem_is_reported_not_only_the_first)
{
    ev_buf b = EV_BUF_INIT;
    ev_zip *z = NULL;
    ev_zip_problems *pr = NULL;
    zspec s[4];

    memset(s, 0, sizeof s);
    s[0].name = "../a";
    s[1].name = "/b";
    s[2].name = "ok.json";
    s[2].data = "{}";
    s[2].len = 2;
    s[2].crc_xor = 1;
    s[3].name = "c";
    s[3].method = 12;
    zbuild(s, 4, &b, NULL);
    ck_assert_int_eq(read_buf(b.data, b.len, NULL, &z, &pr), EV_EVERIFY);
    ck_assert(has_reason(pr, "../a", "'..'"));
    ck_assert(has_reason(pr, "/b", "absolute"));
    ck_assert(has_reason(pr, "ok.json", "CRC"));
    ck_assert(has_reason(pr, "c", "method 12"));
    ck_assert_uint_eq(ev_zip_problems_count(pr), 4);
    ck_assert_str_eq(ev_zip_problems_at(pr, 0)->check, "archive");
    ev_zip_problems_free(pr);
    ev_buf_free(&b);
}
END_TEST

/* ------------------------------------------------------------ sizes, caps */

START_TEST(test_300_mib_deflate_bomb_is_refused_before_inflating)
{
    ev_buf comp = EV_BUF_INIT, b = EV_BUF_INIT;
    size_t total = (size_t)300 << 20;
    uint32_t crc;
    zspec s;

    deflate_zeros(total, &comp, &crc);
    ck_assert_uint_lt(comp.len, 1u << 20);
    memset(&s, 0, sizeof s);
    s.name = "samples.csv";
    s.method = 8;
    s.comp = comp.data;
    s.comp_len = comp.len;
    s.crc = crc;
    s.usize = (uint32_t)total;
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "samples.csv", "compression ratio");
    ev_buf_free(&comp);
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_bomb_declaring_a_small_size_is_stopped_while_inflating)
{
    ev_buf comp = EV_BUF_INIT, b = EV_BUF_INIT;
    uint32_t crc;
    zspec s;

    deflate_zeros((size_t)8 << 20, &comp, &crc);
    memset(&s, 0, sizeof s);
    s.name = "samples.csv";
    s.method = 8;
    s.comp = comp.data;
    s.comp_len = comp.len;
    s.crc = crc;
    s.usize = 1000;
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "samples.csv", "inflates past its declared size of 1000");
    ev_buf_free(&comp);
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_declared_size_smaller_than_the_data_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zspec s;

    memset(&s, 0, sizeof s);
    s.name = "samples.csv";
    s.data = "run_id,job_id\n1,2\n";
    s.len = 18;
    s.method = 8;
    s.usize_delta = -4;
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "samples.csv", "inflates past its declared size of 14");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_declared_size_larger_than_the_data_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zspec s;

    memset(&s, 0, sizeof s);
    s.name = "samples.csv";
    s.data = "run_id,job_id\n1,2\n";
    s.len = 18;
    s.method = 8;
    s.usize_delta = 100;
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "samples.csv", "holds 18 bytes, not its declared size of 118");
    s.method = 0; /* stored: the two sizes must agree */
    zbuild(&s, 1, &b, NULL);
    expect_refused(&b, "samples.csv", "differs from its size 118");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_compressed_size_past_the_entries_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    zlayout l;

    good_zip(&b, &l);
    poke32(&b, l.local[2] + 18, 500);
    poke32(&b, l.central[2] + 20, 500);
    poke32(&b, l.local[2] + 22, 500);
    poke32(&b, l.central[2] + 24, 500);
    expect_refused(&b, "outputs/empty.bin", "runs into the central directory");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_caps_on_members_size_and_total_are_applied)
{
    ev_buf b = EV_BUF_INIT;
    ev_zip_limits lim;

    good_zip(&b, NULL);
    memset(&lim, 0, sizeof lim);
    lim.max_members = 2;
    expect_refused_lim(b.data, b.len, &lim, "-", "3 entries exceed the cap of 2 members");
    memset(&lim, 0, sizeof lim);
    lim.max_member_size = 10;
    expect_refused_lim(b.data, b.len, &lim, "protocol.json", "exceeds the member cap of 10");
    memset(&lim, 0, sizeof lim);
    lim.max_total_size = 29;
    expect_refused_lim(b.data, b.len, &lim, "-", "total 30 bytes, above the cap of 29");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_compression_ratio_caps_apply_per_member_and_per_archive)
{
    static char zeros[5000];
    ev_buf b = EV_BUF_INIT;
    ev_zip_limits lim;
    zspec s[3];
    size_t i;

    memset(s, 0, sizeof s);
    for (i = 0; i < 3; i++) {
        s[i].name = i == 0 ? "a.bin" : i == 1 ? "b.bin" : "c.bin";
        s[i].data = zeros;
        s[i].len = sizeof zeros;
        s[i].method = 8;
    }
    zbuild(s, 3, &b, NULL);
    memset(&lim, 0, sizeof lim);
    lim.ratio_min_size = 1000;
    lim.max_ratio = 10;
    expect_refused_lim(b.data, b.len, &lim, "b.bin", "exceeds the cap of 10:1");
    lim.ratio_min_size = 8000; /* each member is below, their total above */
    expect_refused_lim(b.data, b.len, &lim, "-", "ratio above the cap of 10:1");
    ev_buf_free(&b);
}
END_TEST

/* ------------------------------------------------------------ the API */

START_TEST(test_problem_list_is_capped_with_a_summary)
{
    ev_zip_problems *pr = NULL;
    size_t i;

    ck_assert_int_eq(ev_zip_problems_new(&pr), EV_OK);
    for (i = 0; i < EV_ZIP_MAX_PROBLEMS + 5; i++)
        ck_assert_int_eq(ev_zip_problems_add(pr, "archive", "m", SIZE_MAX, "problem %zu", i), EV_OK);
    ck_assert_uint_eq(ev_zip_problems_count(pr), EV_ZIP_MAX_PROBLEMS + 1);
    ck_assert_str_eq(ev_zip_problems_at(pr, 0)->reason, "problem 0");
    ck_assert_str_eq(ev_zip_problems_at(pr, EV_ZIP_MAX_PROBLEMS)->reason, "5 more problems not listed");
    ck_assert_ptr_null(ev_zip_problems_at(pr, EV_ZIP_MAX_PROBLEMS + 1));
    ev_zip_problems_free(pr);
    ev_zip_problems_free(NULL);
    ev_zip_free(NULL);
}
END_TEST

START_TEST(test_null_arguments_are_an_error_not_a_verdict)
{
    ev_zip_problems *pr = NULL;
    ev_zip *z = NULL;
    ev_err err;

    ck_assert_int_eq(ev_zip_problems_new(&pr), EV_OK);
    ck_assert_int_eq(ev_zip_read_mem(NULL, 5, NULL, &z, pr, &err), EV_EINVAL);
    ck_assert_int_eq(ev_zip_read_mem("x", 1, NULL, NULL, pr, &err), EV_EINVAL);
    ck_assert_int_eq(ev_zip_read_mem("x", 1, NULL, &z, NULL, &err), EV_EINVAL);
    ck_assert_uint_eq(ev_zip_problems_count(pr), 0);
    ev_zip_problems_free(pr);
}
END_TEST

static Suite *zipread_suite(void)
{
    Suite *s = suite_create("zipread");
    TCase *good = tcase_create("good"), *bad = tcase_create("hostile"), *big = tcase_create("big");

    tcase_add_test(good, test_good_archive_is_read_with_names_bytes_and_hashes_in_order);
    tcase_add_test(good, test_archive_written_by_libzip_is_read);
    tcase_add_test(good, test_a_streamed_member_is_handed_over_whole_in_order_and_not_kept);
    tcase_add_test(good, test_a_streamed_member_is_refused_as_when_read_whole);
    tcase_add_test(good, test_empty_archive_has_no_members);
    tcase_add_test(good, test_problem_list_is_capped_with_a_summary);
    tcase_add_test(good, test_null_arguments_are_an_error_not_a_verdict);

    tcase_set_timeout(bad, 120);
    tcase_add_test(bad, test_empty_file_is_refused);
    tcase_add_test(bad, test_text_file_is_not_a_zip);
    tcase_add_test(bad, test_truncation_inside_the_end_record_is_refused);
    tcase_add_test(bad, test_truncation_inside_the_central_directory_is_refused);
    tcase_add_test(bad, test_truncation_inside_member_data_is_refused);
    tcase_add_test(bad, test_every_prefix_of_a_good_archive_is_refused);
    tcase_add_test(bad, test_end_record_that_cuts_off_a_member_is_refused);
    tcase_add_test(bad, test_flipped_byte_in_stored_data_is_a_crc_error);
    tcase_add_test(bad, test_flipped_byte_in_deflated_data_is_refused);
    tcase_add_test(bad, test_flipped_byte_in_a_local_name_is_refused);
    tcase_add_test(bad, test_flipped_byte_in_a_central_method_is_refused);
    tcase_add_test(bad, test_flipped_signature_of_the_central_directory_is_refused);
    tcase_add_test(bad, test_wrong_crc_in_both_headers_is_refused);
    tcase_add_test(bad, test_junk_after_the_end_record_is_refused);
    tcase_add_test(bad, test_archive_comment_is_refused);
    tcase_add_test(bad, test_prepended_bytes_are_refused);
    tcase_add_test(bad, test_prepended_bytes_with_adjusted_offsets_are_refused);
    tcase_add_test(bad, test_unaccounted_bytes_between_entries_are_refused);
    tcase_add_test(bad, test_overlapping_entries_are_refused);
    tcase_add_test(bad, test_two_entries_sharing_one_local_header_are_refused);
    tcase_add_test(bad, test_entry_count_mismatch_is_refused);
    tcase_add_test(bad, test_zip64_end_record_is_refused);
    tcase_add_test(bad, test_data_descriptor_flag_is_refused);
    tcase_add_test(bad, test_duplicate_names_are_refused);
    tcase_add_test(bad, test_dot_dot_name_is_refused);
    tcase_add_test(bad, test_absolute_name_is_refused);
    tcase_add_test(bad, test_backslash_name_is_refused);
    tcase_add_test(bad, test_nul_in_name_is_refused_and_shown_escaped);
    tcase_add_test(bad, test_control_character_in_name_is_refused);
    tcase_add_test(bad, test_names_outside_the_allow_list_are_refused);
    tcase_add_test(bad, test_symlink_entry_is_refused);
    tcase_add_test(bad, test_directory_attributes_are_refused);
    tcase_add_test(bad, test_encryption_flag_is_refused);
    tcase_add_test(bad, test_unknown_compression_methods_are_refused);
    tcase_add_test(bad, test_every_problem_is_reported_not_only_the_first);
    tcase_add_test(bad, test_declared_size_smaller_than_the_data_is_refused);
    tcase_add_test(bad, test_declared_size_larger_than_the_data_is_refused);
    tcase_add_test(bad, test_compressed_size_past_the_entries_is_refused);
    tcase_add_test(bad, test_caps_on_members_size_and_total_are_applied);
    tcase_add_test(bad, test_compression_ratio_caps_apply_per_member_and_per_archive);

    /* deflating 300 MiB takes about a second; ASan several */
    tcase_set_timeout(big, 480);
    tcase_add_test(big, test_300_mib_deflate_bomb_is_refused_before_inflating);
    tcase_add_test(big, test_bomb_declaring_a_small_size_is_stopped_while_inflating);

    suite_add_tcase(s, good);
    suite_add_tcase(s, bad);
    suite_add_tcase(s, big);
    return s;
}

int main(void)
{
    int failed = ev_check_suite(zipread_suite());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
