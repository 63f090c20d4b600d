/*
 * subset.c: the derived protocol of a quick loop (subset.h).
 */
#include "subset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "protocol.h"

/* Parses "a,b-c,..." into keep[0..nc) (1 = kept, in order of index).
 * EV_EFORMAT with the offending item named. */
static ev_status parse_cases(const char *spec, size_t nc, unsigned char *keep, ev_err *err)
{
    const char *s = spec;
    if (!*s)
        return ev_err_set(err, EV_EFORMAT, "--cases: empty; give indexes and ranges such as 0,3,5-7");
    while (*s) {
        char *end;
        long a, b;
        if (*s < '0' || *s > '9')
            return ev_err_set(err, EV_EFORMAT, "--cases: '%s' is not an index or a range (such as 0,3,5-7)",
                              s);
        a = strtol(s, &end, 10);
        b = a;
        if (*end == '-') {
            if (end[1] < '0' || end[1] > '9')
                return ev_err_set(err, EV_EFORMAT, "--cases: '%s' is not a range (such as 5-7)", s);
            b = strtol(end + 1, &end, 10);
        }
        if (*end && *end != ',')
            return ev_err_set(err, EV_EFORMAT, "--cases: '%s' is not an index or a range (such as 0,3,5-7)",
                              s);
        if (b < a)
            return ev_err_set(err, EV_EFORMAT, "--cases: the range %ld-%ld runs backwards", a, b);
        if ((size_t)b >= nc)
            return ev_err_set(err, EV_EFORMAT,
                              "--cases: case %ld is not in the protocol (it has %zu cases: 0-%zu)", b, nc,
                              nc - 1);
        for (long i = a; i <= b; i++) {
            if (keep[i])
                return ev_err_set(err, EV_EFORMAT, "--cases: case %ld is named twice", i);
            keep[i] = 1;
        }
        s = *end ? end + 1 : end;
        if (*end == ',' && !*s)
            return ev_err_set(err, EV_EFORMAT, "--cases: a trailing comma");
    }
    return EV_OK;
}

/* 1 when name is an item of the comma list (exactly). */
static int in_list(const char *list, const char *name)
{
    size_t l = strlen(name);
    for (const char *s = list; s && *s;) {
        const char *c = strchr(s, ',');
        size_t k = c ? (size_t)(c - s) : strlen(s);
        if (k == l && !strncmp(s, name, l))
            return 1;
        s = c ? c + 1 : s + k;
    }
    return 0;
}

/* Checks that every item of arms is one of the protocol's arms, once. */
static ev_status check_arms(const char *arms, const cJSON *parr, ev_err *err)
{
    if (!*arms)
        return ev_err_set(err, EV_EFORMAT, "--arms: empty; give a comma list of the protocol's arms");
    for (const char *s = arms; *s;) {
        const char *c = strchr(s, ',');
        size_t k = c ? (size_t)(c - s) : strlen(s);
        char name[EV_PROTO_NAME_MAX + 1];
        const cJSON *it;
        int found = 0;
        if (!k || k > EV_PROTO_NAME_MAX)
            return ev_err_set(err, EV_EFORMAT, "--arms: an empty or overlong arm name");
        memcpy(name, s, k);
        name[k] = '\0';
        cJSON_ArrayForEach(it, parr) found |= cJSON_IsString(it) && !strcmp(it->valuestring, name);
        if (!found)
            return ev_err_set(err, EV_EFORMAT, "--arms: '%s' is not one of the protocol's arms", name);
        for (const char *t = arms; t < s;) {
            const char *d = strchr(t, ',');
            size_t q = d ? (size_t)(d - t) : strlen(t);
            if (q == k && !strncmp(t, s, k))
                return ev_err_set(err, EV_EFORMAT, "--arms: '%s' is named twice", name);
            t = d ? d + 1 : t + q;
        }
        s = c ? c + 1 : s + k;
        if (c && !*s)
            return ev_err_set(err, EV_EFORMAT, "--arms: a trailing comma");
    }
    return EV_OK;
}

