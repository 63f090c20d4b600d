/*
 * ext_build.c: external kernels built for the run (ext_build.h).
 */
#include "ext_build.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "evidence/closure.h"
#include "json.h"
#include "sha256.h"
#include "backend_python.h"
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
static void check_deps(const ev_ext_toolchain *t, const char *root, const ev_ext_kernel *k,
                       const char *protocol_path, const char *tu, const ev_ext_compiled *c,
                       const ev_source_file *snap, size_t n_snap, dep_list *dl, ev_buf *why)
{
    ev_strs seen = EV_STRS_INIT;
    for (size_t i = 0; i < c->deps.n; i++) {
        char where[4200], sha[65], full[8400], tname[4200];
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
                          "%s: %s includes %s (%s), outside the repository and the toolkit's directories: "
                          "a kernel's build may read only its declared files, evident's own (kernels/) "
                          "and the toolkit's headers\n",
                          k->name, tu, base ? base + 1 : where, where);
        } else if (!(s = bsearch(where, snap, n_snap, sizeof *snap, snap_cmp)) ||
                   !(ev_ext_declares(k, protocol_path, t->backend, where) || ev_closure_in_roots(where))) {
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

/* Creates every directory above file path (mode 0755).  Returns 0. */
static int make_parents(char *path)
{
    for (char *c = path + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            if (mkdir(path, 0755) && errno != EEXIST) {
                *c = '/';
                return -1;
            }
            *c = '/';
        }
    return 0;
}

/*
 * A Python arm's "build" (ext_build.h): nothing is compiled; each of its
 * declared files for backend is copied from root into dir/<name>/, under
 * its path relative to the protocol's directory, when its bytes are the
 * run's snapshot's, so the module the arm's process imports, and every
 * file of the protocol's directory it may import, are the bytes the
 * bundle holds (an undeclared file is not there to import).  OUT: *x
 * (lib: the module's copy; or error: the reason in a file), its receipt
 * appended to arr.  EV_EIO / EV_ENOMEM when the step itself cannot run.
 */
static ev_status build_python(const ev_ext_kernel *k, const char *protocol_path, const char *root,
                              const char *backend, const char *dir, const ev_source_file *snap, size_t n_snap,
                              ev_ext_built *x, cJSON *arr, ev_err *err)
{
    const char *f;
    char rel0[EV_EXT_REPO_MAX] = "", sha0[65] = "";
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
    for (size_t j = 0; (f = ev_ext_file(k, backend, j)) != NULL; j++) {
        char rel[EV_EXT_REPO_MAX], full[5000], dst[sizeof x->lib], sha[65] = "";
        ev_buf bytes = EV_BUF_INIT;
        const ev_source_file *sn;
        cJSON *o;
        if (ev_ext_repo_path(protocol_path, f, rel, sizeof rel))
            continue; /* the parser bounds the paths */
        snprintf(full, sizeof full, "%s/%s", root, rel);
        if ((size_t)snprintf(dst, sizeof dst, "%s/%s/%s", dir, k->name, f) >= sizeof dst) {
            rc = ev_err_set(err, EV_EIO, "kernels: the path of %s's copy of %s is too long", k->name, f);
            break;
        }
        if (ev_read_file(full, &bytes, NULL)) {
            ev_buf_printf(&why, "%s: cannot read %s\n", k->name, rel);
        } else {
            ev_sha256_hex(bytes.data ? bytes.data : "", bytes.len, sha);
            sn = bsearch(rel, snap, n_snap, sizeof *snap, snap_cmp);
            if (!sn || strcmp(sn->sha256, sha))
                ev_buf_printf(
                    &why,
                    "%s: %s, whose bytes (sha256 %.16s...) are not the run's snapshot's: it changed "
                    "after the run started; the bundle must hold the bytes that ran (start a new "
                    "run)\n",
                    k->name, rel, sha);
            else if (make_parents(dst) || put(dst, bytes.data ? bytes.data : "", bytes.len))
                rc = ev_err_set(err, EV_EIO, "kernels: cannot write %s", dst);
        }
        ev_buf_free(&bytes);
        if (!j) {
            snprintf(rel0, sizeof rel0, "%s", rel);
            snprintf(sha0, sizeof sha0, "%s", sha);
            memcpy(x->lib, dst, sizeof dst);
        }
        if ((o = cJSON_CreateObject()) != NULL) {
            ev_json_add_str(o, "path", rel);
            ev_json_add_str(o, "sha256", sha);
            cJSON_AddItemToArray(deps, o);
        }
        if (rc)
            break;
    }
    x->ok = !rc && !why.len;
    if (!rc && !x->ok) {
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
    ev_json_add_str(r, "message", why.data ? why.data : "");
    ev_buf_free(&why);
    return rc;
}

ev_status ev_ext_build_all(const ev_protocol *p, const char *protocol_path, const char *root,
                           const char *backend, const char *dir, const ev_source_file *snap, size_t n_snap,
                           ev_ext_built *b, size_t *n, cJSON **receipts, ev_err *err)
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
        if (k->python && src) {
            if ((rc = build_python(k, protocol_path, root, backend, dir, snap, n_snap, &b[*n], arr, err)))
                goto fail;
            (*n)++;
            continue;
        }
        if (k->python || !src)
            continue;
        if (!tc.compiler[0] && (rc = ev_ext_toolchain_of(backend, &tc, err)))
            goto fail;
        char rel[EV_EXT_REPO_MAX], sha_src[65], sha_bin[65] = "", full[5000];
        ev_ext_built *x = &b[*n];
        ev_ext_compiled c;
        ev_buf why = EV_BUF_INIT, msg = EV_BUF_INIT, red = EV_BUF_INIT;
        dep_list dl = {cJSON_CreateArray(), cJSON_CreateArray()};
        cJSON *r;

        if (!src || ev_ext_repo_path(protocol_path, src, rel, sizeof rel)) {
            cJSON_Delete(dl.root);
            cJSON_Delete(dl.toolkit);
            continue;
        }
        memset(x, 0, sizeof *x);
        snprintf(x->name, sizeof x->name, "%s", k->name);
        snprintf(full, sizeof full, "%s/%s", root, rel);
        snprintf(x->lib, sizeof x->lib, "%s/%s%s", dir, k->name, tc.suffix);
        file_sha(full, sha_src);
        if ((rc = ev_ext_compile(&tc, root, rel, x->lib, &lim, &c, err))) {
            cJSON_Delete(dl.root);
            cJSON_Delete(dl.toolkit);
            goto fail;
        }
        x->ok = c.status == 0 && !c.timed_out && access(x->lib, R_OK) == 0;
        if (x->ok && dl.root && dl.toolkit)
            check_deps(&tc, root, k, protocol_path, rel, &c, snap, n_snap, &dl, &why);
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
