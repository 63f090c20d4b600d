#!/usr/bin/env python3
"""store-times.py DB: each arm's job count, mean job wall (release to
exit, processes.wall_ns) and the mean of each of its cold timings, from an
evidence store (docs/runner.md, "Where a job's time goes")."""
import sqlite3
import sys
from collections import defaultdict

c = sqlite3.connect(sys.argv[1])
rows = c.execute("""select j.arm, p.wall_ns, a.attempt_id from jobs j join attempts a using(job_id)
                    join processes p using(attempt_id)""").fetchall()
by = defaultdict(list)
cold = defaultdict(lambda: defaultdict(list))
for arm, wall, aid in rows:
    by[arm].append(wall / 1e9)
    for name, ns in c.execute("select name, elapsed_ns from cold_timings where attempt_id = ?", (aid,)):
        cold[arm][name].append(ns / 1e9)
for arm in sorted(by):
    w = by[arm]
    parts = ", ".join("%s %.3f" % (n, sum(v) / len(v)) for n, v in sorted(cold[arm].items()))
    print("%-14s %3d jobs, mean wall %.3f s (sum %.1f s); cold means: %s" % (arm, len(w), sum(w) / len(w), sum(w),
                                                                         parts))
