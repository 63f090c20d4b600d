/*
 * receipts.c: receipts.json (receipts.h).
 */
#include "receipts.h"

#include <cjson/cJSON.h>

#include "json.h"

ev_status ev_receipts_json(int version, const ev_receipt *r, size_t n, ev_buf *out)
{
    ev_status rc = EV_ENOMEM;
    cJSON *root, *arr;

    if (version != 1 && version != EV_BUNDLE_FORMAT)
        return EV_EINVAL;
    if (!(root = cJSON_CreateObject()))
        return EV_ENOMEM;
    if (!cJSON_AddStringToObject(root, "format", "evident-receipts/1") ||
        (version >= 2 && ev_json_add_i64(root, "bundle_format", version)) ||
        !(arr = cJSON_AddArrayToObject(root, "members")))
        goto out;
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            goto out;
        }
        if (!cJSON_AddStringToObject(o, "name", r[i].name) || ev_json_add_i64(o, "size", r[i].size) ||
            !cJSON_AddStringToObject(o, "sha256", r[i].sha256_hex))
            goto out;
    }
    rc = ev_json_print(root, 1, out);
out:
    cJSON_Delete(root);
    return rc;
}
