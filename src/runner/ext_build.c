/*
 * ext_build.c: external kernels built for the run (ext_build.h).
 */
#include "ext_build.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "backend_python.h"
#include "sha256.h"
#include "snapshot.h"

/* SHA-256 hex of the file at path; "" when unreadable. */
static void file_sha(const char *path, char hex[65])
{
    ev_buf b = EV_BUF_INIT;
    hex[0] = '\0';
    if (!ev_read_file(path, &b, NULL))
        ev_sha256_hex(b.data ? b.data : "", b.len, hex);
    ev_buf_free(&b);
}

/* Writes n bytes of s to path.  Returns 0 on success. */
static int put(const char *path, const char *s, size_t n)
{
    FILE *f = fopen(path, "w");
    int bad = !f || (n && fwrite(s, 1, n, f) != n);
    if (f)
        bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

/* bsearch comparator: a path against a snapshot file. */
static int snap_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const ev_source_file *)elem)->path);
}

/*
 * How a toolkit file at real path p is named in a receipt: relative to /
 * (the environment record keeps no absolute path: snapshot.h's redaction)
 * when under /usr or /opt, where toolkits live; elsewhere (a toolkit under
 * a home directory) only its base name after "?/", so no user's directory
 * is recorded.  Returns out[cap].
 */
static const char *toolkit_name(const char *p, char *out, size_t cap)
{
    const char *base = strrchr(p, '/');
    if (!strncmp(p, "/usr/", 5) || !strncmp(p, "/opt/", 5))
        snprintf(out, cap, "%s", p + 1);
    else
        snprintf(out, cap, "?/%.255s", base ? base + 1 : p);
    return out;
}

/* The dependency list of one build, as its receipt records it. */
typedef struct dep_list {
    cJSON *root;    /* [{path, sha256}]: files read under the root (members of the bundle) */
    cJSON *toolkit; /* [{path, sha256}]: the toolkit's files (real paths) */
} dep_list;

/*
 * Holds build k's dependency list (c->deps, read in root) to the rule of
 * ext_build.h and records it in *dl.  OUT: why (empty when the rule holds,
 * else one line naming the first file that breaks it).
 */
static void check_deps(const ev_ext_toolchain *t, const char *root, const ev_ext_kernel *k, const char *tu,
                       const ev_ext_compiled *c, const ev_source_file *snap, size_t n_snap, dep_list *dl,
                       ev_buf *why)
{
    ev_strs seen = EV_STRS_INIT;
    for (size_t i = 0; i < c->deps.n; i++) {
        char where[4200], sha[65], full[8600], tname[4200];
        ev_ext_dep_kind kind = ev_ext_dep_where(t, root, c->deps.v[i], where, sizeof where);
        const ev_source_file *s;
        cJSON *o;
        int dup = 0;
        for (size_t q = 0; q < seen.n && !dup; q++)
            dup = !strcmp(seen.v[q], where);
        if (dup || ev_strs_push(&seen, where))
            continue;
        if (kind == EV_DEP_ROOT)
            snprintf(full, sizeof full, "%s/%s", root, where);
        else
            snprintf(full, sizeof full, "%s", where);
        file_sha(full, sha);
        o = cJSON_CreateObject();
        if (o) {
            ev_json_add_str(o, "path",
                            kind == EV_DEP_ROOT ? where : toolkit_name(where, tname, sizeof tname));
            ev_json_add_str(o, "sha256", sha);
            cJSON_AddItemToArray(kind == EV_DEP_ROOT ? dl->root : dl->toolkit, o);
        }
        if (why->len || kind == EV_DEP_TOOLKIT)
            continue;
        if (kind == EV_DEP_OUTSIDE) {
            const char *base = strrchr(where, '/');
            ev_buf_printf(why,
                          "%s: %s includes %s (%s), outside the kernel's files and the toolkit's "
                          "directories: a kernel's build may read only its declared files, evident's ABI "
                          "header (evident_kernel.h) and the toolkit's headers\n",
                          k->name, tu, base ? base + 1 : where, where);
        } else if (!(s = bsearch(where, snap, n_snap, sizeof *snap, snap_cmp)) ||
                   !(ev_ext_declares(k, t->backend, where) || !strcmp(where, EV_EXT_ABI_HEADER))) {
            ev_buf_printf(why,
                          "%s: %s includes %s, which the protocol does not declare: list it in the kernel's "
                          "sources (sources.%s: [\"%s\", ...])\n",
                          k->name, tu, where, t->backend, ev_ext_source(k, t->backend));
        } else if (strcmp(s->sha256, sha)) {
            ev_buf_printf(why,
                          "%s: %s read %s, whose bytes (sha256 %.16s...) are not the run's snapshot's "
                          "(%.16s...): it changed after the run started; the bundle must hold the bytes "
                          "that ran (start a new run)\n",
                          k->name, tu, where, sha, s->sha256);
        }
    }
    ev_strs_free(&seen);
}

