#!/usr/bin/env bash
# tools/gpu/python-arms.sh OUT [STEP]: a Python arm on a GPU host, end to
# end, as a user runs it: examples/triton-sum (a Triton kernel and its
# protocol) from a directory outside the checkout, with the installed
# programs, beside our arms, cub and torch-compile; then an off-by-one
# variant of it.  Run from the repository root with .deps (and
# .evident-stamp, where the copy has no usable .git) carried; results go to
# OUT.  PY (default python3) is an interpreter with torch and triton.  Each
# step is one call, well under 10 minutes; STEP (default all, in order):
#   install  make DEPS=.deps -j16 all, install into OUT/prefix (the CUDA
#            backend, libevident_ops.so and the Python host among it), and
#            say which torch and triton PY has
#   run      examples/triton-sum copied to OUT/mine and run there
#            (--backend cuda --python PY), --resume when OUT/mine/run.db
#            exists, stopped cleanly after 500 s (run the step again to go
#            on); export to OUT/mine/run.zip
#   verify   in OUT/third (no tree at all): verify-bundle from the bundle
#            alone, then with --kernel-tree OUT/mine; the report; a table of
#            every main job (outcome, median us per op, capture, versions)
#   offbyone examples/triton-sum copied to OUT/off-by-one with its entries
#            naming sum.py's reduce_sum_offbyone (one program too few: the
#            last row unwritten), --arms ext-triton, two cases
# What to look for: "python-arms: PASS" after verify and after offbyone;
# the two verify lines PASS ("kernel ext-triton: a Python arm, nothing
# compiled"); in the table every ext-triton job completed with capture
# "graph" (a "timed loop: ..." capture means torch.cuda.graph refused it:
# report its reason) and versions naming python, torch and triton, its hot
# medians beside ours and the peers'; the off-by-one's reason "first
# stage: 1 of 65 rows wrong; the first, row 64, is ..." in
# OUT/off-by-one/run.txt.
set -uo pipefail
out=${1:?usage: tools/gpu/python-arms.sh OUT [install|run|verify|offbyone|all]}
step=${2:-all}
PY=${PY:-python3}
out=$(mkdir -p "$out" && cd "$out" && pwd)
repo=$(pwd)
evident=$out/prefix/bin/evident
verify=$out/prefix/bin/verify-bundle

install() {
    make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; return 1; }
    git diff --quiet -- mk/closure.list 2>/dev/null ||
        echo "python-arms: mk/closure.list changed here (this host's build derived another closure): see git diff"
    rm -rf "$out/prefix"
    make DEPS=.deps install PREFIX="$out/prefix" > "$out/install.log" 2>&1 || { tail -30 "$out/install.log"; return 1; }
    echo "python-arms: installed into $out/prefix"
    "$PY" -c 'import platform, torch, triton; print("python-arms: python", platform.python_version(), "torch",
               torch.__version__, "triton", triton.__version__, "cuda", torch.cuda.is_available())' 2>&1 | tail -1
}

run() {
    local resume=""
    [ -d "$out/mine" ] || cp -r "$repo/examples/triton-sum" "$out/mine"
    [ -e "$out/mine/run.db" ] && resume="--resume"
    (
        cd "$out/mine" || exit 1
        timeout -s INT -k 20 500 "$evident" run --protocol protocol.json --backend cuda --db run.db \
            --python "$PY" $resume > run.txt 2> run.log
        echo "python-arms: run rc=$? ($(grep -E '^run 1:' run.txt))"
        "$evident" export --db run.db --out run.zip > root.txt 2>> run.log
        echo "python-arms: export rc=$? root $(cat root.txt)"
    )
    grep -E '^\| (Operation|reduce_)' "$out/mine/run.txt"
    grep -A 20 '^failed jobs' "$out/mine/run.txt"
    return 0
}

