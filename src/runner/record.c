/*
 * record.c: writing and parsing the worker's line records (record.h).
 */
#include "record.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"

static const char *const type_names[EV_REC_COUNT] = {
    "hello",       "skip",   "binding", "validation", "cold",   "flush",  "node", "warmup",
    "calibration", "sample", "check",   "opcheck",    "device", "opkept", "end",
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

/* ---- the data records' codecs (record.h) ---- */

/* The kinds of a record's fields. */
typedef enum fkind {
    FK_STR,  /* const char * */
    FK_I64,  /* int64_t */
    FK_DBL,  /* double */
    FK_BOOL, /* int: true or false */
    FK_CLK   /* int64_t: an integer, or null or absent (-1: unavailable) */
} fkind;

/* One field: its key, its kind and where it is in the row. */
typedef struct rfield {
    const char *key;
    fkind kind;
    size_t off;
} rfield;

#define F(kind, type, member)                                                                                \
    {                                                                                                        \
#member, kind, offsetof(type, member)                                                                \
    }
static const rfield binding_f[] = {
    F(FK_STR, ev_binding_row, op),        F(FK_STR, ev_binding_row, dtype),
    F(FK_I64, ev_binding_row, rows),      F(FK_I64, ev_binding_row, cols),
    F(FK_I64, ev_binding_row, stride),    F(FK_I64, ev_binding_row, in_span),
    F(FK_I64, ev_binding_row, out_span),  F(FK_I64, ev_binding_row, in_align),
    F(FK_I64, ev_binding_row, out_align), F(FK_I64, ev_binding_row, threads),
};
static const rfield validation_f[] = {
    F(FK_STR, ev_validation_row, stage),       F(FK_BOOL, ev_validation_row, passed),
    F(FK_DBL, ev_validation_row, max_abs_err), F(FK_DBL, ev_validation_row, bound),
    F(FK_I64, ev_validation_row, mismatches),  F(FK_STR, ev_validation_row, output_sha256),
};
static const rfield cold_f[] = {F(FK_STR, ev_rec_cold, name), F(FK_I64, ev_rec_cold, elapsed_ns)};
static const rfield flush_f[] = {F(FK_I64, ev_rec_flush, flush_bytes), F(FK_I64, ev_rec_flush, cache_bytes)};
static const rfield node_f[] = {{"index", FK_I64, offsetof(ev_node_row, node_index)},
                                F(FK_STR, ev_node_row, function)};
static const rfield warmup_f[] = {F(FK_DBL, ev_rec_warmup, target_ms), F(FK_DBL, ev_rec_warmup, elapsed_ms),
                                  F(FK_I64, ev_rec_warmup, replays)};
static const rfield calib_f[] = {F(FK_I64, ev_rec_calib, step), F(FK_I64, ev_rec_calib, replays),
                                 F(FK_DBL, ev_rec_calib, elapsed_ms), F(FK_BOOL, ev_rec_calib, chosen),
                                 F(FK_DBL, ev_rec_calib, target_ms)};
static const rfield sample_f[] = {
    F(FK_STR, ev_sample_row, timing),     {"index", FK_I64, offsetof(ev_sample_row, sample_index)},
    F(FK_I64, ev_sample_row, replays),    F(FK_I64, ev_sample_row, ops_per_graph),
    F(FK_DBL, ev_sample_row, elapsed_ms), F(FK_CLK, ev_sample_row, sm_clock_mhz),
};
static const rfield check_f[] = {
    {"set", FK_I64, offsetof(ev_sample_check_row, input_set)},
    {"after", FK_I64, offsetof(ev_sample_check_row, after_sample)},
    F(FK_BOOL, ev_sample_check_row, passed),
    F(FK_DBL, ev_sample_check_row, max_abs_err),
    F(FK_DBL, ev_sample_check_row, bound),
    F(FK_I64, ev_sample_check_row, mismatches),
    F(FK_STR, ev_sample_check_row, output_sha256),
};
static const rfield opcheck_f[] = {
    F(FK_STR, ev_op_check_row, timing),     {"index", FK_I64, offsetof(ev_op_check_row, sample_index)},
    F(FK_I64, ev_op_check_row, replay_end), F(FK_I64, ev_op_check_row, replays),
    F(FK_I64, ev_op_check_row, ops),        F(FK_I64, ev_op_check_row, rows),
    F(FK_I64, ev_op_check_row, variants),   F(FK_STR, ev_op_check_row, tag),
    F(FK_BOOL, ev_op_check_row, passed),
};
static const rfield opkept_f[] = {
    F(FK_I64, ev_op_kept_row, op),
    F(FK_I64, ev_op_kept_row, replay),
    F(FK_BOOL, ev_op_kept_row, passed),
    F(FK_DBL, ev_op_kept_row, max_abs_err),
    F(FK_DBL, ev_op_kept_row, bound),
    F(FK_I64, ev_op_kept_row, mismatches),
    F(FK_STR, ev_op_kept_row, output_sha256),
};
#undef F

/* A data record's fields. */
typedef struct rcodec {
    const rfield *f;
    size_t n;
} rcodec;

#define CODEC(f)                                                                                             \
    {                                                                                                        \
        f, sizeof f / sizeof f[0]                                                                            \
    }
static const rcodec codecs[EV_REC_COUNT] = {
    [EV_REC_BINDING] = CODEC(binding_f),   [EV_REC_VALIDATION] = CODEC(validation_f),
    [EV_REC_COLD] = CODEC(cold_f),         [EV_REC_FLUSH] = CODEC(flush_f),
    [EV_REC_NODE] = CODEC(node_f),         [EV_REC_WARMUP] = CODEC(warmup_f),
    [EV_REC_CALIBRATION] = CODEC(calib_f), [EV_REC_SAMPLE] = CODEC(sample_f),
    [EV_REC_CHECK] = CODEC(check_f),       [EV_REC_OPCHECK] = CODEC(opcheck_f),
    [EV_REC_OPKEPT] = CODEC(opkept_f),
};
#undef CODEC

/* Reads an optional boolean member; -1 when missing or not a boolean. */
static int get_bool(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsBool(it) ? cJSON_IsTrue(it) : -1;
}

cJSON *ev_rec_encode(ev_rec_type t, const ev_rec_row *row)
{
    if ((unsigned)t >= EV_REC_COUNT || !codecs[t].f)
        return NULL;
    cJSON *r = ev_rec_new(t);
    ev_status rc = r ? EV_OK : EV_ENOMEM;
    for (size_t i = 0; i < codecs[t].n && !rc; i++) {
        const rfield *f = &codecs[t].f[i];
        const void *p = (const char *)row + f->off;
        switch (f->kind) {
        case FK_STR:
            rc = ev_json_add_str(r, f->key, *(const char *const *)p);
            break;
        case FK_I64:
            rc = ev_json_add_i64(r, f->key, *(const int64_t *)p);
            break;
        case FK_DBL:
            rc = ev_json_add_double(r, f->key, *(const double *)p);
            break;
        case FK_BOOL:
            rc = cJSON_AddBoolToObject(r, f->key, *(const int *)p) ? EV_OK : EV_ENOMEM;
            break;
        case FK_CLK:
            rc = *(const int64_t *)p < 0 ? (cJSON_AddNullToObject(r, f->key) ? EV_OK : EV_ENOMEM)
                                         : ev_json_add_i64(r, f->key, *(const int64_t *)p);
            break;
        }
    }
    if (rc) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

int ev_rec_decode(ev_rec_type t, const cJSON *r, ev_rec_row *row, ev_err *e)
{
    memset(row, 0, sizeof *row);
    if ((unsigned)t >= EV_REC_COUNT || !codecs[t].f)
        return 0;
    for (size_t i = 0; i < codecs[t].n; i++) {
        const rfield *f = &codecs[t].f[i];
        void *p = (char *)row + f->off;
        const cJSON *it;
        int v;
        switch (f->kind) {
        case FK_STR:
            if (ev_json_get_str(r, f->key, (const char **)p, e))
                return -1;
            break;
        case FK_I64:
            if (ev_json_get_i64(r, f->key, (int64_t *)p, e))
                return -1;
            break;
        case FK_DBL:
            if (ev_json_get_double(r, f->key, (double *)p, e))
                return -1;
            break;
        case FK_BOOL:
            if ((v = get_bool(r, f->key)) < 0) {
                ev_err_set(e, EV_EFORMAT, "%s: must be true or false", f->key);
                return -1;
            }
            *(int *)p = v;
            break;
        case FK_CLK:
            *(int64_t *)p = -1;
            it = cJSON_GetObjectItemCaseSensitive(r, f->key);
            if (it && !cJSON_IsNull(it) && ev_json_get_i64(r, f->key, (int64_t *)p, e))
                return -1;
            break;
        }
    }
    return 0;
}
