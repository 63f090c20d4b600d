#!/usr/bin/env bash
# Are the intervals honest?  Runs one protocol twice, fresh each time, and
# asks verify-bundle --compare for each (case, arm pair) whether the two
# runs' ratios agree within their combined 95% uncertainty (the interval of
# log r2 - log r1 holds 0; docs/intervals.md).  An honest 95% method agrees
# about 95% of the time.  With ONE_ROUND=1 it also runs the protocol as one
# round of rounds x samples hot samples (the within-process intervals of
# old) for contrast.  A benchmark script, not a test.
#   usage: tools/interval-agreement.sh [PROTOCOL] [OUTDIR] [REPEATS]
# REPEATS pairs of runs (default 1); prints each pair's agreement line and
# the pooled fraction.
set -uo pipefail
proto=${1:-protocols/intervals-cpu.json}
out=${2:-build/interval-agreement}
reps=${3:-1}
rm -rf "$out"
mkdir -p "$out"
make --no-print-directory all > "$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 2; }
variants=rounds
if [ "${ONE_ROUND:-0}" = 1 ]; then
    variants="rounds one-round"
    python3 - "$proto" "$out/one-round.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
k = p.get("rounds", 1)
p["samples"] = p.get("samples", 7) * k
p["rounds"] = 1
p["name"] = (p.get("name", "") + " x1")[:63]
json.dump(p, open(sys.argv[2], "w"), indent=1)
PY
fi
for v in $variants; do
    pf=$proto
    [ "$v" = one-round ] && pf=$out/one-round.json
    agree=0 total=0
    for ((r = 1; r <= reps; r++)); do
        for i in 1 2; do
            d=$out/$v-$r-$i
            mkdir -p "$d"
            build/evident run --protocol "$pf" --db "$d/evidence.db" > "$d/run.log" 2>&1
            build/evident export --db "$d/evidence.db" --out "$d/delivery.zip" > "$d/root" 2>"$d/export.log" ||
                { echo "$v $r: export failed: $(tail -1 "$d/export.log")"; exit 2; }
        done
        line=$(build/verify-bundle --compare "$out/$v-$r-1/delivery.zip" "$out/$v-$r-2/delivery.zip" 2>&1 |
            grep 'agreement: [0-9]* of' | sed 's/.*agreement: //')
        echo "$v pair $r: $line"
        a=$(echo "$line" | awk '{print $1}')
        t=$(echo "$line" | awk '{print $3}')
        agree=$((agree + ${a:-0}))
        total=$((total + ${t:-0}))
    done
    if [ "$total" -gt 0 ]; then
        echo "$v: $agree of $total pairs agree over $reps pair(s) of runs: fraction $(awk "BEGIN{printf \"%.3f\", $agree/$total}")"
    fi
done
