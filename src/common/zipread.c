/*
 * zipread.c: hardened reading of a whole zip archive held in memory
 * (verify-bundle check 1).  See zipread.h for the contract and
 * docs/zip-reading.md for every rule and why it is there.
 *
 * Three stages, in this order:
 *   1. layout: our own bounded parse of the end record, the central
 *      directory and every local header.  A problem here (the archive's
 *      bytes cannot be accounted for exactly) stops the reading: libzip is
 *      never shown such an archive.
 *   2. members: the rules on each central entry (name allow-list, regular
 *      file, no encryption, store/deflate, caps from the declared sizes),
 *      all of them checked and reported, before anything is inflated.
 *   3. libzip 1.7.3 with ZIP_CHECKCONS | ZIP_RDONLY: its view of each entry
 *      must equal ours; each member that passed stage 2 is read with
 *      zip_fread until it returns 0 (libzip checks the CRC only then), held
 *      to its declared size, CRC-checked again with zlib and hashed.
 * libzip's error codes are translated to ev_status and reasons here, once.
 */
#include "zipread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zip.h>
#include <zlib.h>

#include "buf.h"
#include "names.h"

#define SIG_LOCAL         0x04034b50u
#define SIG_CENTRAL       0x02014b50u
#define SIG_END           0x06054b50u
#define SIG_ZIP64_LOCATOR 0x07064b50u
#define SIG_ZIP64_END     0x06064b50u

#define LOCAL_LEN         30u
#define CENTRAL_LEN       46u
#define END_LEN           22u
#define ZIP64_LOCATOR_LEN 20u
#define MAX_COMMENT       65535u

/* General purpose flag bits. */
#define GP_ENCRYPTED         0x0001u
#define GP_DEFLATE_OPTS      0x0006u /* deflate level hints: harmless */
#define GP_DATA_DESCRIPTOR   0x0008u
#define GP_STRONG_ENCRYPTION 0x0040u
#define GP_UTF8              0x0800u
#define GP_MASKED_HEADERS    0x2000u /* central directory encryption */
#define GP_ALLOWED           (GP_DEFLATE_OPTS | GP_UTF8)

#define METHOD_STORE   0u
#define METHOD_DEFLATE 8u

#define HOST_DOS  0u
#define HOST_UNIX 3u

#define S_TYPE_MASK 0170000u
#define S_TYPE_REG  0100000u
#define S_TYPE_DIR  0040000u
#define S_TYPE_LNK  0120000u
#define DOS_VOLUME  0x08u
#define DOS_DIR     0x10u

#define READ_CHUNK (1u << 20)

static const char CHECK[] = EV_ZIP_CHECK;

/* ------------------------------------------------------------------ members */

struct ev_zip {
    ev_zip_member *m; /* count members, central-directory order */
    size_t count;
    const ev_zip_member **by_name; /* the same, sorted by name (strcmp) */
};

/* Returns the number of members. */
size_t ev_zip_count(const ev_zip *z)
{
    return z ? z->count : 0;
}

/* Returns member i, or NULL when out of range. */
const ev_zip_member *ev_zip_at(const ev_zip *z, size_t i)
{
    if (!z || i >= z->count)
        return NULL;
    return &z->m[i];
}

/* bsearch comparator: a NUL-terminated key against a member pointer. */
static int cmp_key_member(const void *key, const void *elem)
{
    const ev_zip_member *const *m = elem;
    return strcmp(key, (*m)->name);
}

/* Returns the member named name (binary search), or NULL. */
const ev_zip_member *ev_zip_find(const ev_zip *z, const char *name)
{
    const ev_zip_member *const *hit;

    if (!z || !name || !z->count)
        return NULL;
    hit = bsearch(name, z->by_name, z->count, sizeof *z->by_name, cmp_key_member);
    return hit ? *hit : NULL;
}

/* Frees every member's name and bytes and the handle; NULL-safe. */
void ev_zip_free(ev_zip *z)
{
    size_t i;

    if (!z)
        return;
    for (i = 0; i < z->count; i++) {
        free((char *)z->m[i].name);
        free((unsigned char *)z->m[i].data);
    }
    free(z->m);
    free(z->by_name);
    free(z);
}

/* ------------------------------------------------------------ layout parse */

/* One central entry as we parsed it, plus where its bytes lie. */
typedef struct entry {
    const unsigned char *name; /* points into the archive bytes */
    size_t name_len;
    uint16_t made_by, version_needed, flags, method, dos_time, dos_date;
    uint32_t crc, csize, usize, ext_attr, local_off;
    uint64_t start, end; /* [local header, end of data) */
    int bad;             /* a member rule failed: do not read it */
} entry;

/* Little-endian readers; the caller guarantees the bytes are in bounds. */
static uint16_t rd16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* The reading state shared by the stages. */
typedef struct reader {
    const unsigned char *p;
    size_t n;
    ev_zip_limits lim;
    ev_zip_problems *probs;
    size_t nprobs_at_start;
    entry *e; /* central entries, in order */
    size_t ne;
    uint64_t cd_off, cd_size, end_off;
    const ev_zip_stream *stream; /* or NULL */
} reader;

