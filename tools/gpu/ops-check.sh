#!/usr/bin/env bash
# tools/gpu/ops-check.sh OUT [STEP]: the ops beyond sum and max (reduce_min,
# reduce_mean: src/common/vocab.h) on a GPU host, end to end.  Run from the
# repository root with .deps (and .evident-stamp, where the copy has no
# usable .git) carried; results go to OUT.  Each step is one call, well
# under 10 minutes; STEP (default all, in this order):
#   build   make DEPS=.deps -j16 all (the CUDA backend, kernel-bench, and
#           mk/closure.list from this build: it must not change here)
#   bench   build/kernel-bench --quick: every schedule of every op against
#           its CPU twin bit for bit, cub against the FP64 oracle
#   run     evident run of protocols/ops-cuda.json on cuda (ours: every
#           schedule and auto; cub; torch-compile where torch imports),
#           --resume when OUT/ops.db exists, stopped cleanly after 500 s
#           (run the step again to go on)
#   verify  export, verify-bundle --source-tree . --expect-root, report,
#           and a table of each op's arms (outcome, median us per op)
# What to look for: bench ends "kernel-bench: all outputs valid" (a
# reduce_min_* or reduce_mean_* line marked TWIN or ORACLE is a kernel
# bug); run ends with every job of run 1 done; verify says
# "verdict: PASS"; the table shows completed jobs for every arm of every
# reduce_min and reduce_mean case (torch-compile: skipped only where torch
# does not import, with its reason).
set -uo pipefail
out=${1:?usage: tools/gpu/ops-check.sh OUT [build|bench|run|verify|all]}
step=${2:-all}
mkdir -p "$out"
db=$out/ops.db

build() {
    local t0=$(date +%s)
    make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; return 1; }
    echo "build: $(( $(date +%s) - t0 )) s; closure: $(wc -l < mk/closure.list) files"
    git diff --quiet -- mk/closure.list 2>/dev/null ||
        echo "build: mk/closure.list changed here (this host's build derived another closure): see git diff"
}

bench() {
    build/kernel-bench --quick > "$out/kernel-bench.txt" 2>&1
    local rc=$?
    echo "kernel-bench --quick rc=$rc: $(grep -c ' ok ' "$out/kernel-bench.txt") ok"
    grep -E '^reduce_(min|mean) ' "$out/kernel-bench.txt" | awk '{print $1, $2, $7, $10}' | sort | uniq -c |
        awk '{print "  " $0}' | head -40
    grep -E ' (TWIN|ORACLE) ' "$out/kernel-bench.txt" | head -20
    tail -1 "$out/kernel-bench.txt"
    return $rc
}

run() {
    local resume=""
    [ -e "$db" ] && resume="--resume"
    timeout -s INT -k 20 500 build/evident run --protocol protocols/ops-cuda.json --backend cuda \
        --db "$db" $resume > "$out/run.log" 2>&1
    local rc=$?
    echo "run rc=$rc"
    grep -E '^run |^time:|^compile ahead|skipped|^  ' "$out/run.log" | head -20
    return 0
}

verify() {
    build/evident export --db "$db" --out "$out/delivery.zip" > "$out/ROOT" || return 1
    build/verify-bundle "$out/delivery.zip" --source-tree . --expect-root "$(cat "$out/ROOT")" \
        > "$out/verify.txt" 2>&1
    local rc=$?
    tail -12 "$out/verify.txt"
    build/evident report "$out/delivery.zip" --out "$out/report.html" >/dev/null 2>&1
    python3 - "$out/delivery.zip" <<'PY'
import json, sys, zipfile
v = json.loads(zipfile.ZipFile(sys.argv[1]).read("validation.json"))
rows = {}
for j in v["jobs"]:
    ci = j.get("case_index")
    if not isinstance(ci, int) or j.get("retry_of") is not None:
        continue
    c = v["cases"][ci]
    key = "%-11s %7dx%-8d %-4s" % (c["op"], c["rows"], c["cols"], c["dtype"])
    med = j.get("median_us")
    rows.setdefault(key, []).append("%s %s%s" % (j["arm"], j["outcome"][:9],
                                                  " %.3f" % med if isinstance(med, (int, float)) else ""))
for k in sorted(rows):
    print(k, " | ".join(sorted(rows[k])))
PY
    return $rc
}

case $step in
build | bench | run | verify) "$step" ;;
all) build && bench && run && verify ;;
*) echo "tools/gpu/ops-check.sh: unknown step '$step' (build, bench, run, verify or all)" >&2; exit 2 ;;
esac
