#!/usr/bin/env bash
# Gate: the whole pipeline on the cpu backend with protocols/quick.json,
# twice; each bundle verifies with its root and against this tree, then
# --compare reports the differences between the two.
#
# Two runs on a shared cpu differ in their timings, and so in two things
# that follow from timings, each already proved honest by the bundle's own
# verification: (1) the two model fits may decide differently, and an auto
# job may then launch another schedule (each auto receipt is its model's
# decision); (2) an attempt may break a sample rule on one run only (the
# host preempted it: the runner records it failed-protocol with the breach,
# which the bundle's check 5 holds to its records, and rescues it).  This
# gate accepts exactly those two kinds of difference, the second only when
# the reason is a sample rule (ci/rule-rescues.py), and fails on any other
# (plans, outcomes, output hashes and values, native receipts).
set -euo pipefail
out=build/ci-pipeline
rm -rf "$out"; mkdir -p "$out"
for i in 1 2; do
    build/evident run --protocol protocols/quick.json --backend cpu --db "$out/run$i.db"
    build/evident export --db "$out/run$i.db" --out "$out/run$i.zip" > "$out/run$i.root"
    build/verify-bundle "$out/run$i.zip" --source-tree . --expect-root "$(cat "$out/run$i.root")"
done
set +e
build/verify-bundle --compare "$out/run1.zip" "$out/run2.zip" > "$out/compare.txt" 2>&1
rc=$?
set -e
cat "$out/compare.txt"
case $rc in
0) echo "pipeline: the two runs agree on every strict receipt" ;;
1)
    other=$(grep -E '^ +FAIL ' "$out/compare.txt" |
        grep -vE 'FAIL compare: validation.json: job policy/[0-9]+/auto/initial: entry/grid receipts \(graph nodes\) differ$' |
        grep -vE 'FAIL compare: validation.json: job [^ ]+: outcome (completed in A, failed-protocol in B|failed-protocol in A, completed in B)$' |
        grep -vE 'FAIL compare: validation.json: job rescue/[^ ]+/retry-1 is in [AB] only$' || true)
    if [ -n "$other" ]; then
        echo "pipeline: the two runs differ beyond auto decisions and sample-rule rescues:"; echo "$other"; exit 1
    fi
    python3 ci/rule-rescues.py "$out/compare.txt" "$out/run1.zip" "$out/run2.zip"
    echo "pipeline: the runs differ only in auto receipts and sample-rule rescues (timings; each bundle verified)" ;;
*) echo "pipeline: verify-bundle --compare could not compare (exit $rc)"; exit 1 ;;
esac