/* Records an archive-level problem; returns EV_OK or EV_ENOMEM. */
#define ARCHIVE_PROBLEM(r, ...) ev_zip_problems_add((r)->probs, CHECK, NULL, 0, __VA_ARGS__)
/* Records a problem of entry x; returns EV_OK or EV_ENOMEM. */
#define ENTRY_PROBLEM(r, x, ...)                                                                             \
    ev_zip_problems_add((r)->probs, CHECK, (const char *)(x)->name, (x)->name_len, __VA_ARGS__)

/* Returns 1 when any problem has been recorded by this reading. */
static int has_problems(const reader *r)
{
    return ev_zip_problems_count(r->probs) > r->nprobs_at_start;
}

/*
 * Finds the one end record: a signature in the last 64 KiB + 22 bytes whose
 * comment runs exactly to the end of the file.  Records a problem when there
 * is none, more than one, or only ones followed by trailing bytes.
 * OUT: *end_off on EV_OK with no new problem.  Returns EV_OK or EV_ENOMEM.
 */
static ev_status find_end(reader *r, uint64_t *end_off, int *found)
{
    size_t i, lowest, exact = 0, loose = 0;
    size_t exact_at = 0, loose_at = 0;

    *found = 0;
    if (r->n == 0)
        return ARCHIVE_PROBLEM(r, "empty file: not a zip archive");
    if (r->n < END_LEN)
        return ARCHIVE_PROBLEM(r, "not a zip archive: %zu bytes, shorter than an end record", r->n);
    lowest = r->n - END_LEN > MAX_COMMENT ? r->n - END_LEN - MAX_COMMENT : 0;
    for (i = r->n - END_LEN + 1; i-- > lowest;) {
        uint64_t stop;
        if (rd32(r->p + i) != SIG_END)
            continue;
        stop = (uint64_t)i + END_LEN + rd16(r->p + i + 20);
        if (stop == r->n) {
            if (!exact++)
                exact_at = i;
        } else if (stop < r->n) {
            if (!loose++)
                loose_at = i;
        }
    }
    if (exact > 1)
        return ARCHIVE_PROBLEM(r, "%zu end records: ambiguous archive", exact);
    if (exact == 0 && loose > 0)
        return ARCHIVE_PROBLEM(
            r, "%llu trailing bytes after the end record",
            (unsigned long long)(r->n - (loose_at + END_LEN + rd16(r->p + loose_at + 20))));
    if (exact == 0)
        return ARCHIVE_PROBLEM(r,
                               "not a zip archive: no end record in the last %zu bytes "
                               "(truncated or not a zip)",
                               r->n - lowest);
    *end_off = exact_at;
    *found = 1;
    return EV_OK;
}

/*
 * Parses the end record at r->end_off and checks where the central
 * directory lies.  Sets r->cd_off, r->cd_size.  OUT: *count, the entry count.
 * Records a problem (and leaves *ok 0) when the layout is refused.
 */
static ev_status parse_end(reader *r, size_t *count, int *ok)
{
    const unsigned char *e = r->p + r->end_off;
    uint16_t disk = rd16(e + 4), cd_disk = rd16(e + 6);
    uint16_t n_disk = rd16(e + 8), n_total = rd16(e + 10);
    uint32_t cd_size = rd32(e + 12), cd_off = rd32(e + 16);
    uint16_t comment = rd16(e + 20);
    uint64_t cd_end = (uint64_t)cd_off + cd_size;
    ev_status rc = EV_OK;

    *ok = 0;
    if ((r->end_off >= ZIP64_LOCATOR_LEN &&
         rd32(r->p + r->end_off - ZIP64_LOCATOR_LEN) == SIG_ZIP64_LOCATOR) ||
        n_disk == 0xffff || n_total == 0xffff || cd_size == 0xffffffffu || cd_off == 0xffffffffu)
        return ARCHIVE_PROBLEM(r, "ZIP64 archive: not supported (bundles are below 4 GiB "
                                  "and 65,535 members)");
    if (disk != 0 || cd_disk != 0 || n_disk != n_total)
        return ARCHIVE_PROBLEM(r, "multi-disk archive: not supported");
    if (n_total > r->lim.max_members)
        return ARCHIVE_PROBLEM(r, "%u entries exceed the cap of %zu members", n_total, r->lim.max_members);
    if (comment != 0 && (rc = ARCHIVE_PROBLEM(r,
                                              "archive comment of %u bytes: bundles "
                                              "have none",
                                              comment)))
        return rc;
    if (cd_end > r->end_off)
        return ARCHIVE_PROBLEM(r,
                               "central directory out of bounds: offset %u + size %u "
                               "runs past the end record at %llu",
                               cd_off, cd_size, (unsigned long long)r->end_off);
    if (cd_end < r->end_off) {
        uint64_t delta = r->end_off - cd_end;
        if (r->end_off >= cd_size && cd_size >= 4 && rd32(r->p + r->end_off - cd_size) == SIG_CENTRAL)
            return ARCHIVE_PROBLEM(r,
                                   "%llu bytes prepended to the archive: the central "
                                   "directory is not at its recorded offset %u",
                                   (unsigned long long)delta, cd_off);
        return ARCHIVE_PROBLEM(r,
                               "%llu unaccounted bytes between the central directory "
                               "and the end record",
                               (unsigned long long)delta);
    }
    r->cd_off = cd_off;
    r->cd_size = cd_size;
    *count = n_total;
    *ok = 1;
    return EV_OK;
}

