#!/usr/bin/env bash
# On a GPU host without the -dev packages (run through the device tool with
# .deps carried): prove the vendored build, run the suites that need no GPU
# (exhaustive kernel sweeps sampled), then validate and time every kernel.
# Writes logs under $OUT (or build/gpu-out).  Not a CI gate.
set -uo pipefail
out=${OUT:-build/gpu-out}
mkdir -p "$out"
{
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
    echo "-dev packages installed on this host (none expected):"
    dpkg-query -W -f='${Package} ${Status}\n' libsqlite3-dev libzip-dev libcjson-dev check libssl-dev 2>&1 | grep 'ok installed' || echo "  none"
    python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())' 2>&1 | tail -1
} | tee "$out/host.txt"
start=$(date +%s)
make DEPS=.deps -j16 all tests > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
EV_CHECK_QUICK=1 make DEPS=.deps check-run > "$out/check.log" 2>&1
echo "check-run rc=$?"; grep -E '^==|Checks|make check' "$out/check.log"
build/kernel-bench --quick > "$out/kernel-validate.txt" 2>&1; echo "kernel-bench --quick rc=$?"; tail -5 "$out/kernel-validate.txt"
build/kernel-bench > "$out/kernel-bench.txt" 2>&1; echo "kernel-bench rc=$?"; cat "$out/kernel-bench.txt" | tail -60
