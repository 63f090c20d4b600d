/*
 * names.c: the member-name rule and the redaction of free text (names.h).
 */
#include "names.h"

#include <stdio.h>
#include <string.h>

const char *ev_name_problem(const char *name, size_t len, char *why, size_t size)
{
    const unsigned char *s = (const unsigned char *)name;
    size_t i, comp = 0;

    if (len == 0)
        return "empty name";
    for (i = 0; i < len; i++)
        if (s[i] == 0)
            return "NUL byte in name";
    for (i = 0; i < len; i++)
        if (s[i] < 0x20 || s[i] == 0x7f)
            return "control character in name";
    for (i = 0; i < len; i++)
        if (s[i] == '\\')
            return "backslash in name";
    if (s[0] == '/')
        return "absolute name (leading '/')";
    if (len > EV_NAME_MAX) {
        snprintf(why, size, "name of %zu bytes is longer than %d", len, EV_NAME_MAX);
        return why;
    }
    for (i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-' || c == '/')) {
            if (c >= 0x80)
                snprintf(why, size, "byte 0x%02x in name: only [A-Za-z0-9._-/] allowed", c);
            else
                snprintf(why, size, "character '%c' in name: only [A-Za-z0-9._-/] allowed", c);
            return why;
        }
    }
    for (i = 0; i <= len; i++) {
        if (i < len && s[i] != '/')
            continue;
        if (i == comp)
            return i == len ? "directory entry (name ends in '/'): regular files only"
                            : "empty path component ('//') in name";
        if (i - comp == 2 && s[comp] == '.' && s[comp + 1] == '.')
            return "'..' path component in name";
        if (i - comp == 1 && s[comp] == '.')
            return "'.' path component in name";
        comp = i + 1;
    }
    return NULL;
}

/* ---- absolute-path redaction ---------------------------------------------- */

/* Returns 1 when c may start a path component after '/'. */
static int path_start_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '~' || c == '-';
}

/* Returns 1 when c continues a path. */
static int path_char(char c)
{
    return path_start_char(c) || c == '+' || c == '@' || c == '%' || c == '/';
}

/* Redacts absolute paths; see names.h. */
ev_status ev_bundle_redact(const char *s, ev_buf *out)
{
    ev_status rc = EV_OK;
    if (!s)
        return EV_OK;
    size_t i = 0, n = strlen(s);
    while (i < n && !rc) {
        int starts = s[i] == '/' && i + 1 < n && path_start_char(s[i + 1]) &&
                     (i == 0 || strchr(" \t\n\"'=:([,", s[i - 1]) != NULL);
        if (!starts) {
            rc = ev_buf_append(out, s + i, 1);
            i++;
            continue;
        }
        size_t e = i + 1, last = i + 1;
        while (e < n && path_char(s[e])) {
            if (s[e] == '/' && e + 1 < n && path_char(s[e + 1]) && s[e + 1] != '/')
                last = e + 1;
            e++;
        }
        rc = ev_buf_puts(out, "<redacted>/");
        if (!rc) {
            size_t end = e;
            while (end > last && s[end - 1] == '/')
                end--;
            rc = ev_buf_append(out, s + last, end - last);
        }
        i = e;
    }
    return rc;
}
