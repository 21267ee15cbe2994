#!/usr/bin/env bash
# demo.sh — try cachebox without internet access: start the relay simulator
# with a generated network (examples/demo.json: three relays, thirty authors,
# a capped relay, a flaky one) and run cacheboxd against it with a fresh
# state directory, so the status page fills up within seconds.
#   tests/relaysim/demo.sh [BUILD_DIR]     (make demo does this)
# Stop with Ctrl-C; everything it started stops with it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
daemon=$build/src/cacheboxd
[ -x "$daemon" ] || { echo "demo: $daemon not built (run make first)" >&2; exit 1; }
export CACHEBOX_BUILD=${CACHEBOX_BUILD:-$(cd "$build" && pwd)}
. "$here/relaysim.sh"

state=$(mktemp -d /tmp/cachebox-demo.XXXXXX)
cleanup() { relaysim_stop || true; rm -rf "$state"; }
trap cleanup EXIT INT TERM

echo "demo: starting the relay simulator (the first run signs its dataset, ~30 s)"
relaysim_start "$here/examples/demo.json"
root=$(relaysim_q root)
boot=$(relaysim_url bootstrap)
listen=${DEMO_HTTP:-127.0.0.1:8080}
echo "demo: relays ready; following root $root"
echo "demo: status page on http://$listen/ — Ctrl-C stops the demo"
"$daemon" -d "$state" --set relays.bootstrap="$boot" --set follow.roots="$root" \
    --set backfill.pace_ms=50 --set http.listen="$listen" --set admin.token=demo-token-1234
