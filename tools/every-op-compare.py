#!/usr/bin/env python3
"""tools/every-op-compare.py BEFORE.db AFTER.db [...]: what the plants and
checks cost honest arms (docs/defenses.md, "Every op earns its time").

Each argument is a store of one run of the same protocol; the first half
were made by the build before the plants, the second half by the build
with them (pass them in that order: before..., after...).  For every
(case, arm) measured in both, the median of the completed main-phase
jobs' hot per-op times (us) of each build, pooled over that build's
stores, and their ratio after / before; then, per arm, the geometric mean
of the ratios and its range.  Reference arms (the floor) are one row each.
Reads the stores with sqlite3 only (no evident code): a check of evident
that does not stand on it."""
import math
import sqlite3
import statistics
import sys


def per_op(db):
    """{(case, arm): [us per op of every hot sample of each completed
    main-phase job's last attempt]}."""
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    q = """SELECT j.case_index, j.arm, s.elapsed_ms, s.replays, s.ops_per_graph
           FROM samples s JOIN attempts a ON a.attempt_id = s.attempt_id
           JOIN jobs j ON j.job_id = a.job_id
           JOIN processes p ON p.attempt_id = a.attempt_id
           WHERE s.timing = 'hot' AND j.phase = 'main' AND p.exit_code = 0 AND p.records_ok = 1
             AND p.skipped = 0
             AND NOT EXISTS (SELECT 1 FROM validations v WHERE v.attempt_id = a.attempt_id AND v.passed = 0)
             AND a.attempt = (SELECT MAX(attempt) FROM attempts WHERE job_id = j.job_id)"""
    out = {}
    for ci, arm, ms, reps, ops in c.execute(q):
        out.setdefault((ci if ci is not None else -1, arm), []).append(ms * 1000.0 / (reps * ops))
    return out


def pooled(dbs):
    acc = {}
    for d in dbs:
        for k, v in per_op(d).items():
            acc.setdefault(k, []).extend(v)
    return {k: statistics.median(v) for k, v in acc.items() if v}


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    half = len(argv) // 2
    before, after = pooled(argv[:half]), pooled(argv[half:])
    keys = sorted(set(before) & set(after), key=lambda k: (k[1], k[0]))
    by_arm = {}
    print("%-6s %-14s %12s %12s %8s" % ("case", "arm", "before us", "after us", "ratio"))
    for k in keys:
        r = after[k] / before[k]
        by_arm.setdefault(k[1], []).append(r)
        print("%-6s %-14s %12.4f %12.4f %8.3f" % ("-" if k[0] < 0 else k[0], k[1], before[k], after[k], r))
    print()
    print("%-14s %6s %10s %8s %8s" % ("arm", "cases", "geo mean", "min", "max"))
    for arm, rs in sorted(by_arm.items()):
        g = math.exp(sum(math.log(x) for x in rs) / len(rs))
        print("%-14s %6d %10.3f %8.3f %8.3f" % (arm, len(rs), g, min(rs), max(rs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
