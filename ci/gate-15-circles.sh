#!/usr/bin/env bash
# Gate: no circle of includes or calls between files of src/ and kernels/
# (the CUDA sources included), and folders that stack: none includes or
# calls a folder above it in ci/circles.py's order (README.md, "Source
# layout").  First it shows the check can fail: a tree with two headers
# that include each other, two objects that call each other, a low folder
# (src/common) that calls a higher one (src/store) and includes a header
# of another folder through an include path, and a folder that has no
# place in the order must give each.
set -euo pipefail
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/x" "$tmp/src/common" "$tmp/src/store" "$tmp/build/obj/src/x" "$tmp/build/obj/src/common" \
    "$tmp/build/obj/src/store"
printf '#include "b.h"\n' > "$tmp/src/x/a.h"
printf '#include "a.h"\n' > "$tmp/src/x/b.h"
printf 'int g(void);\nint f(void) { return g(); }\n' > "$tmp/src/x/f.c"
printf 'int f(void);\nint g(void) { return f() + 1; }\n' > "$tmp/src/x/g.c"
printf '#include "low.h"\nint s(void);\nint c(void) { return s(); }\n' > "$tmp/src/common/c.c"
printf 'int s(void) { return 1; }\n' > "$tmp/src/store/s.c"
printf '/* a header of src/store */\n' > "$tmp/src/store/low.h"
for o in x/f x/g common/c store/s; do cc -c "$tmp/src/$o.c" -I"$tmp/src/store" -o "$tmp/build/obj/src/$o.o"; done
if out=$(cd "$tmp" && python3 "$root/ci/circles.py" build); then
    echo "circles: the self-test's circles and arrows back up were not found"
    exit 1
fi
for want in '^circles: includes: src/x/a.h -> src/x/b.h$' '^circles: calls: src/x/f.c -> src/x/g.c$' \
    '^circles: calls back up: src/common -> src/store: src/common/c.c -> src/store/s.c$' \
    '^circles: includes: src/common/c.c includes "low.h" (src/store/low.h), which only an include path' \
    '^circles: folders: src/x has no place in the order'; do
    if ! grep -q "$want" <<< "$out"; then
        echo "circles: the self-test expected a line matching $want, got:"
        echo "$out"
        exit 1
    fi
done
[ -d build/obj/src ] || make -j2 all
python3 ci/circles.py build
