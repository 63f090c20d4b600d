/*
 * proc.c: how the runner's children start, and helper output (proc.h).
 */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int ev_proc_child_init(pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
        return -1;
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    return 0;
}

int ev_proc_capture(char *const argv[], ev_buf *out, int with_stderr, size_t max)
{
    int fds[2], status = 0;
    pid_t pid;
    char chunk[4096];

    if (pipe(fds))
        return -1;
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(fds[1], 1);
        if (with_stderr)
            dup2(fds[1], 2);
        else if (nul >= 0)
            dup2(nul, 2);
        if (nul >= 0)
            dup2(nul, 0);
        close(fds[0]);
        execvp(argv[0], argv);
        if (with_stderr)
            fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    for (;;) {
        ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (out->len < max)
            ev_buf_append(out, chunk, (size_t)n);
    }
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
