#!/usr/bin/env bash
# On the GPU host (issue 18): kernel-bench of the load modes of
# kernels/reduce_default.cuh (EV_LOAD_MODE 0..3) side by side on the seed
# cases, each built in its own BUILD directory, and where each mode's
# rows1 fp16 SUM places its vector loads in the SASS.
#   usage: ci/gpu-loads.sh [MODES] [KB_CASES]
set -uo pipefail
out=${OUT:-build/gpu-out}
modes=${1:-0 1 2 3}
export KB_CASES=${2:-0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}
mkdir -p "$out"
for m in $modes; do
    ( make DEPS=.deps BUILD=build-m$m KERNEL_DEFS=-DEV_LOAD_MODE=$m -j8 build-m$m/kernel-bench > "$out/build-m$m.log" 2>&1 || tail -20 "$out/build-m$m.log" ) &
done
wait
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for m in $modes; do
    echo "== mode $m: LDG.128 line numbers in reduce_sum_fp16_rows1"
    $CUOBJ -sass -fun reduce_sum_fp16_rows1 build-m$m/cuda/reduce.o | grep -n "LDG.E.128" | cut -d: -f1 | tr '\n' ' '; echo
done
for m in $modes; do
    build-m$m/kernel-bench > "$out/bench-m$m.txt" 2>&1
    echo "mode $m rc=$?"
done
python3 - $modes <<'PY'
import sys
out = "build/gpu-out"
import os
out = os.environ.get("OUT", out)
modes = sys.argv[1:]
tab = {}
for m in modes:
    for line in open(f"{out}/bench-m{m}.txt"):
        f = line.split()
        if len(f) >= 14 and f[0].startswith("reduce_"):
            tab.setdefault((f[0], f[1], f[2], f[3], f[4], f[6]), {})[m] = (float(f[10]), f[9])
print("case sched " + " ".join("m" + m for m in modes) + "  (us/op; ratio to m0)")
for k, v in tab.items():
    base = v.get(modes[0], (0,))[0]
    print(" ".join(k), " ".join("%.3f%s" % (v[m][0], "" if v[m][1] == "ok" else "!" + v[m][1]) if m in v else "-" for m in modes),
          " ".join("%.3f" % (v[m][0] / base) if m in v and base else "-" for m in modes[1:]))
PY
