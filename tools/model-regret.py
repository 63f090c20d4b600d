#!/usr/bin/env python3
"""tools/model-regret.py [--evident PATH] BUNDLE.zip...: what the model's
choice costs, and what it would cost under another decision threshold.

For each bundle, the observations its model.json was fitted on (every
case's observed medians of the declared schedules, with its role) are
refitted by `evident fit --observations - --schedules ...` at thresholds
0.05 (the model's), 0.02 and 0; the refit at the bundle's own threshold
must give the bundle's coefficients and choices (else exit 1: the table
is not the run's).  A case's regret is observed chosen / the fastest
observed program of the declared schedules; calibration cases are
judged on their leave-one-geometry-out choice (logo_selected: a fit that
never saw the case), holdouts on the full fit's.  Printed per threshold:
geometric mean, maximum and count over the calibration cases, the
holdouts and both (docs/perf-notes.md, "The model's choice")."""
import csv
import io
import json
import math
import subprocess
import sys
import zipfile

THRESHOLDS = ("0.05", "0.02", "0")
FIXED_ROWS = {"rows1": 1, "rows2": 2, "rows4": 4}


def gm(x):
    return math.exp(sum(map(math.log, x)) / len(x))


def table(m, scheds):
    """The CSV evident fit reads, from model.json's cases (a fixed-rows
    schedule whose rows equal the case's B is the default itself: left out,
    as the run leaves it)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["op", "rows", "cols", "dtype", "default_rows", "schedule", "median_us", "role"])
    for d in m["decisions"]:
        for s in scheds:
            v = d["observed"].get(s)
            if v is None or FIXED_ROWS.get(s) == d["default_rows"]:
                continue
            w.writerow([d["op"], d["rows"], d["cols"], d["dtype"], d["default_rows"], s, repr(float(v)), d["role"]])
    return out.getvalue()


def refit(evident, m, scheds, thr):
    r = subprocess.run([evident, "fit", "--observations", "-", "--sms", str(m["sms"]), "--schedules",
                        ",".join(scheds), "--threshold", thr], input=table(m, scheds), capture_output=True,
                       text=True)
    if r.returncode:
        raise RuntimeError(f"evident fit exit {r.returncode}: {r.stderr.strip().splitlines()[-1:]}")
    return json.loads(r.stdout)


def regrets(fit, scheds):
    cal, hold = [], []
    for d in fit["decisions"]:
        ob = {s: v for s, v in d["observed"].items() if v is not None and s in scheds}
        if d["role"] == "calibration":
            cal.append(ob[d["logo_selected"]] / min(ob.values()))
        else:
            hold.append(ob[d["selected"]] / min(ob.values()))
    return cal, hold


def one(evident, path):
    m = json.loads(zipfile.ZipFile(path).read("model.json"))
    scheds = m.get("model_schedules", ["default", "rows1", "rows2"])
    print(f"{path}: {len(m['decisions'])} cases, schedules {','.join(scheds)}, threshold {m['threshold']}")
    wanted = {float(t): t for t in (repr(m["threshold"]),) + THRESHOLDS}  # one refit a threshold
    fits = {v: refit(evident, m, scheds, t) for v, t in wanted.items()}
    own = fits[float(m["threshold"])]
    if own["coefficients"] != m["coefficients"] or [d["selected"] for d in own["decisions"]] != [
            d["selected"] for d in m["decisions"]]:
        print("  the refit of its own observations differs from the bundle's model: not this run's table")
        return 1
    for thr in THRESHOLDS:
        cal, hold = regrets(fits[float(thr)], scheds)
        line = f"  threshold {thr}:"
        for name, x in (("calibration (LOGO)", cal), ("holdout", hold), ("all", cal + hold)):
            if x:
                line += f"  {name} {gm(x):.4f} max {max(x):.3f} (n {len(x)})"
        print(line)
    return 0


def main(argv):
    evident = "build/evident"
    if argv[:1] == ["--evident"] and len(argv) > 1:
        evident, argv = argv[1], argv[2:]
    if not argv or argv[0].startswith("-"):
        print("usage: tools/model-regret.py [--evident PATH] BUNDLE.zip...", file=sys.stderr)
        return 2
    bad = 0
    for path in argv:
        try:
            bad |= one(evident, path)
        except (OSError, KeyError, zipfile.BadZipFile, ValueError, RuntimeError) as e:
            print(f"{path}: {e}: give bundles that evident export wrote, and build/evident (make)",
                  file=sys.stderr)
            return 2
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
