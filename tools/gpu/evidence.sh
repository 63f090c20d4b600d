#!/usr/bin/env bash
# On the GPU host (through the device tool; .deps, .evident-stamp and
# gpu-work/ carried): build with the vendored packages, validate the
# kernels, then run (or --resume) protocols/hopper.json for at most SECONDS,
# stopping cleanly with SIGINT, and bring the store back under $OUT.  When
# the run has finished, export and verify the bundle too, then sign it with
# a key made on the host for the run and verify the signature.  Not a CI
# gate.
#   usage: tools/gpu/evidence.sh SECONDS [PROTOCOL]
set -uo pipefail
secs=${1:?seconds}
protocol=${2:-protocols/hopper.json}
out=${OUT:-build/gpu-out}
db=gpu-work/evidence.db
mkdir -p "$out" gpu-work
start=$(date +%s)
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
build/kernel-bench --quick > "$out/kernel-validate.txt" 2>&1
echo "kernel-bench --quick rc=$? ($(grep -c ' ok ' "$out/kernel-validate.txt") ok)"
# A native kernel that fails validation makes the run worthless: stop here
# and spend no more device time (the cub peer's own failures are recorded
# by the run itself).
bad=$(grep -E '^reduce_' "$out/kernel-validate.txt" | grep -v ' ok ' | grep -v ' cub ')
if [ -n "$bad" ]; then echo "native kernels failed validation:"; echo "$bad"; exit 1; fi
resume=""
[ -e "$db" ] && resume="--resume"
left=$(( secs - ($(date +%s) - start) ))
echo "run: $protocol, $left s, $resume"
timeout -s INT -k 20 "$left" build/evident run --protocol "$protocol" --backend cuda --db "$db" $resume \
    > "$out/run.log" 2>&1
rc=$?
echo "run rc=$rc"; grep -E "^run |^time:|^compile ahead" "$out/run.log"
python3 tools/store-times.py "$db"
python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
print("store:", c.execute("select count(*) from samples").fetchone()[0], "samples;",
      c.execute("select count(*) from run_status").fetchone()[0], "run status rows")
c.close()
PY
cp "$db" "$out/evidence.db"
if [ "$rc" = 0 ]; then
    build/evident export --db "$db" --out "$out/delivery.zip" > "$out/ROOT" && \
    build/verify-bundle "$out/delivery.zip" --source-tree . --expect-root "$(cat "$out/ROOT")" > "$out/verify.txt" 2>&1
    echo "export+verify rc=$?"; tail -12 "$out/verify.txt"
    # Signed on the host that measured, with a key made here for this run
    # (docs/threat-model.md): the private half stays in gpu-work/ and goes with the
    # machine; the envelope and the public half come back under $OUT.
    key=gpu-work/evidence-key
    rm -f "$key" "$key.pub"
    build/evident keygen --out "$key" && build/evident sign "$out/delivery.zip" --key "$key" &&
        build/verify-bundle "$out/delivery.zip" --key "$key.pub" --expect-root "$(cat "$out/ROOT")" \
            > "$out/verify-signed.txt" 2>&1
    echo "sign+verify rc=$?"; tail -3 "$out/verify-signed.txt"
    cp "$key.pub" "$out/evidence-key.pub"
fi
