# lib.sh — shared helpers for the integration scripts (sourced, not run).
# Every script gets a private temporary directory, removed on exit, and
# stops any daemon it started.
set -euo pipefail

: "${CACHEBOXD:?run through ctest, which sets CACHEBOXD}"
: "${CACHEBOXCTL:?run through ctest, which sets CACHEBOXCTL}"
EMU=${CACHEBOX_EMULATOR:-}
T=$(mktemp -d /tmp/cachebox-it.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]:-}"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

# use_relaysim: skip (77) without node, its ws package or python3; load
# relaysim's helpers and stop relaysim on exit as well as cleaning up.
use_relaysim() {
	command -v node >/dev/null && [ -d "$CACHEBOX_TESTS/node_modules/ws" ] || exit 77
	command -v python3 >/dev/null || exit 77
	. "$CACHEBOX_TESTS/relaysim/relaysim.sh"
	trap 'relaysim_cleanup; cleanup' EXIT
}
# relaysim_cleanup: stop relaysim and remove the directory of its ready
# line (relaysim_start makes it outside $T); never fails.
relaysim_cleanup() {
	relaysim_stop >/dev/null 2>&1 || true
	rm -rf "$(dirname "${RELAYSIM_READY:-/nonexistent/x}")"
}

fails=0
passes=0
ok()   { passes=$((passes + 1)); echo "ok - $*"; }
fail() { fails=$((fails + 1)); echo "FAIL - $*"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() { local d=$1; shift; if "$@"; then ok "$d"; else fail "$d"; fi; }
finish() {
	echo "$passes passed, $fails failed"
	[ "$fails" -eq 0 ]
}

cboxd()   { $EMU "$CACHEBOXD" "$@"; }
cboxctl() { $EMU "$CACHEBOXCTL" "$@"; }

# Start cacheboxd in the background; its pid lands in DPID, its log in $T/d.log.
start_daemon() {
	$EMU "$CACHEBOXD" "$@" >>"$T/d.log" 2>&1 &
	DPID=$!
	PIDS+=("$DPID")
}

# wait_for SECONDS COMMAND...: retry until the command succeeds.
wait_for() {
	local end=$((SECONDS + $1)); shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# json_get FILE PATH: print one value of a JSON document (PATH like a.b.0.c).
json_get() {
	python3 - "$1" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for part in sys.argv[2].split('.'):
    v = v[int(part)] if isinstance(v, list) else v[part]
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)
PY
}
