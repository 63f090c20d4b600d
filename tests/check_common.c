/*
 * check_common.c: tests of the status names and error helpers, the growable
 * buffer with its file reading and atomic writing, SHA-256 (NIST FIPS 180-2
 * example vectors, one-shot, streaming in uneven chunks, and from files) and
 * hex encoding/decoding with its refusals.
 */
#include <check.h>

#include "progress.h"
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "member.h"
#include "names.h"
#include "sha256.h"
#include "status.h"
#include "vocab.h"

static char tmpdir[256];

/* Creates a fresh temp directory for the test (fixture). */
static void setup_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/check_common.XXXXXX", ev_test_tmp());
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

/* Removes the temp directory and the plain files in it. */
static void teardown_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    char path[512];

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
        if (unlink(path) != 0)
            rmdir(path);
    }
    closedir(d);
    rmdir(tmpdir);
}

/* Returns the number of directory entries in tmpdir (without . and ..). */
static int count_entries(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    int n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* ---- status ---------------------------------------------------------- */

START_TEST(test_every_status_has_a_distinct_name)
{
    int i, j;
    for (i = 0; i < EV_STATUS_COUNT; i++) {
        const char *a = ev_strerror((ev_status)i);
        ck_assert_ptr_nonnull(a);
        ck_assert_str_ne(a, "unknown status");
        for (j = 0; j < i; j++)
            ck_assert_str_ne(a, ev_strerror((ev_status)j));
    }
    ck_assert_str_eq(ev_strerror(EV_OK), "ok");
    ck_assert_str_eq(ev_strerror(EV_ECRYPTO), "crypto library error");
}
END_TEST

START_TEST(test_out_of_range_status_is_unknown)
{
    ck_assert_str_eq(ev_strerror(EV_STATUS_COUNT), "unknown status");
    ck_assert_str_eq(ev_strerror((ev_status)-1), "unknown status");
}
END_TEST

START_TEST(test_err_set_formats_and_returns_the_status)
{
    ev_err err;
    ck_assert_int_eq(ev_err_set(&err, EV_EFORMAT, "line %d: %s", 3, "bad"), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 3: bad");
    ck_assert_int_eq(ev_err_set(NULL, EV_EIO, "x"), EV_EIO);
    ev_err_prefix(&err, "file %s", "a.csv");
    ck_assert_str_eq(err.msg, "file a.csv: line 3: bad");
    ev_err_prefix(NULL, "nothing");
}
END_TEST

START_TEST(test_err_set_truncates_long_messages)
{
    ev_err err;
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ev_err_set(&err, EV_EIO, "%s", big);
    ck_assert_uint_eq(strlen(err.msg), sizeof err.msg - 1);
    ev_err_prefix(&err, "p");
    ck_assert_uint_eq(strlen(err.msg), sizeof err.msg - 1);
    ck_assert(strncmp(err.msg, "p: xxx", 6) == 0);
}
END_TEST

/* ---- buf ------------------------------------------------------------- */

START_TEST(test_buf_appends_and_stays_nul_terminated)
{
    ev_buf b = EV_BUF_INIT;
    ck_assert_ptr_null(b.data);
    ck_assert_int_eq(ev_buf_append(&b, "ab", 2), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&b, "cd"), EV_OK);
    ck_assert_int_eq(ev_buf_printf(&b, "-%d-%s", 42, "x"), EV_OK);
    ck_assert_uint_eq(b.len, 9);
    ck_assert_str_eq(b.data, "abcd-42-x");
    ck_assert_int_eq(ev_buf_append(&b, "\0z", 2), EV_OK);
    ck_assert_uint_eq(b.len, 11);
    ck_assert_int_eq(memcmp(b.data, "abcd-42-x\0z", 12), 0);
    ev_buf_reset(&b);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_str_eq(b.data, "");
    ev_buf_free(&b);
    ck_assert_ptr_null(b.data);
    ck_assert_uint_eq(b.cap, 0);
    ev_buf_free(NULL);
}
END_TEST

START_TEST(test_buf_grows_over_many_appends)
{
    ev_buf b = EV_BUF_INIT;
    size_t i;
    for (i = 0; i < 100000; i++)
        ck_assert_int_eq(ev_buf_printf(&b, "%c", (char)('a' + i % 26)), EV_OK);
    ck_assert_uint_eq(b.len, 100000);
    ck_assert_uint_ge(b.cap, 100001);
    ck_assert_int_eq(b.data[99999], 'a' + 99999 % 26);
    ck_assert_int_eq(b.data[100000], '\0');
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_buf_refuses_sizes_that_overflow)
{
    ev_buf b = EV_BUF_INIT;
    ck_assert_int_eq(ev_buf_append(&b, "abc", 3), EV_OK);
    ck_assert_int_eq(ev_buf_append(&b, "x", SIZE_MAX - 1), EV_ENOMEM);
    ck_assert_uint_eq(b.len, 3);
    ck_assert_str_eq(b.data, "abc");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_buf_steal_hands_over_the_storage)
{
    ev_buf b = EV_BUF_INIT;
    size_t len = 99;
    char *p = ev_buf_steal(&b, &len);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p, "");
    ck_assert_uint_eq(len, 0);
    free(p);
    ev_buf_puts(&b, "hello");
    p = ev_buf_steal(&b, &len);
    ck_assert_str_eq(p, "hello");
    ck_assert_uint_eq(len, 5);
    ck_assert_ptr_null(b.data);
    ck_assert_uint_eq(b.len, 0);
    free(p);
}
END_TEST

