/*
 * projections.c: proof-receipts.json and provenance.json from their inputs
 * (projections.h): the exporter's and the verifier's one writer.
 */
#include "evidence/projections.h"
#include "member.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "jbuild.h"

/* The snapshot file with this path, or NULL. */
static const ev_proj_source *find_source(const ev_proof_in *in, const char *path)
{
    for (size_t i = 0; i < in->n_src; i++)
        if (!strcmp(in->src[i].path, path))
            return &in->src[i];
    return NULL;
}

/* See projections.h. */
ev_status ev_proof_build(const ev_proof_in *in, ev_buf *out)
{
    ev_jb b = {EV_OK};
    cJSON *root = cJSON_CreateObject();
    cJSON *env = NULL;
    ev_jb_str(&b, root, "format", "evident-proof-receipts/1");
    ev_jb_str(&b, root, "backend", in->backend);
    ev_json_bounds bounds = {
        in->env_json ? strlen(in->env_json) / EV_MEMBER_BYTES_PER_VALUE + EV_MEMBER_VALUES_SLACK : 0,
        EV_MEMBER_STRING_MAX, 1};
    if (in->env_json &&
        !ev_json_parse_bounded(in->env_json, strlen(in->env_json), 0, &bounds, NULL, &env, NULL)) {
        /* A fixed projection of the environment record: each key copied
         * (numbers exact) where the runner recorded it, else null. */
        static const char *const top[] = {"compiler", "cflags",          "kernel",
                                          "nvcc",     "kernel_binaries", "default_entry_source"};
        static const char *const dev[] = {"name", "driver_version", "runtime_version"};
        cJSON *build = ev_jb_obj(&b, root, "build");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(env, "device");
        for (size_t i = 0; i < sizeof top / sizeof top[0] + sizeof dev / sizeof dev[0]; i++) {
            int is_dev = i >= sizeof top / sizeof top[0];
            const char *key = is_dev ? dev[i - sizeof top / sizeof top[0]] : top[i];
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(is_dev ? d : env, key);
            char dk[64];
            snprintf(dk, sizeof dk, "%s%s", is_dev ? "device_" : "", key);
            cJSON *copy = v && !b.rc ? cJSON_Duplicate(v, 1) : NULL;
            if (copy && (cJSON_IsObject(copy) || cJSON_IsArray(copy))) {
                ev_status crc = ev_json_canon_numbers(copy);
                if (crc && !b.rc)
                    b.rc = crc;
            } else if (copy && cJSON_IsNumber(copy)) {
                char t[32];
                cJSON_Delete(copy);
                copy = ev_json_format_double(v->valuedouble, t) ? NULL : cJSON_CreateRaw(t);
            }
            if (v)
                ev_jb_put(&b, build, dk, copy);
            else
                ev_jb_null(&b, build, dk);
        }
    } else {
        ev_jb_null(&b, root, "build");
        ev_jb_str(&b, root, "build_reason", "no environment record");
    }
    const ev_proj_source *mk = find_source(in, "kernels/build.mk");
    if (mk) {
        cJSON *o = ev_jb_obj(&b, root, "kernel_flags");
        ev_jb_str(&b, o, "path", mk->path);
        ev_jb_str(&b, o, "sha256", mk->sha256);
    } else {
        ev_jb_null(&b, root, "kernel_flags");
        ev_jb_str(&b, root, "kernel_flags_reason", "kernels/build.mk not in the snapshot");
    }
    cJSON *ks = ev_jb_arr(&b, root, "kernel_sources");
    for (size_t i = 0; i < in->n_src; i++) {
        const ev_proj_source *x = &in->src[i];
        if (strncmp(x->path, "kernels/", 8))
            continue;
        cJSON *o = ev_jb_obj(&b, ks, NULL);
        ev_jb_str(&b, o, "path", x->path);
        ev_jb_str(&b, o, "sha256", x->sha256);
        ev_jb_i64(&b, o, "size", (int64_t)x->size);
    }
    /* The default entry's source: its bytes as the run snapshot holds them
     * (the same bytes as the bundle's sources/ member). */
    const ev_proj_source *des = find_source(in, EV_BUNDLE_DEFAULT_ENTRY_SOURCE);
    if (des) {
        cJSON *o = ev_jb_obj(&b, root, "default_entry_source");
        ev_jb_str(&b, o, "path", des->path);
        ev_jb_str(&b, o, "sha256", des->sha256);
    } else {
        ev_jb_null(&b, root, "default_entry_source");
        ev_jb_str(&b, root, "default_entry_source_reason",
                  EV_BUNDLE_DEFAULT_ENTRY_SOURCE " not in the snapshot");
    }
    ev_jb_str(&b, root, "source_tree_hash", in->tree_hash);
    /* the external kernels' build receipts, per invocation that built any */
    cJSON *ext = NULL;
    for (size_t i = 0; i < in->n_envs && !b.rc; i++) {
        cJSON *e = NULL;
        const cJSON *kr;
        if (!in->envs[i] || ev_json_parse(in->envs[i], strlen(in->envs[i]), 0, &e, NULL))
            continue;
        kr = cJSON_GetObjectItemCaseSensitive(e, "kernels");
        if (cJSON_IsArray(kr) && kr->child) {
            cJSON *o, *copy = cJSON_Duplicate(kr, 1);
            if (!ext)
                ext = ev_jb_arr(&b, root, "external_kernels");
            o = ev_jb_obj(&b, ext, NULL);
            ev_jb_i64(&b, o, "invocation", (int64_t)i);
            if (copy && ev_json_canon_numbers(copy) && !b.rc)
                b.rc = EV_ENOMEM;
            ev_jb_put(&b, o, "builds", copy);
        }
        cJSON_Delete(e);
    }
    cJSON_Delete(env);
    return ev_jb_finish(&b, root, out);
}

