#!/usr/bin/env bash
# On the GPU host (issue 18, v3): every kernel's bits against its CPU twin
# (kernel-bench --quick, special values included), then the unaligned
# cases timed with the v3 default (EV_LOAD_MODE 3) and with v2's loads
# (mode 0) side by side.
#   usage: ci/gpu-v3-check.sh [KB_CASES]
set -uo pipefail
out=${OUT:-build/gpu-out}
mkdir -p "$out"
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
build/kernel-bench --quick > "$out/quick.txt" 2>&1; echo "quick rc=$? ($(tail -1 "$out/quick.txt"))"
grep -vE " ok " "$out/quick.txt" | head -20
bash ci/gpu-loads.sh "0 3" "${1:-12,13,20,23}" 2>&1 | tail -40
