#!/usr/bin/env bash
# test_runtime_config.sh — a box started with no roots begins following as
# soon as a root is added at run time (the command table → configuration →
# follow graph → drain), and keys changed at run time take effect at once:
# log.level; live.enabled off closes the live subscriptions (a note
# published meanwhile is not stored) and on again catches the note up;
# limits.max_event_bytes lowered drops a larger live note (counted in
# status ingest.too_large) while a small one after it is stored. A reset
# of every author's drain (`backfill reset` without an author) drains the
# whole set again to complete, with new REQs and the same events.
. "$(dirname "$0")/lib.sh"
use_relaysim

cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 6, "events": 1200, "seed": 33},
 "relays": [{"name": "boot", "max_limit": 500}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
ROOT=$(relaysim_q root)
D=$T/state
start_daemon -d "$D" --set relays.bootstrap="$(relaysim_url boot)" \
    --set backfill.pace_ms=0 --set http.listen=127.0.0.1:0
check "daemon up" wait_for 10 cboxctl -d "$D" status

check "no roots: nothing followed" test "$(status backfill.authors_total)" = 0
check "no roots: idle (once the start settles)" wait_for 30 idle "$D"

check "roots add at run time" cboxctl -d "$D" roots add "$ROOT"
all_done() {
	[ "$(status backfill.authors_total)" = 6 ] &&
	[ "$(status backfill.authors_complete)" = 6 ] && [ "$(status idle)" = true ]
}
check "the new root's follows are drained to complete" wait_for 60 all_done
check "the store holds the whole dataset" test "$(status store.events)" -ge 1200

check "status ingest: stored equals the store's events" \
    test "$(status ingest.stored)" = "$(status store.events)"
check "status ingest: nothing invalid, too large or unrequested" \
    test "$(status ingest.invalid)/$(status ingest.too_large)/$(status ingest.unrequested)" = 0/0/0

# A followed author's key, to publish live notes as it.
SK=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["authors"][1]["seckey"])' "$(relaysim_q meta)")
# note ID CONTENT_BYTES: sign one kind-1 note into $T/ID.jsonl.
note() {
	python3 -c 'import json, sys, time
print(json.dumps({"sk": sys.argv[1], "kind": 1, "created_at": int(time.time()),
    "content": sys.argv[2] + " " + "x" * int(sys.argv[3])}))' "$SK" "$1" "$2" |
	    node "$CACHEBOX_TESTS/integration/sign_events.mjs" >"$T/$1.jsonl"
}
stored() {
	python3 - "$D/cachebox.db" "$(cut -d'"' -f4 "$T/$1.jsonl")" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=30)
sys.exit(0 if db.execute("SELECT 1 FROM events WHERE id = ?",
                         (bytes.fromhex(sys.argv[2]),)).fetchone() else 1)
PY
}
closes0=$(relaysim_q stats boot closes)
check "live.enabled off at run time" cboxctl -d "$D" config set live.enabled false
closed() { [ "$(relaysim_q stats boot closes)" -gt "$closes0" ]; }
check "the live subscriptions are closed at once" wait_for 10 closed
note off 10
check "the relay takes a note while live is off" relaysim_q publish boot "$T/off.jsonl"
sleep 3
check "the note is not stored while live is off" eval "! stored off"
check "live.enabled on again" cboxctl -d "$D" config set live.enabled true
check "the note is caught up once live is on" wait_for 20 stored off

check "limits.max_event_bytes lowered to 1k" \
    cboxctl -d "$D" config set limits.max_event_bytes 1k
big0=$(status ingest.too_large)
note big 2000
note small 10
check "the relay takes a large and then a small note" \
    relaysim_q publish boot "$T/big.jsonl"
check "...and the small one" relaysim_q publish boot "$T/small.jsonl"
check "the small note arrives" wait_for 20 stored small
check "the large one is not stored" eval "! stored big"
check "status counts it too large" test "$(status ingest.too_large)" -gt "$big0"

events0=$(status store.events)
reqs0=$(relaysim_q stats boot reqs)
cboxctl -d "$D" backfill reset --json >"$T/reset.json"
check "backfill reset of everyone resets all 6 authors' rows" \
    test "$(json_get "$T/reset.json" reset)" -eq 6
check "drained again to complete after the reset" wait_for 60 all_done
check "the relay was asked again (more than 6 REQs)" \
    test "$(( $(relaysim_q stats boot reqs) - reqs0 ))" -gt 6
check "the same events after the reset" test "$(status store.events)" -eq "$events0"

check "log level changes at once" cboxctl -d "$D" config set log.level debug
cboxctl -d "$D" log level --json >"$T/lvl.json"
check "the running log level is debug" test "$(json_get "$T/lvl.json" level)" = debug

check "roots remove at run time" cboxctl -d "$D" roots remove "$ROOT"
unfollowed() { [ "$(status backfill.authors_total)" = 0 ]; }
check "removing the root marks its follows stale" wait_for 30 unfollowed

kill -TERM "$DPID"; wait "$DPID"; rc=$?
check "clean exit" test "$rc" -eq 0
finish
