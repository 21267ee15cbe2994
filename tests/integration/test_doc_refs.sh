#!/usr/bin/env bash
# test_doc_refs.sh — what the tree cites, the tree holds: every *.md file a
# comment, script or document of src/, sql/, tests/, docs/ or README.md names is
# in the clone, and every section of docs/ARCHITECTURE.md cited ("§N",
# "section N", "§§N, M" after the file's name, or "§N" inside the file
# itself) is one of its headings. It reads files only and prints each
# reference that points nowhere.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || exit 77
python3 - "$CACHEBOX_SRC" <<'PY'
import os, re, sys
root = sys.argv[1]
arch = os.path.join(root, "docs", "ARCHITECTURE.md")
heads = set(re.findall(r"^## ([0-9]+[a-z]?)\.", open(arch).read(), re.M))
files = [os.path.join(root, "README.md")]
for top in ("src", "sql", "tests", "docs"):
    for d, dirs, names in os.walk(os.path.join(root, top)):
        dirs[:] = [x for x in dirs if x not in ("node_modules", "www")]
        files += [os.path.join(d, n) for n in names
                  if n.endswith((".c", ".h", ".sh", ".py", ".mjs", ".js",
                                 ".md", ".txt", ".sql"))]
md_re = re.compile(r"\b([A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md)\b")
sec_re = re.compile(r"ARCHITECTURE(?:\.md)?\)?,?\s*(?:§§?|sections?\s+)"
                    r"([0-9]+[a-z]?(?:\s*(?:,|and|–|-)\s*§?[0-9]+[a-z]?)*)")
self_re = re.compile(r"§([0-9]+[a-z]?)")
bad = []
for f in sorted(files):
    rel = os.path.relpath(f, root)
    text = open(f, errors="replace").read()
    for m in md_re.finditer(text):
        name = m.group(1)
        if name.startswith("usr/"):     # a path inside a package
            continue
        where = [os.path.join(root, name), os.path.join(root, "docs", name),
                 os.path.join(os.path.dirname(f), name)]
        if not any(os.path.exists(w) for w in where):
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{rel}:{line}: names {name}, not in the tree")
    for m in re.finditer(r"\bDESIGN\b", text):
        line = text.count("\n", 0, m.start()) + 1
        bad.append(f"{rel}:{line}: cites design notes the tree does not hold")
    cites = [(m.start(), s) for m in sec_re.finditer(text)
             for s in re.findall(r"[0-9]+[a-z]?", m.group(1))]
    if f == arch:
        cites += [(m.start(), m.group(1)) for m in self_re.finditer(text)]
    for at, s in cites:
        if s not in heads:
            line = text.count("\n", 0, at) + 1
            bad.append(f"{rel}:{line}: cites ARCHITECTURE §{s}, no such "
                       "section")
for b in bad:
    print("FAIL -", b)
print(f"{len(files)} files read, {len(heads)} sections, {len(bad)} bad "
      "references")
sys.exit(1 if bad else 0)
PY
