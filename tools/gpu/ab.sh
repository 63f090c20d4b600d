#!/usr/bin/env bash
# On the GPU host (docs/perf-notes.md): kernel-bench of several builds of the kernels
# side by side, each built with its own KERNEL_DEFS in its own BUILD
# directory, with each build's SASS size of a few entries and, for the
# first timed case, ncu's warp-state statistics of rows1.
#   usage: tools/gpu/ab.sh "NAME=DEFS NAME=DEFS ..." [KB_CASES]
#   e.g.   tools/gpu/ab.sh "v3=-DEV_SPECIALIZE=0 v4=-DEV_SPECIALIZE=1" 0,1,2
# DEFS use commas for spaces (-DA=1,-DB=2) and reach the C twins too (OPT),
# so a define of the order (EV_LANE_BYTES) changes both.  Ratios are to
# the first build.
set -uo pipefail
out=${OUT:-build/gpu-out}
variants=${1:?usage: tools/gpu/ab.sh "NAME=DEFS ..." [KB_CASES]}
export KB_CASES=${2:-0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}
mkdir -p "$out"
names=()
for v in $variants; do
    n=${v%%=*} d=${v#*=}
    names+=("$n")
    ( make DEPS=.deps BUILD=build-$n KERNEL_DEFS="${d//,/ }" OPT="-O2 -g ${d//,/ }" -j8 build-$n/kernel-bench > "$out/build-$n.log" 2>&1 ||
        tail -20 "$out/build-$n.log" ) &
done
wait
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
# unit BUILD ENTRY: the object that holds ENTRY (kernels/build.mk: each
# schedule's entries a unit, reduce_<schedule>.o, or one a dtype,
# reduce_<schedule>_<dtype>.o)
unit() {
    local s=${2##*_} x=${2%_*} o
    o=$1/cuda/reduce_${s}_${x##*_}.o
    [ -f "$o" ] || o=$1/cuda/reduce_$s.o
    [ -f "$o" ] || o=$1/cuda/reduce.o
    echo "$o"
}
for n in "${names[@]}"; do
    for f in reduce_sum_fp16_rows1 reduce_max_fp16_default reduce_sum_fp32_rows1 reduce_sum_fp16_pack; do
        echo "== $n: $f: $($CUOBJ -sass -fun $f "$(unit build-$n $f)" 2>/dev/null | grep -c '/\*[0-9a-f]\{4\}\*/') SASS instructions"
    done
done
for n in "${names[@]}"; do
    build-$n/kernel-bench > "$out/bench-$n.txt" 2>&1
    echo "$n rc=$? $(tail -1 "$out/bench-$n.txt")"
done
if [ -n "$NCU" ] && [ -n "${AB_NCU:-}" ]; then
    for n in "${names[@]}"; do
        KB_CASES=${KB_CASES%%,*} $NCU --clock-control none --section WarpStateStats --section LaunchStats \
            -k regex:"$AB_NCU" -c 1 build-$n/kernel-bench --quick > "$out/ncu-$n.txt" 2>&1
        echo "== ncu $n ($AB_NCU)"
        grep -E "Duration|Warp Cycles Per Issued|Stall|Registers|Avg. Active" "$out/ncu-$n.txt" | head -20
    done
fi
python3 - "$out" "${names[@]}" <<'PY'
import sys
out, names = sys.argv[1], sys.argv[2:]
tab = {}
for n in names:
    for line in open(f"{out}/bench-{n}.txt"):
        f = line.split()
        if len(f) >= 14 and f[0].startswith("reduce_"):
            tab.setdefault((f[0], f[1], f[2], f[3], f[4], f[6]), {})[n] = (float(f[10]), f[9])
print("case sched " + " ".join(names) + "  (us/op; ratio to " + names[0] + ")")
for k, v in tab.items():
    base = v.get(names[0], (0,))[0]
    print(" ".join(k), " ".join("%.3f%s" % (v[n][0], "" if v[n][1] == "ok" else "!" + v[n][1]) if n in v else "-" for n in names),
          " ".join("%.3f" % (v[n][0] / base) if n in v and base else "-" for n in names[1:]))
PY
