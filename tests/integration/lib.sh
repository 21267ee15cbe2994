# lib.sh — shared helpers for the integration scripts (sourced, not run).
# Every script gets a private temporary directory, removed on exit, and
# stops any daemon it started. Sourcing it turns on `set -euo pipefail`:
# a command whose failure a script tolerates says so (`|| true`, or it is
# tested in `if`, `check` or `wait_for`).
#
#   T                        the script's temporary directory
#   EMU                      CACHEBOX_EMULATOR (qemu-user for a cross build) or empty
#   PIDS                     background pids that cleanup kills; start_daemon adds to it
#   cleanup                  the EXIT trap: kill PIDS, wait, remove $T. A script with
#                            more to undo sets its own trap that ends with cleanup,
#                            every step of it `|| true` (set -e holds in traps too)
#   use_relaysim             skip (77) without node/ws/python3, load relaysim.sh
#   relaysim_cleanup         stop relaysim (for a trap of a script's own)
#   ok / fail / check / finish   "ok - " and "FAIL - " lines, the tally, the exit status
#   cboxd / cboxctl          the daemon and its client, under $EMU
#   start_daemon ARGS...     cacheboxd in the background: DPID, log in $T/d.log
#   stop_daemon              SIGTERM DPID and reap it
#   wait_for SECONDS CMD...  retry CMD until it succeeds
#   json_get FILE PATH       one value of a JSON document
#   st [DIR]                 status document of DIR into $T/st.json (quiet)
#   status [DIR] FIELD       one field of DIR's status document
#   idle [DIR]               DIR's daemon reports idle
#   fill DIR COUNT [...]     signed events into a state directory (prog_uplink)
#   local_ids DIR            the event ids stored in DIR
#   measured_natively        the daemon runs natively, without a sanitizer (its memory means something)
#   pending_is DIR N         DIR's inbox.pending is N
#   error_has DIR PATTERN    DIR's uplink.last_error matches PATTERN
# DIR is a state directory (cacheboxd -d); where it is optional it is $D,
# the script's own.
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
	# CACHEBOX_KEEP=1 keeps the state and logs to look at after a run.
	if [ -n "${CACHEBOX_KEEP:-}" ]; then echo "kept: $T"; else rm -rf "$T"; fi
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
# stop_daemon: SIGTERM the daemon start_daemon started last and reap it; its
# exit status is not looked at. Fails (so under set -e ends the script) when
# DPID is already gone.
stop_daemon() { kill "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null || true; }

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

# st [DIR]: write the status document of DIR (default $D) to $T/st.json.
# Quiet, and fails while the daemon does not answer: made for wait_for.
st() { cboxctl -d "${1:-$D}" status --json >"$T/st.json" 2>/dev/null; }

# status [DIR] FIELD: print one field (a json_get PATH such as
# inbox.pending) of the status of DIR (default $D). The whole document is
# left in $T/st.json; cacheboxctl's complaints go to stderr.
status() {
	local dir
	if [ $# -ge 2 ]; then dir=$1; shift; else dir=$D; fi
	cboxctl -d "$dir" status --json >"$T/st.json" && json_get "$T/st.json" "$1"
}

# idle [DIR]: the daemon of DIR (default $D) reports idle; $T/st.json is
# left holding the document it said so in.
idle() { st "$@" && [ "$(json_get "$T/st.json" idle)" = true ]; }

# fill DIR COUNT [BATCH [SLEEP_MS [SEED [KIND [QUEUE]]]]]: store COUNT
# signed events in DIR (created 0700 if missing) through the real ingest
# path, with prog_uplink (its header has the arguments' defaults).
fill() {
	mkdir -p -m 700 "$1"
	"$CACHEBOX_BUILD/tests/integration/prog_uplink" fill "$@" >/dev/null
}

# local_ids DIR: every event id stored in DIR, lower-case hex, sorted.
local_ids() {
	python3 - "$1/cachebox.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=10)
for (i,) in c.execute("SELECT lower(hex(id)) FROM events ORDER BY 1"):
    print(i)
PY
}

# measured_natively: true unless the daemon runs under an emulator or is
# linked with a sanitizer runtime, where its memory figures mean nothing.
# (ldd's whole output is read first: grep -q ending a pipe early would
# make ldd die of SIGPIPE and, under pipefail, the test fail.)
measured_natively() {
	local libs
	[ -z "$EMU" ] || return 1
	libs=$(ldd "$CACHEBOXD" 2>/dev/null || true)
	case $libs in
	*libasan*|*libtsan*|*libubsan*) return 1 ;;
	esac
	return 0
}

# pending_is DIR N: DIR's uplink inbox holds N pending rows.
pending_is() { [ "$(status "$1" inbox.pending)" = "$2" ]; }
# error_has DIR PATTERN: DIR's uplink.last_error matches PATTERN (grep -i).
error_has() { status "$1" uplink.last_error | grep -qi -- "$2"; }
