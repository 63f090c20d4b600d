#!/usr/bin/env bash
# Gate: a real difference is still called.  tests/slowed/protocol.json
# (two external kernels, ext-slow doing 1.25x the work of ext-base, five
# rounds, the two arms back to back in each round) runs ten times on the
# cpu backend; `evident results --json` gives each run's pair ext-slow /
# ext-base with its call (docs/intervals.md, "Calling a difference").
# Pass: at least 9 of the 10 called a loss, and none called a win or n.s.
# (a noisy run may say inconclusive: honest, but it counts as a miss).
# SLOWED_RUNS=N runs N instead (at least 90% must be losses).
set -euo pipefail
out=build/ci-slowed
n=${SLOWED_RUNS:-10}
rm -rf "$out"; mkdir -p "$out"
for i in $(seq 1 "$n"); do
    build/evident run --protocol tests/slowed/protocol.json --backend cpu --db "$out/r$i.db" > "$out/r$i.log" 2>&1
    build/evident export --db "$out/r$i.db" --out "$out/r$i.zip" > /dev/null
    build/evident results "$out/r$i.zip" --json > "$out/r$i.json"
    cut -d' ' -f1 /proc/loadavg > "$out/r$i.load"
done
python3 - "$out" "$n" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
calls = {}
for i in range(1, n + 1):
    d = json.load(open(f"{out}/r{i}.json"))
    load = open(f"{out}/r{i}.load").read().strip()
    p = [p for p in d["pairs"] if p["arm"] == "ext-slow" and p["against"] == "ext-base"]
    if len(p) != 1:
        sys.exit(f"slowed: run {i}: no pair ext-slow / ext-base in its results")
    p = p[0]
    iv = p["interval"] if isinstance(p["interval"], list) else None
    print(f"slowed: run {i}: ext-slow / ext-base {p['ratio']:.3f} "
          f"{'[%.3f, %.3f]' % tuple(iv) if iv else '(no interval)'} over {p['n_rounds']} rounds: "
          f"{p['call']} (load average {load})")
    calls[p["call"]] = calls.get(p["call"], 0) + 1
wrong = calls.get("win", 0) + calls.get("n.s.", 0)
loss = calls.get("loss", 0)
print(f"slowed: {loss} of {n} called a loss; {calls}")
if wrong:
    sys.exit(f"slowed: {wrong} runs called a 1.25x slow-down a win or n.s.")
if 10 * loss < 9 * n:
    sys.exit(f"slowed: only {loss} of {n} runs called the slow-down (at least 90% must)")
PY
