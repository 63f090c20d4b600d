#!/usr/bin/env bash
# On the GPU host (docs/perf-notes.md): two builds of the kernels side by side
# (tools/gpu/ab.sh) on a few cases, and the SASS and resource usage of some
# entries of each build under $OUT, to read what the compiler made of a
# change.  Not a CI gate.
#   usage: tools/gpu/sass.sh "NAME=DEFS NAME=DEFS" KB_CASES ENTRY...
set -uo pipefail
out=${OUT:-build/gpu-out}
variants=${1:?usage: tools/gpu/sass.sh \"NAME=DEFS ...\" KB_CASES ENTRY...}
cases=${2:?KB_CASES}
shift 2
bash tools/gpu/ab.sh "$variants" "$cases"
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for v in $variants; do
    n=${v%%=*}
    for o in build-$n/cuda/reduce*.o; do $CUOBJ -res-usage "$o"; done > "$out/res-$n.txt" 2>&1
    for f in "$@"; do
        o=build-$n/cuda/reduce_${f##*_}.o # each schedule's entries: a unit of their own
        [ -f "$o" ] || o=build-$n/cuda/reduce.o
        $CUOBJ -sass -fun "$f" "$o" > "$out/sass-$n-$f.txt" 2>&1
        echo "== $n $f: $(grep -c '/\*[0-9a-f]*\*/' "$out/sass-$n-$f.txt") SASS lines, $(grep -c 'STL\|LDL' "$out/sass-$n-$f.txt") local-memory ops"
    done
done
