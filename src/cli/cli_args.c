/*
 * cli_args.c: the rules every evident command shares (cli.h): reading
 * options, and what an input, an output or a store path must be before a
 * command starts its work.  One owner for each rule, so that every
 * command says the same thing, in one line, with exit 2.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "member.h"
#include "zipread.h"

void ev_cli_init(ev_cli *p, const char *cmd, const ev_cli_opt *opts, size_t n_opts, int argc, char **argv)
{
    p->cmd = cmd;
    p->opts = opts;
    p->n_opts = n_opts;
    p->argc = argc;
    p->argv = argv;
    p->i = 1;
    p->seen = 0;
}

int ev_cli_usage(const char *cmd, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s (try '%s --help')\n", cmd, msg, cmd);
    return EV_EXIT_USAGE;
}

int ev_cli_next(ev_cli *p, const char **val)
{
    const char *a;
    size_t k;

    if (p->i >= p->argc)
        return EV_CLI_END;
    a = p->argv[p->i++];
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
        return EV_CLI_HELP;
    if (!strcmp(a, "--version"))
        return EV_CLI_VERSION;
    if (a[0] != '-' || !a[1]) {
        *val = a; /* a positional argument, "-" included */
        return EV_CLI_POSITIONAL;
    }
    for (k = 0; k < p->n_opts; k++)
        if (!strcmp(a, p->opts[k].name))
            break;
    if (k == p->n_opts) {
        ev_cli_usage(p->cmd, "unknown option %s", a);
        return EV_CLI_BAD;
    }
    if (p->seen & (1UL << k)) {
        ev_cli_usage(p->cmd, "%s given twice", a);
        return EV_CLI_BAD;
    }
    p->seen |= 1UL << k;
    *val = NULL;
    if (p->opts[k].takes_value) {
        const char *v = p->i < p->argc ? p->argv[p->i] : NULL;
        if (!v || !strncmp(v, "--", 2)) {
            ev_cli_usage(p->cmd, "%s needs a value", a);
            return EV_CLI_BAD;
        }
        *val = v;
        p->i++;
    }
    return (int)k;
}

int ev_cli_step(ev_cli *p, const char *usage, const char **val, int *code)
{
    int k = ev_cli_next(p, val);

    switch (k) {
    case EV_CLI_HELP:
        fputs(usage, stdout);
        *code = EV_EXIT_OK;
        return EV_CLI_EXIT;
    case EV_CLI_VERSION:
        printf("%s %s\n", p->cmd, EV_VERSION);
        *code = EV_EXIT_OK;
        return EV_CLI_EXIT;
    case EV_CLI_BAD:
        *code = EV_EXIT_USAGE;
        return EV_CLI_EXIT;
    default:
        return k;
    }
}

int ev_cli_unexpected(const ev_cli *p, const char *arg)
{
    return ev_cli_usage(p->cmd, "unexpected argument '%s'", arg);
}

int ev_cli_is_std(const char *path)
{
    return path && !strcmp(path, "-");
}

/* Prints "CMD: <message>" on stderr (a path refused: the message says
 * what is wrong with it) and returns EV_EXIT_USAGE. */
static int path_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int path_err(const char *cmd, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", cmd, msg);
    return EV_EXIT_USAGE;
}

/* The directory part of path into dir[cap] ("." for a bare name).
 * Returns 0, or -1 when it does not fit. */
static int dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t n;

    if (!slash)
        return snprintf(dir, cap, ".") >= (int)cap ? -1 : 0;
    n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= cap)
        return -1;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return 0;
}

/* Checks that the directory path would be created in exists and can be
 * written.  Returns 0, or prints the reason and returns EV_EXIT_USAGE. */
