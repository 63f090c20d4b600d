#!/usr/bin/env python3
"""Sizes a reader can hold: no function in src/ or kernels/ longer than
150 lines, and no file in src/ longer than 1,100.

A function is counted from the first line of its declaration (its return
type) to its closing brace.  The code is clang-formatted (.clang-format:
BreakBeforeBraces Linux), so a function's body opens with a "{" alone at
the start of a line and closes with the first "}" alone at the start of a
line after it; the declaration starts after the last line before the
brace that is blank, a preprocessor line, or ends a comment, a statement
or a block.  Files: src/**/*.[ch] and kernels/*.[ch] (the CUDA sources
are not clang-formatted, and their size is the kernels' own to choose).

usage: ci/fn-size.py [ROOT]   (ROOT defaults to the current directory)
Prints each function and file over its limit, naming it, and exits 1
when there is one; prints a one-line summary and exits 0 otherwise.
"""
import glob
import os
import re
import sys

MAX_FUNCTION = 150
MAX_FILE = 1100
NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")


def functions(lines):
    """(first line, last line, name) of each function in lines (1-based)."""
    out, i = [], 0
    while i < len(lines):
        if lines[i] != "{":
            i += 1
            continue
        start = i
        while start > 0:
            prev = lines[start - 1].rstrip()
            if not prev or prev.startswith("#") or prev.endswith((";", "}", "*/", "{")):
                break
            start -= 1
        end = i + 1
        while end < len(lines) and lines[end] != "}":
            end += 1
        m = NAME.search(" ".join(lines[start:i]))
        out.append((start + 1, end + 1, m.group(1) if m else "?"))
        i = end + 1
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = sorted(
        glob.glob("src/**/*.[ch]", root_dir=root, recursive=True) + glob.glob("kernels/*.[ch]", root_dir=root)
    )
    bad, n_fn = 0, 0
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if f.startswith("src/") and len(lines) > MAX_FILE:
            print(f"fn-size: {f} is {len(lines)} lines (at most {MAX_FILE}): split it along its sections")
            bad = 1
        for first, last, name in functions(lines):
            n_fn += 1
            if last - first + 1 > MAX_FUNCTION:
                print(
                    f"fn-size: {f}:{first}: {name} is {last - first + 1} lines (at most {MAX_FUNCTION}): "
                    "split it into its steps"
                )
                bad = 1
    if not bad:
        print(f"fn-size: ok ({n_fn} functions in {len(files)} files, none over {MAX_FUNCTION} lines; "
              f"no file of src/ over {MAX_FILE})")
    return bad


if __name__ == "__main__":
    sys.exit(main())
