#!/usr/bin/env bash
# Gate: the measurement closure is what the worker and the kernels are
# built from (mk/closure.sh; src/runner/module.mk), not a list of folders.
#  1. the committed mk/closure.list is the one this build derived (the
#     build rewrites it when the dependencies change: a change that moves
#     a measured file commits the new list with it);
#  2. where nvcc built the kernels, its dependency files name the same
#     project files as the host preprocessor's view of the .cu sources,
#     which is what a build without nvcc puts in the closure;
#  3. in a copy of the tree, a measured file moved to a folder of its own
#     (kernels/lanes.c to a new folder, src/<new>/lanes.c) stays in the closure after a
#     build there (cpu only), and a run there would snapshot it: the old
#     rule (kernels/, src/runner/, protocols/, db/schema.sql) dropped it.
set -euo pipefail
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! git diff --quiet -- mk/closure.list; then
    echo "closure: the build rewrote mk/closure.list (the measured files moved or changed their includes): commit it"
    git diff --stat -- mk/closure.list
    exit 1
fi
cmp -s build/closure.list mk/closure.list || { echo "closure: build/closure.list differs from mk/closure.list: run make"; exit 1; }
echo "closure: mk/closure.list is this build's ($(wc -l < mk/closure.list) files)"

# project files of a dependency file's first rule
deps() {
    awk 'BEGIN { rule = 0 }
         { line = $0; cont = sub(/\\$/, "", line); if (!rule) buf = buf " " line; if (!cont) rule = 1 }
         END { sub(/^[^:]*:/, "", buf); n = split(buf, f, /[ \t]+/); for (i = 1; i <= n; i++) if (f[i] != "") print f[i] }' "$1" |
        grep -v '^/\|^\.' | LC_ALL=C sort -u
}
n_cu=0
for d in build/cuda/*.d; do # each CUDA object nvcc built here (a source may be one a dtype)
    [ -f "$d" ] || continue
    c=$(deps "$d" | grep '\.cu$') # its source
    [ "$(echo "$c" | wc -l)" = 1 ] && [ -f "$c" ] || { echo "closure: $d names no one .cu source ($c)"; exit 1; }
    cc -D_GNU_SOURCE -Isrc -Isrc/common -Ikernels -MM -MG -x c++ -D__CUDACC__ "$c" -MT x.o > "$tmp/host.d"
    if ! diff <(deps "$d") <(deps "$tmp/host.d") > "$tmp/diff"; then
        echo "closure: $c: nvcc's dependencies and the host preprocessor's differ (a build without nvcc would measure other files):"
        cat "$tmp/diff"
        exit 1
    fi
    n_cu=$((n_cu + 1))
done
echo "closure: nvcc and the host preprocessor name the same files for $n_cu CUDA objects"

mkdir "$tmp/tree"
git ls-files -z | grep -zv '^receipts/' | tar --null -T - -cf - | tar -x -C "$tmp/tree"
mkdir "$tmp/tree/src/moved"
mv "$tmp/tree/kernels/lanes.c" "$tmp/tree/src/moved/lanes.c"
(cd "$tmp/tree" && make -j2 NVCC= closure build/evident > "$tmp/build.log" 2>&1) || { tail -20 "$tmp/build.log"; exit 1; }
if ! grep -qx src/moved/lanes.c "$tmp/tree/mk/closure.list" || grep -qx kernels/lanes.c "$tmp/tree/mk/closure.list"; then
    echo "closure: kernels/lanes.c moved to src/moved/lanes.c did not stay in the closure:"
    diff mk/closure.list "$tmp/tree/mk/closure.list" || true
    exit 1
fi
(cd "$tmp/tree" && build/evident stamp --roots) | grep -qx src/moved/lanes.c ||
    { echo "closure: a run in the moved tree would not snapshot src/moved/lanes.c"; exit 1; }
# the control: the same tree read by the old folder rule (no list) drops it
rm "$tmp/tree/mk/closure.list"
if (cd "$tmp/tree" && build/evident stamp --roots) | grep -qx src/moved/lanes.c; then
    echo "closure: the folder rule kept src/moved/lanes.c too: this gate could not tell the two apart"
    exit 1
fi
echo "closure: a measured file moved to a folder of its own stays in the closure (src/moved/lanes.c; the folder rule drops it)"
cd "$root"
