/*
 * ext_kernel.c: external kernel declarations, source checks and geometry
 * expressions (ext_kernel.h).
 */
#include "ext_kernel.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "names.h"
#include "strs.h"
#include "vocab.h"

/* 1 when s is a C identifier of at most max - 1 bytes. */
static int identifier(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n >= max || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return 0;
    return 1;
}

/* 1 when p is a relative path inside its base and a name the bundle can
 * hold as sources/<path> (names.h: no leading '/', no empty, "." or ".."
 * component). */
static int inside(const char *p)
{
    char why[80];
    return *p && strlen(p) < EV_EXT_PATH_MAX && !ev_name_problem(p, strlen(p), why, sizeof why);
}

/* Copies string member key of o into out[cap]; "" when absent. */
static ev_status get_str(const cJSON *o, const char *key, const char *path, char *out, size_t cap,
                         ev_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    out[0] = '\0';
    if (!it)
        return EV_OK;
    if (!cJSON_IsString(it) || strlen(it->valuestring) >= cap)
        return ev_err_set(err, EV_EFORMAT, "%s.%s: must be a string under %zu bytes", path, key, cap);
    memcpy(out, it->valuestring, strlen(it->valuestring) + 1);
    return EV_OK;
}

/* Refuses a member of o not named in keys. */
static ev_status only(const cJSON *o, const char *path, const char *const *keys, ev_err *err)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        int ok = 0;
        for (size_t i = 0; keys[i]; i++)
            ok |= !strcmp(it->string, keys[i]);
        if (!ok)
            return ev_err_set(err, EV_EFORMAT, "%s: unknown field '%.40s'", path, it->string);
    }
    return EV_OK;
}

/*
 * Parses sources.<backend b> of declaration `path` into k->files[b]: one
 * string (the translation unit) or an array of strings, that unit first
 * and then the files it includes (at most EV_EXT_MAX_FILES).  Each is a
 * relative path inside the protocol's directory; the first ends in .c
 * (cpu) or .cu (cuda), for a Python arm (k->python) in .py, the module;
 * none is named twice.  Absent (v NULL): no file.
 */
static ev_status parse_files(const cJSON *v, const char *path, int b, ev_ext_kernel *k, ev_err *err)
{
    const char *be = b ? "cuda" : "cpu", *ext = k->python ? ".py" : b ? ".cu" : ".c";
    const char *key = k->python ? "python" : "sources";
    const cJSON *it;
    size_t n = 0;

    if (!v)
        return EV_OK;
    if (!cJSON_IsString(v) && !(cJSON_IsArray(v) && v->child))
        return ev_err_set(
            err, EV_EFORMAT,
            "%s.%s.%s: must be a file name, or a list of file names (%s first, then the files it "
            "%s)",
            path, key, be, k->python ? "the module" : "the translation unit",
            k->python ? "imports" : "includes");
    for (it = cJSON_IsArray(v) ? v->child : v; it; it = cJSON_IsArray(v) ? it->next : NULL) {
        const char *s = cJSON_IsString(it) ? it->valuestring : NULL;
        size_t len = s ? strlen(s) : 0, e = strlen(ext);
        if (n == EV_EXT_MAX_FILES)
            return ev_err_set(err, EV_EFORMAT, "%s.%s.%s: at most %d files", path, key, be, EV_EXT_MAX_FILES);
        if (!s || !inside(s))
            return ev_err_set(err, EV_EFORMAT,
                              "%s.%s.%s: '%.60s' must be a relative path inside the protocol's directory "
                              "(no '..', no absolute path)",
                              path, key, be, s ? s : "(not a string)");
        if (!n && (len <= e || strcmp(s + len - e, ext)))
            return ev_err_set(err, EV_EFORMAT, "%s.%s.%s: must be a %s file", path, key, be, ext);
        for (size_t q = 0; q < n; q++)
            if (!strcmp(k->files[b][q], s))
                return ev_err_set(err, EV_EFORMAT, "%s.%s.%s: '%.60s' twice", path, key, be, s);
        memcpy(k->files[b][n++], s, len + 1);
    }
    k->n_files[b] = n;
    return EV_OK;
}

