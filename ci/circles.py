#!/usr/bin/env python3
"""No circle of includes or calls between files, and folders that stack.

Files: src/**/*.[ch] and kernels/*.[ch], and the CUDA sources (the .cu
files of src/ and kernels/, and the .cuh files of kernels/).

Includes: every '#include "..."' of those files, resolved as the compiler
does (the including file's directory, then -Isrc -Isrc/common -Ikernels:
the Makefile's EV_CPPFLAGS, which nvcc is given too).

Calls: from the objects of a build (BUILD/obj/src/**/*.o and
BUILD/obj/kernels/*.o whose .c source exists, BUILD/cuda/**/*.o whose .cu
source exists): nm gives each object's defined (T, D, B, R, W) and
undefined (U) symbols; A -> B when A uses a symbol B defines.

A strongly connected component of more than one file, of includes or of
calls, is a circle.  The folders stack in the order of FOLDERS, the lowest
first: a file may include or call files of its own folder and of the
folders below it, never of one above (an arrow back up); a folder that is
not in the order is refused, so a new one must be given its place.

usage: ci/circles.py [BUILD]   (BUILD defaults to build; run after make all)
Prints each circle and each arrow back up (the folders, and every file
pair that makes it) and exits 1 when there is one; prints a one-line
summary and exits 0 otherwise.
"""
import glob
import os
import re
import subprocess
import sys

INCLUDE_DIRS = ["src", "src/common", "kernels"]

# The folders, lowest first (README.md, "Source layout", says what each
# holds): each stands only on those before it.
FOLDERS = [
    "src/common",
    "src/store",
    "kernels",
    "src/model",
    "src/runner",
    "src/evidence",
    "src/bundle",
    "src/sign",
    "src/verify",
    "src/cli",
]


def components(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(100000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def folder(path):
    """The folder a source file belongs to: src/<name> or kernels."""
    parts = path.split("/")
    return "src/" + parts[1] if parts[0] == "src" and len(parts) > 2 else parts[0]


def sources():
    """Every source file the checks read, sorted."""
    files = glob.glob("src/**/*.[ch]", recursive=True) + glob.glob("src/**/*.cu", recursive=True)
    files += glob.glob("kernels/*.[ch]") + glob.glob("kernels/*.cu") + glob.glob("kernels/*.cuh")
    return sorted(files)


def include_graph(files):
    """The include graph, and a line for each project header a file
    includes that only another folder's -I path would find (an arrow the
    folder order cannot see)."""
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    names = {}
    for f in files:
        names.setdefault(os.path.basename(f), []).append(f)
    graph, hidden = {}, []
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        edges = set()
        for name in inc.findall(text):
            for d in [os.path.dirname(f)] + INCLUDE_DIRS:
                p = os.path.normpath(os.path.join(d, name))
                if os.path.exists(p):
                    edges.add(p)
                    break
            else:
                elsewhere = [g for g in names.get(os.path.basename(name), []) if g.endswith("/" + name)]
                if elsewhere:
                    hidden.append(
                        f"circles: includes: {f} includes \"{name}\" ({', '.join(elsewhere)}), which only an "
                        "include path of another folder finds: name its folder"
                    )
        graph[f] = edges - {f}
    return graph, hidden


def objects(build):
    """(object, its source) of the build, for sources that exist: a stale
    object of a moved or removed file would show a call that is no longer
    there."""
    out = []
    for o in glob.glob(os.path.join(build, "obj", "**", "*.o"), recursive=True):
        src = os.path.relpath(o, os.path.join(build, "obj"))[:-2] + ".c"
        if src.startswith(("src/", "kernels/")) and os.path.exists(src):
            out.append((o, src))
    for o in glob.glob(os.path.join(build, "cuda", "**", "*.o"), recursive=True):
        src = cuda_source(o)
        if src and os.path.exists(src):
            out.append((o, src))
    return sorted(out)


def cuda_source(obj):
    """The .cu source of a CUDA object: the first prerequisite of the
    dependency file nvcc wrote beside it (-MMD), or None."""
    try:
        with open(obj[:-2] + ".d", encoding="utf-8", errors="replace") as fh:
            text = fh.read().replace("\\\n", " ")
    except OSError:
        return None
    parts = text.split(":", 1)
    words = parts[1].split() if len(parts) == 2 else []
    return os.path.normpath(words[0]) if words else None


def call_graph(build):
    objs = objects(build)
    defs, uses = {}, {}
    for o, src in objs:
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        u = set()
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBRW":
                defs.setdefault(p[2], src)
            elif len(p) == 2 and p[0] == "U":
                u.add(p[1])
        uses[src] = uses.get(src, set()) | u
    graph = {s: {defs[x] for x in uses[s] if x in defs and defs[x] != s} for s in uses}
    return graph, len(objs)


def back_up(graph, kind):
    """Lines naming every arrow back up of graph (and every folder that has
    no place in the order), grouped by the two folders."""
    rank = {f: i for i, f in enumerate(FOLDERS)}
    bad, lost = {}, set()
    for a in sorted(graph):
        for b in sorted(graph[a]):
            fa, fb = folder(a), folder(b)
            for f in (fa, fb):
                if f not in rank:
                    lost.add(f)
            if fa in rank and fb in rank and rank[fb] > rank[fa]:
                bad.setdefault((fa, fb), []).append(f"{a} -> {b}")
    lines = [f"circles: folders: {f} has no place in the order (ci/circles.py, FOLDERS)" for f in sorted(lost)]
    for (fa, fb), pairs in sorted(bad.items()):
        lines.append(f"circles: {kind} back up: {fa} -> {fb}: " + ", ".join(pairs))
    return lines


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    files = sources()
    ig, hidden = include_graph(files)
    cg, nc = call_graph(build)
    if nc == 0:
        print(f"circles: no objects under {build}/obj: run 'make all' first")
        return 1
    lines = list(hidden)
    for comp in components(ig):
        lines.append("circles: includes: " + " -> ".join(comp))
    for comp in components(cg):
        lines.append("circles: calls: " + " -> ".join(comp))
    lines += back_up(ig, "includes")
    lines += back_up(cg, "calls")
    for line in dict.fromkeys(lines):
        print(line)
    if lines:
        return 1
    print(
        f"circles: none, and no arrow back up ({len(files)} files' includes, {nc} objects' calls; "
        f"folders from the lowest: {', '.join(FOLDERS)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
