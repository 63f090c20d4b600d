/*
 * check_csv.c: tests of the strict CSV reader (header, column count,
 * quoting, line ends, typed cells, and one refusal test per kind, each with
 * its exact message) and of the writer (quoting, exact doubles, read back
 * through the reader).
 */
#include <check.h>

#include "progress.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

static const char *const obs_header[] = {"op",           "rows",     "cols",     "dtype",
                                         "default_rows", "schedule", "median_us"};
#define OBS_NCOLS 7

static const char *const abc[] = {"a", "b", "c"};

/* Opens a reader over the NUL-terminated s with header abc (3 columns, no
 * optional column). */
static ev_status open_abc(const char *s, ev_csv **c, ev_err *err)
{
    err->msg[0] = '\0';
    return ev_csv_open(s, strlen(s), abc, 3, NULL, c, err);
}

/* Reads every record of s (header abc) and returns the status of the first
 * failure (EV_OK when all read); err holds its message; *rows the records
 * read before it. */
static ev_status read_all_abc(const char *s, size_t *rows, ev_err *err)
{
    ev_csv *c = NULL;
    ev_status rc = open_abc(s, &c, err);
    int have = 0;

    *rows = 0;
    while (!rc) {
        rc = ev_csv_next(c, &have, err);
        if (rc || !have)
            break;
        (*rows)++;
    }
    ev_csv_close(c);
    return rc;
}

/* Asserts that s (header abc) is refused with exactly message want. */
#define ck_csv_refused(s, want)                                                                              \
    do {                                                                                                     \
        ev_err e_;                                                                                           \
        size_t rows_;                                                                                        \
        ck_assert_int_eq(read_all_abc((s), &rows_, &e_), EV_EFORMAT);                                        \
        ck_assert_str_eq(e_.msg, (want));                                                                    \
    } while (0)

/* ---- reading --------------------------------------------------------- */

START_TEST(test_an_observations_table_reads_with_typed_cells)
{
    static const char doc[] = "op,rows,cols,dtype,default_rows,schedule,median_us\n"
                              "reduce_sum,1024,512,fp32,4,default,12.5\n"
                              "reduce_max,32,1048576,bf16,1,rows1,0.10000000000000001\n";
    ev_csv *c = NULL;
    ev_err err;
    int have = -1;
    int64_t i = 0;
    double d = 0;

    ck_assert_int_eq(ev_csv_open(doc, sizeof doc - 1, obs_header, OBS_NCOLS, "role", &c, &err), EV_OK);
    ck_assert_uint_eq(ev_csv_ncols(c), 7);
    ck_assert_str_eq(ev_csv_header(c, 6), "median_us");
    ck_assert_ptr_null(ev_csv_header(c, 7));
    ck_assert_ptr_null(ev_csv_field(c, 0)); /* no current record yet */
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(have, 1);
    ck_assert_uint_eq(ev_csv_line(c), 2);
    ck_assert_str_eq(ev_csv_field(c, 0), "reduce_sum");
    ck_assert_int_eq(ev_csv_get_i64(c, 1, &i, &err), EV_OK);
    ck_assert_int_eq(i, 1024);
    ck_assert_int_eq(ev_csv_get_double(c, 6, &d, &err), EV_OK);
    ck_assert(d == 12.5);
    ck_assert_ptr_null(ev_csv_field(c, 7));
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(have, 1);
    ck_assert_uint_eq(ev_csv_line(c), 3);
    ck_assert_int_eq(ev_csv_get_i64(c, 2, &i, &err), EV_OK);
    ck_assert_int_eq(i, 1048576);
    ck_assert_int_eq(ev_csv_get_double(c, 6, &d, &err), EV_OK);
    ck_assert(d == 0.1);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(have, 0);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK); /* stays at the end */
    ck_assert_int_eq(have, 0);
    ev_csv_close(c);
    ev_csv_close(NULL);
}
END_TEST

