#!/usr/bin/env python3
"""tests/slowed/designs.py [RUNS] [OLD]: the slowed gate's designs, run in turns.

Each design is tests/slowed/protocol.json with one of its choices undone,
or the design of commit OLD (default ef510cf: its tests/slowed/protocol.json
and work.c).  Every design runs RUNS times (default 10) in turns (1, 2, ...,
1, 2, ...), so that the host's load, which changes by the minute on a
shared machine, falls on all of them alike, and at the priority
ci/gate-25-slowed.sh takes (real-time where the shell may, else niceness
-10 where it may), but gate-shell-priority: the gate's design at the
shell's own.  Per design it prints the calls of `evident results`, the
mean wall time of a run, the failed attempts, and the spread of the
per-round ratios (each round's ext-slow median over its ext-base median,
from the store's raw samples): the standard deviation of their logs
pooled over the runs, and the largest distance of one from their median.
A design whose rounds spread less is called more often at k = 5
(docs/intervals.md, "What a real difference looks like").  Writes under
build/slowed-designs/.  Run from the repository root after make.
"""
import json
import math
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

OUT = "build/slowed-designs"


def write_design(name, proto, work_c):
    """Writes protocol proto and kernel source work_c under OUT/name; returns the protocol's path."""
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "work.c"), "w") as f:
        f.write(work_c)
    path = os.path.join(d, "protocol.json")
    with open(path, "w") as f:
        json.dump(proto, f, indent=2)
    return path


def gate_priority():
    """The command prefix ci/gate-25-slowed.sh runs evident under here: real-time priority where
    the shell may, else niceness -10 where it may, else none."""
    if subprocess.run(["chrt", "-f", "10", "true"], stderr=subprocess.DEVNULL).returncode == 0:
        return ["chrt", "-f", "10"]
    r = subprocess.run(["nice", "-n", "-10", "nice"], capture_output=True, text=True)
    return ["nice", "-n", "-10"] if r.stdout.strip() == "-10" else []


def designs(old):
    """(name, protocol path, command prefix) of every design."""
    final = json.load(open("tests/slowed/protocol.json"))
    work = open("tests/slowed/work.c").read()
    old_proto = json.loads(subprocess.run(["git", "show", f"{old}:tests/slowed/protocol.json"],
                                          check=True, capture_output=True, text=True).stdout)
    old_work = subprocess.run(["git", "show", f"{old}:tests/slowed/work.c"], check=True,
                              capture_output=True, text=True).stdout
    unpinned = dict(final)
    unpinned.pop("cpu_set", None)
    short = dict(final, ops_per_graph=20, samples=101)
    old_kernels = json.loads(json.dumps(final))
    old_kernels["cases"][0]["rows"] = old_proto["cases"][0]["rows"]
    for k, o in zip(old_kernels["kernels"], old_proto["kernels"]):
        k["entries"] = o["entries"]
    prio = gate_priority()
    return [
        ("gate", write_design("gate", final, work), prio),
        ("gate-shell-priority", write_design("gate", final, work), []),
        ("unpinned", write_design("unpinned", unpinned, work), prio),
        ("short-samples", write_design("short-samples", short, work), prio),
        (f"{old}-kernels", write_design("old-kernels", old_kernels, old_work), prio),
        (f"{old}", write_design("old", old_proto, old_work), prio),
    ]


def round_logs(db):
    """log(ext-slow / ext-base) of each round whose two jobs completed, from the hot samples'
    medians; and the number of failed attempts."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    med = {}
    for arm, label, aid in con.execute(
            "SELECT j.arm, j.label, a.attempt_id FROM jobs j JOIN attempts a ON a.job_id = j.job_id "
            "JOIN attempt_outcomes o ON o.attempt_id = a.attempt_id "
            "WHERE j.arm LIKE 'ext-%' AND o.outcome = 'completed'"):
        x = [r[0] for r in con.execute(
            "SELECT per_op_us FROM sample_times WHERE attempt_id = ? AND timing = 'hot'", (aid,))]
        if x:
            med[(label, arm)] = statistics.median(x)
    failed = con.execute("SELECT count(*) FROM failures").fetchone()[0]
    con.close()
    logs = [math.log(med[(lb, "ext-slow")] / med[(lb, "ext-base")])
            for lb in sorted({lb for lb, _ in med})
            if (lb, "ext-slow") in med and (lb, "ext-base") in med]
    return logs, failed


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    old = sys.argv[2] if len(sys.argv) > 2 else "ef510cf"
    shutil.rmtree(OUT, ignore_errors=True)
    ds = designs(old)
    got = {name: {"calls": {}, "logs": [], "failed": 0, "secs": []} for name, _, _ in ds}
    print("designs: " + ", ".join(name + " (" + (" ".join(prio) or "the shell's priority") + ")" for name, _, prio in ds))
    for i in range(runs):
        for name, proto, prio in ds:
            db, zp = f"{OUT}/{name}-{i}.db", f"{OUT}/{name}-{i}.zip"
            cmd = ["build/evident", "run", "--protocol", proto, "--backend", "cpu", "--db", db]
            t0 = time.time()
            subprocess.run(prio + cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            g = got[name]
            g["secs"].append(time.time() - t0)
            subprocess.run(["build/evident", "export", "--db", db, "--out", zp],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            r = subprocess.run(["build/evident", "results", zp, "--json"], capture_output=True, text=True)
            try:
                pair = [p for p in json.loads(r.stdout)["pairs"]
                        if p["arm"] == "ext-slow" and p["against"] == "ext-base"][0]
                call = pair["call"]
            except (ValueError, KeyError, IndexError):
                call = "no results"
            g["calls"][call] = g["calls"].get(call, 0) + 1
            logs, failed = round_logs(db)
            g["logs"] += logs
            g["failed"] += failed
            load = open("/proc/loadavg").read().split()[0]
            print(f"run {i + 1} {name}: {call}; rounds "
                  + " ".join("%.3f" % math.exp(x) for x in logs) + f" (load average {load})", flush=True)
    for name, _, prio in ds:
        g = got[name]
        logs = g["logs"]
        mid = statistics.median(logs)
        how = " ".join(prio) or "the shell's priority"
        print(f"{name} ({how}): calls {g['calls']}; "
              f"{len(logs)} rounds, ratio {math.exp(statistics.mean(logs)):.3f}, "
              f"sd of log {statistics.stdev(logs):.3f}, largest distance {max(abs(x - mid) for x in logs):.3f}; "
              f"failed attempts {g['failed']}; {statistics.mean(g['secs']):.1f} s a run")


if __name__ == "__main__":
    main()
