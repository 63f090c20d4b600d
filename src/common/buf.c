/*
 * buf.c: the growable NUL-terminated byte buffer, whole-file reading and
 * atomic whole-file writing, and checked size arithmetic.
 *
 * Every size computation goes through ev_size_add/ev_size_mul, so a huge
 * request fails with EV_ENOMEM instead of wrapping around.  ev_write_file
 * never leaves a half-written file under the final name: it writes a temp
 * file in the same directory, fsyncs it, renames it over the target and
 * fsyncs the directory.
 */
#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void *ev_alloc_big(size_t n)
{
    const size_t huge = (size_t)2 << 20;
    if (n < 2 * huge)
        return malloc(n);
    if (n > SIZE_MAX - huge)
        return NULL;
    size_t rounded = (n + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, rounded);
#ifdef MADV_HUGEPAGE
    if (p)
        (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
}

/* Returns 0 and sets *out = a * b, or 1 (out untouched) on overflow. */
int ev_size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 1;
    *out = a * b;
    return 0;
}

/* Returns 0 and sets *out = a + b, or 1 (out untouched) on overflow. */
int ev_size_add(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a)
        return 1;
    *out = a + b;
    return 0;
}

/*
 * Makes room for `extra` more bytes plus the NUL.  Returns EV_OK, or
 * EV_ENOMEM with b unchanged.  After success b->data is non-NULL and
 * NUL-terminated at b->len.
 */
static ev_status buf_reserve(ev_buf *b, size_t extra)
{
    size_t need, cap;
    char *p;

    if (ev_size_add(b->len, extra, &need) || ev_size_add(need, 1, &need))
        return EV_ENOMEM;
    if (b->data && need <= b->cap)
        return EV_OK;
    cap = b->cap < 64 ? 64 : b->cap;
    while (cap < need) {
        if (ev_size_mul(cap, 2, &cap)) {
            cap = need;
            break;
        }
    }
    p = realloc(b->data, cap);
    if (!p)
        return EV_ENOMEM;
    if (!b->data)
        p[0] = '\0';
    b->data = p;
    b->cap = cap;
    return EV_OK;
}

ev_status ev_grow(void **p, size_t *cap, size_t n, size_t size)
{
    size_t nc, bytes;
    void *q;

    if (n < *cap)
        return EV_OK;
    nc = 16;
    if ((*cap && ev_size_mul(*cap, 2, &nc)) || ev_size_mul(nc, size, &bytes))
        return EV_ENOMEM;
    q = realloc(*p, bytes);
    if (!q)
        return EV_ENOMEM;
    *p = q;
    *cap = nc;
    return EV_OK;
}

/* Appends n bytes of p; EV_ENOMEM leaves b unchanged. */
ev_status ev_buf_append(ev_buf *b, const void *p, size_t n)
{
    ev_status rc = buf_reserve(b, n);
    if (rc)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return EV_OK;
}

/* Appends the NUL-terminated string s (without its NUL). */
ev_status ev_buf_puts(ev_buf *b, const char *s)
{
    return ev_buf_append(b, s, strlen(s));
}

/* Appends vsnprintf-formatted text; EV_ENOMEM (or EV_EINVAL for a format
 * error) leaves b's contents unchanged. */
ev_status ev_buf_printf(ev_buf *b, const char *fmt, ...)
{
    ev_status rc = EV_OK;
    va_list ap, ap2;
    int n;

    va_start(ap, fmt);
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0) {
        rc = EV_EINVAL;
        goto out;
    }
    rc = buf_reserve(b, (size_t)n);
    if (rc)
        goto out;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
    b->len += (size_t)n;
out:
    va_end(ap2);
    va_end(ap);
    return rc;
}

