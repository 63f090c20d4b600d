/*
 * backend_python.c: a Python arm's backend (backend_python.h).  Every
 * call is one request to the Python host (kernels/python_host.py) and its
 * answer, over two pipes: a request is one JSON line {"op": ..., ...};
 * an answer is one JSON line {"ok": true, ...} or {"ok": false, "error":
 * "..."}, followed, when it says "bytes": N, by N raw bytes.  The host's
 * first line, unasked, is its hello (its interpreter's version and, on
 * cuda, its device).  While it answers, the worker watches its process:
 * its anonymous resident memory (killed past the limit), its exit (the
 * status or signal named) and, after every answer, its stdout (a file of
 * its own: anything there fails the job, naming it).  Its stderr is the
 * worker's, so a traceback lands in the job's stderr tail.  The host runs
 * in the worker's process group (the supervisor's watchdog and stop reach
 * it) and dies with the worker (PR_SET_PDEATHSIG).
 */
#include "backend_python.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "job.h"
#include "jread.h"
#include "json.h"

/* The host's ends of the two pipes, inside its process. */
#define PY_REQ_FD  10
#define PY_RESP_FD 11
/* How often a request's wait reads the host's memory (ms). */
#define PY_TICK_MS 20
/* The most bytes of its stdout a failure quotes. */
#define PY_STDOUT_QUOTE 160

const char *const ev_python_not_held[] = {
    "secret seed: a Python arm's function is host code in the process that also holds its buffers and the "
    "plants' library, so it could read the attempt's secret seed there (the plants file, the library's "
    "state): the planted checks hold it to every op only as far as it does not look (the worker still draws "
    "the seed and holds every tag to it)",
    "confinement: nothing confines its process (no seccomp filter, no Landlock): it may read files, start "
    "threads and processes and use the network; the supervisor's sweep names any process it leaves behind",
    "its own memory: its input variants and output slots are its own process's memory, so it can write any "
    "of them (the input is read back after every validated launch, the slots' guards at every read, and on "
    "cpu its views are read-only)",
    "its own timer: its samples are timed in its own process (perf_counter on cpu, CUDA events on cuda); "
    "the worker's wall clock around each request bounds them only past the late-work margin (1.5 x + 20 ms)",
    "node receipts: on cuda torch names no kernel node of its graph, so no entry, grid or block is read "
    "back",
    NULL,
};

typedef struct py_impl {
    const ev_backend_ops *base; /* the run's backend (its name; cpu: its facts; cuda: its watch) */
    void *base_impl;            /* cpu: the cpu backend opened for its device facts */
    void *watch;                /* cuda: the NVML watch (backend.h), or NULL */
    ev_backend_config cfg;
    pid_t pid;
    int req, resp, out_fd; /* our ends; the host's stdout file */
    char dir[512];         /* the job's directory (input, plants, stdout) */
    char in_path[600], plants_path[600], out_path[600];
    char arm[64], entry[64];
    ev_device_info dev;
    int64_t limit_kb; /* its anonymous resident memory at most; 0: not bound yet */
    int64_t held_kb;  /* what it held at bind */
    clockid_t cpu_clock;
    int have_clock;
    ev_buf rbuf; /* bytes read past the last answer's line */
    ev_backend_facts facts;
    int dead; /* the host exited or was killed: every later call fails */
} py_impl;

/* Monotonic time in ns. */
static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The host's anonymous resident memory in KiB (proc's RssAnon), -1 when
 * it cannot be read. */
static int64_t rss_anon_kb(pid_t pid)
{
    char path[64], line[256];
    int64_t kb = -1;
    FILE *f;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "RssAnon:", 8)) {
            char *end;
            long long v = strtoll(line + 8, &end, 10);
            kb = end != line + 8 ? (int64_t)v : -1;
            break;
        }
    fclose(f);
    return kb;
}

/* Kills the host (once) and reaps it.  OUT: why[cap], how it ended: its
 * exit status or signal. */
