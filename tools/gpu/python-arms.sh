#!/usr/bin/env bash
# tools/gpu/python-arms.sh OUT [STEP]: a Python arm on a GPU host, end to
# end: examples/triton-sum (a Triton kernel, its protocol beside ours, cub
# and torch-compile) and an off-by-one variant of it.  Run from the
# repository root with .deps (and .evident-stamp, where the copy has no
# usable .git) carried; results go to OUT.  PY (default python3) is the
# interpreter with torch and triton.  Each step is one call, well under 10
# minutes; STEP (default all, in this order):
#   build    make DEPS=.deps -j16 all (the CUDA backend, libevident_ops.so,
#            and mk/closure.list from this build: it must not change here)
#   triton   evident run of examples/triton-sum/protocol.json on cuda with
#            --python PY, --resume when OUT/triton.db exists, stopped
#            cleanly after 500 s (run the step again to go on)
#   offbyone the same kernel launched on one row too few (sum.py's
#            reduce_sum_offbyone) on two cases, in build/python-arms-obo/
#   verify   export both, verify-bundle --source-tree . --expect-root each,
#            then the triton bundle again in an empty directory with no
#            tree at all (verify-bundle alone), the report, and a table of
#            the Triton arm's jobs (outcome, median us per op, capture,
#            versions) beside ours and the peers
# What to look for: triton's run ends with every job of run 1 done; verify
# says "verdict: PASS" three times; in the table every ext-triton job is
# completed with capture "graph" (a "timed loop: ..." capture means
# torch.cuda.graph refused it: say so, with its reason) and versions naming
# python, torch and triton; the off-by-one's two jobs are failed-validation
# and their reason names the last row ("row 64 holds ..." for 65 rows,
# "row 4095 ..." for 4096).
set -uo pipefail
out=${1:?usage: tools/gpu/python-arms.sh OUT [build|triton|offbyone|verify|all]}
step=${2:-all}
PY=${PY:-python3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
db=$out/triton.db
obo_dir=build/python-arms-obo
obo_db=$out/offbyone.db

build() {
    local t0=$(date +%s)
    make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; return 1; }
    echo "build: $(( $(date +%s) - t0 )) s; closure: $(wc -l < mk/closure.list) files"
    git diff --quiet -- mk/closure.list 2>/dev/null ||
        echo "build: mk/closure.list changed here (this host's build derived another closure): see git diff"
    "$PY" -c 'import torch, triton; print("python", __import__("platform").python_version(), "torch",
               torch.__version__, "triton", triton.__version__, "cuda", torch.cuda.is_available())' 2>&1 | tail -1
}

triton() {
    local resume=""
    [ -e "$db" ] && resume="--resume"
    timeout -s INT -k 20 500 build/evident run --protocol examples/triton-sum/protocol.json --backend cuda \
        --db "$db" --python "$PY" $resume > "$out/triton-run.log" 2>&1
    echo "triton run rc=$?"
    grep -E '^run |^time:|ext-triton' "$out/triton-run.log" | head -20
    return 0
}

offbyone() {
    rm -rf "$obo_dir" "$obo_db"*
    mkdir -p "$obo_dir"
    cp examples/triton-sum/sum.py "$obo_dir/sum.py"
    cat > "$obo_dir/protocol.json" <<'JSON'
{"name": "triton-sum off by one: the last row left unwritten", "seed": 11, "samples": 7,
 "warmup_ms": 100, "target_sample_ms": 10, "cold_samples": 1, "job_timeout_s": 300, "retries": 0,
 "tolerances": {"sum_depth": 8192}, "reference_arms": false,
 "arms": ["default", "ext-triton-obo"],
 "kernels": [{"name": "ext-triton-obo", "python": {"cuda": "sum.py"},
              "entries": {"reduce_sum/fp32": "reduce_sum_offbyone", "reduce_sum/fp16": "reduce_sum_offbyone"}}],
 "cases": [{"op": "reduce_sum", "rows": 65, "cols": 512, "dtype": "fp32", "default_rows": 8},
           {"op": "reduce_sum", "rows": 4096, "cols": 4096, "dtype": "fp16", "default_rows": 4}]}
JSON
    timeout -s INT -k 20 500 build/evident run --protocol "$obo_dir/protocol.json" --backend cuda \
        --db "$obo_db" --python "$PY" > "$out/offbyone-run.log" 2>&1
    echo "off-by-one run rc=$?"
    grep -E '^run |ext-triton-obo' "$out/offbyone-run.log" | head -10
    return 0
}

# table ZIP: every job of the Python arm and of the arms beside it
table() {
    "$PY" - "$1" <<'PY'
import json, sys, zipfile
v = json.loads(zipfile.ZipFile(sys.argv[1]).read("validation.json"))
for j in v["jobs"]:
    ci = j.get("case_index")
    if not isinstance(ci, int) or j.get("retry_of") is not None or j["phase"] != "main":
        continue
    c = v["cases"][ci]
    a = j["attempts"][-1] if j["attempts"] else {}
    d = a.get("device") or {}
    med = j.get("median_us")
    tail = (a.get("process") or {}).get("stderr_tail") or ""
    why = ""
    if j["outcome"] != "completed":
        lines = [l for l in tail.splitlines() if l.strip()]
        why = " | " + (lines[-1][:200] if lines else (a.get("process") or {}).get("skip_reason") or "")
    print("%-16s %6dx%-8d %-4s %-18s %10s  %-8s %s%s" % (
        j["arm"], c["rows"], c["cols"], c["dtype"], j["outcome"],
        "%.3f" % med if isinstance(med, (int, float)) else "-", d.get("capture", ""),
        json.dumps(d.get("versions", {})) if j["arm"].startswith("ext-") else "", why))
PY
}

verify() {
    local rc=0 root tmp
    for name in triton offbyone; do
        local d=$out/$name.db
        [ -e "$d" ] || { echo "verify: $d missing (run its step first)"; rc=1; continue; }
        root=$(build/evident export --db "$d" --out "$out/$name.zip") || { rc=1; continue; }
        echo "$root" > "$out/$name.ROOT"
        build/verify-bundle "$out/$name.zip" --source-tree . --expect-root "$root" > "$out/$name-verify.txt" 2>&1 ||
            rc=1
        echo "== $name: $(tail -1 "$out/$name-verify.txt")"
        grep -E 'Python arm' "$out/$name-verify.txt" | head -2
        build/evident report "$out/$name.zip" --out "$out/$name-report.html" >/dev/null 2>&1
        table "$out/$name.zip" | grep -E '^(ext-|default |rows1 |cub |torch-compile )' | head -40
    done
    # the bundle alone, in a directory with no tree at all
    tmp=$(mktemp -d)
    cp "$out/triton.zip" "$tmp/delivery.zip" 2>/dev/null &&
        (cd "$tmp" && "$OLDPWD/build/verify-bundle" delivery.zip --expect-root "$(cat "$out/triton.ROOT")") \
            > "$out/triton-verify-alone.txt" 2>&1 || rc=1
    echo "== triton, alone in $tmp: $(tail -1 "$out/triton-verify-alone.txt")"
    rm -rf "$tmp"
    return $rc
}

case $step in
build | triton | offbyone | verify) "$step" ;;
all) build && triton && offbyone && verify ;;
*)
    echo "tools/gpu/python-arms.sh: unknown step '$step' (build, triton, offbyone, verify, all)" >&2
    exit 2
    ;;
esac
