/*
 * progress.h: how every check suite runs its tests (tests/
 * progress.c): srunner_run_all, with a line on stdout at least every
 * 10 seconds while it runs (how many tests have ended and for how long it
 * has run), so that a long suite in `make check` is never silent.
 */
#ifndef EV_TESTS_PROGRESS_H
#define EV_TESTS_PROGRESS_H

#include <check.h>

/* srunner_run_all(sr, CK_NORMAL) with the progress lines. */
void ev_check_run_all(SRunner *sr);

/* Runs suite s (taken over: freed with its runner) with the progress
 * lines; returns how many of its tests failed. */
int ev_check_suite(Suite *s);

/* Where every suite makes its temporary directories: $TMPDIR when set
 * and not empty, else /tmp (`make check` checks its room first). */
const char *ev_test_tmp(void);

#endif
