/*
 * cli_paths.c: where `evident run` finds the worker, the torch peer script
 * and the measurement closure (cli.h, ev_cli_find_paths), from the
 * program's own location, never from a path fixed at build time: a build
 * tree keeps the worker beside the program (BUILD/evident-worker) and is
 * run from the repository root, or from anywhere when BUILD's parent is
 * the checkout (build/evident); an installed PREFIX/bin/evident finds
 * PREFIX/libexec/evident/ and PREFIX/share/evident/ (make install), so an
 * installed or DESTDIR-staged tree works wherever it is moved.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* This executable's directory into dir[cap].  Returns 0, or -1. */
static int self_dir(char *dir, size_t cap)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash;

    if (n <= 0)
        return -1;
    self[n] = '\0';
    slash = strrchr(self, '/');
    if (!slash || (size_t)(slash - self) >= cap)
        return -1;
    *slash = '\0';
    snprintf(dir, cap, "%s", self);
    return 0;
}

/* Writes "a/b" into out[cap].  Returns 0, or -1 when it does not fit. */
static int join(char *out, size_t cap, const char *a, const char *b)
{
    int n = snprintf(out, cap, "%s/%s", a, b);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int ev_cli_find_paths(const char *cmd, ev_cli_paths *p)
{
    char dir[PATH_MAX], libexec[PATH_MAX], share[PATH_MAX];
    ev_cli_paths r;

    memset(&r, 0, sizeof r);
    if (self_dir(dir, sizeof dir)) {
        fprintf(stderr, "%s: cannot find this program's own directory (/proc/self/exe)\n", cmd);
        return EV_EXIT_USAGE;
    }
    if (join(r.worker, sizeof r.worker, dir, "evident-worker"))
        goto too_long;
    if (!access(r.worker, X_OK)) {
        /* a build tree: its checkout is the directory it is run from, or
         * else the build directory's parent (build/evident run from a
         * directory of the user's own) */
        char up[PATH_MAX + 8], schema[PATH_MAX + 32];
        snprintf(r.source_root, sizeof r.source_root, ".");
        snprintf(r.peer_script, sizeof r.peer_script, "./kernels/peer_torch.py");
        if (!access("db/schema.sql", R_OK)) {
            *p = r;
            return 0;
        }
        if (join(up, sizeof up, dir, "..") || !realpath(up, r.source_root) ||
            join(schema, sizeof schema, r.source_root, "db/schema.sql") || access(schema, R_OK) ||
            join(r.peer_script, sizeof r.peer_script, r.source_root, "kernels/peer_torch.py")) {
            fprintf(stderr,
                    "%s: run it from the repository root (db/schema.sql is neither here nor in %s/..), or "
                    "install it ('make install') and run the installed program\n",
                    cmd, dir);
            return EV_EXIT_USAGE;
        }
        *p = r;
        return 0;
    }
    if (join(libexec, sizeof libexec, dir, "../libexec/evident") ||
        join(share, sizeof share, dir, "../share/evident") ||
        join(r.worker, sizeof r.worker, libexec, "evident-worker") ||
        join(r.peer_script, sizeof r.peer_script, libexec, "peer_torch.py"))
        goto too_long;
    if (access(r.worker, X_OK)) {
        fprintf(stderr,
                "%s: no evident-worker beside this program (a build tree: run 'make') or in %s (an "
                "installation: run 'make install')\n",
                cmd, libexec);
        return EV_EXIT_USAGE;
    }
    {
        char schema[PATH_MAX + 16];
        if (join(schema, sizeof schema, share, "db/schema.sql") || access(schema, R_OK)) {
            fprintf(stderr,
                    "%s: the installation is incomplete: %s/db/schema.sql is missing (run 'make install')\n",
                    cmd, share);
            return EV_EXIT_USAGE;
        }
    }
    if (!realpath(share, r.source_root)) {
        fprintf(stderr, "%s: %s: %s\n", cmd, share, strerror(errno));
        return EV_EXIT_USAGE;
    }
    r.installed = 1;
    *p = r;
    return 0;
too_long:
    fprintf(stderr, "%s: this program's directory %s is too long a path\n", cmd, dir);
    return EV_EXIT_USAGE;
}
