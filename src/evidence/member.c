/*
 * member.c: lookup and the name rule for in-memory bundle members.
 */
#include "evidence/member.h"

#include <string.h>

#include "names.h"

/* Returns the first member named name, or NULL. */
const ev_member *ev_member_find(const ev_member *m, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].name && !strcmp(m[i].name, name))
            return &m[i];
    return NULL;
}

/* Returns 1 when name follows the rule of names.h, else 0. */
int ev_member_name_ok(const char *name)
{
    char why[96];
    return name && !ev_name_problem(name, strlen(name), why, sizeof why);
}