/* Parses declaration o (index i) into *k. */
static ev_status parse_one(const cJSON *o, size_t i, ev_ext_kernel *k, ev_err *err)
{
    static const char *const keys[] = {"name", "sources", "python", "entries", "geometry", "memory_mb", NULL};
    static const char *const src_keys[] = {"cpu", "cuda", NULL};
    static const char *const geo_keys[] = {"grid", "block", NULL};
    char path[48];
    const cJSON *src, *py, *mem, *ent, *geo, *it;
    const char *pre;
    ev_status rc;

    snprintf(path, sizeof path, "kernels[%zu]", i);
    memset(k, 0, sizeof *k);
    if (!cJSON_IsObject(o))
        return ev_err_set(err, EV_EFORMAT, "%s: must be an object", path);
    if ((rc = only(o, path, keys, err)) || (rc = get_str(o, "name", path, k->name, sizeof k->name, err)))
        return rc;
    pre = ev_arm_kind_prefix(EV_ARM_EXTERNAL);
    if (strncmp(k->name, pre, strlen(pre)) || !k->name[strlen(pre)])
        return ev_err_set(err, EV_EFORMAT, "%s.name: must start with '%s' (an external kernel's arm)", path,
                          pre);
    for (const char *c = k->name + strlen(pre); *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '-' || *c == '_'))
            return ev_err_set(err, EV_EFORMAT, "%s.name: letters, digits, '-' and '_' only", path);
    src = cJSON_GetObjectItemCaseSensitive(o, "sources");
    py = cJSON_GetObjectItemCaseSensitive(o, "python");
    if (src && py)
        return ev_err_set(err, EV_EFORMAT,
                          "%s: declares both sources (a C or CUDA C kernel) and python (a Python arm): one "
                          "kernel is one or the other",
                          path);
    if (py) {
        /* a Python arm: one module for both backends, or one per backend */
        k->python = 1;
        if (!cJSON_IsObject(py)) {
            for (int b = 0; b < 2; b++)
                if ((rc = parse_files(py, path, b, k, err)))
                    return rc;
        } else if (!py->child) {
            return ev_err_set(err, EV_EFORMAT, "%s.python: must name a module for cpu and/or cuda", path);
        } else if ((rc = only(py, "python", src_keys, err))) {
            return rc;
        } else {
            for (int b = 0; b < 2; b++)
                if ((rc = parse_files(cJSON_GetObjectItemCaseSensitive(py, b ? "cuda" : "cpu"), path, b, k,
                                      err)))
                    return rc;
        }
    } else {
        if (!cJSON_IsObject(src) || !src->child)
            return ev_err_set(err, EV_EFORMAT,
                              "%s.sources: must name a cpu and/or a cuda source file (or python: a Python "
                              "module)",
                              path);
        if ((rc = only(src, "sources", src_keys, err)))
            return rc;
        for (int b = 0; b < 2; b++)
            if ((rc =
                     parse_files(cJSON_GetObjectItemCaseSensitive(src, b ? "cuda" : "cpu"), path, b, k, err)))
                return rc;
    }
    mem = cJSON_GetObjectItemCaseSensitive(o, "memory_mb");
    k->memory_mb = EV_EXT_PY_MEMORY_MB;
    if (mem && !k->python && k->n_files[0] == 0)
        return ev_err_set(err, EV_EFORMAT,
                          "%s.memory_mb: only a kernel with a process of its own to bound has one (a Python "
                          "arm, or a cpu source: the kernel host); device code has none",
                          path);
    if (mem) {
        if (!cJSON_IsNumber(mem) || mem->valuedouble != (double)(int64_t)mem->valuedouble ||
            mem->valuedouble < 16 || mem->valuedouble > 1048576)
            return ev_err_set(err, EV_EFORMAT, "%s.memory_mb: must be an integer from 16 to 1048576 (MiB)",
                              path);
        k->memory_mb = (int64_t)mem->valuedouble;
    }
    ent = cJSON_GetObjectItemCaseSensitive(o, "entries");
    if (!cJSON_IsObject(ent) || !ent->child)
        return ev_err_set(err, EV_EFORMAT,
                          "%s.entries: must map each \"op/dtype\" it implements to its entry point", path);
    cJSON_ArrayForEach(it, ent)
    {
        ev_ext_entry *x;
        const char *slash = strchr(it->string, '/');
        ev_op op;
        ev_dtype dt;
        int op_ok = 0, dt_ok = 0;
        if (k->n_entries == EV_EXT_MAX_ENTRIES)
            return ev_err_set(err, EV_EFORMAT, "%s.entries: at most %d", path, EV_EXT_MAX_ENTRIES);
        x = &k->entries[k->n_entries];
        if (slash && (size_t)(slash - it->string) < sizeof x->op && strlen(slash + 1) < sizeof x->dtype) {
            memcpy(x->op, it->string, (size_t)(slash - it->string));
            x->op[slash - it->string] = '\0';
            snprintf(x->dtype, sizeof x->dtype, "%s", slash + 1);
            op_ok = !ev_op_parse(x->op, &op);
            dt_ok = !ev_dtype_parse(x->dtype, &dt);
        }
        if (!op_ok || !dt_ok)
            return ev_err_set(err, EV_EFORMAT,
                              "%s.entries: '%.40s' is not op/dtype (op one of %s; dtype one of %s)", path,
                              it->string, ev_op_words(), ev_dtype_words());
        if (!cJSON_IsString(it) || !identifier(it->valuestring, sizeof x->entry))
            return ev_err_set(err, EV_EFORMAT, "%s.entries.%s: must be %s", path, it->string,
                              k->python ? "a Python identifier (a function of the module)"
                                        : "a C identifier (the entry point)");
        for (size_t q = 0; q < k->n_entries; q++)
            if (!strcmp(k->entries[q].op, x->op) && !strcmp(k->entries[q].dtype, x->dtype))
                return ev_err_set(err, EV_EFORMAT, "%s.entries: '%s' twice", path, it->string);
        snprintf(x->entry, sizeof x->entry, "%s", it->valuestring);
        k->n_entries++;
    }
    geo = cJSON_GetObjectItemCaseSensitive(o, "geometry");
    if (k->python && geo)
        return ev_err_set(err, EV_EFORMAT,
                          "%s.geometry: a Python arm launches its own work (its function is called with the "
                          "input and the output): no geometry",
                          path);
    if (k->n_files[1] && !k->python && !geo)
        return ev_err_set(err, EV_EFORMAT,
                          "%s.geometry: a cuda source needs {\"grid\": EXPR, \"block\": EXPR}", path);
    if (geo) {
        int64_t v;
        if (!cJSON_IsObject(geo) || (rc = only(geo, "geometry", geo_keys, err)) ||
            (rc = get_str(geo, "grid", path, k->grid, sizeof k->grid, err)) ||
            (rc = get_str(geo, "block", path, k->block, sizeof k->block, err)))
            return rc ? rc : ev_err_set(err, EV_EFORMAT, "%s.geometry: must be an object", path);
        if (!k->grid[0] || !k->block[0])
            return ev_err_set(err, EV_EFORMAT, "%s.geometry: needs both grid and block", path);
        /* the syntax, on a shape every expression must accept */
        for (int g = 0; g < 2; g++) {
            ev_err e2;
            ev_status r2 = ev_ext_eval(g ? k->block : k->grid, 1, 1, 1, &v, &e2);
            if (r2 && strstr(e2.msg, "malformed"))
                return ev_err_set(err, EV_EFORMAT, "%s.geometry.%s: %s", path, g ? "block" : "grid", e2.msg);
        }
    }
    return EV_OK;
}

