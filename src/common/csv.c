/*
 * csv.c: strict CSV reading and writing (RFC 4180).
 *
 * The reader walks a memory buffer one record at a time.  A record ends at
 * LF or CRLF (or at the end of the input: a missing final newline is
 * accepted; the newline that ends the last record does not start an empty
 * one).  Quoted fields may hold commas, doubled quotes and line breaks; a
 * quote inside an unquoted field, a bare CR, a NUL byte, invalid UTF-8, a
 * blank line, a UTF-8 BOM and a wrong field count are refused.  Errors name
 * the 1-based physical line and the 1-based column (field number), and for
 * typed cells the header name.
 *
 * The writer quotes a field only when it holds ',', '"', CR or LF, and
 * ends records with LF.  Doubles use the exact %.17g text of json.h.
 */
#include "csv.h"
#include "utf8.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct ev_csv {
    const unsigned char *p;
    size_t n, pos;
    size_t line;     /* physical line at pos, 1-based */
    size_t rec_line; /* line where the current record starts */
    size_t ncols;    /* columns of every record (header included) */
    ev_buf hdr;      /* header names, each NUL-terminated */
    size_t *hdr_off; /* ncols offsets into hdr */
    ev_buf fb;       /* current record's fields, each NUL-terminated */
    size_t *off;     /* field offsets into fb */
    size_t *fline;   /* physical line where each field starts */
    size_t nf, capf; /* fields in the current record, capacity */
    int have_row;    /* 1 while a data record is current */
};

/* Starts a new field in the current record at the current line.  EV_OK or
 * EV_ENOMEM. */
static ev_status field_begin(ev_csv *c)
{
    if (c->nf == c->capf) {
        size_t cap = c->capf ? c->capf * 2 : 16, bytes;
        size_t *o, *l;
        if (ev_size_mul(cap, sizeof *o, &bytes))
            return EV_ENOMEM;
        o = realloc(c->off, bytes);
        if (!o)
            return EV_ENOMEM;
        c->off = o;
        l = realloc(c->fline, bytes);
        if (!l)
            return EV_ENOMEM;
        c->fline = l;
        c->capf = cap;
    }
    c->off[c->nf] = c->fb.len;
    c->fline[c->nf] = c->line;
    c->nf++;
    return EV_OK;
}

/*
 * Parses the record at pos into fb/off/fline/nf, consuming its line end.
 * EV_OK; EV_EFORMAT with err "line L, column C: reason"; EV_ENOMEM.
 * The caller has checked pos < n.
 */
static ev_status parse_record(ev_csv *c, ev_err *err)
{
    const unsigned char *p = c->p;
    size_t n = c->n;
    ev_status rc;

    c->nf = 0;
    ev_buf_reset(&c->fb);
    c->rec_line = c->line;
    if (p[c->pos] == '\n' || (p[c->pos] == '\r' && c->pos + 1 < n && p[c->pos + 1] == '\n'))
        return ev_err_set(err, EV_EFORMAT, "line %zu: blank line", c->line);
    for (;;) {
        int record_done = 0; /* 1: at the end of the input, 2: after a line end */
        size_t col;

        rc = field_begin(c);
        if (rc)
            return rc;
        col = c->nf;
        if (c->pos < n && p[c->pos] == '"') {
            size_t qline = c->line;
            c->pos++;
            for (;;) {
                unsigned char ch;
                if (c->pos >= n)
                    return ev_err_set(err, EV_EFORMAT, "line %zu, column %zu: unterminated quoted field",
                                      qline, col);
                ch = p[c->pos];
                if (ch == '"') {
                    if (c->pos + 1 < n && p[c->pos + 1] == '"') {
                        if (ev_buf_append(&c->fb, "\"", 1))
                            return EV_ENOMEM;
                        c->pos += 2;
                        continue;
                    }
                    c->pos++;
                    break;
                }
                if (ch == 0)
                    return ev_err_set(err, EV_EFORMAT, "line %zu, column %zu: NUL byte", c->line, col);
                if (ch >= 0x80) {
                    size_t len = ev_utf8_seq_len(p + c->pos, n - c->pos);
                    if (!len)
                        return ev_err_set(err, EV_EFORMAT,
                                          "line %zu, column %zu: invalid UTF-8 (byte 0x%02x)", c->line, col,
                                          ch);
                    if (ev_buf_append(&c->fb, p + c->pos, len))
                        return EV_ENOMEM;
                    c->pos += len;
                    continue;
                }
                if (ch == '\n')
                    c->line++;
                if (ev_buf_append(&c->fb, &ch, 1))
                    return EV_ENOMEM;
                c->pos++;
            }
            /* After the closing quote: ',' or a line end or the end. */
            if (c->pos >= n) {
                record_done = 1;
            } else if (p[c->pos] == ',') {
                c->pos++;
            } else if (p[c->pos] == '\n') {
                c->pos++;
                record_done = 2;
            } else if (p[c->pos] == '\r' && c->pos + 1 < n && p[c->pos + 1] == '\n') {
                c->pos += 2;
                record_done = 2;
            } else {
                return ev_err_set(err, EV_EFORMAT,
                                  "line %zu, column %zu: unexpected character after a closing "
                                  "quote",
                                  c->line, col);
            }
        } else {
            size_t run = c->pos;
            for (;;) {
                unsigned char ch;
                if (c->pos >= n) {
                    record_done = 1;
                    break;
                }
                ch = p[c->pos];
                if (ch == ',' || ch == '\n' || ch == '\r')
                    break;
                if (ch == '"')
                    return ev_err_set(err, EV_EFORMAT,
                                      "line %zu, column %zu: stray quote in an unquoted field", c->line, col);
                if (ch == 0)
                    return ev_err_set(err, EV_EFORMAT, "line %zu, column %zu: NUL byte", c->line, col);
                if (ch >= 0x80) {
                    size_t len = ev_utf8_seq_len(p + c->pos, n - c->pos);
                    if (!len)
                        return ev_err_set(err, EV_EFORMAT,
                                          "line %zu, column %zu: invalid UTF-8 (byte 0x%02x)", c->line, col,
                                          ch);
                    c->pos += len;
                    continue;
                }
                c->pos++;
            }
            if (ev_buf_append(&c->fb, p + run, c->pos - run))
                return EV_ENOMEM;
            if (!record_done) {
                unsigned char ch = p[c->pos];
                if (ch == ',') {
                    c->pos++;
                } else if (ch == '\n') {
                    c->pos++;
                    record_done = 2;
                } else if (c->pos + 1 < n && p[c->pos + 1] == '\n') { /* "\r\n" */
                    c->pos += 2;
                    record_done = 2;
                } else {
                    return ev_err_set(err, EV_EFORMAT, "line %zu, column %zu: CR not followed by LF", c->line,
                                      col);
                }
            }
        }
        if (ev_buf_append(&c->fb, "", 1)) /* the field's NUL */
            return EV_ENOMEM;
        if (record_done) {
            if (record_done == 2)
                c->line++;
            return EV_OK;
        }
    }
}

