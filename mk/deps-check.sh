#!/bin/sh
# mk/deps-check.sh WHAT: checks, before make compiles or runs anything,
# that what WHAT needs is on this machine, and names each thing that is
# missing or short on a line of its own with the fix ("make check:
# openssl: not found (Debian package openssl): make deps installs it"),
# exit 2, nothing written.  WHAT:
#   build   the library's headers (SQLite, OpenSSL, libzip, cJSON, zlib), and
#           a build directory ($BUILD) that can be written
#   tests   check's header (the test suites) and every program a test runs
#           beyond Debian's essential set: python3 (tests/zipcat.py, the
#           torch peer's skip) and its numpy (a Python arm on cpu),
#           openssl (check_sign's cross-check), git (the
#           stamp and snapshot tests), setpriv (util-linux: a worker without
#           the capability for real-time priority)
#   room    $BUILD and the tests' temporary directory ($TMPDIR, else /tmp):
#           each writable, each with room (ROOM_BUILD_MB, ROOM_TMP_MB)
#   lint    clang-format
#   fuzz    clang (libFuzzer)
# CC, CPPFLAGS (the build's, DEPS=.deps included), DEPS and BUILD come from
# make.  Quiet when everything is there; one compiler run per check when
# not.  With DEPS set, programs are looked up on PATH and in $DEPS/bin (the
# vendored ones: Makefile, `make vendor-debs`).
what=${1:?usage: mk/deps-check.sh build|tests|room|lint|fuzz}
CC=${CC:-cc}
BUILD=${BUILD:-build}
ROOM_BUILD_MB=${ROOM_BUILD_MB:-200}
ROOM_TMP_MB=${ROOM_TMP_MB:-300}
problems=0
[ -n "$DEPS" ] && PATH=$PATH:$DEPS/bin

case $what in
build) label=make ;;
tests | room) label="make check" ;;
*) label="make $what" ;;
esac
# say TEXT: one problem, one line
say() {
    echo "$label: $1" >&2
    problems=$((problems + 1))
}
# the fix for a missing Debian package
fix() {
    if [ -n "$DEPS" ]; then
        echo "DEPS=$DEPS lacks it: 'make vendor-debs' on a connected machine fetches it into .deps/debs; copy that here"
    else
        echo "make deps installs it (as root; or: sudo apt-get install -y $1)"
    fi
}
# header HEADER PACKAGE: the compiler finds <header> with the build's flags
header() {
    printf '#include <%s>\n' "$1" | $CC $CPPFLAGS -E -x c - >/dev/null 2>&1 ||
        say "$1: not found (Debian package $2): $(fix "$2")"
}
# tool PROGRAM PACKAGE [FIX]: the program is on PATH (FIX: how to get it,
# when `make deps` does not install it)
tool() {
    command -v "$1" >/dev/null 2>&1 || say "$1: not found (Debian package $2): ${3:-$(fix "$2")}"
}
# writable DIR ROLE HOW: DIR (or, when it does not exist yet, the nearest
# directory above it that does) takes a new file
writable() {
    d=$1
    while [ ! -d "$d" ] && [ "$d" != / ] && [ "$d" != . ]; do d=$(dirname "$d"); done
    f=$d/.evident-room.$$
    if err=$(touch "$f" 2>&1); then
        rm -f "$f"
        return 0
    fi
    say "$1 ($2): cannot be written ($d: ${err##*: }): $3"
    return 1
}
# room DIR ROLE MB HOW: at least MB MiB free where DIR is (or would be)
room() {
    d=$1
    while [ ! -d "$d" ] && [ "$d" != / ] && [ "$d" != . ]; do d=$(dirname "$d"); done
    free=$(df -Pk "$d" 2>/dev/null | awk 'NR == 2 { print int($4 / 1024) }')
    [ -n "$free" ] || return 0
    [ "$free" -ge "$3" ] || say "$1 ($2): $free MiB free, $3 MiB needed: $4"
}

case $what in
build)
    # all at once first: the usual case costs one compiler run
    printf '#include <sqlite3.h>\n#include <openssl/sha.h>\n#include <zip.h>\n#include <cjson/cJSON.h>\n#include <zlib.h>\n' |
        $CC $CPPFLAGS -E -x c - >/dev/null 2>&1 || {
        header sqlite3.h libsqlite3-dev
        header openssl/sha.h libssl-dev
        header zip.h libzip-dev
        header cjson/cJSON.h libcjson-dev
        header zlib.h zlib1g-dev
    }
    writable "$BUILD" "the build directory" "make BUILD=DIR builds in a directory you can write"
    ;;
tests)
    header check.h check
    tool python3 python3
    # a Python arm on cpu runs on numpy (check_runner): python3 on PATH or
    # Debian's own must import it; a DEPS= build may lack it (the tests
    # then say they left those arms out)
    if [ -z "$DEPS" ] && ! python3 -c 'import numpy' >/dev/null 2>&1 &&
        ! /usr/bin/python3 -c 'import numpy' >/dev/null 2>&1; then
        say "numpy: neither python3 nor /usr/bin/python3 imports it (Debian package python3-numpy): $(fix python3-numpy)"
    fi
    tool openssl openssl
    tool git git
    tool setpriv util-linux
    ;;
room)
    tmp=${TMPDIR:-/tmp}
    writable "$BUILD" "the build directory" "make BUILD=DIR check builds in a directory you can write" &&
        room "$BUILD" "the build directory" "$ROOM_BUILD_MB" "free some, or make BUILD=DIR check on a larger disk"
    writable "$tmp" "the tests' temporary directory, \$TMPDIR or /tmp" "TMPDIR=DIR make check uses another" &&
        room "$tmp" "the tests' temporary directory, \$TMPDIR or /tmp" "$ROOM_TMP_MB" \
            "free some, or TMPDIR=DIR make check uses a larger one"
    ;;
lint) tool clang-format clang-format "sudo apt-get install -y clang-format" ;;
fuzz) tool "${FUZZ_CC:-clang}" clang "sudo apt-get install -y clang" ;;
*)
    echo "mk/deps-check.sh: unknown check '$what'" >&2
    exit 2
    ;;
esac
[ "$problems" = 0 ] && exit 0
if [ -z "$DEPS" ] && [ "$what" = build -o "$what" = tests ]; then
    echo "$label: on a host without network: 'make vendor-debs' on a connected machine, copy .deps/, then 'make DEPS=.deps ...'" >&2
fi
exit 2