static void reap(py_impl *c, int kill_it, char *why, size_t cap)
{
    int st = 0;
    pid_t r;
    why[0] = '\0';
    if (c->pid <= 0)
        return;
    if (kill_it)
        kill(c->pid, SIGKILL);
    while ((r = waitpid(c->pid, &st, 0)) < 0 && errno == EINTR)
        ;
    if (r == c->pid && WIFSIGNALED(st))
        snprintf(why, cap, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else if (r == c->pid && WIFEXITED(st))
        snprintf(why, cap, "exited with status %d", WEXITSTATUS(st));
    else
        snprintf(why, cap, "ended");
    c->pid = -1;
    c->dead = 1;
}

/* EV_EPROC: the host ended while what was running (its stderr, above in
 * the job's tail, says why in its own words). */
static ev_status died(py_impl *c, const char *what, ev_err *err)
{
    char why[160];
    reap(c, 1, why, sizeof why);
    return ev_err_set(err, EV_EPROC, "%s: its Python process %s during %s (its stderr is above)", c->arm, why,
                      what);
}

/* Writes all n bytes of p to fd.  Returns 0, or -1. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Waits until the answer's pipe has bytes, reading the host's memory
 * every PY_TICK_MS: past its limit, it is killed.  Returns 0 when there
 * is something to read (or the pipe closed), -1 with err when it was
 * killed. */
static int wait_readable(py_impl *c, const char *what, ev_err *err)
{
    for (;;) {
        struct pollfd p = {c->resp, POLLIN, 0};
        int n = poll(&p, 1, PY_TICK_MS);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != 0)
            return 0;
        if (c->limit_kb > 0) {
            int64_t kb = rss_anon_kb(c->pid);
            if (kb > c->limit_kb) {
                char why[160];
                reap(c, 1, why, sizeof why);
                ev_err_set(err, EV_EPROC,
                           "%s: killed its Python process during %s: its anonymous resident memory reached "
                           "%.1f MiB, over its limit of %.1f MiB (the %.1f MiB it held at bind and the "
                           "kernel's memory_mb, %" PRId64 ")",
                           c->arm, what, (double)kb / 1024, (double)c->limit_kb / 1024,
                           (double)c->held_kb / 1024, c->cfg.py_memory_mb);
                return -1;
            }
        }
    }
}

/* Reads until rbuf holds a whole line.  OUT: *len, the line's length
 * (its newline at rbuf.data[*len]).  Returns 0, or -1 at end of file. */
static int read_line(py_impl *c, const char *what, size_t *len, ev_err *err, int *killed)
{
    char chunk[65536];
    *killed = 0;
    for (;;) {
        char *nl = c->rbuf.len ? memchr(c->rbuf.data, '\n', c->rbuf.len) : NULL;
        ssize_t n;
        if (nl) {
            *len = (size_t)(nl - c->rbuf.data);
            return 0;
        }
        if (wait_readable(c, what, err)) {
            *killed = 1;
            return -1;
        }
        n = read(c->resp, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || ev_buf_append(&c->rbuf, chunk, (size_t)n))
            return -1;
    }
}

/* Reads exactly n payload bytes into dst (rbuf's first). Returns 0, or -1. */
static int read_payload(py_impl *c, const char *what, unsigned char *dst, size_t n, ev_err *err, int *killed)
{
    size_t have = c->rbuf.len < n ? c->rbuf.len : n;
    *killed = 0;
    if (have)
        memcpy(dst, c->rbuf.data, have);
    memmove(c->rbuf.data, c->rbuf.data + have, c->rbuf.len - have);
    c->rbuf.len -= have;
    while (have < n) {
        ssize_t r;
        if (wait_readable(c, what, err)) {
            *killed = 1;
            return -1;
        }
        r = read(c->resp, dst + have, n - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        have += (size_t)r;
    }
    return 0;
}

/* Fails the job when the host wrote anything to its stdout: EV_EPROC
 * quoting its first bytes. */
static ev_status stdout_clean(py_impl *c, const char *what, ev_err *err)
{
    struct stat st;
    char quote[PY_STDOUT_QUOTE + 1];
    ssize_t n;
    if (c->out_fd < 0 || fstat(c->out_fd, &st) || st.st_size == 0)
        return EV_OK;
    n = pread(c->out_fd, quote, PY_STDOUT_QUOTE, 0);
    quote[n > 0 ? n : 0] = '\0';
    for (char *q = quote; *q; q++)
        if ((unsigned char)*q < 0x20)
            *q = ' ';
    return ev_err_set(
        err, EV_EPROC,
        "%s: its Python process wrote %lld bytes to stdout by the end of %s (\"%s%s\"): a measured "
        "function must not print (its output would be timed; the records are the worker's, "
        "never its stdout): print to sys.stderr while debugging, outside the protocol",
        c->arm, (long long)st.st_size, what, quote, (size_t)st.st_size > strlen(quote) ? "..." : "");
}

/*
 * One request: req (consumed) written as a line; its answer read.  OUT:
 * *ans (the answer's object: cJSON_Delete it), and when the answer
 * carries bytes, exactly want of them into dst (want 0: none expected).
 * *wall_ns (when not NULL): the worker's own clock from before the
 * request to the end of its answer.  EV_EPROC naming the arm and what
 * failed: the host's own error, its death, its memory, its stdout.
 */
static ev_status call(py_impl *c, cJSON *req, const char *what, cJSON **ans, void *dst, size_t want,
                      int64_t *wall_ns, ev_err *err)
{
    char *text = req ? cJSON_PrintUnformatted(req) : NULL;
    cJSON *a = NULL;
    size_t len = 0;
    int64_t t0, bytes = 0;
    int killed = 0;
    ev_status rc = EV_OK;

    cJSON_Delete(req);
    if (!text)
        return ev_err_set(err, EV_ENOMEM, "%s: %s: out of memory", c->arm, what);
    if (c->dead) {
        free(text);
        return ev_err_set(err, EV_EPROC, "%s: its Python process is gone (%s)", c->arm, what);
    }
    t0 = mono_ns();
    if (write_all(c->req, text, strlen(text)) || write_all(c->req, "\n", 1)) {
        free(text);
        return died(c, what, err);
    }
    free(text);
    if (read_line(c, what, &len, err, &killed))
        return killed ? EV_EPROC : died(c, what, err);
    if (ev_json_parse(c->rbuf.data, len, 0, &a, NULL) || !cJSON_IsObject(a)) {
        cJSON_Delete(a);
        reap(c, 1, (char[160]){0}, 160);
        return ev_err_set(err, EV_EPROC,
                          "%s: its Python process answered %s with a line that is not an answer", c->arm,
                          what);
    }
    memmove(c->rbuf.data, c->rbuf.data + len + 1, c->rbuf.len - len - 1);
    c->rbuf.len -= len + 1;
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "ok"))) {
        const char *e = ev_jr_str(a, "error");
        rc = ev_err_set(err, EV_EPROC, "%s: %s", c->arm,
                        e ? e : "its Python process failed (no reason given)");
        cJSON_Delete(a);
        return rc;
    }
    if (!ev_json_get_i64(a, "bytes", &bytes, NULL) || want) {
        if (bytes < 0 || (size_t)bytes != want) {
            cJSON_Delete(a);
            reap(c, 1, (char[160]){0}, 160);
            return ev_err_set(err, EV_EPROC, "%s: %s: its Python process sent %lld bytes, %zu expected",
                              c->arm, what, (long long)bytes, want);
        }
        if (want && read_payload(c, what, dst, want, err, &killed)) {
            cJSON_Delete(a);
            return killed ? EV_EPROC : died(c, what, err);
        }
    }
    if (wall_ns)
        *wall_ns = mono_ns() - t0;
    if ((rc = stdout_clean(c, what, err))) {
        cJSON_Delete(a);
        return rc;
    }
    *ans = a;
    return EV_OK;
}

