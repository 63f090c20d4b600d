/*
 * protocol.c: strict parsing of protocol files (protocol.h).  The bytes go
 * through the strict JSON lexer first (src/common/json.h, any finite
 * decimal accepted); then every object is walked key by key, so an unknown
 * key, a wrong type or an out-of-range value is refused with its path
 * ("cases[3].rows: must be >= 0").  Defaults are docs/runner.md's.
 */
#include "protocol.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "model/model.h"
#include "sha256.h"
#include "store/store.h"

#define MAX_EXACT_INT 9007199254740992.0 /* 2^53 */

/* Returns 1 when key is one of the NULL-terminated names. */
static int key_known(const char *key, const char *const *names)
{
    for (size_t i = 0; names[i]; i++)
        if (!strcmp(key, names[i]))
            return 1;
    return 0;
}

/* Refuses a non-object or an object with a key outside names.  path names
 * the object ("" for the top). */
static ev_status check_object(const cJSON *obj, const char *path, const char *const *names, ev_err *err)
{
    const cJSON *it;

    if (!cJSON_IsObject(obj))
        return ev_err_set(err, EV_EFORMAT, "%s: must be an object", path[0] ? path : "protocol");
    cJSON_ArrayForEach(it, obj)
    {
        if (!key_known(it->string, names))
            return ev_err_set(err, EV_EFORMAT, "%s%s%s: unknown key", path, path[0] ? "." : "", it->string);
    }
    return EV_OK;
}

/* Reads an optional integer member in [lo, hi].  Writes *out only when the
 * member is present and valid; leaves the default otherwise. */
static ev_status get_int(const cJSON *obj, const char *path, const char *key, int required, int64_t lo,
                         int64_t hi, int64_t *out, ev_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    const char *dot = path[0] ? "." : "";
    double v;

    if (!it) {
        if (required)
            return ev_err_set(err, EV_EFORMAT, "%s%s%s: missing", path, dot, key);
        return EV_OK;
    }
    if (!cJSON_IsNumber(it))
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: must be an integer", path, dot, key);
    v = it->valuedouble;
    if (!isfinite(v) || v != floor(v))
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: must be an integer", path, dot, key);
    if (fabs(v) >= MAX_EXACT_INT) /* 2^53 + 1 reads as 2^53: refuse rather than round */
        return ev_err_set(err, EV_EFORMAT,
                          "%s%s%s: must be below 2^53 in magnitude (a JSON number that large cannot be read "
                          "exactly)",
                          path, dot, key);
    if (v < (double)lo)
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: must be >= %lld", path, dot, key, (long long)lo);
    if (v > (double)hi)
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: must be <= %lld", path, dot, key, (long long)hi);
    *out = (int64_t)v;
    return EV_OK;
}

/* Reads an optional finite number in [lo, hi] (lo_open: strictly above lo). */
static ev_status get_num(const cJSON *obj, const char *path, const char *key, double lo, int lo_open,
                         double hi, double *out, ev_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    const char *dot = path[0] ? "." : "";
    double v;

    if (!it)
        return EV_OK;
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: must be a number", path, dot, key);
    v = it->valuedouble;
    if (lo_open ? !(v > lo) : !(v >= lo))
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: must be %s %.17g", path, dot, key,
                          lo_open ? ">" : ">=", lo);
    if (!(v <= hi))
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: must be <= %.17g", path, dot, key, hi);
    *out = v;
    return EV_OK;
}

/* Reads an optional boolean. */
static ev_status get_bool(const cJSON *obj, const char *path, const char *key, int *out, ev_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

    if (!it)
        return EV_OK;
    if (!cJSON_IsBool(it))
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: must be true or false", path, path[0] ? "." : "", key);
    *out = cJSON_IsTrue(it) ? 1 : 0;
    return EV_OK;
}

/* Reads a string member that must be one of choices (NULL-terminated) into
 * out[cap].  Missing: an error when required, else out untouched. */
static ev_status get_choice(const cJSON *obj, const char *path, const char *key, int required,
                            const char *const *choices, char *out, size_t cap, ev_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    const char *dot = path[0] ? "." : "";

    if (!it) {
        if (required)
            return ev_err_set(err, EV_EFORMAT, "%s%s%s: missing", path, dot, key);
        return EV_OK;
    }
    if (!cJSON_IsString(it))
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: must be a string", path, dot, key);
    if (!key_known(it->valuestring, choices))
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: '%.40s' is not allowed", path, dot, key, it->valuestring);
    if (strlen(it->valuestring) >= cap)
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: too long", path, dot, key);
    memcpy(out, it->valuestring, strlen(it->valuestring) + 1);
    return EV_OK;
}

/* Reads the string member key of obj into out[cap] when it is a word of a
 * vocabulary list (parse: the list's parser, words: its words for the
 * message).  Missing: an error when required, else out untouched. */
static ev_status get_word(const cJSON *obj, const char *path, const char *key, int required,
                          int (*parse)(const char *, void *), const char *words, char *out, size_t cap,
                          ev_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    const char *dot = path[0] ? "." : "";
    union {
        ev_op op;
        ev_dtype dt;
        ev_role role;
    } w;

    if (!it) {
        if (required)
            return ev_err_set(err, EV_EFORMAT, "%s%s%s: missing", path, dot, key);
        return EV_OK;
    }
    if (!cJSON_IsString(it))
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: must be a string", path, dot, key);
    if (parse(it->valuestring, &w))
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: '%.40s' is not allowed (one of %s)", path, dot, key,
                          it->valuestring, words);
    if (strlen(it->valuestring) >= cap)
        return ev_err_set(err, EV_EFORMAT, "%s%s%s: too long", path, dot, key);
    memcpy(out, it->valuestring, strlen(it->valuestring) + 1);
    return EV_OK;
}

/* The vocabulary's parsers with an untyped output (get_word). */
static int parse_op(const char *name, void *out)
{
    return ev_op_parse(name, out);
}
static int parse_dtype(const char *name, void *out)
{
    return ev_dtype_parse(name, out);
}
static int parse_role(const char *name, void *out)
{
    return ev_role_parse(name, out);
}

