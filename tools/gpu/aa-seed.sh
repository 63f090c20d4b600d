#!/usr/bin/env bash
# tools/gpu/aa-seed.sh SECONDS MODEL.zip NAME [AGAINST.zip]: one run of an
# A/A pair on the GPU host: the flagship's 16 seed cases
# (protocols/hopper.json --cases 0-15, the same settings, rounds and arms;
# auto from MODEL.zip's model, --model) into the store gpu-work/NAME.db,
# for at most SECONDS (stopped cleanly with SIGINT; run the script again to
# --resume; the build counts).  When the run has finished: export (gpu-work/NAME.zip) and
# verify against this tree; with AGAINST.zip, compare it with NAME.zip on
# the cases they share (evident compare, and verify-bundle --compare's
# agreement: the fraction of pairs whose estimates agree within their
# combined 95% uncertainty, docs/intervals.md).  Two such runs with the
# same MODEL.zip are an A/A pair of one protocol; against the flagship's
# bundle the protocols differ in their case lists only, and the
# comparison's header says so.  Results under $OUT: NAME.db.xz (the
# bundle is re-exported from it byte for byte, so it stays on the host),
# NAME.ROOT, verify-NAME.txt, and with AGAINST compare.md, compare.json,
# agreement.txt.  Run with .deps and .evident-stamp carried (it makes the
# build itself).  Exit 0 once all of it is done.  Not a CI gate.
set -uo pipefail
usage="usage: tools/gpu/aa-seed.sh SECONDS MODEL.zip NAME [AGAINST.zip]"
secs=${1:?$usage}
model=${2:?$usage}
name=${3:?$usage}
against=${4:-}
out=${OUT:-build/gpu-out}
db=gpu-work/$name.db
zip=gpu-work/$name.zip
mkdir -p "$out" gpu-work
[ -e "$model" ] || { echo "tools/gpu/aa-seed.sh: no bundle $model to take the model from" >&2; exit 2; }
[ -z "$against" ] || [ -e "$against" ] || { echo "tools/gpu/aa-seed.sh: no bundle $against to compare with" >&2; exit 2; }
# the build again: a call carries .deps anew, without the libraries an
# earlier call's build unpacked from it (a no-op otherwise)
t_end=$(($(date +%s) + secs))
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
if [ ! -e "$out/$name.ROOT" ]; then
    # a store without a run (a start killed before its run was written)
    # cannot be resumed: it goes, and the run starts again
    if [ -e "$db" ] && [ "$(python3 -c 'import sqlite3, sys
try: print(sqlite3.connect(sys.argv[1]).execute("select count(*) from runs").fetchone()[0])
except sqlite3.Error: print(0)' "$db")" = 0 ]; then
        echo "$name: $db holds no run: removed, the run starts again"
        rm -f "$db" "$db-wal" "$db-shm"
    fi
    resume=""
    [ -e "$db" ] && resume="--resume"
    t0=$(date +%s)
    # SECONDS from the start, the build's included (a fresh host's is 82 s)
    [ $((t_end - t0)) -ge 30 ] || { echo "$name: $((t_end - t0)) s left after the build: the run waits for the next call"; exit 124; }
    timeout -s INT -k 20 $((t_end - t0)) build/evident run --protocol protocols/hopper.json --cases 0-15 --model "$model" \
        --backend cuda --db "$db" $resume >> "$out/run-$name.log" 2>&1
    rc=$?
    echo "$name run rc=$rc in $(( $(date +%s) - t0 )) s $resume"
    grep -E "^run |^time:|^compile ahead" "$out/run-$name.log" | tail -4
    python3 tools/store-times.py "$db"
    python3 tools/gpu/pack-store.py "$db" "$out/$name.db.xz"
    [ "$rc" = 0 ] || exit "$rc"
    build/evident export --db "$db" --out "$zip" > "$out/$name.ROOT.tmp" &&
        build/verify-bundle "$zip" --source-tree . --expect-root "$(cat "$out/$name.ROOT.tmp")" > "$out/verify-$name.txt" 2>&1
    rc=$?
    echo "$name export+verify rc=$rc"; tail -3 "$out/verify-$name.txt"
    [ "$rc" = 0 ] || exit "$rc"
    mv "$out/$name.ROOT.tmp" "$out/$name.ROOT"
fi
[ -n "$against" ] || exit 0
build/evident compare "$against" "$zip" --markdown --out "$out/compare.md"
echo "compare rc=$?"
build/evident compare "$against" "$zip" --json --out "$out/compare.json"
build/verify-bundle --compare "$against" "$zip" > "$out/agreement.txt" 2>&1
echo "verify-bundle --compare rc=$?"
# sed reads all of grep's lines (head would leave grep a SIGPIPE, which
# pipefail makes this script's exit status)
grep -i -E "agree|signif|not replicated|floor" "$out/agreement.txt" "$out/compare.md" | sed -n 1,20p
exit 0
