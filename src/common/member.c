/*
 * member.c: lookup and the name rule for in-memory bundle members.
 */
#include "member.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "names.h"
#include "zipread.h"

const char *const ev_member_required[] = {
    EV_MEMBER_MODEL,    EV_MEMBER_PROOF,  EV_MEMBER_PROTOCOL, EV_MEMBER_PROVENANCE,
    EV_MEMBER_RECEIPTS, EV_MEMBER_REPORT, EV_MEMBER_SAMPLES,  EV_MEMBER_VALIDATION,
};
const size_t ev_member_n_required = sizeof ev_member_required / sizeof ev_member_required[0];

int ev_member_is_source(const char *name)
{
    return !strncmp(name, EV_MEMBER_SOURCES, sizeof EV_MEMBER_SOURCES - 1);
}

int ev_member_is_output(const char *name)
{
    return !strncmp(name, EV_MEMBER_OUTPUTS, sizeof EV_MEMBER_OUTPUTS - 1);
}

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

ev_status ev_members_read_zip(const void *p, size_t n, struct ev_zip **z, ev_member **m, size_t *count,
                              ev_err *err)
{
    ev_zip_problems *probs = NULL;
    ev_zip *zz = NULL;
    ev_member *mm = NULL;
    size_t k = 0;
    ev_status rc = ev_zip_problems_new(&probs);

    if (rc) {
        rc = ev_err_set(err, rc, "out of memory");
        goto out;
    }
    rc = ev_zip_read_mem(p, n, NULL, &zz, probs, err);
    if (rc == EV_EVERIFY) {
        const ev_zip_problem *q = ev_zip_problems_at(probs, 0);
        rc = ev_err_set(err, EV_EFORMAT,
                        "not a readable bundle: %s: %s (%zu problems; verify-bundle says more)",
                        q ? q->member : "-", q ? q->reason : "refused", ev_zip_problems_count(probs));
    }
    if (rc)
        goto out;
    k = ev_zip_count(zz);
    mm = calloc(k + 1, sizeof *mm);
    if (!mm) {
        rc = ev_err_set(err, EV_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < k; i++) {
        const ev_zip_member *x = ev_zip_at(zz, i);
        mm[i].name = x->name;
        mm[i].data = x->data;
        mm[i].len = (size_t)x->size;
    }
    *z = zz;
    *m = mm;
    *count = k;
    zz = NULL;
    mm = NULL;
out:
    ev_zip_problems_free(probs);
    ev_zip_free(zz);
    free(mm);
    return rc;
}

/* See member.h. */
size_t ev_bundle_json_budget(size_t archive_len)
{
    return archive_len > ((size_t)1 << 20) ? archive_len : (size_t)1 << 20;
}

/* See member.h. */
ev_status ev_member_json(const char *name, const void *data, size_t len, unsigned flags, size_t *budget,
                         cJSON **out, ev_err *err)
{
    uint64_t max_bytes = UINT64_MAX;
    size_t per = EV_MEMBER_BYTES_PER_VALUE, max_nodes, nodes = 0;
    if (!strcmp(name, EV_MEMBER_PROVENANCE) || !strcmp(name, EV_MEMBER_PROOF))
        max_bytes = EV_MEMBER_SMALL_MAX;
    else if (!strcmp(name, EV_MEMBER_MODEL))
        max_bytes = EV_MEMBER_MODEL_MAX;
    else if (!strcmp(name, EV_MEMBER_RECEIPTS))
        max_bytes = EV_MEMBER_RECEIPTS_MAX;
    else if (!strcmp(name, EV_MEMBER_PROTOCOL)) {
        max_bytes = EV_PROTO_MAX_BYTES;
        per = 2; /* human-written, possibly compact */
    }
    if ((uint64_t)len > max_bytes)
        return ev_err_set(err, EV_EFORMAT,
                          "%zu bytes, more than the %llu a %s may hold (docs/bundle-format.md, \"Reading "
                          "bounds\")",
                          len, (unsigned long long)max_bytes, name);
    max_nodes = len / per + EV_MEMBER_VALUES_SLACK;
    if (budget && *budget < max_nodes)
        max_nodes = *budget;
    int by_budget = budget && *budget < len / per + EV_MEMBER_VALUES_SLACK;
    ev_json_bounds bounds = {max_nodes, EV_MEMBER_STRING_MAX, data != NULL};
    ev_status rc = ev_json_parse_bounded(data ? data : "", len, flags, &bounds, &nodes, out, err);
    if (rc == EV_EFORMAT && by_budget && err && strstr(err->msg, "values: more than a member"))
        ev_err_set(
            err, EV_EFORMAT,
            "more than the %zu values its bundle allows this member (its size, and what the other "
            "members hold: docs/bundle-format.md, \"Reading bounds\"): refused before any tree is built",
            *budget);
    if (!rc && budget)
        *budget -= nodes;
    return rc;
}