ev_status ev_ext_parse(const cJSON *arr, ev_ext_kernel *k, size_t *n, ev_err *err)
{
    const cJSON *it;
    size_t i = 0;
    ev_status rc;

    *n = 0;
    if (!cJSON_IsArray(arr))
        return ev_err_set(err, EV_EFORMAT, "kernels: must be an array of kernel declarations");
    if (cJSON_GetArraySize(arr) > EV_EXT_MAX_KERNELS)
        return ev_err_set(err, EV_EFORMAT, "kernels: at most %d", EV_EXT_MAX_KERNELS);
    cJSON_ArrayForEach(it, arr)
    {
        if ((rc = parse_one(it, i, &k[i], err)))
            return rc;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(k[j].name, k[i].name))
                return ev_err_set(err, EV_EFORMAT, "kernels[%zu].name: '%s' twice", i, k[i].name);
        i++;
    }
    *n = i;
    return EV_OK;
}

const char *ev_ext_entry_for(const ev_ext_kernel *k, const char *op, const char *dtype)
{
    for (size_t i = 0; i < k->n_entries; i++)
        if (!strcmp(k->entries[i].op, op) && !strcmp(k->entries[i].dtype, dtype))
            return k->entries[i].entry;
    return NULL;
}

const char *ev_ext_source(const ev_ext_kernel *k, const char *backend)
{
    return ev_ext_file(k, backend, 0);
}

