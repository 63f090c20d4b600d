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
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "proc.h"
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

/* How one backend's kernels are built: the compiler, its pinned flags and
 * the suffix of what it writes. */
typedef struct toolchain {
    char compiler[4200];
    char flags[160];
    const char *suffix;
} toolchain;

/* The toolchain of backend, or -1 for a backend without one. */
static int toolchain_of(const char *backend, toolchain *t)
{
    if (!strcmp(backend, "cpu")) {
        snprintf(t->compiler, sizeof t->compiler, "cc");
        snprintf(t->flags, sizeof t->flags, "%s", EV_EXT_CPU_FLAGS);
        t->suffix = ".so";
        return 0;
    }
    if (!strcmp(backend, "cuda")) {
        const char *env = getenv("EVIDENT_NVCC");
        if (env && *env)
            snprintf(t->compiler, sizeof t->compiler, "%s", env);
        else if (EV_NVCC[0] && access(EV_NVCC, X_OK) == 0)
            snprintf(t->compiler, sizeof t->compiler, "%s", EV_NVCC);
        else
            snprintf(t->compiler, sizeof t->compiler, "nvcc");
        snprintf(t->flags, sizeof t->flags, "%s -arch=%s", EV_EXT_CUDA_FLAGS, EV_EXT_CUDA_ARCH);
        t->suffix = ".cubin";
        return 0;
    }
    return -1;
}

/* The compiler's version: the line of `compiler --version` that names a
 * release (nvcc's "Cuda compilation tools, release ..."), else its first
 * line; "" when it cannot be run. */
static void compiler_version(const char *compiler, char *out, size_t cap)
{
    char *ver[] = {(char *)compiler, "--version", NULL};
    ev_buf v = EV_BUF_INIT;
    out[0] = '\0';
    if (ev_proc_capture(ver, &v, 1, 65536) == 0 && v.len) {
        const char *line = strstr(v.data, "release");
        while (line && line > v.data && line[-1] != '\n')
            line--;
        line = line ? line : v.data;
        snprintf(out, cap, "%.*s", (int)strcspn(line, "\n"), line);
    }
    ev_buf_free(&v);
}

ev_status ev_ext_build_all(const ev_protocol *p, const char *protocol_path, const char *root,
                           const char *backend, const char *dir, ev_ext_built *b, size_t *n, cJSON **receipts,
                           ev_err *err)
{
    cJSON *arr = cJSON_CreateArray();
    char version[256] = "";
    toolchain tc;

    *n = 0;
    *receipts = NULL;
    if (!arr)
        return ev_err_set(err, EV_ENOMEM, "kernels: out of memory");
    if (toolchain_of(backend, &tc) || !p->n_kernels) {
        *receipts = arr;
        return EV_OK;
    }
    compiler_version(tc.compiler, version, sizeof version);
    if (mkdir(dir, 0755) && errno != EEXIST) {
        cJSON_Delete(arr);
        return ev_err_set(err, EV_EIO, "kernels: cannot create %s: %s", dir, strerror(errno));
    }
    for (size_t i = 0; i < p->n_kernels; i++) {
        const ev_ext_kernel *k = &p->kernels[i];
        const char *src = ev_ext_source(k, backend);
        char rel[600], full[5000], inc[4200], sha_src[65], sha_bin[65] = "";
        ev_ext_built *x = &b[*n];
        ev_buf msg = EV_BUF_INIT, red = EV_BUF_INIT;
        cJSON *r;
        int status;

        if (!src || ev_ext_repo_path(protocol_path, src, rel, sizeof rel))
            continue;
        memset(x, 0, sizeof *x);
        snprintf(x->name, sizeof x->name, "%s", k->name);
        snprintf(full, sizeof full, "%s/%s", root, rel);
        snprintf(x->lib, sizeof x->lib, "%s/%s%s", dir, k->name, tc.suffix);
        snprintf(inc, sizeof inc, "-I%s/kernels", root);
        file_sha(full, sha_src);
        {
            /* the pinned flags, one word each, then the include, source and output */
            char flags[sizeof tc.flags];
            char *argv[24];
            int ac = 0;
            memcpy(flags, tc.flags, sizeof flags);
            argv[ac++] = tc.compiler;
            for (char *t = flags; *t && ac < 16;) {
                argv[ac++] = t;
                t += strcspn(t, " ");
                if (*t)
                    *t++ = '\0';
            }
            argv[ac++] = inc;
            argv[ac++] = full;
            argv[ac++] = "-o";
            argv[ac++] = x->lib;
            argv[ac] = NULL;
            unlink(x->lib);
            status = ev_proc_capture(argv, &msg, 1, 65536);
        }
        x->ok = status == 0 && access(x->lib, R_OK) == 0;
        if (x->ok) {
            file_sha(x->lib, sha_bin);
        } else {
            snprintf(x->error, sizeof x->error, "%s/%s.compile-error.txt", dir, k->name);
            if (status == 127 && !strcmp(backend, "cuda"))
                ev_buf_puts(&msg, "(set EVIDENT_NVCC to nvcc's path)\n");
            if (!msg.len)
                ev_buf_append(&msg, "(the compiler printed nothing)\n", 31);
            if (put(x->error, msg.data, msg.len)) {
                ev_buf_free(&msg);
                cJSON_Delete(arr);
                return ev_err_set(err, EV_EIO, "kernels: cannot write %s", x->error);
            }
            x->lib[0] = '\0';
        }
        ev_redact_paths(msg.data ? msg.data : "", msg.len, &red);
        r = cJSON_CreateObject();
        if (!r || !cJSON_AddItemToArray(arr, r)) {
            cJSON_Delete(r);
            ev_buf_free(&msg);
            ev_buf_free(&red);
            cJSON_Delete(arr);
            return ev_err_set(err, EV_ENOMEM, "kernels: out of memory");
        }
        ev_json_add_str(r, "name", k->name);
        ev_json_add_str(r, "backend", backend);
        ev_json_add_str(r, "source", rel);
        ev_json_add_str(r, "source_sha256", sha_src);
        ev_json_add_str(r, "compiler", version[0] ? version : tc.compiler);
        ev_json_add_str(r, "flags", tc.flags);
        cJSON_AddBoolToObject(r, "ok", x->ok);
        if (x->ok)
            ev_json_add_str(r, "binary_sha256", sha_bin);
        else
            cJSON_AddNullToObject(r, "binary_sha256");
        ev_json_add_str(r, "message", red.data ? red.data : "");
        ev_buf_free(&msg);
        ev_buf_free(&red);
        (*n)++;
    }
    *receipts = arr;
    return EV_OK;
}

const ev_ext_built *ev_ext_built_of(const ev_ext_built *b, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(b[i].name, name))
            return &b[i];
    return NULL;
}