/* nftw callback: removes one entry of a staging tree. */
static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    remove(path);
    return 0;
}

/* Writes bytes[0..n) to root/rel, making its directories.  Returns 0, or
 * -1 (errno set). */
static int put_under(const char *root, const char *rel, const void *bytes, size_t n)
{
    char path[8400];
    FILE *f;
    int bad;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", root, rel) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *c = path + strlen(root) + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            if (mkdir(path, 0755) && errno != EEXIST)
                return -1;
            *c = '/';
        }
    if (!(f = fopen(path, "wx")))
        return -1;
    bad = n && fwrite(bytes, 1, n, f) != n;
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

/* Copies the file at from (a regular file of at most
 * EV_SNAPSHOT_EXTRA_MAX bytes) to root/rel.  OUT: why (a line, when it
 * cannot). */
static void stage_file(const char *from, const char *root, const char *rel, ev_buf *why)
{
    ev_buf b = EV_BUF_INIT;
    ev_err e = {""};
    if (ev_read_file_max(from, EV_SNAPSHOT_EXTRA_MAX, &b, &e))
        ev_buf_printf(why, "cannot read %s: %s\n", rel, e.msg);
    else if (put_under(root, rel, b.data ? b.data : "", b.len))
        ev_buf_printf(why, "cannot lay out %s for the build: %s\n", rel, strerror(errno));
    ev_buf_free(&b);
}

/*
 * Lays out kernel k's build tree at tree (removed first, if there): the
 * ABI header from root, and each declared file of backend from proto_dir
 * under its member path.  OUT: why (a line per file it could not lay out).
 */
static void stage(const ev_ext_kernel *k, const char *backend, const char *proto_dir, const char *root,
                  const char *tree, ev_buf *why)
{
    char from[8400], rel[EV_EXT_MEMBER_MAX];
    const char *f;
    nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    if (mkdir(tree, 0755)) {
        ev_buf_printf(why, "cannot create the build directory: %s\n", strerror(errno));
        return;
    }
    snprintf(from, sizeof from, "%s/%s", root, EV_EXT_ABI_HEADER);
    stage_file(from, tree, EV_EXT_ABI_HEADER, why);
    for (size_t j = 0; (f = ev_ext_file(k, backend, j)) != NULL; j++) {
        snprintf(from, sizeof from, "%s/%s", proto_dir, f);
        if (ev_ext_member_path(k->name, f, rel, sizeof rel))
            ev_buf_printf(why, "%s: its member name is too long\n", f);
        else
            stage_file(from, tree, rel, why);
    }
}

/*
 * After a failed compile of kernel k: each include the compiler could not
 * find ("F:L:C: fatal error: NAME: No such file or directory", the form of
 * gcc, clang and nvcc's preprocessor) that lies in the protocol's
 * directory beside the file that includes it is one the protocol does not
 * declare.  OUT: why (a line naming each, with what to do).
 */
