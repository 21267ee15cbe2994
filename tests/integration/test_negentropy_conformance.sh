#!/usr/bin/env bash
# NIP-77 negentropy conformance: `cacheboxctl negentropy harness` against
# itself and against two independent JavaScript implementations pinned in
# tests/package.json — @nostr-dev-kit/sync (both roles) and nostr-tools'
# nip77 (initiator only) — driven by tests/negentropy/fuzz.mjs, which checks
# that the initiator's have/need are exactly the two set differences. Sizes
# from 0 to 10,000 items, random and clustered sets, with and without a
# frame-size limit on either side; "shadow" runs feed the same replies to a
# second initiator of the other implementation and require byte-identical
# messages. Also: the version downgrade answer and the harness's refusals.
# The full matrix up to 100,000 items is tests/negentropy/full-conformance.sh.
# Exit 77 (skip) without node or the npm packages (run tests/install-peers.sh).
. "$(dirname "$0")/lib.sh"

command -v node >/dev/null || { echo "skip: no node"; exit 77; }
for m in nostr-tools @nostr-dev-kit/sync @nostr-dev-kit/ndk; do
	[ -d "$CACHEBOX_TESTS/node_modules/$m" ] ||
	    { echo "skip: $m missing: run tests/install-peers.sh"; exit 77; }
done
FUZZ=$CACHEBOX_TESTS/negentropy/fuzz.mjs

# run ARGS...: one fuzz.mjs run; its summary line is the check's name.
run() {
	local out
	if out=$(node "$FUZZ" "$@" 2>&1); then
		ok "${out#ok }"
	else
		fail "${out:-fuzz.mjs $* failed}"
	fi
}

# --- the harness itself ----------------------------------------------------
ID=eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee
out=$(printf 'item,12345,%s\nseal\nmsg,62aabbccddeeff\nmsg,6100000200\n' "$ID" |
	cboxctl negentropy harness)
check "a newer version is answered with 61, then version 1 goes on" \
	test "$out" = "$(printf 'msg,61\nmsg,6100000201%s' "$ID")"
out=$(printf 'seal\ninitiate\n' | FRAMESIZELIMIT=100 cboxctl negentropy harness 2>&1) &&
	fail "a frame-size limit of 100 accepted" ||
	check "a frame-size limit under 4096 refused" grep -q "frame-size limit 100" <<<"$out"
out=$(printf 'seal\nmsg,610000030000\n' | cboxctl negentropy harness 2>&1) &&
	fail "mode 3 accepted" ||
	check "a bad message ends the run with its reason" grep -q "line 2: unknown mode 3" <<<"$out"
out=$(printf 'item,1,%s\nitem,x,%s\n' "$ID" "$ID" | cboxctl negentropy harness 2>&1) &&
	fail "bad created_at accepted" ||
	check "a bad item line is refused" grep -q "line 2: item: bad created_at" <<<"$out"

# --- pairs ------------------------------------------------------------------
PAIRS=("c c" "c sync" "sync c" "nostr-tools c")
for pair in "${PAIRS[@]}"; do
	set -- $pair
	for n in 0 1 33 1000 10000; do
		run --init "$1" --resp "$2" --recs "$n" --seed "$n"
	done
	run --init "$1" --resp "$2" --recs 3000 --limit1 4096 --limit2 4096 --seed 7
	run --init "$1" --resp "$2" --recs 10000 --limit1 60000 --limit2 500000 \
		--p1 1 --p2 1 --p3 10 --seed 8
	run --init "$1" --resp "$2" --clustered --segs 300 --p1 1 --p2 1 --p3 3 \
		--limit1 5000 --limit2 5000 --seed 9
done
# One side only, the other empty of extras; a limit on one side only.
run --init c --resp sync --recs 2000 --p1 1 --p2 0 --p3 0
run --init sync --resp c --recs 2000 --p1 0 --p2 1 --p3 0
run --init c --resp sync --recs 5000 --p1 1 --p2 1 --p3 20 --limit1 4096
run --init sync --resp c --recs 5000 --p1 1 --p2 1 --p3 20 --limit2 4096
run --init nostr-tools --resp c --clustered --segs 300 --limit2 4096

# --- byte for byte: the C initiator and nostr-tools' in lockstep ------------
run --init c --resp c --shadow nostr-tools --recs 10000 --seed 11
run --init c --resp sync --shadow nostr-tools --recs 10000 --limit1 4096 --seed 12
run --init nostr-tools --resp c --shadow c --clustered --segs 300 \
	--limit1 4096 --limit2 60000 --seed 13

finish
