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

/*
 * Watches the started worker w: releases its gate when it has one,
 * streams its records into a, watches the deadline (from now) and the
 * stop request.  OUT: *ce.  Store failures while committing return their
 * status after the child is ended.  Closes w.
 */
ev_status sup_run_child(sup *s, wproc *w, att *a, child_end *ce, ev_err *err)
{
    ev_buf line = EV_BUF_INIT, tail = EV_BUF_INIT;
    int64_t start = mono_ns();
    int64_t deadline = start + (int64_t)(s->proto.job_timeout_s * 1e9), kill_at = 0;
    int rec_open = 1, err_open = 1, exited = 0, status = 0;
    int64_t quiet_since = 0;   /* after the worker's exit: when its pipes last gave bytes */
    int64_t pending_since = 0; /* arrival of the oldest uncommitted bytes; 0: none */
    ev_status rc = EV_OK, fatal = EV_OK;
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
    while (rec_open || err_open || !exited) {
        struct pollfd fds[3];
        int nf = 0, timeout;
        int64_t now = mono_ns();

        if (!exited) {
            pid_t got = waitpid(pid, &status, WNOHANG);
            if (got == pid) {
                exited = 1;
                quiet_since = now;
            }
        }
        if (exited && !rec_open && !err_open)
            break;
        if (!ce->timed_out && !ce->interrupted && now >= deadline && !exited) {
            ce->timed_out = 1;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
        }
        if (!ce->interrupted && !ce->timed_out && stopping(s) && !exited) {
            ce->interrupted = 1;
            kill(-pid, SIGTERM);
            kill(pid, SIGTERM);
            kill_at = now + 2000000000;
        }
        if (fatal && !exited && !ce->interrupted && !ce->timed_out) {
            ce->interrupted = 1;
            kill(-pid, SIGKILL);
        }
        if (kill_at && now >= kill_at && !exited) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            kill_at = 0;
        }
        if (exited && (rec_open || err_open) &&
            (now > deadline + 2000000000 || now - quiet_since > (int64_t)LEFT_QUIET_MS * 1000000)) {
            break; /* a process the worker left holds the pipes: give up on them (sup_reap.c names it) */
        }
        if (rec_open) {
            fds[nf].fd = rp[0];
            fds[nf++].events = POLLIN;
        }
        if (err_open) {
            fds[nf].fd = ep[0];
            fds[nf++].events = POLLIN;
        }
        if (s->o->stop_fd >= 0 && !ce->interrupted) {
            fds[nf].fd = s->o->stop_fd;
            fds[nf++].events = POLLIN;
        }
        if (pending_since && !fatal &&
            (!rec_open || now - pending_since >= (int64_t)COMMIT_MS * 1000000 || line.len >= COMMIT_BYTES)) {
            ev_status c = sup_on_lines(s, a, &line);
            pending_since = line.len ? now : 0;
            if (c) {
                fatal = c;
                ev_err_set(err, c, "store: cannot commit a record");
            }
        }
        /* Never a poll that does not sleep: past the deadline (the worker
         * killed, not yet reaped) it waits 5 ms a turn.  A supervisor at
         * real-time priority that polled without sleeping kept the killed
         * worker off the CPU it needed to exit, for minutes on a busy
         * host and for good where the two shared one CPU. */
        timeout = (rec_open || err_open) ? 200 : 5;
        if (!exited && deadline - now < (int64_t)timeout * 1000000)
            timeout = deadline > now ? (int)((deadline - now) / 1000000) + 1 : 5;
        if (poll(fds, (nfds_t)nf, timeout) < 0 && errno != EINTR) {
            rc = ev_err_set(err, EV_EPROC, "poll: %s", strerror(errno));
            kill(-pid, SIGKILL);
        }
        for (int i = 0; i < nf; i++) {
            char chunk[65536];
            ssize_t n;
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (fds[i].fd == s->o->stop_fd)
                continue; /* the flag is checked above */
            n = read(fds[i].fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR)
                continue;
            if (n > 0)
                quiet_since = mono_ns();
            if (fds[i].fd == rp[0]) {
                if (n <= 0) {
                    rec_open = 0;
                    continue;
                }
                if (ev_buf_append(&line, chunk, (size_t)n)) {
                    fatal = ev_err_set(err, EV_ENOMEM, "record buffer: out of memory");
                    continue;
                }
                if (!pending_since)
                    pending_since = mono_ns();
                if (line.len > MAX_LINE) {
                    sup_proto_err(a, "record %lld: longer than %zu bytes", (long long)a->count + 1, MAX_LINE);
                    ev_buf_reset(&line);
                }
            } else {
                if (n <= 0) {
                    err_open = 0;
                    continue;
                }
                ev_buf_append(&tail, chunk, (size_t)n);
                if (tail.len > 4 * STDERR_TAIL) {
                    memmove(tail.data, tail.data + tail.len - STDERR_TAIL, STDERR_TAIL);
                    tail.len = STDERR_TAIL;
                    tail.data[tail.len] = '\0';
                }
            }
        }
    }
    if (!exited) {
        kill(-pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (line.len && !fatal) {
        ev_status c = sup_on_lines(s, a, &line); /* what is left when the loop gave up on the pipes */
        if (c) {
            fatal = c;
            ev_err_set(err, c, "store: cannot commit a record");
        }
    }
    if (line.len)
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
        size_t from = tail.len > STDERR_TAIL ? tail.len - STDERR_TAIL : 0;
        ev_redact_paths(tail.data ? tail.data + from : "", tail.len - from, &ce->err_tail);
    }
    ce->wall_ns = mono_ns() - start;
    if (fatal && !rc)
        rc = fatal;
    for (int i = 0; i < 2; i++) {
        if (rp[i] >= 0)
            close(rp[i]);
        if (ep[i] >= 0)
            close(ep[i]);
    }
    w->rp = w->ep = -1;
    w->pid = -1;
    ev_buf_free(&line);
    ev_buf_free(&tail);
    return rc;
}
