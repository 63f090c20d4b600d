/*
 * run_prog.h: test support (linked into every suite): the built programs
 * run as real processes, the one way the suites do it (check_cli,
 * check_bundle, check_verify): the program's path under the build
 * directory, its exit status, and its stdout and stderr read back.
 */
#ifndef EV_TESTS_RUN_PROG_H
#define EV_TESTS_RUN_PROG_H

#include <stddef.h>

#include "buf.h"

/* What a program did: its exit status, stdout and stderr. */
typedef struct ev_ran {
    int rc;     /* the exit status; 128 + signal when killed; -1 when it could not be run */
    ev_buf out; /* stdout, NUL-terminated (data never NULL after ev_prog_run) */
    ev_buf err; /* stderr, likewise */
} ev_ran;

/* Frees what ev_prog_run read; leaves r's buffers empty. */
void ev_ran_free(ev_ran *r);

/* The path of the built program name ("evident", "verify-bundle",
 * "evident-worker") into out[cap]: $EV_BUILD/name, build/name when
 * EV_BUILD is unset or empty (make check sets it). */
void ev_prog_path(const char *name, char *out, size_t cap);

/*
 * Runs the built program argv[0] (a name for ev_prog_path) with argv,
 * stdin from /dev/null, stdout and stderr into dir/stdout.txt and
 * dir/stderr.txt, which are read back into *r.  as_limit: the child's
 * RLIMIT_AS in bytes, 0 for none.  No check assertion (the suites make
 * fixtures with it before any test runs): r->rc says what happened, -1
 * also when the output could not be read back.
 */
void ev_prog_run(const char *dir, char *const *argv, size_t as_limit, ev_ran *r);

/* Lines in b (a last line without '\n' counts). */
size_t ev_prog_lines(const ev_buf *b);

#endif