START_TEST(test_the_optional_last_column_is_accepted_and_reported)
{
    static const char doc[] = "op,rows,cols,dtype,default_rows,schedule,median_us,role\n"
                              "reduce_sum,1,2,fp16,4,rows2,3,holdout\n";
    static const char short_doc[] = "op,rows,cols,dtype,default_rows,schedule,median_us,role\n"
                                    "reduce_sum,1,2,fp16,4,rows2,3\n";
    ev_csv *c = NULL;
    ev_err err;
    int have = 0;

    ck_assert_int_eq(ev_csv_open(doc, sizeof doc - 1, obs_header, OBS_NCOLS, "role", &c, &err), EV_OK);
    ck_assert_uint_eq(ev_csv_ncols(c), 8);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_str_eq(ev_csv_field(c, 7), "holdout");
    ev_csv_close(c);
    /* A record of the shorter width no longer fits. */
    c = NULL;
    ck_assert_int_eq(ev_csv_open(short_doc, sizeof short_doc - 1, obs_header, OBS_NCOLS, "role", &c, &err),
                     EV_OK);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 2: 7 fields, expected 8");
    ev_csv_close(c);
}
END_TEST

START_TEST(test_crlf_and_a_missing_final_newline_read_the_same)
{
    const char *docs[] = {"a,b,c\n1,2,3\n4,5,6\n", "a,b,c\r\n1,2,3\r\n4,5,6\r\n", "a,b,c\n1,2,3\n4,5,6",
                          "a,b,c\r\n1,2,3\n4,5,6"};
    size_t k;
    for (k = 0; k < 4; k++) {
        ev_csv *c = NULL;
        ev_err err;
        int have = 0;
        ck_assert_int_eq(open_abc(docs[k], &c, &err), EV_OK);
        ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
        ck_assert_str_eq(ev_csv_field(c, 2), "3");
        ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
        ck_assert_int_eq(have, 1);
        ck_assert_str_eq(ev_csv_field(c, 0), "4");
        ck_assert_str_eq(ev_csv_field(c, 2), "6");
        ck_assert_uint_eq(ev_csv_line(c), 3);
        ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
        ck_assert_int_eq(have, 0);
        ev_csv_close(c);
    }
}
END_TEST

START_TEST(test_quoted_fields_hold_commas_quotes_and_newlines)
{
    static const char doc[] = "a,b,c\n"
                              "\"x,y\",\"say \"\"hi\"\"\",\"two\nlines\"\n"
                              "\"\",,\"\xc3\xa9\r\n\"\r\n"
                              "p,q,r\n";
    ev_csv *c = NULL;
    ev_err err;
    int have = 0;

    ck_assert_int_eq(open_abc(doc, &c, &err), EV_OK);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_uint_eq(ev_csv_line(c), 2);
    ck_assert_str_eq(ev_csv_field(c, 0), "x,y");
    ck_assert_str_eq(ev_csv_field(c, 1), "say \"hi\"");
    ck_assert_str_eq(ev_csv_field(c, 2), "two\nlines");
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_uint_eq(ev_csv_line(c), 4); /* the record above spans lines 2-3 */
    ck_assert_str_eq(ev_csv_field(c, 0), "");
    ck_assert_str_eq(ev_csv_field(c, 1), "");
    ck_assert_str_eq(ev_csv_field(c, 2), "\xc3\xa9\r\n");
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_uint_eq(ev_csv_line(c), 6);
    ck_assert_str_eq(ev_csv_field(c, 2), "r");
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(have, 0);
    ev_csv_close(c);
}
END_TEST

START_TEST(test_a_header_alone_has_no_records)
{
    size_t rows = 9;
    ev_err err;
    ck_assert_int_eq(read_all_abc("a,b,c\n", &rows, &err), EV_OK);
    ck_assert_uint_eq(rows, 0);
    ck_assert_int_eq(read_all_abc("a,b,c", &rows, &err), EV_OK);
    ck_assert_uint_eq(rows, 0);
    ck_assert_int_eq(read_all_abc("\"a\",b,\"c\"\n1,2,3\n", &rows, &err), EV_OK);
    ck_assert_uint_eq(rows, 1);
}
END_TEST

/* ---- refusals -------------------------------------------------------- */

/* ev_csv_pos says where the next record starts; ev_csv_seek moves there
 * (or to any record start) and numbers its line as told; beyond the input
 * or line 0 is refused and leaves the reader as it was. */
