#!/usr/bin/env bash
# uplink.sh — forwarding rate of the uplink: events/s from the local inbox
# into PostgreSQL 15 on loopback (durable server defaults: fsync on,
# synchronous_commit on), and into the third-party npm relay
# (@nostr-relay/core on SQLite, tests/integration/npm_relay.mjs).
#
#   tests/bench/uplink.sh [PG_EVENTS [RELAY_EVENTS]]     (50000, 10000)
#
# Needs a build (CACHEBOX_BUILD, default ./build), the PostgreSQL server
# package and `npm ci` in tests/. The events are signed and ingested first
# (not timed); the clock runs in cacheboxd's own log, from the uplink's
# session being open to --exit-when-idle seeing an empty inbox. It prints
# figures and asserts nothing.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export CACHEBOX_BUILD=${CACHEBOX_BUILD:-$SRC/build}
export CACHEBOXD=${CACHEBOXD:-$CACHEBOX_BUILD/src/cacheboxd}
export CACHEBOXCTL=${CACHEBOXCTL:-$CACHEBOX_BUILD/src/cacheboxctl}
export CACHEBOX_TESTS=$SRC/tests NODE_PATH=$SRC/tests/node_modules
PG_N=${1:-50000}
RELAY_N=${2:-10000}
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/integration/pg.sh"
trap 'pg_cleanup; cleanup' EXIT
FILL=$CACHEBOX_BUILD/tests/integration/prog_uplink
BASE=(--set relays.bootstrap= --set follow.roots= --set http.listen=127.0.0.1:0
	--exit-when-idle)

# rate LOG START_PATTERN N: events/s between the first START_PATTERN line
# and the idle line of a cacheboxd log.
rate() {
	python3 - "$1" "$2" "$3" <<'PY'
import re, sys
from datetime import datetime
start = end = None
for line in open(sys.argv[1]):
    m = re.match(r'(\S+Z) ', line)
    if not m:
        continue
    t = datetime.strptime(m.group(1), '%Y-%m-%dT%H:%M:%S.%fZ')
    if start is None and re.search(sys.argv[2], line):
        start = t
    if 'idle: no work left' in line:
        end = t
n = int(sys.argv[3])
dt = (end - start).total_seconds()
print(f"{n} events in {dt:.3f} s = {n / dt:,.0f} events/s")
PY
}

fill() { mkdir -p -m 700 "$1"; "$FILL" fill "$1" "$2" 5000 0 "$3" >/dev/null; }
# run_daemon LOG ARGS...: run cacheboxd to idle; its CPU seconds (user+sys)
# go to LOG.cpu.
run_daemon() {
	local log=$1 TIMEFORMAT='%U %S'; shift
	{ time "$CACHEBOXD" "$@" >"$log" 2>&1; } 2>"$log.time"
	awk '{ print $1 + $2 }' "$log.time" >"$log.cpu"
}
# cpu LOG N: cacheboxd's own CPU per event.
cpu() { awk -v n="$2" '{ printf "  cacheboxd CPU: %.1f s, %.0f us/event\n", $1, $1 * 1e6 / n }' "$1.cpu"; }

echo "machine: $(nproc) cores, $(uname -m), load average $(cut -d' ' -f1-3 /proc/loadavg); $("$CACHEBOXD" --version)"
if pg_available && pg_init; then
	fill "$T/pg" "$PG_N" 21
	run_daemon "$T/pg.log" -d "$T/pg" "${BASE[@]}" --set "uplink.url=$PG_URL" \
		--set uplink.pg.create_schema=true
	got=$(pg_sql "SELECT count(*) FROM caching_event_inbox")
	printf 'postgres (loopback, fsync on):  '
	rate "$T/pg.log" 'caching_event_inbox schema applied' "$got"
	cpu "$T/pg.log" "$got"
else
	echo "postgres: server binaries not available, skipped"
fi

if [ -e "$SRC/tests/node_modules/better-sqlite3/build/Release/better_sqlite3.node" ]; then
	node "$SRC/tests/integration/npm_relay.mjs" "$T/relay.db" >"$T/npm.ready" 2>/dev/null &
	PIDS+=("$!")
	wait_for 30 grep -q '"ready"' "$T/npm.ready"
	url=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$T/npm.ready")
	fill "$T/ws" "$RELAY_N" 22
	run_daemon "$T/ws.log" -d "$T/ws" "${BASE[@]}" --set "uplink.url=$url"
	printf 'npm relay (@nostr-relay/core): '
	rate "$T/ws.log" "relay $url: .* -> open" "$RELAY_N"
	cpu "$T/ws.log" "$RELAY_N"
else
	echo "npm relay: run npm ci in tests/ first; skipped"
fi
