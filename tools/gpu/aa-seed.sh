#!/usr/bin/env bash
# tools/gpu/aa-seed.sh SECONDS FLAGSHIP.zip: the second run of an A/A pair
# on the GPU host, right after the flagship (tools/gpu/evidence.sh): the
# flagship's 16 seed cases (protocols/hopper.json --cases 0-15, the same
# settings, rounds and arms; auto from the flagship's model, --model) into
# a store of their own, for at most SECONDS (stopped cleanly with SIGINT;
# run the script again to --resume).  When the run has finished: export,
# verify against this tree, and compare with the flagship on the cases they
# share (evident compare, and verify-bundle --compare's agreement: the
# fraction of pairs whose estimates agree within their combined 95%
# uncertainty, docs/intervals.md).  The two runs' protocols differ in their
# case lists only; the comparison's header says so.  Results under $OUT:
# aa.db.xz, aa.zip, verify-aa.txt, compare.md, compare.json, agreement.txt.
# Run with .deps and .evident-stamp carried (it makes the build itself).
# Not a CI gate.
set -uo pipefail
secs=${1:?usage: tools/gpu/aa-seed.sh SECONDS FLAGSHIP.zip}
flag=${2:?usage: tools/gpu/aa-seed.sh SECONDS FLAGSHIP.zip}
out=${OUT:-build/gpu-out}
db=gpu-work/aa.db
mkdir -p "$out" gpu-work
[ -e "$flag" ] || { echo "tools/gpu/aa-seed.sh: no flagship bundle $flag: run tools/gpu/evidence.sh first" >&2; exit 2; }
# the build again: a call carries .deps anew, without the libraries an
# earlier call's build unpacked from it (a no-op otherwise)
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
resume=""
[ -e "$db" ] && resume="--resume"
t0=$(date +%s)
timeout -s INT -k 20 "$secs" build/evident run --protocol protocols/hopper.json --cases 0-15 --model "$flag" \
    --backend cuda --db "$db" $resume > "$out/run-aa.log" 2>&1
rc=$?
echo "aa run rc=$rc in $(( $(date +%s) - t0 )) s $resume"
grep -E "^run |^time:|^compile ahead" "$out/run-aa.log"
python3 tools/store-times.py "$db"
python3 tools/gpu/pack-store.py "$db" "$out/aa.db.xz"
[ "$rc" = 0 ] || exit "$rc"
build/evident export --db "$db" --out "$out/aa.zip" > "$out/aa.ROOT" &&
    build/verify-bundle "$out/aa.zip" --source-tree . --expect-root "$(cat "$out/aa.ROOT")" > "$out/verify-aa.txt" 2>&1
echo "aa export+verify rc=$?"; tail -3 "$out/verify-aa.txt"
build/evident compare "$flag" "$out/aa.zip" --markdown --out "$out/compare.md"
echo "compare rc=$?"
build/evident compare "$flag" "$out/aa.zip" --json --out "$out/compare.json"
build/verify-bundle --compare "$flag" "$out/aa.zip" > "$out/agreement.txt" 2>&1
echo "verify-bundle --compare rc=$?"
grep -i -E "agree|signif|not replicated|floor" "$out/agreement.txt" "$out/compare.md" | head -20