ev_status ev_csv_open(const char *p, size_t n, const char *const *header, size_t ncols,
                      const char *optional_last, ev_csv **out, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_csv *c = NULL;
    size_t i, bytes, want = ncols;

    if (ncols == 0 || !header || (n > 0 && !p))
        return ev_err_set(err, EV_EINVAL, "csv: no header given");
    c = calloc(1, sizeof *c);
    if (!c)
        return ev_err_set(err, EV_ENOMEM, "csv: out of memory");
    c->p = (const unsigned char *)p;
    c->n = n;
    c->line = 1;
    if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
        rc = ev_err_set(err, EV_EFORMAT, "line 1: a UTF-8 byte-order mark is not allowed");
        goto out;
    }
    if (n == 0) {
        rc = ev_err_set(err, EV_EFORMAT, "line 1: empty input, expected a header");
        goto out;
    }
    rc = parse_record(c, err);
    if (rc == EV_ENOMEM)
        ev_err_set(err, rc, "csv: out of memory");
    if (rc)
        goto out;
    if (optional_last && c->nf == ncols + 1 && strcmp(c->fb.data + c->off[ncols], optional_last) == 0)
        want = ncols + 1;
    for (i = 0; i < ncols && i < c->nf && strcmp(c->fb.data + c->off[i], header[i]) == 0; i++)
        ;
    if (c->nf != want || i < ncols) {
        ev_buf got = EV_BUF_INIT, exp = EV_BUF_INIT;
        for (i = 0; i < c->nf; i++)
            ev_buf_printf(&got, "%s%s", i ? "," : "", c->fb.data + c->off[i]);
        for (i = 0; i < ncols; i++)
            ev_buf_printf(&exp, "%s%s", i ? "," : "", header[i]);
        if (optional_last)
            ev_buf_printf(&exp, "[,%s]", optional_last);
        rc = ev_err_set(err, EV_EFORMAT, "line 1: header is \"%.200s\", expected \"%.200s\"",
                        got.data ? got.data : "", exp.data ? exp.data : "");
        ev_buf_free(&got);
        ev_buf_free(&exp);
        goto out;
    }
    c->ncols = want;
    if (ev_size_mul(want, sizeof *c->hdr_off, &bytes) || !(c->hdr_off = malloc(bytes)) ||
        ev_buf_append(&c->hdr, c->fb.data, c->fb.len)) {
        rc = ev_err_set(err, EV_ENOMEM, "csv: out of memory");
        goto out;
    }
    memcpy(c->hdr_off, c->off, bytes);
    *out = c;
    c = NULL;
out:
    ev_csv_close(c);
    return rc;
}

void ev_csv_close(ev_csv *c)
{
    if (!c)
        return;
    ev_buf_free(&c->hdr);
    ev_buf_free(&c->fb);
    free(c->hdr_off);
    free(c->off);
    free(c->fline);
    free(c);
}

size_t ev_csv_ncols(const ev_csv *c)
{
    return c->ncols;
}

const char *ev_csv_header(const ev_csv *c, size_t col)
{
    if (col >= c->ncols)
        return NULL;
    return c->hdr.data + c->hdr_off[col];
}

