/*
 * cmd_fit.c: 'evident fit' (placeholder until its module lands: it says so
 * and fails with a usage status, never pretends to work).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int ev_cmd_fit(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--version")) {
        printf("evident fit %s\n", EV_VERSION);
        return EV_EXIT_OK;
    }
    (void)argv;
    fprintf(stderr, "evident fit: not built yet in this version\n");
    return EV_EXIT_USAGE;
}