/* A request {"op": op} with nothing else. */
static cJSON *req_of(const char *op)
{
    cJSON *r = cJSON_CreateObject();
    if (r && !cJSON_AddStringToObject(r, "op", op)) {
        cJSON_Delete(r);
        r = NULL;
    }
    return r;
}

/* call() of a request without answer fields the caller needs. */
static ev_status simple(py_impl *c, cJSON *req, const char *what, ev_err *err)
{
    cJSON *a = NULL;
    ev_status rc = call(c, req, what, &a, NULL, 0, NULL, err);
    cJSON_Delete(a);
    return rc;
}

/* Closes every descriptor from `from` on (the child, before exec). */
static void close_from(int from)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)from, ~0u, 0) == 0)
        return;
#endif
    for (int fd = from; fd < 4096; fd++)
        close(fd);
}

/* Starts the host.  EV_EPROC when it cannot start; EV_EIO. */
static ev_status spawn(py_impl *c, ev_err *err)
{
    const char *tmp = getenv("TMPDIR");
    int rq[2] = {-1, -1}, rs[2] = {-1, -1}, xp[2] = {-1, -1}, exec_errno = 0;
    char *argv[16];
    int ac = 0;
    pid_t parent = getpid();

    snprintf(c->dir, sizeof c->dir, "%s/evident-py-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(c->dir)) {
        c->dir[0] = '\0';
        return ev_err_set(err, EV_EIO, "%s: mkdtemp: %s", c->arm, strerror(errno));
    }
    snprintf(c->in_path, sizeof c->in_path, "%s/input.bin", c->dir);
    snprintf(c->plants_path, sizeof c->plants_path, "%s/plants.bin", c->dir);
    snprintf(c->out_path, sizeof c->out_path, "%s/stdout.txt", c->dir);
    if ((c->out_fd = open(c->out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
        return ev_err_set(err, EV_EIO, "%s: cannot create its stdout file: %s", c->arm, strerror(errno));
    if (pipe2(rq, O_CLOEXEC) || pipe2(rs, O_CLOEXEC) || pipe2(xp, O_CLOEXEC)) {
        ev_err_set(err, EV_EPROC, "%s: pipe: %s", c->arm, strerror(errno));
        goto fail;
    }
    argv[ac++] = (char *)c->cfg.python;
    argv[ac++] = (char *)c->cfg.py_host;
    argv[ac++] = "--req-fd";
    argv[ac++] = "10";
    argv[ac++] = "--resp-fd";
    argv[ac++] = "11";
    argv[ac++] = "--backend";
    argv[ac++] = (char *)c->base->name;
    argv[ac++] = "--ops-lib";
    argv[ac++] = (char *)c->cfg.py_ops_lib;
    argv[ac++] = "--arm";
    argv[ac++] = c->arm;
    argv[ac] = NULL;
    c->pid = fork();
    if (c->pid < 0) {
        ev_err_set(err, EV_EPROC, "%s: fork: %s", c->arm, strerror(errno));
        goto fail;
    }
    if (c->pid == 0) {
        int a, b, e, null = open("/dev/null", O_RDONLY);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
            _exit(125); /* the host never outlives its worker */
        a = fcntl(rq[0], F_DUPFD, 64);
        b = fcntl(rs[1], F_DUPFD, 64);
        if (a < 0 || b < 0 || null < 0 || dup2(null, 0) < 0 || dup2(c->out_fd, 1) < 0 ||
            dup2(a, PY_REQ_FD) < 0 || dup2(b, PY_RESP_FD) < 0 || dup2(xp[1], 12) < 0 ||
            fcntl(12, F_SETFD, FD_CLOEXEC) < 0)
            _exit(127);
        for (int fd = 3; fd < PY_REQ_FD; fd++)
            close(fd); /* the worker's record stream above all: never the host's */
        close_from(13);
        if (setenv("PYTHONDONTWRITEBYTECODE", "1", 1) || setenv("PYTHONUNBUFFERED", "1", 1))
            _exit(127);
        execvp(argv[0], argv);
        e = errno;
        if (write(12, &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    close(rq[0]);
    close(rs[1]);
    close(xp[1]);
    rq[0] = rs[1] = xp[1] = -1;
    c->req = rq[1];
    c->resp = rs[0];
    if (read(xp[0], &exec_errno, sizeof exec_errno) != (ssize_t)sizeof exec_errno)
        exec_errno = 0; /* the exec succeeded: the pipe closed on it */
    close(xp[0]);
    if (exec_errno) {
        char why[160];
        reap(c, 0, why, sizeof why);
        return ev_err_set(
            err, EV_EPROC,
            "%s: cannot run the Python arm's interpreter %s: %s (name one: evident run --python "
            "PY, or the protocol's \"python\")",
            c->arm, c->cfg.python, strerror(exec_errno));
    }
    c->have_clock = clock_getcpuclockid(c->pid, &c->cpu_clock) == 0;
    return EV_OK;
fail:
    for (int i = 0; i < 2; i++) {
        if (rq[i] >= 0)
            close(rq[i]);
        if (rs[i] >= 0)
            close(rs[i]);
        if (xp[i] >= 0)
            close(xp[i]);
    }
    return EV_EPROC;
}

/* The host's hello: its versions and, on cuda, its device. */
static ev_status hello(py_impl *c, ev_err *err)
{
    size_t len;
    int killed;
    cJSON *a = NULL, *d;
    ev_status rc = EV_OK;
    if (read_line(c, "its start", &len, err, &killed))
        return killed ? EV_EPROC : died(c, "its start (importing what it needs)", err);
    if (ev_json_parse(c->rbuf.data, len, 0, &a, NULL) || !cJSON_IsObject(a)) {
        cJSON_Delete(a);
        return ev_err_set(err, EV_EPROC, "%s: its Python process's first line is not its hello", c->arm);
    }
    memmove(c->rbuf.data, c->rbuf.data + len + 1, c->rbuf.len - len - 1);
    c->rbuf.len -= len + 1;
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "ok"))) {
        const char *e = ev_jr_str(a, "error");
        rc = ev_err_set(err, EV_EPROC, "%s: %s", c->arm, e ? e : "its Python process could not start");
        goto out;
    }
    if ((rc = stdout_clean(c, "its start", err)))
        goto out;
    d = cJSON_GetObjectItemCaseSensitive(a, "device");
    if (cJSON_IsObject(d)) { /* cuda: the device as torch sees it */
        const char *s;
        int64_t v;
        snprintf(c->dev.backend, sizeof c->dev.backend, "%s", c->base->name);
        if ((s = ev_jr_str(d, "name")) != NULL)
            snprintf(c->dev.name, sizeof c->dev.name, "%s", s);
        if ((s = ev_jr_str(d, "compute_capability")) != NULL)
            snprintf(c->dev.compute_capability, sizeof c->dev.compute_capability, "%s", s);
        if ((s = ev_jr_str(d, "runtime_version")) != NULL)
            snprintf(c->dev.runtime_version, sizeof c->dev.runtime_version, "%s", s);
        if ((s = ev_jr_str(d, "uuid")) != NULL)
            snprintf(c->dev.uuid, sizeof c->dev.uuid, "%s", s);
        c->dev.sms = !ev_json_get_i64(d, "sms", &v, NULL) ? v : -1;
        c->dev.cache_bytes = !ev_json_get_i64(d, "cache_bytes", &v, NULL) ? v : -1;
        c->dev.memory_bytes = !ev_json_get_i64(d, "memory_bytes", &v, NULL) ? v : -1;
        c->dev.clock_mhz = c->dev.memory_clock_mhz = -1;
        {
            int64_t fb = c->cfg.ref.flush_cache_multiple * (c->dev.cache_bytes > 0 ? c->dev.cache_bytes : 0);
            if (c->cfg.ref.flush_max_bytes && fb > c->cfg.ref.flush_max_bytes)
                fb = c->cfg.ref.flush_max_bytes;
            c->dev.flush_bytes = fb;
        }
    }
out:
    cJSON_Delete(a);
    return rc;
}

static void py_close(void *impl);

static ev_status py_open_with(const ev_backend_ops *base, const ev_backend_config *cfg, void **impl,
                              ev_err *err)
{
    py_impl *c = calloc(1, sizeof *c);
    ev_status rc;
    if (!c)
        return ev_err_set(err, EV_ENOMEM, "python arm: out of memory");
    c->base = base;
    c->cfg = *cfg;
    c->pid = -1;
    c->req = c->resp = c->out_fd = -1;
    snprintf(c->arm, sizeof c->arm, "%s", cfg->py_arm ? cfg->py_arm : "the Python arm");
    if (!cfg->python || !cfg->py_host || !cfg->py_ops_lib) {
        free(c);
        return ev_err_set(err, EV_EINVAL, "python arm: no interpreter, host script or plants library given");
    }
    if (!strcmp(base->name, "cpu")) {
        /* the host's device is this host: the cpu backend's facts (cache,
         * flush, threads), its pool idle */
        if ((rc = base->open(cfg, &c->base_impl, err)) || (rc = base->info(c->base_impl, &c->dev, err)))
            goto fail;
    } else if (base->watch_open && base->watch_open(cfg->device_index, &c->watch, err) != EV_OK) {
        c->watch = NULL; /* nothing to watch: every fact unknown */
    }
    if ((rc = spawn(c, err)) || (rc = hello(c, err)))
        goto fail;
    *impl = c;
    return EV_OK;
fail:
    py_close(c);
    return rc;
}

/* The run's backends a Python arm's backend stands on (ev_backend_python:
 * one job per worker process). */
static const ev_backend_ops *py_cpu_base, *py_cuda_base;

static ev_status py_open_cpu(const ev_backend_config *cfg, void **impl, ev_err *err)
{
    return py_open_with(py_cpu_base, cfg, impl, err);
}

static ev_status py_open_cuda(const ev_backend_config *cfg, void **impl, ev_err *err)
{
    return py_open_with(py_cuda_base, cfg, impl, err);
}

static void py_close(void *impl)
{
    py_impl *c = impl;
    if (!c)
        return;
    if (c->req >= 0)
        close(c->req); /* the host reads the end of its requests and exits */
    if (c->pid > 0) {
        char why[160];
        int st, gone = 0;
        for (int i = 0; i < 200 && !gone; i++) { /* a second to exit on its own, then killed */
            struct timespec ms5 = {0, 5000000};
            gone = waitpid(c->pid, &st, WNOHANG) == c->pid;
            if (!gone)
                nanosleep(&ms5, NULL);
        }
        if (gone)
            c->pid = -1;
        else
            reap(c, 1, why, sizeof why);
    }
    if (c->resp >= 0)
        close(c->resp);
    if (c->out_fd >= 0)
        close(c->out_fd);
    if (c->dir[0]) {
        unlink(c->in_path);
        unlink(c->plants_path);
        unlink(c->out_path);
        rmdir(c->dir);
    }
    if (c->base_impl)
        c->base->close(c->base_impl);
    if (c->watch && c->base->watch_close)
        c->base->watch_close(c->watch);
    ev_buf_free(&c->rbuf);
    free(c);
}

static ev_status py_info(void *impl, ev_device_info *out, ev_err *err)
{
    (void)err;
    *out = ((py_impl *)impl)->dev;
    return EV_OK;
}

/* Writes n bytes to a new file at path.  EV_EIO. */
static ev_status put_file(const char *path, const void *p, size_t n, ev_err *err)
{
    FILE *f = fopen(path, "wb");
    int bad = !f || (n && fwrite(p, 1, n, f) != n);
    if (f)
        bad |= fclose(f) != 0;
    return bad ? ev_err_set(err, EV_EIO, "python arm: cannot write %s", strrchr(path, '/') + 1) : EV_OK;
}

static ev_status py_bind(void *impl, const ev_backend_job *job, ev_backend_binding *out, ev_err *err)
{
    py_impl *c = impl;
    cJSON *r, *a = NULL, *v;
    ev_shape s;
    ev_job_plants pl;
    int64_t x;
    ev_status rc;

    snprintf(c->arm, sizeof c->arm, "%s", job->arm ? job->arm : "python");
    snprintf(c->entry, sizeof c->entry, "%s", job->ext_entry ? job->ext_entry : "");
    if (job->kind != EV_ARM_EXTERNAL || !job->plants || !job->plant_rows || !job->ext_lib)
        return ev_err_set(err, EV_EINVAL, "%s: a Python arm binds only a validated case with its module",
                          c->arm);
    if (!job->ext_entry)
        return ev_err_set(err, EV_EUNSUPPORTED, "%s declares no entry for %s/%s", job->arm, job->c.op,
                          job->c.dtype);
    if (ev_op_parse(job->c.op, &s.op) || ev_dtype_parse(job->c.dtype, &s.dtype))
        return ev_err_set(err, EV_EINVAL, "%s: case %s/%s", c->arm, job->c.op, job->c.dtype);
    s.rows = job->c.rows;
    s.cols = job->c.cols;
    s.stride = job->c.stride;
    memset(&pl, 0, sizeof pl);
    pl.seed = job->plants->seed;
    pl.rows = (ev_plant_row *)job->plant_rows;
    if ((rc = put_file(c->in_path, job->input, job->input_len, err)) ||
        (rc = ev_job_plants_file(c->plants_path, &pl, &s, job->plants->ops, c->cfg.ref.variant_budget_bytes,
                                 err)))
        return rc;
    if (!(r = req_of("bind")))
        return ev_err_set(err, EV_ENOMEM, "%s: out of memory", c->arm);
    ev_json_add_str(r, "module", job->ext_lib);
    ev_json_add_str(r, "function", job->ext_entry);
    ev_json_add_str(r, "op", job->c.op);
    ev_json_add_str(r, "dtype", job->c.dtype);
    ev_json_add_i64(r, "rows", s.rows);
    ev_json_add_i64(r, "cols", s.cols);
    ev_json_add_i64(r, "stride", s.stride);
    ev_json_add_i64(r, "ops", job->plants->ops);
    ev_json_add_i64(r, "variants", job->plants->variants);
    ev_json_add_i64(r, "cache_bytes", c->dev.cache_bytes);
    ev_json_add_i64(r, "flush_bytes", c->dev.flush_bytes);
    ev_json_add_str(r, "input", c->in_path);
    ev_json_add_str(r, "plants", c->plants_path);
    if ((rc = call(c, r, "bind", &a, NULL, 0, NULL, err)))
        return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(a, "versions")) != NULL) {
        char *t = cJSON_PrintUnformatted(v);
        if (t && strlen(t) < sizeof c->facts.versions)
            snprintf(c->facts.versions, sizeof c->facts.versions, "%s", t);
        free(t);
    }
    memset(out, 0, sizeof *out);
    out->in_span = (int64_t)job->input_len;
    out->out_span = s.rows * (int64_t)ev_dtype_size(s.dtype);
    out->in_align = !ev_json_get_i64(a, "in_align", &x, NULL) ? x : 0;
    out->out_align = !ev_json_get_i64(a, "out_align", &x, NULL) ? x : 0;
    out->threads = c->dev.sms;
    out->out_len = (size_t)out->out_span;
    cJSON_Delete(a);
    /* its memory from now on: what it holds, its buffers and the flush
     * among them, and the kernel's allowance beyond */
    c->held_kb = rss_anon_kb(c->pid);
    if (c->held_kb >= 0)
        c->limit_kb = c->held_kb + c->cfg.py_memory_mb * 1024;
    return EV_OK;
}

static ev_status py_poison(void *impl, int byte, ev_err *err)
{
    py_impl *c = impl;
    cJSON *r = req_of("poison");
    if (r)
        ev_json_add_i64(r, "byte", byte);
    return simple(c, r, "poison", err);
}

static ev_status py_launch(void *impl, ev_err *err)
{
    return simple(impl, req_of("launch"), "its launch", err);
}

static ev_status py_read_output(void *impl, int64_t slot, void *dst, size_t len, ev_err *err)
{
    py_impl *c = impl;
    cJSON *r = req_of("read_output"), *a = NULL;
    ev_status rc;
    if (r) {
        ev_json_add_i64(r, "slot", slot);
        ev_json_add_i64(r, "len", (int64_t)len);
    }
    rc = call(c, r, "reading its output", &a, dst, len, NULL, err);
    cJSON_Delete(a);
    return rc;
}

/* An answer's "ms" (a double the host timed).  EV_EPROC when absent. */
static ev_status answer_ms(py_impl *c, const cJSON *a, double *ms, ev_err *err)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(a, "ms");
    if (!cJSON_IsNumber(m) || !isfinite(m->valuedouble) || m->valuedouble < 0)
        return ev_err_set(err, EV_EPROC, "%s: its Python process answered a timing without its ms", c->arm);
    *ms = m->valuedouble;
    return EV_OK;
}

