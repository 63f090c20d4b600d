/*
 * cmd_stamp.c: `evident stamp [--out FILE]` writes .evident-stamp in the
 * repository root (the working directory) for a copy of the tree that has
 * no usable .git: the git commit, the dirty flag and the measured files'
 * tree hash (runner/snapshot.h, ev_stamp_text).  A run in the copy uses
 * the stamp when its measured files still have that hash.  --out FILE
 * writes it there instead (make install stamps the installed closure),
 * '-' on stdout.  The line written is printed on stdout.  Exit 0, 1 when
 * the stamp cannot be made, 2 usage, not a git checkout, or an output
 * that cannot be written.  `evident stamp --roots` prints the measurement
 * closure's files in the working directory's tree (src/common/closure.h:
 * mk/closure.list's files and the list; a tree without the list, its
 * legacy roots), one a line, and writes nothing: scripts that need the
 * closure (make install, ci/gate-30-receipts.sh) ask for it instead of
 * keeping a copy.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "closure.h"
#include "runner/snapshot.h"

static const char stamp_usage[] =
    "usage: evident stamp [--out FILE]\n"
    "       evident stamp --roots\n"
    "\n"
    "Writes .evident-stamp (the git commit, the dirty flag and the measured files'\n"
    "tree hash) in the repository root, or to FILE ('-': stdout), for a copy of\n"
    "the tree that has no usable .git.  --roots prints the measurement closure's\n"
    "files (what a run here snapshots: mk/closure.list's files and the list),\n"
    "one a line, and writes nothing.\n"
    "\n"
    "exit status: 0 written, 1 it could not be made, 2 usage, not a git checkout,\n"
    "or an output that cannot be written\n";

/* An entry the closure walk left out: said on stderr; a link is skipped
 * (as a run skips it), anything else fails the listing (*ctx set). */
static void stamp_odd(void *ctx, ev_closure_odd kind, const char *rel, const char *why)
{
    fprintf(stderr, "evident stamp: %s: %s\n", rel, why);
    if (kind != EV_CLOSURE_NOT_REGULAR)
        *(int *)ctx = 1;
}

int ev_cmd_stamp(int argc, char **argv)
{
    enum { OPT_OUT, OPT_ROOTS };
    static const ev_cli_opt opts[] = {{"--out", 1}, {"--roots", 0}};
    const char *out = ".evident-stamp", *v = NULL;
    char text[256];
    ev_err err = {""};
    ev_cli cli;
    ev_status rc;
    int k, code, roots = 0, have_out = 0;

    ev_cli_init(&cli, "evident stamp", opts, sizeof opts / sizeof opts[0], argc, argv);
    while ((k = ev_cli_step(&cli, stamp_usage, &v, &code)) != EV_CLI_END) {
        switch (k) {
        case EV_CLI_EXIT:
            return code;
        case EV_CLI_POSITIONAL:
            return ev_cli_unexpected(&cli, v);
        case OPT_OUT:
            out = v;
            have_out = 1;
            break;
        case OPT_ROOTS:
            roots = 1;
            break;
        }
    }
    if (roots) {
        if (have_out)
            return ev_cli_usage(cli.cmd, "--roots writes nothing: it takes no --out");
        char **files = NULL;
        size_t n = 0;
        int bad = 0;
        if (ev_closure_list(".", stamp_odd, &bad, &files, &n)) {
            fprintf(stderr, "evident stamp: out of memory\n");
            return EV_EXIT_FAIL;
        }
        for (size_t i = 0; i < n; i++)
            printf("%s\n", files[i]);
        ev_closure_free(files, n);
        return fflush(stdout) || bad ? EV_EXIT_FAIL : EV_EXIT_OK;
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
