/*
 * strs.c: a growable list of owned strings (strs.h).
 */
#include "strs.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

ev_status ev_strs_push(ev_strs *l, const char *s)
{
    char *d;
    if (ev_grow((void **)&l->v, &l->cap, l->n, sizeof *l->v) || !(d = strdup(s)))
        return EV_ENOMEM;
    l->v[l->n++] = d;
    return EV_OK;
}

void ev_strs_free(ev_strs *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

int ev_strs_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}
