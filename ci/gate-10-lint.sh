#!/usr/bin/env bash
# Gate: make lint: layout (clang-format), the banned-function list
# (docs/HACKING.md, "How the code reads"), the vocabulary spelled once
# (ci/vocab-once.py), no dangling path in the docs (ci/doc-paths.py) and
# the sizes (ci/fn-size.py).  First it shows the path and size checks can
# fail: a tree whose README names a file that is not there must give one
# dangling path, and a tree with a function of 151 lines and a file of
# 1,101 lines must give both.
set -euo pipefail
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs" "$tmp/src/x" "$tmp/receipts"
: > "$tmp/src/x/here.c"
printf 'See src/x/here.c, src/x/ and receipts/<host>/ROOT; not src/x/gone.c.\n' > "$tmp/README.md"
printf 'A member sources/kernels/k.cu, an old `git show abc:ci/old.sh`.\n' > "$tmp/docs/a.md"
if out=$(python3 "$root/ci/doc-paths.py" "$tmp"); then
    echo "lint: the doc-paths self-test's dangling path was not found"
    exit 1
fi
if [ "$out" != "doc-paths: README.md:1: src/x/gone.c does not exist" ]; then
    echo "lint: the doc-paths self-test expected one dangling path (src/x/gone.c), got:"
    echo "$out"
    exit 1
fi
mkdir -p "$tmp/sz/src/x"
{
    printf 'int f(void)\n{\n'
    for i in $(seq 148); do printf '    (void)0;\n'; done
    printf '}\n'
    printf 'int g(void)\n{\n'
    for i in $(seq 147); do printf '    (void)0;\n'; done
    printf '}\n'
} > "$tmp/sz/src/x/f.c"
for i in $(seq 1101); do echo "/* $i */"; done > "$tmp/sz/src/x/long.h"
if out=$(python3 "$root/ci/fn-size.py" "$tmp/sz"); then
    echo "lint: the fn-size self-test's long function and file were not found"
    exit 1
fi
want="fn-size: src/x/f.c:1: f is 151 lines (at most 150): split it into its steps
fn-size: src/x/long.h is 1101 lines (at most 1100): split it along its sections"
if [ "$out" != "$want" ]; then
    echo "lint: the fn-size self-test expected f (151 lines) and long.h (1101 lines), got:"
    echo "$out"
    exit 1
fi
make lint
