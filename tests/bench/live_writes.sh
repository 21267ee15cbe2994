#!/usr/bin/env bash
# live_writes.sh — what a box that has caught up writes to its card in a
# day: bytes written while idle, and per note that arrives live, read from
# the daemon's own write budget (the status's writes.bytes, the kernel's
# write_bytes for the process).
#
#   tests/bench/live_writes.sh [FOLLOWS [NOTES_PER_DAY]]     (500, 20)
#
# relaysim holds FOLLOWS authors (the root follows every other one) with a
# short history, on two relays. cacheboxd drains it to idle (unpaced: the
# drain is not what is measured), then:
#   1. idle: the daemon is left alone for IDLE_S seconds (default 120); the
#      bytes written over that time give the idle rate;
#   2. live: NOTES notes (default 40) of followed authors are published,
#      one every GAP seconds (default 7: a batch commits within 5 s, so
#      each is stored in its own commit, as notes spread over a day are),
#      each to every relay its author writes to; the bytes written until the last is stored, less
#      the idle rate over that time, give the cost of one live note.
# The day is FOLLOWS x NOTES_PER_DAY live notes plus 86,400 s of idle.
# It prints figures and asserts nothing.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export CACHEBOX_BUILD=${CACHEBOX_BUILD:-$SRC/build}
export CACHEBOXD=${CACHEBOXD:-$CACHEBOX_BUILD/src/cacheboxd}
export CACHEBOXCTL=${CACHEBOXCTL:-$CACHEBOX_BUILD/src/cacheboxctl}
export CACHEBOX_TESTS=$SRC/tests NODE_PATH=$SRC/tests/node_modules
FOLLOWS=${1:-500}
PER_DAY=${2:-20}
IDLE_S=${IDLE_S:-120}
NOTES=${NOTES:-40}
GAP=${GAP:-7}
SIGN=$SRC/tests/integration/sign_events.mjs
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/relaysim/relaysim.sh"
trap 'relaysim_stop >/dev/null 2>&1; cleanup' EXIT

cat >"$T/sim.json" <<JSON
{"dataset": {"authors": $FOLLOWS, "events": $((FOLLOWS * 6)), "seed": 27},
 "relays": [{"name": "a", "ipv6": false}, {"name": "b", "ipv6": false}]}
JSON
relaysim_start "$T/sim.json" 600 || exit 1
D=$T/state
mkdir -m 700 "$D"
start_daemon -d "$D" --set relays.bootstrap="$(relaysim_url a),$(relaysim_url b)" \
    --set follow.roots="$(relaysim_q root)" --set http.listen=127.0.0.1:0 \
    --set backfill.pace_ms=0
wait_for 3600 idle || { echo "the drain did not go idle" >&2; exit 1; }
written() { st && json_get "$T/st.json" writes.bytes; }
stored() { st && json_get "$T/st.json" ingest.stored; }
echo "# drained: $(json_get "$T/st.json" store.events) events, source" \
    "$(json_get "$T/st.json" writes.source), $(written) bytes written so far"

# The notes: authors 1.. in turn, to the relays they write to (the slots
# of write_relays are the relays in sim.json's order).
python3 - "$(relaysim_q meta)" "$NOTES" "$GAP" "$(date +%s)" >"$T/tmpl.jsonl" <<'PY'
import json, sys
meta, n, gap, now = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
authors = json.load(open(meta))["authors"][1:]
for i in range(n):
    a = authors[i % len(authors)]
    print(json.dumps({"sk": a["seckey"], "kind": 1, "created_at": now + int(i * gap),
                      "content": "live note %d, a sentence or two of the length a "
                                 "note often has, with nothing in it" % i, "tags": [],
                      "relays": sorted(set(a["write_relays"]))}))
PY
node "$SIGN" <"$T/tmpl.jsonl" >"$T/signed.jsonl"

sleep 5	# past the drain's last commit and checkpoint
B0=$(written); T0=$SECONDS
sleep "$IDLE_S"
B1=$(written); T1=$SECONDS
IDLE_RATE=$(python3 -c "print(($B1 - $B0) / ($T1 - $T0))")

S0=$(stored); B2=$(written); T2=$SECONDS
i=0
while IFS= read -r ev; do
	slots=$(sed -n "$((i + 1))p" "$T/tmpl.jsonl" |
	    python3 -c 'import json, sys; print(" ".join(json.load(sys.stdin)["relays"]))')
	printf '%s\n' "$ev" >"$T/one.jsonl"
	for s in $slots; do
		case $s in 0) r=a ;; 1) r=b ;; *) continue ;; esac
		relaysim_q publish "$r" "$T/one.jsonl" >/dev/null
	done
	i=$((i + 1))
	sleep "$GAP"
done <"$T/signed.jsonl"
all_in() { [ "$(stored)" -ge $((S0 + NOTES)) ]; }
wait_for 120 all_in || echo "# only $(( $(stored) - S0 )) of $NOTES notes stored" >&2
B3=$(written); T3=$SECONDS
stop_daemon

python3 - "$FOLLOWS" "$PER_DAY" "$NOTES" "$IDLE_RATE" "$B2" "$B3" "$T2" "$T3" <<'PY'
import sys
follows, per_day, notes = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
idle = float(sys.argv[4])
b2, b3, t2, t3 = (int(x) for x in sys.argv[5:9])
note = max(0.0, (b3 - b2 - idle * (t3 - t2)) / notes)
day_notes = follows * per_day
day = day_notes * note + idle * 86400
print(f"idle: {idle:.0f} B/s ({idle * 86400 / 1e6:.1f} MB/day)")
print(f"live: {notes} notes in {t3 - t2} s, {b3 - b2} bytes written, "
      f"{note / 1e3:.1f} KB per note beyond idle")
print(f"day: {follows} follows x {per_day} notes = {day_notes} notes, "
      f"{day / 1e6:.0f} MB/day written ({day_notes * note / 1e6:.0f} MB notes, "
      f"{idle * 86400 / 1e6:.0f} MB idle)")
PY
