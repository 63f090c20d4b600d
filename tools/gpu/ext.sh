#!/usr/bin/env bash
# On the GPU host (device tool; .deps and .evident-stamp carried): the
# external-kernel path on cuda.  Builds, runs examples/ext-simple (a cuda
# kernel of the user's beside ours) and the cheat gallery
# (tests/cheats/cheats.json, cuda variants), exports and verifies both, and
# prints each job's outcome with the reason of a failure.  Not a CI gate.
#   usage: tools/gpu/ext.sh
set -uo pipefail
out=${OUT:-build/gpu-out}
mkdir -p "$out" gpu-work
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
for p in examples/ext-simple/protocol.json tests/cheats/cheats.json; do
    n=$(basename "$(dirname "$p")")
    db=gpu-work/ext-$n.db
    rm -rf "$db" "$db"-* "$db".kernels-run*
    build/evident run --protocol "$p" --backend cuda --db "$db" > "$out/ext-$n.log" 2>&1
    echo "$n: run rc=$?"; grep -E "^run |^time:|^\| " "$out/ext-$n.log"
    build/evident export --db "$db" --out "$out/ext-$n.zip" > "$out/ext-$n.root" &&
        build/verify-bundle "$out/ext-$n.zip" --source-tree . > "$out/ext-$n.verify" 2>&1
    echo "$n: verify rc=$? ($(tail -1 "$out/ext-$n.verify"))"
    grep -E "FAIL" "$out/ext-$n.verify" | head -5
    python3 -c '
import json, sys, zipfile
v = json.loads(zipfile.ZipFile(sys.argv[1]).read("validation.json"))
env = json.loads(v["invocations"][0]["environment_record"]) if isinstance(v["invocations"][0].get("environment_record"), str) else {}
for k in env.get("kernels", []):
    print("build", k["name"], k["ok"], k["compiler"], k["flags"], (k.get("binary_sha256") or "")[:12], k["message"][:200].replace("\n", " | "))
for j in v["jobs"]:
    a = j["attempts"][-1] if j["attempts"] else {}
    tail = (a.get("process") or {}).get("stderr_tail") or ""
    nodes = a.get("graph_nodes") or []
    nd = (nodes[0]["function"], nodes[0]["grid"], nodes[0]["block"], len(nodes)) if nodes else ()
    print(j["job_key"], j["outcome"], j.get("median_us"), nd, tail.strip().splitlines()[-1][:220] if tail.strip() else "")
' "$out/ext-$n.zip"
done
