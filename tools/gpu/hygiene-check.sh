#!/usr/bin/env bash
# On the GPU host (docs/defenses.md): does the device record and its hygiene rule
# pass honest jobs?  Builds, validates the kernels, runs the small
# gpus-h200 protocol with the torch-compile peer added (--gpus all),
# exports and verifies it, and prints each attempt's process outcome and
# device record summary (other processes, throttle reasons, L2 limit,
# versions).  Not a CI gate.
#   usage: tools/gpu/hygiene-check.sh   (with .deps and .evident-stamp carried)
set -uo pipefail
out=${OUT:-build/gpu-out}
mkdir -p "$out"
start=$(date +%s)
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
build/kernel-bench --quick > "$out/kernel-validate.txt" 2>&1
echo "kernel-bench --quick rc=$? ($(grep -c ' ok ' "$out/kernel-validate.txt") ok)"
grep -E '^reduce_' "$out/kernel-validate.txt" | grep -v ' ok ' | head -5
sed 's/"cub"\]/"cub", "torch-compile"]/' protocols/gpus-h200.json > build/hygiene.json
OUT=$out bash tools/gpu/gpus-proof.sh build/hygiene.json
python3 - build/gpus-proof.db <<'PY'
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = """select j.phase, j.case_index, j.arm, a.attempt, p.exit_code, p.signal,
       p.records_ok, p.protocol_error, d.json, substr(p.stderr_tail, -200)
       from jobs j join attempts a using (job_id) left join processes p using (attempt_id)
       left join attempt_devices d using (attempt_id) order by a.attempt_id"""
for ph, ci, arm, at, ec, sg, ok, perr, dj, err in c.execute(q):
    s = f"{ph} c{ci} {arm} a{at} exit={ec} sig={sg} ok={ok}"
    if perr: s += f" perr={perr!r}"
    if dj:
        d = json.loads(dj)
        keep = {k: v for k, v in d.items() if not isinstance(v, (list, dict)) and k != "seed"}
        arr = {k: (min(v), max(v)) for k, v in d.items() if isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v)}
        s += f" dev={keep} arrays(min,max)={arr}"
        for k, v in d.items():
            if isinstance(v, dict): s += f" {k}={v}"
    else:
        s += " dev=none"
    if ec not in (0, None) or sg: s += f" stderr=...{err!r}"
    print(s)
PY
