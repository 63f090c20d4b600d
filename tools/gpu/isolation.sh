#!/usr/bin/env bash
# tools/gpu/isolation.sh OUT: on the GPU host (.deps carried; `make
# DEPS=.deps` builds there), what the isolation work needs a GPU host for.
# Each step writes its log under OUT and prints one summary line; each is
# well under 10 minutes.
#   1. the cuda gallery (tests/cheats/cheats.json): ext-cheat-undeclared
#      must end failed-exit naming undeclared.cuh ("undeclared.cu includes
#      undeclared.cuh, which the protocol does not declare"); the three
#      host-code cheats (setsid, peek, fs) have no cuda source and are
#      skips; the bundle verifies, and check 10 rebuilds each cubin with
#      this host's nvcc ("rebuilt from the bundle's N members").
#   2. examples/ext-simple on cuda: completes, verifies, check 10 rebuilds
#      its cubin with the same SHA-256.
#   3. the torch peer beside a native arm on one case: the leftover sweep
#      (a child subreaper) must name nothing (no "left running" reason).
#   4. the kernel host's cost per batch on this host's idle CPUs
#      (build/evident-khost-cost, protocols/quick.json).
# Run: bash tools/gpu/isolation.sh gpu-out/isolation
set -uo pipefail
out=${1:?usage: tools/gpu/isolation.sh OUT}
mkdir -p "$out" gpu-work
make DEPS=.deps -j16 all khost-cost > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }

summary() { # ZIP: each job's outcome and reason, and check 10's lines
    python3 - "$1" <<'PY'
import json, sys, zipfile
v = json.loads(zipfile.ZipFile(sys.argv[1]).read("validation.json"))
for j in v["jobs"]:
    a = j["attempts"][-1] if j["attempts"] else {}
    p = a.get("process") or {}
    why = ((p.get("protocol_error") or "") + " " + (p.get("skip_reason") or "") + " " +
           ((p.get("stderr_tail") or "").strip().splitlines() or [""])[-1])[:240]
    print(j["job_key"], j["outcome"], why)
PY
}

for p in tests/cheats/cheats.json examples/ext-simple/protocol.json; do
    n=$(basename "$(dirname "$p")")
    db=gpu-work/iso-$n.db
    rm -rf "$db" "$db"-* "$db".kernels-run* "$db".lock
    timeout 540 build/evident run --protocol "$p" --backend cuda --db "$db" > "$out/run-$n.log" 2>&1
    echo "$n: run rc=$?"
    build/evident export --db "$db" --out "$out/$n.zip" > /dev/null 2>> "$out/run-$n.log"
    build/verify-bundle "$out/$n.zip" --source-tree . > "$out/verify-$n.txt" 2>&1
    echo "$n: verify rc=$? ($(tail -1 "$out/verify-$n.txt"))"
    grep -E "^10 rebuild|kernel .*(rebuilt|not rebuilt|has SHA-256)" "$out/verify-$n.txt"
    summary "$out/$n.zip" > "$out/jobs-$n.txt"
    grep -E "ext-" "$out/jobs-$n.txt" | sort | uniq | head -40
done

db=gpu-work/iso-torch.db
rm -rf "$db" "$db"-* "$db".lock gpu-work/iso-torch.db.torch-cache-run*
timeout 540 build/evident run --protocol protocols/hopper.json --backend cuda --db "$db" --cases 0,1 \
    --arms rows1,torch-compile > "$out/run-torch.log" 2>&1
echo "torch: run rc=$?"
build/evident export --db "$db" --out "$out/torch.zip" > /dev/null 2>> "$out/run-torch.log"
summary "$out/torch.zip" > "$out/jobs-torch.txt"
cat "$out/jobs-torch.txt"
echo "torch: jobs naming a leftover: $(grep -c 'left running' "$out/jobs-torch.txt")"

for i in 1 2 3; do
    timeout 300 build/evident-khost-cost --batches 400
done > "$out/khost-cost.txt" 2>&1
echo "khost-cost (us per batch of 100 calls; the empty kernel's cost is the handshake):"
cat "$out/khost-cost.txt"
