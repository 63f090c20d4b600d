#!/usr/bin/env python3
"""ci/vocab-once.py: every word of the vocabulary is spelled once in code.

Reads the X-macro lists of src/common/vocab.h (ops, dtypes, roles, phases,
schedules, arm kinds: their names and prefixes) and looks for each word as
a string literal ("reduce_sum", "fault-") in the code under src/ and
kernels/ (C, CUDA and Python; comments and Python docstrings left out).
Every hit is a second spelling of the word, and fails, unless the literal
is another vocabulary's word that happens to be spelled the same; those are
listed in ALLOWED with the reason.  Run by `make lint`.

Exit 0 and one line when clean; 1 and one line per hit otherwise.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = os.path.join("src", "common", "vocab.h")

# (path, word): a literal that is another list's word, not the vocabulary's.
ALLOWED = {
    ("src/runner/record.c", "calibration"): "a worker record's type (the calibration record)",
    ("kernels/peer_torch.py", "calibration"): "a worker record's type (the calibration record)",
    ("src/runner/worker.c", "cub"): "a library's name in the device record's versions",
    ("src/runner/sample_rules.c", "cub"): "a library's name in the device record's versions",
    ("src/sign/attest.c", "policy"): "the in-toto verification summary's policy member",
}


def words():
    """The vocabulary's words: every quoted or bare name field of its lists."""
    text = open(os.path.join(ROOT, VOCAB)).read()
    out = set()
    for m in re.finditer(r"#define (EV_[A-Z_]+)\(X, a\) \\\n((?:[^\n]*\\\n)*[^\n]*\n)", text):
        for row in re.finditer(r"X\(([^)]*)\)", m.group(2)):
            fields = [x.strip() for x in row.group(1).split(",")][1:-1]
            for f in fields:
                if f.startswith('"'):
                    out.add(f[1:-1])
                elif re.fullmatch(r"[a-z][a-z0-9_]*", f):  # an identifier name (ops, dtypes)
                    out.add(f)
    return out


def strip_comments(path, text):
    """text without C comments, or without Python comments and docstrings;
    string literals kept."""
    if path.endswith(".py"):
        text = re.sub(r'"""(?:.|\n)*?"""', '""', text)
        return re.sub(r"(?m)^\s*#.*$|(?<=\s)#[^\n\"']*$", "", text)
    return re.sub(r"/\*(?:.|\n)*?\*/|//[^\n]*", " ", text)


def main():
    ws = words()
    if not ws:
        print("vocab-once: no words read from %s" % VOCAB)
        return 1
    hits = []
    for top in ("src", "kernels"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if not f.endswith((".c", ".h", ".cu", ".cuh", ".py")):
                    continue
                rel = os.path.relpath(os.path.join(d, f), ROOT)
                if rel == VOCAB:
                    continue
                text = strip_comments(rel, open(os.path.join(d, f), errors="replace").read())
                for w in ws:
                    for q in ('"%s"' % w, "'%s'" % w):
                        if q in text and (rel, w) not in ALLOWED:
                            hits.append("%s: %s spells the vocabulary's word %s (use src/common/vocab.h)"
                                        % (rel, q, w))
    for h in sorted(set(hits)):
        print("vocab-once: " + h)
    if hits:
        return 1
    print("vocab-once: ok (%d words, each spelled once: %s)" % (len(ws), VOCAB))
    return 0


if __name__ == "__main__":
    sys.exit(main())
