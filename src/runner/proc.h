/*
 * proc.h: the runner's child processes, the two things every one of them
 * does the same way: how a child starts (it dies with its parent, has its
 * own process group, default signal handling) and how a short helper's
 * output is captured (git, cc).
 */
#ifndef EV_PROC_H
#define EV_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "buf.h"

/*
 * In a child just forked from parent: dies with it (PR_SET_PDEATHSIG: an
 * orphan would go on measuring beside the jobs of a --resume), starts its
 * own process group (the watchdog and a stop reach all of it), and takes
 * SIGINT, SIGTERM and SIGPIPE by default.  Returns 0, or -1 when the parent
 * is already gone (the child should _exit).
 */
int ev_proc_child_init(pid_t parent);

/*
 * Runs argv (execvp) with stdin from /dev/null and its stdout captured into
 * out (at most max bytes kept); with_stderr captures stderr too, else it is
 * discarded.  Returns its exit status (128 + signal when killed), or -1
 * when it could not be started.
 */
int ev_proc_capture(char *const argv[], ev_buf *out, int with_stderr, size_t max);

#endif
