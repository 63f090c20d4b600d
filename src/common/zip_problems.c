/*
 * zip_problems.c: the list of problems a zip reading found (zipread.h):
 * each a check, a printable member name and a reason, at most
 * EV_ZIP_MAX_PROBLEMS of them and a summary of the rest.  Apart from the
 * reading itself (zipread.c) so that each file holds one job.
 */
#include "zipread.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

struct ev_zip_problems {
    ev_zip_problem *v; /* n entries, strings owned */
    size_t n, cap;
    size_t dropped;      /* problems beyond EV_ZIP_MAX_PROBLEMS */
    ev_zip_problem more; /* the summary entry shown when dropped > 0 */
    char more_reason[96];
};

/* OUT: *out, an empty problem list.  EV_ENOMEM (nothing written) on failure. */
ev_status ev_zip_problems_new(ev_zip_problems **out)
{
    ev_zip_problems *p = calloc(1, sizeof *p);

    if (!p)
        return EV_ENOMEM;
    p->more.check = EV_ZIP_CHECK;
    p->more.member = "-";
    p->more.reason = p->more_reason;
    *out = p;
    return EV_OK;
}

/* Frees the list and its strings; NULL-safe. */
void ev_zip_problems_free(ev_zip_problems *p)
{
    size_t i;

    if (!p)
        return;
    for (i = 0; i < p->n; i++) {
        free((char *)p->v[i].check);
        free((char *)p->v[i].member);
        free((char *)p->v[i].reason);
    }
    free(p->v);
    free(p);
}

/* Returns the number of entries, the summary of dropped ones included. */
size_t ev_zip_problems_count(const ev_zip_problems *p)
{
    if (!p)
        return 0;
    return p->n + (p->dropped ? 1 : 0);
}

/* Returns entry i, or NULL when out of range. */
const ev_zip_problem *ev_zip_problems_at(const ev_zip_problems *p, size_t i)
{
    if (!p)
        return NULL;
    if (i < p->n)
        return &p->v[i];
    if (i == p->n && p->dropped)
        return &p->more;
    return NULL;
}

/*
 * Writes a printable copy of s[0..len) into b: bytes outside 0x20..0x7e and
 * the backslash become \xNN; names longer than 256 bytes are cut with "...".
 * Returns EV_OK or EV_ENOMEM.
 */
static ev_status printable_name(ev_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    ev_status rc = EV_OK;
    size_t i, shown = len > 256 ? 256 : len;

    for (i = 0; i < shown && !rc; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            rc = ev_buf_append(b, &s[i], 1);
        } else {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            rc = ev_buf_append(b, e, 4);
        }
    }
    if (!rc && shown < len)
        rc = ev_buf_puts(b, "...");
    if (!rc && b->len == 0)
        rc = ev_buf_puts(b, "\"\"");
    return rc;
}

/* Appends a problem; see zipread.h.  EV_ENOMEM leaves the list unchanged. */
ev_status ev_zip_problems_add(ev_zip_problems *p, const char *check, const char *member, size_t member_len,
                              const char *fmt, ...)
{
    ev_status rc = EV_OK;
    ev_buf name = EV_BUF_INIT, reason = EV_BUF_INIT;
    char *check_copy = NULL;
    char line[512];
    va_list ap;

    if (!p || !check || !fmt)
        return EV_EINVAL;
    if (p->n >= EV_ZIP_MAX_PROBLEMS) {
        p->dropped++;
        snprintf(p->more_reason, sizeof p->more_reason, "%zu more problems not listed", p->dropped);
        return EV_OK;
    }
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (!member)
        rc = ev_buf_puts(&name, "-");
    else
        rc = printable_name(&name, member, member_len == SIZE_MAX ? strlen(member) : member_len);
    if (!rc)
        rc = ev_buf_puts(&reason, line);
    if (!rc && !(check_copy = strdup(check)))
        rc = EV_ENOMEM;
    if (!rc)
        rc = ev_grow((void **)&p->v, &p->cap, p->n, sizeof *p->v);
    if (rc)
        goto out;
    p->v[p->n].check = check_copy;
    p->v[p->n].member = ev_buf_steal(&name, NULL);
    p->v[p->n].reason = ev_buf_steal(&reason, NULL);
    p->n++;
    check_copy = NULL;
out:
    free(check_copy);
    ev_buf_free(&name);
    ev_buf_free(&reason);
    return rc;
}
