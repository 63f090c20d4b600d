/*
 * host_salt.c: finding or making a store's host-identity salt and hashing
 * with it (host_salt.h).
 */
#include "runner/host_salt.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "buf.h"
#include "json.h"
#include "runner/snapshot.h"
#include "sha256.h"

typedef struct salt_scan {
    int seen_env;                    /* an environment record was read */
    char salt[EV_HOST_SALT_HEX + 1]; /* its host_salt, or "" */
} salt_scan;

/* EV_Q_INVOCATIONS callback: takes the first environment record's
 * host_salt (stops at the first record). */
static ev_status on_invocation(void *ctx, const ev_row *row)
{
    salt_scan *sc = ctx;
    ev_invocation_rec inv;
    ev_row_invocation(row, &inv);
    const char *env = inv.env_json;
    if (sc->seen_env || !env)
        return EV_OK;
    sc->seen_env = 1;
    cJSON *t = cJSON_Parse(env);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(t, "host_salt");
    if (cJSON_IsString(s) && strlen(s->valuestring) == EV_HOST_SALT_HEX)
        memcpy(sc->salt, s->valuestring, EV_HOST_SALT_HEX + 1);
    cJSON_Delete(t);
    return EV_OK;
}

typedef struct run_list {
    int64_t ids[64];
    size_t n;
} run_list;

/* EV_Q_RUNS callback: collects the first 64 run ids. */
static ev_status on_run(void *ctx, const ev_row *row)
{
    run_list *l = ctx;
    ev_run_rec run;
    ev_row_run(row, &run);
    if (l->n < sizeof l->ids / sizeof l->ids[0])
        l->ids[l->n++] = run.run_id;
    return EV_OK;
}

ev_status ev_host_salt_for(ev_store *st, int64_t run_id, char salt_hex[EV_HOST_SALT_HEX + 1], ev_err *err)
{
    salt_scan sc = {0, ""};
    ev_status rc = ev_store_query(st, EV_Q_INVOCATIONS, run_id, on_invocation, &sc, err);
    if (rc)
        return rc;
    if (sc.seen_env) { /* this run's salt, constant or not */
        memcpy(salt_hex, sc.salt, EV_HOST_SALT_HEX + 1);
        return EV_OK;
    }
    run_list runs = {{0}, 0};
    if ((rc = ev_store_query(st, EV_Q_RUNS, 0, on_run, &runs, err)))
        return rc;
    for (size_t i = 0; i < runs.n; i++) {
        salt_scan other = {0, ""};
        if ((rc = ev_store_query(st, EV_Q_INVOCATIONS, runs.ids[i], on_invocation, &other, err)))
            return rc;
        if (other.salt[0]) {
            memcpy(salt_hex, other.salt, EV_HOST_SALT_HEX + 1);
            return EV_OK;
        }
    }
    uint8_t raw[EV_HOST_SALT_HEX / 2];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return ev_err_set(err, EV_EIO, "no random bytes for the host salt: %s", strerror(errno));
    ev_hex_encode(raw, sizeof raw, salt_hex);
    salt_hex[EV_HOST_SALT_HEX] = '\0';
    return EV_OK;
}

ev_status ev_host_hash_salted(const char *salt_hex, const char *id, char hex[65])
{
    if (!salt_hex || !salt_hex[0])
        return ev_host_hash(id, hex);
    static const char tag[] = "evident-host-v2";
    ev_buf b = EV_BUF_INIT;
    ev_status rc;
    if (!(rc = ev_buf_append(&b, tag, sizeof tag)) &&
        !(rc = ev_buf_append(&b, salt_hex, strlen(salt_hex) + 1)) && !(rc = ev_buf_puts(&b, id)))
        rc = ev_sha256_hex(b.data, b.len, hex);
    ev_buf_free(&b);
    return rc;
}
