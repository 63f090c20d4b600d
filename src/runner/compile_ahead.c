/*
 * compile_ahead.c: torch-compile's cases compiled before the timed jobs
 * (compile_ahead.h).  One python process per case, o->parallel at once,
 * each in its own process group, dying with the supervisor; its one line
 * of stdout ({"compile_ns": N}) is the case's compile time.
 */
#include "compile_ahead.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "worker.h"

void ev_torch_cache_path(const char *db_path, int64_t run_id, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s.torch-cache-run%lld", db_path, (long long)run_id);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One compile process. */
typedef struct cproc {
    size_t case_index;
    pid_t pid;
    int out;          /* its stdout, or -1 once closed */
    char line[256];   /* what it printed */
    size_t len;
    int64_t deadline; /* monotonic ns */
} cproc;

/* Starts the compile of case i.  Returns 0, or -1 (errno set). */
static int start(const ev_ahead_opts *o, size_t i, cproc *c)
{
    const ev_proto_case *pc = &o->proto->cases[i];
    char rows[24], cols[24], stride[24];
    char *argv[24];
    int ac = 0, op[2];
    ev_shape sh;
    ev_err e;
    pid_t parent = getpid(), pid;

    if (ev_backend_shape(pc, &sh, &e)) {
        errno = EINVAL;
        return -1;
    }
    snprintf(rows, sizeof rows, "%lld", (long long)sh.rows);
    snprintf(cols, sizeof cols, "%lld", (long long)sh.cols);
    snprintf(stride, sizeof stride, "%lld", (long long)sh.stride);
    argv[ac++] = (char *)o->python;
    argv[ac++] = (char *)o->script;
    argv[ac++] = "--compile-only";
    argv[ac++] = "--input";
    argv[ac++] = "-";
    argv[ac++] = "--out-first";
    argv[ac++] = "-";
    argv[ac++] = "--out-final";
    argv[ac++] = "-";
    argv[ac++] = "--op";
    argv[ac++] = (char *)ev_op_name(sh.op);
    argv[ac++] = "--dtype";
    argv[ac++] = (char *)ev_dtype_name(sh.dtype);
    argv[ac++] = "--rows";
    argv[ac++] = rows;
    argv[ac++] = "--cols";
    argv[ac++] = cols;
    argv[ac++] = "--stride";
    argv[ac++] = stride;
    argv[ac] = NULL;
    if (pipe2(op, O_CLOEXEC))
        return -1;
    pid = fork();
    if (pid < 0) {
        close(op[0]);
        close(op[1]);
        return -1;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
            _exit(125);
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        if (dup2(op[1], 1) < 0 || (nul >= 0 && (dup2(nul, 0) < 0 || dup2(nul, 2) < 0)))
            _exit(127);
        if (ev_torch_env(o->cache, "cuda"))
            _exit(127);
        execvp(argv[0], argv);
        _exit(127);
    }
    setpgid(pid, pid);
    close(op[1]);
    c->case_index = i;
    c->pid = pid;
    c->out = op[0];
    c->len = 0;
    c->line[0] = '\0';
    c->deadline = mono_ns() + (int64_t)(o->proto->job_timeout_s * 1e9);
    return 0;
}

/* Reaps c (killing it first when kill_it) and reads its compile time.
 * Returns the time in ns, or 0 with *why set. */
static int64_t finish(cproc *c, int kill_it, const char **why)
{
    int status = 0;
    int64_t ns = 0;
    cJSON *j;

    if (kill_it) {
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
    }
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (c->out >= 0)
        close(c->out);
    c->out = -1;
    c->line[c->len] = '\0';
    if (kill_it) {
        *why = "it ran past the protocol's job_timeout_s";
        return 0;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        *why = WIFSIGNALED(status) ? "it was killed by a signal" : "it exited non-zero";
        return 0;
    }
    j = cJSON_Parse(c->line);
    if (j) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "compile_ns");
        if (cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 9e15)
            ns = (int64_t)v->valuedouble;
        cJSON_Delete(j);
    }
    if (!ns)
        *why = "it printed no compile time";
    return ns;
}

ev_status ev_compile_ahead(const ev_ahead_opts *o, int64_t *ns, ev_ahead_result *res, ev_err *err)
{
    size_t n = o->proto->n_cases, next = 0, running = 0, par = o->parallel > 0 ? (size_t)o->parallel : 1;
    cproc *cp;
    int64_t t0 = mono_ns();
    ev_status rc = EV_OK;

    memset(res, 0, sizeof *res);
    for (size_t i = 0; i < n; i++)
        ns[i] = 0;
    if (!(cp = calloc(par, sizeof *cp)))
        return ev_err_set(err, EV_ENOMEM, "compile ahead: out of memory");
    for (;;) {
        struct pollfd fds[64];
        size_t map[64];
        int nf = 0;
        int64_t now;

        while (running < par && next < n && !(o->stop && *o->stop)) {
            size_t i = next++;
            if (!o->need[i])
                continue;
            if (start(o, i, &cp[running])) {
                if (!res->first_failure[0])
                    snprintf(res->first_failure, sizeof res->first_failure, "case %zu: cannot start %s: %s", i,
                             o->python, strerror(errno));
                res->cases++;
                res->failed++;
                continue;
            }
            res->cases++;
            running++;
        }
        if (o->stop && *o->stop) {
            const char *why;
            for (size_t k = 0; k < running; k++)
                finish(&cp[k], 1, &why);
            running = 0;
            rc = ev_err_set(err, EV_EINTR, "stopped by a signal");
            break;
        }
        if (!running)
            break;
        for (size_t k = 0; k < running && nf < 64; k++) {
            fds[nf].fd = cp[k].out;
            fds[nf].events = POLLIN;
            map[nf++] = k;
        }
        if (poll(fds, (nfds_t)nf, 200) < 0 && errno != EINTR) {
            rc = ev_err_set(err, EV_EPROC, "compile ahead: poll: %s", strerror(errno));
            break;
        }
        now = mono_ns();
        for (int f = nf - 1; f >= 0; f--) {
            cproc *c = &cp[map[f]];
            int done = 0, late = now > c->deadline;
            if (fds[f].revents & (POLLIN | POLLHUP | POLLERR)) {
                char buf[256];
                ssize_t r = read(c->out, buf, sizeof buf);
                if (r > 0) {
                    size_t take = (size_t)r < sizeof c->line - 1 - c->len ? (size_t)r : sizeof c->line - 1 - c->len;
                    memcpy(c->line + c->len, buf, take);
                    c->len += take;
                } else if (r == 0 || errno != EINTR) {
                    done = 1;
                }
            }
            if (done || late) {
                const char *why = "";
                int64_t t = finish(c, !done, &why);
                if (t)
                    ns[c->case_index] = t;
                else {
                    res->failed++;
                    if (!res->first_failure[0])
                        snprintf(res->first_failure, sizeof res->first_failure, "case %zu: %s", c->case_index,
                                 why);
                }
                *c = cp[--running];
            }
        }
    }
    if (rc) {
        const char *why;
        for (size_t k = 0; k < running; k++)
            finish(&cp[k], 1, &why);
    }
    free(cp);
    res->wall_ns = mono_ns() - t0;
    return rc;
}