const char *ev_ext_file(const ev_ext_kernel *k, const char *backend, size_t j)
{
    int b = !strcmp(backend, "cuda");
    return j < k->n_files[b] ? k->files[b][j] : NULL;
}

/* ---- geometry expressions ------------------------------------------------ */

typedef struct ev_xp {
    const char *s;
    int64_t rows, cols, stride;
    const char *bad; /* the first problem, or NULL */
} ev_xp;

static void skip(ev_xp *x)
{
    while (*x->s == ' ')
        x->s++;
}

static int64_t xp_expr(ev_xp *x, int depth);

/* Checked arithmetic: a problem sets x->bad and gives 0. */
static int64_t xp_op(ev_xp *x, int64_t a, char op, int64_t b)
{
    int64_t r = 0;
    if (x->bad)
        return 0;
    switch (op) {
    case '+':
        if (__builtin_add_overflow(a, b, &r))
            x->bad = "overflows";
        return r;
    case '-':
        if (__builtin_sub_overflow(a, b, &r))
            x->bad = "overflows";
        return r;
    case '*':
        if (__builtin_mul_overflow(a, b, &r))
            x->bad = "overflows";
        return r;
    default:
        if (b == 0) {
            x->bad = "divides by zero";
            return 0;
        }
        if (op == 'c') /* cdiv, for a >= 0, b > 0; else plain division */
            return a >= 0 && b > 0 ? a / b + (a % b != 0) : a / b;
        return op == '/' ? a / b : a % b;
    }
}

/* Takes character c of cdiv(a, b) (spaces before it skipped).  Returns 1,
 * or 0 with x->bad set. */
static int xp_take(ev_xp *x, char c)
{
    skip(x);
    if (x->bad || *x->s != c) {
        if (!x->bad)
            x->bad = "is malformed (cdiv needs (a, b))";
        return 0;
    }
    x->s++;
    return 1;
}