/* Parses cases[i] into *c. */
static ev_status parse_case(const cJSON *obj, size_t i, ev_proto_case *c, ev_err *err)
{
    static const char *const keys[] = {"op", "rows", "cols", "stride", "dtype", "default_rows", "role", NULL};
    char path[32];
    ev_status rc;
    ev_dtype dt = EV_DTYPE_FP32;
    size_t bytes;

    snprintf(path, sizeof path, "cases[%zu]", i);
    if ((rc = check_object(obj, path, keys, err)))
        return rc;
    snprintf(c->role, sizeof c->role, "%s", ev_role_name(EV_ROLE_CALIBRATION)); /* when it names none */
    c->stride = -1;
    c->default_rows = EV_PROTO_DEFAULT_B;
    if ((rc = get_word(obj, path, "op", 1, parse_op, ev_op_words(), c->op, sizeof c->op, err)) ||
        (rc = get_int(obj, path, "rows", 1, 0, INT64_C(1) << 31, &c->rows, err)) ||
        (rc = get_int(obj, path, "cols", 1, 1, INT64_C(1) << 31, &c->cols, err)) ||
        (rc = get_int(obj, path, "stride", 0, 1, INT64_C(1) << 32, &c->stride, err)) ||
        (rc = get_word(obj, path, "dtype", 1, parse_dtype, ev_dtype_words(), c->dtype, sizeof c->dtype,
                       err)) ||
        (rc = get_int(obj, path, "default_rows", 0, 1, 1024, &c->default_rows, err)) ||
        (rc = get_word(obj, path, "role", 0, parse_role, ev_role_words(), c->role, sizeof c->role, err)))
        return rc;
    (void)ev_dtype_parse(c->dtype, &dt);
    if (c->stride == -1)
        c->stride = c->cols;
    if (c->stride < c->cols)
        return ev_err_set(err, EV_EFORMAT, "%s.stride: must be >= cols (%lld)", path, (long long)c->cols);
    /* The input span must be addressable: rows x stride x size. */
    if (ev_size_mul((size_t)c->rows, (size_t)c->stride, &bytes) ||
        ev_size_mul(bytes, ev_dtype_size(dt), &bytes) || bytes > EV_PROTO_MAX_CASE_BYTES)
        return ev_err_set(err, EV_EFORMAT,
                          "%s: rows x stride x element size must be <= 64 GiB (one case's input; more than "
                          "any single device holds)",
                          path);
    return EV_OK;
}

/* Parses reference.<backend> into *r (defaults already set). */
static ev_status parse_ref(const cJSON *obj, const char *backend, ev_proto_ref *r, ev_err *err)
{
    static const char *const cuda_keys[] = {"ceiling_bytes",        "ceiling_ops_per_graph",
                                            "flush_cache_multiple", "flush_max_bytes",
                                            "variant_budget_bytes", NULL};
    static const char *const cpu_keys[] = {"ceiling_cache_multiple",
                                           "ceiling_max_bytes",
                                           "ceiling_ops_per_graph",
                                           "flush_cache_multiple",
                                           "flush_max_bytes",
                                           "variant_budget_bytes",
                                           NULL};
    int cuda = !strcmp(backend, "cuda");
    char path[32];
    ev_status rc;

    snprintf(path, sizeof path, "reference.%s", backend);
    if ((rc = check_object(obj, path, cuda ? cuda_keys : cpu_keys, err)))
        return rc;
    if (cuda) {
        if ((rc = get_int(obj, path, "ceiling_bytes", 0, INT64_C(1) << 30, INT64_C(1) << 40,
                          &r->ceiling_bytes, err)))
            return rc;
    } else {
        if ((rc = get_int(obj, path, "ceiling_cache_multiple", 0, 8, 64, &r->ceiling_cache_multiple, err)) ||
            (rc =
                 get_int(obj, path, "ceiling_max_bytes", 0, 0, INT64_C(1) << 40, &r->ceiling_max_bytes, err)))
            return rc;
        if (r->ceiling_max_bytes && r->ceiling_max_bytes < (INT64_C(1) << 20))
            return ev_err_set(err, EV_EFORMAT, "%s.ceiling_max_bytes: must be 0 (no cap) or >= 1048576",
                              path);
    }
    if ((rc = get_int(obj, path, "ceiling_ops_per_graph", 0, 1, 100000, &r->ceiling_ops_per_graph, err)) ||
        (rc = get_int(obj, path, "flush_cache_multiple", 0, 2, 64, &r->flush_cache_multiple, err)) ||
        (rc = get_int(obj, path, "flush_max_bytes", 0, 0, INT64_C(1) << 40, &r->flush_max_bytes, err)) ||
        (rc = get_int(obj, path, "variant_budget_bytes", 0, INT64_C(1) << 20, INT64_C(1) << 40,
                      &r->variant_budget_bytes, err)))
        return rc;
    if (r->flush_max_bytes && r->flush_max_bytes < (INT64_C(1) << 20))
        return ev_err_set(err, EV_EFORMAT, "%s.flush_max_bytes: must be 0 (no cap) or >= 1048576", path);
    return EV_OK;
}