/* See projections.h. */
ev_status ev_provenance_build(const ev_prov_in *in, ev_buf *out)
{
    ev_jb b = {EV_OK};
    cJSON *root = cJSON_CreateObject();
    ev_jb_str(&b, root, "format", "evident-provenance/1");
    ev_jb_i64(&b, root, "run_id", in->run_id);
    ev_jb_str(&b, root, "git_commit", in->git_commit);
    ev_jb_bool(&b, root, "git_dirty", in->git_dirty);
    ev_jb_str(&b, root, "source_tree_hash", in->tree_hash);
    ev_jb_str(&b, root, "recorded_source_tree_hash", in->recorded_tree_hash);
    ev_jb_str(&b, root, "protocol_id", in->protocol_id);
    ev_jb_str(&b, root, "profile_id", in->n_invocations ? in->profile_ids[0] : NULL);
    cJSON *ids = ev_jb_arr(&b, root, "profile_ids");
    for (size_t i = 0; i < in->n_invocations; i++) {
        const char *x = in->profile_ids[i];
        int seen = !x;
        for (size_t k = 0; k < i && !seen; k++)
            seen = in->profile_ids[k] && !strcmp(in->profile_ids[k], x);
        if (!seen)
            ev_jb_put(&b, ids, NULL, b.rc ? NULL : cJSON_CreateString(x));
    }
    ev_jb_str(&b, root, "backend", in->backend);
    ev_jb_i64(&b, root, "seed", in->seed);
    ev_jb_ns(&b, root, "created_ns", in->created_ns);
    ev_jb_str(&b, root, "exporter", in->exporter);
    return ev_jb_finish(&b, root, out);
}

/* See projections.h. */
ev_status ev_proj_environment(const char *rec, cJSON **env, char *why, size_t cap)
{
    ev_err perr;
    ev_status prc;
    *env = NULL;
    if (!rec) {
        snprintf(why, cap, "no environment record");
        return EV_OK;
    }
    perr.msg[0] = '\0';
    ev_json_bounds bounds = {strlen(rec) / EV_MEMBER_BYTES_PER_VALUE + EV_MEMBER_VALUES_SLACK,
                             EV_MEMBER_STRING_MAX, 1};
    prc = ev_json_parse_bounded(rec, strlen(rec), 0, &bounds, NULL, env, &perr);
    if (!prc)
        prc = ev_json_canon_numbers(*env);
    if (!prc)
        return EV_OK;
    cJSON_Delete(*env);
    *env = NULL;
    snprintf(why, cap, "%s", perr.msg[0] ? perr.msg : ev_strerror(prc));
    return prc == EV_ENOMEM ? EV_ENOMEM : EV_OK;
}
