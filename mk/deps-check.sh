#!/bin/sh
# mk/deps-check.sh WHAT: checks, before make compiles anything, that what
# WHAT needs is on this machine, and when something is missing names it,
# with the Debian package that provides it and how to install it, in one
# message, exit 1.  WHAT:
#   build   the library's headers (SQLite, OpenSSL, libzip, cJSON, zlib)
#   tests   check's header (the test suites) and python3 (tests/zipcat.py)
#   lint    clang-format
#   fuzz    clang (libFuzzer)
# CC, CPPFLAGS (the build's, DEPS=.deps included) and DEPS come from make.
# Quiet when everything is there; one compiler run per check when not.
what=${1:?usage: mk/deps-check.sh build|tests|lint|fuzz}
CC=${CC:-cc}
missing=""
pkgs=""

# header PACKAGE: the compiler finds <header> with the build's flags
header() {
    printf '#include <%s>\n' "$1" | $CC $CPPFLAGS -E -x c - >/dev/null 2>&1 ||
        { missing="$missing, $1 (package $2)"; pkgs="$pkgs $2"; }
}
# tool PACKAGE: the program is on PATH
tool() {
    command -v "$1" >/dev/null 2>&1 || { missing="$missing, $1 (package $2)"; pkgs="$pkgs $2"; }
}

case $what in
build)
    # all at once first: the usual case costs one compiler run
    printf '#include <sqlite3.h>\n#include <openssl/sha.h>\n#include <zip.h>\n#include <cjson/cJSON.h>\n#include <zlib.h>\n' |
        $CC $CPPFLAGS -E -x c - >/dev/null 2>&1 && exit 0
    header sqlite3.h libsqlite3-dev
    header openssl/sha.h libssl-dev
    header zip.h libzip-dev
    header cjson/cJSON.h libcjson-dev
    header zlib.h zlib1g-dev
    ;;
tests)
    header check.h check
    tool python3 python3
    ;;
lint) tool clang-format clang-format ;;
fuzz) tool "${FUZZ_CC:-clang}" clang ;;
*) echo "mk/deps-check.sh: unknown check '$what'" >&2; exit 2 ;;
esac
[ -z "$missing" ] && exit 0

echo "make $what: missing ${missing#, }" >&2
if [ -n "$DEPS" ] && [ "$what" = build -o "$what" = tests ]; then
    echo "make $what: DEPS=$DEPS lacks them: 'make vendor-debs' on a connected machine fetches them into .deps/debs; copy that here" >&2
elif [ "$what" = build -o "$what" = tests ]; then
    echo "make $what: install them with 'make deps' (as root; it uses apt-get), or: sudo apt-get install -y$pkgs" >&2
    echo "make $what: on a host without network: 'make vendor-debs' on a connected machine, copy .deps/, then 'make DEPS=.deps ...'" >&2
else
    echo "make $what: install it with: sudo apt-get install -y$pkgs" >&2
fi
exit 1
