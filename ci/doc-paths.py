#!/usr/bin/env python3
"""No dangling path in the docs: every repository path that a document
names exists in the tree.

Documents: README.md and every *.md under docs/ and examples/, and the
comment header of every script in ci/ and tools/ (the lines before the
first line of code), where a procedure says which files it runs.  A path
is a word that starts with one of the repository's top folders (src/,
kernels/, db/, mk/, protocols/, receipts/, tests/, ci/, tools/, docs/,
examples/) not preceded by a letter, a slash, a colon or a dot, so that a
bundle's member (sources/kernels/...), an installed path
(PREFIX/share/evident/protocols/...) and a file of an older commit
(`git show abc1234:ci/old.sh`) are not read as paths of this tree.  A `*`
is a glob that must match something; `<host>` and the like stand for a
name that need not exist yet (only the folder it is in must).  A path is taken up to its last letter or digit (a sentence's
full stop is not part of it).

usage: ci/doc-paths.py [ROOT]   (ROOT defaults to the current directory)
Prints each dangling path as FILE:LINE: PATH and exits 1 when there is
one; prints a one-line summary and exits 0 otherwise.
"""
import glob
import os
import re
import sys

TOPS = "src|kernels|db|mk|protocols|receipts|tests|ci|tools|docs|examples"
PATH = re.compile(r"(?<![A-Za-z0-9_/:.~$-])((?:%s)/[A-Za-z0-9_.*<>/+-]*)" % TOPS)


def documents(root):
    """The documents to read, as paths relative to root, sorted."""
    docs = ["README.md"] if os.path.exists(os.path.join(root, "README.md")) else []
    for d in ("docs", "examples"):
        docs += glob.glob(os.path.join(d, "**", "*.md"), root_dir=root, recursive=True)
    for d in ("ci", "tools"):
        for f in glob.glob(os.path.join(d, "**", "*"), root_dir=root, recursive=True):
            if f.endswith((".sh", ".py")):
                docs.append(f)
    return sorted(set(docs))


def lines_of(root, doc):
    """(number, text) of the lines of doc to read: all of a markdown file,
    the comment header of a script."""
    with open(os.path.join(root, doc), encoding="utf-8", errors="replace") as fh:
        text = fh.read().split("\n")
    if doc.endswith(".md"):
        return list(enumerate(text, 1))
    out, in_doc = [], False
    for i, line in enumerate(text, 1):
        s = line.strip()
        if doc.endswith(".py") and (s.startswith('"""') or in_doc):
            out.append((i, line))
            if s.count('"""') == 1:
                in_doc = not in_doc
            continue
        if s.startswith("#") or not s:
            out.append((i, line))
            continue
        break
    return out


def exists(root, path):
    """Whether path (a file, a folder, or a glob) names something in root."""
    if "<" in path:
        path = path[: path.rfind("/", 0, path.index("<")) + 1]
    if "*" in path:
        return bool(glob.glob(path, root_dir=root, recursive=True))
    return os.path.exists(os.path.join(root, path))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad, seen = 0, 0
    for doc in documents(root):
        for n, line in lines_of(root, doc):
            for m in PATH.finditer(line):
                p = re.sub(r"[^A-Za-z0-9*>/]+$", "", m.group(1))
                p = p.rstrip("/") if p.count("/") > 1 else p
                seen += 1
                if not exists(root, p):
                    print(f"doc-paths: {doc}:{n}: {p} does not exist")
                    bad = 1
    if not bad:
        print(f"doc-paths: none dangling ({seen} paths named)")
    return bad


if __name__ == "__main__":
    sys.exit(main())
