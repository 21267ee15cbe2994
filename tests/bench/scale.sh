#!/usr/bin/env bash
# scale.sh — the growth table: cacheboxd on stores of 10k, 100k and 1M
# events and follow sets of 100, 1,000 and 5,000 authors served by 20
# relaysim relays (scale.py does the work; its header says how).
#
#   tests/bench/scale.sh [SIZES [FOLLOWS [BUILD_DIR]]]
#	(default 10000,100000,1000000  100,1000,5000  build)
#
# For each cell it prints: peak RSS of the daemon (VmHWM, both starts);
# start-up on the store (exec to /api/status answering) and the restart
# after a SIGTERM a third into the drain; events drained (resumed after
# the restart) against the network's events; CPU seconds and bytes
# written (/proc/PID/io write_bytes) per drained event, over both runs
# and the checkpoints of what they wrote into the WAL (the first run's at
# its close, the second's by the script once it is idle);
# database file bytes per stored event (with the JSON's own bytes); p50
# and p99 of GET /api/status, of a page of GET /api/follows (50 authors
# at an offset), of a name search (the first one apart) and of the relay
# endpoint's typical REQs (relay_bench.mjs latency); the median of
# `cacheboxctl follows`; one live note from publish to stored; and one
# retention round at a budget 3% under the store (none when that is under
# the 16 MiB minimum). SCALE_REQS (default 300) requests per latency.
#
# SCALE_DATA=DIR keeps the generated stores (through the real ingest path,
# about 80 s and 1 GB for a million events) and relaysim's signed
# datasets in DIR for later runs; by default they go to a temporary
# directory removed at the end. Prints figures; judges nothing.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SIZES=${1:-10000,100000,1000000}
FOLLOWS=${2:-100,1000,5000}
B=$(cd "${3:-$SRC/build}" && pwd)
[ -x "$B/tests/integration/prog_relayd" ] || { echo "build first" >&2; exit 1; }
[ -d "$SRC/tests/node_modules/ws" ] || { echo "run tests/install-peers.sh first" >&2; exit 1; }
T=$(mktemp -d /tmp/cachebox-scale.XXXXXX)
trap 'rm -rf "$T"' EXIT
D=${SCALE_DATA:-$T}
mkdir -p "$D"
python3 "$SRC/tests/bench/scale.py" "$B" "$SRC" "$D" "$SIZES" "$FOLLOWS"
