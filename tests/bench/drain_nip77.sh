#!/usr/bin/env bash
# drain_nip77.sh — the author drain on a network whose relays cannot all be
# paged to the end, run twice on fresh stores: with NIP-77 (the relays that
# cannot be paged speak it) and with negentropy.enabled false (paging
# only). One relay caps every answer at 137 and holds a burst of 300 events
# of one author in one second, one caps at 137 and ignores until (it speaks
# NIP-77 without saying so in NIP-11), one is plain. For each run: seconds
# from start to the first idle (--exit-when-idle), the share of the events
# the relays hold that is stored then, authors incomplete, ids left in
# recovery, and events the relays sent per distinct event stored.
#
#   tests/bench/drain_nip77.sh [AUTHORS [EVENTS]]      (12, 6000)
#
# Needs a build (CACHEBOX_BUILD, default ./build) and tests/install-peers.sh.
# It prints figures and asserts nothing.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${CACHEBOX_BUILD:-$SRC/build}
export CACHEBOX_SRC=$SRC CACHEBOX_BUILD=$BUILD CACHEBOX_TESTS=$SRC/tests
export CACHEBOXD=$BUILD/src/cacheboxd CACHEBOXCTL=$BUILD/src/cacheboxctl
export NODE_PATH=$SRC/tests/node_modules
. "$SRC/tests/integration/lib.sh"
set +e
use_relaysim
AUTHORS=${1:-12}
EVENTS=${2:-6000}

cat > "$T/net.json" <<JSON
{"dataset": {"authors": $AUTHORS, "events": $EVENTS, "seed": 23},
 "relays": [
  {"name": "burst", "negentropy": "yes", "cap": 137,
   "burst": {"created_at": 1650000000, "count": 300, "author": 1}},
  {"name": "liar", "negentropy": "yes", "cap": 137, "ignore_until": true,
   "supported_nips": [1, 11], "subset": {"fraction": 0.6, "seed": 5}},
  {"name": "plain", "subset": {"fraction": 0.5, "seed": 6}}
 ]}
JSON
relaysim_start "$T/net.json" || exit 1
RELAYS="$(relaysim_url burst),$(relaysim_url liar),$(relaysim_url plain)"
ALL=$(python3 -c 'import json, sys
print(json.dumps({"authors": [a["pubkey"] for a in json.load(open(sys.argv[1]))["authors"]]}))' \
    "$(relaysim_q meta)")
relaysim_q truth match "$ALL" | sort -u >"$T/want"

one_run() {
	local name=$1 neg=$2 d=$T/$1 start end sent
	for r in burst liar plain; do relaysim_q stats "$r" --reset >/dev/null; done
	start=$(date +%s.%N)
	timeout 900 "$CACHEBOXD" -d "$d" --set relays.bootstrap="$RELAYS" \
	    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
	    --set http.listen=127.0.0.1:0 --set negentropy.enabled="$neg" \
	    --exit-when-idle 2>"$T/$name.log"
	end=$(date +%s.%N)
	sent=0
	for r in burst liar plain; do
		sent=$((sent + $(relaysim_q stats "$r" events_sent)))
	done
	python3 - "$d/cachebox.db" "$T/want" "$name" "$start" "$end" "$sent" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
have = {i for (i,) in db.execute("SELECT lower(hex(id)) FROM events")}
want = set(open(sys.argv[2]).read().split())
inc = db.execute("SELECT count(DISTINCT pubkey) FROM cursors WHERE complete = 0").fetchone()[0]
pend = db.execute("SELECT count(*) FROM missing_ids").fetchone()[0]
secs = float(sys.argv[5]) - float(sys.argv[4])
got = len(want & have)
print(f"{sys.argv[3]:8} first idle after {secs:6.1f} s: {got}/{len(want)} held events "
      f"({100 * got / len(want):.2f} %), {inc} authors incomplete, {pend} ids in "
      f"recovery; {int(sys.argv[6]) / max(len(have), 1):.3f} events received per "
      f"distinct event stored")
PY
}
echo "network: $AUTHORS authors, $(wc -l <"$T/want") events held in all"
one_run nip77 true
one_run paging false
