#!/usr/bin/env python3
"""For ci/gate-20-pipeline.sh: of two bundles compared, every job that is
failed-protocol on one side only must have failed a sample rule (its last
attempt's protocol_error starts with "protocol rule: "), and every rescue job
on one side only must retry such a job.  Prints what breaks that and exits 1;
exits 0 when nothing does.

usage: rule-rescues.py COMPARE.txt A.zip B.zip
"""
import json
import re
import sys
import zipfile


def jobs(path):
    v = json.loads(zipfile.ZipFile(path).read("validation.json"))
    return {j["job_key"]: j for j in v["jobs"]}


def main():
    text = open(sys.argv[1]).read()
    side = {"A": jobs(sys.argv[2]), "B": jobs(sys.argv[3])}
    bad = []
    pat = r"job (\S+): outcome (completed|failed-protocol) in A, (completed|failed-protocol) in B$"
    for key, a, _b in re.findall(pat, text, re.M):
        s = "A" if a == "failed-protocol" else "B"
        proc = side[s][key]["attempts"][-1]["process"] or {}
        why = proc.get("protocol_error") or ""
        if not why.startswith("protocol rule: "):
            bad.append("%s is failed-protocol in %s, not by a sample rule: %s" % (key, s, why))
    for key, s in re.findall(r"job (rescue/\S+) is in ([AB]) only$", text, re.M):
        # the job it retries: its retry_of ("retry-1" retries "initial",
        # "round-<r>-retry-1" retries "round-<r>")
        orig = side[s].get(side[s][key].get("retry_of") or "")
        if not orig or orig["outcome"] != "failed-protocol":
            bad.append("%s is in %s only and does not retry a job that failed a sample rule" % (key, s))
    for line in bad:
        print("pipeline: " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
