/*
 * csv.h: strict CSV reading and writing (RFC 4180 quoting, LF or CRLF line
 * ends on input, LF on output).  The reader checks the header exactly,
 * a fixed column count, UTF-8 only, no NUL, and gives typed cells whose
 * errors name the line and column (1-based).
 *
 * Reader rules: a record ends at LF or CRLF or the end of the input (a
 * missing final newline is accepted; the final newline does not start an
 * empty record).  Refused: a blank line anywhere, a bare CR outside quotes,
 * a quote inside an unquoted field, anything but ',' or a line end after a
 * closing quote, an unterminated quoted field, NUL bytes, invalid UTF-8, a
 * UTF-8 byte-order mark.  Messages read "line L, column C: reason" (L the
 * physical line, C the 1-based field number), "line L, column C (name):
 * reason" for typed cells, "line L: reason" for whole records.
 */
#ifndef EV_CSV_H
#define EV_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "status.h"

typedef struct ev_csv ev_csv; /* opaque reader over a memory buffer */

/*
 * Opens a reader over p[0..n) (not copied: p must outlive the reader).
 * The first record must equal `header` (ncols names) exactly; when
 * `optional_last` is non-NULL, a header of ncols+1 names ending in it is
 * also accepted and ev_csv_ncols() says which.  OUT: *out.
 */
ev_status ev_csv_open(const char *p, size_t n, const char *const *header, size_t ncols,
                      const char *optional_last, ev_csv **out, ev_err *err);
void ev_csv_close(ev_csv *c); /* NULL-safe */
size_t ev_csv_ncols(const ev_csv *c);
/* Header name of column col (0-based), or NULL beyond ev_csv_ncols(). */
const char *ev_csv_header(const ev_csv *c, size_t col);

/* Advances to the next record.  Returns EV_OK with *have_row = 1 and the
 * fields available, or *have_row = 0 at end; EV_EFORMAT (err names line and
 * column) on a bad record (wrong column count, bad quoting, NUL, bad UTF-8). */
ev_status ev_csv_next(ev_csv *c, int *have_row, ev_err *err);
/* 1-based line number of the current record. */
size_t ev_csv_line(const ev_csv *c);
/* Byte offset in the input where the next record starts (after the
 * current one's line end). */
size_t ev_csv_pos(const ev_csv *c);
/* Moves the reader to byte offset pos (<= the input length), which the
 * caller knows to start a record (a reader of text without quotes may skip
 * records it has checked itself), calling the physical line there `line`
 * in messages.  The current record, if any, is dropped.  EV_EINVAL when
 * pos is beyond the input or line is 0. */
ev_status ev_csv_seek(ev_csv *c, size_t pos, size_t line);

/* Field col (0-based) of the current record, unquoted, NUL-terminated,
 * valid until the next ev_csv_next; NULL when there is no current record
 * or col is beyond the columns. */
const char *ev_csv_field(const ev_csv *c, size_t col);
/* Typed fields: the whole cell must parse; errors (EV_EFORMAT) name line,
 * column and header name.  OUT written only on success.
 * i64: -?(0|[1-9][0-9]*), not "-0", within int64 (overflow refused).
 * double: JSON number syntax (json.h ev_json_read_number): no spaces, '+',
 *   hex, inf or nan; finite. */
ev_status ev_csv_get_i64(const ev_csv *c, size_t col, int64_t *out, ev_err *err);
ev_status ev_csv_get_double(const ev_csv *c, size_t col, double *out, ev_err *err);

/* Writer: appends one field (quoted when it holds , " CR or LF; quotes
 * doubled), followed by ',' or, when last != 0, by '\n'.  EV_EINVAL (b
 * unchanged) for a NULL field or invalid UTF-8, which the reader would
 * refuse. */
ev_status ev_csv_put(ev_buf *b, const char *field, int last);
/* Appends an exact double (%.17g round-trip text, as in json.h) field;
 * EV_ERANGE (nothing written) for NaN/Inf. */
ev_status ev_csv_put_double(ev_buf *b, double v, int last);
ev_status ev_csv_put_i64(ev_buf *b, int64_t v, int last);

#endif
