/*
 * status.h: the one status type of evident and the error-detail record.
 *
 * Every library function returns an ev_status.  Each external library's own
 * codes (sqlite3 rc, libzip errors, OpenSSL's 1-for-success, cudaError_t)
 * are translated once, in that library's wrapper module.  When a caller
 * wants to know *what* was wrong (line, column, field), it passes an ev_err
 * that the failing function fills with a one-line human reason.
 */
#ifndef EV_STATUS_H
#define EV_STATUS_H

#include <stddef.h>

typedef enum ev_status {
    EV_OK = 0,
    EV_ENOMEM,       /* allocation failed */
    EV_EIO,          /* read/write/open failed (errno-level) */
    EV_EFORMAT,      /* malformed input: JSON, CSV, protocol, zip member */
    EV_EDB,          /* SQLite error other than those below */
    EV_EFULL,        /* disk or database full */
    EV_EREADONLY,    /* store opened read-only, or write refused */
    EV_ECORRUPT,     /* damaged file (quick_check failed, bad zip) */
    EV_EZIP,         /* libzip error */
    EV_ECRYPTO,      /* OpenSSL error */
    EV_ECUDA,        /* CUDA runtime/driver error */
    EV_EVERIFY,      /* a verification check failed */
    EV_EUSAGE,       /* bad arguments to a command */
    EV_ERANGE,       /* value out of range, overflow */
    EV_EINVAL,       /* invalid argument / binding refused */
    EV_ENOTFOUND,    /* requested item does not exist */
    EV_EFIT,         /* model fit failed (no feasible subset, too few groups) */
    EV_EPROC,        /* process/fork/exec/pipe failure */
    EV_EINTR,        /* interrupted by a signal (SIGINT/SIGTERM) */
    EV_EUNSUPPORTED, /* feature not available on this build/host */
    EV_STATUS_COUNT
} ev_status;

/* Returns a static, human-readable name for rc; never NULL. */
const char *ev_strerror(ev_status rc);

/* One-line error detail.  msg is always NUL-terminated. */
typedef struct ev_err {
    char msg[512];
} ev_err;

/*
 * Writes a formatted reason into err (if err is non-NULL), truncating to fit,
 * and returns rc so callers can write `return ev_err_set(err, EV_EFORMAT, ...)`.
 */
ev_status ev_err_set(ev_err *err, ev_status rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prepends "prefix: " to an existing message (if err is non-NULL). */
void ev_err_prefix(ev_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