static int check_dir_writable(const char *cmd, const char *what, const char *path)
{
    char dir[4096], probe[4200];
    struct stat sb;
    int fd;

    if (dir_of(path, dir, sizeof dir))
        return path_err(cmd, "%s %s: the path is too long", what, path);
    if (stat(dir, &sb))
        return path_err(cmd, "%s %s: directory %s %s", what, path, dir,
                        errno == ENOENT ? "does not exist" : strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return path_err(cmd, "%s %s: %s is not a directory", what, path, dir);
    /* a file made and removed at once: the only test that holds for root,
     * read-only mounts and file systems such as /sys alike */
    if (snprintf(probe, sizeof probe, "%s/.evident-probe-XXXXXX", dir) >= (int)sizeof probe)
        return path_err(cmd, "%s %s: the path is too long", what, path);
    if ((fd = mkstemp(probe)) < 0)
        return path_err(cmd, "%s %s: cannot write in directory %s: %s", what, path, dir, strerror(errno));
    close(fd);
    unlink(probe);
    return 0;
}

int ev_cli_input(const char *cmd, const char *what, const char *path)
{
    struct stat sb;

    if (ev_cli_is_std(path))
        return 0;
    if (stat(path, &sb))
        return path_err(cmd, "%s %s: %s", what, path, errno == ENOENT ? "does not exist" : strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return path_err(cmd, "%s %s: is a directory; give a file", what, path);
    if (access(path, R_OK))
        return path_err(cmd, "%s %s: cannot be read: %s", what, path, strerror(errno));
    return 0;
}

int ev_cli_output(const char *cmd, const char *what, const char *path)
{
    struct stat sb;

    if (ev_cli_is_std(path))
        return 0;
    if (!*path)
        return path_err(cmd, "%s: an empty path", what);
    if (!stat(path, &sb) && S_ISDIR(sb.st_mode))
        return path_err(cmd, "%s %s: is a directory; give a file", what, path);
    return check_dir_writable(cmd, what, path);
}

int ev_cli_store_rw(const char *cmd, const char *what, const char *path)
{
    struct stat sb;

    if (!*path)
        return path_err(cmd, "%s: an empty path", what);
    if (!stat(path, &sb)) {
        if (S_ISDIR(sb.st_mode))
            return path_err(cmd, "%s %s: is a directory; give the store's file (e.g. DIR/evidence.db)", what,
                            path);
        if (!S_ISREG(sb.st_mode))
            return path_err(cmd, "%s %s: is not a regular file", what, path);
        if (access(path, R_OK | W_OK))
            return path_err(cmd, "%s %s: cannot be written: %s", what, path, strerror(errno));
    }
    return check_dir_writable(cmd, what, path);
}

int ev_cli_write(const char *cmd, const char *path, const void *data, size_t n)
{
    ev_err err = {""};

    if (ev_cli_is_std(path)) {
        if ((n && fwrite(data, 1, n, stdout) != n) || fflush(stdout)) {
            fprintf(stderr, "%s: writing to stdout failed: %s\n", cmd, strerror(errno));
            return EV_EXIT_FAIL;
        }
        return 0;
    }
    if (ev_write_file(path, n ? data : "", n, &err)) {
        fprintf(stderr, "%s: %s\n", cmd, err.msg);
        return EV_EXIT_USAGE;
    }
    return 0;
}

int ev_cli_read(const char *cmd, const char *path, ev_buf *out)
{
    ev_err err = {""};
    char chunk[65536];
    size_t n;

    if (!ev_cli_is_std(path)) {
        if (ev_read_file(path, out, &err)) {
            fprintf(stderr, "%s: %s\n", cmd, err.msg);
            return EV_EXIT_USAGE;
        }
        return 0;
    }
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        if (ev_buf_append(out, chunk, n)) {
            fprintf(stderr, "%s: reading stdin: out of memory\n", cmd);
            return EV_EXIT_FAIL;
        }
    if (ferror(stdin)) {
        fprintf(stderr, "%s: reading stdin failed: %s\n", cmd, strerror(errno));
        return EV_EXIT_USAGE;
    }
    return 0;
}

int ev_cli_read_bundle(const char *cmd, const char *path, ev_cli_bundle *b)
{
    ev_err err = {""};
    int code;
    memset(b, 0, sizeof *b);
    if ((code = ev_cli_read(cmd, path, &b->zip)))
        goto fail;
    if (ev_members_read_zip(b->zip.data, b->zip.len, &b->z, &b->m, &b->n, &err)) {
        fprintf(stderr, "%s: %s: %s\n", cmd, path, err.msg[0] ? err.msg : "not a readable bundle");
        code = EV_EXIT_FAIL;
        goto fail;
    }
    return 0;
fail:
    ev_cli_bundle_free(b);
    return code;
}

void ev_cli_bundle_free(ev_cli_bundle *b)
{
    if (!b)
        return;
    free(b->m);
    ev_zip_free(b->z);
    ev_buf_free(&b->zip);
    memset(b, 0, sizeof *b);
}