/* Sets the length to 0 (keeping storage; data stays NUL-terminated). */
void ev_buf_reset(ev_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* Frees the storage; NULL-safe; b becomes EV_BUF_INIT. */
void ev_buf_free(ev_buf *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

/*
 * Returns the NUL-terminated storage (caller frees) and its length in
 * *len_out (when non-NULL); b becomes EV_BUF_INIT.  A never-appended buffer
 * yields a newly allocated "" (NULL only when that allocation fails, with b
 * unchanged).
 */
char *ev_buf_steal(ev_buf *b, size_t *len_out)
{
    char *p;

    if (!b->data && buf_reserve(b, 0))
        return NULL;
    p = b->data;
    if (len_out)
        *len_out = b->len;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}

/* See buf.h. */
ev_status ev_read_some(int fd, const char *path, void *p, size_t n, size_t *got, ev_err *err)
{
    for (;;) {
        ssize_t r = read(fd, p, n);
        if (r >= 0) {
            *got = (size_t)r;
            return EV_OK;
        }
        if (errno != EINTR)
            return ev_err_set(err, EV_EIO, "%s: cannot read: %s", path, strerror(errno));
    }
}

/*
 * Reads the whole file at path.  OUT: *out is overwritten (its previous
 * storage is not freed: pass an empty buffer) with the bytes, NUL-terminated,
 * data non-NULL even for an empty file.  On failure *out is untouched and err
 * says "path: reason" (EV_EIO, or EV_ENOMEM).
 */
ev_status ev_read_file(const char *path, ev_buf *out, ev_err *err)
{
    return ev_read_file_max(path, SIZE_MAX - 1, out, err);
}

ev_status ev_read_file_max(const char *path, size_t max, ev_buf *out, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_buf b = EV_BUF_INIT;
    int fd = -1;
    struct stat st;

    /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is then
     * refused below, as every file that is not a regular one). */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        rc = ev_err_set(err, EV_EIO, "%s: cannot open: %s", path, strerror(errno));
        goto out;
    }
    if (fstat(fd, &st) != 0) {
        rc = ev_err_set(err, EV_EIO, "%s: cannot stat: %s", path, strerror(errno));
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = ev_err_set(err, EV_EIO, "%s: cannot read: %s", path, strerror(EISDIR));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = ev_err_set(err, EV_EIO, "%s: is a %s, not a regular file: give a file", path,
                        S_ISFIFO(st.st_mode)   ? "FIFO"
                        : S_ISCHR(st.st_mode)  ? "character device"
                        : S_ISBLK(st.st_mode)  ? "block device"
                        : S_ISSOCK(st.st_mode) ? "socket"
                                               : "special file");
        goto out;
    }
    if ((uintmax_t)st.st_size > max) {
        rc = ev_err_set(err, EV_ERANGE, "%s: %jd bytes, more than the %zu this file may hold", path,
                        (intmax_t)st.st_size, max);
        goto out;
    }
    if (buf_reserve(&b, st.st_size > 0 ? (size_t)st.st_size : 4096)) {
        rc = ev_err_set(err, EV_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    for (;;) {
        size_t got;
        if (b.cap - b.len - 1 == 0 && buf_reserve(&b, b.cap)) {
            rc = ev_err_set(err, EV_ENOMEM, "%s: out of memory", path);
            goto out;
        }
        if ((rc = ev_read_some(fd, path, b.data + b.len, b.cap - b.len - 1, &got, err)))
            goto out;
        if (got == 0)
            break;
        b.len += got;
        if (b.len > max) { /* a file that grew while it was read */
            rc = ev_err_set(err, EV_ERANGE, "%s: more than the %zu bytes this file may hold", path, max);
            goto out;
        }
    }
    b.data[b.len] = '\0';
    *out = b;
    b.data = NULL;
out:
    if (fd >= 0)
        close(fd);
    ev_buf_free(&b);
    return rc;
}

/*
 * Fsyncs the directory holding path so a rename in it is durable.
 * Returns 0, or -1 with errno set.
 */
static int fsync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    int fd, r, saved;

    if (!slash)
        dir = strdup(".");
    else if (slash == path)
        dir = strdup("/");
    else
        dir = strndup(path, (size_t)(slash - path));
    if (!dir) {
        errno = ENOMEM;
        return -1;
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return -1;
    r = fsync(fd);
    saved = errno;
    close(fd);
    errno = saved;
    /* Some file systems refuse fsync on directories; that is not a write error. */
    if (r != 0 && (errno == EINVAL || errno == EBADF))
        r = 0;
    return r;
}

/*
 * Writes p[0..n) to path atomically: a temp file "<path>.tmp.XXXXXX" in the
 * same directory, written fully, fsynced, renamed over path, and the
 * directory fsynced.  Mode 0644.  On failure (EV_EIO, EV_ENOMEM, with err
 * naming the path and the errno text) the temp file is removed and any old
 * file at path is left as it was.
 */
ev_status ev_write_file(const char *path, const void *p, size_t n, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_buf tmp = EV_BUF_INIT;
    const char *at = p;
    size_t left = n;
    int fd = -1, created = 0;

    if (ev_buf_printf(&tmp, "%s.tmp.XXXXXX", path)) {
        rc = ev_err_set(err, EV_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    fd = mkostemp(tmp.data, O_CLOEXEC);
    if (fd < 0) {
        rc = ev_err_set(err, EV_EIO, "%s: cannot create temp file: %s", path, strerror(errno));
        goto out;
    }
    created = 1;
    if (fchmod(fd, 0644) != 0) {
        rc = ev_err_set(err, EV_EIO, "%s: cannot chmod temp file: %s", path, strerror(errno));
        goto out;
    }
    while (left > 0) {
        ssize_t w = write(fd, at, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            rc = ev_err_set(err, EV_EIO, "%s: cannot write: %s", path, strerror(errno));
            goto out;
        }
        at += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0) {
        rc = ev_err_set(err, EV_EIO, "%s: cannot fsync: %s", path, strerror(errno));
        goto out;
    }
    if (close(fd) != 0) {
        fd = -1;
        rc = ev_err_set(err, EV_EIO, "%s: cannot close: %s", path, strerror(errno));
        goto out;
    }
    fd = -1;
    if (rename(tmp.data, path) != 0) {
        rc = ev_err_set(err, EV_EIO, "%s: cannot rename into place: %s", path, strerror(errno));
        goto out;
    }
    created = 0; /* renamed: nothing to clean up */
    if (fsync_parent_dir(path) != 0) {
        rc = ev_err_set(err, EV_EIO, "%s: cannot fsync directory: %s", path, strerror(errno));
        goto out;
    }
out:
    if (fd >= 0)
        close(fd);
    if (created)
        unlink(tmp.data);
    ev_buf_free(&tmp);
    return rc;
}
