/*
 * status.c: names for ev_status codes and the ev_err helpers.
 */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const ev_status_names[EV_STATUS_COUNT] = {
    [EV_OK] = "ok",
    [EV_ENOMEM] = "out of memory",
    [EV_EIO] = "input/output error",
    [EV_EFORMAT] = "malformed input",
    [EV_EDB] = "database error",
    [EV_EFULL] = "disk or database full",
    [EV_EREADONLY] = "read-only store",
    [EV_ECORRUPT] = "damaged file",
    [EV_EZIP] = "zip error",
    [EV_ECRYPTO] = "crypto library error",
    [EV_ECUDA] = "CUDA error",
    [EV_EVERIFY] = "verification failed",
    [EV_EUSAGE] = "usage error",
    [EV_ERANGE] = "value out of range",
    [EV_EINVAL] = "invalid argument",
    [EV_ENOTFOUND] = "not found",
    [EV_EFIT] = "model fit failed",
    [EV_EPROC] = "process error",
    [EV_EINTR] = "interrupted",
    [EV_EUNSUPPORTED] = "unsupported on this build or host",
};

/* Returns the static name of rc, or "unknown status" when out of range. */
const char *ev_strerror(ev_status rc)
{
    if ((int)rc < 0 || rc >= EV_STATUS_COUNT || !ev_status_names[rc])
        return "unknown status";
    return ev_status_names[rc];
}

/* Formats into err->msg (when err is non-NULL); returns rc unchanged. */
ev_status ev_err_set(ev_err *err, ev_status rc, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* Rewrites err->msg as "<prefix>: <old msg>", truncating to fit. */
void ev_err_prefix(ev_err *err, const char *fmt, ...)
{
    char out[sizeof err->msg];
    size_t len, old_len;
    va_list ap;

    if (!err)
        return;
    va_start(ap, fmt);
    vsnprintf(out, sizeof out, fmt, ap);
    va_end(ap);
    len = strlen(out);
    if (len + 2 < sizeof out) {
        memcpy(out + len, ": ", 2);
        len += 2;
    }
    old_len = strnlen(err->msg, sizeof err->msg - 1);
    if (old_len > sizeof out - 1 - len)
        old_len = sizeof out - 1 - len;
    memcpy(out + len, err->msg, old_len);
    out[len + old_len] = '\0';
    memcpy(err->msg, out, sizeof out);
}
