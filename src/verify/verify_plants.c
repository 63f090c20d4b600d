/*
 * verify_plants.c: an attempt's plants as its bundle states them
 * (store schema 5; kernels/plants.h, docs/defenses.md "Every op earns its
 * time"), read once for checks 5 and 6: the secret seed its device record
 * reveals after the samples, and the configuration that seed, the
 * protocol and the device's cache make (the variants V, the rows planted
 * per op, the epochs, the kept op), each of which the record must state
 * as the worker computed it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "plants.h"
#include "runner/backend.h"
#include "runner/protocol.h"
#include "runner/validate.h"
#include "verify_int.h"

int vp_config(const vb_bundle *b, const vb_vjob *v, const cJSON *a, ev_plant_cfg *c, char *why, size_t cap)
{
    const ev_protocol *p = b->proto;
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(a, "device");
    const cJSON *pl = cJSON_GetObjectItemCaseSensitive(dev, "plants");
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(a, "flush");
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    const char *hex = ev_jr_str(pl, "seed"), *backend = ev_jr_str(run, "backend");
    const ev_proto_ref *ref = backend ? ev_protocol_ref(p, backend) : NULL;
    int64_t variants, rows, epochs, kept, cache;
    ev_shape s;
    ev_err e = {""};
    size_t in_bytes = 0;

    if (!cJSON_IsObject(pl))
        return 0;
    if (!hex || strlen(hex) != 16 || strspn(hex, "0123456789abcdef") != 16 ||
        ev_jr_i64(pl, "variants", &variants) || ev_jr_i64(pl, "rows", &rows) ||
        ev_jr_i64(pl, "epochs", &epochs) || ev_jr_i64(pl, "kept_op", &kept)) {
        snprintf(why, cap, "its device record's plants lack seed, variants, rows, epochs or kept_op");
        return -1;
    }
    if (v->case_index < 0 || (size_t)v->case_index >= p->n_cases ||
        ev_case_shape(&p->cases[v->case_index], &s, &e)) {
        snprintf(why, cap, "its device record names plants, but its job has no case to plant");
        return -1;
    }
    if (!ref || !cJSON_IsObject(fl) || ev_jr_i64(fl, "cache_bytes", &cache)) {
        snprintf(why, cap, "its plants cannot be checked: no flush record with the device's cache_bytes");
        return -1;
    }
    if (s.rows > 0)
        in_bytes = ((size_t)(s.rows - 1) * (size_t)s.stride + (size_t)s.cols) * ev_dtype_size(s.dtype);
    ev_plant_config(c, strtoull(hex, NULL, 16), &s,
                    ev_plant_variants((int64_t)in_bytes, cache, ref->variant_budget_bytes, p->ops_per_graph),
                    p->ops_per_graph);
    c->sites = ev_plant_sites_at(p->plan_schema); /* the bundle's store schema (verify_plan.c) */
    if (variants != c->variants || rows != c->m || epochs != c->epochs || kept != c->kept_op) {
        snprintf(
            why, cap,
            "its device record's plants (variants %lld, rows %lld, epochs %lld, kept_op %lld) are not the "
            "ones its seed, the protocol and the device's cache of %lld bytes make (variants %lld, rows "
            "%lld, epochs %lld, kept_op %lld)",
            (long long)variants, (long long)rows, (long long)epochs, (long long)kept, (long long)cache,
            (long long)c->variants, (long long)c->m, (long long)c->epochs, (long long)c->kept_op);
        return -1;
    }
    return 1;
}

int vp_planted_arm(const vb_bundle *b, const vb_vjob *v)
{
    ev_arm_kind kind;
    int64_t rpp;
    return v->case_index >= 0 && !ev_arm_classify(b->proto, v->arm, &kind, &rpp) && kind != EV_ARM_FLOOR &&
           kind != EV_ARM_CEILING;
}
