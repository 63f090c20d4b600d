/*
 * names.c: the member-name rule (names.h).
 */
#include "names.h"

#include <stdio.h>

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
