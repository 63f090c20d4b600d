#!/usr/bin/env bash
# On the GPU host (device tool; .deps and .evident-stamp carried): where a
# run's wall goes.  Runs PROTOCOL (with optional --cases/--arms), prints the
# run summary (wall / demanded and the time breakdown), then from the store
# each arm's mean job wall and the mean of each cold timing by arm.  Not a
# CI gate.
#   usage: [SECS=590] ci/gpu-pipeline-speed.sh PROTOCOL DB [evident run options...]
# (SECS: the run is stopped cleanly with SIGINT after that many seconds)
set -uo pipefail
protocol=$1
db=$2
shift 2
out=${OUT:-build/gpu-out}
mkdir -p "$out" "$(dirname "$db")"
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
rm -rf "$db" "$db"-* "$db".torch-cache-run*
t0=$(date +%s.%N)
timeout -s INT -k 20 "${SECS:-590}" build/evident run --protocol "$protocol" --backend cuda --db "$db" "$@" \
    > "$out/run-$(basename "$db").log" 2>&1
rc=$?
t1=$(date +%s.%N)
echo "evident run rc=$rc, $(python3 -c "print('%.1f' % ($t1 - $t0))") s (process wall)"
grep -E "^run |^time:|^compile ahead" "$out/run-$(basename "$db").log"
python3 - "$db" <<'PY'
import sqlite3, sys
from collections import defaultdict
c = sqlite3.connect(sys.argv[1])
rows = c.execute("""select j.arm, j.phase, p.wall_ns, a.attempt_id from jobs j join attempts a using(job_id)
                    join processes p using(attempt_id)""").fetchall()
by = defaultdict(list)
cold = defaultdict(lambda: defaultdict(list))
for arm, phase, wall, aid in rows:
    by[arm].append(wall / 1e9)
    for name, ns in c.execute("select name, elapsed_ns from cold_timings where attempt_id = ?", (aid,)):
        cold[arm][name].append(ns / 1e9)
for arm in sorted(by):
    w = by[arm]
    parts = ", ".join("%s %.3f" % (n, sum(v) / len(v)) for n, v in sorted(cold[arm].items()))
    print("%-14s %3d jobs, mean wall %.3f s (sum %.1f s); cold means: %s" % (arm, len(w), sum(w) / len(w), sum(w), parts))
PY
