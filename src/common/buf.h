/*
 * buf.h: a growable byte buffer (always NUL-terminated) used to build
 * JSON, CSV, HTML and zip members in memory before they are hashed.
 */
#ifndef EV_BUF_H
#define EV_BUF_H

#include <stddef.h>

#include "status.h"

typedef struct ev_buf {
    char *data; /* NUL-terminated; NULL until the first append */
    size_t len; /* bytes used, not counting the NUL */
    size_t cap; /* bytes allocated */
} ev_buf;

#define EV_BUF_INIT                                                                                          \
    {                                                                                                        \
        NULL, 0, 0                                                                                           \
    }

/* Appends n bytes; EV_ENOMEM (buffer unchanged) on failure. */
ev_status ev_buf_append(ev_buf *b, const void *p, size_t n);
/* Appends a NUL-terminated string. */
ev_status ev_buf_puts(ev_buf *b, const char *s);
/* Appends printf-formatted text (C locale is the caller's concern). */
ev_status ev_buf_printf(ev_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empties the buffer, keeping its storage. */
void ev_buf_reset(ev_buf *b);
/* Frees the storage; NULL-safe; leaves b as EV_BUF_INIT. */
void ev_buf_free(ev_buf *b);
/* Hands the storage to the caller (who frees it); b becomes empty. */
char *ev_buf_steal(ev_buf *b, size_t *len_out);

/* Reads a whole regular file into out, which must be empty (EV_BUF_INIT):
 * its old storage is not freed.  EV_EIO with err set on failure; a FIFO,
 * device or socket is refused at once (EV_EIO, "is a FIFO, not a regular
 * file"), without waiting for a writer or reading without end. */
ev_status ev_read_file(const char *path, ev_buf *out, ev_err *err);
/* As ev_read_file, but a file of more than max bytes is refused with
 * EV_ERANGE, having read at most max + a buffer. */
ev_status ev_read_file_max(const char *path, size_t max, ev_buf *out, ev_err *err);
/* Writes bytes to path atomically (temp file + fsync + rename). */
/* Reads up to n bytes of fd (path names it in the error), retrying a read
 * an interrupt cut short.  OUT: *got (0 at the end).  EV_EIO "<path>:
 * cannot read: <why>". */
ev_status ev_read_some(int fd, const char *path, void *p, size_t n, size_t *got, ev_err *err);
ev_status ev_write_file(const char *path, const void *p, size_t n, ev_err *err);

/* Memory for one large array or text of n bytes (n > 0), freed with
 * free(); NULL when out of memory.  From 4 MiB up it is aligned to 2 MiB
 * and advised to use transparent huge pages, so that filling it costs a
 * few hundred page faults rather than one per 4 KiB (a kernel without
 * them ignores the advice). */
void *ev_alloc_big(size_t n);

/*
 * The one growth rule of the project's arrays: makes room for element n
 * of the array *p of *cap elements of size bytes each (n <= *cap, the
 * elements in use): when it is full, doubles *cap (16 at first) with
 * checked sizes and reallocates.  Returns EV_OK, or EV_ENOMEM with *p and
 * *cap unchanged.
 */
ev_status ev_grow(void **p, size_t *cap, size_t n, size_t size);

/* Checked size arithmetic: return 0 and set *out, or 1 on overflow. */
int ev_size_mul(size_t a, size_t b, size_t *out);
int ev_size_add(size_t a, size_t b, size_t *out);

#endif
