/*
 * json.c: strict JSON reading and exact JSON writing on top of cJSON 1.7.15.
 *
 * cJSON alone keeps duplicate keys, accepts trailing bytes, leading zeros,
 * numbers that overflow to inf, a UTF-8 BOM, and truncates strings at
 * "\u0000".  So every document is first walked by the lexer below, over the
 * raw bytes (RFC 8259 grammar, UTF-8 validated, keys compared after escapes
 * are decoded, nesting capped at EV_JSON_MAX_DEPTH); only a document the
 * lexer accepts is handed to cJSON, as a NUL-terminated copy.
 *
 * Doubles are written as the exact text of snprintf("%.17g") in the C
 * locale, inserted raw, so strtod reads back the same bits; cJSON's own
 * number printer is never used for doubles (it prints 0.1+0.2 as 0.3).
 * Integers are also written as raw decimal text: cJSON would print 1e15 as
 * "1e+15", which is not canonical.  The writing, and the comparison of a
 * tree with its printed text, are in json_write.c.
 */
#include "json.h"
#include "utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest number token accepted: cJSON copies numbers into a 64-byte
 * buffer and would misread a longer one. */
#define EV_JSON_NUMBER_MAX 63

/* ---- the C locale ----------------------------------------------------- */

static locale_t c_loc;
static pthread_once_t c_loc_once = PTHREAD_ONCE_INIT;

/* Creates the C locale object once (c_loc stays (locale_t)0 on failure). */
static void c_loc_init(void)
{
    c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* Returns a "C" locale object, or (locale_t)0 when none could be made
 * (then the process locale is used, which evident never changes). */
static locale_t c_locale(void)
{
    pthread_once(&c_loc_once, c_loc_init);
    return c_loc;
}

/* strtod in the C locale. */
static double strtod_c(const char *s, char **end)
{
    locale_t loc = c_locale();
    return loc ? strtod_l(s, end, loc) : strtod(s, end);
}

/* ---- numbers ---------------------------------------------------------- */

ev_status ev_json_format_double(double v, char buf[32])
{
    locale_t loc = c_locale(), old = (locale_t)0;

    if (!isfinite(v))
        return EV_ERANGE;
    if (loc)
        old = uselocale(loc);
    snprintf(buf, 32, "%.17g", v);
    if (loc)
        uselocale(old);
    return EV_OK;
}

/*
 * Checks that s[0..n) is one JSON number token (RFC 8259:
 * -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?), at most
 * EV_JSON_NUMBER_MAX bytes, finite, and with EV_JSON_CANONICAL exactly the
 * %.17g text of its value.  Returns EV_OK with *out (the value), or
 * EV_EFORMAT with *bad_at (the offset in s of the problem) and a reason in
 * err (no position); out untouched on failure.
 */
static ev_status number_check(const char *s, size_t n, unsigned flags, double *out, size_t *bad_at,
                              ev_err *err)
{
    char tok[EV_JSON_NUMBER_MAX + 1], canon[32];
    size_t i = 0;
    char *end = NULL;
    double v;

    *bad_at = 0;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n || s[i] < '0' || s[i] > '9') {
        *bad_at = i;
        return ev_err_set(err, EV_EFORMAT, "number needs a digit");
    }
    if (s[i] == '0') {
        i++;
        if (i < n && s[i] >= '0' && s[i] <= '9') {
            *bad_at = i - 1;
            return ev_err_set(err, EV_EFORMAT, "leading zero in number");
        }
    } else {
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9') {
            *bad_at = i;
            return ev_err_set(err, EV_EFORMAT, "number needs a digit after '.'");
        }
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || s[i] < '0' || s[i] > '9') {
            *bad_at = i;
            return ev_err_set(err, EV_EFORMAT, "number needs a digit in the exponent");
        }
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i != n) {
        *bad_at = i;
        return ev_err_set(err, EV_EFORMAT, "unexpected character in number");
    }
    if (n > EV_JSON_NUMBER_MAX)
        return ev_err_set(err, EV_EFORMAT, "number longer than %d characters", EV_JSON_NUMBER_MAX);
    memcpy(tok, s, n);
    tok[n] = '\0';
    v = strtod_c(tok, &end);
    if (end != tok + n)
        return ev_err_set(err, EV_EFORMAT, "number not read whole");
    if (!isfinite(v))
        return ev_err_set(err, EV_EFORMAT, "number %s overflows to infinity", tok);
    if (flags & EV_JSON_CANONICAL) {
        ev_json_format_double(v, canon);
        if (strcmp(canon, tok) != 0)
            return ev_err_set(err, EV_EFORMAT, "number %s is not canonical (%%.17g of its value is %s)", tok,
                              canon);
    }
    *out = v;
    return EV_OK;
}