static ev_status py_cold_launch(void *impl, double *ms, ev_err *err)
{
    py_impl *c = impl;
    cJSON *a = NULL;
    ev_status rc = call(c, req_of("cold"), "a cold sample", &a, NULL, 0, NULL, err);
    if (!rc)
        rc = answer_ms(c, a, ms, err);
    cJSON_Delete(a);
    return rc;
}

static ev_status py_capture(void *impl, int64_t ops, ev_node_receipt **nodes, size_t *n_nodes, ev_err *err)
{
    py_impl *c = impl;
    cJSON *r = req_of("capture"), *a = NULL;
    const char *how;
    ev_status rc;
    if (r)
        ev_json_add_i64(r, "ops", ops);
    if ((rc = call(c, r, "its capture", &a, NULL, 0, NULL, err)))
        return rc;
    how = ev_jr_str(a, "capture");
    snprintf(c->facts.capture, sizeof c->facts.capture, "%s", how ? how : "graph");
    cJSON_Delete(a);
    *nodes = NULL;
    *n_nodes = 0;
    if (strcmp(c->base->name, "cpu"))
        return EV_OK; /* cuda: torch's graph names no node (nodes_unread) */
    /* cpu: one receipt per batch, as an external kernel's: its entry,
     * one call per op */
    ev_node_receipt *n = calloc(1, sizeof *n);
    if (!n)
        return ev_err_set(err, EV_ENOMEM, "%s: out of memory", c->arm);
    snprintf(n->function, sizeof n->function, "%s", c->entry);
    for (int d = 0; d < 3; d++)
        n->grid[d] = n->block[d] = 1;
    *nodes = n;
    *n_nodes = 1;
    return EV_OK;
}