/*
 * Walks extra fields x[0..len): each header id and length must lie within.
 * Returns NULL when acceptable, else a static reason (ZIP64, Unicode path,
 * encryption headers, or a malformed field).
 */
static const char *extra_problem(const unsigned char *x, size_t len)
{
    size_t i = 0;

    while (i < len) {
        uint16_t id, n;
        if (len - i < 4)
            return "malformed extra field (truncated header)";
        id = rd16(x + i);
        n = rd16(x + i + 2);
        if (len - i - 4 < n)
            return "malformed extra field (length runs past the field)";
        if (id == 0x0001)
            return "ZIP64 extra field: not supported";
        if (id == 0x7075)
            return "Info-ZIP Unicode path extra field: refused (it can rename the member)";
        if (id == 0x9901 || id == 0x0017)
            return "encryption extra field: encrypted members are refused";
        i += 4u + n;
    }
    return NULL;
}

/*
 * Parses count central entries from r->cd_off, exactly filling the
 * directory.  Sets r->e and r->ne.  Records a problem (and leaves *ok 0)
 * when an entry lies out of bounds or the count disagrees.
 */
static ev_status parse_central(reader *r, size_t count, int *ok)
{
    uint64_t pos = r->cd_off, cd_end = r->cd_off + r->cd_size;
    size_t k = 0;
    ev_status rc = EV_OK;

    *ok = 0;
    r->e = calloc(count ? count : 1, sizeof *r->e);
    if (!r->e)
        return EV_ENOMEM;
    while (pos < cd_end) {
        const unsigned char *c = r->p + pos;
        entry *x;
        uint16_t nlen, elen, clen;
        if (k == count)
            return ARCHIVE_PROBLEM(r,
                                   "entry count mismatch: the end record says %zu, the "
                                   "central directory holds more",
                                   count);
        if (cd_end - pos < CENTRAL_LEN)
            return ARCHIVE_PROBLEM(r, "central directory entry %zu truncated", k);
        if (rd32(c) != SIG_CENTRAL)
            return ARCHIVE_PROBLEM(r,
                                   "central directory entry %zu: bad signature at offset "
                                   "%llu",
                                   k, (unsigned long long)pos);
        nlen = rd16(c + 28);
        elen = rd16(c + 30);
        clen = rd16(c + 32);
        if (cd_end - pos - CENTRAL_LEN < (uint64_t)nlen + elen + clen)
            return ARCHIVE_PROBLEM(r, "central directory entry %zu runs past the directory", k);
        x = &r->e[k];
        x->name = c + CENTRAL_LEN;
        x->name_len = nlen;
        x->made_by = rd16(c + 4);
        x->version_needed = rd16(c + 6);
        x->flags = rd16(c + 8);
        x->method = rd16(c + 10);
        x->dos_time = rd16(c + 12);
        x->dos_date = rd16(c + 14);
        x->crc = rd32(c + 16);
        x->csize = rd32(c + 20);
        x->usize = rd32(c + 24);
        x->ext_attr = rd32(c + 38);
        x->local_off = rd32(c + 42);
        if (x->csize == 0xffffffffu || x->usize == 0xffffffffu || x->local_off == 0xffffffffu ||
            rd16(c + 34) == 0xffff)
            return ENTRY_PROBLEM(r, x, "ZIP64 entry: not supported");
        if (rd16(c + 34) != 0)
            return ENTRY_PROBLEM(r, x,
                                 "entry on disk %u: multi-disk archives are not "
                                 "supported",
                                 rd16(c + 34));
        if (elen) {
            const char *why = extra_problem(c + CENTRAL_LEN + nlen, elen);
            if (why && (rc = ENTRY_PROBLEM(r, x, "central %s", why)))
                return rc;
            if (why)
                x->bad = 1;
        }
        if (clen) {
            if ((rc = ENTRY_PROBLEM(r, x, "member comment of %u bytes: bundles have none", clen)))
                return rc;
            x->bad = 1;
        }
        pos += CENTRAL_LEN + (uint64_t)nlen + elen + clen;
        k++;
    }
    if (k != count)
        return ARCHIVE_PROBLEM(r,
                               "entry count mismatch: the end record says %zu, the "
                               "central directory holds %zu",
                               count, k);
    r->ne = k;
    *ok = 1;
    return EV_OK;
}

/*
 * Checks entry x's local header: at its offset, before the central
 * directory, fields equal to the central ones, name byte for byte, data
 * within the entries area.  Sets x->start and x->end.  Records a problem
 * (and sets *bad) otherwise.
 */
