#!/usr/bin/env bash
# relay_memory.sh — the daemon's memory under hostile relay clients: N
# connections (default 64, the relay's limit), one after another, each send
# 20 REQs of 3 filters x 8 tag letters x 1,000 two-character values (about
# 120 KB a message, under every per-filter cap; relay_attack.py memory) and
# hold them. Prints what the relay answered, the daemon's RSS sampled every
# 200 ms while they do (peak), its VmHWM, and its RSS a second after they
# left. Judges nothing.
#
#   tests/bench/relay_memory.sh [N [BUILD_DIR]]     (default 64, build)
set -euo pipefail
N=${1:-64}
B=$(cd "${2:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/relay-memory.XXXXXX)
DPID=
trap '[ -n "$DPID" ] && kill "$DPID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT

rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }
hwm() { awk '$1 == "VmHWM:" { print $2 }' "/proc/$1/status"; }

"$B/src/cacheboxd" -d "$T/box" --set relays.bootstrap= \
    --set http.listen=127.0.0.1:0 --set relay.listen=127.0.0.1:0 \
    >"$T/d.log" 2>&1 &
DPID=$!
for _ in $(seq 100); do
	[ -s "$T/box/relay.port" ] && [ -s "$T/box/http.port" ] && break
	sleep 0.1
done
P=$(cat "$T/box/relay.port")
H=$(cat "$T/box/http.port")
echo "idle: RSS $(rss "$DPID") kB"
python3 "$SRC/tests/integration/relay_attack.py" "$P" memory "$N" 3 \
    >"$T/mem.json" &
apid=$!
peak=0
while kill -0 "$apid" 2>/dev/null; do
	r=$(rss "$DPID")
	[ "$r" -gt "$peak" ] && peak=$r
	sleep 0.2
done
python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("%s clients: %d REQs answered EOSE, %d CLOSED: %s" % (sys.argv[2],
    r["eose"], r["closed"], "; ".join(r["reasons"])))' "$T/mem.json" "$N"
echo "while held: peak RSS $peak kB, VmHWM $(hwm "$DPID") kB"
sleep 1
echo "after they left: RSS $(rss "$DPID") kB"
curl -s "http://127.0.0.1:$H/api/status" | python3 -c 'import json, sys
r = json.load(sys.stdin)["relay_endpoint"]
print("status: filter_bytes %d, refused_memory %d, clients %d" % (
    r["filter_bytes"], r["refused_memory"], r["clients"]))'
