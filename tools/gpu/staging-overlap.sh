#!/usr/bin/env bash
# On the GPU host (device tool; .deps and .evident-stamp carried): does
# staging move the numbers?  Runs PROTOCOL twice, fresh each time: once
# with every job started at its turn (--stage-ahead 0) and once staged
# (the cuda default: python imports, input bytes and the oracle of later
# jobs overlap a job's timed windows).  Prints each run's summary, then
# per (case, arm) whether the two runs' estimates over rounds agree within
# their combined 95% uncertainty (Welch t on the log round medians), and
# verify-bundle --compare's agreement of the pair ratios.  Not a CI gate.
#   usage: tools/gpu/staging-overlap.sh [PROTOCOL]
set -uo pipefail
protocol=${1:-protocols/staging-h200.json}
out=${OUT:-build/gpu-out}
mkdir -p "$out" gpu-work
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
for v in unstaged staged; do
    db=gpu-work/overlap-$v.db
    rm -rf "$db" "$db"-* "$db".torch-cache-run*
    opt=""
    [ "$v" = unstaged ] && opt="--stage-ahead 0"
    build/evident run --protocol "$protocol" --backend cuda --db "$db" $opt > "$out/overlap-$v.log" 2>&1
    echo "$v: rc=$?"; grep -E "^run |^time:" "$out/overlap-$v.log"
    build/evident export --db "$db" --out "$out/overlap-$v.zip" > /dev/null && \
        build/verify-bundle "$out/overlap-$v.zip" > "$out/overlap-$v.verify" 2>&1
    echo "$v: verify rc=$? ($(tail -1 "$out/overlap-$v.verify"))"
done
build/verify-bundle --compare "$out/overlap-unstaged.zip" "$out/overlap-staged.zip" 2>&1 | grep "agreement" | head -8
python3 - "$out/overlap-unstaged.zip" "$out/overlap-staged.zip" <<'PY'
import json, math, sys, zipfile
T = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]
def arms(path):
    v = json.loads(zipfile.ZipFile(path).read("validation.json"))
    out = {}
    for a in v["figures"]["arms"]:
        med = [m for m in a.get("round_medians_us", []) if isinstance(m, (int, float)) and m > 0]
        if len(med) >= 2:
            out[(a["case_index"], a["arm"])] = [math.log(m) for m in med]
    return out
A, B = arms(sys.argv[1]), arms(sys.argv[2])
n = agree = 0
worst = []
for k in sorted(set(A) & set(B)):
    a, b = A[k], B[k]
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1) / len(a)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1) / len(b)
    se = math.sqrt(va + vb)
    den = (va * va / (len(a) - 1) if va else 0) + (vb * vb / (len(b) - 1) if vb else 0)
    dof = max(1, min(10, int((va + vb) ** 2 / den))) if den > 0 else len(a) + len(b) - 2
    ok = abs(mb - ma) <= T[dof - 1] * se
    n += 1
    agree += ok
    worst.append((abs(mb - ma), k, math.exp(ma), math.exp(mb), ok))
print("arm estimates: %d of %d (case, arm) agree within their combined 95%% uncertainty (fraction %.3f)" %
      (agree, n, agree / n if n else 0))
worst.sort(reverse=True)
for d, k, ea, eb, ok in worst[:5]:
    print("  case %d %-14s unstaged %.4g us, staged %.4g us (log diff %.4f, %s)" % (k[0], k[1], ea, eb, d,
          "agree" if ok else "DISAGREE"))
PY