static ev_status py_replay(void *impl, int64_t k, double *ms, double *wall_ms, ev_err *err)
{
    py_impl *c = impl;
    cJSON *r = req_of("replay"), *a = NULL;
    int64_t wall = 0;
    ev_status rc;
    if (r)
        ev_json_add_i64(r, "k", k);
    if ((rc = call(c, r, "a timed replay", &a, NULL, 0, &wall, err)))
        return rc;
    rc = answer_ms(c, a, ms, err);
    cJSON_Delete(a);
    if (!rc && wall_ms)
        *wall_ms = (double)wall / 1e6; /* the worker's own clock around the request */
    return rc;
}

static ev_status py_sm_clock(void *impl, int64_t *mhz, ev_err *err)
{
    (void)impl;
    (void)mhz;
    return ev_err_set(err, EV_EUNSUPPORTED, "a Python arm's process reads no SM clock");
}

static ev_status py_read_input(void *impl, int64_t which, void *dst, size_t len, ev_err *err)
{
    py_impl *c = impl;
    cJSON *r = req_of("read_input"), *a = NULL;
    ev_status rc;
    if (r)
        ev_json_add_i64(r, "which", which);
    rc = call(c, r, "reading its input back", &a, dst, len, NULL, err);
    cJSON_Delete(a);
    return rc;
}

