#!/usr/bin/env bash
# Gate: every check suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
# The exhaustive 2^32 conversion sweeps already ran in make check; under
# the sanitizers they are sampled (EV_CHECK_QUICK) to keep CI within its time.
# check_runner is about half of the suites' time under the sanitizers (its
# runs start many processes, each instrumented), so it runs beside the
# others, two streams on the two CPUs CI has; the suites hold their
# verdicts at load 8 (the Makefile's CHECK_ENV).  Both streams finish, and
# each prints its log, before the gate says which failed.
export EV_CHECK_QUICK=1
make -j2 asan SUITES=check_zipread # the build, and the smallest suite
rest=$(cd tests && ls check_*.c | sed 's/\.c$//' | grep -vx 'check_runner\|check_zipread' | tr '\n' ' ')
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
make --no-print-directory asan SUITES=check_runner > "$log/runner" 2>&1 &
a=$!
make --no-print-directory asan SUITES="$rest" > "$log/rest" 2>&1 &
b=$!
ra=0 rb=0
wait "$a" || ra=$?
wait "$b" || rb=$?
cat "$log/runner" "$log/rest"
# CI keeps only part of a long log: the failures again, last
grep -hE ':[FE]:|runtime error|ERROR: (Address|Leak)Sanitizer|SUMMARY: |make check: FAILED' \
    "$log/runner" "$log/rest" | cut -c1-600 | sed 's/^/asan: /' || true
[ "$ra" = 0 ] || echo "asan: check_runner failed under the sanitizers (above)"
[ "$rb" = 0 ] || echo "asan: a suite of $rest failed under the sanitizers (above)"
[ "$ra" = 0 ] && [ "$rb" = 0 ]
