/*
 * ext_compile.c: one external kernel's compile, bounded, with its real
 * dependency list (ext_compile.h).
 */
#include "ext_compile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"

/* Monotonic time in ms. */
static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Runs argv (execvp) in directory dir (NULL: here) under lim, its stdout
 * and stderr into out (at most lim->msg_bytes kept), stdin /dev/null, in
 * its own process group, dying with this process.  At lim->wall_ms its
 * group is killed.  OUT: *status (exit status, 128 + signal, -1: could not
 * start), *timed_out.
 */
static void run_bounded(char *const argv[], const char *dir, const ev_ext_limits *lim, ev_buf *out,
                        int *status, int *timed_out)
{
    int fds[2], st = 0, open_ = 1, waited = 1;
    pid_t pid, parent = getpid();
    int64_t deadline = mono_ms() + lim->wall_ms;

    *status = -1;
    *timed_out = 0;
    if (pipe2(fds, O_CLOEXEC))
        return;
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        struct rlimit as = {lim->as_bytes, lim->as_bytes}, fs = {lim->file_bytes, lim->file_bytes};
        struct rlimit core = {0, 0};
        int nul = open("/dev/null", O_RDONLY);
        if (ev_proc_child_init(parent) || (dir && chdir(dir)) || setrlimit(RLIMIT_AS, &as) ||
            setrlimit(RLIMIT_FSIZE, &fs) || setrlimit(RLIMIT_CORE, &core) || dup2(fds[1], 1) < 0 ||
            dup2(fds[1], 2) < 0 || (nul >= 0 && dup2(nul, 0) < 0))
            _exit(126);
        signal(SIGXFSZ, SIG_DFL);
        execvp(argv[0], argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(fds[1]);
    while (open_) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int64_t left = deadline - mono_ms();
        char chunk[4096];
        ssize_t n;
        if (left <= 0) {
            *timed_out = 1;
            break;
        }
        if (poll(&p, 1, left > 1000 ? 1000 : (int)left) < 0 && errno != EINTR)
            break;
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        n = read(fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            open_ = 0;
        else if (out->len < lim->msg_bytes)
            ev_buf_append(out, chunk,
                          out->len + (size_t)n > lim->msg_bytes ? lim->msg_bytes - out->len : (size_t)n);
    }
    close(fds[0]);
    /* the compiler's helpers (nvcc starts several) are in its group */
    if (*timed_out) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    for (;;) {
        pid_t got = waitpid(pid, &st, WNOHANG);
        struct timespec ms = {0, 2000000};
        if (got == pid)
            break;
        if (got < 0 && errno != EINTR) {
            waited = 0;
            break;
        }
        if (got == 0 && !*timed_out && mono_ms() >= deadline) {
            *timed_out = 1;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
        }
        if (got == 0)
            nanosleep(&ms, NULL);
    }
    kill(-pid, SIGKILL); /* nothing of the compile outlives it */
    if (waited)
        *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Adds the directories `compiler -E -Wp,-v -x lang /dev/null` lists for
 * #include <...> (their real paths; /usr/local/include never) to l. */
static ev_status system_dirs(const char *compiler, const char *lang, ev_strs *l)
{
    char *argv[] = {(char *)compiler, "-E", "-Wp,-v", "-x", (char *)lang, "/dev/null", NULL};
    ev_buf out = EV_BUF_INIT;
    ev_status rc = EV_OK;
    ev_ext_limits lim = EV_EXT_LIMITS_DEFAULT;
    int st, to;
    const char *p;

    lim.wall_ms = 30000;
    run_bounded(argv, NULL, &lim, &out, &st, &to);
    p = out.data ? strstr(out.data, "#include <...> search starts here:") : NULL;
    while (p && !rc) {
        char dir[PATH_MAX], real[PATH_MAX];
        size_t n;
        p = strchr(p, '\n');
        if (!p || p[1] != ' ')
            break;
        p += 2;
        n = strcspn(p, "\n");
        if (n >= sizeof dir)
            continue;
        memcpy(dir, p, n);
        dir[n] = '\0';
        if (realpath(dir, real) && strcmp(real, "/usr/local/include"))
            rc = ev_strs_push(l, real);
    }
    ev_buf_free(&out);
    return rc;
}

/* The compiler's version line: the line of `compiler --version` that
 * names a release (nvcc's "Cuda compilation tools, release ..."), else its
 * first line; "" when it cannot be run. */
static void compiler_version(const char *compiler, char *out, size_t cap)
{
    char *argv[] = {(char *)compiler, "--version", NULL};
    ev_buf v = EV_BUF_INIT;
    ev_ext_limits lim = EV_EXT_LIMITS_DEFAULT;
    int st, to;

    out[0] = '\0';
    lim.wall_ms = 30000;
    run_bounded(argv, NULL, &lim, &v, &st, &to);
    if (st == 0 && v.len) {
        const char *line = strstr(v.data, "release");
        while (line && line > v.data && line[-1] != '\n')
            line--;
        line = line ? line : v.data;
        snprintf(out, cap, "%.*s", (int)strcspn(line, "\n"), line);
    }
    ev_buf_free(&v);
}

/* Resolves a command name to its path on PATH (one with a '/' is kept).
 * OUT: out[cap]; "" when not found. */
static void which(const char *cmd, char *out, size_t cap)
{
    const char *path = getenv("PATH");
    out[0] = '\0';
    if (strchr(cmd, '/')) {
        if ((size_t)snprintf(out, cap, "%s", cmd) >= cap)
            out[0] = '\0';
        return;
    }
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        char cand[PATH_MAX];
        if (n && (size_t)snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, cmd) < sizeof cand &&
            access(cand, X_OK) == 0) {
            snprintf(out, cap, "%s", cand);
            return;
        }
        p += n + (p[n] == ':');
    }
}