static ev_status check_local(reader *r, entry *x, int *bad)
{
    const unsigned char *l;
    uint16_t nlen, elen;
    uint64_t data;
    const char *why;

    *bad = 1;
    if ((uint64_t)x->local_off + LOCAL_LEN > r->cd_off)
        return ENTRY_PROBLEM(r, x, "local header offset %u lies outside the entries area", x->local_off);
    l = r->p + x->local_off;
    if (rd32(l) != SIG_LOCAL)
        return ENTRY_PROBLEM(r, x, "no local header at offset %u", x->local_off);
    if (rd16(l + 4) != x->version_needed || rd16(l + 6) != x->flags || rd16(l + 8) != x->method ||
        rd16(l + 10) != x->dos_time || rd16(l + 12) != x->dos_date)
        return ENTRY_PROBLEM(r, x,
                             "local header (version, flags, method or time) does not "
                             "match the central directory");
    if (!(x->flags & GP_DATA_DESCRIPTOR) &&
        (rd32(l + 14) != x->crc || rd32(l + 18) != x->csize || rd32(l + 22) != x->usize))
        return ENTRY_PROBLEM(r, x,
                             "local header CRC or sizes do not match the central "
                             "directory (size fields lie)");
    nlen = rd16(l + 26);
    elen = rd16(l + 28);
    data = (uint64_t)x->local_off + LOCAL_LEN + nlen + elen;
    if (data > r->cd_off)
        return ENTRY_PROBLEM(r, x, "local header runs into the central directory");
    if (nlen != x->name_len || memcmp(l + LOCAL_LEN, x->name, nlen) != 0)
        return ENTRY_PROBLEM(r, x, "local header name differs from the central name");
    if (elen && (why = extra_problem(l + LOCAL_LEN + nlen, elen)))
        return ENTRY_PROBLEM(r, x, "local %s", why);
    if (data + x->csize > r->cd_off)
        return ENTRY_PROBLEM(r, x,
                             "compressed data (%u bytes at %llu) runs into the central "
                             "directory (size fields lie or the archive is truncated)",
                             x->csize, (unsigned long long)data);
    x->start = x->local_off;
    x->end = data + x->csize;
    *bad = 0;
    return EV_OK;
}

/* qsort comparator: entry pointers by start offset, then end. */
static int cmp_entry_start(const void *a, const void *b)
{
    const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return 0;
}

/*
 * Checks that the entries tile [0, cd_off) exactly: the first at offset 0,
 * each next one where the previous ends, the last ending at the central
 * directory.  Records every overlap and gap.
 */
static ev_status check_tiling(reader *r)
{
    ev_status rc = EV_OK;
    entry **s = NULL;
    size_t i;
    uint64_t at = 0;

    if (r->ne == 0) {
        if (r->cd_off != 0)
            return ARCHIVE_PROBLEM(r, "%llu bytes before an empty central directory",
                                   (unsigned long long)r->cd_off);
        return EV_OK;
    }
    s = malloc(r->ne * sizeof *s);
    if (!s)
        return EV_ENOMEM;
    for (i = 0; i < r->ne; i++)
        s[i] = &r->e[i];
    qsort(s, r->ne, sizeof *s, cmp_entry_start);
    if (s[0]->start != 0)
        rc = ARCHIVE_PROBLEM(r, "%llu bytes before the first entry (prepended bytes)",
                             (unsigned long long)s[0]->start);
    at = s[0]->end;
    for (i = 1; i < r->ne && !rc; i++) {
        if (s[i]->start < at)
            rc = ENTRY_PROBLEM(r, s[i],
                               "overlapping entries: its bytes [%llu, %llu) overlap "
                               "the previous entry's, which end at %llu",
                               (unsigned long long)s[i]->start, (unsigned long long)s[i]->end,
                               (unsigned long long)at);
        else if (s[i]->start > at)
            rc = ENTRY_PROBLEM(r, s[i], "%llu unaccounted bytes before this entry",
                               (unsigned long long)(s[i]->start - at));
        if (s[i]->end > at)
            at = s[i]->end;
    }
    if (!rc && at < r->cd_off)
        rc = ARCHIVE_PROBLEM(r, "%llu unaccounted bytes before the central directory",
                             (unsigned long long)(r->cd_off - at));
    free(s);
    return rc;
}

/*
 * Stage 1: the layout.  *ok is 1 when every byte is accounted for (member
 * problems found on the way, e.g. a comment or a refused extra field, are
 * recorded but do not stop the reading here).
 */
static ev_status check_layout(reader *r, int *ok)
{
    ev_status rc;
    size_t count = 0, i, before;
    int found = 0, good = 0, bad = 0, any_bad = 0;

    *ok = 0;
    if ((rc = find_end(r, &r->end_off, &found)) || !found)
        return rc;
    if ((rc = parse_end(r, &count, &good)) || !good)
        return rc;
    if ((rc = parse_central(r, count, &good)) || !good)
        return rc;
    for (i = 0; i < r->ne; i++) {
        if ((rc = check_local(r, &r->e[i], &bad)))
            return rc;
        any_bad |= bad;
    }
    if (any_bad)
        return EV_OK;
    before = ev_zip_problems_count(r->probs);
    if ((rc = check_tiling(r)))
        return rc;
    *ok = ev_zip_problems_count(r->probs) == before;
    return EV_OK;
}

