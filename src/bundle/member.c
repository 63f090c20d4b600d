/*
 * member.c: lookup and the name rule for in-memory bundle members.
 */
#include "bundle/member.h"

#include <string.h>

/* Returns the first member named name, or NULL. */
const ev_member *ev_member_find(const ev_member *m, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].name && !strcmp(m[i].name, name))
            return &m[i];
    return NULL;
}

/* Returns 1 when c may appear in a name component. */
static int name_char_ok(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '+' || c == '-';
}

/* Returns 1 when name follows the rule in member.h, else 0. */
int ev_member_name_ok(const char *name)
{
    size_t len = name ? strlen(name) : 0;
    if (len == 0 || len > 255)
        return 0;
    const char *comp = name;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || name[i] == '/') {
            size_t clen = (size_t)(name + i - comp);
            if (clen == 0)
                return 0;
            if ((clen == 1 && comp[0] == '.') || (clen == 2 && comp[0] == '.' && comp[1] == '.'))
                return 0;
            comp = name + i + 1;
        } else if (!name_char_ok(name[i])) {
            return 0;
        }
    }
    return 1;
}