ev_status ev_csv_next(ev_csv *c, int *have_row, ev_err *err)
{
    ev_status rc;

    c->have_row = 0;
    if (c->pos >= c->n) {
        *have_row = 0;
        return EV_OK;
    }
    rc = parse_record(c, err);
    if (rc == EV_ENOMEM)
        return ev_err_set(err, rc, "line %zu: out of memory", c->rec_line);
    if (rc)
        return rc;
    if (c->nf != c->ncols)
        return ev_err_set(err, EV_EFORMAT, "line %zu: %zu fields, expected %zu", c->rec_line, c->nf,
                          c->ncols);
    c->have_row = 1;
    *have_row = 1;
    return EV_OK;
}

size_t ev_csv_line(const ev_csv *c)
{
    return c->rec_line;
}

size_t ev_csv_pos(const ev_csv *c)
{
    return c->pos;
}

ev_status ev_csv_seek(ev_csv *c, size_t pos, size_t line)
{
    if (pos > c->n || line == 0)
        return EV_EINVAL;
    c->pos = pos;
    c->line = line;
    c->have_row = 0;
    return EV_OK;
}

const char *ev_csv_field(const ev_csv *c, size_t col)
{
    if (!c->have_row || col >= c->nf)
        return NULL;
    return c->fb.data + c->off[col];
}

/* Fails for cell col with "line L, column C (name): reason" (EV_EFORMAT). */
static ev_status cell_error(const ev_csv *c, size_t col, ev_err *err, const char *reason)
{
    return ev_err_set(err, EV_EFORMAT, "line %zu, column %zu (%s): %s", c->fline[col], col + 1,
                      c->hdr.data + c->hdr_off[col], reason);
}

ev_status ev_csv_get_i64(const ev_csv *c, size_t col, int64_t *out, ev_err *err)
{
    const char *s = ev_csv_field(c, col), *d;
    char why[200];
    uint64_t mag = 0, lim;
    int neg = 0;

    if (!s)
        return ev_err_set(err, EV_EINVAL, "line %zu: no column %zu", c->rec_line, col + 1);
    d = s;
    if (*d == '-') {
        neg = 1;
        d++;
    }
    if (*d < '0' || *d > '9' || (*d == '0' && (d[1] != '\0' || neg)))
        goto bad;
    lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *d; d++) {
        unsigned dig;
        if (*d < '0' || *d > '9')
            goto bad;
        dig = (unsigned)(*d - '0');
        if (mag > (lim - dig) / 10) {
            snprintf(why, sizeof why, "integer \"%.60s\" is out of the int64 range", s);
            return cell_error(c, col, err, why);
        }
        mag = mag * 10 + dig;
    }
    if (neg)
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    else
        *out = (int64_t)mag;
    return EV_OK;
bad:
    snprintf(why, sizeof why, "\"%.60s\" is not a decimal integer", s);
    return cell_error(c, col, err, why);
}

ev_status ev_csv_get_double(const ev_csv *c, size_t col, double *out, ev_err *err)
{
    const char *s = ev_csv_field(c, col);
    char why[300];
    ev_err sub;
    double v;

    if (!s)
        return ev_err_set(err, EV_EINVAL, "line %zu: no column %zu", c->rec_line, col + 1);
    if (ev_json_read_number(s, strlen(s), 0, &v, &sub)) {
        snprintf(why, sizeof why, "\"%.60s\" is not a finite decimal number: %.200s", s, sub.msg);
        return cell_error(c, col, err, why);
    }
    *out = v;
    return EV_OK;
}

/* ---- writer ----------------------------------------------------------- */

/* Appends ',' or, when last, '\n'. */
static ev_status put_sep(ev_buf *b, int last)
{
    return ev_buf_append(b, last ? "\n" : ",", 1);
}

ev_status ev_csv_put(ev_buf *b, const char *field, int last)
{
    size_t len, i, mark = b->len;
    ev_status rc = EV_OK;

    if (!field)
        return EV_EINVAL;
    len = strlen(field);
    if (!ev_utf8_valid((const unsigned char *)field, len))
        return EV_EINVAL;
    if (strcspn(field, ",\"\r\n") == len) {
        rc = ev_buf_append(b, field, len);
    } else {
        rc = ev_buf_append(b, "\"", 1);
        for (i = 0; !rc && i < len; i++)
            rc = field[i] == '"' ? ev_buf_append(b, "\"\"", 2) : ev_buf_append(b, field + i, 1);
        if (!rc)
            rc = ev_buf_append(b, "\"", 1);
    }
    if (!rc)
        rc = put_sep(b, last);
    if (rc) {
        b->len = mark;
        if (b->data)
            b->data[mark] = '\0';
    }
    return rc;
}

ev_status ev_csv_put_double(ev_buf *b, double v, int last)
{
    char text[32];
    ev_status rc = ev_json_format_double(v, text);
    if (rc)
        return rc;
    return ev_csv_put(b, text, last);
}

ev_status ev_csv_put_i64(ev_buf *b, int64_t v, int last)
{
    char text[32];
    snprintf(text, sizeof text, "%" PRId64, v);
    return ev_csv_put(b, text, last);
}
