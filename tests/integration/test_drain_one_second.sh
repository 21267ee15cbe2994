#!/usr/bin/env bash
# test_drain_one_second.sh — an author whose whole history on a relay is a
# few events in one second (a new account publishing kinds 0, 3 and 10002
# at once) is drained to complete there, with no gap recorded: a page of
# that second below any cap brought the second whole, so the drain steps
# past it instead of asking it again (the same events would come back as
# a page as large as the largest the relay has returned: a false burst).
# Relay "tiny" holds only author 1's three events at one second and has
# returned no bigger page; relay "a" holds only the root's history. After
# --exit-when-idle, author 1's row on tiny is complete without a gap after
# two pages (the second one empty), every other row is complete, the three
# events are stored and no cursor row is incomplete. (A burst over a
# relay's cap staying incomplete is covered by test_drain_faults.sh.)
. "$(dirname "$0")/lib.sh"
use_relaysim

TS=1650000000
cat > "$T/sim.json" <<JSON
{"dataset": {"authors": 3, "events": 60, "seed": 7},
 "relays": [
  {"name": "a", "subset": {"authors": [0, 0]}},
  {"name": "tiny", "subset": "none",
   "burst": {"created_at": $TS, "count": 3, "author": 1}},
  {"name": "c", "subset": "none"}
 ]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
TINY=$(relaysim_url tiny)
A1=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['authors'][1]['pubkey'])" \
    "$(relaysim_q meta)")
D=$T/state
ARGS=(-d "$D" --set relays.bootstrap="$(relaysim_url a),$TINY"
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0
    --set http.listen=127.0.0.1:0)
check "cacheboxd drains to idle and exits 0" \
    timeout 120 "$CACHEBOXD" "${ARGS[@]}" --exit-when-idle 2>>"$T/d.log"

python3 - "$D/cachebox.db" "$A1" "$TINY" >"$T/rows" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
pk = bytes.fromhex(sys.argv[2])
for relay, c, r, g, p, e in db.execute("SELECT relay, complete, "
        "coalesce(incomplete_reason, '-'), coalesce(gap_since, -1), pages, "
        "events FROM cursors WHERE pubkey = ? ORDER BY relay", (pk,)):
    print("tiny" if relay == sys.argv[3] else "other", c, g, p, e,
          r.replace(" ", "_"))
print("stored", db.execute("SELECT count(*) FROM events WHERE pubkey = ?",
      (pk,)).fetchone()[0])
print("incomplete", db.execute("SELECT count(*) FROM cursors WHERE "
      "incomplete_reason IS NOT NULL").fetchone()[0])
PY
sed 's/^/    /' "$T/rows"
check "author 1 on tiny: complete, no gap, no reason, 2 pages, 3 events" \
    grep -qx 'tiny 1 -1 2 3 -' "$T/rows"
check "author 1's other rows complete" \
    test "$(grep -c '^other 1 -1 ' "$T/rows")" -eq "$(grep -c '^other ' "$T/rows")"
check "the three events of that second are stored" grep -qx 'stored 3' "$T/rows"
check "no cursor row is incomplete" grep -qx 'incomplete 0' "$T/rows"
finish