static ev_status py_tag(void *impl, ev_plant_state *st, uint64_t *launched, ev_err *err)
{
    py_impl *c = impl;
    cJSON *a = NULL;
    const char *tag;
    const cJSON *f;
    int64_t rn = 0, n = 0, v;
    ev_status rc = call(c, req_of("tag"), "reading its check state", &a, NULL, 0, NULL, err);
    if (rc)
        return rc;
    tag = ev_jr_str(a, "tag");
    if (!tag || strlen(tag) != 16 || ev_json_get_i64(a, "r_next", &rn, NULL) ||
        ev_json_get_i64(a, "launched", &n, NULL) || rn < 1 || n < 0) {
        cJSON_Delete(a);
        return ev_err_set(err, EV_EPROC, "%s: its Python process answered a check state without its tag",
                          c->arm);
    }
    memset(st, 0, sizeof *st);
    st->tag = (uint64_t)strtoull(tag, NULL, 16);
    st->r_next = (uint64_t)rn;
    f = cJSON_GetObjectItemCaseSensitive(a, "first");
    if (cJSON_IsObject(f)) {
        const cJSON *d;
        st->first_set = 1;
        st->first.replay = !ev_json_get_i64(f, "replay", &v, NULL) ? v : 0;
        st->first.op = !ev_json_get_i64(f, "op", &v, NULL) ? v : 0;
        st->first.row = !ev_json_get_i64(f, "row", &v, NULL) ? v : 0;
        st->first.kind = !ev_json_get_i64(f, "kind", &v, NULL) ? v : 0;
        d = cJSON_GetObjectItemCaseSensitive(f, "value");
        st->first.value = cJSON_IsNumber(d) ? d->valuedouble : NAN;
        d = cJSON_GetObjectItemCaseSensitive(f, "expect");
        st->first.expect = cJSON_IsNumber(d) ? d->valuedouble : NAN;
        d = cJSON_GetObjectItemCaseSensitive(f, "bound");
        st->first.bound = cJSON_IsNumber(d) ? d->valuedouble : NAN;
    }
    *launched = (uint64_t)n;
    cJSON_Delete(a);
    return EV_OK;
}

