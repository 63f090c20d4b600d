#!/usr/bin/env bash
# Honest runs always verify: N consecutive fresh `make evidence BACKEND=cpu`
# runs (protocols/quick.json), each into its own directory, with the machine
# as it is (LOAD=0) or beside LOAD busy loops; for each, the run status, the
# verdict of verify-bundle on its bundle, and the failed-protocol attempts
# and rescue jobs it carried.  A benchmark script, not a test.
#   usage: tools/honest-runs.sh N [LOAD] [OUTDIR]
# Prints one line per run and a summary; exits 1 when any bundle FAILs.
set -uo pipefail
n=${1:?runs}
load=${2:-0}
out=${3:-build/honest-runs-load$load}
rm -rf "$out"
mkdir -p "$out"
make --no-print-directory all > "$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 2; }
pids=()
for ((k = 0; k < load; k++)); do
    sh -c 'while :; do :; done' &
    pids+=($!)
done
trap '[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null' EXIT
pass=0 fail=0 norescue=0
for ((i = 1; i <= n; i++)); do
    d=$out/run$i
    make --no-print-directory evidence BACKEND=cpu EVIDENCE_DIR="$d" > "$d.log" 2>&1
    rc=$?
    # the root export printed (make evidence prints it last only on success)
    root=$(grep -E '^[0-9a-f]{64}$' "$d.log" | tail -1)
    [ -n "$root" ] || root=$(build/evident export --db "$d/evidence.db" --out "$d/re.zip" 2>/dev/null)
    verdict=$(build/verify-bundle "$d/delivery.zip" --expect-root "$root" > "$d.verify" 2>&1 &&
        echo PASS || echo FAIL)
    line=$(python3 - "$d/delivery.zip" <<'EOF'
import json, sys, zipfile
v = json.loads(zipfile.ZipFile(sys.argv[1]).read("validation.json"))
fp = sum(1 for j in v["jobs"] for a in j["attempts"] if a["outcome"] == "failed-protocol")
rescues = sum(1 for j in v["jobs"] if j["phase"] == "rescue")
why = sorted({a["process"]["protocol_error"].split(" (")[0][:90] for j in v["jobs"] for a in j["attempts"]
              if a["outcome"] == "failed-protocol"})
r = v["run"]
print("status %s%s failed-protocol %d rescues %d%s" % (
    r.get("status"), (", " + r["rescue_status"]) if r.get("rescue_status") else "", fp, rescues,
    ("  [" + "; ".join(why) + "]") if why else ""))
EOF
    )
    echo "run $i: make evidence rc=$rc, verify-bundle $verdict, $line"
    [ "$verdict" = PASS ] && pass=$((pass + 1)) || fail=$((fail + 1))
    case $line in *"rescues 0"*) norescue=$((norescue + 1)) ;; esac
done
echo "honest-runs: load $load: $n runs, $pass PASS, $fail FAIL, $norescue needed no rescue"
[ "$fail" = 0 ]