verify() {
    local fail=0
    rm -rf "$out/third"
    mkdir -p "$out/third"
    (
        cd "$out/third" || exit 1
        "$verify" "$out/mine/run.zip" --expect-root "$(cat "$out/mine/root.txt")" > alone.txt 2>&1
        echo "python-arms: verify (bundle alone) rc=$? ($(tail -1 alone.txt))"
        grep -E "kernel ext-triton: " alone.txt
        "$verify" "$out/mine/run.zip" --kernel-tree "$out/mine" > kt.txt 2>&1
        echo "python-arms: verify --kernel-tree rc=$? ($(tail -1 kt.txt))"
        "$evident" report "$out/mine/run.zip" --out report.html > /dev/null 2>&1
    )
    grep -q "^verdict: PASS" "$out/third/alone.txt" && grep -q "^verdict: PASS" "$out/third/kt.txt" || fail=1
    "$PY" - "$out/mine/run.zip" <<'PY' || fail=1
import json, sys, zipfile
v = json.loads(zipfile.ZipFile(sys.argv[1]).read("validation.json"))
bad = 0
for j in v["jobs"]:
    ci = j.get("case_index")
    if not isinstance(ci, int) or j["phase"] != "main":
        continue
    c = v["cases"][ci]
    a = j["attempts"][-1] if j["attempts"] else {}
    d = a.get("device") or {}
    med = j.get("median_us")
    tail = [l for l in ((a.get("process") or {}).get("stderr_tail") or "").splitlines() if l.strip()]
    why = "" if j["outcome"] == "completed" else " | " + (tail[-1][:200] if tail else
                                                         (a.get("process") or {}).get("skip_reason") or "")
    print("%-14s %6dx%-8d %-4s %-10s %-18s %10s  %-6s %s%s" % (
        j["arm"], c["rows"], c["cols"], c["dtype"], j["label"], j["outcome"],
        "%.3f" % med if isinstance(med, (int, float)) else "-", d.get("capture", ""),
        json.dumps(d.get("versions", {})) if j["arm"].startswith("ext-") else "", why))
    if j["arm"] == "ext-triton" and (j["outcome"] != "completed" or d.get("capture") != "graph"):
        bad = 1
sys.exit(bad)
PY
    [ "$fail" = 0 ] && echo "python-arms: PASS (verify)" || echo "python-arms: FAIL (verify; logs under $out)"
    return "$fail"
}

offbyone() {
    local line
    rm -rf "$out/off-by-one"
    cp -r "$repo/examples/triton-sum" "$out/off-by-one"
    "$PY" - "$out/off-by-one/protocol.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["kernels"][0]["entries"] = {k: "reduce_sum_offbyone" for k in p["kernels"][0]["entries"]}
p["cases"] = [c for c in p["cases"] if (c["rows"], c["cols"]) in ((65, 512), (4096, 4096))]
json.dump(p, open(sys.argv[1], "w"), indent=1)
PY
    (
        cd "$out/off-by-one" || exit 1
        timeout -s INT -k 20 500 "$evident" run --protocol protocol.json --backend cuda --db run.db \
            --python "$PY" --arms ext-triton > run.txt 2> run.log
        echo "python-arms: off-by-one run rc=$?"
    )
    line=$(grep -E 'ext-triton/.*: first stage: 1 of 65 rows wrong; the first, row 64, is ' "$out/off-by-one/run.txt" |
        head -n 1)
    if [ -n "$line" ]; then
        echo "python-arms: the off-by-one's reason: $line"
        echo "python-arms: PASS (offbyone)"
        return 0
    fi
    echo "python-arms: no reason naming row 64 in $out/off-by-one/run.txt:"
    grep -A 10 '^failed jobs' "$out/off-by-one/run.txt"
    echo "python-arms: FAIL (offbyone)"
    return 1
}

case $step in
install | run | verify | offbyone) "$step" ;;
all) install && run && verify && offbyone ;;
*)
    echo "tools/gpu/python-arms.sh: unknown step '$step' (install, run, verify, offbyone, all)" >&2
    exit 2
    ;;
esac
