#!/usr/bin/env python3
"""call_circles.py OBJDIR NM: no files of src/ call each other in a circle,
also inside one folder (test_layers.sh runs it). An object file that
leaves a symbol undefined calls (or reads) the file that defines it; the
strongly connected parts of that graph with more than one file are
circles. A call through a hook (a function pointer a file is given) is no
edge: that is how a lower file reaches a higher one. Prints each circle
with one symbol per edge and exits 1 when there is any."""
import os, subprocess, sys

objdir, nm = sys.argv[1], sys.argv[2]
objs = []
for root, _, names in os.walk(objdir):
    for n in names:
        if n.endswith(".o"):
            objs.append(os.path.join(root, n))
defined, needs = {}, {}
for o in sorted(objs):
    f = os.path.relpath(o, objdir)[:-2]          # core/buf.c
    out = subprocess.run([nm, "-P", o], capture_output=True, text=True,
                         check=True).stdout
    needs[f] = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        sym, kind = parts[0], parts[1]
        if kind == "U":
            needs[f].add(sym)
        elif kind in "TDBRGSCVW":     # global: what another file links to
            defined.setdefault(sym, f)
edges = {f: sorted({defined[s] for s in ss if s in defined and defined[s] != f})
         for f, ss in needs.items()}
why = {}
for f, ss in needs.items():
    for s in sorted(ss):
        g = defined.get(s)
        if g and g != f:
            why.setdefault((f, g), s)
# Tarjan's strongly connected components, iterative.
index, low, onstack, stack, comps, n = {}, {}, set(), [], [], [0]
def strong(v0):
    work = [(v0, 0)]
    index[v0] = low[v0] = n[0]; n[0] += 1
    stack.append(v0); onstack.add(v0)
    while work:
        v, i = work[-1]
        if i < len(edges[v]):
            work[-1] = (v, i + 1)
            w = edges[v][i]
            if w not in index:
                index[w] = low[w] = n[0]; n[0] += 1
                stack.append(w); onstack.add(w)
                work.append((w, 0))
            elif w in onstack:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); onstack.discard(w); comp.append(w)
                if w == v:
                    break
            comps.append(sorted(comp))
for v in sorted(edges):
    if v not in index:
        strong(v)
circles = [c for c in comps if len(c) > 1]
for c in sorted(circles):
    print("FAIL - call circle: " + ", ".join(c))
    for a in c:
        for b in c:
            if (a, b) in why:
                print(f"    {a} -> {b} ({why[(a, b)]})")
print(f"{len(needs)} object files read, "
      f"{sum(len(v) for v in edges.values())} calls between files, "
      f"{len(circles)} circles")
sys.exit(1 if circles else 0)