static void undeclared_includes(const ev_ext_kernel *k, const char *backend, const char *proto_dir,
                                const ev_buf *msg, ev_buf *why)
{
    char pre[EV_EXT_MEMBER_MAX];
    size_t pl;
    if (ev_ext_member_path(k->name, "", pre, sizeof pre) || !msg->data)
        return;
    pl = strlen(pre);
    for (const char *line = msg->data; line && *line;) {
        const char *nl = strchr(line, '\n'), *fe = strstr(line, ": fatal error: "), *colon;
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (fe && fe < line + len && !strncmp(line, pre, pl) && (colon = strchr(line, ':')) != NULL) {
            const char *inc = fe + strlen(": fatal error: ");
            const char *end = strstr(inc, ": No such file or directory");
            const char *from = line + pl, *slash = memrchr(from, '/', (size_t)(colon - from));
            char name[EV_EXT_PATH_MAX], path[8400];
            struct stat st;
            if (end && end < line + len && *inc != '/' &&
                (size_t)snprintf(name, sizeof name, "%.*s%.*s", slash ? (int)(slash - from + 1) : 0, from,
                                 (int)(end - inc), inc) < sizeof name &&
                !strstr(name, "..") &&
                (size_t)snprintf(path, sizeof path, "%s/%s", proto_dir, name) < sizeof path &&
                !lstat(path, &st) && S_ISREG(st.st_mode))
                ev_buf_printf(why,
                              "%s: %.*s includes %s, which the protocol does not declare: list it in the "
                              "kernel's sources (sources.%s: [\"%s\", \"%s\"])\n",
                              k->name, (int)(colon - from), from, name, backend, ev_ext_source(k, backend),
                              name);
        }
        line = nl ? nl + 1 : NULL;
    }
}

/*
 * A Python arm's "build" (ext_build.h): nothing is compiled; each of its
 * declared files for backend, read from the protocol's directory, is laid
 * out under dir/<name>.py/ by its path from that directory when its bytes
 * are the run's snapshot's (its member, ev_ext_member_path), so the module
 * the arm's process imports, and every file of the protocol's directory it
 * may import, are the bytes the bundle holds (an undeclared file is not
 * there to import).  OUT: *x (lib: the module's copy; or error: the reason
 * in a file), its receipt appended to arr.  EV_EIO / EV_ENOMEM when the
 * step itself cannot run.
 */
static ev_status build_python(const ev_ext_kernel *k, const char *proto_dir, const char *backend,
                              const char *dir, const ev_source_file *snap, size_t n_snap, ev_ext_built *x,
                              cJSON *arr, ev_err *err)
{
    const char *f;
    char rel0[EV_EXT_MEMBER_MAX] = "", sha0[65] = "", tree[4300];
    ev_buf why = EV_BUF_INIT;
    cJSON *r = cJSON_CreateObject(), *deps = cJSON_CreateArray(), *nh;
    ev_status rc = EV_OK;

    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", k->name);
    if (!r || !deps || !cJSON_AddItemToArray(arr, r)) {
        cJSON_Delete(r);
        cJSON_Delete(deps);
        return ev_err_set(err, EV_ENOMEM, "kernels: out of memory");
    }
    snprintf(tree, sizeof tree, "%s/%s.py", dir, k->name);
    nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    if (mkdir(tree, 0755))
        ev_buf_printf(&why, "%s: cannot create its directory: %s\n", k->name, strerror(errno));
    for (size_t j = 0; !why.len && (f = ev_ext_file(k, backend, j)) != NULL; j++) {
        char rel[EV_EXT_MEMBER_MAX], from[8400], sha[65] = "";
        ev_buf bytes = EV_BUF_INIT;
        ev_err e = {""};
        const ev_source_file *sn;
        cJSON *o;
        if (ev_ext_member_path(k->name, f, rel, sizeof rel)) {
            ev_buf_printf(&why, "%s: %s: its member name is too long\n", k->name, f);
            break;
        }
        snprintf(from, sizeof from, "%s/%s", proto_dir, f);
        if (ev_read_file_max(from, EV_SNAPSHOT_EXTRA_MAX, &bytes, &e)) {
            ev_buf_printf(&why, "%s: cannot read %s: %s\n", k->name, f, e.msg);
        } else {
            ev_sha256_hex(bytes.data ? bytes.data : "", bytes.len, sha);
            sn = bsearch(rel, snap, n_snap, sizeof *snap, snap_cmp);
            if (!sn || strcmp(sn->sha256, sha))
                ev_buf_printf(
                    &why,
                    "%s: %s, whose bytes (sha256 %.16s...) are not the run's snapshot's: it changed "
                    "after the run started; the bundle must hold the bytes that ran (start a new "
                    "run)\n",
                    k->name, f, sha);
            else if (put_under(tree, f, bytes.data ? bytes.data : "", bytes.len))
                ev_buf_printf(&why, "%s: cannot lay out %s: %s\n", k->name, f, strerror(errno));
        }
        ev_buf_free(&bytes);
        if (!j) {
            snprintf(rel0, sizeof rel0, "%s", rel);
            snprintf(sha0, sizeof sha0, "%s", sha);
            if ((size_t)snprintf(x->lib, sizeof x->lib, "%s/%s", tree, f) >= sizeof x->lib)
                ev_buf_printf(&why, "%s: the path of its module's copy is too long\n", k->name);
        }
        if ((o = cJSON_CreateObject()) != NULL) {
            ev_json_add_str(o, "path", rel);
            ev_json_add_str(o, "sha256", sha);
            cJSON_AddItemToArray(deps, o);
        }
    }
    x->ok = !why.len;
    if (!x->ok) {
        snprintf(x->error, sizeof x->error, "%s/%s.build-error.txt", dir, k->name);
        if (put(x->error, why.data, why.len))
            rc = ev_err_set(err, EV_EIO, "kernels: cannot write %s", x->error);
        x->lib[0] = '\0';
    }
    ev_json_add_str(r, "name", k->name);
    ev_json_add_str(r, "backend", backend);
    ev_json_add_str(r, "language", "python");
    ev_json_add_str(r, "source", rel0);
    ev_json_add_str(r, "source_sha256", sha0);
    cJSON_AddBoolToObject(r, "ok", x->ok);
    cJSON_AddItemToObject(r, "deps", deps);
    nh = cJSON_AddArrayToObject(r, "not_held");
    for (size_t i = 0; nh && ev_python_not_held[i]; i++)
        cJSON_AddItemToArray(nh, cJSON_CreateString(ev_python_not_held[i]));
    {
        ev_buf red = EV_BUF_INIT;
        ev_redact_paths(why.data ? why.data : "", why.len, &red);
        ev_json_add_str(r, "message", red.data ? red.data : "");
        ev_buf_free(&red);
    }
    ev_buf_free(&why);
    return rc;
}