ev_status ev_ext_toolchain_of(const char *backend, ev_ext_toolchain *t, ev_err *err)
{
    ev_status rc = EV_OK;
    char real[PATH_MAX];

    memset(t, 0, sizeof *t);
    if (!strcmp(backend, "cpu")) {
        snprintf(t->compiler, sizeof t->compiler, "cc");
        snprintf(t->flags, sizeof t->flags, "%s", EV_EXT_CPU_FLAGS);
        t->suffix = ".so";
    } else if (!strcmp(backend, "cuda")) {
        const char *env = getenv("EVIDENT_NVCC");
        if (env && *env)
            snprintf(t->compiler, sizeof t->compiler, "%s", env);
        else if (EV_NVCC[0] && access(EV_NVCC, X_OK) == 0)
            snprintf(t->compiler, sizeof t->compiler, "%s", EV_NVCC);
        else
            snprintf(t->compiler, sizeof t->compiler, "nvcc");
        snprintf(t->flags, sizeof t->flags, "%s -arch=%s", EV_EXT_CUDA_FLAGS, EV_EXT_CUDA_ARCH);
        t->suffix = ".cubin";
    } else {
        return ev_err_set(err, EV_EUNSUPPORTED, "backend %s builds no external kernels", backend);
    }
    snprintf(t->backend, sizeof t->backend, "%s", backend);
    compiler_version(t->compiler, t->version, sizeof t->version);
    if (realpath("/usr/include", real))
        rc = ev_strs_push(&t->toolkit, real);
    if (!rc && t->version[0])
        rc = system_dirs(!strcmp(backend, "cpu") ? t->compiler : "cc", "c", &t->toolkit);
    if (!rc && t->version[0] && !strcmp(backend, "cuda"))
        rc = system_dirs("c++", "c++", &t->toolkit);
    if (!rc && t->version[0] && !strcmp(backend, "cuda")) {
        /* the CUDA toolkit's root: the directory above nvcc's bin/ */
        char path[PATH_MAX], up[PATH_MAX + 8];
        char *slash;
        which(t->compiler, path, sizeof path);
        if ((slash = strrchr(path, '/')) != NULL)
            *slash = '\0'; /* its bin/ */
        if (slash && (size_t)snprintf(up, sizeof up, "%s/..", path) < sizeof up && realpath(up, real))
            rc = ev_strs_push(&t->toolkit, real);
    }
    if (rc) {
        ev_ext_toolchain_free(t);
        return ev_err_set(err, rc, "kernels: out of memory");
    }
    return EV_OK;
}

void ev_ext_toolchain_free(ev_ext_toolchain *t)
{
    if (t)
        ev_strs_free(&t->toolkit);
}

void ev_ext_compiled_free(ev_ext_compiled *c)
{
    if (!c)
        return;
    ev_buf_free(&c->msg);
    ev_strs_free(&c->deps);
}

/*
 * Reads a make-style dependency list (text[0..n)) whose target is
 * EV_EXT_DEP_TARGET: every prerequisite, backslash-newline continuations
 * joined, "\ " read as a space and "$$" as "$".  OUT: pushed to l.
 * EV_EFORMAT when the target is not the first thing in it; EV_ENOMEM.
 */
static ev_status read_deps(const char *text, size_t n, ev_strs *l)
{
    size_t tl = strlen(EV_EXT_DEP_TARGET), i;
    ev_buf word = EV_BUF_INIT;
    ev_status rc = EV_OK;

    if (n < tl || memcmp(text, EV_EXT_DEP_TARGET, tl))
        return EV_EFORMAT;
    i = tl;
    while (i < n && (text[i] == ' ' || text[i] == '\t'))
        i++;
    if (i >= n || text[i] != ':')
        return EV_EFORMAT;
    for (i++; i <= n && !rc; i++) {
        char c = i < n ? text[i] : '\n';
        if (c == '\\' && i + 1 < n && text[i + 1] == '\n') {
            i++;
            c = ' ';
        } else if (c == '\\' && i + 1 < n && text[i + 1] == ' ') {
            rc = ev_buf_append(&word, " ", 1);
            i++;
            continue;
        } else if (c == '$' && i + 1 < n && text[i + 1] == '$') {
            rc = ev_buf_append(&word, "$", 1);
            i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            if (word.len)
                rc = ev_strs_push(l, word.data);
            ev_buf_reset(&word);
            if (c == '\n' && i + 1 < n && text[i + 1] != ' ' && text[i + 1] != '\t')
                break; /* a second rule (-MP's phony targets): not ours */
        } else {
            rc = ev_buf_append(&word, &c, 1);
        }
    }
    ev_buf_free(&word);
    return rc;
}