static int64_t xp_factor(ev_xp *x, int depth)
{
    skip(x);
    if (depth > 32) {
        x->bad = "is malformed (nested too deep)";
        return 0;
    }
    if (isdigit((unsigned char)*x->s)) {
        int64_t v = 0;
        while (isdigit((unsigned char)*x->s)) {
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *x->s - '0', &v)) {
                x->bad = "overflows";
                return 0;
            }
            x->s++;
        }
        return v;
    }
    if (*x->s == '(') {
        int64_t v;
        x->s++;
        v = xp_expr(x, depth + 1);
        skip(x);
        if (*x->s != ')') {
            x->bad = "is malformed (a '(' without its ')')";
            return 0;
        }
        x->s++;
        return v;
    }
    if (!strncmp(x->s, "cdiv", 4)) {
        int64_t a, b;
        x->s += 4;
        if (!xp_take(x, '('))
            return 0;
        a = xp_expr(x, depth + 1);
        if (!xp_take(x, ','))
            return 0;
        b = xp_expr(x, depth + 1);
        if (!xp_take(x, ')'))
            return 0;
        return xp_op(x, a, 'c', b);
    }
    static const struct {
        const char *name;
        size_t len;
    } vars[] = {{"rows", 4}, {"cols", 4}, {"stride", 6}};
    for (size_t i = 0; i < 3; i++)
        if (!strncmp(x->s, vars[i].name, vars[i].len) && !isalnum((unsigned char)x->s[vars[i].len]) &&
            x->s[vars[i].len] != '_') {
            x->s += vars[i].len;
            return i == 0 ? x->rows : i == 1 ? x->cols : x->stride;
        }
    x->bad = "is malformed (expected a number, rows, cols, stride, cdiv(a, b) or '(')";
    return 0;
}

static int64_t xp_term(ev_xp *x, int depth)
{
    int64_t v = xp_factor(x, depth);
    for (;;) {
        skip(x);
        char op = *x->s;
        if (x->bad || (op != '*' && op != '/' && op != '%'))
            return v;
        x->s++;
        v = xp_op(x, v, op, xp_factor(x, depth));
    }
}

static int64_t xp_expr(ev_xp *x, int depth)
{
    int64_t v = xp_term(x, depth);
    for (;;) {
        skip(x);
        char op = *x->s;
        if (x->bad || (op != '+' && op != '-'))
            return v;
        x->s++;
        v = xp_op(x, v, op, xp_term(x, depth));
    }
}

ev_status ev_ext_eval(const char *e, int64_t rows, int64_t cols, int64_t stride, int64_t *v, ev_err *err)
{
    ev_xp x = {e, rows, cols, stride, NULL};
    int64_t r = xp_expr(&x, 0);

    skip(&x);
    if (!x.bad && *x.s)
        x.bad = "is malformed (text after the expression)";
    if (x.bad)
        return ev_err_set(err, EV_EFORMAT, "'%.60s' %s", e, x.bad);
    if (r < 1)
        return ev_err_set(err, EV_EFORMAT,
                          "'%.60s' is %lld for rows %lld, cols %lld, stride %lld: must be >= 1", e,
                          (long long)r, (long long)rows, (long long)cols, (long long)stride);
    *v = r;
    return EV_OK;
}

ev_status ev_ext_geometry(const ev_ext_kernel *k, int64_t rows, int64_t cols, int64_t stride, int64_t *grid,
                          int64_t *block, ev_err *err)
{
    int64_t v[2];
    for (int g = 0; g < 2; g++) {
        const char *e = g ? k->block : k->grid;
        int64_t max = g ? EV_EXT_MAX_BLOCK : EV_EXT_MAX_GRID;
        ev_err e2;
        if (ev_ext_eval(e, rows, cols, stride, &v[g], &e2))
            return ev_err_set(err, EV_EFORMAT, "%s: geometry %s '%s' for %lldx%lld (stride %lld): %s",
                              k->name, g ? "block" : "grid", e, (long long)rows, (long long)cols,
                              (long long)stride, e2.msg);
        if (v[g] > max)
            return ev_err_set(
                err, EV_EFORMAT,
                "%s: geometry %s '%s' for %lldx%lld (stride %lld) is %lld, over the limit of %lld", k->name,
                g ? "block" : "grid", e, (long long)rows, (long long)cols, (long long)stride, (long long)v[g],
                (long long)max);
    }
    *grid = v[0];
    *block = v[1];
    return EV_OK;
}

