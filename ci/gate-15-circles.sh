#!/usr/bin/env bash
# Gate: no circle of includes or calls in src/ (ci/circles.py).
# First it shows the check can fail: a tree with two headers that include
# each other and two objects that call each other must give two circles.
set -euo pipefail
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/x" "$tmp/build/obj/src/x"
printf '#include "b.h"\n' > "$tmp/src/x/a.h"
printf '#include "a.h"\n' > "$tmp/src/x/b.h"
printf 'int g(void);\nint f(void) { return g(); }\n' > "$tmp/src/x/f.c"
printf 'int f(void);\nint g(void) { return f() + 1; }\n' > "$tmp/src/x/g.c"
cc -c "$tmp/src/x/f.c" -o "$tmp/build/obj/src/x/f.o"
cc -c "$tmp/src/x/g.c" -o "$tmp/build/obj/src/x/g.o"
if out=$(cd "$tmp" && python3 "$root/ci/circles.py" build); then
    echo "circles: the self-test's circles were not found"
    exit 1
fi
if [ "$(grep -c '^circles: includes: \|^circles: calls: ' <<< "$out")" != 2 ]; then
    echo "circles: the self-test expected one include and one call circle, got:"
    echo "$out"
    exit 1
fi
[ -d build/obj/src ] || make -j2 all
python3 ci/circles.py build
