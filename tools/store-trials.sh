#!/usr/bin/env bash
# Store trials for the one-writer and full-disk rules (docs/runner.md, "One
# writer, a full disk, and what a host cannot run").  A benchmark script,
# not a test; needs root (it mounts tmpfs filesystems).
#   usage: tools/store-trials.sh [FULL_TRIALS] [WRITER_TRIALS]
#  - full disk: the store on a tmpfs of a size that runs out mid-run (sizes
#    spread over the run's growth), then the tmpfs grows, --resume finishes
#    the run, export and verify-bundle must pass: counts the runs left
#    unexportable or unverifiable.
#  - concurrent writers: while a run measures, a second `run` and a
#    `--resume` on the same store must be refused at once (exit 2) and the
#    first run must complete with every job completed and nothing
#    interrupted: counts the disturbed runs.
set -uo pipefail
full=${1:-50}
writers=${2:-20}
out=build/store-trials
proto=$out/disk.json
mnt=$out/mnt
[ "$(id -u)" = 0 ] || { echo "store-trials: needs root (tmpfs mounts)"; exit 2; }
make --no-print-directory all > /dev/null || exit 2
rm -rf "$out"
mkdir -p "$mnt"
cat > "$proto" <<'EOF'
{"seed": 12, "samples": 7, "warmup_ms": 5, "target_sample_ms": 2, "cold_samples": 1,
 "tolerances": {"sample_band": 0.9},
 "reference": {"cpu": {"ceiling_max_bytes": 1048576}},
 "arms": ["default", "rows1", "rows2"],
 "cases": [{"op": "reduce_sum", "rows": 33, "cols": 256, "dtype": "fp16", "default_rows": 4},
           {"op": "reduce_max", "rows": 20, "cols": 300, "dtype": "bf16", "default_rows": 8},
           {"op": "reduce_sum", "rows": 65, "cols": 512, "dtype": "fp32", "default_rows": 8}]}
EOF
stopped=0 bad=0
for ((i = 0; i < full; i++)); do
    kib=$((260 + i * 340 / full)) # the finished store is about 590 KiB
    mount -t tmpfs -o size=${kib}k tmpfs "$mnt" || exit 2
    db=$mnt/e.db
    build/evident run --protocol "$proto" --db "$db" > /dev/null 2> "$out/run.err"
    rc=$?
    [ $rc = 1 ] && grep -q full "$out/run.err" && stopped=$((stopped + 1))
    mount -o remount,size=64m "$mnt"
    if ! build/evident run --protocol "$proto" --db "$db" --resume > /dev/null 2> "$out/resume.err"; then
        grep -q "has no run to resume" "$out/resume.err" && build/evident run --protocol "$proto" --db "$db" > /dev/null 2>&1
    fi
    if ! build/evident export --db "$db" --out "$out/e.zip" > /dev/null 2> "$out/export.err" ||
        ! build/verify-bundle "$out/e.zip" > "$out/verify.txt" 2>&1; then
        bad=$((bad + 1))
        echo "full disk trial $i (${kib} KiB): left unexportable or unverifiable:"
        tail -2 "$out/export.err" "$out/verify.txt"
    fi
    umount -l "$mnt"
done
echo "store-trials: full disk: $full trials, $stopped stopped mid-run by the full disk, $bad left unexportable or unverifiable"

slow=$out/slow.json
sed -e 's/"samples": 7, "warmup_ms": 5, "target_sample_ms": 2/"samples": 12, "warmup_ms": 150, "target_sample_ms": 50/' \
    "$proto" > "$slow"
disturbed=0 refused=0
for ((i = 0; i < writers; i++)); do
    db=$out/w$i.db
    build/evident run --protocol "$slow" --db "$db" > /dev/null 2> "$out/w.err" &
    pid=$!
    sleep 0.4
    for extra in "" "--resume"; do
        t0=$(date +%s%N)
        build/evident run --protocol "$slow" --db "$db" $extra > /dev/null 2> "$out/w2.err"
        rc=$?
        ms=$((($(date +%s%N) - t0) / 1000000))
        if [ $rc = 2 ] && grep -q "being written by another run (pid $pid" "$out/w2.err" && [ $ms -lt 5000 ]; then
            refused=$((refused + 1))
        else
            echo "writer trial $i ${extra:-run}: exit $rc after $ms ms: $(tail -1 "$out/w2.err")"
        fi
    done
    wait $pid
    rc=$?
    build/evident export --db "$db" --out "$out/w.zip" > /dev/null 2>&1
    ok=$(python3 - "$out/w.zip" <<'EOF'
import json, sys, zipfile
v = json.loads(zipfile.ZipFile(sys.argv[1]).read("validation.json"))
bad = [a for j in v["jobs"] for a in j["attempts"] if a["outcome"] == "interrupted"]
print("ok" if v["run"]["status"] and not bad else "disturbed")
EOF
    )
    if [ $rc != 0 ] || [ "$ok" != ok ]; then
        disturbed=$((disturbed + 1))
        echo "writer trial $i: the first run exit $rc, $ok"
    fi
done
echo "store-trials: concurrent writers: $writers trials, $refused of $((2 * writers)) second writers refused at once, $disturbed first runs disturbed"
[ $bad = 0 ] && [ $disturbed = 0 ]
