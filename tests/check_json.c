/*
 * check_json.c: tests of the strict JSON reader (one refusal test per kind
 * of violation, with the exact message and position), the exact writer
 * (%.17g raw doubles, integers beyond 2^53 as strings), the getters, and
 * the round-trip proof: 1,000,000 random 64-bit patterns from xoshiro256**
 * plus the extremes, written and re-read bit for bit.
 */
#include <check.h>

#include "progress.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"

/* Runs ev_json_check on the NUL-terminated s and returns the status; the
 * message goes to err. */
static ev_status check_str(const char *s, unsigned flags, ev_err *err)
{
    err->msg[0] = '\0';
    return ev_json_check(s, strlen(s), flags, err);
}

/* Asserts s is refused with exactly message want. */
#define ck_refused(s, flags, want)                                                                           \
    do {                                                                                                     \
        ev_err e_;                                                                                           \
        ck_assert_int_eq(check_str((s), (flags), &e_), EV_EFORMAT);                                          \
        ck_assert_str_eq(e_.msg, (want));                                                                    \
    } while (0)

/* Asserts s is accepted. */
#define ck_accepted(s, flags)                                                                                \
    do {                                                                                                     \
        ev_err e_;                                                                                           \
        ev_status r_ = check_str((s), (flags), &e_);                                                         \
        ck_assert_msg(r_ == EV_OK, "refused %s: %s", (s), e_.msg);                                           \
    } while (0)

/* ---- acceptance ------------------------------------------------------ */

/* A parsed tree's numbers become their exact %.17g text, at any depth. */
START_TEST(test_canonicalised_numbers_print_as_their_exact_text)
{
    static const char doc[] = "{\"a\":0.1,\"b\":[1e2,-0,{\"c\":2.5}]}";
    cJSON *tree = NULL;
    ev_buf out = EV_BUF_INIT;
    ev_err err = {""};
    ck_assert_int_eq(ev_json_parse(doc, sizeof doc - 1, 0, &tree, &err), EV_OK);
    ck_assert_int_eq(ev_json_canon_numbers(tree), EV_OK);
    /* every number is now raw text (the printer alone would hide this) */
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(tree, "a");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(tree, "b");
    ck_assert(cJSON_IsRaw(a));
    ck_assert_str_eq(a->valuestring, "0.10000000000000001");
    ck_assert(cJSON_IsRaw(cJSON_GetArrayItem(b, 1)));
    ck_assert_str_eq(cJSON_GetArrayItem(b, 1)->valuestring, "-0");
    ck_assert(cJSON_IsRaw(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(b, 2), "c")));
    ck_assert_int_eq(ev_json_print(tree, 0, &out), EV_OK);
    ck_assert_str_eq(out.data, "{\"a\":0.10000000000000001,\"b\":[100,-0,{\"c\":2.5}]}\n");
    ck_assert_int_eq(ev_json_check(out.data, out.len, EV_JSON_CANONICAL, &err), EV_OK);
    cJSON_Delete(tree);
    ev_buf_free(&out);
}
END_TEST

START_TEST(test_a_plain_document_parses_into_a_tree)
{
    static const char doc[] = " {\"a\": [1, -2.5, true, false, null], \"b\": {\"c\": \"d\"},"
                              "\r\n\t\"e\": \"\\\"\\\\\\/\\b\\f\\n\\r\\t\"} ";
    cJSON *t = NULL;
    ev_err err;
    const cJSON *a, *b;
    const char *s;

    ck_assert_int_eq(ev_json_parse(doc, sizeof doc - 1, 0, &t, &err), EV_OK);
    ck_assert_int_eq(ev_json_get_array(t, "a", &a, &err), EV_OK);
    ck_assert_int_eq(cJSON_GetArraySize(a), 5);
    ck_assert(cJSON_GetArrayItem(a, 1)->valuedouble == -2.5);
    ck_assert(cJSON_IsNull(cJSON_GetArrayItem(a, 4)));
    ck_assert_int_eq(ev_json_get_object(t, "b", &b, &err), EV_OK);
    ck_assert_int_eq(ev_json_get_str(b, "c", &s, &err), EV_OK);
    ck_assert_str_eq(s, "d");
    ck_assert_int_eq(ev_json_get_str(t, "e", &s, &err), EV_OK);
    ck_assert_str_eq(s, "\"\\/\b\f\n\r\t");
    cJSON_Delete(t);
}
END_TEST

START_TEST(test_escapes_and_raw_utf8_decode_to_the_same_bytes)
{
    /* U+00E9 and U+1F600 (surrogate pair D83D DE00), escaped and raw. */
    static const char doc[] = "{\"esc\": \"\\u00e9\\ud83d\\ude00\", \"raw\": \"\xc3\xa9\xf0\x9f\x98\x80\"}";
    cJSON *t = NULL;
    ev_err err;
    const char *a, *b;

    ck_assert_int_eq(ev_json_parse(doc, sizeof doc - 1, 0, &t, &err), EV_OK);
    ck_assert_int_eq(ev_json_get_str(t, "esc", &a, &err), EV_OK);
    ck_assert_int_eq(ev_json_get_str(t, "raw", &b, &err), EV_OK);
    ck_assert_str_eq(a, "\xc3\xa9\xf0\x9f\x98\x80");
    ck_assert_str_eq(a, b);
    cJSON_Delete(t);
}
END_TEST

