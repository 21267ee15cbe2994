#!/usr/bin/env bash
# test_layers.sh — the layers of src/ (docs/ARCHITECTURE.md §2) hold:
#   - every #include "..." of a file names a header of its own layer or of
#     a layer below it (core < net, nostr < store, relay < sync < uplink,
#     serve < app.c < ui < main.c, ctl.c; of net, store sees only url.h);
#   - sqlite3.h is included only under src/store/;
#   - no header includes itself back, directly or in a circle;
#   - relay/relay.c includes nothing of relay/pool.h, calls no pool_
#     function and never reaches into a pool: the pool owns the relays and
#     is told through the hooks a relay is created with;
#   - no two files of src/ call each other in a circle, also inside one
#     folder (call_circles.py, from the symbols of the built objects: a
#     lower file reaches a higher one only through a hook it is given).
# It reads the source and the objects, runs nothing, and prints each breach.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || exit 77
rc=0
python3 - "$CACHEBOX_SRC/src" <<'PY' || rc=1
import os, re, sys
src = sys.argv[1]
rank = {"core": 1, "net": 2, "nostr": 2, "store": 3, "relay": 3,
        "sync": 4, "uplink": 5, "serve": 5, "app": 6, "ui": 7, "main": 8,
        "ctl": 8}
# Which lower layers each layer may see (besides itself).
allowed = {
    "core": {"core"},
    "net": {"core", "net"},
    "nostr": {"core", "nostr"},
    "store": {"core", "net", "nostr", "store"},
    "relay": {"core", "net", "nostr", "relay"},
    "sync": {"core", "net", "nostr", "store", "relay", "sync"},
    "uplink": {"core", "net", "nostr", "store", "relay", "uplink"},
    "serve": {"core", "net", "nostr", "store", "relay", "sync", "serve"},
    "app": {"core", "net", "nostr", "store", "relay", "sync", "uplink",
            "serve", "app"},
    "ui": {"core", "net", "nostr", "store", "relay", "sync", "uplink",
           "serve", "app", "ui"},
    "main": set(rank), "ctl": set(rank),
}
def layer(rel):
    if "/" in rel:
        return rel.split("/")[0]
    return os.path.splitext(rel)[0]   # app.c, app.h, main.c, ctl.c
files = []
for root, _, names in os.walk(src):
    for n in names:
        if n.endswith((".c", ".h")):
            files.append(os.path.relpath(os.path.join(root, n), src))
inc_re = re.compile(r'^\s*#\s*include\s+([<"])([^">]+)[">]', re.M)
bad = []
deps = {}
for f in sorted(files):
    text = open(os.path.join(src, f)).read()
    me = layer(f)
    deps.setdefault(f, set())
    for kind, h in inc_re.findall(text):
        if kind == "<":
            if h == "sqlite3.h" and me != "store":
                bad.append(f"{f}: includes <sqlite3.h> outside src/store/")
            continue
        if not os.path.exists(os.path.join(src, h)):
            continue
        other = layer(h)
        if me == "store" and other == "net" and h != "net/url.h":
            bad.append(f"{f}: includes {h} (store sees only net/url.h of net)")
        if other not in allowed[me]:
            bad.append(f"{f}: includes {h} ({other} is not below {me})")
        if f.endswith(".h"):
            deps[f].add(h)
    if f == "relay/relay.c":
        if '"relay/pool.h"' in text:
            bad.append("relay/relay.c: includes relay/pool.h")
        body = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
        for call in sorted(set(re.findall(r'\bpool_[a-z0-9_]+\s*\(', body))):
            bad.append(f"relay/relay.c: calls {call.rstrip('( ')}")
        if re.search(r'->pool\b', body):
            bad.append("relay/relay.c: reaches into its pool (->pool)")
# Circles among headers.
state = {}
def visit(m, path):
    state[m] = 1
    for d in sorted(deps.get(m, ())):
        if state.get(d) == 1:
            cyc = path[path.index(d):] + [d] if d in path else [m, d]
            bad.append("circle: " + " -> ".join(cyc))
        elif state.get(d) is None:
            visit(d, path + [d])
    state[m] = 2
for m in sorted(deps):
    if state.get(m) is None:
        visit(m, [m])
for b in bad:
    print("FAIL -", b)
print(f"{len(files)} files read, {sum(len(v) for v in deps.values())} "
      f"dependencies, {len(bad)} breaches")
sys.exit(1 if bad else 0)
PY
objs="$CACHEBOX_BUILD/src/CMakeFiles/cachebox.dir"
if [ ! -d "$objs" ]; then
	echo "FAIL - no objects in $objs (build the library first)"
	exit 1
fi
python3 "$CACHEBOX_SRC/tests/integration/call_circles.py" "$objs" \
    "${CACHEBOX_NM:-nm}" || rc=1
exit $rc