START_TEST(test_grow_doubles_an_array_keeping_its_elements_and_refuses_sizes_that_overflow)
{
    int64_t *v = NULL;
    size_t cap = 0, n = 0;
    for (int64_t i = 0; i < 100; i++) {
        ck_assert_int_eq(ev_grow((void **)&v, &cap, n, sizeof *v), EV_OK);
        ck_assert_uint_gt(cap, n);
        v[n++] = i * 7;
    }
    ck_assert_uint_eq(cap, 128); /* 16, 32, 64, 128 */
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(v[i], (int64_t)i * 7);
    /* room left: nothing moves */
    int64_t *before = v;
    ck_assert_int_eq(ev_grow((void **)&v, &cap, 50, sizeof *v), EV_OK);
    ck_assert_ptr_eq(v, before);
    ck_assert_uint_eq(cap, 128);
    /* a size that overflows: refused, the array and its capacity unchanged */
    ck_assert_int_eq(ev_grow((void **)&v, &cap, cap, SIZE_MAX / 64), EV_ENOMEM);
    ck_assert_ptr_eq(v, before);
    ck_assert_uint_eq(cap, 128);
    free(v);
}
END_TEST

START_TEST(test_size_arithmetic_detects_overflow)
{
    size_t r = 7;
    ck_assert_int_eq(ev_size_mul(SIZE_MAX / 2, 2, &r), 0);
    ck_assert_uint_eq(r, SIZE_MAX - 1);
    r = 7;
    ck_assert_int_eq(ev_size_mul(SIZE_MAX / 2 + 1, 2, &r), 1);
    ck_assert_uint_eq(r, 7);
    ck_assert_int_eq(ev_size_mul(0, SIZE_MAX, &r), 0);
    ck_assert_uint_eq(r, 0);
    ck_assert_int_eq(ev_size_add(SIZE_MAX - 1, 1, &r), 0);
    ck_assert_uint_eq(r, SIZE_MAX);
    r = 7;
    ck_assert_int_eq(ev_size_add(SIZE_MAX, 1, &r), 1);
    ck_assert_uint_eq(r, 7);
}
END_TEST

/* ev_alloc_big: small sizes are plain memory; large ones start on a 2 MiB
 * boundary (where huge pages can back them) and are whole and writable;
 * sizes that cannot be rounded up are refused. */
START_TEST(test_alloc_big_aligns_large_arrays_and_refuses_absurd_sizes)
{
    unsigned char *small = ev_alloc_big(100);
    ck_assert_ptr_nonnull(small);
    memset(small, 1, 100);
    free(small);
    size_t n = ((size_t)9 << 20) + 123;
    unsigned char *big = ev_alloc_big(n);
    ck_assert_ptr_nonnull(big);
    ck_assert_uint_eq((uintptr_t)big % ((uintptr_t)2 << 20), 0);
    memset(big, 0xa5, n);
    ck_assert_uint_eq(big[n - 1], 0xa5);
    free(big);
    ck_assert_ptr_null(ev_alloc_big(SIZE_MAX - 5));
}
END_TEST

