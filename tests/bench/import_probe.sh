#!/usr/bin/env bash
# import_probe.sh — how long the daemon takes to answer while it imports:
# a JSONL file of N signed events (made once by prog_relayd gen and an
# offline export, kept in $WORK) is imported through cacheboxctl into a
# fresh box while GET /api/status is asked every 20 ms; prints the probe's
# latency percentiles during the import and idle before it, the import's
# rate, the WAL's largest size seen (sampled every 100 ms), the bytes the
# daemon wrote per stored event (status "writes"), the daemon's
# own count of long loop turns (status "loop", when it has one) and the
# load average at the end. Asserts nothing.
#
#   tests/bench/import_probe.sh [N [DAEMON]]    (100000, build/src/cacheboxd)
#
# WORK (default /tmp/cachebox-import-probe) keeps the generated file
# between runs; a 1,000,000-line file takes a while to sign the first time.
# PROBE_LOG=FILE keeps the daemon's log.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
N=${1:-100000}
DAEMON=${2:-$SRC/build/src/cacheboxd}
CTL=$(dirname "$DAEMON")/cacheboxctl
GEN=$(dirname "$(dirname "$DAEMON")")/tests/integration/prog_relayd
WORK=${WORK:-/tmp/cachebox-import-probe}
mkdir -p -m 700 "$WORK"
FILE=$WORK/events-$N.jsonl
if [ ! -s "$FILE" ]; then
	rm -rf "$WORK/gen" && mkdir -m 700 "$WORK/gen"
	"$GEN" gen "$WORK/gen" "$N" 5 $((N / 1000 + 1)) >/dev/null
	"$CTL" -d "$WORK/gen" export "$FILE.tmp" 2>/dev/null
	mv "$FILE.tmp" "$FILE"
fi
D=$(mktemp -d /tmp/cachebox-probe.XXXXXX)
chmod 700 "$D"
trap 'kill $DPID 2>/dev/null || true; wait 2>/dev/null || true
    [ -z "${PROBE_LOG:-}" ] || cp "$D/log" "$PROBE_LOG"; rm -rf "$D"' EXIT
"$DAEMON" -d "$D" --set relays.bootstrap= --set http.listen=127.0.0.1:0 \
    >"$D/log" 2>&1 &
DPID=$!
for _ in $(seq 100); do [ -s "$D/http.port" ] && break; sleep 0.1; done
URL="http://127.0.0.1:$(cat "$D/http.port")/api/status"
probe() {	# probe OUT: until $D/stop exists
	while [ ! -e "$D/stop" ]; do
		curl -s -o /dev/null --max-time 30 -w '%{time_total}\n' "$URL" || echo 30
		sleep 0.02
	done >"$1"
}
: >"$D/idle"; (sleep 3; touch "$D/stop") & probe "$D/idle"; rm -f "$D/stop"
probe "$D/busy" &
P=$!
walpeak() {	# walpeak OUT: the largest size of the WAL until $D/stop exists
	local m=0 s
	while [ ! -e "$D/stop" ]; do
		s=$(stat -c %s "$D/cachebox.db-wal" 2>/dev/null || echo 0)
		[ "$s" -gt "$m" ] && m=$s
		sleep 0.1
	done
	echo "$m" >"$1"
}
walpeak "$D/walpeak" &
W=$!
t0=$(date +%s.%N)
"$CTL" -d "$D" import "$FILE" >"$D/import.out"
t1=$(date +%s.%N)
touch "$D/stop"; wait "$P" "$W"
"$CTL" -d "$D" --json status >"$D/status.json" 2>/dev/null || true
python3 - "$D/idle" "$D/busy" "$N" "$t0" "$t1" "$D/import.out" \
    "$D/walpeak" "$D/status.json" <<'PY'
import sys
def pct(f):
    t = sorted(float(l) * 1000 for l in open(f) if l.strip())
    p = lambda q: t[min(len(t) - 1, int(q * len(t)))]
    return f"{len(t)} probes, p50 {p(0.5):.1f} ms, p99 {p(0.99):.1f} ms, max {t[-1]:.1f} ms"
n, t0, t1 = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
print(f"idle:   {pct(sys.argv[1])}")
print(f"import: {pct(sys.argv[2])}")
print(f"import of {n} lines: {t1 - t0:.1f} s, {n / (t1 - t0):.0f} lines/s; "
      + ", ".join(l.strip() for l in open(sys.argv[6]) if l.strip()))
print(f"WAL peak: {int(open(sys.argv[7]).read()) / 1e6:.1f} MB")
import json
try:
    st = json.load(open(sys.argv[8]))
except ValueError:
    st = {}
print("written:", st.get("writes", {}).get("bytes_per_stored_event"),
      "bytes per stored event")
print("loop:", json.dumps(st.get("loop", "(no turn counts in this daemon's status)")))
PY
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
