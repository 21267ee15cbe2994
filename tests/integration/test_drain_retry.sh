#!/usr/bin/env bash
# test_drain_retry.sh — a relay that gave no answer during a drain gets its
# turn later. Relay b refuses every REQ ("blocked:") in a first run: each
# author's row on b ends "no answer from relay: ..." and --exit-when-idle
# still exits (the rows count as finished). relaysim then comes back on the
# same ports with b healthy. Half of b's rows are aged past their retry
# delay (DRAIN_NOANSWER_RETRY_S, an hour, doubled for each earlier record:
# the record is in wall seconds, so the test moves updated_at back instead
# of waiting, and gives two rows the stall count of a second record); a
# second --exit-when-idle run must drain exactly those again to complete,
# storing every event b can page for them, while the rows still inside
# their delay (one of them aged an hour, but on its second record) stay
# incomplete and do not keep the daemon from exiting.
. "$(dirname "$0")/lib.sh"
use_relaysim

read -r PA PB < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
# a holds part of every author's history, b all of it (so b's events are
# not all on a and a retry that does not happen shows as missing events).
sim() {
	cat > "$T/sim.json" <<JSON
{"dataset": {"authors": 6, "events": 900, "seed": 41},
 "relays": [
  {"name": "a", "port": $PA, "ipv6": false, "subset": {"fraction": 0.5, "seed": 5}},
  {"name": "b", "port": $PB, "ipv6": false $1}
 ]}
JSON
}
sim ', "rate_limit": {"every": 1, "message": "blocked: closed for maintenance"}'
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
URLB=$(relaysim_url b)
D=$T/state
ARGS=(-d "$D" --set relays.bootstrap="$(relaysim_url a),$URLB"
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0
    --set http.listen=127.0.0.1:0)
check "first run: drains to idle though b refuses everything" \
    timeout 300 "$CACHEBOXD" "${ARGS[@]}" --exit-when-idle 2>>"$T/d.log"
rows() {
	python3 - "$D/cachebox.db" "$URLB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for pk, c, r, p, e in db.execute("SELECT hex(pubkey), complete, "
        "coalesce(incomplete_reason, ''), pages, events FROM cursors "
        "WHERE relay = ? ORDER BY pubkey", (sys.argv[2],)):
    print(pk.lower(), c, p, e, r.replace(" ", "_"))
PY
}
rows >"$T/rows1"
sed 's/^/    /' "$T/rows1"
check "every author's row on b: no answer, nothing paged (6 rows)" \
    test "$(grep -c ' 0 0 0 no_answer_from_relay:_blocked' "$T/rows1")" -eq 6

relaysim_stop >/dev/null 2>&1 || true
sim ''
relaysim_start "$T/sim.json" || { fail "relaysim starts again"; finish; exit 1; }
check "relaysim is back on the same ports" test "$(relaysim_url b)" = "$URLB"
check "every row on b took 3 stalls (one record)" \
    test "$(python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM cursors "
      "WHERE relay = ? AND stalls_total = 3", (sys.argv[2],)).fetchone()[0])' \
    "$D/cachebox.db" "$URLB")" -eq 6
# Age the first three rows past their delay: the first on its second
# record (6 stalls: two hours), the next two on their first (an hour).
# The fourth is on its second record and aged only an hour: not due yet.
# The last two stay recent.
python3 - "$D/cachebox.db" "$URLB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
pks = [r[0] for r in db.execute("SELECT pubkey FROM cursors WHERE relay = ? "
                                "ORDER BY pubkey", (sys.argv[2],))]
for pk, age, stalls in ((pks[0], 7201, 6), (pks[1], 3601, 3),
                        (pks[2], 3601, 3), (pks[3], 3601, 6)):
    db.execute("UPDATE cursors SET updated_at = updated_at - ?, "
               "stalls_total = ? WHERE relay = ? AND pubkey = ?",
               (age, stalls, sys.argv[2], pk))
db.commit()
PY
check "second run: retries the aged rows and exits idle" \
    timeout 300 "$CACHEBOXD" "${ARGS[@]}" --exit-when-idle 2>>"$T/d.log"
rows >"$T/rows2"
sed 's/^/    /' "$T/rows2"
check "the three aged rows are complete now, with pages" \
    test "$(head -3 "$T/rows2" | awk '$2 == 1 && $3 > 0 && $5 == ""' | wc -l)" -eq 3
check "the three rows inside their delay still wait for their retry" \
    test "$(tail -3 "$T/rows2" | grep -c ' 0 0 0 no_answer_from_relay:_blocked')" -eq 3
check "the retries are in the log" \
    test "$(grep -c 'retrying an author (was: no answer from relay' "$T/d.log")" -eq 3
# Every event b can page for the retried authors is stored now.
head -3 "$T/rows2" | cut -d' ' -f1 >"$T/retried"
if python3 - "$RELAYSIM_READY" "$D/cachebox.db" "$T/retried" <<'PY'
import json, sqlite3, sys, urllib.parse, urllib.request
ready = next(json.loads(l) for l in open(sys.argv[1]) if '"ready"' in l)
http = next(r["http"] for r in ready["relays"] if r["name"] == "b")
db = sqlite3.connect(sys.argv[2])
stored = {r[0].hex() for r in db.execute("SELECT id FROM events")}
bad = 0
for pk in open(sys.argv[3]).read().split():
    q = urllib.parse.urlencode({"mode": "pageable", "format": "json",
                                "filter": json.dumps({"authors": [pk]}),
                                "relays": "b", "page_limit": "500"})
    ids = set(json.loads(urllib.request.urlopen(f"{http}/truth?{q}",
                                                timeout=60).read())["ids"])
    miss = ids - stored
    print(f"    author {pk[:16]}: {len(ids)} pageable on b, {len(miss)} missing")
    bad += len(miss) > 0 or len(ids) == 0
sys.exit(1 if bad else 0)
PY
then ok "every event b pages for the retried authors is stored"
else fail "every event b pages for the retried authors is stored"
fi
finish