START_TEST(test_write_then_read_file_round_trips_bytes)
{
    char path[512];
    ev_buf b = EV_BUF_INIT;
    ev_err err = {""};
    static const char data[] = "line1\nbinary\0byte\xff\n";
    struct stat st;

    snprintf(path, sizeof path, "%s/f.bin", tmpdir);
    ck_assert_int_eq(ev_write_file(path, data, sizeof data - 1, &err), EV_OK);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0644);
    ck_assert_int_eq(ev_read_file(path, &b, &err), EV_OK);
    ck_assert_uint_eq(b.len, sizeof data - 1);
    ck_assert_int_eq(memcmp(b.data, data, sizeof data), 0); /* incl. the NUL */
    ev_buf_free(&b);
    ck_assert_int_eq(count_entries(), 1); /* no temp file left behind */
}
END_TEST

START_TEST(test_write_file_replaces_an_existing_file_whole)
{
    char path[512];
    ev_buf b = EV_BUF_INIT;
    ev_err err = {""};

    snprintf(path, sizeof path, "%s/f.txt", tmpdir);
    ck_assert_int_eq(ev_write_file(path, "a much longer first version\n", 28, &err), EV_OK);
    ck_assert_int_eq(ev_write_file(path, "short\n", 6, &err), EV_OK);
    ck_assert_int_eq(ev_read_file(path, &b, &err), EV_OK);
    ck_assert_str_eq(b.data, "short\n");
    ev_buf_free(&b);
    ck_assert_int_eq(count_entries(), 1);
}
END_TEST

START_TEST(test_read_of_an_empty_file_gives_an_empty_string)
{
    char path[512];
    ev_buf b = EV_BUF_INIT;
    ev_err err = {""};

    snprintf(path, sizeof path, "%s/empty", tmpdir);
    ck_assert_int_eq(ev_write_file(path, "", 0, &err), EV_OK);
    ck_assert_int_eq(ev_read_file(path, &b, &err), EV_OK);
    ck_assert_ptr_nonnull(b.data);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_str_eq(b.data, "");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_read_of_a_missing_file_names_path_and_errno)
{
    char path[512], want[600];
    ev_buf b = EV_BUF_INIT;
    ev_err err = {""};

    snprintf(path, sizeof path, "%s/missing.json", tmpdir);
    ck_assert_int_eq(ev_read_file(path, &b, &err), EV_EIO);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    ck_assert_str_eq(err.msg, want);
    ck_assert_ptr_null(b.data);
}
END_TEST

START_TEST(test_read_of_a_directory_is_refused)
{
    ev_buf b = EV_BUF_INIT;
    ev_err err = {""};
    ck_assert_int_eq(ev_read_file(tmpdir, &b, &err), EV_EIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "Is a directory"));
    ck_assert_ptr_null(b.data);
}
END_TEST

START_TEST(test_write_into_a_missing_directory_names_path_and_errno)
{
    char path[512], want[600];
    ev_err err = {""};

    snprintf(path, sizeof path, "%s/nodir/out.zip", tmpdir);
    ck_assert_int_eq(ev_write_file(path, "x", 1, &err), EV_EIO);
    snprintf(want, sizeof want, "%s: cannot create temp file: No such file or directory", path);
    ck_assert_str_eq(err.msg, want);
}
END_TEST