ev_status ev_ext_compile(const ev_ext_toolchain *t, const char *root, const char *tu, const char *out_path,
                         const ev_ext_limits *lim, ev_ext_compiled *res, ev_err *err)
{
    char flags[sizeof t->flags], dep[4300], abs_out[PATH_MAX + 8], abs_dep[PATH_MAX + 8], cwd[PATH_MAX];
    char *argv[32];
    int ac = 0;
    ev_buf d = EV_BUF_INIT;
    ev_status rc = EV_OK;

    memset(res, 0, sizeof *res);
    res->status = -1;
    if ((size_t)snprintf(dep, sizeof dep, "%s.d", out_path) >= sizeof dep)
        return ev_err_set(err, EV_EIO, "kernels: output path too long");
    /* the compiler runs in root: outputs named from here by absolute paths */
    if (out_path[0] != '/' && !getcwd(cwd, sizeof cwd))
        return ev_err_set(err, EV_EIO, "kernels: getcwd: %s", strerror(errno));
    if (out_path[0] == '/') {
        if ((size_t)snprintf(abs_out, sizeof abs_out, "%s", out_path) >= sizeof abs_out ||
            (size_t)snprintf(abs_dep, sizeof abs_dep, "%s", dep) >= sizeof abs_dep)
            return ev_err_set(err, EV_EIO, "kernels: output path too long");
    } else if ((size_t)snprintf(abs_out, sizeof abs_out, "%s/%s", cwd, out_path) >= sizeof abs_out ||
               (size_t)snprintf(abs_dep, sizeof abs_dep, "%s/%s", cwd, dep) >= sizeof abs_dep) {
        return ev_err_set(err, EV_EIO, "kernels: output path too long");
    }
    memcpy(flags, t->flags, sizeof flags);
    argv[ac++] = (char *)t->compiler;
    for (char *w = flags; *w && ac < 20;) {
        argv[ac++] = w;
        w += strcspn(w, " ");
        if (*w)
            *w++ = '\0';
    }
    argv[ac++] = "-I";
    argv[ac++] = EV_EXT_INCLUDE;
    argv[ac++] = "-MD";
    argv[ac++] = "-MT";
    argv[ac++] = EV_EXT_DEP_TARGET;
    argv[ac++] = "-MF";
    argv[ac++] = abs_dep;
    argv[ac++] = (char *)tu;
    argv[ac++] = "-o";
    argv[ac++] = abs_out;
    argv[ac] = NULL;
    unlink(abs_out);
    unlink(abs_dep);
    run_bounded(argv, root, lim, &res->msg, &res->status, &res->timed_out);
    if (res->timed_out)
        ev_buf_printf(&res->msg, "(the compile was stopped after %lld ms: the bound on its time)\n",
                      (long long)lim->wall_ms);
    if (res->status == 0 && !res->timed_out) {
        ev_err ignored;
        if (ev_read_file_max(abs_dep, (size_t)16 << 20, &d, &ignored) ||
            read_deps(d.data ? d.data : "", d.len, &res->deps)) {
            res->status = -1;
            ev_buf_puts(&res->msg, "(the compiler wrote no readable dependency list)\n");
        }
    }
    ev_buf_free(&d);
    if (!res->msg.data)
        rc = ev_buf_puts(&res->msg, "");
    return rc ? ev_err_set(err, rc, "kernels: out of memory") : EV_OK;
}

/* 1 when real path p is dir or under it. */
static int under(const char *p, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return 1;
    return !strncmp(p, dir, n) && (p[n] == '/' || p[n] == '\0');
}

ev_ext_dep_kind ev_ext_dep_where(const ev_ext_toolchain *t, const char *root, const char *dep, char *rel,
                                 size_t cap)
{
    char joined[PATH_MAX * 2], real[PATH_MAX], rroot[PATH_MAX];

    if (dep[0] == '/')
        snprintf(joined, sizeof joined, "%s", dep);
    else
        snprintf(joined, sizeof joined, "%s/%s", root, dep);
    if (!realpath(joined, real)) {
        snprintf(rel, cap, "%s", dep);
        return EV_DEP_OUTSIDE;
    }
    if (realpath(root, rroot) && under(real, rroot) && strcmp(real, rroot)) {
        snprintf(rel, cap, "%s", real + strlen(rroot) + (strcmp(rroot, "/") ? 1 : 0));
        return EV_DEP_ROOT;
    }
    snprintf(rel, cap, "%s", real);
    for (size_t i = 0; i < t->toolkit.n; i++)
        if (under(real, t->toolkit.v[i]))
            return EV_DEP_TOOLKIT;
    return EV_DEP_OUTSIDE;
}
