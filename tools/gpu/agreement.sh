#!/usr/bin/env bash
# On the GPU host (through the device tool; .deps and .evident-stamp
# carried): build with the vendored packages, run one protocol twice into
# fresh stores, export both, and compare them (verify-bundle --compare:
# whether the two runs' ratios agree within their combined 95% uncertainty,
# docs/intervals.md).  Brings the bundles and the comparison back under
# $OUT.  Not a CI gate.
#   usage: tools/gpu/agreement.sh [PROTOCOL] [SECONDS_PER_RUN]
set -uo pipefail
protocol=${1:-protocols/intervals-h200.json}
secs=${2:-250}
out=${OUT:-build/gpu-out}
mkdir -p "$out" gpu-work
start=$(date +%s)
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
for i in 1 2; do
    rm -f gpu-work/agree$i.db*
    t0=$(date +%s)
    timeout -s INT -k 20 "$secs" build/evident run --protocol "$protocol" --backend cuda \
        --db gpu-work/agree$i.db > "$out/run$i.log" 2>&1
    echo "run $i rc=$? in $(( $(date +%s) - t0 )) s: $(tail -1 "$out/run$i.log")"
    build/evident export --db gpu-work/agree$i.db --out "$out/agree$i.zip" > "$out/root$i.txt" 2> "$out/export$i.log" ||
        echo "export $i: $(cat "$out/export$i.log")"
done
build/verify-bundle "$out/agree1.zip" > "$out/verify1.txt" 2>&1; echo "verify 1 rc=$?"
build/verify-bundle --compare "$out/agree1.zip" "$out/agree2.zip" > "$out/compare.txt" 2>&1
echo "compare rc=$?"
grep 'agreement' "$out/compare.txt"
for i in 1 2; do build/evident report "$out/agree$i.zip" --markdown --out "$out/report$i.md"; done
tail -2 "$out/report1.md" "$out/report2.md"