ev_status ev_json_read_number(const char *s, size_t n, unsigned flags, double *out, ev_err *err)
{
    size_t bad_at;
    return number_check(s, n, flags, out, &bad_at, err);
}

/* ---- the strict lexer ------------------------------------------------- */

/* A decoded object key in the lexer's scratch: bytes, length, and where
 * the key's opening quote is in the document. */
typedef struct keyref {
    size_t off; /* into lex.scratch */
    size_t len;
    size_t at; /* document offset of the key */
} keyref;

typedef struct lex {
    const unsigned char *p;
    size_t n, pos;
    size_t nodes, max_nodes; /* values lexed so far, and the most allowed */
    size_t max_string;       /* the longest string or key allowed, in bytes as written */
    unsigned flags;
    ev_err *err;
    ev_buf scratch; /* decoded keys of the open objects, a stack */
    keyref *keys;   /* refs into scratch, a stack */
    size_t nkeys, capkeys;
} lex;

/*
 * Fills err with "offset O (line L, column C): <reason>" for document
 * offset at (lines and columns 1-based, columns counted in bytes) and
 * returns EV_EFORMAT.
 */
static ev_status lex_fail(lex *lx, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static ev_status lex_fail(lex *lx, size_t at, const char *fmt, ...)
{
    char reason[400];
    size_t i, line = 1, col = 1;
    va_list ap;

    if (!lx->err)
        return EV_EFORMAT;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    for (i = 0; i < at && i < lx->n; i++) {
        if (lx->p[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return ev_err_set(lx->err, EV_EFORMAT, "offset %zu (line %zu, column %zu): %s", at, line, col, reason);
}

/* Describes byte c for a message ("NUL byte", "'x'", "byte 0xe9"), into d. */
static const char *describe_byte(unsigned char c, char d[16])
{
    if (c == 0)
        snprintf(d, 16, "NUL byte");
    else if (c >= 0x20 && c < 0x7f)
        snprintf(d, 16, "'%c'", c);
    else
        snprintf(d, 16, "byte 0x%02x", c);
    return d;
}

/* Fails at the current position with "unexpected <byte>, expected <what>"
 * (or "unexpected end of input"). */
static ev_status lex_unexpected(lex *lx, const char *what)
{
    char d[16];
    if (lx->pos >= lx->n)
        return lex_fail(lx, lx->pos, "unexpected end of input, expected %s", what);
    return lex_fail(lx, lx->pos, "unexpected %s, expected %s", describe_byte(lx->p[lx->pos], d), what);
}

/* Skips JSON whitespace (space, tab, LF, CR). */
static void lex_ws(lex *lx)
{
    while (lx->pos < lx->n) {
        unsigned char c = lx->p[lx->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        lx->pos++;
    }
}

/* Reads 4 hex digits at p (bounds checked by the caller); returns the value
 * or -1 when one is not a hex digit. */
static long hex4(const unsigned char *p)
{
    long v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        unsigned char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

/* Appends code point cp as UTF-8 to b (cp valid, not a surrogate). */
static ev_status put_utf8(ev_buf *b, unsigned long cp)
{
    unsigned char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (unsigned char)(0xc0 | cp >> 6);
        u[1] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (unsigned char)(0xe0 | cp >> 12);
        u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        u[2] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (unsigned char)(0xf0 | cp >> 18);
        u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
        u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        u[3] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    return ev_buf_append(b, u, n);
}

/*
 * Lexes a string starting at the opening quote.  When decode is non-NULL
 * the decoded bytes are appended to it.  Refuses control characters
 * (< 0x20, NUL included), bad escapes, "\u0000", lone surrogates and
 * invalid UTF-8.  EV_OK with pos after the closing quote; EV_EFORMAT or
 * EV_ENOMEM otherwise.
 */
static ev_status lex_string(lex *lx, ev_buf *decode)
{
    const unsigned char *p = lx->p;
    size_t start = lx->pos;
    char d[16];

    lx->pos++; /* the opening quote */
    for (;;) {
        unsigned char c;
        size_t run = lx->pos;

        /* Plain ASCII run. */
        while (lx->pos < lx->n && (c = p[lx->pos]) >= 0x20 && c < 0x80 && c != '"' && c != '\\')
            lx->pos++;
        if (decode && lx->pos > run && ev_buf_append(decode, p + run, lx->pos - run))
            return EV_ENOMEM;
        if (lx->pos >= lx->n)
            return lex_fail(lx, start, "unterminated string");
        c = p[lx->pos];
        if (c == '"') {
            lx->pos++;
            if (lx->pos - start - 2 > lx->max_string)
                return lex_fail(lx, start,
                                "a string of %zu bytes, more than the %zu a member's string may hold",
                                lx->pos - start - 2, lx->max_string);
            return EV_OK;
        }
        if (c < 0x20)
            return lex_fail(lx, lx->pos, "%s in string (control characters must be escaped)",
                            describe_byte(c, d));
        if (c >= 0x80) {
            size_t len = ev_utf8_seq_len(p + lx->pos, lx->n - lx->pos);
            if (!len)
                return lex_fail(lx, lx->pos, "invalid UTF-8 in string (%s)", describe_byte(c, d));
            if (decode && ev_buf_append(decode, p + lx->pos, len))
                return EV_ENOMEM;
            lx->pos += len;
            continue;
        }
        /* c == '\\' */
        if (lx->pos + 1 >= lx->n)
            return lex_fail(lx, start, "unterminated string");
        c = p[lx->pos + 1];
        if (c == 'u') {
            size_t esc = lx->pos;
            long cp, lo;
            if (lx->n - lx->pos < 6 || (cp = hex4(p + lx->pos + 2)) < 0)
                return lex_fail(lx, esc, "\\u needs four hex digits");
            lx->pos += 6;
            if (cp == 0)
                return lex_fail(lx, esc, "\\u0000 is not allowed");
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return lex_fail(lx, esc, "lone low surrogate \\u%04lx", cp);
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (lx->n - lx->pos < 6 || p[lx->pos] != '\\' || p[lx->pos + 1] != 'u' ||
                    (lo = hex4(p + lx->pos + 2)) < 0xdc00 || lo > 0xdfff)
                    return lex_fail(lx, esc, "lone high surrogate \\u%04lx", cp);
                lx->pos += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (decode && put_utf8(decode, (unsigned long)cp))
                return EV_ENOMEM;
            continue;
        }
        {
            char out;
            switch (c) {
            case '"':
                out = '"';
                break;
            case '\\':
                out = '\\';
                break;
            case '/':
                out = '/';
                break;
            case 'b':
                out = '\b';
                break;
            case 'f':
                out = '\f';
                break;
            case 'n':
                out = '\n';
                break;
            case 'r':
                out = '\r';
                break;
            case 't':
                out = '\t';
                break;
            default:
                return lex_fail(lx, lx->pos, "invalid escape \\%s", describe_byte(c, d));
            }
            if (decode && ev_buf_append(decode, &out, 1))
                return EV_ENOMEM;
            lx->pos += 2;
        }
    }
}

/* Lexes a number token at pos (checked by number_check). */
static ev_status lex_number(lex *lx)
{
    size_t start = lx->pos, bad_at;
    ev_err why;
    double v;

    while (lx->pos < lx->n) {
        unsigned char c = lx->p[lx->pos];
        if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'))
            break;
        lx->pos++;
    }
    if (number_check((const char *)lx->p + start, lx->pos - start, lx->flags, &v, &bad_at, &why))
        return lex_fail(lx, start + bad_at, "%s", why.msg);
    return EV_OK;
}

/* Lexes the literal word (true, false, null) expected at pos. */
static ev_status lex_literal(lex *lx, const char *word)
{
    size_t len = strlen(word);
    if (lx->n - lx->pos < len || memcmp(lx->p + lx->pos, word, len) != 0)
        return lex_fail(lx, lx->pos, "invalid literal (expected %s)", word);
    lx->pos += len;
    return EV_OK;
}

/* qsort_r order on keyrefs: by decoded bytes, then by document offset. */
static int keyref_cmp(const void *a, const void *b, void *arg)
{
    const keyref *x = a, *y = b;
    const char *base = arg;
    size_t m = x->len < y->len ? x->len : y->len;
    int c = memcmp(base + x->off, base + y->off, m);
    if (c)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Writes a printable rendering of key bytes k[0..n) into out[size]
 * (non-printable bytes as \xNN, truncated with "..."). */
static void render_key(const char *k, size_t n, char *out, size_t size)
{
    size_t i, o = 0;
    for (i = 0; i < n && o + 8 < size; i++) {
        unsigned char c = (unsigned char)k[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
    }
    if (i < n && o + 4 <= size) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/*
 * Checks the keys pushed since stack mark `first` for duplicates and pops
 * them.  A duplicate is reported at its later occurrence (the earliest such
 * one in the document).
 */
static ev_status check_keys(lex *lx, size_t first, size_t scratch_mark)
{
    keyref *k = lx->keys + first;
    size_t n = lx->nkeys - first, i, bad = SIZE_MAX, bad_i = 0;
    /* When every key so far was empty the scratch buffer was never
     * allocated: compare against a real (empty) string, never NULL. */
    char *base = lx->scratch.data ? lx->scratch.data : (char *)"";

    if (n > 1) {
        qsort_r(k, n, sizeof *k, keyref_cmp, base);
        for (i = 1; i < n; i++)
            if (k[i].len == k[i - 1].len && memcmp(base + k[i].off, base + k[i - 1].off, k[i].len) == 0 &&
                k[i].at < bad) {
                bad = k[i].at;
                bad_i = i;
            }
    }
    if (bad != SIZE_MAX) {
        char shown[120];
        render_key(base + k[bad_i].off, k[bad_i].len, shown, sizeof shown);
        return lex_fail(lx, bad, "duplicate key \"%s\"", shown);
    }
    lx->nkeys = first;
    lx->scratch.len = scratch_mark;
    if (lx->scratch.data)
        lx->scratch.data[scratch_mark] = '\0';
    return EV_OK;
}

static ev_status lex_value(lex *lx, int depth);

/* Lexes an object at '{' (depth already counts it). */
static ev_status lex_object(lex *lx, int depth)
{
    size_t first = lx->nkeys, mark = lx->scratch.len;
    ev_status rc;

    lx->pos++;
    lex_ws(lx);
    if (lx->pos < lx->n && lx->p[lx->pos] == '}') {
        lx->pos++;
        return EV_OK;
    }
    for (;;) {
        keyref ref;
        if (lx->pos >= lx->n || lx->p[lx->pos] != '"')
            return lex_unexpected(lx, "a string key");
        ref.at = lx->pos;
        ref.off = lx->scratch.len;
        rc = lex_string(lx, &lx->scratch);
        if (rc)
            return rc;
        ref.len = lx->scratch.len - ref.off;
        if (lx->nkeys == lx->capkeys) {
            size_t cap = lx->capkeys ? lx->capkeys * 2 : 64, bytes;
            keyref *nk;
            if (ev_size_mul(cap, sizeof *nk, &bytes))
                return EV_ENOMEM;
            nk = realloc(lx->keys, bytes);
            if (!nk)
                return EV_ENOMEM;
            lx->keys = nk;
            lx->capkeys = cap;
        }
        lx->keys[lx->nkeys++] = ref;
        lex_ws(lx);
        if (lx->pos >= lx->n || lx->p[lx->pos] != ':')
            return lex_unexpected(lx, "':'");
        lx->pos++;
        rc = lex_value(lx, depth);
        if (rc)
            return rc;
        lex_ws(lx);
        if (lx->pos < lx->n && lx->p[lx->pos] == ',') {
            lx->pos++;
            lex_ws(lx);
            continue;
        }
        if (lx->pos < lx->n && lx->p[lx->pos] == '}') {
            lx->pos++;
            return check_keys(lx, first, mark);
        }
        return lex_unexpected(lx, "',' or '}'");
    }
}

/* Lexes an array at '[' (depth already counts it). */
static ev_status lex_array(lex *lx, int depth)
{
    ev_status rc;

    lx->pos++;
    lex_ws(lx);
    if (lx->pos < lx->n && lx->p[lx->pos] == ']') {
        lx->pos++;
        return EV_OK;
    }
    for (;;) {
        rc = lex_value(lx, depth);
        if (rc)
            return rc;
        lex_ws(lx);
        if (lx->pos < lx->n && lx->p[lx->pos] == ',') {
            lx->pos++;
            continue;
        }
        if (lx->pos < lx->n && lx->p[lx->pos] == ']') {
            lx->pos++;
            return EV_OK;
        }
        return lex_unexpected(lx, "',' or ']'");
    }
}

/* Lexes one value (after optional whitespace) at nesting depth `depth`
 * (the number of arrays/objects around it). */
static ev_status lex_value(lex *lx, int depth)
{
    unsigned char c;

    lex_ws(lx);
    if (lx->pos >= lx->n)
        return lex_unexpected(lx, "a value");
    if (++lx->nodes > lx->max_nodes)
        return lex_fail(lx, lx->pos,
                        "more than %zu values: more than a member of %zu bytes may hold (a tree of this "
                        "document would cost memory out of proportion to its size)",
                        lx->max_nodes, lx->n);
    c = lx->p[lx->pos];
    switch (c) {
    case '{':
    case '[':
        if (depth + 1 > EV_JSON_MAX_DEPTH)
            return lex_fail(lx, lx->pos, "nesting deeper than %d", EV_JSON_MAX_DEPTH);
        return c == '{' ? lex_object(lx, depth + 1) : lex_array(lx, depth + 1);
    case '"':
        return lex_string(lx, NULL);
    case 't':
        return lex_literal(lx, "true");
    case 'f':
        return lex_literal(lx, "false");
    case 'n':
        return lex_literal(lx, "null");
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return lex_number(lx);
        return lex_unexpected(lx, "a value");
    }
}

/* No bounds: text evident wrote itself. */
static const ev_json_bounds unbounded = {SIZE_MAX, SIZE_MAX, 0};

ev_status ev_json_check(const char *p, size_t n, unsigned flags, ev_err *err)
{
    return ev_json_check_bounded(p, n, flags, &unbounded, NULL, err);
}

ev_status ev_json_check_bounded(const char *p, size_t n, unsigned flags, const ev_json_bounds *b,
                                size_t *nodes, ev_err *err)
{
    lex lx;
    ev_status rc;
    char d[16];

    memset(&lx, 0, sizeof lx);
    lx.p = (const unsigned char *)p;
    lx.n = n;
    lx.max_nodes = b->max_nodes;
    lx.max_string = b->max_string;
    lx.flags = flags;
    lx.err = err;
    rc = lex_value(&lx, 0);
    if (rc == EV_ENOMEM)
        ev_err_set(err, rc, "out of memory while checking JSON");
    if (rc)
        goto out;
    lex_ws(&lx);
    if (lx.pos < n)
        rc = lex_fail(&lx, lx.pos, "trailing bytes after the value (%s)", describe_byte(lx.p[lx.pos], d));
out:
    if (!rc && nodes)
        *nodes = lx.nodes;
    ev_buf_free(&lx.scratch);
    free(lx.keys);
    return rc;
}

ev_status ev_json_parse(const char *p, size_t n, unsigned flags, cJSON **out, ev_err *err)
{
    return ev_json_parse_bounded(p, n, flags, &unbounded, NULL, out, err);
}

ev_status ev_json_parse_bounded(const char *p, size_t n, unsigned flags, const ev_json_bounds *b,
                                size_t *nodes, cJSON **out, ev_err *err)
{
    ev_status rc;
    char *copy = NULL;
    size_t size, counted = 0;
    cJSON *tree = NULL;

    rc = ev_json_check_bounded(p, n, flags, b, &counted, err);
    if (rc)
        return rc;
    if (nodes)
        *nodes = counted;
    if (b->nul_after && p[n] == '\0') {
        /* NUL-terminated already: no copy of a member's bytes */
        tree = cJSON_ParseWithLengthOpts(p, n + 1, NULL, 1);
        if (!tree)
            return ev_err_set(err, EV_ENOMEM,
                              "out of memory while parsing JSON (cJSON could not build the tree)");
        *out = tree;
        return EV_OK;
    }
    /* cJSON gets a NUL-terminated copy (the caller's bytes need not be),
     * with the NUL counted in the length so that require_null_terminated
     * means "nothing but whitespace after the value". */
    if (ev_size_add(n, 1, &size) || !(copy = malloc(size)))
        return ev_err_set(err, EV_ENOMEM, "out of memory while parsing JSON");
    memcpy(copy, p, n);
    copy[n] = '\0';
    tree = cJSON_ParseWithLengthOpts(copy, size, NULL, 1);
    free(copy);
    /* The strict lexer accepted it, and nests no deeper than 64 (cJSON's
     * limit is 1000): cJSON can then fail only for want of memory, which
     * is a resource error, not a malformed document. */
    if (!tree)
        return ev_err_set(err, EV_ENOMEM,
                          "out of memory while parsing JSON (cJSON could not build the tree)");
    *out = tree;
    return EV_OK;
}

ev_status ev_json_parse_file(const char *path, unsigned flags, cJSON **out, ev_err *err)
{
    ev_buf b = EV_BUF_INIT;
    ev_status rc = ev_read_file(path, &b, err);
    if (rc)
        return rc;
    rc = ev_json_parse(b.data, b.len, flags, out, err);
    if (rc)
        ev_err_prefix(err, "%s", path);
    ev_buf_free(&b);
    return rc;
}

/* ---- reading helpers -------------------------------------------------- */

/* Names the JSON type of item for messages. */
static const char *type_name(const cJSON *item)
{
    if (cJSON_IsNull(item))
        return "null";
    if (cJSON_IsBool(item))
        return "a boolean";
    if (cJSON_IsNumber(item) || cJSON_IsRaw(item))
        return "a number";
    if (cJSON_IsString(item))
        return "a string";
    if (cJSON_IsArray(item))
        return "an array";
    if (cJSON_IsObject(item))
        return "an object";
    return "an unknown value";
}

/* Finds member key of obj.  OUT: *item.  EV_EFORMAT with err naming the key
 * when obj is not an object or the member is missing. */
static ev_status get_member(const cJSON *obj, const char *key, const cJSON **item, ev_err *err)
{
    const cJSON *it;
    if (!cJSON_IsObject(obj))
        return ev_err_set(err, EV_EFORMAT, "\"%s\": looked up in %s, not an object", key,
                          obj ? type_name(obj) : "nothing");
    it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it)
        return ev_err_set(err, EV_EFORMAT, "\"%s\": missing", key);
    *item = it;
    return EV_OK;
}

/* Reads the double held by a number item, or by a raw item built by
 * ev_json_add_double (its text re-read strictly).  EV_EFORMAT otherwise. */
static ev_status item_double(const cJSON *it, double *out)
{
    if (cJSON_IsNumber(it)) {
        if (!isfinite(it->valuedouble))
            return EV_EFORMAT;
        *out = it->valuedouble;
        return EV_OK;
    }
    if (cJSON_IsRaw(it) && it->valuestring)
        return ev_json_read_number(it->valuestring, strlen(it->valuestring), 0, out, NULL);
    return EV_EFORMAT;
}

ev_status ev_json_get_double(const cJSON *obj, const char *key, double *out, ev_err *err)
{
    const cJSON *it = NULL;
    ev_status rc = get_member(obj, key, &it, err);
    if (rc)
        return rc;
    if (item_double(it, out))
        return ev_err_set(err, EV_EFORMAT, "\"%s\": expected a number, found %s", key, type_name(it));
    return EV_OK;
}

/*
 * Parses a decimal integer string: -?(0|[1-9][0-9]*), no spaces, not "-0",
 * within int64.  Returns EV_OK with *out, EV_EFORMAT for bad text, EV_ERANGE
 * for overflow.
 */
static ev_status parse_i64_text(const char *s, int64_t *out)
{
    int neg = 0;
    uint64_t mag = 0, lim;
    const char *d = s;

    if (*d == '-') {
        neg = 1;
        d++;
    }
    if (*d < '0' || *d > '9')
        return EV_EFORMAT;
    if (*d == '0' && (d[1] != '\0' || neg))
        return EV_EFORMAT;
    lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *d; d++) {
        unsigned dig;
        if (*d < '0' || *d > '9')
            return EV_EFORMAT;
        dig = (unsigned)(*d - '0');
        if (mag > (lim - dig) / 10)
            return EV_ERANGE;
        mag = mag * 10 + dig;
    }
    if (neg)
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    else
        *out = (int64_t)mag;
    return EV_OK;
}

ev_status ev_json_get_i64(const cJSON *obj, const char *key, int64_t *out, ev_err *err)
{
    const cJSON *it = NULL;
    ev_status rc = get_member(obj, key, &it, err);
    double v;

    if (rc)
        return rc;
    if (cJSON_IsString(it) && it->valuestring) {
        rc = parse_i64_text(it->valuestring, out);
        if (rc == EV_ERANGE)
            return ev_err_set(err, EV_EFORMAT, "\"%s\": integer string \"%s\" is out of the int64 range", key,
                              it->valuestring);
        if (rc)
            return ev_err_set(err, rc, "\"%s\": string \"%.60s\" is not a decimal integer", key,
                              it->valuestring);
        return EV_OK;
    }
    if (item_double(it, &v))
        return ev_err_set(err, EV_EFORMAT, "\"%s\": expected an integer, found %s", key, type_name(it));
    if (v != floor(v))
        return ev_err_set(err, EV_EFORMAT, "\"%s\": expected an integer, found %.17g", key, v);
    if (v < -(double)EV_JSON_INT_MAX || v > (double)EV_JSON_INT_MAX)
        return ev_err_set(err, EV_EFORMAT, "\"%s\": number %.17g is beyond 2^53 (large integers are strings)",
                          key, v);
    *out = (int64_t)v;
    return EV_OK;
}

ev_status ev_json_get_str(const cJSON *obj, const char *key, const char **out, ev_err *err)
{
    const cJSON *it = NULL;
    ev_status rc = get_member(obj, key, &it, err);
    if (rc)
        return rc;
    if (!cJSON_IsString(it) || !it->valuestring)
        return ev_err_set(err, EV_EFORMAT, "\"%s\": expected a string, found %s", key, type_name(it));
    *out = it->valuestring;
    return EV_OK;
}

/* Finds key in obj and checks its type with is_type; OUT: *out.  The
 * error names the key, the expected kind (what) and what was found. */
static ev_status get_typed(const cJSON *obj, const char *key, cJSON_bool (*is_type)(const cJSON *),
                           const char *what, const cJSON **out, ev_err *err)
{
    const cJSON *it = NULL;
    ev_status rc = get_member(obj, key, &it, err);
    if (rc)
        return rc;
    if (!is_type(it))
        return ev_err_set(err, EV_EFORMAT, "\"%s\": expected %s, found %s", key, what, type_name(it));
    *out = it;
    return EV_OK;
}

/* See json.h. */
ev_status ev_json_get_bool(const cJSON *obj, const char *key, int *out, ev_err *err)
{
    const cJSON *it = NULL;
    ev_status rc = get_typed(obj, key, cJSON_IsBool, "a boolean", &it, err);
    if (rc)
        return rc;
    *out = cJSON_IsTrue(it) ? 1 : 0;
    return EV_OK;
}

/* See json.h. */
ev_status ev_json_get_object(const cJSON *obj, const char *key, const cJSON **out, ev_err *err)
{
    return get_typed(obj, key, cJSON_IsObject, "an object", out, err);
}

/* See json.h. */
ev_status ev_json_get_array(const cJSON *obj, const char *key, const cJSON **out, ev_err *err)
{
    return get_typed(obj, key, cJSON_IsArray, "an array", out, err);
}

/* See json.h. */
ev_status ev_json_canon_numbers(cJSON *tree)
{
    for (cJSON *it = tree ? tree->child : NULL; it;) {
        cJSON *next = it->next;
        if (cJSON_IsNumber(it)) {
            char t[32];
            if (ev_json_format_double(it->valuedouble, t))
                return EV_EFORMAT;
            cJSON *raw = cJSON_CreateRaw(t);
            if (!raw)
                return EV_ENOMEM;
            /* in an object the replacement takes over the key (replacing
             * by pointer, not by a lookup of the key: linear in a wide
             * object, quadratic over it) */
            if (it->string) {
                raw->string = it->string;
                it->string = NULL;
                raw->type |= it->type & cJSON_StringIsConst;
                it->type &= ~cJSON_StringIsConst;
            }
            if (!cJSON_ReplaceItemViaPointer(tree, it, raw)) {
                cJSON_Delete(raw);
                return EV_ENOMEM;
            }
        } else if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
            ev_status rc = ev_json_canon_numbers(it);
            if (rc)
                return rc;
        }
        it = next;
    }
    return EV_OK;
}