/* Parses fault_arms[i] into *f (allocating its case list). */
static ev_status parse_fault(const cJSON *obj, size_t i, size_t n_cases, ev_proto_fault *f, ev_err *err)
{
    static const char *const keys[] = {"name", "kind",  "code",      "signal",  "samples", "factor", "mhz",
                                       "when", "cases", "processes", "reasons", "ms",      NULL};
    static const char *const kinds[] = {
        "exit",           "signal",  "hang",     "garbage",   "stop-after", "wrong-output",
        "wrong-schedule", "overrun", "throttle", "contended", "throttled",  "no-device",
        "late",           "orphan",  "fast",     "drift",     NULL};
    static const char *const whens[] = {"always", "original", NULL};
    const cJSON *name, *cases, *it;
    char path[32], kind[16] = "", when[16] = "always";
    const char *need = NULL, *pre = ev_arm_kind_prefix(EV_ARM_FAULT);
    ev_status rc;
    size_t k = 0;

    snprintf(path, sizeof path, "fault_arms[%zu]", i);
    if ((rc = check_object(obj, path, keys, err)))
        return rc;
    name = cJSON_GetObjectItemCaseSensitive(obj, "name");
    if (!name)
        return ev_err_set(err, EV_EFORMAT, "%s.name: missing", path);
    if (!cJSON_IsString(name))
        return ev_err_set(err, EV_EFORMAT, "%s.name: must be a string", path);
    if (strncmp(name->valuestring, pre, strlen(pre)) || strlen(name->valuestring) >= sizeof f->name ||
        strlen(name->valuestring) <= strlen(pre) ||
        strspn(name->valuestring, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(name->valuestring))
        return ev_err_set(err, EV_EFORMAT, "%s.name: must be '%s' then [a-z0-9-], under %d characters", path,
                          pre, EV_PROTO_NAME_MAX);
    memcpy(f->name, name->valuestring, strlen(name->valuestring) + 1);
    if ((rc = get_choice(obj, path, "kind", 1, kinds, kind, sizeof kind, err)) ||
        (rc = get_choice(obj, path, "when", 0, whens, when, sizeof when, err)))
        return rc;
    f->original_only = !strcmp(when, "original");
    if (!strcmp(kind, "exit")) {
        f->kind = EV_FAULT_EXIT;
        need = "code";
        if ((rc = get_int(obj, path, "code", 1, 1, 255, &f->value, err)))
            return rc;
    } else if (!strcmp(kind, "signal")) {
        f->kind = EV_FAULT_SIGNAL;
        need = "signal";
        if ((rc = get_int(obj, path, "signal", 1, 1, 31, &f->value, err)))
            return rc;
    } else if (!strcmp(kind, "stop-after")) {
        f->kind = EV_FAULT_STOP_AFTER;
        need = "samples";
        if ((rc = get_int(obj, path, "samples", 1, 0, 1000, &f->value, err)))
            return rc;
    } else if (!strcmp(kind, "hang")) {
        f->kind = EV_FAULT_HANG;
    } else if (!strcmp(kind, "garbage")) {
        f->kind = EV_FAULT_GARBAGE;
    } else if (!strcmp(kind, "wrong-output")) {
        f->kind = EV_FAULT_WRONG_OUTPUT;
    } else if (!strcmp(kind, "overrun")) {
        f->kind = EV_FAULT_OVERRUN;
        need = "factor";
        if ((rc = get_int(obj, path, "factor", 1, 2, 1000, &f->value, err)))
            return rc;
    } else if (!strcmp(kind, "throttle")) {
        f->kind = EV_FAULT_THROTTLE;
        need = "mhz";
        if ((rc = get_int(obj, path, "mhz", 1, 1, 100000, &f->value, err)))
            return rc;
    } else if (!strcmp(kind, "contended")) {
        f->kind = EV_FAULT_CONTENDED;
        need = "processes";
        if ((rc = get_int(obj, path, "processes", 1, 1, 1000, &f->value, err)))
            return rc;
    } else if (!strcmp(kind, "throttled")) {
        /* reason bits as NVML defines them (sample_rules.h): any non-zero mask up to 2^40 */
        f->kind = EV_FAULT_THROTTLED;
        need = "reasons";
        if ((rc = get_int(obj, path, "reasons", 1, 1, INT64_C(1) << 40, &f->value, err)))
            return rc;
    } else if (!strcmp(kind, "no-device")) {
        f->kind = EV_FAULT_NO_DEVICE;
    } else if (!strcmp(kind, "orphan")) {
        f->kind = EV_FAULT_ORPHAN;
    } else if (!strcmp(kind, "late")) {
        f->kind = EV_FAULT_LATE;
        need = "ms";
        if ((rc = get_int(obj, path, "ms", 1, 1, 100000, &f->value, err)))
            return rc;
    } else if (!strcmp(kind, "fast")) {
        f->kind = EV_FAULT_FAST;
        need = "factor";
        if ((rc = get_int(obj, path, "factor", 1, 2, 1000, &f->value, err)))
            return rc;
    } else if (!strcmp(kind, "drift")) {
        f->kind = EV_FAULT_DRIFT;
        need = "factor";
        if ((rc = get_int(obj, path, "factor", 1, 2, 1000, &f->value, err)))
            return rc;
    } else {
        f->kind = EV_FAULT_WRONG_SCHEDULE;
    }
    /* A value key that does not belong to this kind is refused. */
    static const char *const value_keys[] = {"code", "signal",    "samples", "factor",
                                             "mhz",  "processes", "reasons", "ms"};
    for (size_t v = 0; v < 8; v++)
        if ((!need || strcmp(need, value_keys[v])) && cJSON_GetObjectItemCaseSensitive(obj, value_keys[v]))
            return ev_err_set(err, EV_EFORMAT, "%s.%s: not a field of kind '%s'", path, value_keys[v], kind);
    cases = cJSON_GetObjectItemCaseSensitive(obj, "cases");
    if (cases) {
        if (!cJSON_IsArray(cases) || cJSON_GetArraySize(cases) < 1)
            return ev_err_set(err, EV_EFORMAT, "%s.cases: must be a non-empty array of case indexes", path);
        f->n_cases = (size_t)cJSON_GetArraySize(cases);
        f->cases = calloc(f->n_cases, sizeof *f->cases);
        if (!f->cases)
            return ev_err_set(err, EV_ENOMEM, "%s.cases: out of memory", path);
        cJSON_ArrayForEach(it, cases)
        {
            double v = it->valuedouble;
            if (!cJSON_IsNumber(it) || v != floor(v) || v < 0 || v >= (double)n_cases)
                return ev_err_set(err, EV_EFORMAT, "%s.cases[%zu]: must be a case index in [0, %zu)", path, k,
                                  n_cases);
            for (size_t j = 0; j < k; j++)
                if (f->cases[j] == (int64_t)v)
                    return ev_err_set(err, EV_EFORMAT, "%s.cases[%zu]: duplicate case %lld", path, k,
                                      (long long)v);
            f->cases[k++] = (int64_t)v;
        }
    }
    return EV_OK;
}

/* Reads "rounds" (optional, default 1) with the reason for its bounds. */
static ev_status get_rounds(const cJSON *root, int64_t *out, ev_err *err)
{
    int64_t k = *out;
    ev_status rc = get_int(root, "", "rounds", 0, -(INT64_C(1) << 52), INT64_C(1) << 52, &k, err);
    if (rc)
        return rc;
    if (k < 1)
        return ev_err_set(err, EV_EFORMAT,
                          "rounds: %lld; must be at least 1 (each round measures every case and arm once, in "
                          "its own worker process)",
                          (long long)k);
    if (k > EV_PROTO_MAX_ROUNDS)
        return ev_err_set(
            err, EV_EFORMAT,
            "rounds: %lld; at most %d are accepted (each round is one worker process per case and "
            "arm; more rounds buy little once the interval over rounds is narrow)",
            (long long)k, EV_PROTO_MAX_ROUNDS);
    *out = k;
    return EV_OK;
}

/* Reads the optional "model_from" object into p->model_from. */
static ev_status get_model_from(const cJSON *root, ev_protocol *p, ev_err *err)
{
    static const char *const keys[] = {"bundle_sha256", "a0", "aP", "aD", NULL};
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "model_from"), *h;
    ev_proto_model *mf = &p->model_from;
    ev_status rc;

    if (!m)
        return EV_OK;
    if (!cJSON_IsObject(m))
        return ev_err_set(err, EV_EFORMAT, "model_from: must be an object");
    if ((rc = check_object(m, "model_from", keys, err)))
        return rc;
    h = cJSON_GetObjectItemCaseSensitive(m, "bundle_sha256");
    if (!cJSON_IsString(h) || strlen(h->valuestring) != 64 ||
        strspn(h->valuestring, "0123456789abcdef") != 64)
        return ev_err_set(
            err, EV_EFORMAT,
            "model_from.bundle_sha256: must be the SHA-256 of the bundle (64 lowercase hex digits)");
    if (!cJSON_GetObjectItemCaseSensitive(m, "a0") || !cJSON_GetObjectItemCaseSensitive(m, "aP") ||
        !cJSON_GetObjectItemCaseSensitive(m, "aD"))
        return ev_err_set(err, EV_EFORMAT, "model_from: needs the coefficients a0, aP and aD");
    if ((rc = get_num(m, "model_from", "a0", -1e300, 0, 1e300, &mf->a0, err)) ||
        (rc = get_num(m, "model_from", "aP", -1e300, 0, 1e300, &mf->aP, err)) ||
        (rc = get_num(m, "model_from", "aD", -1e300, 0, 1e300, &mf->aD, err)))
        return rc;
    memcpy(mf->bundle_sha256, h->valuestring, 65);
    mf->set = 1;
    return EV_OK;
}