START_TEST(test_a_buffer_without_a_nul_is_read_only_up_to_n)
{
    static const char bytes[] = "[1,2]garbage";
    cJSON *t = NULL;
    ev_err err;
    ck_assert_int_eq(ev_json_parse(bytes, 5, 0, &t, &err), EV_OK);
    ck_assert_int_eq(cJSON_GetArraySize(t), 2);
    cJSON_Delete(t);
    ck_assert_int_eq(ev_json_parse(bytes, 6, 0, &t, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "offset 5 (line 1, column 6): trailing bytes after the value ('g')");
}
END_TEST

START_TEST(test_nesting_up_to_the_cap_is_accepted)
{
    char doc[2 * EV_JSON_MAX_DEPTH + 1];
    int i;
    for (i = 0; i < EV_JSON_MAX_DEPTH; i++) {
        doc[i] = '[';
        doc[2 * EV_JSON_MAX_DEPTH - 1 - i] = ']';
    }
    doc[2 * EV_JSON_MAX_DEPTH] = '\0';
    ck_accepted(doc, 0);
}
END_TEST

START_TEST(test_same_key_in_different_objects_is_accepted)
{
    ck_accepted("{\"a\":{\"a\":1},\"b\":{\"a\":{\"a\":2}},\"c\":[{\"a\":1},{\"a\":2}]}", 0);
    ck_accepted("{\"a\":1,\"A\":2,\"a \":3,\"\":4}", 0);
}
END_TEST

/* ---- refusals, one kind per test ------------------------------------- */

START_TEST(test_bad_grammar_is_refused_with_its_position)
{
    ck_refused("[1,]", 0, "offset 3 (line 1, column 4): unexpected ']', expected a value");
    ck_refused("{\"a\" 1}", 0, "offset 5 (line 1, column 6): unexpected '1', expected ':'");
    ck_refused("{\"a\":1,}", 0, "offset 7 (line 1, column 8): unexpected '}', expected a string key");
    ck_refused("{a:1}", 0, "offset 1 (line 1, column 2): unexpected 'a', expected a string key");
    ck_refused("[1 2]", 0, "offset 3 (line 1, column 4): unexpected '2', expected ',' or ']'");
    ck_refused("{\"a\":1", 0, "offset 6 (line 1, column 7): unexpected end of input, expected ',' or '}'");
    ck_refused("['x']", 0, "offset 1 (line 1, column 2): unexpected ''', expected a value");
    ck_refused("[tru]", 0, "offset 1 (line 1, column 2): invalid literal (expected true)");
    ck_refused("nul", 0, "offset 0 (line 1, column 1): invalid literal (expected null)");
    ck_refused("\"abc", 0, "offset 0 (line 1, column 1): unterminated string");
    ck_refused("[\"\\x\"]", 0, "offset 2 (line 1, column 3): invalid escape \\'x'");
    ck_refused("[\"\\u12g4\"]", 0, "offset 2 (line 1, column 3): \\u needs four hex digits");
}
END_TEST

START_TEST(test_empty_input_is_refused)
{
    ck_refused("", 0, "offset 0 (line 1, column 1): unexpected end of input, expected a value");
    ck_refused(" \n\t", 0, "offset 3 (line 2, column 2): unexpected end of input, expected a value");
}
END_TEST

START_TEST(test_duplicate_keys_are_refused_at_the_second_occurrence)
{
    ck_refused("{\"a\":1,\"a\":2}", 0, "offset 7 (line 1, column 8): duplicate key \"a\"");
    /* Same key after decoding: "a" and "\u0061". */
    ck_refused("{\"a\":1,\"\\u0061\":2}", 0, "offset 7 (line 1, column 8): duplicate key \"a\"");
    /* Earliest second occurrence wins when several keys repeat. */
    ck_refused("{\"b\":1,\"a\":2,\"a\":3,\"b\":4}", 0, "offset 13 (line 1, column 14): duplicate key \"a\"");
    /* Line and column over several lines. */
    ck_refused("{\n  \"a\": 1,\n  \"a\": 2\n}", 0, "offset 14 (line 3, column 3): duplicate key \"a\"");
    /* Only empty keys (found by fuzzing: no key bytes at all once decoded). */
    ck_refused("{\"\":1,\"\": 1.0}", 0, "offset 6 (line 1, column 7): duplicate key \"\"");
}
END_TEST

START_TEST(test_duplicate_keys_deep_inside_arrays_are_refused)
{
    ck_refused("[{\"x\":[{},{\"k\":{\"q\":1,\"r\":[],\"q\":null}}]}]", 0,
               "offset 29 (line 1, column 30): duplicate key \"q\"");
    /* A key with a non-printable byte is shown escaped. */
    ck_refused("{\"\\n\":1,\"\\n\":2}", 0, "offset 8 (line 1, column 9): duplicate key \"\\x0a\"");
}
END_TEST

START_TEST(test_trailing_bytes_are_refused)
{
    ck_refused("{} x", 0, "offset 3 (line 1, column 4): trailing bytes after the value ('x')");
    ck_refused("[1] [2]", 0, "offset 4 (line 1, column 5): trailing bytes after the value ('[')");
    ck_refused("1 2", 0, "offset 2 (line 1, column 3): trailing bytes after the value ('2')");
    ck_accepted("{}\n\r\n \t", 0);
}
END_TEST

START_TEST(test_nesting_beyond_the_cap_is_refused)
{
    char doc[2 * (EV_JSON_MAX_DEPTH + 1) + 1], want[100];
    int i, d = EV_JSON_MAX_DEPTH + 1;
    for (i = 0; i < d; i++) {
        doc[i] = i % 2 ? '[' : '[';
        doc[2 * d - 1 - i] = ']';
    }
    doc[2 * d] = '\0';
    snprintf(want, sizeof want, "offset %d (line 1, column %d): nesting deeper than %d", EV_JSON_MAX_DEPTH,
             EV_JSON_MAX_DEPTH + 1, EV_JSON_MAX_DEPTH);
    ck_refused(doc, 0, want);
    /* Objects count too: 64 arrays around an object. */
    doc[EV_JSON_MAX_DEPTH] = '{';
    doc[EV_JSON_MAX_DEPTH + 1] = '}';
    memset(doc + EV_JSON_MAX_DEPTH + 2, ']', EV_JSON_MAX_DEPTH);
    doc[2 * EV_JSON_MAX_DEPTH + 2] = '\0';
    ck_refused(doc, 0, want);
}
END_TEST

START_TEST(test_escaped_nul_is_refused)
{
    ck_refused("[\"ab\\u0000cd\"]", 0, "offset 4 (line 1, column 5): \\u0000 is not allowed");
    ck_refused("{\"k\\u0000\":1}", 0, "offset 3 (line 1, column 4): \\u0000 is not allowed");
}
END_TEST

START_TEST(test_raw_nul_bytes_are_refused)
{
    ev_err err;
    ck_assert_int_eq(ev_json_check("[\"a\0b\"]", 7, 0, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "offset 3 (line 1, column 4): NUL byte in string (control "
                              "characters must be escaped)");
    ck_assert_int_eq(ev_json_check("[1,\0]", 5, 0, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "offset 3 (line 1, column 4): unexpected NUL byte, expected a value");
    ck_assert_int_eq(ev_json_check("{}\0", 3, 0, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "offset 2 (line 1, column 3): trailing bytes after the value (NUL byte)");
}
END_TEST

START_TEST(test_control_characters_in_strings_are_refused)
{
    ck_refused("[\"a\tb\"]", 0,
               "offset 3 (line 1, column 4): byte 0x09 in string (control "
               "characters must be escaped)");
    ck_refused("[\"a\nb\"]", 0,
               "offset 3 (line 1, column 4): byte 0x0a in string (control "
               "characters must be escaped)");
    ck_refused("[\"\x1f\"]", 0,
               "offset 2 (line 1, column 3): byte 0x1f in string (control "
               "characters must be escaped)");
    ck_accepted("[\"\x7f\"]", 0); /* DEL is not a control character in JSON */
}
END_TEST

START_TEST(test_leading_zeros_are_refused)
{
    ck_refused("[01]", 0, "offset 1 (line 1, column 2): leading zero in number");
    ck_refused("[-012.5]", 0, "offset 2 (line 1, column 3): leading zero in number");
    ck_refused("00", 0, "offset 0 (line 1, column 1): leading zero in number");
    ck_accepted("[0, -0, 0.5, -0.5, 0e5, 10, 1e05]", 0); /* zeros in the exponent are fine */
}
END_TEST

START_TEST(test_malformed_numbers_are_refused)
{
    ck_refused("[.5]", 0, "offset 1 (line 1, column 2): unexpected '.', expected a value");
    ck_refused("[1.]", 0, "offset 3 (line 1, column 4): number needs a digit after '.'");
    ck_refused("[+1]", 0, "offset 1 (line 1, column 2): unexpected '+', expected a value");
    ck_refused("[1e]", 0, "offset 3 (line 1, column 4): number needs a digit in the exponent");
    ck_refused("[1e+]", 0, "offset 4 (line 1, column 5): number needs a digit in the exponent");
    ck_refused("[-]", 0, "offset 2 (line 1, column 3): number needs a digit");
    ck_refused("[0x10]", 0, "offset 2 (line 1, column 3): unexpected 'x', expected ',' or ']'");
    ck_refused("[1-2]", 0, "offset 2 (line 1, column 3): unexpected character in number");
    ck_refused("[NaN]", 0, "offset 1 (line 1, column 2): unexpected 'N', expected a value");
    ck_refused("[-Infinity]", 0, "offset 2 (line 1, column 3): number needs a digit");
}
END_TEST

START_TEST(test_numbers_overflowing_to_infinity_are_refused)
{
    ck_refused("[1e400]", 0, "offset 1 (line 1, column 2): number 1e400 overflows to infinity");
    ck_refused("{\"x\": -1.8e308}", 0, "offset 6 (line 1, column 7): number -1.8e308 overflows to infinity");
    ck_accepted("[1.7976931348623157e308, 1e-400]", 0); /* DBL_MAX; underflow is finite */
}
END_TEST

START_TEST(test_numbers_longer_than_63_characters_are_refused)
{
    char doc[80];
    memset(doc, '1', sizeof doc);
    doc[0] = '[';
    doc[64] = ']'; /* 63 digits */
    doc[65] = '\0';
    ck_accepted(doc, 0);
    doc[64] = '1';
    doc[65] = ']'; /* 64 digits */
    doc[66] = '\0';
    ck_refused(doc, 0, "offset 1 (line 1, column 2): number longer than 63 characters");
}
END_TEST

START_TEST(test_invalid_utf8_is_refused)
{
    ck_refused("[\"\xc3\x28\"]", 0, "offset 2 (line 1, column 3): invalid UTF-8 in string (byte 0xc3)");
    /* Overlong '/', encoded surrogate U+D800, beyond U+10FFFF, lone continuation. */
    ck_refused("[\"\xc0\xaf\"]", 0, "offset 2 (line 1, column 3): invalid UTF-8 in string (byte 0xc0)");
    ck_refused("[\"\xe0\x80\xaf\"]", 0, "offset 2 (line 1, column 3): invalid UTF-8 in string (byte 0xe0)");
    ck_refused("[\"\xed\xa0\x80\"]", 0, "offset 2 (line 1, column 3): invalid UTF-8 in string (byte 0xed)");
    ck_refused("[\"\xf4\x90\x80\x80\"]", 0,
               "offset 2 (line 1, column 3): invalid UTF-8 in string (byte 0xf4)");
    ck_refused("[\"a\x80\"]", 0, "offset 3 (line 1, column 4): invalid UTF-8 in string (byte 0x80)");
    /* Truncated at the end of the input. */
    ck_refused("\"\xe2\x82", 0, "offset 1 (line 1, column 2): invalid UTF-8 in string (byte 0xe2)");
    /* Outside a string, any non-ASCII byte is a grammar error. */
    ck_refused("[\xc3\xa9]", 0, "offset 1 (line 1, column 2): unexpected byte 0xc3, expected a value");
    /* The largest code points of each length are fine. */
    ck_accepted("[\"\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf\xee\x80\x80\"]", 0);
}
END_TEST

START_TEST(test_a_utf8_bom_is_refused)
{
    ck_refused("\xef\xbb\xbf{}", 0, "offset 0 (line 1, column 1): unexpected byte 0xef, expected a value");
}
END_TEST

START_TEST(test_lone_surrogates_are_refused)
{
    ck_refused("[\"\\ud800\"]", 0, "offset 2 (line 1, column 3): lone high surrogate \\ud800");
    ck_refused("[\"\\udc00\"]", 0, "offset 2 (line 1, column 3): lone low surrogate \\udc00");
    ck_refused("[\"x\\uDBFF\\u0041\"]", 0, "offset 3 (line 1, column 4): lone high surrogate \\udbff");
    ck_refused("[\"\\ud800\\ud800\"]", 0, "offset 2 (line 1, column 3): lone high surrogate \\ud800");
    ck_accepted("[\"\\uDBFF\\uDFFF\"]", 0);
}
END_TEST

START_TEST(test_non_canonical_numbers_are_refused_only_when_asked)
{
    ck_refused("[0.1]", EV_JSON_CANONICAL,
               "offset 1 (line 1, column 2): number 0.1 is not canonical (%.17g of its value is "
               "0.10000000000000001)");
    ck_refused("{\"n\": 1e2}", EV_JSON_CANONICAL,
               "offset 6 (line 1, column 7): number 1e2 is not canonical (%.17g of its value is "
               "100)");
    ck_refused("[1.0]", EV_JSON_CANONICAL,
               "offset 1 (line 1, column 2): number 1.0 is not canonical (%.17g of its value is 1)");
    ck_refused("[1E+100]", EV_JSON_CANONICAL,
               "offset 1 (line 1, column 2): number 1E+100 is not canonical (%.17g of its value "
               "is 1e+100)");
    ck_refused("[1e-400]", EV_JSON_CANONICAL,
               "offset 1 (line 1, column 2): number 1e-400 is not canonical (%.17g of its value "
               "is 0)");
    ck_accepted("[0.1, 1e2, 1.0, 1E+100]", 0);
    ck_accepted("[7, -0, 0, 0.10000000000000001, 1e+100, 0.30000000000000004, "
                "4.9406564584124654e-324, 1.7976931348623157e+308, -2.2250738585072014e-308]",
                EV_JSON_CANONICAL);
}
END_TEST

/* ---- writing --------------------------------------------------------- */

START_TEST(test_format_double_writes_exactly_percent_17g)
{
    char b[32];
    ck_assert_int_eq(ev_json_format_double(0.1, b), EV_OK);
    ck_assert_str_eq(b, "0.10000000000000001");
    ev_json_format_double(0.1 + 0.2, b);
    ck_assert_str_eq(b, "0.30000000000000004");
    ev_json_format_double(7.0, b);
    ck_assert_str_eq(b, "7");
    ev_json_format_double(-0.0, b);
    ck_assert_str_eq(b, "-0");
    ev_json_format_double(1e100, b);
    ck_assert_str_eq(b, "1e+100");
    ev_json_format_double(DBL_MAX, b);
    ck_assert_str_eq(b, "1.7976931348623157e+308");
    ev_json_format_double(-DBL_MIN, b);
    ck_assert_str_eq(b, "-2.2250738585072014e-308");
    ev_json_format_double(4.9406564584124654e-324, b);
    ck_assert_str_eq(b, "4.9406564584124654e-324");
    ev_json_format_double(9007199254740993.0, b); /* rounds to 2^53 */
    ck_assert_str_eq(b, "9007199254740992");
}
END_TEST

START_TEST(test_format_double_refuses_nan_and_infinity)
{
    char b[32] = "untouched";
    ck_assert_int_eq(ev_json_format_double(NAN, b), EV_ERANGE);
    ck_assert_int_eq(ev_json_format_double(INFINITY, b), EV_ERANGE);
    ck_assert_int_eq(ev_json_format_double(-INFINITY, b), EV_ERANGE);
    ck_assert_str_eq(b, "untouched");
}
END_TEST

START_TEST(test_writer_output_is_exact_and_canonical)
{
    cJSON *o = cJSON_CreateObject(), *a = cJSON_CreateArray(), *back = NULL;
    ev_buf b = EV_BUF_INIT;
    ev_err err;
    int64_t i;
    double d;

    ck_assert_int_eq(ev_json_add_double(o, "sum", 0.1 + 0.2), EV_OK);
    ck_assert_int_eq(ev_json_add_double(o, "nan", NAN), EV_OK);
    ck_assert_int_eq(ev_json_add_i64(o, "e15", 1000000000000000LL), EV_OK);
    ck_assert_int_eq(ev_json_add_i64(o, "p53", 9007199254740992LL), EV_OK);
    ck_assert_int_eq(ev_json_add_i64(o, "p53+1", 9007199254740993LL), EV_OK);
    ck_assert_int_eq(ev_json_add_i64(o, "m53", -9007199254740992LL), EV_OK);
    ck_assert_int_eq(ev_json_add_i64(o, "m53-1", -9007199254740993LL), EV_OK);
    ck_assert_int_eq(ev_json_add_i64(o, "min", INT64_MIN), EV_OK);
    ck_assert_int_eq(ev_json_add_i64_string(o, "ns", 5), EV_OK);
    ck_assert_int_eq(ev_json_add_str(o, "s", "\xc3\xa9\"\n"), EV_OK);
    ck_assert_int_eq(ev_json_add_str(o, "none", NULL), EV_OK);
    ck_assert_int_eq(ev_json_add_bool(o, "t", 7), EV_OK);
    ck_assert_int_eq(ev_json_push_double(a, -0.0), EV_OK);
    ck_assert_int_eq(ev_json_push_double(a, -INFINITY), EV_OK);
    ck_assert_int_eq(ev_json_push_i64(a, INT64_MAX), EV_OK);
    ck_assert_int_eq(ev_json_push_i64(a, 3), EV_OK);
    cJSON_AddItemToObject(o, "arr", a);
    ck_assert_int_eq(ev_json_print(o, 0, &b), EV_OK);
    ck_assert_str_eq(b.data, "{\"sum\":0.30000000000000004,\"nan\":null,\"e15\":1000000000000000,"
                             "\"p53\":9007199254740992,\"p53+1\":\"9007199254740993\","
                             "\"m53\":-9007199254740992,\"m53-1\":\"-9007199254740993\","
                             "\"min\":\"-9223372036854775808\",\"ns\":\"5\","
                             "\"s\":\"\xc3\xa9\\\"\\n\",\"none\":null,\"t\":true,"
                             "\"arr\":[-0,null,\"9223372036854775807\",3]}\n");

    /* The writer's output passes the canonical reader and reads back. */
    ck_assert_int_eq(ev_json_parse(b.data, b.len, EV_JSON_CANONICAL, &back, &err), EV_OK);
    ck_assert_int_eq(ev_json_get_double(back, "sum", &d, &err), EV_OK);
    ck_assert(d == 0.1 + 0.2);
    ck_assert_int_eq(ev_json_get_i64(back, "p53+1", &i, &err), EV_OK);
    ck_assert_int_eq(i, 9007199254740993LL);
    ck_assert_int_eq(ev_json_get_i64(back, "min", &i, &err), EV_OK);
    ck_assert_int_eq(i, INT64_MIN);
    ck_assert_int_eq(ev_json_get_i64(back, "m53", &i, &err), EV_OK);
    ck_assert_int_eq(i, -9007199254740992LL);
    ck_assert_int_eq(ev_json_get_i64(back, "ns", &i, &err), EV_OK);
    ck_assert_int_eq(i, 5);

    /* Pretty printing is the same tree, also newline-terminated. */
    ev_buf_reset(&b);
    ck_assert_int_eq(ev_json_print(back, 1, &b), EV_OK);
    ck_assert_int_eq(b.data[b.len - 1], '\n');
    ck_assert_ptr_nonnull(strstr(b.data, "\"sum\":\t0.30000000000000004"));
    cJSON_Delete(back);
    back = NULL;
    ck_assert_int_eq(ev_json_parse(b.data, b.len, EV_JSON_CANONICAL, &back, &err), EV_OK);
    cJSON_Delete(back);
    ev_buf_free(&b);
    cJSON_Delete(o);
}
END_TEST

START_TEST(test_a_parsed_tree_reprints_numbers_canonically)
{
    static const char doc[] = "{\"a\": [0.1, 1e2, -0.0, 1E+100, 12], \"b\": {\"c\": 0.5}}";
    cJSON *t = NULL, *again = NULL;
    ev_buf b = EV_BUF_INIT;
    ev_err err;

    ck_assert_int_eq(ev_json_parse(doc, sizeof doc - 1, 0, &t, &err), EV_OK);
    ck_assert_int_eq(ev_json_print(t, 0, &b), EV_OK);
    ck_assert_str_eq(b.data, "{\"a\":[0.10000000000000001,100,-0,1e+100,12],\"b\":{\"c\":0.5}}\n");
    ck_assert_int_eq(ev_json_parse(b.data, b.len, EV_JSON_CANONICAL, &again, &err), EV_OK);
    ck_assert(cJSON_IsNumber(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "a"), 0))); /* t unchanged */
    cJSON_Delete(again);
    cJSON_Delete(t);
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_adding_a_key_twice_is_refused)
{
    cJSON *o = cJSON_CreateObject(), *a = cJSON_CreateArray();
    ck_assert_int_eq(ev_json_add_double(o, "x", 1.0), EV_OK);
    ck_assert_int_eq(ev_json_add_double(o, "x", 2.0), EV_EINVAL);
    ck_assert_int_eq(ev_json_add_i64(o, "x", 2), EV_EINVAL);
    ck_assert_int_eq(ev_json_add_str(o, "x", "y"), EV_EINVAL);
    ck_assert_int_eq(cJSON_GetArraySize(o), 1);
    ck_assert_int_eq(ev_json_add_double(a, "x", 1.0), EV_EINVAL); /* not an object */
    ck_assert_int_eq(ev_json_push_double(o, 1.0), EV_EINVAL);     /* not an array */
    cJSON_Delete(o);
    cJSON_Delete(a);
}
END_TEST

/* ---- getters --------------------------------------------------------- */

START_TEST(test_getters_name_the_key_when_they_refuse)
{
    static const char doc[] = "{\"s\":\"x\",\"f\":1.5,\"n\":null,\"big\":9007199254740994,"
                              "\"two53\":9007199254740992,\"neg\":-3,\"i\":\"12\","
                              "\"lead\":\"007\",\"sp\":\" 1\",\"over\":\"9223372036854775808\","
                              "\"under\":\"-9223372036854775809\",\"negz\":\"-0\",\"b\":false}";
    cJSON *t = NULL;
    ev_err err;
    double d = 42;
    int64_t i = 42;
    const char *s = NULL;
    int b = 42;

    ck_assert_int_eq(ev_json_parse(doc, sizeof doc - 1, 0, &t, &err), EV_OK);
    ck_assert_int_eq(ev_json_get_double(t, "missing", &d, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "\"missing\": missing");
    ck_assert_int_eq(ev_json_get_double(t, "s", &d, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "\"s\": expected a number, found a string");
    ck_assert_int_eq(ev_json_get_double(t, "n", &d, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "\"n\": expected a number, found null");
    ck_assert(d == 42);
    ck_assert_int_eq(ev_json_get_i64(t, "f", &i, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "\"f\": expected an integer, found 1.5");
    ck_assert_int_eq(ev_json_get_i64(t, "big", &i, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "\"big\": number 9007199254740994 is beyond 2^53 (large integers are strings)");
    ck_assert_int_eq(ev_json_get_i64(t, "lead", &i, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "\"lead\": string \"007\" is not a decimal integer");
    ck_assert_int_eq(ev_json_get_i64(t, "sp", &i, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_json_get_i64(t, "negz", &i, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_json_get_i64(t, "over", &i, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "\"over\": integer string \"9223372036854775808\" is out of the int64 range");
    ck_assert_int_eq(ev_json_get_i64(t, "under", &i, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_json_get_i64(t, "b", &i, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "\"b\": expected an integer, found a boolean");
    ck_assert_int_eq(i, 42);
    ck_assert_int_eq(ev_json_get_str(t, "f", &s, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "\"f\": expected a string, found a number");
    ck_assert_ptr_null(s);
    ck_assert_int_eq(ev_json_get_bool(t, "s", &b, &err), EV_EFORMAT);
    ck_assert_int_eq(b, 42);

    ck_assert_int_eq(ev_json_get_double(t, "f", &d, &err), EV_OK);
    ck_assert(d == 1.5);
    ck_assert_int_eq(ev_json_get_i64(t, "two53", &i, &err), EV_OK);
    ck_assert_int_eq(i, 9007199254740992LL);
    ck_assert_int_eq(ev_json_get_i64(t, "neg", &i, &err), EV_OK);
    ck_assert_int_eq(i, -3);
    ck_assert_int_eq(ev_json_get_i64(t, "i", &i, &err), EV_OK);
    ck_assert_int_eq(i, 12);
    ck_assert_int_eq(ev_json_get_bool(t, "b", &b, &err), EV_OK);
    ck_assert_int_eq(b, 0);
    ck_assert_int_eq(ev_json_get_double(cJSON_GetObjectItem(t, "s"), "x", &d, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "\"x\": looked up in a string, not an object");
    cJSON_Delete(t);
}
END_TEST

START_TEST(test_get_double_reads_raw_items_of_a_built_tree)
{
    cJSON *o = cJSON_CreateObject();
    double d = 0;
    int64_t i = 0;
    ev_err err;
    ck_assert_int_eq(ev_json_add_double(o, "x", 0.1), EV_OK);
    ck_assert_int_eq(ev_json_add_i64(o, "n", -17), EV_OK);
    ck_assert_int_eq(ev_json_get_double(o, "x", &d, &err), EV_OK);
    ck_assert(d == 0.1);
    ck_assert_int_eq(ev_json_get_i64(o, "n", &i, &err), EV_OK);
    ck_assert_int_eq(i, -17);
    cJSON_Delete(o);
}
END_TEST

START_TEST(test_read_number_applies_the_json_rule_to_bare_text)
{
    double d = 5;
    ev_err err;
    ck_assert_int_eq(ev_json_read_number("12.25", 5, 0, &d, &err), EV_OK);
    ck_assert(d == 12.25);
    ck_assert_int_eq(ev_json_read_number("12.25xyz", 5, 0, &d, &err), EV_OK);
    ck_assert_int_eq(ev_json_read_number(" 1", 2, 0, &d, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_json_read_number("1 ", 2, 0, &d, &err), EV_EFORMAT);
    ck_assert_str_eq(err.msg, "unexpected character in number");
    ck_assert_int_eq(ev_json_read_number("inf", 3, 0, &d, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_json_read_number("0x1p3", 5, 0, &d, &err), EV_EFORMAT);
    ck_assert_int_eq(ev_json_read_number("", 0, 0, &d, &err), EV_EFORMAT);
    ck_assert(d == 12.25);
}
END_TEST

/* ---- round trip ------------------------------------------------------ */

/* splitmix64 (Steele, Lea, Flood), used to seed xoshiro256**. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* xoshiro256** 1.0 (Blackman, Vigna). */
static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t xoshiro_next(uint64_t s[4])
{
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double double_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/*
 * Writes vals[0..n) into one JSON array with ev_json_push_double, prints
 * it, re-reads it with EV_JSON_CANONICAL, and checks every element has the
 * same bits.  Also checks format -> strtod and ev_json_read_number
 * (canonical) per value.  Returns n.  (check's ck_assert records every
 * passing assertion through a file, so the per-value loop tests with plain
 * ifs and fails through ck_abort_msg.)
 */
static size_t round_trip_batch(const double *vals, size_t n)
{
    cJSON *arr = cJSON_CreateArray(), *back = NULL, *it;
    ev_buf b = EV_BUF_INIT;
    ev_err err;
    size_t i;
    char text[32];

    for (i = 0; i < n; i++) {
        double r;
        char *end;
        if (ev_json_format_double(vals[i], text) != EV_OK)
            ck_abort_msg("format refused %016llx", (unsigned long long)bits_of(vals[i]));
        r = strtod(text, &end);
        if (*end != '\0' || bits_of(r) != bits_of(vals[i]))
            ck_abort_msg("strtod(%s) = %016llx, wrote %016llx", text, (unsigned long long)bits_of(r),
                         (unsigned long long)bits_of(vals[i]));
        r = 0;
        if (ev_json_read_number(text, strlen(text), EV_JSON_CANONICAL, &r, &err) != EV_OK ||
            bits_of(r) != bits_of(vals[i]))
            ck_abort_msg("read_number(%s) refused or differs: %s", text, err.msg);
        if (ev_json_push_double(arr, vals[i]) != EV_OK)
            ck_abort_msg("push refused %s", text);
    }
    ck_assert_int_eq(ev_json_print(arr, 0, &b), EV_OK);
    ck_assert_msg(ev_json_parse(b.data, b.len, EV_JSON_CANONICAL, &back, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(cJSON_GetArraySize(back), (int)n);
    i = 0;
    cJSON_ArrayForEach(it, back)
    {
        if (!cJSON_IsNumber(it) || bits_of(it->valuedouble) != bits_of(vals[i]))
            ck_abort_msg("element %zu: %016llx read back as %016llx", i, (unsigned long long)bits_of(vals[i]),
                         (unsigned long long)bits_of(it->valuedouble));
        i++;
    }
    ck_assert_uint_eq(i, n);
    cJSON_Delete(back);
    cJSON_Delete(arr);
    ev_buf_free(&b);
    return n;
}

START_TEST(test_extreme_doubles_round_trip_bit_for_bit)
{
    double v[64];
    size_t n = 0, k;
    double base[] = {0.0,
                     DBL_MIN,
                     DBL_MAX,
                     4.9406564584124654e-324 /* min subnormal */,
                     2.2250738585072009e-308 /* max subnormal */,
                     1.0,
                     0.1 + 0.2,
                     0.1,
                     9007199254740992.0,
                     1e23,
                     5e-324 * 3,
                     123456789.123456789};
    for (k = 0; k < sizeof base / sizeof base[0]; k++) {
        double c[4];
        size_t j;
        c[0] = base[k];
        c[1] = -base[k];
        c[2] = nextafter(base[k], INFINITY); /* DBL_MAX's up-neighbour is inf: skipped */
        c[3] = nextafter(base[k], -INFINITY);
        for (j = 0; j < 4; j++)
            if (isfinite(c[j]))
                v[n++] = c[j];
    }
    ck_assert_uint_eq(n, 4 * 12 - 1); /* DBL_MAX loses its up-neighbour */
    ck_assert(bits_of(v[0]) == 0 && bits_of(v[1]) == 0x8000000000000000ULL);
    ck_assert(bits_of(4.9406564584124654e-324) == 1);
    ck_assert(bits_of(2.2250738585072009e-308) == 0x000fffffffffffffULL);
    ck_assert_uint_eq(round_trip_batch(v, n), n);
}
END_TEST

START_TEST(test_a_million_random_bit_patterns_round_trip)
{
    enum { TOTAL = 1000000, BATCH = 10000 };
    static double vals[BATCH];
    uint64_t seed = 0x5eed0fe1de117ULL, s[4];
    size_t drawn = 0, checked = 0, nonfinite = 0, subnormal = 0, nb = 0;
    struct timespec t0, t1;

    s[0] = splitmix64(&seed);
    s[1] = splitmix64(&seed);
    s[2] = splitmix64(&seed);
    s[3] = splitmix64(&seed);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (drawn < TOTAL) {
        double d = double_of(xoshiro_next(s));
        drawn++;
        if (!isfinite(d)) {
            char b[32] = "x";
            if (ev_json_format_double(d, b) != EV_ERANGE || strcmp(b, "x") != 0)
                ck_abort_msg("format accepted %016llx", (unsigned long long)bits_of(d));
            nonfinite++;
            continue;
        }
        if (fpclassify(d) == FP_SUBNORMAL)
            subnormal++;
        vals[nb++] = d;
        if (nb == BATCH) {
            checked += round_trip_batch(vals, nb);
            nb = 0;
        }
    }
    if (nb)
        checked += round_trip_batch(vals, nb);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_uint_eq(checked + nonfinite, TOTAL);
    ck_assert_uint_gt(checked, 999000);
    ck_assert_uint_gt(subnormal, 100); /* about 1/2048 of the patterns */
    fprintf(stderr,
            "json round trip: %zu random patterns drawn, %zu finite checked bit for bit "
            "(%zu subnormal), %zu NaN/Inf refused, %.2f s\n",
            drawn, checked, subnormal, nonfinite,
            (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}
END_TEST

/* The values a bounded reading counts are every array, object, string,
 * number and literal; one more than the budget is refused before cJSON
 * builds anything, at the value that broke it; a string or key longer
 * than max_string is refused too; within both, the tree is the unbounded
 * parser's, read in place when a NUL follows the bytes. */
START_TEST(test_a_bounded_reading_counts_values_and_refuses_one_past_its_budget)
{
    static const char doc[] = "{\"a\": [0, 1, {\"b\": null, \"c\": \"xyz\"}], \"d\": true, \"e\": [[]]}";
    size_t n = strlen(doc), nodes = 0;
    ev_json_bounds exact = {10, SIZE_MAX, 1}, one_less = {9, SIZE_MAX, 0}, short_str = {100, 2, 0};
    cJSON *t = NULL;
    ev_err err = {{0}};
    ck_assert_int_eq(ev_json_parse_bounded(doc, n, 0, &exact, &nodes, &t, &err), EV_OK);
    ck_assert_uint_eq(nodes, 10); /* {} a[] 0 1 {} null "xyz" true e[] [] */
    cJSON *u = NULL;
    ck_assert_int_eq(ev_json_parse(doc, n, 0, &u, &err), EV_OK);
    ck_assert(cJSON_Compare(t, u, 1));
    cJSON_Delete(t);
    cJSON_Delete(u);
    t = NULL;
    ck_assert_int_eq(ev_json_parse_bounded(doc, n, 0, &one_less, &nodes, &t, &err), EV_EFORMAT);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(err.msg, "more than 9 values") && strstr(err.msg, "column 57"), "%s", err.msg);
    ck_assert_int_eq(ev_json_parse_bounded(doc, n, 0, &short_str, &nodes, &t, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "a string of 3 bytes, more than the 2"), "%s", err.msg);
    /* a key is a string too */
    ck_assert_int_eq(ev_json_check_bounded("{\"abc\": 1}", 10, 0, &short_str, &nodes, &err), EV_EFORMAT);
}
END_TEST

/* A wide object's numbers made canonical in place: a million keys in time
 * linear in them (replaced by pointer, keys moved, never looked up). */
START_TEST(test_canonical_numbers_of_a_wide_object_take_linear_time)
{
    ev_buf b = EV_BUF_INIT;
    cJSON *t = NULL;
    ev_err err = {{0}};
    ck_assert_int_eq(ev_buf_puts(&b, "{"), EV_OK);
    for (int i = 0; i < 1000000; i++)
        ck_assert_int_eq(ev_buf_printf(&b, "%s\"%x\":%d.5", i ? "," : "", i, i % 7), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&b, "}"), EV_OK);
    ck_assert_int_eq(ev_json_parse(b.data, b.len, 0, &t, &err), EV_OK);
    ck_assert_int_eq(ev_json_canon_numbers(t), EV_OK);
    const cJSON *last = cJSON_GetObjectItemCaseSensitive(t, "f423f");
    ck_assert(cJSON_IsRaw(last) && !strcmp(last->valuestring, "0.5")); /* 999999 % 7 + 0.5 */
    cJSON_Delete(t);
    ev_buf_free(&b);
}
END_TEST

/* ev_json_print_equals says exactly whether text is what ev_json_print(t,
 * 1) writes: for trees of every kind (objects in arrays in objects, empty
 * ones, escapes, raw items, numbers that are not canonical in cJSON's own
 * printing, non-finite ones), and at the first byte that differs. */
START_TEST(test_print_equals_agrees_with_the_printer_byte_for_byte)
{
    static const char *const docs[] = {
        "{}",
        "[]",
        "{\"a\": [], \"b\": {}, \"c\": [{}], \"d\": [[{\"x\": [1, {\"y\": {}}]}]]}",
        "{\"s\": \"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\\u00e9\\ud83d\\ude00\", \"t\": true, "
        "\"f\": "
        "false, \"n\": null}",
        "[0.1, 0.30000000000000004, 1e300, -0, 5e-324, 123456789012345678, 1.5]",
        "{\"k\": [{\"a\": 1, \"b\": [2, 3]}, {\"c\": {\"d\": [\"e\"]}}]}",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        cJSON *t = NULL;
        ev_buf out = EV_BUF_INIT;
        ev_err err = {{0}};
        size_t at = 99;
        ck_assert_msg(ev_json_parse(docs[i], strlen(docs[i]), 0, &t, &err) == EV_OK, "%s", err.msg);
        ck_assert_int_eq(ev_json_print(t, 1, &out), EV_OK);
        ck_assert_msg(ev_json_print_equals(t, out.data, out.len, &at), "doc %zu differs at %zu:\n%s", i, at,
                      out.data);
        ck_assert_uint_eq(at, out.len);
        /* one byte changed, one missing, one more: each found where it is */
        for (size_t k = 0; k < out.len; k += 1 + out.len / 7) {
            char was = out.data[k];
            out.data[k] = was == 'Z' ? 'Y' : 'Z';
            ck_assert(!ev_json_print_equals(t, out.data, out.len, &at));
            ck_assert_uint_eq(at, k);
            out.data[k] = was;
        }
        ck_assert(!ev_json_print_equals(t, out.data, out.len - 1, &at));
        ck_assert_int_eq(ev_buf_append(&out, " ", 1), EV_OK);
        ck_assert(!ev_json_print_equals(t, out.data, out.len, &at));
        ck_assert_uint_eq(at, out.len - 1);
        /* raw items (a built tree) and a non-finite number print as the printer prints them */
        cJSON *w = cJSON_CreateObject();
        cJSON_AddItemToObject(w, "t", t);
        ck_assert_int_eq(ev_json_add_double(w, "raw", 0.1 + 0.2), EV_OK);
        cJSON_AddNumberToObject(w, "inf", INFINITY);
        ev_buf_reset(&out);
        ck_assert_int_eq(ev_json_print(w, 1, &out), EV_OK);
        ck_assert_msg(ev_json_print_equals(w, out.data, out.len, NULL), "doc %zu, wrapped:\n%s", i, out.data);
        cJSON_Delete(w);
        ev_buf_free(&out);
    }
}
END_TEST

static Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc;

    tc = tcase_create("accept");
    tcase_add_test(tc, test_a_plain_document_parses_into_a_tree);
    tcase_add_test(tc, test_canonicalised_numbers_print_as_their_exact_text);
    tcase_add_test(tc, test_escapes_and_raw_utf8_decode_to_the_same_bytes);
    tcase_add_test(tc, test_a_buffer_without_a_nul_is_read_only_up_to_n);
    tcase_add_test(tc, test_nesting_up_to_the_cap_is_accepted);
    tcase_add_test(tc, test_same_key_in_different_objects_is_accepted);
    suite_add_tcase(s, tc);

    tc = tcase_create("refuse");
    tcase_add_test(tc, test_bad_grammar_is_refused_with_its_position);
    tcase_add_test(tc, test_empty_input_is_refused);
    tcase_add_test(tc, test_duplicate_keys_are_refused_at_the_second_occurrence);
    tcase_add_test(tc, test_duplicate_keys_deep_inside_arrays_are_refused);
    tcase_add_test(tc, test_trailing_bytes_are_refused);
    tcase_add_test(tc, test_nesting_beyond_the_cap_is_refused);
    tcase_add_test(tc, test_escaped_nul_is_refused);
    tcase_add_test(tc, test_raw_nul_bytes_are_refused);
    tcase_add_test(tc, test_control_characters_in_strings_are_refused);
    tcase_add_test(tc, test_leading_zeros_are_refused);
    tcase_add_test(tc, test_malformed_numbers_are_refused);
    tcase_add_test(tc, test_numbers_overflowing_to_infinity_are_refused);
    tcase_add_test(tc, test_numbers_longer_than_63_characters_are_refused);
    tcase_add_test(tc, test_invalid_utf8_is_refused);
    tcase_add_test(tc, test_a_utf8_bom_is_refused);
    tcase_add_test(tc, test_lone_surrogates_are_refused);
    tcase_add_test(tc, test_non_canonical_numbers_are_refused_only_when_asked);
    suite_add_tcase(s, tc);

    tc = tcase_create("write");
    tcase_add_test(tc, test_format_double_writes_exactly_percent_17g);
    tcase_add_test(tc, test_format_double_refuses_nan_and_infinity);
    tcase_add_test(tc, test_writer_output_is_exact_and_canonical);
    tcase_add_test(tc, test_a_parsed_tree_reprints_numbers_canonically);
    tcase_add_test(tc, test_adding_a_key_twice_is_refused);
    tcase_add_test(tc, test_print_equals_agrees_with_the_printer_byte_for_byte);
    suite_add_tcase(s, tc);

    tc = tcase_create("bounds");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_a_bounded_reading_counts_values_and_refuses_one_past_its_budget);
    tcase_add_test(tc, test_canonical_numbers_of_a_wide_object_take_linear_time);
    suite_add_tcase(s, tc);

    tc = tcase_create("get");
    tcase_add_test(tc, test_getters_name_the_key_when_they_refuse);
    tcase_add_test(tc, test_get_double_reads_raw_items_of_a_built_tree);
    tcase_add_test(tc, test_read_number_applies_the_json_rule_to_bare_text);
    suite_add_tcase(s, tc);

    tc = tcase_create("round_trip");
    tcase_set_timeout(tc, 900); /* about 3 s at -O2; ASan is several times slower */
    tcase_add_test(tc, test_extreme_doubles_round_trip_bit_for_bit);
    tcase_add_test(tc, test_a_million_random_bit_patterns_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int failed = ev_check_suite(json_suite());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