ev_status ev_ext_build_all(const ev_protocol *p, const char *proto_dir, const char *root, const char *backend,
                           const char *dir, const ev_source_file *snap, size_t n_snap, ev_ext_built *b,
                           size_t *n, cJSON **receipts, ev_err *err)
{
    cJSON *arr = cJSON_CreateArray();
    ev_ext_toolchain tc;
    ev_ext_limits lim = EV_EXT_LIMITS_DEFAULT;
    ev_status rc = EV_OK;

    *n = 0;
    *receipts = NULL;
    memset(&tc, 0, sizeof tc);
    if (!arr)
        return ev_err_set(err, EV_ENOMEM, "kernels: out of memory");
    if (!p->n_kernels || (strcmp(backend, "cpu") && strcmp(backend, "cuda"))) {
        *receipts = arr;
        return EV_OK;
    }
    if (mkdir(dir, 0755) && errno != EEXIST) {
        rc = ev_err_set(err, EV_EIO, "kernels: cannot create %s: %s", dir, strerror(errno));
        goto fail;
    }
    for (size_t i = 0; i < p->n_kernels; i++) {
        const ev_ext_kernel *k = &p->kernels[i];
        const char *src = ev_ext_source(k, backend);
        if (k->python && src) { /* nothing to compile: its files laid out (build_python) */
            if ((rc = build_python(k, proto_dir, backend, dir, snap, n_snap, &b[*n], arr, err)))
                goto fail;
            (*n)++;
            continue;
        }
        if (k->python || !src)
            continue;
        if (!tc.compiler[0] && (rc = ev_ext_toolchain_of(backend, &tc, err)))
            goto fail;
        char rel[EV_EXT_MEMBER_MAX], sha_src[65] = "", sha_bin[65] = "", full[5000], tree[4300];
        ev_ext_built *x = &b[*n];
        ev_ext_compiled c;
        ev_buf why = EV_BUF_INIT, msg = EV_BUF_INIT, red = EV_BUF_INIT;
        dep_list dl = {cJSON_CreateArray(), cJSON_CreateArray()};
        cJSON *r;

        memset(&c, 0, sizeof c);
        if (!src || ev_ext_member_path(k->name, src, rel, sizeof rel)) {
            cJSON_Delete(dl.root);
            cJSON_Delete(dl.toolkit);
            continue;
        }
        memset(x, 0, sizeof *x);
        snprintf(x->name, sizeof x->name, "%s", k->name);
        snprintf(tree, sizeof tree, "%s/%s.tree", dir, k->name);
        snprintf(x->lib, sizeof x->lib, "%s/%s%s", dir, k->name, tc.suffix);
        stage(k, backend, proto_dir, root, tree, &why);
        if (!why.len) {
            snprintf(full, sizeof full, "%s/%s", tree, rel);
            file_sha(full, sha_src);
            if ((rc = ev_ext_compile(&tc, tree, rel, x->lib, &lim, &c, err))) {
                cJSON_Delete(dl.root);
                cJSON_Delete(dl.toolkit);
                goto fail;
            }
            x->ok = c.status == 0 && !c.timed_out && access(x->lib, R_OK) == 0;
            if (x->ok && dl.root && dl.toolkit)
                check_deps(&tc, tree, k, rel, &c, snap, n_snap, &dl, &why);
            else if (!x->ok)
                undeclared_includes(k, backend, proto_dir, &c.msg, &why);
        }
        x->ok = x->ok && dl.root && dl.toolkit && !why.len;
        if (x->ok)
            file_sha(x->lib, sha_bin);
        ev_buf_append(&msg, why.data ? why.data : "", why.len);
        ev_buf_append(&msg, c.msg.data ? c.msg.data : "", c.msg.len);
        if (!x->ok) {
            snprintf(x->error, sizeof x->error, "%s/%s.compile-error.txt", dir, k->name);
            if (c.status == 127 && !strcmp(backend, "cuda"))
                ev_buf_puts(&msg, "(set EVIDENT_NVCC to nvcc's path)\n");
            if (!msg.len)
                ev_buf_puts(&msg, "(the compiler printed nothing)\n");
            if (put(x->error, msg.data, msg.len)) {
                rc = ev_err_set(err, EV_EIO, "kernels: cannot write %s", x->error);
                goto next;
            }
            x->lib[0] = '\0';
        }
        ev_redact_paths(msg.data ? msg.data : "", msg.len, &red);
        r = cJSON_CreateObject();
        if (!r || !cJSON_AddItemToArray(arr, r)) {
            cJSON_Delete(r);
            rc = ev_err_set(err, EV_ENOMEM, "kernels: out of memory");
            goto next;
        }
        ev_json_add_str(r, "name", k->name);
        ev_json_add_str(r, "backend", backend);
        ev_json_add_str(r, "source", rel);
        ev_json_add_str(r, "source_sha256", sha_src);
        ev_json_add_str(r, "compiler", tc.version[0] ? tc.version : tc.compiler);
        ev_json_add_str(r, "flags", tc.flags);
        ev_json_add_str(r, "include", EV_EXT_INCLUDE);
        cJSON_AddBoolToObject(r, "ok", x->ok);
        if (x->ok)
            ev_json_add_str(r, "binary_sha256", sha_bin);
        else
            cJSON_AddNullToObject(r, "binary_sha256");
        cJSON_AddItemToObject(r, "deps", dl.root);
        cJSON_AddItemToObject(r, "toolkit_deps", dl.toolkit);
        dl.root = dl.toolkit = NULL;
        ev_json_add_str(r, "message", red.data ? red.data : "");
        (*n)++;
    next:
        cJSON_Delete(dl.root);
        cJSON_Delete(dl.toolkit);
        ev_ext_compiled_free(&c);
        ev_buf_free(&why);
        ev_buf_free(&msg);
        ev_buf_free(&red);
        if (rc)
            goto fail;
    }
    ev_ext_toolchain_free(&tc);
    *receipts = arr;
    return EV_OK;
fail:
    ev_ext_toolchain_free(&tc);
    cJSON_Delete(arr);
    return rc;
}

const ev_ext_built *ev_ext_built_of(const ev_ext_built *b, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(b[i].name, name))
            return &b[i];
    return NULL;
}