/*
 * "model_schedules" into p->model_schedules (arms parsed first): absent
 * leaves EV_SCHEDS_DEFAULT; otherwise a non-empty array of distinct
 * schedule names (model/model.h), default among them, each one of arms.
 * EV_EFORMAT naming the entry and the rule.
 */
static ev_status get_model_schedules(const cJSON *root, ev_protocol *p, ev_err *err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "model_schedules"), *it;
    unsigned mask = 0;
    size_t i = 0;
    if (!arr)
        return EV_OK;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
        return ev_err_set(err, EV_EFORMAT, "model_schedules: must be a non-empty array of schedule names");
    cJSON_ArrayForEach(it, arr)
    {
        ev_sched s;
        int listed = 0;
        if (!cJSON_IsString(it))
            return ev_err_set(err, EV_EFORMAT, "model_schedules[%zu]: must be a string", i);
        if (ev_sched_parse(it->valuestring, &s))
            return ev_err_set(err, EV_EFORMAT, "model_schedules[%zu]: unknown schedule '%.40s'", i,
                              it->valuestring);
        if (mask & EV_SCHED_BIT(s))
            return ev_err_set(err, EV_EFORMAT, "model_schedules[%zu]: duplicate schedule '%s'", i,
                              it->valuestring);
        for (size_t a = 0; a < p->n_arms; a++)
            listed |= !strcmp(p->arms[a], it->valuestring);
        if (!listed)
            return ev_err_set(err, EV_EFORMAT, "model_schedules[%zu]: '%s' is not one of arms", i,
                              it->valuestring);
        mask |= EV_SCHED_BIT(s);
        i++;
    }
    if (!(mask & EV_SCHED_BIT(EV_SCHED_DEFAULT)))
        return ev_err_set(err, EV_EFORMAT, "model_schedules: must list default");
    p->model_schedules = mask;
    return EV_OK;
}

const char *ev_proto_default_arm(size_t i)
{
    switch (i) {
    case 0:
        return ev_sched_name(EV_SCHED_DEFAULT);
    case 1:
        return ev_sched_name(EV_SCHED_ROWS1);
    case 2:
        return ev_sched_name(EV_SCHED_ROWS2);
    case 3:
        return ev_arm_kind_name(EV_ARM_CUB);
    case 4:
        return ev_arm_kind_name(EV_ARM_TORCH);
    default:
        return NULL;
    }
}

/* Sets the defaults of docs/runner.md ("Protocol files") on a zeroed protocol (the default
 * profile). */
static void set_defaults(ev_protocol *p)
{
    p->seed = EV_PROTO_DEFAULT_SEED;
    p->reference_arms = 1;
    p->plan_schema = EV_STORE_VERSION;
    p->auto_arm = 1;
    p->samples = 7;
    p->ops_per_graph = 100;
    p->warmup_ms = 500;
    p->target_sample_ms = 100;
    p->cold_samples = 3;
    p->host_threads = 0;
    p->job_timeout_s = 600;
    p->retries = 1;
    p->rounds = 1;
    p->decision_threshold = 0.05;
    p->model_schedules = EV_SCHEDS_DEFAULT;
    p->sum_bound_factor = 1;
    p->sample_band = 0.5;
    p->clock_band = 0.9;
    p->ref_cuda.ceiling_bytes = INT64_C(1) << 30;
    p->ref_cuda.ceiling_ops_per_graph = 100;
    p->ref_cuda.flush_cache_multiple = 2;
    p->ref_cuda.variant_budget_bytes = INT64_C(2) << 30;
    p->ref_cpu.ceiling_cache_multiple = 8;
    p->ref_cpu.ceiling_ops_per_graph = 1;
    p->ref_cpu.flush_cache_multiple = 2;
    p->ref_cpu.variant_budget_bytes = INT64_C(256) << 20;
}

/* The top level's scalars: name, python, the booleans and numbers with their
 * bounds, cpu_priority, tolerances and the reference sizes. */
