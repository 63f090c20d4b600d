#!/usr/bin/env bash
# tools/gpu/plausibility.sh OUT [STEP]: the physical plausibility rule
# (docs/defenses.md, "Physical plausibility") and the cheat gallery on a
# GPU host.  Run from the repository root with .deps (and .evident-stamp,
# where the copy has no usable .git) carried; results go to OUT.  Each step
# is one call, well under 10 minutes; STEP (default all, in this order):
#   build    make DEPS=.deps -j16 all
#   gallery  evident run of tests/cheats/cheats.json on cuda (every cheat's
#            cuda source beside rows1, and the reference arms: floor,
#            ceiling, ceiling-l2), export, verify-bundle --source-tree .,
#            and a table: each job's outcome and the reason it failed
#   run      evident run of protocols/plausibility-cuda.json on cuda (ours,
#            cub, torch-compile on L2-resident and memory-bound cases; the
#            fast fault arm, a timer 20 x slow, on two of them), --resume
#            when OUT/plaus.db exists, stopped cleanly after 500 s (run
#            the step again to go on)
#   verify   export, verify-bundle --source-tree ., and a table: the run's
#            ceilings, then per job the ceiling that bounds its hot and
#            cold medians, the rate they move their bytes at, the bound
#            (2 x that ceiling) and the fraction of it
# What to look for: gallery: every ext-cheat-* job a recorded failure with
# its symptom (ext-cheat-table: failed-validation, "wrong on a row planted
# from a secret seed"), rows1 and the reference arms completed, "verdict:
# PASS"; run: every job of run 1 done; verify: "verdict: PASS", ceiling-l2
# faster than ceiling, every honest arm completed with a hot and a cold
# fraction below 1.00 (the largest is the margin's real headroom: report
# it), the cases of 4 MiB or less bounded by "l2" when hot, and
# fault-fast (main and its rescue) failed-protocol with "physical
# plausibility" in its reason.
set -uo pipefail
out=${1:?usage: tools/gpu/plausibility.sh OUT [build|gallery|run|verify|all]}
step=${2:-all}
mkdir -p "$out"
db=$out/plaus.db

build() {
    local t0=$(date +%s)
    make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; return 1; }
    echo "build: $(( $(date +%s) - t0 )) s at $(git rev-parse --short HEAD 2>/dev/null || cat .evident-stamp)"
}

# Prints a table of the bundle $1: the ceilings, then one line per job.
table() {
    python3 - "$1" <<'EOF'
import json, sys, zipfile
v = json.loads(zipfile.ZipFile(sys.argv[1]).read("validation.json"))
for j in v["jobs"]:
    if j["case_index"] is None and j["phase"] == "main" and j["arm"].startswith("ceiling"):
        a = j["attempts"][-1] if j["attempts"] else {}
        span = (a.get("binding") or {}).get("in_span")
        m = j.get("median_us")
        print("%-28s %-10s %s" % (j["job_key"], j["outcome"],
              "%.1f GB/s over %d bytes" % (span / m / 1e3, span) if m and span else "-"))
print("%-34s %-16s %-8s %10s %10s %6s %-8s %10s %10s %6s  %s" % (
    "job", "outcome", "hot", "GB/s", "bound", "frac", "cold", "GB/s", "bound", "frac", "reason"))
worst = {}
for j in v["jobs"]:
    if j["case_index"] is None:
        continue
    a = j["attempts"][-1] if j["attempts"] else {}
    why = ((a.get("process") or {}).get("protocol_error") or "")
    tail = ((a.get("process") or {}).get("stderr_tail") or "").strip().splitlines()
    reason = why or (tail[-1] if tail and j["outcome"] != "completed" else "")
    p = j.get("plausibility") or {}
    cols = []
    for t, med in (("hot", j.get("median_us")), ("cold", j.get("cold_median_us"))):
        q = p.get(t) or {}
        b = q.get("bound_bpus")
        rate = p["bytes"] / med if p and med else None
        frac = rate / b if rate and b else None
        if frac is not None and not j["arm"].startswith("fault-") and frac > worst.get(t, (0, ""))[0]:
            worst[t] = (frac, j["job_key"])
        cols += [q.get("bound_by", "-"), "%.1f" % (rate / 1e3) if rate else "-",
                 "%.1f" % (b / 1e3) if b else "-", "%.3f" % frac if frac is not None else "-"]
    print("%-34s %-16s %-8s %10s %10s %6s %-8s %10s %10s %6s  %s" % (
        (j["job_key"], j["outcome"]) + tuple(cols) + (reason[:160],)))
for t, (f, k) in sorted(worst.items()):
    print("largest %s fraction of its bound among honest arms: %.3f (%s)" % (t, f, k))
EOF
}

gallery() {
    local gdb=$out/cheats.db
    rm -f "$gdb" "$gdb"-*
    timeout -s INT -k 20 500 build/evident run --protocol tests/cheats/cheats.json --backend cuda \
        --db "$gdb" > "$out/cheats.log" 2>&1
    echo "gallery run rc=$?"
    grep -E '^run |^time:' "$out/cheats.log"
    build/evident export --db "$gdb" --out "$out/cheats.zip" > "$out/cheats.root" || return 1
    build/verify-bundle "$out/cheats.zip" --source-tree . > "$out/cheats.verify" 2>&1
    echo "gallery verify rc=$? ($(tail -1 "$out/cheats.verify"))"
    grep -E "FAIL" "$out/cheats.verify" | head -5
    table "$out/cheats.zip"
}

run() {
    local resume=""
    [ -e "$db" ] && resume="--resume"
    timeout -s INT -k 20 500 build/evident run --protocol protocols/plausibility-cuda.json --backend cuda \
        --db "$db" $resume > "$out/run.log" 2>&1
    echo "run rc=$?"
    grep -E '^run |^time:|skipped|^  ' "$out/run.log" | head -20
    return 0
}

verify() {
    build/evident export --db "$db" --out "$out/delivery.zip" > "$out/ROOT" || return 1
    build/verify-bundle "$out/delivery.zip" --source-tree . > "$out/verify.txt" 2>&1
    echo "verify rc=$? ($(tail -1 "$out/verify.txt"))"
    grep -E "FAIL" "$out/verify.txt" | head -5
    build/evident report "$out/delivery.zip" --out "$out/report.html" &&
        build/evident report "$out/delivery.zip" --markdown --out "$out/report.md" &&
        sed -n '/^## Defences per arm/,$p' "$out/report.md"
    table "$out/delivery.zip" | tee "$out/table.txt"
}

case $step in
build | gallery | run | verify) $step ;;
all) build && gallery && run && verify ;;
*) echo "tools/gpu/plausibility.sh: no step $step (build, gallery, run, verify, all)"; exit 2 ;;
esac
