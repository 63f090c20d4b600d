#!/usr/bin/env bash
# On the GPU host (issue 18, kernels v5): kernel-bench of v4's loads
# against v5's (EV_CHUNK_LOADS) side by side, v5's validation of every
# case, a memory check of v5 reading only inside its inputs, and what
# torch.compile generates for a few cases.  Not a CI gate.
set -uo pipefail
out=${OUT:-build/gpu-out}
mkdir -p "$out"
bash ci/gpu-ab.sh "v4=-DEV_CHUNK_LOADS=0 v5=-DEV_CHUNK_LOADS=1" "${KB_CASES:-0,8,10,11,12,13,14,18,20,34,35,36,39,40,41,42}"
build-v5/kernel-bench --quick > "$out/v5-quick.txt" 2>&1
echo "v5 --quick rc=$? ($(grep -c ' ok ' "$out/v5-quick.txt") ok, $(grep -E '^reduce_' "$out/v5-quick.txt" | grep -vc ' ok ') not ok)"
grep -E '^reduce_' "$out/v5-quick.txt" | grep -v ' ok ' | head -20
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$SAN" ]; then
    KB_CASES=0,10,11,12,13,20,21,23,25,27,29,31,34,35,36,38,39,40,41,43,44,45,46 timeout 150 "$SAN" --tool memcheck \
        build-v5/kernel-bench --quick > "$out/v5-memcheck.txt" 2>&1
    echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY' "$out/v5-memcheck.txt")"
    grep -m5 -E "Invalid|out of bounds" "$out/v5-memcheck.txt"
fi
timeout 200 python3 ci/gpu-torch-kernels.py "$out/torch" > "$out/torch-kernels.txt" 2>&1
echo "torch kernels rc=$?"; grep "^== " "$out/torch-kernels.txt"
rm -rf "$out/torch/inductor" "$out/torch/triton"
