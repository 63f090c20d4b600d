#!/usr/bin/env bash
# Gate: make lint: layout (clang-format), the banned-function list
# (docs/HACKING.md, "How the code reads"), the vocabulary spelled once
# (ci/vocab-once.py) and no dangling path in the docs (ci/doc-paths.py).
# First it shows the path check can fail: a tree whose README names a file
# that is not there, and one that names a folder that is, must give one
# dangling path.
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
make lint
