/*
 * compile_ahead.c: torch-compile's cases compiled before the timed jobs
 * (compile_ahead.h).  o->parallel python processes, each compiling its
 * share of the cases one after another (torch, dynamo and inductor are
 * imported once per process: 11 s on the H200 host, against 0.2-2 s a
 * compile), each in its own process group, dying with the supervisor; a
 * line {"case": i, "compile_ns": N} on its stdout per case compiled.
 */
#include "compile_ahead.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "validate.h"
#include "buf.h"
#include "proc.h"
#include "torch_peer.h"

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

/* One compile process and the cases it compiles. */
typedef struct cproc {
    size_t *cases, n; /* case indexes */
    pid_t pid;
    int out;        /* its stdout, or -1 once closed */
    char line[512]; /* the line being read */
    size_t len;
    int64_t deadline; /* monotonic ns: job_timeout_s per case */
} cproc;

/* Appends case i's spec ("i:op:dtype:rows:cols:stride") to b. */
static int spec(const ev_protocol *p, size_t i, ev_buf *b)
{
    ev_shape sh;
    ev_err e;
    char one[160];

    if (ev_case_shape(&p->cases[i], &sh, &e))
        return -1;
    snprintf(one, sizeof one, "%s%zu:%s:%s:%lld:%lld:%lld", b->len ? ";" : "", i, ev_op_name(sh.op),
             ev_dtype_name(sh.dtype), (long long)sh.rows, (long long)sh.cols, (long long)sh.stride);
    return ev_buf_append(b, one, strlen(one)) ? -1 : 0;
}

/* Starts the compile process of c's cases.  Returns 0, or -1. */
static int start(const ev_ahead_opts *o, cproc *c)
{
    ev_buf cs = EV_BUF_INIT;
    char *argv[8];
    int op[2];
    pid_t parent = getpid(), pid;

    for (size_t k = 0; k < c->n; k++)
        if (spec(o->proto, c->cases[k], &cs)) {
            ev_buf_free(&cs);
            errno = EINVAL;
            return -1;
        }
    argv[0] = (char *)o->python;
    argv[1] = (char *)o->script;
    argv[2] = "--compile-cases";
    argv[3] = cs.data;
    argv[4] = NULL;
    if (pipe2(op, O_CLOEXEC)) {
        ev_buf_free(&cs);
        return -1;
    }
    pid = fork();
    if (pid < 0) {
        close(op[0]);
        close(op[1]);
        ev_buf_free(&cs);
        return -1;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        if (ev_proc_child_init(parent))
            _exit(125);
        if (dup2(op[1], 1) < 0 || (nul >= 0 && (dup2(nul, 0) < 0 || dup2(nul, 2) < 0)))
            _exit(127);
        if (ev_torch_env(o->cache, "cuda"))
            _exit(127);
        execvp(argv[0], argv);
        _exit(127);
    }
    ev_buf_free(&cs);
    setpgid(pid, pid);
    close(op[1]);
    c->pid = pid;
    c->out = op[0];
    c->len = 0;
    c->deadline = mono_ns() + (int64_t)(o->proto->job_timeout_s * 1e9) * (int64_t)c->n;
    return 0;
}

/* Takes one line {"case": i, "compile_ns": N} of c's output into ns. */
static void take_line(const cproc *c, const char *line, int64_t *ns)
{
    cJSON *j = cJSON_Parse(line);
    const cJSON *ci, *v;

    if (!j)
        return;
    ci = cJSON_GetObjectItemCaseSensitive(j, "case");
    v = cJSON_GetObjectItemCaseSensitive(j, "compile_ns");
    if (cJSON_IsNumber(ci) && cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 9e15)
        for (size_t k = 0; k < c->n; k++)
            if ((double)c->cases[k] == ci->valuedouble)
                ns[c->cases[k]] = (int64_t)v->valuedouble;
    cJSON_Delete(j);
}

/* Reaps c (killing it first when kill_it).  Returns why it failed, or
 * NULL when it exited 0. */
static const char *finish(cproc *c, int kill_it)
{
    int status = 0;

    if (kill_it) {
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
    }
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (c->out >= 0)
        close(c->out);
    c->out = -1;
    if (kill_it)
        return "it ran past the protocol's job_timeout_s for each of its cases";
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return WIFSIGNALED(status) ? "it was killed by a signal" : "it exited non-zero";
    return NULL;
}

