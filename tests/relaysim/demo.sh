#!/usr/bin/env bash
# demo.sh — try cachebox without internet access: start the relay simulator
# with a generated network (examples/demo.json: three relays, thirty authors,
# a capped relay, a flaky one) and run cacheboxd against it with a fresh
# state directory, so the status page fills up within seconds.
#   tests/relaysim/demo.sh [BUILD_DIR]     (make demo does this)
# DEMO_HTTP (default 127.0.0.1:8080) is where the page listens; DEMO_CONFIG
# another network than examples/demo.json (the tests give its relays free
# ports).
# Stop with Ctrl-C; everything it started stops with it, and the state
# directory (/tmp/cachebox-demo.XXXXXX, printed at the start) is wiped.
# The relays, the root and the pace are stored at run time, as the page or
# cacheboxctl would store them, not pinned with --set: the page can add
# and remove roots and relays and change every setting.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
daemon=$build/src/cacheboxd
ctl=$build/src/cacheboxctl
[ -x "$daemon" ] || { echo "demo: $daemon not built (run make first)" >&2; exit 1; }
export CACHEBOX_BUILD=${CACHEBOX_BUILD:-$(cd "$build" && pwd)}
. "$here/relaysim.sh"

state=$(mktemp -d /tmp/cachebox-demo.XXXXXX)
dpid=
cleanup() {
	[ -z "$dpid" ] || { kill "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; } || true
	relaysim_stop || true
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "demo: starting the relay simulator (the first run signs its dataset, ~30 s)"
relaysim_start "${DEMO_CONFIG:-$here/examples/demo.json}"
root=$(relaysim_q root)
boot=$(relaysim_url bootstrap)
listen=${DEMO_HTTP:-127.0.0.1:8080}
echo "demo: state directory $state (wiped when the demo stops)"
# Without a root the daemon dials nobody, so the default public relays are
# never asked before the simulator's replace them.
"$daemon" -d "$state" --set http.listen="$listen" --set admin.token=demo-token-1234 &
dpid=$!
for _ in $(seq 100); do
	"$ctl" -d "$state" status --json >/dev/null 2>&1 && break
	sleep 0.1
done
"$ctl" -d "$state" config set relays.bootstrap "$boot" >/dev/null
"$ctl" -d "$state" config set backfill.pace_ms 50 >/dev/null
"$ctl" -d "$state" roots add "$root" >/dev/null
echo "demo: relays ready; following root $root"
echo "demo: status page on http://$listen/ (admin password demo-token-1234) — Ctrl-C stops the demo"
wait "$dpid"