static ev_status py_read_kept(void *impl, void *dst, size_t len, ev_err *err)
{
    py_impl *c = impl;
    cJSON *r = req_of("read_kept"), *a = NULL;
    ev_status rc;
    if (r)
        ev_json_add_i64(r, "len", (int64_t)len);
    rc = call(c, r, "reading its kept output", &a, dst, len, NULL, err);
    cJSON_Delete(a);
    return rc;
}

static ev_status py_unplant(void *impl, ev_err *err)
{
    return simple(impl, req_of("unplant"), "restoring its plants", err);
}

static ev_status py_intact(void *impl, int64_t *variant, size_t *at, ev_err *err)
{
    py_impl *c = impl;
    cJSON *a = NULL;
    int64_t v = -1, b = 0;
    ev_status rc = call(c, req_of("intact"), "comparing its input variants", &a, NULL, 0, NULL, err);
    if (rc)
        return rc;
    if (ev_json_get_i64(a, "variant", &v, NULL) || ev_json_get_i64(a, "at", &b, NULL) || b < 0) {
        cJSON_Delete(a);
        return ev_err_set(err, EV_EPROC, "%s: its Python process answered the variants' comparison badly",
                          c->arm);
    }
    cJSON_Delete(a);
    *variant = v;
    *at = (size_t)b;
    return EV_OK;
}