/* Counts c's cases without a figure into res (the first reason kept). */
static void tally(const cproc *c, const int64_t *ns, const char *why, ev_ahead_result *res)
{
    for (size_t k = 0; k < c->n; k++) {
        if (ns[c->cases[k]])
            continue;
        res->failed++;
        if (!res->first_failure[0])
            snprintf(res->first_failure, sizeof res->first_failure, "case %zu: %s", c->cases[k],
                     why ? why : "it printed no compile time");
    }
}

ev_status ev_compile_ahead(const ev_ahead_opts *o, int64_t *ns, ev_ahead_result *res, ev_err *err)
{
    size_t n = o->proto->n_cases, n_need = 0, par = o->parallel > 0 ? (size_t)o->parallel : 1, running;
    size_t *order = NULL;
    cproc *cp = NULL;
    int64_t t0 = mono_ns();
    ev_status rc = EV_OK;

    memset(res, 0, sizeof *res);
    for (size_t i = 0; i < n; i++) {
        ns[i] = 0;
        n_need += o->need[i] != 0;
    }
    if (!n_need)
        return EV_OK;
    if (o->stop && *o->stop)
        return ev_err_set(err, EV_EINTR, "stopped by a signal");
    if (par > n_need)
        par = n_need;
    if (par > 64)
        par = 64;
    order = malloc(n_need * sizeof *order);
    cp = calloc(par, sizeof *cp);
    if (!order || !cp) {
        free(order);
        free(cp);
        return ev_err_set(err, EV_ENOMEM, "compile ahead: out of memory");
    }
    /* the needed cases dealt round-robin: process k compiles the k-th, the
     * (k + par)-th, ... */
    for (size_t i = 0, k = 0; i < n; i++)
        if (o->need[i])
            order[k++] = i;
    {
        /* each process's share contiguous: tmp[] holds them process by process */
        size_t *tmp = malloc(n_need * sizeof *tmp), at = 0;
        if (!tmp) {
            free(order);
            free(cp);
            return ev_err_set(err, EV_ENOMEM, "compile ahead: out of memory");
        }
        for (size_t k = 0; k < par; k++)
            for (size_t i = k; i < n_need; i += par)
                tmp[at++] = order[i];
        memcpy(order, tmp, n_need * sizeof *tmp);
        free(tmp);
        at = 0;
        for (size_t k = 0; k < par; k++) {
            cp[k].cases = order + at;
            cp[k].n = (n_need - k + par - 1) / par;
            at += cp[k].n;
        }
    }
    res->cases = n_need;
    running = 0;
    for (size_t k = 0; k < par; k++) {
        if (start(o, &cp[k])) {
            char why[160];
            snprintf(why, sizeof why, "cannot start %s: %s", o->python, strerror(errno));
            cp[k].pid = -1;
            cp[k].out = -1;
            tally(&cp[k], ns, why, res);
            continue;
        }
        running++;
    }
    while (running) {
        struct pollfd fds[64];
        size_t map[64];
        int nf = 0;
        int64_t now;

        if (o->stop && *o->stop) {
            rc = ev_err_set(err, EV_EINTR, "stopped by a signal");
            break;
        }
        for (size_t k = 0; k < par; k++)
            if (cp[k].out >= 0) {
                fds[nf].fd = cp[k].out;
                fds[nf].events = POLLIN;
                map[nf++] = k;
            }
        if (poll(fds, (nfds_t)nf, 200) < 0 && errno != EINTR) {
            rc = ev_err_set(err, EV_EPROC, "compile ahead: poll: %s", strerror(errno));
            break;
        }
        now = mono_ns();
        for (int f = 0; f < nf; f++) {
            cproc *c = &cp[map[f]];
            int done = 0;
            if (fds[f].revents & (POLLIN | POLLHUP | POLLERR)) {
                char buf[512];
                ssize_t r = read(c->out, buf, sizeof buf);
                if (r > 0) {
                    for (ssize_t q = 0; q < r; q++) {
                        if (buf[q] == '\n') {
                            c->line[c->len] = '\0';
                            take_line(c, c->line, ns);
                            c->len = 0;
                        } else if (c->len < sizeof c->line - 1) {
                            c->line[c->len++] = buf[q];
                        }
                    }
                } else if (r == 0 || errno != EINTR) {
                    done = 1;
                }
            }
            if (done || now > c->deadline) {
                tally(c, ns, finish(c, !done), res);
                running--;
            }
        }
    }
    for (size_t k = 0; k < par; k++)
        if (cp[k].out >= 0)
            finish(&cp[k], 1); /* stopped or a poll failure */
    free(order);
    free(cp);
    res->wall_ns = mono_ns() - t0;
    return rc;
}
