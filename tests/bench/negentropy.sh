#!/usr/bin/env bash
# negentropy.sh — NIP-77 reconciliation of ITEMS items (100000) of which
# PCT % (1) are on one side only, the C codec against the JavaScript
# reference @nostr-dev-kit/sync on the same two sets in the same run:
#   1. tests/negentropy/fuzz.mjs makes the sets (seeded) and runs harness
#      pairs C<->C and sync<->sync as processes, without a frame-size limit
#      and with 60000 bytes on both sides: bytes up/down, round trips, and
#      per process the CPU seconds (from start, so loading the item lines
#      and, for Node, starting up are included) and peak RSS (VmHWM);
#   2. build/tests/bench/negentropy reconciles the same sets in one process
#      and times the reconciliation alone, with its VmHWM.
#
#   tests/bench/negentropy.sh [ITEMS [PCT]]
#
# Needs a build (CACHEBOX_BUILD, default ./build) and tests/install-peers.sh.
# It prints figures and asserts nothing.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${CACHEBOX_BUILD:-$SRC/build}
export CACHEBOXCTL=${CACHEBOXCTL:-$BUILD/src/cacheboxctl}
ITEMS=${1:-100000}
PCT=${2:-1}
half=$(awk -v p="$PCT" 'BEGIN { print p / 2 }')
both=$(awk -v p="$PCT" 'BEGIN { print 100 - p }')
T=$(mktemp -d /tmp/cachebox-negbench.XXXXXX)
trap 'rm -rf "$T"' EXIT

sets=(--recs "$ITEMS" --p1 "$half" --p2 "$half" --p3 "$both" --seed 1)
echo "== $ITEMS items, $PCT % on one side only (seed 1) =="
echo "-- harness processes (tests/negentropy/fuzz.mjs --stats) --"
for limit in 0 60000; do
	for pair in "c c" "sync sync"; do
		set -- $pair
		node "$SRC/tests/negentropy/fuzz.mjs" "${sets[@]}" --init "$1" \
			--resp "$2" --limit1 "$limit" --limit2 "$limit" --stats \
			--dump "$T"
	done
done
echo "-- C codec in one process (tests/bench/negentropy) --"
"$BUILD/tests/bench/negentropy" "$T/set1" "$T/set2"