static ev_status parse_scalars(const cJSON *root, ev_protocol *p, ev_err *err)
{
    static const char *const tol_keys[] = {"sum_bound_factor", "sum_depth", "sample_band", "clock_band",
                                           NULL};
    static const char *const ref_keys[] = {"cuda", "cpu", NULL};
    const cJSON *it, *arr;
    ev_status rc;

    it = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (it) {
        if (!cJSON_IsString(it) || strlen(it->valuestring) >= sizeof p->name)
            return ev_err_set(err, EV_EFORMAT, "name: must be a string under %zu bytes", sizeof p->name);
        memcpy(p->name, it->valuestring, strlen(it->valuestring) + 1);
    }
    /* the interpreter of the run's python processes (ext_kernel.h) */
    it = cJSON_GetObjectItemCaseSensitive(root, "python");
    if (it) {
        if (!cJSON_IsString(it) || !it->valuestring[0] || strlen(it->valuestring) >= sizeof p->python ||
            strchr(it->valuestring, '\\'))
            return ev_err_set(err, EV_EFORMAT,
                              "python: must be an interpreter's name or path (relative to the protocol's "
                              "directory), under %zu bytes",
                              sizeof p->python);
        memcpy(p->python, it->valuestring, strlen(it->valuestring) + 1);
    }
    if ((rc = get_bool(root, "", "reference_arms", &p->reference_arms, err)) ||
        (rc = get_bool(root, "", "auto_arm", &p->auto_arm, err)) || (rc = get_model_from(root, p, err)) ||
        (rc = get_int(root, "", "samples", 0, 1, 1000, &p->samples, err)) ||
        (rc = get_int(root, "", "ops_per_graph", 0, 1, 100000, &p->ops_per_graph, err)) ||
        (rc = get_num(root, "", "warmup_ms", 0, 0, 3600e3, &p->warmup_ms, err)) ||
        (rc = get_num(root, "", "target_sample_ms", 0, 1, 600e3, &p->target_sample_ms, err)) ||
        (rc = get_int(root, "", "cold_samples", 0, 0, 1000, &p->cold_samples, err)) ||
        (rc = get_int(root, "", "host_threads", 0, 0, 1024, &p->host_threads, err)) ||
        (rc = get_num(root, "", "job_timeout_s", 0, 1, 86400, &p->job_timeout_s, err)) ||
        (rc = get_int(root, "", "seed", 0, 0, INT64_C(1) << 53, &p->seed, err)) ||
        (rc = get_int(root, "", "retries", 0, 0, 1, &p->retries, err)) ||
        (rc = get_rounds(root, &p->rounds, err)) ||
        (rc = get_num(root, "", "decision_threshold", 0, 0, 0.5, &p->decision_threshold, err)) ||
        (rc = get_bool(root, "", "allow_fault_arms", &p->allow_fault_arms, err)))
        return rc;

    if (p->model_from.set && !p->auto_arm)
        return ev_err_set(err, EV_EFORMAT, "model_from: is for the auto arm, and auto_arm is false");
    {
        static const char *const priorities[] = {"normal", "realtime", NULL};
        char prio[16] = "normal";
        if ((rc = get_choice(root, "", "cpu_priority", 0, priorities, prio, sizeof prio, err)))
            return rc;
        p->cpu_realtime = !strcmp(prio, "realtime");
    }

    it = cJSON_GetObjectItemCaseSensitive(root, "tolerances");
    if (it && ((rc = check_object(it, "tolerances", tol_keys, err)) ||
               (rc = get_num(it, "tolerances", "sum_bound_factor", 1, 0, 1000, &p->sum_bound_factor, err)) ||
               (rc = get_int(it, "tolerances", "sum_depth", 0, 1, INT64_C(1) << 40, &p->sum_depth, err)) ||
               (rc = get_num(it, "tolerances", "sample_band", 0, 1, 1, &p->sample_band, err)) ||
               (rc = get_num(it, "tolerances", "clock_band", 0, 0, 1, &p->clock_band, err))))
        return rc;
    it = cJSON_GetObjectItemCaseSensitive(root, "reference");
    if (it) {
        if ((rc = check_object(it, "reference", ref_keys, err)))
            return rc;
        arr = cJSON_GetObjectItemCaseSensitive(it, "cuda");
        if (arr && (rc = parse_ref(arr, "cuda", &p->ref_cuda, err)))
            return rc;
        arr = cJSON_GetObjectItemCaseSensitive(it, "cpu");
        if (arr && (rc = parse_ref(arr, "cpu", &p->ref_cpu, err)))
            return rc;
    }
    return EV_OK;
}

/* cpu_set: distinct CPU numbers in [0, 1023]. */
static ev_status parse_cpu_set(const cJSON *root, ev_protocol *p, ev_err *err)
{
    const cJSON *it, *arr;
    size_t i;

    arr = cJSON_GetObjectItemCaseSensitive(root, "cpu_set");
    if (arr) {
        if (!cJSON_IsArray(arr))
            return ev_err_set(err, EV_EFORMAT, "cpu_set: must be an array of CPU numbers");
        p->n_cpus = (size_t)cJSON_GetArraySize(arr);
        if (p->n_cpus) {
            p->cpu_set = calloc(p->n_cpus, sizeof *p->cpu_set);
            if (!p->cpu_set)
                return ev_err_set(err, EV_ENOMEM, "cpu_set: out of memory");
        }
        i = 0;
        cJSON_ArrayForEach(it, arr)
        {
            double v = it->valuedouble;
            if (!cJSON_IsNumber(it) || v != floor(v) || v < 0 || v > 1023)
                return ev_err_set(err, EV_EFORMAT, "cpu_set[%zu]: must be a CPU number in [0, 1023]", i);
            for (size_t j = 0; j < i; j++)
                if (p->cpu_set[j] == (int)v)
                    return ev_err_set(err, EV_EFORMAT, "cpu_set[%zu]: duplicate CPU %d", i, (int)v);
            p->cpu_set[i++] = (int)v;
        }
    }
    return EV_OK;
}

/* cases: a non-empty list within the bounds on cases and case-rounds;
 * a declared sum_depth no case's shallowest summation goes below. */
static ev_status parse_cases(const cJSON *root, ev_protocol *p, ev_err *err)
{
    const cJSON *it, *arr;
    ev_status rc;
    size_t i;

    arr = cJSON_GetObjectItemCaseSensitive(root, "cases");
    if (!arr)
        return ev_err_set(err, EV_EFORMAT, "cases: missing");
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
        return ev_err_set(err, EV_EFORMAT, "cases: must be a non-empty array");
    p->n_cases = (size_t)cJSON_GetArraySize(arr);
    if (p->n_cases > EV_PROTO_MAX_CASES)
        return ev_err_set(err, EV_EFORMAT,
                          "cases: %zu cases, at most %d (every case is a worker process per arm; split a "
                          "larger sweep into several protocols)",
                          p->n_cases, EV_PROTO_MAX_CASES);
    if ((double)p->n_cases * (double)p->rounds > EV_PROTO_MAX_CASE_ROUNDS)
        return ev_err_set(
            err, EV_EFORMAT,
            "rounds: %zu cases x %lld rounds is %.0f worker processes per arm, at most %d (fewer "
            "rounds or fewer cases)",
            p->n_cases, (long long)p->rounds, (double)p->n_cases * (double)p->rounds,
            EV_PROTO_MAX_CASE_ROUNDS);
    p->cases = calloc(p->n_cases, sizeof *p->cases);
    if (!p->cases)
        return ev_err_set(err, EV_ENOMEM, "cases: out of memory");
    i = 0;
    cJSON_ArrayForEach(it, arr)
    {
        if ((rc = parse_case(it, i, &p->cases[i], err)))
            return rc;
        i++;
    }

    /* No summation tree of N terms is shallower than ceil(log2 N): a
     * declared depth below that is a bound no arm could meet. */
    for (i = 0; p->sum_depth && i < p->n_cases; i++) {
        int64_t need = 0;
        while ((INT64_C(1) << need) < p->cases[i].cols)
            need++;
        ev_op op;
        if (!ev_op_parse(p->cases[i].op, &op) && ev_op_combine(op) == EV_COMBINE_SUM && p->sum_depth < need)
            return ev_err_set(err, EV_EFORMAT,
                              "tolerances.sum_depth: %lld is below ceil(log2(%lld)) = %lld, the depth of the "
                              "shallowest summation of cases[%zu]'s rows: no order could meet the bound",
                              (long long)p->sum_depth, (long long)p->cases[i].cols, (long long)need, i);
    }
    return EV_OK;
}