START_TEST(test_pos_and_seek_skip_to_a_record_and_number_its_line)
{
    const char *s = "a,b,c\n1,2,3\n4,5,6\n7,x\n";
    ev_csv *c = NULL;
    ev_err err;
    int have = 0;
    ck_assert_int_eq(open_abc(s, &c, &err), EV_OK);
    ck_assert_uint_eq(ev_csv_pos(c), 6);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_uint_eq(ev_csv_pos(c), 12);
    ck_assert_str_eq(ev_csv_field(c, 0), "1");
    ck_assert_int_eq(ev_csv_seek(c, strlen(s) + 1, 3), EV_EINVAL);
    ck_assert_int_eq(ev_csv_seek(c, 12, 0), EV_EINVAL);
    ck_assert_str_eq(ev_csv_field(c, 0), "1");
    /* skip "4,5,6" unread; the broken record is then line 40 as told */
    ck_assert_int_eq(ev_csv_seek(c, 18, 40), EV_OK);
    ck_assert_ptr_null(ev_csv_field(c, 0));
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 40: 2 fields, expected 3");
    /* back to a record already read */
    ck_assert_int_eq(ev_csv_seek(c, 12, 3), EV_OK);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(have, 1);
    ck_assert_uint_eq(ev_csv_line(c), 3);
    ck_assert_str_eq(ev_csv_field(c, 2), "6");
    /* the end of the input: no more records */
    ck_assert_int_eq(ev_csv_seek(c, strlen(s), 9), EV_OK);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(have, 0);
    ev_csv_close(c);
}
END_TEST

START_TEST(test_a_wrong_header_is_refused)
{
    ck_csv_refused("a,x,c\n1,2,3\n", "line 1: header is \"a,x,c\", expected \"a,b,c\"");
    ck_csv_refused("a,b\n1,2\n", "line 1: header is \"a,b\", expected \"a,b,c\"");
    ck_csv_refused("a,b,c,d\n1,2,3,4\n", "line 1: header is \"a,b,c,d\", expected \"a,b,c\"");
    ck_csv_refused("A,b,c\n", "line 1: header is \"A,b,c\", expected \"a,b,c\"");
    ck_csv_refused("a,b,c \n", "line 1: header is \"a,b,c \", expected \"a,b,c\"");
}
END_TEST

