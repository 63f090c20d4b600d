#!/usr/bin/env bash
# On the GPU host (docs/perf-notes.md): one case's kernel of ours next to
# torch.compile's, to read where the time goes.  torch's Triton source and
# graph time (tools/gpu/torch-kernels.py), both kernels' SASS, and ncu's
# instruction, warp-state and source-counter sections of one launch each.
# Not a CI gate.
#   usage: tools/gpu/vs-torch.sh OP:DTYPE:ROWS:COLS:STRIDE KB_CASE OUR_ENTRY
#   e.g.   tools/gpu/vs-torch.sh reduce_sum:fp16:1024:512:512 8 reduce_sum_fp16_rows1
set -uo pipefail
out=${OUT:-build/gpu-out}
spec=${1:?OP:DTYPE:ROWS:COLS:STRIDE} case=${2:?KB_CASE} entry=${3:?OUR_ENTRY}
mkdir -p "$out"
make DEPS=.deps -j16 build/kernel-bench > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
sections="--section LaunchStats --section Occupancy --section InstructionStats --section WarpStateStats --section SourceCounters --section SpeedOfLight"
python3 tools/gpu/torch-kernels.py "$out/tk" "$spec" > "$out/torch-source.txt" 2>&1
grep "^== " "$out/torch-source.txt"
for c in $(find "$out/tk/triton" -name '*.cubin'); do
    $CUOBJ -sass "$c" > "$out/sass-torch-$(basename "$c" .cubin).txt" 2>&1
done
# the entry's unit (kernels/build.mk: each schedule's entries a unit,
# reduce_<schedule>.o, or one a dtype, reduce_<schedule>_<dtype>.o)
sched=${entry##*_} rest=${entry%_*}
unit=build/cuda/reduce_${sched}_${rest##*_}.o
[ -f "$unit" ] || unit=build/cuda/reduce_$sched.o
[ -f "$unit" ] || unit=build/cuda/reduce.o
$CUOBJ -sass -fun "$entry" "$unit" > "$out/sass-ours-$entry.txt" 2>&1
cat > "$out/tc.py" <<PY
import torch
op, dt, r, c, st = "$spec".split(":")
r, c, st = int(r), int(c), int(st)
tdt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dt]
x = torch.randn((r - 1) * st + c, device="cuda").to(tdt).as_strided((r, c), (st, 1))
f = torch.compile((lambda t: t.sum(1)) if op == "reduce_sum" else (lambda t: t.amax(1)), dynamic=False)
for _ in range(5):
    f(x)
torch.cuda.synchronize()
PY
$NCU --clock-control none $sections -k regex:triton -s 4 -c 1 python3 "$out/tc.py" > "$out/ncu-torch.txt" 2>&1
KB_CASES=$case $NCU --clock-control none $sections -k regex:"^$entry\$" -c 1 build/kernel-bench --quick > "$out/ncu-ours.txt" 2>&1
for n in torch ours; do
    echo "== ncu $n"
    grep -E "Duration|Elapsed Cycles|Executed Instructions  |Registers Per|Warp Cycles Per Issued|Grid Size|Block Size|Achieved Occupancy" "$out/ncu-$n.txt" | head -14
done