/* A subset (runner/subset.h): the original's id and each case's index
 * there, both or neither. */
static ev_status parse_subset(const cJSON *root, ev_protocol *p, ev_err *err)
{
    const cJSON *it, *arr;
    size_t i;

    /* A subset (runner/subset.h): the original's id and each case's index there. */
    it = cJSON_GetObjectItemCaseSensitive(root, "subset_of");
    arr = cJSON_GetObjectItemCaseSensitive(root, "subset_cases");
    if (!it != !arr)
        return ev_err_set(err, EV_EFORMAT, "subset_of and subset_cases: both or neither");
    if (it) {
        if (!cJSON_IsString(it) || strlen(it->valuestring) != 64 ||
            strspn(it->valuestring, "0123456789abcdef") != 64)
            return ev_err_set(err, EV_EFORMAT, "subset_of: must be a protocol id (64 lowercase hex digits)");
        if (!cJSON_IsArray(arr) || (size_t)cJSON_GetArraySize(arr) != p->n_cases)
            return ev_err_set(err, EV_EFORMAT, "subset_cases: must list one original index per case");
        double last = -1;
        i = 0;
        cJSON_ArrayForEach(it, arr)
        {
            double v = it->valuedouble;
            if (!cJSON_IsNumber(it) || v != floor(v) || v <= last || v >= EV_PROTO_MAX_CASES)
                return ev_err_set(err, EV_EFORMAT,
                                  "subset_cases[%zu]: must be an index above the one before it, below %d", i,
                                  EV_PROTO_MAX_CASES);
            last = v;
            i++;
        }
    }
    return EV_OK;
}

/* External kernels, then fault arms (refused unless allowed): both
 * before arms, so arms can name them. */
static ev_status parse_kernels_faults(const cJSON *root, ev_protocol *p, ev_err *err)
{
    const cJSON *it, *arr;
    ev_status rc;
    size_t i;

    /* External kernels before arms, so arms can name them. */
    arr = cJSON_GetObjectItemCaseSensitive(root, "kernels");
    if (arr) {
        p->kernels = calloc(EV_EXT_MAX_KERNELS, sizeof *p->kernels);
        if (!p->kernels)
            return ev_err_set(err, EV_ENOMEM, "kernels: out of memory");
        if ((rc = ev_ext_parse(arr, p->kernels, &p->n_kernels, err)))
            return rc;
    }

    /* Fault arms before arms, so arms can name them. */
    arr = cJSON_GetObjectItemCaseSensitive(root, "fault_arms");
    if (arr) {
        if (!p->allow_fault_arms)
            return ev_err_set(err, EV_EFORMAT, "fault_arms: refused unless allow_fault_arms is true");
        if (!cJSON_IsArray(arr))
            return ev_err_set(err, EV_EFORMAT, "fault_arms: must be an array");
        p->n_faults = (size_t)cJSON_GetArraySize(arr);
        if (p->n_faults) {
            p->faults = calloc(p->n_faults, sizeof *p->faults);
            if (!p->faults)
                return ev_err_set(err, EV_ENOMEM, "fault_arms: out of memory");
        }
        i = 0;
        cJSON_ArrayForEach(it, arr)
        {
            if ((rc = parse_fault(it, i, p->n_cases, &p->faults[i], err)))
                return rc;
            for (size_t j = 0; j < i; j++)
                if (!strcmp(p->faults[j].name, p->faults[i].name))
                    return ev_err_set(err, EV_EFORMAT, "fault_arms[%zu].name: duplicate '%s'", i,
                                      p->faults[i].name);
            i++;
        }
    }
    return EV_OK;
}

/* arms: a list of at most 64 distinct arm names, none that the runner
 * plans itself. */
static ev_status parse_arms(const cJSON *root, ev_protocol *p, ev_err *err)
{
    const cJSON *it, *arr;
    size_t i;

    arr = cJSON_GetObjectItemCaseSensitive(root, "arms");
    if (!arr) {
        /* the default profile: our model's schedules, the peers, and every
         * declared kernel, in declaration order */
        size_t nd = 0;
        while (ev_proto_default_arm(nd))
            nd++;
        p->arms = calloc(nd + p->n_kernels, sizeof *p->arms);
        if (!p->arms)
            return ev_err_set(err, EV_ENOMEM, "arms: out of memory");
        for (i = 0; i < nd; i++)
            snprintf(p->arms[p->n_arms++], sizeof p->arms[0], "%s", ev_proto_default_arm(i));
        for (i = 0; i < p->n_kernels; i++)
            snprintf(p->arms[p->n_arms++], sizeof p->arms[0], "%s", p->kernels[i].name);
    } else if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
        return ev_err_set(err, EV_EFORMAT, "arms: must be a non-empty array of arm names");
    else if ((size_t)cJSON_GetArraySize(arr) > 64)
        return ev_err_set(err, EV_EFORMAT, "arms: at most 64 arms");
    else if (!(p->arms = calloc((size_t)cJSON_GetArraySize(arr), sizeof *p->arms)))
        return ev_err_set(err, EV_ENOMEM, "arms: out of memory");
    i = 0;
    cJSON_ArrayForEach(it, arr)
    {
        ev_arm_kind kind;
        int64_t rows;
        if (!cJSON_IsString(it))
            return ev_err_set(err, EV_EFORMAT, "arms[%zu]: must be a string", i);
        if (ev_arm_classify(p, it->valuestring, &kind, &rows))
            return ev_err_set(err, EV_EFORMAT, "arms[%zu]: unknown arm '%.40s'", i, it->valuestring);
        if (kind == EV_ARM_AUTO || kind == EV_ARM_FLOOR || kind == EV_ARM_CEILING ||
            kind == EV_ARM_CEILING_L2)
            return ev_err_set(err, EV_EFORMAT, "arms[%zu]: '%s' is planned by the runner, not listed", i,
                              it->valuestring);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(p->arms[j], it->valuestring))
                return ev_err_set(err, EV_EFORMAT, "arms[%zu]: duplicate arm '%s'", i, it->valuestring);
        memcpy(p->arms[i], it->valuestring, strlen(it->valuestring) + 1);
        p->n_arms = ++i;
    }
    return EV_OK;
}

