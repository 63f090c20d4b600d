#!/usr/bin/env bash
# On the GPU host (device tool; .deps and .evident-stamp carried): where a
# run's wall goes.  Runs PROTOCOL (with optional --cases/--arms), prints the
# run summary (wall / demanded and the time breakdown), then from the store
# each arm's mean job wall and the mean of each cold timing by arm.  Not a
# CI gate.
#   usage: [SECS=590] tools/gpu/pipeline-speed.sh PROTOCOL DB [evident run options...]
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
python3 tools/store-times.py "$db"