START_TEST(test_failed_rename_leaves_no_temp_file)
{
    char path[512];
    ev_err err = {""};

    /* The target is a directory: rename(file, dir) fails with EISDIR. */
    snprintf(path, sizeof path, "%s/adir", tmpdir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    ck_assert_int_eq(ev_write_file(path, "x", 1, &err), EV_EIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot rename into place: Is a directory"));
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    ck_assert_int_eq(count_entries(), 1); /* only adir itself */
}
END_TEST

/* ---- sha256 ---------------------------------------------------------- */

/* FIPS 180-2 examples and the NIST long-message test. */
static const char *const abc_hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
static const char *const empty_hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
static const char *const two_block_msg = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
static const char *const two_block_hex = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
static const char *const long_msg = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                                    "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
static const char *const long_hex = "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1";
static const char *const million_a_hex = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

START_TEST(test_sha256_matches_the_nist_examples)
{
    char hex[EV_SHA256_HEX_LEN + 1];
    ck_assert_int_eq(ev_sha256_hex("abc", 3, hex), EV_OK);
    ck_assert_str_eq(hex, abc_hex);
    ck_assert_int_eq(ev_sha256_hex("", 0, hex), EV_OK);
    ck_assert_str_eq(hex, empty_hex);
    ck_assert_int_eq(ev_sha256_hex(NULL, 0, hex), EV_OK);
    ck_assert_str_eq(hex, empty_hex);
    ck_assert_int_eq(ev_sha256_hex(two_block_msg, strlen(two_block_msg), hex), EV_OK);
    ck_assert_str_eq(hex, two_block_hex);
    ck_assert_int_eq(ev_sha256_hex(long_msg, strlen(long_msg), hex), EV_OK);
    ck_assert_str_eq(hex, long_hex);
}
END_TEST

START_TEST(test_sha256_of_a_million_a_one_shot_and_streamed_agree)
{
    size_t n = 1000000, at = 0, step = 1;
    char *a = malloc(n);
    uint8_t md[EV_SHA256_LEN];
    char hex[EV_SHA256_HEX_LEN + 1];
    ev_sha256 *h = NULL;

    ck_assert_ptr_nonnull(a);
    memset(a, 'a', n);
    ck_assert_int_eq(ev_sha256_buf(a, n, md), EV_OK);
    ev_hex_encode(md, sizeof md, hex);
    ck_assert_str_eq(hex, million_a_hex);

    /* Uneven chunks (1, 2, 3, ... bytes, and empty updates) cross block edges. */
    memset(md, 0, sizeof md);
    ck_assert_int_eq(ev_sha256_new(&h), EV_OK);
    while (at < n) {
        size_t k = step < n - at ? step : n - at;
        ck_assert_int_eq(ev_sha256_update(h, a + at, k), EV_OK);
        ck_assert_int_eq(ev_sha256_update(h, a, 0), EV_OK);
        at += k;
        step = step % 197 + 1;
    }
    ck_assert_int_eq(ev_sha256_final(h, md), EV_OK);
    ev_hex_encode(md, sizeof md, hex);
    ck_assert_str_eq(hex, million_a_hex);
    ev_sha256_free(h);
    free(a);
}
END_TEST

START_TEST(test_sha256_context_refuses_use_after_final)
{
    ev_sha256 *h = NULL;
    uint8_t md[EV_SHA256_LEN], md2[EV_SHA256_LEN];
    char hex[EV_SHA256_HEX_LEN + 1];

    ck_assert_int_eq(ev_sha256_new(&h), EV_OK);
    ck_assert_int_eq(ev_sha256_update(h, "ab", 2), EV_OK);
    ck_assert_int_eq(ev_sha256_update(h, "c", 1), EV_OK);
    ck_assert_int_eq(ev_sha256_final(h, md), EV_OK);
    ev_hex_encode(md, sizeof md, hex);
    ck_assert_str_eq(hex, abc_hex);
    memcpy(md2, md, sizeof md);
    ck_assert_int_eq(ev_sha256_update(h, "x", 1), EV_EINVAL);
    ck_assert_int_eq(ev_sha256_final(h, md), EV_EINVAL);
    ck_assert_int_eq(memcmp(md, md2, sizeof md), 0);
    ev_sha256_free(h);
    ev_sha256_free(NULL);
}
END_TEST

START_TEST(test_sha256_of_files_matches_the_vectors)
{
    char path[512], hex[EV_SHA256_HEX_LEN + 1];
    uint8_t md[EV_SHA256_LEN];
    ev_err err = {""};
    size_t n = 1000000;
    char *a = malloc(n);

    ck_assert_ptr_nonnull(a);
    memset(a, 'a', n);
    snprintf(path, sizeof path, "%s/million", tmpdir);
    ck_assert_int_eq(ev_write_file(path, a, n, &err), EV_OK);
    ck_assert_int_eq(ev_sha256_file(path, md, &err), EV_OK);
    ev_hex_encode(md, sizeof md, hex);
    ck_assert_str_eq(hex, million_a_hex);

    snprintf(path, sizeof path, "%s/empty", tmpdir);
    ck_assert_int_eq(ev_write_file(path, "", 0, &err), EV_OK);
    ck_assert_int_eq(ev_sha256_file(path, md, &err), EV_OK);
    ev_hex_encode(md, sizeof md, hex);
    ck_assert_str_eq(hex, empty_hex);
    free(a);
}
END_TEST

START_TEST(test_sha256_of_a_missing_file_names_it)
{
    char path[512], want[600];
    uint8_t md[EV_SHA256_LEN] = {7};
    ev_err err = {""};

    snprintf(path, sizeof path, "%s/nope", tmpdir);
    ck_assert_int_eq(ev_sha256_file(path, md, &err), EV_EIO);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    ck_assert_str_eq(err.msg, want);
    ck_assert_int_eq(md[0], 7);
}
END_TEST

/* ---- hex ------------------------------------------------------------- */

START_TEST(test_hex_encodes_lowercase)
{
    static const uint8_t in[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
    char out[13];
    ev_hex_encode(in, sizeof in, out);
    ck_assert_str_eq(out, "00017f80abff");
    ev_hex_encode(in, 0, out);
    ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_hex_decodes_either_case)
{
    uint8_t out[6];
    static const uint8_t want[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
    ck_assert_int_eq(ev_hex_decode("00017f80abff", 6, out), EV_OK);
    ck_assert_int_eq(memcmp(out, want, 6), 0);
    memset(out, 0, sizeof out);
    ck_assert_int_eq(ev_hex_decode("00017F80ABfF", 6, out), EV_OK);
    ck_assert_int_eq(memcmp(out, want, 6), 0);
    ck_assert_int_eq(ev_hex_decode("", 0, out), EV_OK);
}
END_TEST

START_TEST(test_hex_decode_refuses_wrong_length_and_non_hex)
{
    uint8_t out[4] = {9, 9, 9, 9};
    ck_assert_int_eq(ev_hex_decode("abcdef", 4, out), EV_EFORMAT);     /* short */
    ck_assert_int_eq(ev_hex_decode("abcdef0", 4, out), EV_EFORMAT);    /* odd */
    ck_assert_int_eq(ev_hex_decode("abcdef0102", 4, out), EV_EFORMAT); /* long */
    ck_assert_int_eq(ev_hex_decode("abcdefg1", 4, out), EV_EFORMAT);   /* g */
    ck_assert_int_eq(ev_hex_decode("abcd ef1", 4, out), EV_EFORMAT);   /* space */
    ck_assert_int_eq(ev_hex_decode("0xabcdef", 4, out), EV_EFORMAT);   /* prefix */
    ck_assert_int_eq(ev_hex_decode("abcdef0\n", 4, out), EV_EFORMAT);  /* newline */
    ck_assert_int_eq(ev_hex_decode("-1cdef01", 4, out), EV_EFORMAT);   /* sign */
    ck_assert_int_eq(ev_hex_decode("x", 0, out), EV_EFORMAT);          /* long, n = 0 */
    ck_assert_int_eq(out[0], 9);
    ck_assert_int_eq(out[3], 9);
}
END_TEST

/* The one member-name rule (names.h): what it accepts and refuses, and
 * the exporter's ev_member_name_ok agrees on each. */
START_TEST(test_the_member_name_rule_accepts_and_refuses_with_the_reason)
{
    static const char *const ok[] = {"sources/kernels/reduce.cu", "model.json", "outputs/12-1.bin",
                                     "a.b-c_d/E9"};
    static const struct {
        const char *name, *why;
    } bad[] = {
        {"sources/kernels/a+b.cu", "character '+' in name"},
        {"sources/kernels/a b.cu", "character ' ' in name"},
        {"/abs", "absolute name"},
        {"a//b", "empty path component"},
        {"a/../b", "'..' path component"},
        {"a/./b", "'.' path component"},
        {"dir/", "directory entry"},
        {"a\\b", "backslash in name"},
        {"a\tb", "control character in name"},
        {"caf\xc3\xa9", "byte 0xc3 in name"},
        {"", "empty name"},
    };
    char why[96], longname[300];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ck_assert_ptr_null(ev_name_problem(ok[i], strlen(ok[i]), why, sizeof why));
        ck_assert(ev_member_name_ok(ok[i]));
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *p = ev_name_problem(bad[i].name, strlen(bad[i].name), why, sizeof why);
        ck_assert_msg(p && strstr(p, bad[i].why), "%s: %s", bad[i].name, p ? p : "accepted");
        ck_assert(!ev_member_name_ok(bad[i].name));
    }
    memset(longname, 'a', 256);
    longname[256] = '\0';
    ck_assert_ptr_nonnull(strstr(ev_name_problem(longname, 256, why, sizeof why), "longer than 255"));
    ck_assert_ptr_null(ev_name_problem(longname, 255, why, sizeof why));
}
END_TEST

/* ---- vocabulary ------------------------------------------------------------ */

/* A list's names and parser, for the checks every list gets. */
typedef struct vlist {
    const char *what;
    int count;
    const char *(*name)(int);
    int (*parse)(const char *, int *);
    const char *(*words)(void);
} vlist;

#define VLIST_ADAPT(kind, T)                                                                                 \
    static const char *kind##_name_i(int i)                                                                  \
    {                                                                                                        \
        return ev_##kind##_name((T)i);                                                                       \
    }                                                                                                        \
    static int kind##_parse_i(const char *s, int *out)                                                       \
    {                                                                                                        \
        T v;                                                                                                 \
        int rc = ev_##kind##_parse(s, &v);                                                                   \
        if (!rc)                                                                                             \
            *out = (int)v;                                                                                   \
        return rc;                                                                                           \
    }
VLIST_ADAPT(op, ev_op)
VLIST_ADAPT(dtype, ev_dtype)
VLIST_ADAPT(role, ev_role)
VLIST_ADAPT(phase, ev_phase)
VLIST_ADAPT(sched, ev_sched)

static const vlist vlists[] = {
    {"op", EV_OP_COUNT, op_name_i, op_parse_i, ev_op_words},
    {"dtype", EV_DTYPE_COUNT, dtype_name_i, dtype_parse_i, ev_dtype_words},
    {"role", EV_ROLE_COUNT, role_name_i, role_parse_i, ev_role_words},
    {"phase", EV_PHASE_COUNT, phase_name_i, phase_parse_i, ev_phase_words},
    {"sched", EV_SCHED_COUNT, sched_name_i, sched_parse_i, ev_sched_words},
};

START_TEST(test_every_word_parses_back_to_itself_once_and_nothing_else_parses)
{
    for (size_t l = 0; l < sizeof vlists / sizeof vlists[0]; l++) {
        const vlist *v = &vlists[l];
        char words[512] = "";
        ck_assert_int_gt(v->count, 0);
        for (int i = 0; i < v->count; i++) {
            int got = -1;
            const char *n = v->name(i);
            ck_assert_msg(n && strcmp(n, "?") && n[0], "%s %d has no name", v->what, i);
            ck_assert_msg(!v->parse(n, &got) && got == i, "%s '%s' parses to %d, not %d", v->what, n, got, i);
            for (int j = 0; j < i; j++)
                ck_assert_msg(strcmp(n, v->name(j)), "%s '%s' twice", v->what, n);
            snprintf(words + strlen(words), sizeof words - strlen(words), "%s%s", i ? ", " : "", n);
        }
        ck_assert_str_eq(v->words(), words);
        ck_assert_str_eq(v->name(v->count), "?");
        ck_assert_str_eq(v->name(-1), "?");
        int untouched = 77;
        ck_assert_int_eq(v->parse("no-such-word", &untouched), -1);
        ck_assert_int_eq(v->parse(NULL, &untouched), -1);
        ck_assert_int_eq(v->parse("", &untouched), -1);
        ck_assert_int_eq(untouched, 77);
    }
}
END_TEST

START_TEST(test_the_ops_and_dtypes_keep_their_names_and_sizes)
{
    /* the names stored in every committed store and bundle: a rename
     * would orphan them */
    ck_assert_str_eq(ev_op_name(EV_OP_SUM), "reduce_sum");
    ck_assert_str_eq(ev_op_name(EV_OP_MAX), "reduce_max");
    ck_assert_int_eq(ev_op_combine(EV_OP_SUM), EV_COMBINE_SUM);
    ck_assert_int_eq(ev_op_combine(EV_OP_MAX), EV_COMBINE_MAX);
    ck_assert_int_eq(ev_op_finish(EV_OP_SUM), EV_FINISH_NONE);
    ck_assert_int_eq((int)ev_dtype_size(EV_DTYPE_FP32), 4);
    ck_assert_int_eq((int)ev_dtype_size(EV_DTYPE_FP16), 2);
    ck_assert_int_eq((int)ev_dtype_size(EV_DTYPE_BF16), 2);
    ck_assert_int_eq((int)ev_dtype_size(EV_DTYPE_COUNT), 0);
    ck_assert_int_eq(ev_sched_fixed_rows(EV_SCHED_ROWS4), 4);
    ck_assert_int_eq(ev_sched_fixed_rows(EV_SCHED_DEFAULT), 0);
    for (int i = 0; i < EV_OP_COUNT; i++)
        ck_assert_int_lt((int)strlen(ev_op_name((ev_op)i)), EV_OP_NAME_MAX);
    for (int i = 0; i < EV_DTYPE_COUNT; i++)
        ck_assert_int_lt((int)strlen(ev_dtype_name((ev_dtype)i)), EV_DTYPE_NAME_MAX);
    for (int i = 0; i < EV_ROLE_COUNT; i++)
        ck_assert_int_lt((int)strlen(ev_role_name((ev_role)i)), EV_ROLE_NAME_MAX);
}
END_TEST

START_TEST(test_an_arm_name_means_what_the_vocabulary_says)
{
    ev_arm_kind k = EV_ARM_KIND_COUNT;
    ev_sched s = EV_SCHED_DEFAULT;
    ck_assert_int_eq(ev_arm_builtin("rows2", &k, &s), 0);
    ck_assert_int_eq(k, EV_ARM_NATIVE);
    ck_assert_int_eq(s, EV_SCHED_ROWS2);
    for (int i = 0; i < EV_ARM_KIND_COUNT; i++) {
        const char *n = ev_arm_kind_name((ev_arm_kind)i), *pre = ev_arm_kind_prefix((ev_arm_kind)i);
        ck_assert_msg(!(n && pre), "arm kind %d has a name and a prefix", i);
        if (n) {
            ck_assert_int_eq(ev_arm_builtin(n, &k, &s), 0);
            ck_assert_int_eq(k, i);
            ck_assert_int_eq(s, EV_SCHED_COUNT);
            ck_assert(ev_is_arm(n, (ev_arm_kind)i));
            ck_assert_msg(ev_sched_parse(n, &s), "arm %s is also a schedule", n);
        }
        if (pre) {
            char name[64];
            snprintf(name, sizeof name, "%sx1", pre);
            ck_assert_int_eq(ev_arm_builtin(name, &k, &s), 0);
            ck_assert_int_eq(k, i);
            ck_assert(!ev_is_arm(name, (ev_arm_kind)i));
        }
    }
    ck_assert(ev_arm_kind_peer(EV_ARM_CUB) && ev_arm_kind_peer(EV_ARM_TORCH));
    ck_assert(!ev_arm_kind_peer(EV_ARM_NATIVE) && !ev_arm_kind_peer(EV_ARM_AUTO));
    k = EV_ARM_KIND_COUNT;
    ck_assert_int_eq(ev_arm_builtin("no-such-arm", &k, &s), -1);
    ck_assert_int_eq(ev_arm_builtin(NULL, &k, &s), -1);
    ck_assert_int_eq(k, EV_ARM_KIND_COUNT);
    ck_assert(!ev_is_arm(NULL, EV_ARM_AUTO) && !ev_is_arm("auto", EV_ARM_NATIVE));
    ck_assert(ev_is_phase("main", EV_PHASE_MAIN) && !ev_is_phase(NULL, EV_PHASE_MAIN));
}
END_TEST

/* Every op x dtype once, ops outer: the kernels' entry points. */
#define COUNT_PAIR(OP, op, DT, dt) n++, seen[EV_OP_##OP][EV_DTYPE_##DT]++,
START_TEST(test_the_op_by_dtype_list_names_every_pair_once)
{
    int n = 0, seen[EV_OP_COUNT][EV_DTYPE_COUNT] = {{0}};
    EV_OPS_BY_DTYPES(COUNT_PAIR)(void) 0;
    ck_assert_int_eq(n, EV_OP_COUNT * EV_DTYPE_COUNT);
    for (int o = 0; o < EV_OP_COUNT; o++)
        for (int d = 0; d < EV_DTYPE_COUNT; d++)
            ck_assert_int_eq(seen[o][d], 1);
}
END_TEST

static Suite *common_suite(void)
{
    Suite *s = suite_create("common");
    TCase *tc;

    tc = tcase_create("status");
    tcase_add_test(tc, test_every_status_has_a_distinct_name);
    tcase_add_test(tc, test_the_member_name_rule_accepts_and_refuses_with_the_reason);
    tcase_add_test(tc, test_out_of_range_status_is_unknown);
    tcase_add_test(tc, test_err_set_formats_and_returns_the_status);
    tcase_add_test(tc, test_err_set_truncates_long_messages);
    suite_add_tcase(s, tc);

    tc = tcase_create("buf");
    tcase_add_checked_fixture(tc, setup_tmpdir, teardown_tmpdir);
    tcase_add_test(tc, test_buf_appends_and_stays_nul_terminated);
    tcase_add_test(tc, test_buf_grows_over_many_appends);
    tcase_add_test(tc, test_buf_refuses_sizes_that_overflow);
    tcase_add_test(tc, test_buf_steal_hands_over_the_storage);
    tcase_add_test(tc, test_size_arithmetic_detects_overflow);
    tcase_add_test(tc, test_grow_doubles_an_array_keeping_its_elements_and_refuses_sizes_that_overflow);
    tcase_add_test(tc, test_alloc_big_aligns_large_arrays_and_refuses_absurd_sizes);
    tcase_add_test(tc, test_write_then_read_file_round_trips_bytes);
    tcase_add_test(tc, test_write_file_replaces_an_existing_file_whole);
    tcase_add_test(tc, test_read_of_an_empty_file_gives_an_empty_string);
    tcase_add_test(tc, test_read_of_a_missing_file_names_path_and_errno);
    tcase_add_test(tc, test_read_of_a_directory_is_refused);
    tcase_add_test(tc, test_write_into_a_missing_directory_names_path_and_errno);
    tcase_add_test(tc, test_failed_rename_leaves_no_temp_file);
    suite_add_tcase(s, tc);

    tc = tcase_create("sha256");
    tcase_add_checked_fixture(tc, setup_tmpdir, teardown_tmpdir);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sha256_matches_the_nist_examples);
    tcase_add_test(tc, test_sha256_of_a_million_a_one_shot_and_streamed_agree);
    tcase_add_test(tc, test_sha256_context_refuses_use_after_final);
    tcase_add_test(tc, test_sha256_of_files_matches_the_vectors);
    tcase_add_test(tc, test_sha256_of_a_missing_file_names_it);
    suite_add_tcase(s, tc);

    tc = tcase_create("vocabulary");
    tcase_add_test(tc, test_every_word_parses_back_to_itself_once_and_nothing_else_parses);
    tcase_add_test(tc, test_the_ops_and_dtypes_keep_their_names_and_sizes);
    tcase_add_test(tc, test_an_arm_name_means_what_the_vocabulary_says);
    tcase_add_test(tc, test_the_op_by_dtype_list_names_every_pair_once);
    suite_add_tcase(s, tc);

    tc = tcase_create("hex");
    tcase_add_test(tc, test_hex_encodes_lowercase);
    tcase_add_test(tc, test_hex_decodes_either_case);
    tcase_add_test(tc, test_hex_decode_refuses_wrong_length_and_non_hex);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int failed = ev_check_suite(common_suite());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
