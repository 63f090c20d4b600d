/*
 * run_prog.c: test support: the built programs run as real processes
 * (run_prog.h).
 */
#include "run_prog.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

void ev_ran_free(ev_ran *r)
{
    ev_buf_free(&r->out);
    ev_buf_free(&r->err);
}

void ev_prog_path(const char *name, char *out, size_t cap)
{
    const char *b = getenv("EV_BUILD");
    snprintf(out, cap, "%s/%s", b && *b ? b : "build", name);
}

void ev_prog_run(const char *dir, char *const *argv, size_t as_limit, ev_ran *r)
{
    char exe[512], outp[400], errp[400];
    ev_err err;
    int st;
    pid_t pid;

    memset(r, 0, sizeof r[0]);
    r->rc = -1;
    ev_prog_path(argv[0], exe, sizeof exe);
    snprintf(outp, sizeof outp, "%s/stdout.txt", dir);
    snprintf(errp, sizeof errp, "%s/stderr.txt", dir);
    pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY), fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644),
            fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || fo < 0 || fe < 0)
            _exit(127);
        dup2(in, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        if (as_limit) {
            struct rlimit rl = {as_limit, as_limit};
            setrlimit(RLIMIT_AS, &rl);
        }
        execv(exe, argv);
        _exit(127);
    }
    if (pid > 0 && waitpid(pid, &st, 0) == pid)
        r->rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (ev_read_file(outp, &r->out, &err) || ev_read_file(errp, &r->err, &err))
        r->rc = -1;
    if (ev_buf_puts(&r->out, "") || ev_buf_puts(&r->err, ""))
        r->rc = -1;
}

size_t ev_prog_lines(const ev_buf *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->len; i++)
        n += b->data[i] == '\n';
    return n + (b->len && b->data[b->len - 1] != '\n');
}
