#!/usr/bin/env python3
"""store-times.py DB: each arm's job count, mean job wall (release to
exit, processes.wall_ns) and the mean of each of its cold timings, from an
evidence store (docs/runner.md, "Where a job's time goes"); then how many
torch-compile jobs were released before their imports were done, and by
how much (docs/runner.md, "Staged processes": the device waits that long).
The peer's spawn time is in its worker's stderr tail (torch_peer.c,
peer_exit); its imports end python-start + import + import-compiler after
it; the release is the attempt's end less its wall."""
import re
import sqlite3
import sys
from collections import defaultdict

c = sqlite3.connect(sys.argv[1])
rows = c.execute("""select j.arm, p.wall_ns, a.attempt_id from jobs j join attempts a using(job_id)
                    join processes p using(attempt_id)""").fetchall()
by = defaultdict(list)
cold = defaultdict(lambda: defaultdict(list))
cold_of = {}  # attempt -> {name: ns}, read once
for arm, wall, aid in rows:
    by[arm].append(wall / 1e9)
    cold_of[aid] = dict(c.execute("select name, elapsed_ns from cold_timings where attempt_id = ?", (aid,)))
    for name, ns in cold_of[aid].items():
        cold[arm][name].append(ns / 1e9)
for arm in sorted(by):
    w = by[arm]
    parts = ", ".join("%s %.3f" % (n, sum(v) / len(v)) for n, v in sorted(cold[arm].items()))
    print("%-14s %3d jobs, mean wall %.3f s (sum %.1f s); cold means: %s" % (arm, len(w), sum(w) / len(w), sum(w),
                                                                         parts))

late = []
for aid, tail, wall, ended in c.execute("""select a.attempt_id, p.stderr_tail, p.wall_ns, p.ended_ns
        from jobs j join attempts a using(job_id) join processes p using(attempt_id)
        where j.arm = 'torch-compile'"""):
    m = re.search(r"started at (\d+) ns", tail or "")
    cold = cold_of.get(aid, {})
    if not m or "import" not in cold or "import-compiler" not in cold:
        continue  # skipped, or stopped before its imports ended
    done = int(m.group(1)) + cold.get("python-start", 0) + cold["import"] + cold["import-compiler"]
    late.append((done - (ended - wall)) / 1e9)
if late:
    after = [x for x in late if x > 0]
    print("torch-compile: %d of %d jobs released before their imports were done, by %.2f s on average "
          "(at most %.2f): %.2f s a torch job, %.1f s in all" %
          (len(after), len(late), sum(after) / len(after) if after else 0.0, max(after) if after else 0.0,
           sum(after) / len(late), sum(after)))
