/*
 * sup_child.c: one worker process: started with fork/exec, pinned to the
 * protocol's CPU set, in its own process group, watched by a deadline; its
 * records read from a pipe, its stderr tail kept with absolute paths
 * redacted; the outcome derived from its process record (sup_int.h).
 */
#include "sup_int.h"

/* After the worker exited, how long its record and stderr pipes may stay
 * open without a byte before the supervisor stops reading them: only a
 * process it left behind (which sup_sweep then names and kills) holds
 * them open. */
#define LEFT_QUIET_MS 500

/* Closes what the supervisor holds of w. */
static void wproc_close(wproc *w)
{
    if (w->rp >= 0)
        close(w->rp);
    if (w->ep >= 0)
        close(w->ep);
    if (w->gate >= 0)
        close(w->gate);
    w->rp = w->ep = w->gate = -1;
}

/*
 * Starts argv as a worker: records on fd 3, protocol on fd 4, with
 * gated, the gate on fd 5 (argv then carries --gate-fd 5), its own
 * process group, pinned.  OUT: *w.
 */
ev_status sup_spawn_worker(sup *s, char *const argv[], int gated, wproc *w, ev_err *err)
{
    int rp[2] = {-1, -1}, ep[2] = {-1, -1}, gp[2] = {-1, -1};
    pid_t pid, parent;

    w->pid = -1;
    w->rp = w->ep = w->gate = -1;
    if (pipe2(rp, O_CLOEXEC) || pipe2(ep, O_CLOEXEC) ||
        (gated && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gp))) {
        ev_err_set(err, EV_EPROC, "pipe: %s", strerror(errno));
        goto fail;
    }
    parent = getpid();
    pid = fork();
    if (pid < 0) {
        ev_err_set(err, EV_EPROC, "fork: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY);
        if (ev_proc_child_init(parent))
            _exit(125); /* the supervisor is gone: a worker never outlives it */
        if (s->proto.n_cpus) {
            cpu_set_t set;
            CPU_ZERO(&set);
            for (size_t i = 0; i < s->proto.n_cpus; i++)
                CPU_SET(s->proto.cpu_set[i], &set);
            if (sched_setaffinity(0, sizeof set, &set)) {
                dprintf(ep[1], "evident-worker: cannot pin to the protocol's cpu_set: %s\n", strerror(errno));
                _exit(126);
            }
        }
        if (dup2(rp[1], 3) < 0 || dup2(s->memfd, 4) < 0 || dup2(ep[1], 2) < 0 || dup2(ep[1], 1) < 0 ||
            (gated && dup2(gp[1], 5) < 0) || (nul >= 0 && dup2(nul, 0) < 0))
            _exit(127);
        execv(argv[0], argv);
        dprintf(2, "evident-worker: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(rp[1]);
    close(ep[1]);
    if (gated)
        close(gp[1]);
    w->pid = pid;
    w->rp = rp[0];
    w->ep = ep[0];
    w->gate = gated ? gp[0] : -1;
    return EV_OK;
fail:
    for (int i = 0; i < 2; i++) {
        if (rp[i] >= 0)
            close(rp[i]);
        if (ep[i] >= 0)
            close(ep[i]);
        if (gp[i] >= 0)
            close(gp[i]);
    }
    return EV_EPROC;
}

/* Ends a staged process that will not be released: closes its gate (it
 * exits at once), kills its group and reaps it. */
void sup_wproc_cancel(wproc *w)
{
    int status;
    wproc_close(w);
    if (w->pid > 0) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
        while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    w->pid = -1;
}

/* What watching a worker has read and still holds. */
typedef struct cwatch {
    ev_buf line, tail;      /* records not yet committed; stderr's last bytes */
    int rec_open, err_open; /* the record and stderr pipes still open */
    int64_t quiet_since;    /* after the worker's exit: when its pipes last gave bytes */
    int64_t pending_since;  /* arrival of the oldest uncommitted bytes; 0: none */
    ev_status fatal;        /* a store or memory failure: the worker is ended */
} cwatch;

/* Ends a running worker (its group first) when it must: past its deadline
 * (timed out: SIGKILL), asked to stop (interrupted: SIGTERM, SIGKILL
 * 2 s later at *kill_at), or after a fatal failure of the supervisor's
 * own (SIGKILL).  Notes which in *ce. */
static void signal_child(sup *s, pid_t pid, child_end *ce, int64_t now, int64_t deadline, ev_status fatal,
                         int64_t *kill_at)
{
    if (!ce->timed_out && !ce->interrupted && now >= deadline) {
        ce->timed_out = 1;
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    if (!ce->interrupted && !ce->timed_out && stopping(s)) {
        ce->interrupted = 1;
        kill(-pid, SIGTERM);
        kill(pid, SIGTERM);
        *kill_at = now + 2000000000;
    }
    if (fatal && !ce->interrupted && !ce->timed_out) {
        ce->interrupted = 1;
        kill(-pid, SIGKILL);
    }
    if (*kill_at && now >= *kill_at) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        *kill_at = 0;
    }
}

/* Reads what the ready pipes among fds[0..nf) give: records into
 * cw->line (a line longer than MAX_LINE is a protocol error, dropped),
 * stderr into cw->tail (its last STDERR_TAIL bytes kept); a pipe that
 * gives nothing more is closed for the watch. */
static void read_ready(att *a, const struct pollfd *fds, int nf, int rec_fd, int stop_fd, cwatch *cw,
                       ev_err *err)
{
    for (int i = 0; i < nf; i++) {
        char chunk[65536];
        ssize_t n;
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        if (fds[i].fd == stop_fd)
            continue; /* the flag is checked above */
        n = read(fds[i].fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n > 0)
            cw->quiet_since = mono_ns();
        if (fds[i].fd == rec_fd) {
            if (n <= 0) {
                cw->rec_open = 0;
                continue;
            }
            if (ev_buf_append(&cw->line, chunk, (size_t)n)) {
                cw->fatal = ev_err_set(err, EV_ENOMEM, "record buffer: out of memory");
                continue;
            }
            if (!cw->pending_since)
                cw->pending_since = mono_ns();
            if (cw->line.len > MAX_LINE) {
                sup_proto_err(a, "record %lld: longer than %zu bytes", (long long)a->count + 1, MAX_LINE);
                ev_buf_reset(&cw->line);
            }
        } else {
            if (n <= 0) {
                cw->err_open = 0;
                continue;
            }
            ev_buf_append(&cw->tail, chunk, (size_t)n);
            if (cw->tail.len > 4 * STDERR_TAIL) {
                memmove(cw->tail.data, cw->tail.data + cw->tail.len - STDERR_TAIL, STDERR_TAIL);
                cw->tail.len = STDERR_TAIL;
                cw->tail.data[cw->tail.len] = '\0';
            }
        }
    }
}

/*
 * Watches the started worker w: releases its gate when it has one,
 * streams its records into a, watches the deadline (from now) and the
 * stop request.  OUT: *ce.  Store failures while committing return their
 * status after the child is ended.  Closes w.
 */
ev_status sup_run_child(sup *s, wproc *w, att *a, child_end *ce, ev_err *err)
{
    cwatch cw = {EV_BUF_INIT, EV_BUF_INIT, 1, 1, 0, 0, EV_OK};
    int64_t start = mono_ns();
    int64_t deadline = start + (int64_t)(s->proto.job_timeout_s * 1e9), kill_at = 0;
    int exited = 0, status = 0;
    ev_status rc = EV_OK;
    pid_t pid = w->pid;
    int rp[2] = {w->rp, -1}, ep[2] = {w->ep, -1};

    memset(ce, 0, sizeof *ce);
    a->records_ok = 1;
    ce->pid = pid;
    if (w->gate >= 0) {
        /* the release: a worker that died at its gate is seen below */
        if (send(w->gate, "g", 1, MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET)
            rc = ev_err_set(err, EV_EPROC, "gate: %s", strerror(errno));
        close(w->gate);
        w->gate = -1;
    }
    while (cw.rec_open || cw.err_open || !exited) {
        struct pollfd fds[3];
        int nf = 0, timeout;
        int64_t now = mono_ns();

        if (!exited) {
            pid_t got = waitpid(pid, &status, WNOHANG);
            if (got == pid) {
                exited = 1;
                cw.quiet_since = now;
            }
        }
        if (exited && !cw.rec_open && !cw.err_open)
            break;
        if (!exited)
            signal_child(s, pid, ce, now, deadline, cw.fatal, &kill_at);
        if (exited && (cw.rec_open || cw.err_open) &&
            (now > deadline + 2000000000 || now - cw.quiet_since > (int64_t)LEFT_QUIET_MS * 1000000)) {
            break; /* a process the worker left holds the pipes: give up on them (sup_reap.c names it) */
        }
        if (cw.rec_open) {
            fds[nf].fd = rp[0];
            fds[nf++].events = POLLIN;
        }
        if (cw.err_open) {
            fds[nf].fd = ep[0];
            fds[nf++].events = POLLIN;
        }
        if (s->o->stop_fd >= 0 && !ce->interrupted) {
            fds[nf].fd = s->o->stop_fd;
            fds[nf++].events = POLLIN;
        }
        if (cw.pending_since && !cw.fatal &&
            (!cw.rec_open || now - cw.pending_since >= (int64_t)COMMIT_MS * 1000000 ||
             cw.line.len >= COMMIT_BYTES)) {
            ev_status c = sup_on_lines(s, a, &cw.line);
            cw.pending_since = cw.line.len ? now : 0;
            if (c) {
                cw.fatal = c;
                ev_err_set(err, c, "store: cannot commit a record");
            }
        }
        /* Never a poll that does not sleep: past the deadline (the worker
         * killed, not yet reaped) it waits 5 ms a turn.  A supervisor at
         * real-time priority that polled without sleeping kept the killed
         * worker off the CPU it needed to exit, for minutes on a busy
         * host and for good where the two shared one CPU. */
        timeout = (cw.rec_open || cw.err_open) ? 200 : 5;
        if (!exited && deadline - now < (int64_t)timeout * 1000000)
            timeout = deadline > now ? (int)((deadline - now) / 1000000) + 1 : 5;
        if (poll(fds, (nfds_t)nf, timeout) < 0 && errno != EINTR) {
            rc = ev_err_set(err, EV_EPROC, "poll: %s", strerror(errno));
            kill(-pid, SIGKILL);
        }
        read_ready(a, fds, nf, rp[0], s->o->stop_fd, &cw, err);
    }
    if (!exited) {
        kill(-pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (cw.line.len && !cw.fatal) {
        ev_status c = sup_on_lines(s, a, &cw.line); /* what is left when the loop gave up on the pipes */
        if (c) {
            cw.fatal = c;
            ev_err_set(err, c, "store: cannot commit a record");
        }
    }
    if (cw.line.len)
        sup_proto_err(a, "record %lld: no newline at the end of the stream", (long long)a->count + 1);
    if (WIFEXITED(status)) {
        ce->has_exit = 1;
        ce->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        ce->has_signal = 1;
        ce->signal = WTERMSIG(status);
    }
    if (!a->end)
        sup_proto_err(a, "no end record (%lld records)", (long long)a->count);
    {
        size_t from = cw.tail.len > STDERR_TAIL ? cw.tail.len - STDERR_TAIL : 0;
        ev_redact_paths(cw.tail.data ? cw.tail.data + from : "", cw.tail.len - from, &ce->err_tail);
    }
    ce->wall_ns = mono_ns() - start;
    if (cw.fatal && !rc)
        rc = cw.fatal;
    for (int i = 0; i < 2; i++) {
        if (rp[i] >= 0)
            close(rp[i]);
        if (ep[i] >= 0)
            close(ep[i]);
    }
    w->rp = w->ep = -1;
    w->pid = -1;
    ev_buf_free(&cw.line);
    ev_buf_free(&cw.tail);
    return rc;
}
