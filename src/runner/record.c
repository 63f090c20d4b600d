/*
 * record.c: writing and parsing the worker's line records (record.h).
 */
#include "record.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"

static const char *const type_names[EV_REC_COUNT] = {
    "hello", "skip",   "binding",     "validation", "cold",   "flush",
    "node",  "warmup", "calibration", "sample",     "device", "end",
};

const char *ev_rec_type_name(ev_rec_type t)
{
    return (unsigned)t < EV_REC_COUNT ? type_names[t] : "?";
}

cJSON *ev_rec_new(ev_rec_type t)
{
    cJSON *o = cJSON_CreateObject();

    if (o && !cJSON_AddStringToObject(o, "type", ev_rec_type_name(t))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Writes all n bytes of p to fd.  EV_EIO with err on failure. */
static ev_status write_all(int fd, const char *p, size_t n, ev_err *err)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return ev_err_set(err, EV_EIO, "record pipe: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    return EV_OK;
}

ev_status ev_rec_write(ev_rec_out *o, cJSON *rec, ev_err *err)
{
    ev_buf b = EV_BUF_INIT;
    ev_status rc;

    if (!rec)
        return ev_err_set(err, EV_ENOMEM, "record: out of memory");
    rc = ev_json_print(rec, 0, &b);
    if (rc) {
        ev_err_set(err, rc, "record: cannot serialise");
        goto out;
    }
    rc = write_all(o->fd, b.data, b.len, err);
    if (!rc)
        o->count++;
out:
    ev_buf_free(&b);
    cJSON_Delete(rec);
    return rc;
}

ev_status ev_rec_write_raw(ev_rec_out *o, const char *line, ev_err *err)
{
    return write_all(o->fd, line, strlen(line), err);
}

ev_status ev_rec_relay(ev_rec_out *o, const char *line, size_t n, ev_err *err)
{
    ev_status rc = write_all(o->fd, line, n, err);
    if (rc == EV_OK)
        rc = write_all(o->fd, "\n", 1, err);
    if (rc == EV_OK)
        o->count++;
    return rc;
}

ev_status ev_rec_parse(const char *line, size_t n, cJSON **out, ev_rec_type *type, ev_err *err)
{
    cJSON *root = NULL, *t;
    ev_status rc;

    rc = ev_json_parse(line, n, 0, &root, err);
    if (rc)
        return EV_EFORMAT;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return ev_err_set(err, EV_EFORMAT, "record is not a JSON object");
    }
    t = cJSON_GetObjectItemCaseSensitive(root, "type");
    if (!cJSON_IsString(t)) {
        cJSON_Delete(root);
        return ev_err_set(err, EV_EFORMAT, "record has no \"type\"");
    }
    for (int i = 0; i < EV_REC_COUNT; i++)
        if (!strcmp(t->valuestring, type_names[i])) {
            *out = root;
            *type = (ev_rec_type)i;
            return EV_OK;
        }
    rc = ev_err_set(err, EV_EFORMAT, "unknown record type '%.32s'", t->valuestring);
    cJSON_Delete(root);
    return rc;
}
