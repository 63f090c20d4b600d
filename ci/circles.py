#!/usr/bin/env python3
"""No circle of includes or calls in src/.

Includes: every '#include "..."' of src/**/*.[ch] and kernels/*.[ch],
resolved as the compiler does (the including file's directory, then
-Isrc -Isrc/common -Ikernels); a strongly connected component of more
than one file is a circle.

Calls: from the objects of a build (build/obj/src/**/*.o whose source
src/**/*.c exists): nm gives each
object's defined (T, D, B, R) and undefined (U) symbols; A -> B when A
uses a symbol B defines.  A component of more than one file is a circle.

usage: ci/circles.py [BUILD]   (BUILD defaults to build; run after make all)
Prints each circle and exits 1 when there is one; prints a one-line
summary and exits 0 otherwise.
"""
import glob
import os
import re
import subprocess
import sys

INCLUDE_DIRS = ["src", "src/common", "kernels"]


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


def include_graph():
    files = sorted(glob.glob("src/**/*.[ch]", recursive=True) + glob.glob("kernels/*.[ch]"))
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    graph = {}
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
        graph[f] = edges - {f}
    return graph, len(files)


def call_graph(build):
    # only objects of sources that exist: a stale object of a moved or
    # removed file would show a call that is no longer there
    objs = sorted(
        o
        for o in glob.glob(os.path.join(build, "obj/src/**/*.o"), recursive=True)
        if os.path.exists(os.path.relpath(o, os.path.join(build, "obj"))[:-2] + ".c")
    )
    defs, uses = {}, {}
    for o in objs:
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        u = set()
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBR":
                defs[p[2]] = o
            elif len(p) == 2 and p[0] == "U":
                u.add(p[1])
        uses[o] = u
    graph = {o: {defs[s] for s in uses[o] if s in defs and defs[s] != o} for o in objs}
    return graph, len(objs)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    bad = 0
    ig, ni = include_graph()
    for comp in components(ig):
        print("circles: includes: " + " -> ".join(comp))
        bad = 1
    cg, nc = call_graph(build)
    if nc == 0:
        print(f"circles: no objects under {build}/obj/src: run 'make all' first")
        return 1
    for comp in components(cg):
        names = [os.path.relpath(c, os.path.join(build, "obj"))[:-2] + ".c" for c in comp]
        print("circles: calls: " + " -> ".join(names))
        bad = 1
    if not bad:
        print(f"circles: none ({ni} files' includes, {nc} objects' calls)")
    return bad


if __name__ == "__main__":
    sys.exit(main())