static ev_status py_state(void *impl, ev_device_state *out, ev_err *err)
{
    py_impl *c = impl;
    (void)err;
    if (c->watch && c->base->watch_state)
        c->base->watch_state(c->watch, (int64_t)c->pid, out);
    else
        ev_device_state_unknown(out);
    return EV_OK;
}

static int64_t py_helper_cpu_ns(void *impl)
{
    py_impl *c = impl;
    struct timespec t;
    if (!c || !c->have_clock || c->pid <= 0 || clock_gettime(c->cpu_clock, &t))
        return -1;
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void py_facts(void *impl, ev_backend_facts *out)
{
    *out = ((py_impl *)impl)->facts;
}

#define PY_OPS(name, open_fn, unread)                                                                        \
    {                                                                                                        \
        name, open_fn, py_close, py_info, py_bind, py_poison, py_launch, py_read_output, py_cold_launch,     \
            py_capture, py_replay, py_sm_clock, py_read_input, py_tag, py_read_kept, py_unplant, py_intact,  \
            py_state, NULL, NULL, NULL, py_helper_cpu_ns, py_facts, unread, NULL                             \
    }

static const ev_backend_ops py_cpu = PY_OPS("cpu", py_open_cpu, 0);
static const ev_backend_ops py_cuda = PY_OPS("cuda", py_open_cuda, 1);

const ev_backend_ops *ev_backend_python(const ev_backend_ops *base)
{
    if (base && !strcmp(base->name, "cpu")) {
        py_cpu_base = base;
        return &py_cpu;
    }
    if (base && !strcmp(base->name, "cuda")) {
        py_cuda_base = base;
        return &py_cuda;
    }
    return NULL;
}

ev_status ev_python_ops_lib(const char *backend, char *out, size_t cap, ev_err *err)
{
    char self[4001];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    const char *lib = strcmp(backend, "cuda") ? "libevident_ops_cpu.so" : "libevident_ops.so";
    char *slash;
    if (n <= 0)
        return ev_err_set(err, EV_EPROC, "python arm: cannot find this worker's own path");
    self[n] = '\0';
    if ((slash = strrchr(self, '/')) != NULL)
        *slash = '\0';
    if ((size_t)snprintf(out, cap, "%.4000s/%s", self, lib) >= cap || access(out, R_OK))
        return ev_err_set(err, EV_EPROC,
                          "python arm: %s is missing: a Python arm runs under the same plants and checks as "
                          "every arm (make builds it%s)",
                          out, strcmp(backend, "cuda") ? "" : " with nvcc");
    return EV_OK;
}

ev_status ev_python_config(ev_backend_config *cfg, const char *backend, const char *arm,
                           const ev_ext_kernel *k, const char *python, const char *py_host, char *lib,
                           size_t cap, ev_err *err)
{
    ev_status rc;
    if (!py_host)
        return ev_err_set(err, EV_EINVAL, "%s: the worker was given no Python host script (--py-host)", arm);
    if ((rc = ev_python_ops_lib(backend, lib, cap, err)))
        return rc;
    cfg->python = python ? python : "python3";
    cfg->py_arm = arm;
    cfg->py_host = py_host;
    cfg->py_ops_lib = lib;
    cfg->py_memory_mb = k ? k->memory_mb : EV_EXT_PY_MEMORY_MB;
    return EV_OK;
}

int ev_backend_is_python(const ev_backend_ops *ops)
{
    return ops == &py_cpu || ops == &py_cuda;
}