START_TEST(test_a_wrong_optional_column_is_refused)
{
    static const char doc[] = "op,rows,cols,dtype,default_rows,schedule,median_us,rolex\n";
    ev_csv *c = NULL;
    ev_err err;
    ck_assert_int_eq(ev_csv_open(doc, sizeof doc - 1, obs_header, OBS_NCOLS, "role", &c, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 1: header is "
                              "\"op,rows,cols,dtype,default_rows,schedule,median_us,rolex\", "
                              "expected \"op,rows,cols,dtype,default_rows,schedule,median_us[,role]\"");
    ck_assert_ptr_null(c);
}
END_TEST

START_TEST(test_empty_input_and_a_bom_are_refused)
{
    ck_csv_refused("", "line 1: empty input, expected a header");
    ck_csv_refused("\xef\xbb\xbf"
                   "a,b,c\n",
                   "line 1: a UTF-8 byte-order mark is not allowed");
}
END_TEST

START_TEST(test_a_wrong_field_count_is_refused)
{
    ck_csv_refused("a,b,c\n1,2,3\n1,2\n", "line 3: 2 fields, expected 3");
    ck_csv_refused("a,b,c\n1,2,3,\n", "line 2: 4 fields, expected 3");
    ck_csv_refused("a,b,c\n\"1\n\",2,3,4\n", "line 2: 4 fields, expected 3");
}
END_TEST

START_TEST(test_a_stray_quote_in_an_unquoted_field_is_refused)
{
    ck_csv_refused("a,b,c\n1,2\"x,3\n", "line 2, column 2: stray quote in an unquoted field");
    ck_csv_refused("a,b,c\n1,2,3\"\n", "line 2, column 3: stray quote in an unquoted field");
}
END_TEST

START_TEST(test_an_unterminated_quoted_field_is_refused)
{
    ck_csv_refused("a,b,c\n1,2,\"3\n4,5,6\n", "line 2, column 3: unterminated quoted field");
}
END_TEST

START_TEST(test_text_after_a_closing_quote_is_refused)
{
    ck_csv_refused("a,b,c\n1,\"2\"x,3\n", "line 2, column 2: unexpected character after a closing quote");
    ck_csv_refused("a,b,c\n1,\"2\" ,3\n", "line 2, column 2: unexpected character after a closing quote");
}
END_TEST

START_TEST(test_nul_bytes_are_refused)
{
    static const char plain[] = "a,b,c\n1,2\0,3\n";
    static const char quoted[] = "a,b,c\n1,2,\"\0\"\n";
    ev_csv *c = NULL;
    ev_err err;
    int have = 0;

    ck_assert_int_eq(ev_csv_open(plain, sizeof plain - 1, abc, 3, NULL, &c, &err), EV_OK);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 2, column 2: NUL byte");
    ev_csv_close(c);
    ck_assert_int_eq(ev_csv_open(quoted, sizeof quoted - 1, abc, 3, NULL, &c, &err), EV_OK);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 2, column 3: NUL byte");
    ev_csv_close(c);
}
END_TEST

START_TEST(test_invalid_utf8_is_refused)
{
    ck_csv_refused("a,b,c\n1,\xc3\x28,3\n", "line 2, column 2: invalid UTF-8 (byte 0xc3)");
    ck_csv_refused("a,b,c\n1,2,\"\xed\xa0\x80\"\n", "line 2, column 3: invalid UTF-8 (byte 0xed)");
    ck_csv_refused("a,b,c\n\xff,2,3\n", "line 2, column 1: invalid UTF-8 (byte 0xff)");
    ck_csv_refused("a,b,c\n1,2,\xe2\x82", "line 2, column 3: invalid UTF-8 (byte 0xe2)");
}
END_TEST

START_TEST(test_a_bare_cr_is_refused)
{
    ck_csv_refused("a,b,c\r1,2,3\n", "line 1, column 3: CR not followed by LF");
    ck_csv_refused("a,b,c\n1,2\r,3\n", "line 2, column 2: CR not followed by LF");
}
END_TEST

START_TEST(test_blank_lines_are_refused)
{
    ck_csv_refused("a,b,c\n1,2,3\n\n4,5,6\n", "line 3: blank line");
    ck_csv_refused("a,b,c\n1,2,3\n\n", "line 3: blank line");
    ck_csv_refused("a,b,c\r\n1,2,3\r\n\r\n", "line 3: blank line");
    ck_csv_refused("\na,b,c\n", "line 1: blank line");
}
END_TEST

START_TEST(test_bad_integer_cells_are_refused_naming_line_column_and_name)
{
    static const char doc[] = "a,b,c\n"
                              "1.5,x, 1\n"
                              "+1,007,-0\n"
                              "9223372036854775808,-9223372036854775809,\n"
                              "9223372036854775807,-9223372036854775808,0\n";
    ev_csv *c = NULL;
    ev_err err;
    int have = 0;
    int64_t v = 42;

    ck_assert_int_eq(open_abc(doc, &c, &err), EV_OK);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(ev_csv_get_i64(c, 0, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 2, column 1 (a): \"1.5\" is not a decimal integer");
    ck_assert_int_eq(ev_csv_get_i64(c, 1, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 2, column 2 (b): \"x\" is not a decimal integer");
    ck_assert_int_eq(ev_csv_get_i64(c, 2, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 2, column 3 (c): \" 1\" is not a decimal integer");
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(ev_csv_get_i64(c, 0, &v, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_csv_get_i64(c, 1, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 3, column 2 (b): \"007\" is not a decimal integer");
    ck_assert_int_eq(ev_csv_get_i64(c, 2, &v, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(ev_csv_get_i64(c, 0, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg,
                     "line 4, column 1 (a): integer \"9223372036854775808\" is out of the int64 range");
    ck_assert_int_eq(ev_csv_get_i64(c, 1, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 4, column 2 (b): integer \"-9223372036854775809\" is out of "
                              "the int64 range");
    ck_assert_int_eq(ev_csv_get_i64(c, 2, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 4, column 3 (c): \"\" is not a decimal integer");
    ck_assert_int_eq(v, 42);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(ev_csv_get_i64(c, 0, &v, &err), EV_OK);
    ck_assert_int_eq(v, INT64_MAX);
    ck_assert_int_eq(ev_csv_get_i64(c, 1, &v, &err), EV_OK);
    ck_assert_int_eq(v, INT64_MIN);
    ck_assert_int_eq(ev_csv_get_i64(c, 2, &v, &err), EV_OK);
    ck_assert_int_eq(v, 0);
    ev_csv_close(c);
}
END_TEST

START_TEST(test_bad_double_cells_are_refused_naming_line_column_and_name)
{
    static const char doc[] = "a,b,c\n"
                              " 1.5,1.5 ,nan\n"
                              "inf,1e400,\n"
                              "0x10,.5,abc\n"
                              "\"multi\nline\",2,-0\n";
    ev_csv *c = NULL;
    ev_err err;
    int have = 0;
    double v = 42;

    ck_assert_int_eq(open_abc(doc, &c, &err), EV_OK);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(ev_csv_get_double(c, 0, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 2, column 1 (a): \" 1.5\" is not a finite decimal number: "
                              "number needs a digit");
    ck_assert_int_eq(ev_csv_get_double(c, 1, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 2, column 2 (b): \"1.5 \" is not a finite decimal number: "
                              "unexpected character in number");
    ck_assert_int_eq(ev_csv_get_double(c, 2, &v, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(ev_csv_get_double(c, 0, &v, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_csv_get_double(c, 1, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 3, column 2 (b): \"1e400\" is not a finite decimal number: "
                              "number 1e400 overflows to infinity");
    ck_assert_int_eq(ev_csv_get_double(c, 2, &v, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(ev_csv_get_double(c, 0, &v, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_csv_get_double(c, 1, &v, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_csv_get_double(c, 2, &v, &err), EV_EFORMAT);
    ck_assert(v == 42);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(ev_csv_get_double(c, 0, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 5, column 1 (a): \"multi\nline\" is not a finite decimal "
                              "number: number needs a digit");
    ck_assert_int_eq(ev_csv_get_double(c, 2, &v, &err), EV_OK);
    ck_assert(v == 0 && signbit(v));
    ev_csv_close(c);
}
END_TEST

START_TEST(test_a_cell_after_a_quoted_newline_reports_its_own_line)
{
    static const char doc[] = "a,b,c\n\"x\ny\",\"p\nq\",zz\n";
    ev_csv *c = NULL;
    ev_err err;
    int have = 0;
    int64_t v;

    ck_assert_int_eq(open_abc(doc, &c, &err), EV_OK);
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_uint_eq(ev_csv_line(c), 2);
    ck_assert_int_eq(ev_csv_get_i64(c, 2, &v, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "line 4, column 3 (c): \"zz\" is not a decimal integer");
    ev_csv_close(c);
}
END_TEST

/* ---- writing --------------------------------------------------------- */

START_TEST(test_the_writer_quotes_only_when_needed)
{
    ev_buf b = EV_BUF_INIT;
    ck_assert_int_eq(ev_csv_put(&b, "plain", 0), EV_OK);
    ck_assert_int_eq(ev_csv_put(&b, "a,b", 0), EV_OK);
    ck_assert_int_eq(ev_csv_put(&b, "say \"hi\"", 0), EV_OK);
    ck_assert_int_eq(ev_csv_put(&b, "two\nlines", 0), EV_OK);
    ck_assert_int_eq(ev_csv_put(&b, "cr\r", 0), EV_OK);
    ck_assert_int_eq(ev_csv_put(&b, "", 0), EV_OK);
    ck_assert_int_eq(ev_csv_put(&b, " sp ", 1), EV_OK);
    ck_assert_str_eq(b.data, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\r\",, sp \n");
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_the_writer_refuses_what_the_reader_would)
{
    ev_buf b = EV_BUF_INIT;
    ck_assert_int_eq(ev_csv_put(&b, "ok", 0), EV_OK);
    ck_assert_int_eq(ev_csv_put(&b, "\xc3\x28", 0), EV_EINVAL);
    ck_assert_int_eq(ev_csv_put(&b, NULL, 0), EV_EINVAL);
    ck_assert_int_eq(ev_csv_put_double(&b, NAN, 0), EV_ERANGE);
    ck_assert_int_eq(ev_csv_put_double(&b, -INFINITY, 1), EV_ERANGE);
    ck_assert_str_eq(b.data, "ok,");
    ck_assert_uint_eq(b.len, 3);
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_written_tables_read_back_exactly)
{
    static const double ds[] = {0.1 + 0.2, -0.0, DBL_MAX, 4.9406564584124654e-324, 1e23, 7};
    static const char *const ts[] = {"x,y", "\"q\"", "line\nbreak", "\xc3\xa9", "", "plain"};
    ev_buf b = EV_BUF_INIT;
    ev_csv *c = NULL;
    ev_err err;
    int have = 0;
    size_t k;

    for (k = 0; k < 3; k++)
        ck_assert_int_eq(ev_csv_put(&b, abc[k], k == 2), EV_OK);
    for (k = 0; k < 6; k++) {
        ck_assert_int_eq(ev_csv_put_double(&b, ds[k], 0), EV_OK);
        ck_assert_int_eq(ev_csv_put(&b, ts[k], 0), EV_OK);
        ck_assert_int_eq(ev_csv_put_i64(&b, k == 0 ? INT64_MIN : (int64_t)k * -7, 1), EV_OK);
    }
    ck_assert_int_eq(ev_csv_open(b.data, b.len, abc, 3, NULL, &c, &err), EV_OK);
    for (k = 0; k < 6; k++) {
        double d;
        int64_t i;
        ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
        ck_assert_int_eq(have, 1);
        ck_assert_int_eq(ev_csv_get_double(c, 0, &d, &err), EV_OK);
        ck_assert(memcmp(&d, &ds[k], sizeof d) == 0);
        ck_assert_str_eq(ev_csv_field(c, 1), ts[k]);
        ck_assert_int_eq(ev_csv_get_i64(c, 2, &i, &err), EV_OK);
        ck_assert_int_eq(i, k == 0 ? INT64_MIN : (int64_t)k * -7);
    }
    ck_assert_int_eq(ev_csv_next(c, &have, &err), EV_OK);
    ck_assert_int_eq(have, 0);
    ev_csv_close(c);
    ck_assert_ptr_nonnull(strstr(b.data, "\n0.30000000000000004,\"x,y\",-9223372036854775808\n"));
    ev_buf_free(&b);
}
END_TEST

static Suite *csv_suite(void)
{
    Suite *s = suite_create("csv");
    TCase *tc;

    tc = tcase_create("read");
    tcase_add_test(tc, test_an_observations_table_reads_with_typed_cells);
    tcase_add_test(tc, test_the_optional_last_column_is_accepted_and_reported);
    tcase_add_test(tc, test_crlf_and_a_missing_final_newline_read_the_same);
    tcase_add_test(tc, test_quoted_fields_hold_commas_quotes_and_newlines);
    tcase_add_test(tc, test_a_header_alone_has_no_records);
    suite_add_tcase(s, tc);

    tc = tcase_create("refuse");
    tcase_add_test(tc, test_pos_and_seek_skip_to_a_record_and_number_its_line);
    tcase_add_test(tc, test_a_wrong_header_is_refused);
    tcase_add_test(tc, test_a_wrong_optional_column_is_refused);
    tcase_add_test(tc, test_empty_input_and_a_bom_are_refused);
    tcase_add_test(tc, test_a_wrong_field_count_is_refused);
    tcase_add_test(tc, test_a_stray_quote_in_an_unquoted_field_is_refused);
    tcase_add_test(tc, test_an_unterminated_quoted_field_is_refused);
    tcase_add_test(tc, test_text_after_a_closing_quote_is_refused);
    tcase_add_test(tc, test_nul_bytes_are_refused);
    tcase_add_test(tc, test_invalid_utf8_is_refused);
    tcase_add_test(tc, test_a_bare_cr_is_refused);
    tcase_add_test(tc, test_blank_lines_are_refused);
    tcase_add_test(tc, test_bad_integer_cells_are_refused_naming_line_column_and_name);
    tcase_add_test(tc, test_bad_double_cells_are_refused_naming_line_column_and_name);
    tcase_add_test(tc, test_a_cell_after_a_quoted_newline_reports_its_own_line);
    suite_add_tcase(s, tc);

    tc = tcase_create("write");
    tcase_add_test(tc, test_the_writer_quotes_only_when_needed);
    tcase_add_test(tc, test_the_writer_refuses_what_the_reader_would);
    tcase_add_test(tc, test_written_tables_read_back_exactly);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int failed = ev_check_suite(csv_suite());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
