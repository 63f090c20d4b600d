/*
 * cmd_stamp.c: `evident stamp [--out FILE]` writes .evident-stamp in the
 * repository root (the working directory) for a copy of the tree that has
 * no usable .git: the git commit, the dirty flag and the measured files'
 * tree hash (runner/snapshot.h, ev_stamp_text).  A run in the copy uses
 * the stamp when its measured files still have that hash.  --out FILE
 * writes it there instead (make install stamps the installed closure),
 * '-' on stdout.  The line written is printed on stdout.  Exit 0, 1 when
 * the stamp cannot be made, 2 usage, not a git checkout, or an output
 * that cannot be written.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "runner/snapshot.h"

static const char stamp_usage[] =
    "usage: evident stamp [--out FILE]\n"
    "\n"
    "Writes .evident-stamp (the git commit, the dirty flag and the measured files'\n"
    "tree hash) in the repository root, or to FILE ('-': stdout), for a copy of\n"
    "the tree that has no usable .git.\n"
    "\n"
    "exit status: 0 written, 1 it could not be made, 2 usage, not a git checkout,\n"
    "or an output that cannot be written\n";

int ev_cmd_stamp(int argc, char **argv)
{
    static const ev_cli_opt opts[] = {{"--out", 1}};
    const char *out = ".evident-stamp", *v = NULL;
    char text[256];
    ev_err err = {""};
    ev_cli cli;
    ev_status rc;
    int k, code;

    ev_cli_init(&cli, "evident stamp", opts, 1, argc, argv);
    while ((k = ev_cli_next(&cli, &v)) != EV_CLI_END) {
        switch (k) {
        case EV_CLI_HELP:
            fputs(stamp_usage, stdout);
            return EV_EXIT_OK;
        case EV_CLI_VERSION:
            printf("evident stamp %s\n", EV_VERSION);
            return EV_EXIT_OK;
        case EV_CLI_BAD:
            return EV_EXIT_USAGE;
        case EV_CLI_POSITIONAL:
            return ev_cli_usage(cli.cmd, "unexpected argument '%s'", v);
        default:
            out = v;
            break;
        }
    }
    if ((code = ev_cli_output(cli.cmd, "--out", out)))
        return code;
    if ((rc = ev_stamp_text(".", text, &err))) {
        fprintf(stderr, "evident stamp: %s\n", err.msg);
        return rc == EV_EUSAGE ? EV_EXIT_USAGE : EV_EXIT_FAIL;
    }
    if ((code = ev_cli_write(cli.cmd, out, text, strlen(text))))
        return code;
    if (!ev_cli_is_std(out))
        fputs(text, stdout);
    return EV_EXIT_OK;
}
