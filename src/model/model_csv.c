/*
 * model_csv.c: reads the observation table of `evident fit --observations`
 * (header op,rows,cols,dtype,default_rows,schedule,median_us[,role]) into
 * ev_obs records, refusing any malformed cell with its line.  Relations
 * between rows (duplicates, missing default, geometry count) are checked
 * by ev_model_fit, which names the line too (ev_obs.line).
 */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

static const char *const obs_header[7] = {"op",           "rows",     "cols",     "dtype",
                                          "default_rows", "schedule", "median_us"};

/* Copies text into dst[cap]; returns -1 when it does not fit (dst untouched). */
static int put_text(char *dst, size_t cap, const char *text)
{
    size_t l = strlen(text);
    if (l >= cap)
        return -1;
    memcpy(dst, text, l + 1);
    return 0;
}

/* Reads the current record into *o.  EV_EFORMAT naming the line. */
static ev_status read_row(const ev_csv *c, ev_obs *o, ev_err *err)
{
    ev_status rc;
    size_t line = ev_csv_line(c);
    memset(o, 0, sizeof *o);
    o->line = (int64_t)line;
    ev_op op_w;
    ev_dtype dt_w;
    ev_role role_w;
    const char *op = ev_csv_field(c, 0);
    if (ev_op_parse(op, &op_w) || put_text(o->op, sizeof o->op, op))
        return ev_err_set(err, EV_EFORMAT, "line %zu: unknown op '%.40s' (one of %s)", line, op,
                          ev_op_words());
    const char *dt = ev_csv_field(c, 3);
    if (ev_dtype_parse(dt, &dt_w) || put_text(o->dtype, sizeof o->dtype, dt))
        return ev_err_set(err, EV_EFORMAT, "line %zu: unknown dtype '%.40s' (one of %s)", line, dt,
                          ev_dtype_words());
    if ((rc = ev_csv_get_i64(c, 1, &o->rows, err)) || (rc = ev_csv_get_i64(c, 2, &o->cols, err)) ||
        (rc = ev_csv_get_i64(c, 4, &o->default_rows, err)))
        return rc == EV_ENOMEM ? rc : EV_EFORMAT;
    if (o->rows < 1)
        return ev_err_set(err, EV_EFORMAT, "line %zu: rows (R) %lld is below 1", line, (long long)o->rows);
    if (o->cols < 1)
        return ev_err_set(err, EV_EFORMAT, "line %zu: cols (N) %lld is below 1", line, (long long)o->cols);
    if (o->default_rows < 1)
        return ev_err_set(err, EV_EFORMAT, "line %zu: default_rows (B) %lld is below 1", line,
                          (long long)o->default_rows);
    const char *sc = ev_csv_field(c, 5);
    if (ev_sched_parse(sc, &o->sched))
        return ev_err_set(err, EV_EFORMAT, "line %zu: unknown schedule '%.40s' (one of %s)", line, sc,
                          ev_sched_words());
    const char *mt = ev_csv_field(c, 6);
    double m;
    if ((rc = ev_csv_get_double(c, 6, &m, err)))
        return rc == EV_ENOMEM ? rc : EV_EFORMAT;
    if (isnan(m))
        return ev_err_set(err, EV_EFORMAT, "line %zu: median_us '%.40s' is NaN", line, mt);
    if (!(m > 0.0) || !isfinite(m))
        return ev_err_set(err, EV_EFORMAT, "line %zu: median_us '%.40s' is not positive and finite", line,
                          mt);
    o->median_us = m;
    o->role = EV_ROLE_CALIBRATION;
    if (ev_csv_ncols(c) == 8) {
        const char *ro = ev_csv_field(c, 7);
        if (!ev_role_parse(ro, &role_w))
            o->role = role_w;
        else if (strcmp(ro, ""))
            return ev_err_set(err, EV_EFORMAT, "line %zu: unknown role '%.40s' (one of %s)", line, ro,
                              ev_role_words());
    }
    return EV_OK;
}

/* See model.h.  OUT: *obs (malloc'd), *n_obs; untouched on failure. */
ev_status ev_obs_from_csv(const char *p, size_t n, ev_obs **obs, size_t *n_obs, ev_err *err)
{
    ev_status rc = EV_OK;
    ev_csv *c = NULL;
    ev_obs *v = NULL;
    size_t len = 0, cap = 0;
    if ((rc = ev_csv_open(p, n, obs_header, 7, "role", &c, err)))
        goto out;
    for (;;) {
        int have = 0;
        if ((rc = ev_csv_next(c, &have, err)))
            goto out;
        if (!have)
            break;
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 64, bytes;
            if (ev_size_mul(ncap, sizeof *v, &bytes)) {
                rc = ev_err_set(err, EV_ENOMEM, "observations: too many rows");
                goto out;
            }
            ev_obs *nv = realloc(v, bytes);
            if (!nv) {
                rc = ev_err_set(err, EV_ENOMEM, "observations: out of memory");
                goto out;
            }
            v = nv;
            cap = ncap;
        }
        if ((rc = read_row(c, &v[len], err)))
            goto out;
        len++;
    }
    if (len == 0) {
        rc = ev_err_set(err, EV_EFORMAT, "observations: no rows after the header");
        goto out;
    }
    *obs = v;
    *n_obs = len;
    v = NULL;
out:
    ev_csv_close(c);
    free(v);
    return rc;
}
