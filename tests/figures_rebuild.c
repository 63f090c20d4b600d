/*
 * figures_rebuild.c (tests): the figures a bundle holds compared with their
 * rebuild from its raw members (ev_figures_rebuild,
 * src/evidence/figures_rebuild.c).
 */
#include "figures_rebuild.h"

#include <string.h>

#include "buf.h"
#include "json.h"
#include "evidence/figures.h"
#include "evidence/figures_rebuild.h"

/* Prints tree (pretty) into b.  EV_ENOMEM. */
static ev_status print_into(const cJSON *tree, ev_buf *b)
{
    return ev_json_print(tree, 1, b);
}

/* See figures_rebuild.h. */
ev_status ev_figures_verify(const ev_member *m, size_t n, ev_err *err)
{
    ev_status rc;
    cJSON *rebuilt = NULL, *val = NULL;
    ev_buf a = EV_BUF_INIT, b = EV_BUF_INIT;
    const ev_member *vm = ev_member_find(m, n, "validation.json");
    if ((rc = ev_figures_rebuild(m, n, &rebuilt, err)))
        goto out;
    if ((rc = ev_json_parse(vm->data ? vm->data : "", vm->len, EV_JSON_CANONICAL, &val, err)))
        goto out;
    cJSON *held = cJSON_GetObjectItemCaseSensitive(val, "figures");
    if (!cJSON_IsObject(held)) {
        rc = ev_err_set(err, EV_EVERIFY, "validation.json: no \"figures\" object");
        goto out;
    }
    if ((rc = ev_figures_canon(held)) || (rc = print_into(held, &a)) || (rc = print_into(rebuilt, &b))) {
        ev_err_set(err, rc, "figures: %s", ev_strerror(rc));
        goto out;
    }
    if (a.len != b.len || memcmp(a.data, b.data, a.len)) {
        size_t line = 1, k = 0;
        while (k < a.len && k < b.len && a.data[k] == b.data[k])
            line += a.data[k++] == '\n';
        size_t e = k;
        while (e < a.len && a.data[e] != '\n' && e - k < 120)
            e++;
        size_t s0 = k;
        while (s0 > 0 && a.data[s0 - 1] != '\n' && k - s0 < 120)
            s0--;
        rc = ev_err_set(
            err, EV_EVERIFY,
            "validation.json: figures differ from their rebuild from samples.csv at line %zu of the "
            "object: '%.*s'",
            line, (int)(e - s0), a.data + s0);
    }
out:
    ev_buf_free(&a);
    ev_buf_free(&b);
    cJSON_Delete(rebuilt);
    cJSON_Delete(val);
    return rc;
}
