#!/usr/bin/env bash
# backfill.sh — the author drain at scale: AUTHORS authors with EVENTS
# notes each, over 4 relaysim relays (bootstrap all; each holds a different
# half of every history, one with a silent cap of 300, one advertising
# max_limit 500; kinds 0, 3 and 10002 everywhere). cacheboxd follows the
# dataset's root and drains to idle. Prints the wall time, events/s stored,
# REQs sent, events received / distinct per relay and the peak RSS of
# cacheboxd (VmHWM sampled from /proc, and getrusage of the child).
#
#   tests/bench/backfill.sh [AUTHORS [EVENTS]]        (500, 2000)
#
# Needs a build (CACHEBOX_BUILD, default ./build) and `npm ci` in tests/.
# The dataset is signed once and kept in relaysim's cache
# ($RELAYSIM_CACHE, else $CACHEBOX_BUILD/relaysim-cache); signing runs at
# roughly 1,000 events/s per core, so the first 1M-event run takes a while.
# It prints figures and asserts nothing.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export CACHEBOX_BUILD=${CACHEBOX_BUILD:-$SRC/build}
export CACHEBOXD=${CACHEBOXD:-$CACHEBOX_BUILD/src/cacheboxd}
export CACHEBOXCTL=${CACHEBOXCTL:-$CACHEBOX_BUILD/src/cacheboxctl}
export CACHEBOX_TESTS=$SRC/tests NODE_PATH=$SRC/tests/node_modules
AUTHORS=${1:-500}
EVENTS=${2:-2000}
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/relaysim/relaysim.sh"
trap 'relaysim_stop >/dev/null 2>&1; cleanup' EXIT
# The whole dataset lives in relaysim's memory.
export NODE_OPTIONS="--max-old-space-size=12288"

cat > "$T/sim.json" <<JSON
{"dataset": {"authors": $AUTHORS, "events": $((AUTHORS * EVENTS)), "seed": 1},
 "relays": [
  {"name": "r0", "subset": {"any": [{"kinds": [0, 3, 10002]},
    {"fraction": 0.5, "seed": 1}]}},
  {"name": "r1", "cap": 300, "subset": {"any": [{"kinds": [0, 3, 10002]},
    {"fraction": 0.5, "seed": 2}]}},
  {"name": "r2", "max_limit": 500, "subset": {"any": [{"kinds": [0, 3, 10002]},
    {"fraction": 0.5, "seed": 3}]}},
  {"name": "r3", "subset": {"any": [{"kinds": [0, 3, 10002]},
    {"fraction": 0.5, "seed": 4}]}}
 ]}
JSON
echo "relaysim: $AUTHORS authors x $EVENTS events (signing on first use)..."
t0=$SECONDS
relaysim_start "$T/sim.json" 7200 || exit 1
echo "relaysim ready after $((SECONDS - t0)) s"
BOOT=$(for r in r0 r1 r2 r3; do relaysim_url $r; done | paste -sd,)

python3 - "$CACHEBOXD" "$T/state" "$BOOT" "$(relaysim_q root)" "$RELAYSIM_READY" <<'PY'
import json, resource, subprocess, sys, time, urllib.request, sqlite3
daemon, state, boot, root, ready = sys.argv[1:6]
args = [daemon, "-d", state, "--set", f"relays.bootstrap={boot}",
        "--set", f"follow.roots={root}", "--set", "backfill.pace_ms=0",
        "--set", "http.listen=127.0.0.1:0", "--set", "log.level=warn",
        "--exit-when-idle"]
t0 = time.monotonic()
p = subprocess.Popen(args, stderr=open(state + ".log", "w"))
hwm = 0
while p.poll() is None:
    try:
        for line in open(f"/proc/{p.pid}/status"):
            if line.startswith("VmHWM:"):
                hwm = max(hwm, int(line.split()[1]))
    except OSError:
        pass
    time.sleep(0.2)
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
db = sqlite3.connect(state + "/cachebox.db")
stored = db.execute("SELECT count(*) FROM events").fetchone()[0]
cur = dict(db.execute("SELECT complete OR incomplete_reason IS NOT NULL, "
                      "count(*) FROM cursors GROUP BY 1").fetchall())
relays = json.loads(next(l for l in open(ready) if '"ready"' in l))["relays"]
print(f"exit status          {p.returncode}")
print(f"wall time            {wall:.1f} s")
print(f"events stored        {stored}")
print(f"events/s stored      {stored / wall:.0f}")
print(f"cursors finished     {cur.get(1, 0)} of {cur.get(0, 0) + cur.get(1, 0)}")
print(f"peak RSS (VmHWM)     {hwm / 1024:.1f} MiB  (cacheboxd's own high-water mark)")
print(f"peak RSS (getrusage) {ru.ru_maxrss / 1024:.1f} MiB  (also counts the runner's "
      "forked image before exec)")
print(f"cpu user/sys         {ru.ru_utime:.1f} s / {ru.ru_stime:.1f} s")
reqs = 0
for r in relays:
    s = json.loads(urllib.request.urlopen(r["http"] + "/stats").read())
    reqs += s["reqs"]
    print(f"relay {r['name']}: stored {s['stored']}, REQs {s['reqs']}, sent "
          f"{s['events_sent']}, distinct {s['distinct_events_sent']}, "
          f"received/distinct {s['events_sent'] / max(1, s['distinct_events_sent']):.4f}")
print(f"REQs sent            {reqs}")
PY