int ev_ext_member_path(const char *name, const char *f, char *out, size_t cap)
{
    int n = snprintf(out, cap, EV_EXT_MEMBER_DIR "/%s/%s", name, f);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int ev_ext_protocol_dir(const char *protocol_path, char *out, size_t cap)
{
    const char *slash = strrchr(protocol_path, '/');
    int n = !slash ? snprintf(out, cap, ".")
            : slash == protocol_path
                ? snprintf(out, cap, "/")
                : snprintf(out, cap, "%.*s", (int)(slash - protocol_path), protocol_path);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

void ev_ext_protocol_recorded(const char *protocol_path, char *out, size_t cap)
{
    const char *slash = strrchr(protocol_path, '/');
    if (protocol_path[0] == '/')
        snprintf(out, cap, "<path>/%s", slash + 1);
    else
        snprintf(out, cap, "%s", protocol_path);
}

ev_status ev_ext_closure(const ev_ext_kernel *k, size_t n, const char *backend, const char *dir, ev_strs *out,
                         ev_strs *disk)
{
    for (size_t i = 0; i < n; i++) {
        const char *f;
        for (size_t j = 0; (f = ev_ext_file(&k[i], backend, j)) != NULL; j++) {
            char rel[EV_EXT_MEMBER_MAX], path[EV_EXT_MEMBER_MAX + 4200];
            if (ev_ext_member_path(k[i].name, f, rel, sizeof rel) ||
                (disk && (size_t)snprintf(path, sizeof path, "%s/%s", dir, f) >= sizeof path))
                continue;
            if (ev_strs_push(out, rel) || (disk && ev_strs_push(disk, path)))
                return EV_ENOMEM;
        }
    }
    return EV_OK;
}

int ev_ext_declares(const ev_ext_kernel *k, const char *backend, const char *rel)
{
    const char *f;
    for (size_t j = 0; (f = ev_ext_file(k, backend, j)) != NULL; j++) {
        char r[EV_EXT_MEMBER_MAX];
        if (!ev_ext_member_path(k->name, f, r, sizeof r) && !strcmp(r, rel))
            return 1;
    }
    return 0;
}

/* Kernel `name`'s file src under dir (src modified in place and
 * restored): exists as a regular file, with no symlink between dir and
 * it.  EV_EUSAGE naming the kernel and the path. */
static ev_status check_file(const char *dir, const char *name, char *src, ev_err *err)
{
    char full[5000];
    /* every component, from dir down: no symlink anywhere */
    for (char *c = src;; c++) {
        if (*c == '/' || !*c) {
            struct stat st;
            char save = *c;
            *c = '\0';
            snprintf(full, sizeof full, "%s/%s", dir, src);
            if (lstat(full, &st)) {
                ev_err_set(err, EV_EUSAGE,
                           "%s: source %s: %s (kernel files are relative to the protocol's "
                           "directory, %s)",
                           name, src, strerror(errno), dir);
                *c = save;
                return EV_EUSAGE;
            }
            if (S_ISLNK(st.st_mode)) {
                ev_err_set(
                    err, EV_EUSAGE,
                    "%s: source %s is a symlink; name the file itself, inside the protocol's directory "
                    "(the bundle must hold the bytes that ran, and nothing outside the directory is "
                    "read through a link)",
                    name, src);
                *c = save;
                return EV_EUSAGE;
            }
            *c = save;
            if (!save)
                return S_ISREG(st.st_mode)
                           ? EV_OK
                           : ev_err_set(err, EV_EUSAGE, "%s: source %s is not a regular file", name, src);
        }
    }
}

ev_status ev_ext_check_sources(const char *dir, const ev_ext_kernel *k, size_t n, const char *backend,
                               ev_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const char *src;
        for (size_t j = 0; (src = ev_ext_file(&k[i], backend, j)) != NULL; j++) {
            char rel[EV_EXT_PATH_MAX];
            ev_status rc;
            snprintf(rel, sizeof rel, "%s", src);
            if ((rc = check_file(dir, k[i].name, rel, err)))
                return rc;
        }
    }
    return EV_OK;
}
