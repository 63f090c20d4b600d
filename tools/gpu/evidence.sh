#!/usr/bin/env bash
# On the GPU host (through the device tool; .deps, .evident-stamp and
# gpu-work/ carried): build with the vendored packages, validate the
# kernels, then run (or --resume) protocols/hopper.json for at most SECONDS,
# stopping cleanly with SIGINT, and bring the store back under $OUT
# (evidence.db.xz: a device's returned files are bounded in size, 16 MB
# each, and count; a 678-job store of the flagship was 25.4 MB, 11.4 MB
# gzipped, 1.3 MB xz-compressed, so the whole run's would be about 17 MB
# gzipped).
# When the run has finished, export and verify the bundle too (it stays in
# gpu-work/delivery.zip; export the store again to get it byte for byte),
# then sign it with a key made on the host for the run and verify the
# signature (ROOT, evidence-key.pub and delivery.zip.intoto.json come back).
# The logs come back in logs.tgz.  Not a CI gate.
#   usage: tools/gpu/evidence.sh SECONDS [PROTOCOL]
set -uo pipefail
secs=${1:?seconds}
protocol=${2:-protocols/hopper.json}
out=${OUT:-build/gpu-out}
db=gpu-work/evidence.db
logs=gpu-work/logs
mkdir -p "$out" gpu-work "$logs"
start=$(date +%s)
make DEPS=.deps -j16 all > "$logs/build.log" 2>&1 || { tail -30 "$logs/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
resume=""
[ -e "$db" ] && resume="--resume"
if [ -z "$resume" ]; then
    build/kernel-bench --quick > "$logs/kernel-validate.txt" 2>&1
    echo "kernel-bench --quick rc=$? ($(grep -c ' ok ' "$logs/kernel-validate.txt") ok)"
    # A native kernel that fails validation makes the run worthless: stop
    # here and spend no more device time (the cub peer's own failures are
    # recorded by the run itself).
    bad=$(grep -E '^reduce_' "$logs/kernel-validate.txt" | grep -v ' ok ' | grep -v ' cub ')
    if [ -n "$bad" ]; then echo "native kernels failed validation:"; echo "$bad"; exit 1; fi
    # A short run of every kind of arm first (ours, cub, torch-compile on
    # four cases; not yet timed: the host check's whole cuda make evidence of
    # them took 42 s with its export and verify): the worker's open, the plant and check
    # nodes and the torch peer's library change without a GPU to run them
    # on (ef96584's preopen, 10716fa's plants of several sites); a flagship
    # whose jobs all fail would spend the session's device time for nothing
    # (a sample rule broken on a short run, failed-protocol, does not stop it).
    s0=$(date +%s)
    rm -f gpu-work/smoke.db
    timeout -s INT -k 10 150 build/evident run --protocol protocols/host-check-cuda.json --backend cuda \
        --db gpu-work/smoke.db > "$logs/smoke.log" 2>&1
    echo "smoke: rc=$? in $(( $(date +%s) - s0 )) s"
    smoke_bad=$(python3 - <<'PY'
import sqlite3
c = sqlite3.connect("gpu-work/smoke.db")
print("\n".join(f"{k}: {o}" for k, o in c.execute(
    "select j.job_key, coalesce(o.outcome, 'not run') from jobs j left join job_outcomes o using (job_id) "
    "where j.phase = 'main' and coalesce(o.outcome, '') not in ('completed', 'failed-protocol')")))
PY
)
    if [ -n "$smoke_bad" ]; then
        echo "smoke: jobs that did not complete (the flagship is not started):"; echo "$smoke_bad"
        grep -E "failed|error" "$logs/smoke.log" | head -20
        exit 1
    fi
fi
# The run records the carried stamp's commit only when the stamp was
# written for exactly these measured files (src/runner/snapshot.c,
# ev_git_info_tree); otherwise it would name the device copy's own .git:
# refuse before spending the device's time on evidence naming the wrong
# commit.
if ! build/evident stamp --out gpu-work/here-stamp.json > /dev/null 2>&1 ||
    ! python3 - <<'PY'
import json, sys
here, carried = (json.load(open(p)) for p in ("gpu-work/here-stamp.json", ".evident-stamp"))
ok = here["tree"] == carried["tree"] and not carried["dirty"]
print(f"stamp: commit {carried['commit']}, tree {carried['tree'][:12]}...; these files' tree {here['tree'][:12]}...:",
      "the run records the stamp's commit" if ok else "MISMATCH (or a dirty stamp): make stamp on a clean tree, carry it")
sys.exit(0 if ok else 1)
PY
then
    echo "evidence: the carried .evident-stamp does not name these files: not run"
    exit 1
fi
left=$(( secs - ($(date +%s) - start) ))
echo "run: $protocol, $left s, $resume"
timeout -s INT -k 20 "$left" build/evident run --protocol "$protocol" --backend cuda --db "$db" $resume \
    >> "$logs/run.log" 2>&1
rc=$?
echo "run rc=$rc"; grep -E "^run |^time:|^compile ahead" "$logs/run.log"
# the commit the run records: the stamp's (make stamp, carried), or the
# evidence names the wrong one
python3 - "$db" <<'PY'
import json, sqlite3, sys
c, d = sqlite3.connect(sys.argv[1]).execute("select git_commit, git_dirty from runs order by run_id limit 1").fetchone()
try:
    s = json.load(open(".evident-stamp"))["commit"]
except (OSError, ValueError, KeyError):
    s = None
print(f"provenance: commit {c}{' (dirty)' if d else ''}; the stamp's {s}:",
      "the same" if c == s else "DIFFERENT: make stamp on a clean tree and carry .evident-stamp")
PY
python3 tools/store-times.py "$db"
python3 tools/gpu/pack-store.py "$db" "$out/evidence.db.xz"
if [ "$rc" = 0 ]; then
    # The bundle stays on the host (gpu-work/delivery.zip, for the A/A run);
    # exporting evidence.db.xz's store again gives it byte for byte.
    zip=gpu-work/delivery.zip
    build/evident export --db "$db" --out "$zip" > "$out/ROOT" && \
    build/verify-bundle "$zip" --source-tree . --expect-root "$(cat "$out/ROOT")" > "$logs/verify.txt" 2>&1
    echo "export+verify rc=$?"; tail -12 "$logs/verify.txt"
    # Signed on the host that measured, with a key made here for this run
    # (docs/threat-model.md): the private half stays in gpu-work/ and goes with the
    # machine; the envelope and the public half come back under $OUT.
    key=gpu-work/evidence-key
    rm -f "$key" "$key.pub"
    build/evident keygen --out "$key" && build/evident sign "$zip" --key "$key" &&
        build/verify-bundle "$zip" --key "$key.pub" --expect-root "$(cat "$out/ROOT")" \
            > "$logs/verify-signed.txt" 2>&1
    echo "sign+verify rc=$?"; tail -3 "$logs/verify-signed.txt"
    cp "$key.pub" "$out/evidence-key.pub"
    cp "$zip.intoto.json" "$out/delivery.zip.intoto.json"
    ls -l "$zip"
fi
tar -czf "$out/logs.tgz" -C "$logs" .