/* What the fields say together: a timeout that holds the warm-up and
 * samples twice, host_threads within 4 x cpu_set, every declared kernel
 * an arm with a geometry for its cases, a wrong-schedule fault arm only
 * beside auto. */
static ev_status check_whole(ev_protocol *p, ev_err *err)
{
    ev_status rc;

    /* A job must be able to take its warm-up and samples inside its timeout,
     * with as much again for start, calibration, cold samples and checks. */
    if (p->warmup_ms + (double)p->samples * p->target_sample_ms > p->job_timeout_s * 1000.0 / 2)
        return ev_err_set(err, EV_EFORMAT,
                          "job_timeout_s: %.17g s is less than twice the warm-up and samples it must hold "
                          "(%.17g ms + %lld x %.17g ms)",
                          p->job_timeout_s, p->warmup_ms, (long long)p->samples, p->target_sample_ms);
    if (p->host_threads && p->n_cpus && (size_t)p->host_threads > p->n_cpus * 4)
        return ev_err_set(err, EV_EFORMAT, "host_threads: must be <= 4 x the CPUs of cpu_set (%zu)",
                          p->n_cpus);
    for (size_t k = 0; k < p->n_kernels; k++) {
        int used = 0;
        for (size_t a = 0; a < p->n_arms; a++)
            used |= !strcmp(p->arms[a], p->kernels[k].name);
        if (!used)
            return ev_err_set(err, EV_EFORMAT, "kernels[%zu]: %s is declared but not one of arms", k,
                              p->kernels[k].name);
        /* the cuda geometry of every case the kernel is launched for (R = 0 launches nothing) */
        for (size_t c = 0; c < p->n_cases && p->kernels[k].grid[0]; c++) {
            const ev_proto_case *pc = &p->cases[c];
            int64_t g, b;
            if (pc->rows > 0 && ev_ext_entry_for(&p->kernels[k], pc->op, pc->dtype) &&
                (rc = ev_ext_geometry(&p->kernels[k], pc->rows, pc->cols, pc->stride, &g, &b, err))) {
                ev_err_prefix(err, "kernels[%zu] on cases[%zu]", k, c);
                return rc;
            }
        }
    }
    for (size_t f = 0; f < p->n_faults && !p->auto_arm; f++)
        if (p->faults[f].kind == EV_FAULT_WRONG_SCHEDULE)
            return ev_err_set(err, EV_EFORMAT,
                              "fault_arms: %s runs beside auto in the policy phase, and auto_arm is false",
                              p->faults[f].name);
    return EV_OK;
}

/* Parses the top-level object into *p (defaults set, zeroed lists). */
static ev_status parse_top(const cJSON *root, ev_protocol *p, ev_err *err)
{
    static const char *const keys[] = {"name",
                                       "cases",
                                       "arms",
                                       "reference_arms",
                                       "auto_arm",
                                       "model_from",
                                       "samples",
                                       "ops_per_graph",
                                       "warmup_ms",
                                       "target_sample_ms",
                                       "cold_samples",
                                       "cpu_set",
                                       "host_threads",
                                       "cpu_priority",
                                       "job_timeout_s",
                                       "seed",
                                       "retries",
                                       "rounds",
                                       "subset_of",
                                       "subset_cases",
                                       "decision_threshold",
                                       "tolerances",
                                       "reference",
                                       "allow_fault_arms",
                                       "fault_arms",
                                       "kernels",
                                       "python",
                                       "model_schedules",
                                       NULL};
    ev_status rc;

    if ((rc = check_object(root, "", keys, err)) || (rc = parse_scalars(root, p, err)) ||
        (rc = parse_cpu_set(root, p, err)) || (rc = parse_cases(root, p, err)) ||
        (rc = parse_subset(root, p, err)) || (rc = parse_kernels_faults(root, p, err)) ||
        (rc = parse_arms(root, p, err)) || (rc = get_model_schedules(root, p, err)))
        return rc;
    return check_whole(p, err);
}

ev_status ev_protocol_parse(const char *p, size_t n, ev_protocol *out, ev_err *err)
{
    ev_protocol proto;
    cJSON *root = NULL;
    ev_status rc;

    memset(&proto, 0, sizeof proto);
    memset(out, 0, sizeof *out);
    set_defaults(&proto);
    rc = ev_json_parse(p, n, 0, &root, err);
    if (rc) {
        ev_err_prefix(err, "protocol");
        rc = EV_EFORMAT;
        goto out;
    }
    rc = parse_top(root, &proto, err);
out:
    cJSON_Delete(root);
    if (rc)
        ev_protocol_free(&proto);
    else
        *out = proto;
    return rc;
}

void ev_protocol_free(ev_protocol *proto)
{
    if (!proto)
        return;
    for (size_t i = 0; i < proto->n_faults; i++)
        free(proto->faults[i].cases);
    free(proto->faults);
    free(proto->kernels);
    free(proto->cases);
    free(proto->arms);
    free(proto->cpu_set);
    memset(proto, 0, sizeof *proto);
}

ev_status ev_protocol_id(const void *p, size_t n, char hex[65])
{
    return ev_sha256_hex(p, n, hex);
}

int ev_arm_classify(const ev_protocol *proto, const char *arm, ev_arm_kind *kind, int64_t *rows)
{
    ev_arm_kind k;
    ev_sched s;

    /* the vocabulary's meaning of the name; a declared kind's arm only
     * where this protocol declares it */
    if (ev_arm_builtin(arm, &k, &s) || (k == EV_ARM_FAULT && !ev_protocol_fault(proto, arm)) ||
        (k == EV_ARM_EXTERNAL && !ev_protocol_kernel(proto, arm)))
        return -1;
    *kind = k;
    *rows = k == EV_ARM_NATIVE ? ev_sched_fixed_rows(s) : 0;
    return 0;
}

