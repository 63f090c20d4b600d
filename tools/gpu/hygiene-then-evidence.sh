#!/usr/bin/env bash
# On the GPU host (through the device tool; .deps and .evident-stamp
# carried): the torch peer's hygiene first, then, only when it is sane, the
# evidence run, in one call.  The torch peer's NVML facts are read by its
# worker through the backend's watch (src/runner/torch_peer.c); were the
# worker ever listed as a compute process, every torch sample would read
# one other process and every torch job would fail-protocol, and the
# evidence run would be worth nothing.  So: tools/gpu/hygiene-check.sh (the
# small gpus-h200 protocol with torch-compile, --gpus all), a check that
# every torch-compile attempt completed with no other process on any
# sample, then tools/gpu/evidence.sh with the seconds left.  Not a CI gate.
#   usage: tools/gpu/hygiene-then-evidence.sh SECONDS [PROTOCOL]
set -uo pipefail
secs=${1:?seconds}
protocol=${2:-protocols/hopper.json}
out=${OUT:-build/gpu-out}
mkdir -p "$out"
start=$(date +%s)
OUT=/tmp/hygiene-out bash tools/gpu/hygiene-check.sh > "$out/hygiene.log" 2>&1
echo "hygiene rc=$? ($(($(date +%s) - start)) s)"
grep -E "gpus run rc|export\+verify rc|kernel-bench" "$out/hygiene.log"
python3 - build/gpus-proof.db <<'PY' || { echo "torch hygiene not sane: no evidence run"; exit 1; }
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = """select j.job_key, a.attempt, p.exit_code, p.protocol_error, d.json from jobs j
       join attempts a using (job_id) left join processes p using (attempt_id)
       left join attempt_devices d using (attempt_id) where j.arm = 'torch-compile' order by a.attempt_id"""
rows, bad = 0, []
for key, att, ec, perr, dj in c.execute(q):
    rows += 1
    d = json.loads(dj) if dj else {}
    others = d.get("hot_other_processes", []) + d.get("cold_other_processes", [])
    walls = d.get("hot_wall_ms", [])
    print("torch", key, "a%d" % att, "exit", ec, "others", sorted(set(others)), "reasons",
          sorted(set(d.get("hot_throttle_reasons", []))), "self_seen", d.get("self_seen"),
          "walls", [round(w, 3) for w in walls][:3], "perr", (perr or "")[:160])
    if ec != 0 or perr or not dj or any(o > 0 for o in others) or not walls:
        bad.append(key)
print("torch attempts", rows, "not sane", bad)
sys.exit(1 if bad or rows == 0 else 0)
PY
left=$((secs - ($(date +%s) - start)))
echo "evidence: $left s left"
bash tools/gpu/evidence.sh "$left" "$protocol"
