/*
 * worker_main.c: build/evident-worker, one process per job.  The
 * supervisor starts it with the protocol bytes on an inherited descriptor
 * and the record pipe on another; it measures one job on one backend and
 * streams records (docs/runner.md).  It never opens the database.  Fault
 * arms end the process here (exit, signal, hang, stop after k samples).
 *
 *   evident-worker --backends   (prints the backends built in: "cpu" or "cpu cuda")
 *   evident-worker --backend cpu|cuda --protocol-fd N --record-fd N
 *                  (--probe | --case I --arm A --job-key K [--retry]
 *                   [--coef A0,AP,AD] [--python PY --peer-script FILE [--torch-cache DIR]
 *                    [--compile-ahead-ns NS]] [--kernel-lib SO | --kernel-error FILE]
 *                   [--py-host FILE] [--gate-fd N] [--spawn-ns NS])
 *
 * --gate-fd: a staged job prepares (input bytes; for torch-compile, python
 * with torch imported) and waits for one byte on N before it touches the
 * device.  --spawn-ns: CLOCK_REALTIME when the supervisor forked it.
 *
 * torch-compile jobs run FILE (kernels/peer_torch.py) under PY as a child
 * (src/runner/torch_peer.c).  A Python arm's jobs run --py-host FILE
 * (kernels/python_host.py) under PY as a child, its module the copy that
 * --kernel-lib names (src/runner/backend_python.h).
 *
 * Exit: 0 after the end record; 1 when the job failed (reason on stderr);
 * 2 on usage errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "runner/backend.h"
#include "runner/fault_rules.h"
#include "runner/protocol.h"
#include "runner/worker.h"

/* Parses a non-negative decimal int (whole string).  Returns 0 on success. */
static int parse_int(const char *s, long long *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

/* Reads everything from fd into b.  Returns 0 on success. */
static int read_fd(int fd, ev_buf *b)
{
    char chunk[8192];

    off_t at = 0;
    int seekable = lseek(fd, 0, SEEK_CUR) >= 0;

    /* pread: staged workers read the same memfd at once, and a shared
     * file offset would interleave their reads */
    for (;;) {
        ssize_t n = seekable ? pread(fd, chunk, sizeof chunk, at) : read(fd, chunk, sizeof chunk);
        if (n > 0)
            at += n;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        if (ev_buf_append(b, chunk, (size_t)n))
            return -1;
    }
}

/* The fault hook: ends the process as the fault arm declares. */
static void fault_hook(void *ctx, const ev_proto_fault *f, ev_fault_stage stage, int64_t n)
{
    char line[200];
    (void)ctx;
    switch (f->kind) {
    case EV_FAULT_EXIT:
        if (stage == EV_STAGE_VALIDATED) {
            ev_fault_line(f, line, sizeof line); /* the line ev_fault_problem reads */
            fprintf(stderr, "%s\n", line);
            exit((int)f->value);
        }
        break;
    case EV_FAULT_SIGNAL:
        if (stage == EV_STAGE_VALIDATED) {
            ev_fault_line(f, line, sizeof line);
            fprintf(stderr, "%s\n", line);
            signal((int)f->value, SIG_DFL);
            raise((int)f->value);
            _exit(125); /* a signal that does not kill */
        }
        break;
    case EV_FAULT_ORPHAN:
        if (stage == EV_STAGE_VALIDATED) {
            /* a child that starts a session of its own and leaves a
             * grandchild behind: it outlives the job, outside the job's
             * process group, and its parent is gone before the job ends */
            pid_t child = fork();
            if (child == 0) {
                setsid();
                if (fork() == 0) {
                    prctl(PR_SET_NAME, "ev-orphan", 0, 0, 0);
                    for (;;)
                        pause();
                }
                _exit(0);
            }
            if (child > 0)
                waitpid(child, NULL, 0);
            fprintf(stderr, "evident-worker: fault arm %s: left a process running\n", f->name);
        }
        break;
    case EV_FAULT_HANG:
        if (stage == EV_STAGE_WARMUP)
            for (;;)
                pause();
        break;
    case EV_FAULT_STOP_AFTER:
        if ((stage == EV_STAGE_WARMUP && f->value == 0) || (stage == EV_STAGE_SAMPLE && n == f->value))
            exit(0);
        break;
    default:
        break;
    }
}

/* The backend named (built into this worker) and the protocol read from
 * fd and parsed.  OUT: *ops, *proto (the caller frees it).  Returns 0, or
 * 2 after saying on stderr what was wrong (nothing to free). */
static int open_job(const char *backend, int fd, const ev_backend_ops **ops, ev_protocol *proto)
{
    ev_buf bytes = EV_BUF_INIT;
    ev_err err = {""};
    ev_status rc;

    *ops = NULL;
    if (!strcmp(backend, "cpu"))
        *ops = &ev_backend_cpu_ops;
#ifdef EV_HAVE_CUDA
    else if (!strcmp(backend, "cuda"))
        *ops = &ev_backend_cuda_ops;
#endif
    if (!*ops) {
        fprintf(stderr, "evident-worker: backend '%s' is not built into this worker\n", backend);
        return 2;
    }
    if (read_fd(fd, &bytes)) {
        fprintf(stderr, "evident-worker: cannot read the protocol: %s\n", strerror(errno));
        return 2;
    }
    rc = ev_protocol_parse(bytes.data ? bytes.data : "", bytes.len, proto, &err);
    ev_buf_free(&bytes);
    if (rc) {
        fprintf(stderr, "evident-worker: %s\n", err.msg);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *backend = NULL, *arm = NULL, *job_key = "-", *coef_s = NULL, *python = "python3",
               *peer_script = NULL, *torch_cache = NULL, *kernel_lib = NULL, *kernel_error = NULL,
               *py_host = NULL;
    long long proto_fd = -1, rec_fd = -1, case_index = -1, gate_fd = -1, spawn_ns = 0, ahead_ns = 0;
    struct timespec entered;
    int probe = 0, retry = 0;
    ev_protocol proto;
    ev_worker_args wa;
    ev_rec_out out;
    ev_coef coef;
    ev_err err = {""};
    const ev_backend_ops *ops = NULL;
    ev_status rc;

    clock_gettime(CLOCK_REALTIME, &entered);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--probe")) {
            probe = 1;
        } else if (!strcmp(a, "--retry")) {
            retry = 1;
        } else if (!strcmp(a, "--version")) {
            printf("evident-worker %s\n", EV_VERSION);
            return 0;
        } else if (!strcmp(a, "--backends")) {
            /* the backends built in, for evident run to check before it records anything */
#ifdef EV_HAVE_CUDA
            printf("cpu cuda\n");
#else
            printf("cpu\n");
#endif
            return 0;
        } else if (!v) {
            fprintf(stderr, "evident-worker: %s needs a value\n", a);
            return 2;
        } else if (!strcmp(a, "--backend")) {
            backend = v, i++;
        } else if (!strcmp(a, "--arm")) {
            arm = v, i++;
        } else if (!strcmp(a, "--job-key")) {
            job_key = v, i++;
        } else if (!strcmp(a, "--coef")) {
            coef_s = v, i++;
        } else if (!strcmp(a, "--python")) {
            python = v, i++;
        } else if (!strcmp(a, "--peer-script")) {
            peer_script = v, i++;
        } else if (!strcmp(a, "--torch-cache")) {
            torch_cache = v, i++;
        } else if (!strcmp(a, "--kernel-lib")) {
            kernel_lib = v, i++;
        } else if (!strcmp(a, "--py-host")) {
            py_host = v, i++;
        } else if (!strcmp(a, "--kernel-error")) {
            kernel_error = v, i++;
        } else if (!strcmp(a, "--protocol-fd") && !parse_int(v, &proto_fd)) {
            i++;
        } else if (!strcmp(a, "--record-fd") && !parse_int(v, &rec_fd)) {
            i++;
        } else if (!strcmp(a, "--case") && !parse_int(v, &case_index)) {
            i++;
        } else if (!strcmp(a, "--gate-fd") && !parse_int(v, &gate_fd)) {
            i++;
        } else if (!strcmp(a, "--spawn-ns") && !parse_int(v, &spawn_ns)) {
            i++;
        } else if (!strcmp(a, "--compile-ahead-ns") && !parse_int(v, &ahead_ns)) {
            i++;
        } else {
            fprintf(stderr, "evident-worker: bad argument '%s'\n", a);
            return 2;
        }
    }
    if (!backend || proto_fd < 0 || rec_fd < 0 || (!probe && !arm)) {
        fprintf(
            stderr,
            "usage: evident-worker --backend cpu|cuda --protocol-fd N --record-fd N "
            "(--probe | --case I --arm A --job-key K [--retry] [--coef A0,AP,AD]\n"
            "                [--python PY --peer-script FILE [--torch-cache DIR] [--compile-ahead-ns NS]]\n"
            "                [--kernel-lib SO | --kernel-error FILE] [--py-host FILE] [--gate-fd N] "
            "[--spawn-ns NS])\n");
        return 2;
    }
    if (open_job(backend, (int)proto_fd, &ops, &proto))
        return 2;
    out.fd = (int)rec_fd;
    out.count = 0;
    signal(SIGPIPE, SIG_IGN);
    if (probe) {
        rc = ev_worker_probe(&proto, ops, &out, &err);
    } else {
        memset(&wa, 0, sizeof wa);
        wa.proto = &proto;
        wa.ops = ops;
        wa.case_index = case_index;
        wa.arm = arm;
        wa.job_key = job_key;
        wa.python = python;
        wa.peer_script = peer_script;
        wa.torch_cache = torch_cache;
        wa.gate_fd = (int)gate_fd;
        wa.kernel_lib = kernel_lib;
        wa.kernel_error = kernel_error;
        wa.py_host = py_host;
        wa.spawn_ns = spawn_ns;
        wa.entered_ns = (int64_t)entered.tv_sec * 1000000000 + entered.tv_nsec;
        wa.compile_ahead_ns = ahead_ns;
        if (coef_s) {
            char *e1, *e2, *e3;
            coef.a0 = strtod(coef_s, &e1);
            coef.aP = *e1 == ',' ? strtod(e1 + 1, &e2) : (e2 = e1, 0);
            coef.aD = *e2 == ',' ? strtod(e2 + 1, &e3) : (e3 = e2, 0);
            if (*e3) {
                fprintf(stderr, "evident-worker: bad --coef '%s'\n", coef_s);
                ev_protocol_free(&proto);
                return 2;
            }
            wa.coef = &coef;
        }
        wa.fault = ev_protocol_fault(&proto, arm);
        if (wa.fault && wa.fault->original_only && retry)
            wa.fault = NULL;
        wa.fault_hook = fault_hook;
        rc = ev_worker_run(&wa, &out, &err);
    }
    ev_protocol_free(&proto);
    if (rc) {
        fprintf(stderr, "evident-worker: %s: %s\n", ev_strerror(rc), err.msg);
        return 1;
    }
    return 0;
}