int ev_protocol_python(const ev_protocol *p, const char *over, const char *protocol_path, char *out,
                       size_t cap)
{
    const char *py = over && over[0] ? over : p && p->python[0] ? p->python : "python3";
    const char *slash = protocol_path ? strrchr(protocol_path, '/') : NULL;
    int n;
    if (py == over || py[0] == '/' || !strchr(py, '/') || !slash)
        n = snprintf(out, cap, "%s", py);
    else /* a relative path of the protocol's: from its directory */
        n = snprintf(out, cap, "%.*s/%s", (int)(slash - protocol_path), protocol_path, py);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* Adds the reference sizes r of one backend to o as their keys. */
static int values_ref(cJSON *o, const ev_proto_ref *r, int cuda)
{
    int bad = 0;
    if (cuda)
        bad |= ev_json_add_i64(o, "ceiling_bytes", r->ceiling_bytes) != EV_OK;
    else
        bad |= ev_json_add_i64(o, "ceiling_cache_multiple", r->ceiling_cache_multiple) != EV_OK ||
               ev_json_add_i64(o, "ceiling_max_bytes", r->ceiling_max_bytes) != EV_OK;
    bad |= ev_json_add_i64(o, "ceiling_ops_per_graph", r->ceiling_ops_per_graph) != EV_OK ||
           ev_json_add_i64(o, "flush_cache_multiple", r->flush_cache_multiple) != EV_OK ||
           ev_json_add_i64(o, "flush_max_bytes", r->flush_max_bytes) != EV_OK ||
           ev_json_add_i64(o, "variant_budget_bytes", r->variant_budget_bytes) != EV_OK;
    return bad;
}

ev_status ev_protocol_values(const ev_protocol *p, cJSON **out)
{
    cJSON *v = cJSON_CreateObject(), *a, *c, *t, *r, *o;
    int bad = !v;

    *out = NULL;
    if (bad)
        return EV_ENOMEM;
    bad |= ev_json_add_i64(v, "seed", p->seed) != EV_OK;
    bad |= !(a = cJSON_AddArrayToObject(v, "arms"));
    for (size_t i = 0; !bad && i < p->n_arms; i++)
        bad |= !cJSON_AddItemToArray(a, cJSON_CreateString(p->arms[i]));
    bad |= !(c = cJSON_AddArrayToObject(v, "cases"));
    for (size_t i = 0; !bad && i < p->n_cases; i++) {
        const ev_proto_case *x = &p->cases[i];
        bad |= !(o = cJSON_CreateObject()) || !cJSON_AddItemToArray(c, o);
        bad |= bad || ev_json_add_str(o, "op", x->op) || ev_json_add_i64(o, "rows", x->rows) ||
               ev_json_add_i64(o, "cols", x->cols) || ev_json_add_i64(o, "stride", x->stride) ||
               ev_json_add_str(o, "dtype", x->dtype) || ev_json_add_i64(o, "default_rows", x->default_rows) ||
               ev_json_add_str(o, "role", x->role);
    }
    bad |= bad || ev_json_add_bool(v, "reference_arms", p->reference_arms) ||
           ev_json_add_bool(v, "auto_arm", p->auto_arm) || ev_json_add_i64(v, "samples", p->samples) ||
           ev_json_add_i64(v, "ops_per_graph", p->ops_per_graph) ||
           ev_json_add_double(v, "warmup_ms", p->warmup_ms) ||
           ev_json_add_double(v, "target_sample_ms", p->target_sample_ms) ||
           ev_json_add_i64(v, "cold_samples", p->cold_samples) ||
           ev_json_add_i64(v, "host_threads", p->host_threads) ||
           ev_json_add_str(v, "cpu_priority", p->cpu_realtime ? "realtime" : "normal") ||
           ev_json_add_double(v, "job_timeout_s", p->job_timeout_s) ||
           ev_json_add_i64(v, "retries", p->retries) || ev_json_add_i64(v, "rounds", p->rounds) ||
           ev_json_add_double(v, "decision_threshold", p->decision_threshold);
    bad |= bad || !(a = cJSON_AddArrayToObject(v, "cpu_set"));
    for (size_t i = 0; !bad && i < p->n_cpus; i++)
        bad |= ev_json_push_i64(a, p->cpu_set[i]) != EV_OK;
    bad |= bad || !(a = cJSON_AddArrayToObject(v, "model_schedules"));
    for (int i = 0; !bad && i < EV_SCHED_COUNT; i++)
        if (p->model_schedules & EV_SCHED_BIT(i))
            bad |= !cJSON_AddItemToArray(a, cJSON_CreateString(ev_sched_name((ev_sched)i)));
    bad |= bad || !(t = cJSON_AddObjectToObject(v, "tolerances"));
    bad |= bad || ev_json_add_double(t, "sum_bound_factor", p->sum_bound_factor) ||
           (p->sum_depth && ev_json_add_i64(t, "sum_depth", p->sum_depth)) || /* absent: any order */
           ev_json_add_double(t, "sample_band", p->sample_band) ||
           ev_json_add_double(t, "clock_band", p->clock_band);
    bad |= bad || !(r = cJSON_AddObjectToObject(v, "reference"));
    bad |= bad || !(o = cJSON_AddObjectToObject(r, "cuda")) || values_ref(o, &p->ref_cuda, 1);
    bad |= bad || !(o = cJSON_AddObjectToObject(r, "cpu")) || values_ref(o, &p->ref_cpu, 0);
    bad |= bad || (p->python[0] && ev_json_add_str(v, "python", p->python)); /* absent: python3 */
    if (bad) {
        cJSON_Delete(v);
        return EV_ENOMEM;
    }
    *out = v;
    return EV_OK;
}

const ev_ext_kernel *ev_protocol_kernel(const ev_protocol *proto, const char *name)
{
    if (!proto)
        return NULL;
    for (size_t i = 0; i < proto->n_kernels; i++)
        if (!strcmp(proto->kernels[i].name, name))
            return &proto->kernels[i];
    return NULL;
}

const ev_proto_fault *ev_protocol_fault(const ev_protocol *proto, const char *name)
{
    if (!proto)
        return NULL;
    for (size_t i = 0; i < proto->n_faults; i++)
        if (!strcmp(proto->faults[i].name, name))
            return &proto->faults[i];
    return NULL;
}

const ev_proto_ref *ev_protocol_ref(const ev_protocol *proto, const char *backend)
{
    if (!strcmp(backend, "cuda"))
        return &proto->ref_cuda;
    if (!strcmp(backend, "cpu"))
        return &proto->ref_cpu;
    return NULL;
}