/* Sets root's auto: model m's coefficients (model_from), or none (auto_arm
 * false).  Returns -1 when out of memory. */
static int set_auto(cJSON *root, const ev_proto_model *m)
{
    cJSON *mf;

    cJSON_DeleteItemFromObjectCaseSensitive(root, "auto_arm");
    cJSON_DeleteItemFromObjectCaseSensitive(root, "model_from");
    if (!m)
        return cJSON_AddFalseToObject(root, "auto_arm") ? 0 : -1;
    if (!(mf = cJSON_AddObjectToObject(root, "model_from")) ||
        !cJSON_AddStringToObject(mf, "bundle_sha256", m->bundle_sha256) ||
        ev_json_add_double(mf, "a0", m->a0) || ev_json_add_double(mf, "aP", m->aP) ||
        ev_json_add_double(mf, "aD", m->aD))
        return -1; /* (exact %.17g text: the coefficients must read back to the bit) */
    return 0;
}

ev_status ev_protocol_subset(const char *p, size_t n, const char *cases, const char *arms,
                             const ev_proto_model *model, ev_buf *out, ev_err *err)
{
    ev_protocol proto;
    cJSON *root = NULL, *orig = NULL;
    unsigned char *keep = NULL;
    int64_t *newidx = NULL;
    char id[65];
    ev_status rc;

    memset(&proto, 0, sizeof proto);
    if ((rc = ev_protocol_parse(p, n, &proto, err)))
        return rc;
    if ((rc = ev_json_parse(p, n, 0, &root, err)) || (rc = ev_json_parse(p, n, 0, &orig, err)))
        goto out;
    if (cJSON_GetObjectItemCaseSensitive(root, "subset_of")) {
        rc = ev_err_set(err, EV_EFORMAT,
                        "--cases/--arms: this protocol is already a subset; cut from the whole one");
        goto out;
    }
    keep = calloc(proto.n_cases + 1, 1);
    newidx = calloc(proto.n_cases + 1, sizeof *newidx);
    if (!keep || !newidx) {
        rc = ev_err_set(err, EV_ENOMEM, "subset: out of memory");
        goto out;
    }
    if (cases) {
        if ((rc = parse_cases(cases, proto.n_cases, keep, err)))
            goto out;
    } else {
        memset(keep, 1, proto.n_cases);
    }
    cJSON *parr = cJSON_GetObjectItemCaseSensitive(root, "arms");
    if (!parr) {
        /* a protocol that names no arms runs the default profile's: the
         * subset names them, so it cuts from the same list */
        if (!(parr = cJSON_AddArrayToObject(root, "arms"))) {
            rc = ev_err_set(err, EV_ENOMEM, "subset: out of memory");
            goto out;
        }
        for (size_t i = 0; i < proto.n_arms; i++)
            if (!cJSON_AddItemToArray(parr, cJSON_CreateString(proto.arms[i]))) {
                rc = ev_err_set(err, EV_ENOMEM, "subset: out of memory");
                goto out;
            }
    }
    if (arms && (rc = check_arms(arms, parr, err)))
        goto out;

    /* what it was cut from, then the cases kept and their original index */
    cJSON *kept = cJSON_CreateArray(), *idx = cJSON_CreateArray();
    if ((rc = ev_protocol_id(p, n, id)))
        goto out;
    if (!kept || !idx || !cJSON_ReplaceItemInObjectCaseSensitive(root, "cases", kept) ||
        !cJSON_AddStringToObject(root, "subset_of", id) ||
        !cJSON_AddItemToObject(root, "subset_cases", idx)) {
        rc = ev_err_set(err, EV_ENOMEM, "subset: out of memory");
        goto out;
    }
    cJSON *carr = cJSON_GetObjectItemCaseSensitive(orig, "cases");
    int64_t k = 0;
    for (size_t i = 0; i < proto.n_cases; i++) {
        newidx[i] = keep[i] ? k : -1;
        if (!keep[i])
            continue;
        k++;
        if (!cJSON_AddItemToArray(kept, cJSON_Duplicate(cJSON_GetArrayItem(carr, (int)i), 1)) ||
            ev_json_push_i64(idx, (int64_t)i)) {
            rc = ev_err_set(err, EV_ENOMEM, "subset: out of memory");
            goto out;
        }
    }
    /* arms, then the fault arms that are kept, their cases renumbered */
    if (arms) {
        cJSON *na = cJSON_CreateArray(), *it;
        cJSON_ArrayForEach(it, parr) if (in_list(arms, it->valuestring))
            cJSON_AddItemToArray(na, cJSON_CreateString(it->valuestring));
        cJSON_ReplaceItemInObjectCaseSensitive(root, "arms", na);
    }
    /* the model's declared schedules keep only the kept arms (a subset
     * without default is refused by the parse below, with the reason) */
    cJSON *ms = cJSON_GetObjectItemCaseSensitive(root, "model_schedules");
    for (cJSON *m = arms && cJSON_IsArray(ms) ? ms->child : NULL, *next; m; m = next) {
        next = m->next;
        if (cJSON_IsString(m) && !in_list(arms, m->valuestring))
            cJSON_Delete(cJSON_DetachItemViaPointer(ms, m));
    }
    /* external kernels whose arm is not kept are dropped too */
    cJSON *kernels = cJSON_GetObjectItemCaseSensitive(root, "kernels");
    for (cJSON *kd = kernels ? kernels->child : NULL, *next; kd; kd = next) {
        next = kd->next;
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(kd, "name"));
        if (arms && name && !in_list(arms, name))
            cJSON_Delete(cJSON_DetachItemViaPointer(kernels, kd));
    }
    if (kernels && !cJSON_GetArraySize(kernels))
        cJSON_DeleteItemFromObjectCaseSensitive(root, "kernels");
    cJSON *faults = cJSON_GetObjectItemCaseSensitive(root, "fault_arms");
    for (cJSON *f = faults ? faults->child : NULL, *next; f; f = next) {
        next = f->next;
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "name"));
        if (arms && name && !in_list(arms, name)) {
            cJSON_Delete(cJSON_DetachItemViaPointer(faults, f));
            continue;
        }
        cJSON *fc = cJSON_GetObjectItemCaseSensitive(f, "cases");
        if (!fc)
            continue;
        cJSON *nc = cJSON_CreateArray(), *c;
        cJSON_ArrayForEach(c, fc) if (newidx[(size_t)c->valuedouble] >= 0 &&
                                      ev_json_push_i64(nc, newidx[(size_t)c->valuedouble]))
        {
            cJSON_Delete(nc);
            rc = ev_err_set(err, EV_ENOMEM, "subset: out of memory");
            goto out;
        }
        if (!cJSON_GetArraySize(nc)) {
            cJSON_Delete(nc);
            rc = ev_err_set(err, EV_EFORMAT, "--cases: fault arm %s runs on none of the cases kept",
                            name ? name : "?");
            goto out;
        }
        cJSON_ReplaceItemInObjectCaseSensitive(f, "cases", nc);
    }
    if (set_auto(root, model)) {
        rc = ev_err_set(err, EV_ENOMEM, "subset: out of memory");
        goto out;
    }
    size_t before = out->len;
    if ((rc = ev_json_print(root, 1, out))) {
        ev_err_set(err, rc, "subset: out of memory");
        goto out;
    }
    /* the derived protocol must stand on its own */
    ev_protocol check;
    memset(&check, 0, sizeof check);
    rc = ev_protocol_parse(out->data + before, out->len - before, &check, err);
    ev_protocol_free(&check);
out:
    cJSON_Delete(root);
    cJSON_Delete(orig);
    free(keep);
    free(newidx);
    ev_protocol_free(&proto);
    return rc;
}
