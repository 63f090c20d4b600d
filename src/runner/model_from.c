/*
 * model_from.c: the coefficients of an earlier run's bundle for a subset's
 * auto arm (model_from.h).
 */
#include "model_from.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "json.h"
#include "sha256.h"
#include "zipread.h"
#include "member.h"

/* A member of z parsed as strict JSON, or NULL with *why set. */
static cJSON *member_json(const ev_zip *z, const char *name, const char **why)
{
    const ev_zip_member *m = ev_zip_find(z, name);
    cJSON *j = NULL;
    ev_err e;

    if (!m || !m->data) {
        *why = "has no such member";
        return NULL;
    }
    if (ev_member_json(name, m->data, (size_t)m->size, 0, NULL, &j, &e)) {
        *why = "is not strict JSON";
        return NULL;
    }
    return j;
}

ev_status ev_model_from_bundle(const char *path, const char *protocol_id, const char *backend,
                               ev_proto_model *m, ev_err *err)
{
    ev_buf raw = EV_BUF_INIT;
    ev_zip *z = NULL;
    ev_zip_problems *probs = NULL;
    cJSON *val = NULL, *model = NULL;
    const cJSON *run, *co;
    const char *why = "", *pid, *be;
    char sha[65];
    ev_status rc;

    memset(m, 0, sizeof *m);
    if ((rc = ev_read_file(path, &raw, err)))
        return ev_err_set(err, EV_EIO, "--model: cannot read %s", path);
    if ((rc = ev_sha256_hex(raw.data ? raw.data : "", raw.len, sha)))
        goto out;
    if ((rc = ev_zip_problems_new(&probs)))
        goto out;
    rc = ev_zip_read_mem(raw.data ? raw.data : "", raw.len, NULL, &z, probs, err);
    if (rc == EV_EVERIFY) {
        const ev_zip_problem *p0 = ev_zip_problems_at(probs, 0);
        rc = ev_err_set(err, EV_EUSAGE,
                        "--model: %s is not a bundle evident can read (%s); name an earlier "
                        "run's delivery.zip",
                        path, p0 && p0->reason ? p0->reason : "refused");
        goto out;
    }
    if (rc)
        goto out;
    if (!(val = member_json(z, EV_MEMBER_VALIDATION, &why)) ||
        !(model = member_json(z, EV_MEMBER_MODEL, &why))) {
        rc = ev_err_set(err, EV_EUSAGE, "--model: %s: %s %s; name an earlier run's delivery.zip", path,
                        val ? EV_MEMBER_MODEL : EV_MEMBER_VALIDATION, why);
        goto out;
    }
    run = cJSON_GetObjectItemCaseSensitive(val, "run");
    pid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "protocol_id"));
    be = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "backend"));
    if (!pid || strcmp(pid, protocol_id)) {
        rc = ev_err_set(
            err, EV_EUSAGE,
            "--model: %s measured protocol %.12s..., not %.12s... (the whole protocol this subset is "
            "cut from); name a bundle of that protocol",
            path, pid ? pid : "?", protocol_id);
        goto out;
    }
    if (!be || strcmp(be, backend)) {
        rc = ev_err_set(err, EV_EUSAGE, "--model: %s was measured on %s, this run is on %s", path,
                        be ? be : "?", backend);
        goto out;
    }
    co = cJSON_GetObjectItemCaseSensitive(model, "coefficients");
    if (!cJSON_IsObject(co) || ev_json_get_double(co, "a0", &m->a0, err) ||
        ev_json_get_double(co, "aP", &m->aP, err) || ev_json_get_double(co, "aD", &m->aD, err)) {
        rc = ev_err_set(err, EV_EUSAGE,
                        "--model: %s: its fit has no coefficients (model.json: the fit failed); "
                        "name a bundle whose fit succeeded",
                        path);
        goto out;
    }
    memcpy(m->bundle_sha256, sha, sizeof sha);
    m->set = 1;
out:
    cJSON_Delete(val);
    cJSON_Delete(model);
    ev_zip_free(z);
    ev_zip_problems_free(probs);
    ev_buf_free(&raw);
    return rc;
}
