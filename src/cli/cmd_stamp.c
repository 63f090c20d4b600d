/*
 * cmd_stamp.c: `evident stamp` writes .evident-stamp in the repository root
 * (the working directory) for a copy of the tree that has no usable .git:
 * the git commit, the dirty flag and the measured files' tree hash
 * (runner/snapshot.h, ev_stamp_write).  A run in the copy uses the stamp
 * when its measured files still have that hash.  Exit 0, 1 when it cannot
 * be written, 2 usage.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "runner/snapshot.h"

int ev_cmd_stamp(int argc, char **argv)
{
    ev_err err = {""};
    ev_status rc;

    if (argc > 1) {
        fprintf(stderr, "usage: evident stamp   (writes .evident-stamp from git, in the repository root)\n");
        return !strcmp(argv[1], "--help") ? EV_EXIT_OK : EV_EXIT_USAGE;
    }
    rc = ev_stamp_write(".", &err);
    if (rc) {
        fprintf(stderr, "evident stamp: %s\n", err.msg);
        return rc == EV_EUSAGE ? EV_EXIT_USAGE : EV_EXIT_FAIL;
    }
    return EV_EXIT_OK;
}
