#!/usr/bin/env bash
# tools/gpu/your-kernel.sh OUT: on the GPU host (.deps carried; `make
# DEPS=.deps` builds there), the README's "Measure your kernel" on cuda:
# examples/cuda-c (a CUDA C kernel and a protocol of cases and kernels only,
# the default profile) from a directory outside the checkout, with the
# installed programs.  Each step writes its log under OUT and prints one
# summary line; each is well under 10 minutes.
#   1. make DEPS=.deps all, and install into OUT/prefix;
#   2. examples/cuda-c copied to OUT/mine and run there (--backend cuda):
#      ext-rows beside default, rows1, rows2, auto, cub and torch-compile;
#      the run's table (OUT/mine/run.txt) has an ext-rows column; export;
#   3. in OUT/third (no tree): verify-bundle from the bundle alone (check
#      10 rebuilds the cubin from its members with this host's nvcc:
#      "kernel ext-rows: rebuilt from the bundle's 2 members"), and with
#      --kernel-tree OUT/mine ("1 kernel files equal the kernel tree's");
#   4. the off-by-one variant (its sum's lanes stop one column short),
#      --arms ext-rows: its summary line must read "first stage: 65 of 65
#      rows wrong; the first, row 0, is V where E is expected (error X,
#      bound B)" (OUT/off-by-one/run.txt).
# Run: bash tools/gpu/your-kernel.sh gpu-out/your-kernel
# Look for: "your-kernel: PASS" at the end, the two verify lines PASS, and
# the ext-rows column of the table (hot medians in us per op beside ours).
set -uo pipefail
out=${1:?usage: tools/gpu/your-kernel.sh OUT}
out=$(mkdir -p "$out" && cd "$out" && pwd)
repo=$(pwd)
fail=0
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
rm -rf "$out/prefix" "$out/mine" "$out/third" "$out/off-by-one"
make DEPS=.deps install PREFIX="$out/prefix" > "$out/install.log" 2>&1 || { tail -30 "$out/install.log"; exit 1; }
echo "your-kernel: installed into $out/prefix"
evident=$out/prefix/bin/evident
verify=$out/prefix/bin/verify-bundle

cp -r "$repo/examples/cuda-c" "$out/mine"
(
    cd "$out/mine" || exit 1
    timeout 540 "$evident" run --protocol protocol.json --backend cuda --db run.db > run.txt 2> run.log
    echo "your-kernel: run rc=$? ($(grep -E '^run 1:' run.txt))"
    "$evident" export --db run.db --out run.zip > root.txt 2>> run.log
    echo "your-kernel: export rc=$? root $(cat root.txt)"
)
grep -E '^\| (Operation|reduce_)' "$out/mine/run.txt"
grep -A 20 '^failed jobs' "$out/mine/run.txt"

mkdir -p "$out/third"
(
    cd "$out/third" || exit 1
    "$verify" "$out/mine/run.zip" --expect-root "$(cat "$out/mine/root.txt")" > alone.txt 2>&1
    echo "your-kernel: verify (bundle alone) rc=$? ($(tail -1 alone.txt))"
    grep -E "kernel ext-rows: (rebuilt|not rebuilt)" alone.txt
    "$verify" "$out/mine/run.zip" --kernel-tree "$out/mine" > kt.txt 2>&1
    echo "your-kernel: verify --kernel-tree rc=$? ($(grep -E 'kernel files equal|differs' kt.txt | head -1))"
) || fail=1
grep -q "^verdict: PASS" "$out/third/alone.txt" && grep -q "^verdict: PASS" "$out/third/kt.txt" || fail=1

cp -r "$repo/examples/cuda-c" "$out/off-by-one"
sed -i 's|c < cols; c += 32) /\* every column \*/|c < cols - 1; c += 32) /* off by one */|' "$out/off-by-one/rows.cu"
if cmp -s "$out/off-by-one/rows.cu" "$repo/examples/cuda-c/rows.cu"; then
    echo "your-kernel: the off-by-one edit did not apply"
    fail=1
fi
(
    cd "$out/off-by-one" || exit 1
    timeout 540 "$evident" run --protocol protocol.json --backend cuda --db run.db --arms ext-rows > run.txt 2> run.log
    echo "your-kernel: off-by-one run rc=$?"
)
line=$(grep -E 'ext-rows/.*: first stage: 65 of 65 rows wrong; the first, row 0, is ' "$out/off-by-one/run.txt" | head -n 1)
if [ -n "$line" ]; then
    echo "your-kernel: the off-by-one kernel's reason: $line"
else
    echo "your-kernel: no reason naming the first bad row in $out/off-by-one/run.txt"
    fail=1
fi
[ "$fail" = 0 ] && echo "your-kernel: PASS" || echo "your-kernel: FAIL (logs under $out)"
exit "$fail"
