#!/usr/bin/env bash
# On the GPU host (device tool; .deps and .evident-stamp carried): one run
# of a small protocol with torch-compile in three rounds, then, from the
# store, each torch-compile job's wall time and its cold timings (import,
# compile-first-call) by round: round 1 compiles into the run's cache,
# later rounds load from it.  Not a CI gate.
#   usage: tools/gpu/torch-cache.sh [PROTOCOL] [SECONDS]
set -uo pipefail
protocol=${1:-protocols/torch-cache-h200.json}
secs=${2:-500}
out=${OUT:-build/gpu-out}
mkdir -p "$out" gpu-work
rm -rf gpu-work/tc.db*
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
t0=$(date +%s)
timeout -s INT -k 20 "$secs" build/evident run --protocol "$protocol" --backend cuda --db gpu-work/tc.db \
    > "$out/run.log" 2>&1
echo "run rc=$? in $(( $(date +%s) - t0 )) s: $(tail -n 1 "$out/run.log")"
python3 - gpu-work/tc.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = """select j.job_key, p.wall_ns, a.attempt_id from jobs j join attempts a using(job_id)
       join processes p using(attempt_id) where j.arm = ? order by j.job_id"""
for arm in ("torch-compile", "default"):
    rows = c.execute(q, (arm,)).fetchall()
    by = {}
    for key, wall, aid in rows:
        r = key.rsplit("/", 1)[1]
        cold = dict(c.execute("select name, elapsed_ns from cold_timings where attempt_id = ?", (aid,)))
        by.setdefault(r, []).append((wall / 1e9, cold.get("import", 0) / 1e9, cold.get("compile-first-call", 0) / 1e9))
        print("%-40s wall %6.2f s  import %5.2f s  compile+first call %6.2f s" % (key, wall / 1e9,
              cold.get("import", 0) / 1e9, cold.get("compile-first-call", 0) / 1e9))
    for r, v in sorted(by.items()):
        n = len(v)
        print("%s %s: %d jobs, mean wall %.2f s, mean import %.2f s, mean compile+first call %.2f s" % (
            arm, r, n, sum(x[0] for x in v) / n, sum(x[1] for x in v) / n, sum(x[2] for x in v) / n))
PY
du -sh gpu-work/tc.db.torch-cache-run1 2>/dev/null
cp gpu-work/tc.db "$out/tc.db"