/* ------------------------------------------------------------ member rules */

/*
 * Applies the member rules to entry x (stage 2), recording every failure
 * and setting x->bad when one fails.  Returns EV_OK or EV_ENOMEM.
 */
static ev_status check_member(reader *r, entry *x)
{
    ev_status rc = EV_OK;
    char buf[128];
    const char *why;
    unsigned host = x->made_by >> 8;
    uint32_t mode = x->ext_attr >> 16, type = mode & S_TYPE_MASK;

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        x->bad = 1;                                                                                          \
        if ((rc = ENTRY_PROBLEM(r, x, __VA_ARGS__)))                                                         \
            return rc;                                                                                       \
    } while (0)

    if ((why = ev_name_problem((const char *)x->name, x->name_len, buf, sizeof buf)))
        FAIL("%s", why);
    if (x->flags & (GP_ENCRYPTED | GP_STRONG_ENCRYPTION | GP_MASKED_HEADERS))
        FAIL("encrypted member (general purpose flags 0x%04x): refused", x->flags);
    else if (x->flags & GP_DATA_DESCRIPTOR)
        FAIL("data descriptor (general purpose flag bit 3): not written by our bundles");
    else if (x->flags & ~GP_ALLOWED)
        FAIL("unsupported general purpose flags 0x%04x", x->flags);
    if (x->method == 99)
        FAIL("compression method 99 (WinZip AES encryption): encrypted members are refused");
    else if (x->method != METHOD_STORE && x->method != METHOD_DEFLATE)
        FAIL("unsupported compression method %u: only store (0) and deflate (8)", x->method);
    if (x->version_needed > 20)
        FAIL("needs zip version %u.%u to extract: above 2.0 (store/deflate)", x->version_needed / 10,
             x->version_needed % 10);
    if (host == HOST_UNIX && type != S_TYPE_REG && type != 0) {
        if (type == S_TYPE_LNK)
            FAIL("symbolic link (mode 0%o): regular files only", (unsigned)mode);
        else if (type == S_TYPE_DIR)
            FAIL("directory (mode 0%o): regular files only", (unsigned)mode);
        else
            FAIL("not a regular file (mode 0%o): regular files only", (unsigned)mode);
    } else if (host != HOST_UNIX && host != HOST_DOS) {
        FAIL("made on host system %u: only MS-DOS (0) and Unix (3) attributes are read", host);
    }
    if (x->ext_attr & (DOS_DIR | DOS_VOLUME))
        FAIL("MS-DOS attributes 0x%02x mark a directory or volume: regular files only",
             (unsigned)(x->ext_attr & 0xff));
    if (x->method == METHOD_STORE && x->csize != x->usize)
        FAIL("stored member's compressed size %u differs from its size %u (size fields lie)", x->csize,
             x->usize);
    if (x->usize > r->lim.max_member_size)
        FAIL("declared size %u exceeds the member cap of %llu bytes", x->usize,
             (unsigned long long)r->lim.max_member_size);
    else if (x->method == METHOD_DEFLATE && x->usize > r->lim.ratio_min_size &&
             (x->csize == 0 || x->usize / x->csize > r->lim.max_ratio))
        FAIL("compression ratio %llu:1 (%u bytes from %u) exceeds the cap of %llu:1 "
             "(deflate bomb?)",
             (unsigned long long)(x->csize ? x->usize / x->csize : x->usize), x->usize, x->csize,
             (unsigned long long)r->lim.max_ratio);
#undef FAIL
    return rc;
}

