#!/usr/bin/env bash
# full-conformance.sh — the whole negentropy conformance matrix, up to
# 100,000 items: every pair of harnesses (C, @nostr-dev-kit/sync in both
# roles, nostr-tools' nip77 as initiator) x sizes 1 .. 100,000 x frame-size
# limits (none, 4096 both, 60000/500000, 4096 on one side only), random
# sets with 1 % extras on each side, plus clustered sets of up to ~100,000
# items, plus lockstep byte-for-byte runs of the C and nostr-tools
# initiators. Takes tens of minutes (the JavaScript initiators under a
# 4096-byte limit dominate); the CI-sized subset is
# tests/integration/test_negentropy_conformance.sh.
#
#   tests/negentropy/full-conformance.sh [SEED]      (default 1)
#
# Needs a build (CACHEBOX_BUILD, default ./build) and tests/install-peers.sh.
# Prints one line per run and a count; exits 1 if any run failed.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export CACHEBOXCTL=${CACHEBOXCTL:-${CACHEBOX_BUILD:-$SRC/build}/src/cacheboxctl}
FUZZ=$SRC/tests/negentropy/fuzz.mjs
SEED=${1:-1}
pass=0 failed=0

run() {
	if node "$FUZZ" --seed "$SEED" "$@"; then
		pass=$((pass + 1))
	else
		failed=$((failed + 1))
	fi
}

LIMITS=("0 0" "4096 4096" "60000 500000" "4096 0" "0 4096")
for pair in "c c" "c sync" "sync c" "nostr-tools c"; do
	set -- $pair
	for n in 1 10 100 1000 10000 100000; do
		for l in "${LIMITS[@]}"; do
			set -- $pair $l
			run --init "$1" --resp "$2" --recs "$n" --p1 1 --p2 1 --p3 98 \
				--limit1 "$3" --limit2 "$4"
		done
	done
	for l in "0 0" "50000 50000" "4096 60000"; do
		set -- $pair $l
		run --init "$1" --resp "$2" --clustered --segs 4000 --per-seg 50 \
			--limit1 "$3" --limit2 "$4"
		run --init "$1" --resp "$2" --clustered --segs 4000 --per-seg 50 \
			--p1 1 --p2 1 --p3 1 --limit1 "$3" --limit2 "$4"
	done
done
for l in "0 0" "4096 4096" "60000 500000"; do
	set -- $l
	run --init c --resp c --shadow nostr-tools --recs 100000 --limit1 "$1" --limit2 "$2"
	run --init nostr-tools --resp sync --shadow c --recs 100000 --limit1 "$1" --limit2 "$2"
done
echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
