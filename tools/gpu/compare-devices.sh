#!/usr/bin/env bash
# A real difference is still called between devices (docs/intervals.md,
# "Calling a difference"): the committed H200 bundle of commit 6065926
# (receipts/h200, read from git) against an H100 run of the same protocol
# (h200.json as 6065926 held it, so the two protocol ids match).
# `evident compare` names the device difference in its header, refuses a
# gate over it without --allow-different, and with it calls the
# bandwidth-bound cases different (8192x8192 fp32 was 1.42x H100 / H200).
#
# On an H100 host with .deps carried, from the repository root:
#   tools/gpu/compare-devices.sh OUTDIR
# Steps (each well under 10 minutes): the build (about 2 minutes); one run
# of the 30-case protocol, one round (232 jobs, 281-321 s at 6065926); the
# export and the comparison (seconds).  Look at OUTDIR/summary.txt: the
# header's "differ in setup: device (NVIDIA H200 / NVIDIA H100 ...)", exit
# 2 for the refused gate, and in compare.md the bandwidth-bound cases
# (8192x8192 fp32, 16384x4096 bf16, 131072x256 fp16, 32x1048576 fp32)
# called slower with B / A near 1.4, beyond the floor the header prints.
set -uo pipefail
out=${1:?usage: tools/gpu/compare-devices.sh OUTDIR}
mkdir -p "$out" gpu-work
start=$(date +%s)
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s" | tee "$out/summary.txt"
git show 6065926:receipts/h200/delivery.zip > "$out/h200-6065926.zip" || exit 1
git show 6065926:protocols/h200.json > gpu-work/h200-6065926.json || exit 1
rm -f gpu-work/h100.db*
t0=$(date +%s)
timeout -s INT -k 20 540 build/evident run --protocol gpu-work/h200-6065926.json --backend cuda \
    --db gpu-work/h100.db > "$out/run.log" 2>&1
echo "run rc=$? in $(( $(date +%s) - t0 )) s: $(tail -1 "$out/run.log")" | tee -a "$out/summary.txt"
build/evident export --db gpu-work/h100.db --out "$out/h100.zip" > "$out/h100.root" 2> "$out/export.log" ||
    { cat "$out/export.log"; exit 1; }
build/evident compare "$out/h200-6065926.zip" "$out/h100.zip" > "$out/compare-plain.md" 2>&1
echo "compare, no gate: exit $?" | tee -a "$out/summary.txt"
build/evident compare "$out/h200-6065926.zip" "$out/h100.zip" --fail-slower 10 > /dev/null 2> "$out/refused.txt"
echo "compare --fail-slower 10 (no --allow-different): exit $? (2: refused): $(cat "$out/refused.txt")" |
    tee -a "$out/summary.txt"
build/evident compare "$out/h200-6065926.zip" "$out/h100.zip" --allow-different > "$out/compare.md" 2>&1
echo "compare --allow-different: exit $?" | tee -a "$out/summary.txt"
build/evident compare "$out/h200-6065926.zip" "$out/h100.zip" --allow-different --json > "$out/compare.json" 2>/dev/null
grep -m1 'differ in setup' "$out/compare.md" | tee -a "$out/summary.txt"
grep -E '8192x8192 fp32|16384x4096 bf16|131072x256 fp16|32x1048576 fp32' "$out/compare.md" | tee -a "$out/summary.txt"
tail -1 "$out/compare.md" | tee -a "$out/summary.txt"