/* strcmp-like order on (bytes, length) of two entries' names. */
static int cmp_entry_name(const void *a, const void *b)
{
    const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    if (c)
        return c;
    if (x->name_len != y->name_len)
        return x->name_len < y->name_len ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Records every duplicate name (all entries are iterated). */
static ev_status check_duplicates(reader *r)
{
    ev_status rc = EV_OK;
    entry **s;
    size_t i;

    if (r->ne < 2)
        return EV_OK;
    s = malloc(r->ne * sizeof *s);
    if (!s)
        return EV_ENOMEM;
    for (i = 0; i < r->ne; i++)
        s[i] = &r->e[i];
    qsort(s, r->ne, sizeof *s, cmp_entry_name);
    for (i = 1; i < r->ne && !rc; i++) {
        if (s[i]->name_len == s[i - 1]->name_len && memcmp(s[i]->name, s[i - 1]->name, s[i]->name_len) == 0) {
            s[i]->bad = s[i - 1]->bad = 1;
            rc = ENTRY_PROBLEM(r, s[i], "duplicate name: entries %zu and %zu", (size_t)(s[i - 1] - r->e),
                               (size_t)(s[i] - r->e));
        }
    }
    free(s);
    return rc;
}

/*
 * Stage 2: every member rule on every entry, the duplicate names and the
 * caps on the totals, all before anything is inflated.  *read_ok is 1 when
 * the totals allow reading the members that passed.
 */
static ev_status check_members(reader *r, int *read_ok)
{
    ev_status rc = EV_OK;
    uint64_t total = 0;
    size_t i;

    *read_ok = 0;
    for (i = 0; i < r->ne; i++) {
        if ((rc = check_member(r, &r->e[i])))
            return rc;
        total += r->e[i].usize;
    }
    if ((rc = check_duplicates(r)))
        return rc;
    if (total > r->lim.max_total_size)
        return ARCHIVE_PROBLEM(r, "declared sizes total %llu bytes, above the cap of %llu",
                               (unsigned long long)total, (unsigned long long)r->lim.max_total_size);
    if (total > r->lim.ratio_min_size && total / (r->n ? r->n : 1) > r->lim.max_ratio)
        return ARCHIVE_PROBLEM(r,
                               "declared sizes total %llu bytes from a %zu-byte archive: "
                               "ratio above the cap of %llu:1 (deflate bomb?)",
                               (unsigned long long)total, r->n, (unsigned long long)r->lim.max_ratio);
    *read_ok = 1;
    return EV_OK;
}

/* -------------------------------------------------------------- libzip part */

/*
 * Translates a libzip error code, once, for the whole module: ZIP_ER_MEMORY
 * is the reader's own failure (EV_ENOMEM); every other code is a verdict on
 * the archive (EV_EVERIFY) with *reason a static description.
 */
static ev_status zip_code_status(int code, const char **reason)
{
    switch (code) {
    case ZIP_ER_MEMORY:
        *reason = "out of memory in libzip";
        return EV_ENOMEM;
    case ZIP_ER_CRC:
        *reason = "CRC mismatch: the data is damaged";
        return EV_EVERIFY;
    case ZIP_ER_ZLIB:
    case ZIP_ER_COMPRESSED_DATA:
        *reason = "corrupt deflate stream";
        return EV_EVERIFY;
    case ZIP_ER_EOF:
    case ZIP_ER_READ:
        *reason = "data ends early (truncated)";
        return EV_EVERIFY;
    case ZIP_ER_NOZIP:
        *reason = "not a zip archive";
        return EV_EVERIFY;
    case ZIP_ER_INCONS:
        *reason = "inconsistent archive";
        return EV_EVERIFY;
    case ZIP_ER_COMPNOTSUPP:
        *reason = "compression method not supported";
        return EV_EVERIFY;
    case ZIP_ER_ENCRNOTSUPP:
    case ZIP_ER_NOPASSWD:
    case ZIP_ER_WRONGPASSWD:
        *reason = "encrypted member";
        return EV_EVERIFY;
    case ZIP_ER_MULTIDISK:
        *reason = "multi-disk archive";
        return EV_EVERIFY;
    default:
        *reason = "archive refused";
        return EV_EVERIFY;
    }
}

/* Records libzip's error ze as a problem of entry x (NULL: the archive);
 * returns EV_OK, or EV_ENOMEM when libzip itself ran out of memory. */
static ev_status zip_error_problem(reader *r, const entry *x, zip_error_t *ze, ev_err *err)
{
    const char *reason;
    ev_status st = zip_code_status(zip_error_code_zip(ze), &reason);

    if (st == EV_ENOMEM)
        return ev_err_set(err, EV_ENOMEM, "zipread: %s", reason);
    if (x)
        return ENTRY_PROBLEM(r, x, "libzip: %s (%s)", reason, zip_error_strerror(ze));
    return ARCHIVE_PROBLEM(r, "libzip: %s (%s)", reason, zip_error_strerror(ze));
}

/*
 * Checks that libzip sees entry i as we do (name, sizes, method, CRC, no
 * encryption, attributes).  Records a problem and sets x->bad otherwise.
 */
static ev_status check_libzip_view(reader *r, zip_t *za, zip_uint64_t i, entry *x)
{
    const char *name = zip_get_name(za, i, ZIP_FL_ENC_RAW);
    zip_stat_t st;
    zip_uint8_t opsys = 0;
    zip_uint32_t attr = 0;

    if (!name || strlen(name) != x->name_len || memcmp(name, x->name, x->name_len) != 0) {
        x->bad = 1;
        return ENTRY_PROBLEM(r, x, "libzip reads a different name for entry %llu", (unsigned long long)i);
    }
    zip_stat_init(&st);
    if (zip_stat_index(za, i, ZIP_FL_ENC_RAW, &st) != 0 ||
        (st.valid & (ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD | ZIP_STAT_CRC |
                     ZIP_STAT_ENCRYPTION_METHOD)) !=
            (ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD | ZIP_STAT_CRC |
             ZIP_STAT_ENCRYPTION_METHOD)) {
        x->bad = 1;
        return ENTRY_PROBLEM(r, x, "libzip cannot stat the entry");
    }
    if (st.encryption_method != ZIP_EM_NONE) {
        x->bad = 1;
        return ENTRY_PROBLEM(r, x, "encrypted member (libzip encryption method %u): refused",
                             (unsigned)st.encryption_method);
    }
    if (st.size != x->usize || st.comp_size != x->csize || st.crc != x->crc || st.comp_method != x->method) {
        x->bad = 1;
        return ENTRY_PROBLEM(r, x, "libzip reads different sizes, CRC or method");
    }
    if (zip_file_get_external_attributes(za, i, 0, &opsys, &attr) != 0 || opsys != (x->made_by >> 8) ||
        attr != x->ext_attr) {
        x->bad = 1;
        return ENTRY_PROBLEM(r, x, "libzip reads different attributes");
    }
    return EV_OK;
}

/*
 * Reads entry i with zip_fread until it returns 0, holding it to its
 * declared size (one byte more is refused), and checks the CRC again and
 * hashes it chunk by chunk as it arrives (while the chunk is in cache).
 * The buffer is sized from the declared size at once (ev_alloc_big): the
 * caps of stage 2 (member size, total, ratio) bound it before anything is
 * inflated.
 * OUT: *m filled (name and bytes allocated) when *good is 1; a problem
 * recorded when 0.  Returns EV_OK, or EV_ENOMEM with err set.
 */
static ev_status read_member(reader *r, zip_t *za, zip_uint64_t i, const entry *x, ev_zip_member *m,
                             int *good, ev_err *err)
{
    ev_status rc = EV_OK;
    zip_file_t *zf = NULL;
    unsigned char *buf = NULL;
    char *name = NULL;
    ev_sha256 *sha = NULL;
    size_t got = 0, cap = (size_t)x->usize + 1, want;
    uLong crc = crc32(0L, Z_NULL, 0);
    /* a streamed member goes through one piece-sized buffer */
    int streamed =
        r->stream && x->name_len == strlen(r->stream->name) && !memcmp(x->name, r->stream->name, x->name_len);
    size_t bufsize = streamed ? (cap < READ_CHUNK ? cap : READ_CHUNK) : cap;

    *good = 0;
    if (!(buf = ev_alloc_big(bufsize + 1)) || ev_sha256_new(&sha)) {
        rc = ev_err_set(err, EV_ENOMEM, "zipread: out of memory reading a member");
        goto out;
    }
    zf = zip_fopen_index(za, i, 0);
    if (!zf) {
        rc = zip_error_problem(r, x, zip_get_error(za), err);
        goto out;
    }
    for (;;) {
        zip_int64_t got_now;
        if (got == cap) {
            rc = ENTRY_PROBLEM(r, x,
                               "inflates past its declared size of %u bytes "
                               "(size fields lie)",
                               x->usize);
            goto out;
        }
        want = cap - got < READ_CHUNK ? cap - got : READ_CHUNK;
        unsigned char *at = streamed ? buf : buf + got;
        got_now = zip_fread(zf, at, want);
        if (got_now < 0) {
            rc = zip_error_problem(r, x, zip_file_get_error(zf), err);
            goto out;
        }
        if (got_now == 0)
            break;
        crc = crc32(crc, at, (uInt)got_now); /* <= READ_CHUNK */
        if ((rc = ev_sha256_update(sha, at, (size_t)got_now))) {
            ev_err_set(err, rc, "zipread: SHA-256 failed");
            goto out;
        }
        got += (size_t)got_now;
        if (streamed && got <= x->usize) /* past the size: refused next turn */
            r->stream->put(r->stream->ctx, at, (size_t)got_now, x->usize);
    }
    if (got != x->usize) {
        rc = ENTRY_PROBLEM(r, x,
                           "holds %zu bytes, not its declared size of %u (size fields "
                           "lie)",
                           got, x->usize);
        goto out;
    }
    if (crc != x->crc) {
        rc = ENTRY_PROBLEM(r, x, "CRC mismatch: declared %08x, data gives %08lx", x->crc, crc);
        goto out;
    }
    if (streamed) {
        free(buf);
        buf = NULL;
    } else {
        buf[got] = 0;
    }
    if (!(name = malloc(x->name_len + 1))) {
        rc = ev_err_set(err, EV_ENOMEM, "zipread: out of memory");
        goto out;
    }
    memcpy(name, x->name, x->name_len);
    name[x->name_len] = 0;
    if ((rc = ev_sha256_final(sha, m->sha256))) {
        ev_err_set(err, rc, "zipread: SHA-256 failed");
        goto out;
    }
    ev_hex_encode(m->sha256, EV_SHA256_LEN, m->sha256_hex);
    m->name = name;
    m->size = x->usize;
    m->comp_size = x->csize;
    m->method = x->method;
    m->crc32 = x->crc;
    m->data = buf; /* NULL when streamed */
    name = NULL;
    buf = NULL;
    *good = 1;
out:
    if (zf)
        zip_fclose(zf);
    ev_sha256_free(sha);
    free(buf);
    free(name);
    return rc;
}

/* qsort comparator: member pointers by name. */
static int cmp_member_name(const void *a, const void *b)
{
    return strcmp((*(const ev_zip_member *const *)a)->name, (*(const ev_zip_member *const *)b)->name);
}

/*
 * Stage 3: opens the archive with libzip, checks its view of every entry
 * and reads every entry that passed the member rules.  OUT: *out when the
 * whole reading produced no problem.  Returns EV_OK or EV_ENOMEM.
 */
static ev_status read_with_libzip(reader *r, ev_zip **out, ev_err *err)
{
    ev_status rc = EV_OK;
    zip_error_t ze;
    zip_source_t *src = NULL;
    zip_t *za = NULL;
    ev_zip *z = NULL;
    size_t i;

    zip_error_init(&ze);
    src = zip_source_buffer_create(r->p, r->n, 0, &ze);
    if (!src) {
        rc = zip_error_problem(r, NULL, &ze, err);
        goto out;
    }
    za = zip_open_from_source(src, ZIP_CHECKCONS | ZIP_RDONLY, &ze);
    if (!za) {
        zip_source_free(src);
        rc = zip_error_problem(r, NULL, &ze, err);
        goto out;
    }
    if (zip_get_num_entries(za, 0) != (zip_int64_t)r->ne) {
        rc = ARCHIVE_PROBLEM(r, "libzip sees %lld entries, the central directory holds %zu",
                             (long long)zip_get_num_entries(za, 0), r->ne);
        goto out;
    }
    if (!(z = calloc(1, sizeof *z)) || !(z->m = calloc(r->ne ? r->ne : 1, sizeof *z->m)) ||
        !(z->by_name = calloc(r->ne ? r->ne : 1, sizeof *z->by_name))) {
        rc = ev_err_set(err, EV_ENOMEM, "zipread: out of memory");
        goto out;
    }
    for (i = 0; i < r->ne && !rc; i++) {
        int good = 0;
        if (r->e[i].bad)
            continue;
        if ((rc = check_libzip_view(r, za, i, &r->e[i])) || r->e[i].bad)
            continue;
        rc = read_member(r, za, i, &r->e[i], &z->m[z->count], &good, err);
        if (good)
            z->count++;
    }
    if (rc || has_problems(r))
        goto out;
    for (i = 0; i < z->count; i++)
        z->by_name[i] = &z->m[i];
    qsort(z->by_name, z->count, sizeof *z->by_name, cmp_member_name);
    *out = z;
    z = NULL;
out:
    if (za)
        zip_discard(za);
    zip_error_fini(&ze);
    ev_zip_free(z);
    return rc;
}

/* ------------------------------------------------------------------- entry */

/* Fills *lim with the defaults of zipread.h. */
void ev_zip_limits_default(ev_zip_limits *lim)
{
    lim->max_members = EV_ZIP_DEFAULT_MAX_MEMBERS;
    lim->max_member_size = EV_ZIP_DEFAULT_MAX_MEMBER_SIZE;
    lim->max_total_size = EV_ZIP_DEFAULT_MAX_TOTAL_SIZE;
    lim->max_ratio = EV_ZIP_DEFAULT_MAX_RATIO;
    lim->ratio_min_size = EV_ZIP_DEFAULT_RATIO_MIN_SIZE;
}

/* Reads the archive p[0..n); see zipread.h for the contract. */
ev_status ev_zip_read_mem(const void *p, size_t n, const ev_zip_limits *lim, ev_zip **out,
                          ev_zip_problems *probs, ev_err *err)
{
    return ev_zip_read_mem_stream(p, n, lim, NULL, out, probs, err);
}

/* See zipread.h. */
ev_status ev_zip_read_mem_stream(const void *p, size_t n, const ev_zip_limits *lim,
                                 const ev_zip_stream *stream, ev_zip **out, ev_zip_problems *probs,
                                 ev_err *err)
{
    ev_status rc = EV_OK;
    reader r;
    int ok = 0, read_ok = 0;

    if ((!p && n) || !out || !probs)
        return ev_err_set(err, EV_EINVAL, "zipread: NULL argument");
    memset(&r, 0, sizeof r);
    r.p = p;
    r.n = n;
    ev_zip_limits_default(&r.lim);
    if (lim) {
        if (lim->max_members)
            r.lim.max_members = lim->max_members;
        if (lim->max_member_size)
            r.lim.max_member_size = lim->max_member_size;
        if (lim->max_total_size)
            r.lim.max_total_size = lim->max_total_size;
        if (lim->max_ratio)
            r.lim.max_ratio = lim->max_ratio;
        if (lim->ratio_min_size)
            r.lim.ratio_min_size = lim->ratio_min_size;
    }
    r.probs = probs;
    r.stream = stream && stream->name && stream->put ? stream : NULL;
    r.nprobs_at_start = ev_zip_problems_count(probs);

    if ((rc = check_layout(&r, &ok)) || !ok)
        goto out;
    if ((rc = check_members(&r, &read_ok)) || !read_ok)
        goto out;
    rc = read_with_libzip(&r, out, err);
out:
    if (rc == EV_ENOMEM)
        ev_err_set(err, EV_ENOMEM, "zipread: out of memory");
    if (!rc && has_problems(&r))
        rc = EV_EVERIFY;
    free(r.e);
    return rc;
}
