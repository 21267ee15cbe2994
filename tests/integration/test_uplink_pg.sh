#!/usr/bin/env bash
# The Postgres uplink against a real PostgreSQL 15 started here (pg.sh):
# every stored event lands in caching_event_inbox exactly once, with its
# columns; a wrong password and an unreachable host show in the status
# and lose nothing, and fixing uplink.url at run time delivers; Postgres
# stopped in the middle of forwarding while ingest goes on, then started
# again: everything arrives once; cacheboxd SIGKILLed in the middle of
# forwarding and restarted: still exactly once; a row Postgres cannot
# take becomes a dead letter with Postgres's reason, the rest arrive, and
# `uplink retry` puts it back; another author's protected event (NIP-70)
# never reaches caching_event_inbox (new, or queued again for a new
# target) and is counted, the box's own does; an event withdrawn here
# (deleted by its author, superseded by a newer version) after it was
# copied leaves caching_event_inbox while the relay has not taken it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg.sh"

pg_available || { echo "PostgreSQL 15 server binaries not found: skip"; exit 77; }
trap 'pg_cleanup; cleanup' EXIT
PG_FAST=1 pg_init || { echo "could not start PostgreSQL"; exit 1; }

BASE=(--set relays.bootstrap= --set follow.roots= --set http.listen=127.0.0.1:0
	--set log.level=debug)

pg_ids() { pg_sql "SELECT event_id FROM caching_event_inbox ORDER BY 1"; }
pg_count() { pg_sql "SELECT count(*) FROM caching_event_inbox"; }
pg_has_rows() { [ "$(pg_count)" -gt 0 ]; }
forwarded_is() { [ "$(status "$1" inbox.forwarded)" = "$2" ]; }
# exactly_once DIR: Postgres holds each stored event once, and nothing else.
exactly_once() {
	local_ids "$1" >"$T/local.ids"
	pg_ids >"$T/pg.ids"
	[ -s "$T/local.ids" ] && cmp -s "$T/local.ids" "$T/pg.ids" &&
		[ "$(pg_sql 'SELECT count(*) - count(DISTINCT event_id) FROM caching_event_inbox')" = 0 ]
}

# --- 1. everything stored arrives once, with its columns ----------------------
D=$T/one
fill "$D" 3000
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$PG_URL" \
	--set uplink.pg.create_schema=true
check "first delivery: inbox drains" wait_for 60 pending_is "$D" 0
check "first delivery: 3000 rows, each stored event exactly once" exactly_once "$D"
check "status: inbox.forwarded 3000" test "$(status "$D" inbox.forwarded)" = 3000
check "status: driver postgres" test "$(status "$D" uplink.driver)" = postgres
check "status: state ready" test "$(status "$D" uplink.state)" = ready
check "status: no last_error" test "$(status "$D" uplink.last_error)" = null
check "status: URL password masked" test "$(status "$D" uplink.url)" = \
	"postgres://$PG_ROLE:***@127.0.0.1:$PG_PORT/$PG_DB?sslmode=disable"
check "status JSON never holds the password" bash -c "! grep -q '$PG_PASSWORD' '$T/st.json'"
check "uplink status command" bash -c "'$CACHEBOXCTL' -d '$D' uplink status --json | grep -q '\"driver\"'"
check "event_json is the event (id matches event_id)" test \
	"$(pg_sql "SELECT count(*) FROM caching_event_inbox WHERE event_json->>'id' <> event_id OR event_json->>'pubkey' <> pubkey OR (event_json->>'kind')::int <> kind OR (event_json->>'created_at')::bigint <> created_at")" = 0
check "source_class, source_relay, box_pubkey filled" test \
	"$(pg_sql "SELECT count(*) FROM caching_event_inbox WHERE source_class = 'backfill' AND source_relay = 'ws://127.0.0.1:1/test' AND box_pubkey ~ '^[0-9a-f]{64}$' AND received_at > 0")" = 3000
stop_daemon
# Applying the schema again is harmless (idempotent DDL), and a restart
# with nothing new sends nothing.
fill "$D" 200 100 0 2
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$PG_URL" \
	--set uplink.pg.create_schema=true
check "restart: new events delivered" wait_for 60 pending_is "$D" 0
check "restart: still exactly once (3200)" exactly_once "$D"
stop_daemon

# --- 1b. a box that cached without an uplink: the whole store is queued ------
pg_sql "TRUNCATE caching_event_inbox"
D=$T/late
fill "$D" 12000 4000 0 7 1 0
start_daemon -d "$D" "${BASE[@]}"
check "no uplink: nothing queued" wait_for 30 pending_is "$D" 0
check "no uplink: idle" wait_for 30 idle "$D"
cboxctl -d "$D" config set uplink.url "$PG_URL" >/dev/null
check "uplink set later: the whole store is delivered" wait_for 60 forwarded_is "$D" 12000
check "uplink set later: exactly once" exactly_once "$D"
check "uplink set later: queued in chunks" grep -q "every stored event is queued" "$T/d.log"
stop_daemon
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$PG_URL"
check "same target after restart: nothing queued again" wait_for 30 test -S "$D/cacheboxd.sock"
sleep 1
check "same target after restart: still 12000 forwarded, 0 pending" \
	test "$(status "$D" inbox.forwarded)/$(status "$D" inbox.pending)" = 12000/0
stop_daemon

# --- 2. wrong password, unreachable host: visible, nothing lost ------------
pg_sql "TRUNCATE caching_event_inbox"
D=$T/bad
fill "$D" 500
start_daemon -d "$D" "${BASE[@]}"
check "daemon up" wait_for 30 test -S "$D/cacheboxd.sock"
cboxctl -d "$D" config set uplink.url "$PG_URL_BADPW" >/dev/null
check "wrong password: reason in status" wait_for 20 error_has "$D" "password authentication failed"
check "wrong password: state backoff or connecting" grep -Eq 'backoff|connecting' <<<"$(status "$D" uplink.state)"
check "wrong password: no row lost (500 pending)" pending_is "$D" 500
check "wrong password: password not in status" bash -c "! grep -q wrong-pw '$T/st.json'"
cboxctl -d "$D" config set uplink.url "$PG_URL_NOHOST" >/dev/null
check "unreachable host: reason in status" wait_for 20 error_has "$D" "refused"
check "unreachable host: no row lost (500 pending)" pending_is "$D" 500
check "unreachable host: not idle" test "$(status "$D" idle)" = false
cboxctl -d "$D" config set uplink.url "${PG_URL/sslmode=disable/sslmode=require}" >/dev/null
check "sslmode=require honoured: server without TLS refused" wait_for 20 error_has "$D" "SSL"
check "sslmode=require: no row lost (500 pending)" pending_is "$D" 500
# A host name: resolved by the daemon's own resolver (libpq's would
# block), every address handed to libpq; 'localhost' may give ::1 first,
# where nothing listens.
cboxctl -d "$D" config set uplink.url "${PG_URL/127.0.0.1/localhost}" >/dev/null
check "fixed at run time (host name): delivered" wait_for 60 pending_is "$D" 0
check "fixed at run time: exactly once" exactly_once "$D"
check "fixed at run time: error cleared" test "$(status "$D" uplink.last_error)" = null
stop_daemon

# --- 3. Postgres stopped mid-forwarding while ingest goes on -------------------
pg_sql "TRUNCATE caching_event_inbox"
D=$T/outage
fill "$D" 20000
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$PG_URL"
fill "$D" 3000 100 20 3 &
FPID=$!
check "forwarding started" wait_for 60 pg_has_rows
pg_server_stop
n_at_stop=$(local_ids "$D" | wc -l)
check "outage: reason in status" wait_for 20 error_has "$D" "connect\|lost\|terminat\|closed"
fill "$D" 1000 100 0 4
wait "$FPID"
check "outage: ingest went on (24000 stored)" test "$(local_ids "$D" | wc -l)" = 24000
check "outage: inbox kept rows" test "$(status "$D" inbox.pending)" -gt 0
pg_server_start
check "after outage: inbox drains" wait_for 120 pending_is "$D" 0
check "after outage: 24000 rows, each exactly once" exactly_once "$D"
check "after outage: error cleared" test "$(status "$D" uplink.last_error)" = null
stop_daemon

# --- 4. SIGKILL in the middle of forwarding --------------------------------------
pg_sql "TRUNCATE caching_event_inbox"
D=$T/kill
fill "$D" 30000 1000 0 5
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$PG_URL"
check "forwarding started before the kill" wait_for 60 pg_has_rows
kill -9 "$DPID"; wait "$DPID" 2>/dev/null || true
n=$(pg_count)
check "killed mid-way ($n of 30000 in Postgres)" test "$n" -lt 30000
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$PG_URL"
check "after SIGKILL: inbox drains" wait_for 120 pending_is "$D" 0
check "after SIGKILL: 30000 rows, each exactly once" exactly_once "$D"
stop_daemon

# --- 5. a row Postgres refuses: dead letter with its reason --------------------
pg_sql "TRUNCATE caching_event_inbox"
D=$T/dead
fill "$D" 1500
# An event whose JSON jsonb cannot hold (\u0000), inserted as a raw row in
# the middle of the queue (ingest would not let it in, but a row on disk
# is what the uplink must survive).
python3 - "$D/cachebox.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
bad = "ab" * 32
c.execute("INSERT INTO events (id, pubkey, kind, created_at, json, source, received_at) "
          "VALUES (?, ?, 1, 1700000000, ?, 'live', 1700000000)",
          (bytes.fromhex(bad), bytes.fromhex("cd" * 32),
           '{"id":"%s","pubkey":"%s","kind":1,"created_at":1700000000,"tags":[],"content":"nul \\u0000 here","sig":"%s"}'
           % (bad, "cd" * 32, "ef" * 64)))
c.execute("INSERT INTO inbox (event_id, enqueued_at) VALUES (?, strftime('%s','now'))", (bytes.fromhex(bad),))
c.commit()
PY
fill "$D" 1500 500 0 6
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$PG_URL"
check "refused row: the others drain" wait_for 60 pending_is "$D" 0
check "refused row: one dead letter" test "$(status "$D" inbox.rejected)" = 1
check "refused row: 3000 others delivered" test "$(pg_count)" = 3000
cboxctl -d "$D" uplink deadletter --json >"$T/dl.json"
check "dead letter names the event" test "$(json_get "$T/dl.json" dead.0.id)" = "$(printf 'ab%.0s' $(seq 32))"
check "dead letter carries Postgres's reason" grep -qi "postgres: .*unicode" <<<"$(json_get "$T/dl.json" dead.0.reason)"
check "uplink retry puts it back" test "$(cboxctl -d "$D" uplink retry --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["retried"])')" = 1
dl_attempts_is() {
	cboxctl -d "$1" uplink deadletter --json >"$T/dl2.json" &&
		[ "$(json_get "$T/dl2.json" dead.0.attempts)" = "$2" ]
}
check "retried row refused again (second attempt)" wait_for 30 dl_attempts_is "$D" 2
check "retried row: still one dead letter" test "$(status "$D" inbox.rejected)" = 1
stop_daemon

# --- 6. NIP-70, and what is withdrawn after it was copied ---------------------
pg_sql "TRUNCATE caching_event_inbox"
D=$T/rules
fill "$D" 100
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$PG_URL"
check "rules: the box key exists" wait_for 30 test -S "$D/cacheboxd.sock" -a -s "$D/box.key"
# hexkey FILE BYTE: a secret key file (0600) of 31 zero bytes after BYTE, +1.
hexkey() { printf '%s%060d01\n' "$2" 0 >"$1"; chmod 600 "$1"; }
sign() { cboxctl event sign --key "$1"; }
# Events through ingest as a drain brings them (source backfill).
ingest() { "$CACHEBOX_BUILD/tests/integration/prog_uplink" ingest "$D" >/dev/null; }
jid() { python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["id"])'; }
# pg_holds N ID...: caching_event_inbox holds N of the ids.
pg_holds() {
	local n=$1 ids; shift
	ids=$(printf "'%s'," "$@")
	[ "$(pg_sql "SELECT count(*) FROM caching_event_inbox WHERE event_id IN (${ids%,})")" = "$n" ]
}
hexkey "$T/other.key" 7a
hexkey "$T/k3.key" 7b
now=$(date +%s)
echo "{\"kind\":1,\"created_at\":$((now - 60)),\"tags\":[[\"-\"]],\"content\":\"protected, not the box's\"}" |
	sign "$T/other.key" >"$T/p_other.json"
echo "{\"kind\":1,\"created_at\":$((now - 59)),\"tags\":[[\"-\"]],\"content\":\"protected, the box's own\"}" |
	sign "$D/box.key" >"$T/p_box.json"
echo "{\"kind\":1,\"created_at\":$((now - 58)),\"content\":\"to be deleted\"}" | sign "$T/k3.key" >"$T/note.json"
echo "{\"kind\":0,\"created_at\":$((now - 57)),\"content\":\"{\\\"name\\\":\\\"v1\\\"}\"}" | sign "$T/k3.key" >"$T/v1.json"
P_OTHER=$(jid <"$T/p_other.json"); P_BOX=$(jid <"$T/p_box.json")
NOTE=$(jid <"$T/note.json"); V1=$(jid <"$T/v1.json")
cat "$T/p_other.json" "$T/p_box.json" "$T/note.json" "$T/v1.json" | ingest
check "rules: inbox drains" wait_for 60 pending_is "$D" 0
check "rules: 103 rows in Postgres" test "$(pg_count)" = 103
check "NIP-70: another author's protected event not in caching_event_inbox" pg_holds 0 "$P_OTHER"
check "NIP-70: the box's own protected event is" pg_holds 1 "$P_BOX"
check "NIP-70: counted as skipped (1)" test "$(status "$D" inbox.skipped_protected)" = 1
check "rules: the note and the profile were copied" pg_holds 2 "$NOTE" "$V1"
# The author deletes the note and replaces its profile: both are withdrawn
# here, and Postgres's copies go while the relay has not taken them.
{
	echo "{\"kind\":5,\"created_at\":$((now - 56)),\"tags\":[[\"e\",\"$NOTE\"]],\"content\":\"\"}" | sign "$T/k3.key"
	echo "{\"kind\":0,\"created_at\":$((now - 55)),\"content\":\"{\\\"name\\\":\\\"v2\\\"}\"}" | sign "$T/k3.key"
} >"$T/withdraw.jsonl"
K5=$(sed -n 1p "$T/withdraw.jsonl" | jid); V2=$(sed -n 2p "$T/withdraw.jsonl" | jid)
ingest <"$T/withdraw.jsonl"
check "withdrawn: the deleted note leaves caching_event_inbox" wait_for 60 pg_holds 0 "$NOTE"
check "withdrawn: the superseded profile leaves it" wait_for 60 pg_holds 0 "$V1"
check "withdrawn: the deletion and the new profile are there" wait_for 60 pg_holds 2 "$K5" "$V2"
check "withdrawn: the rest stays (103 rows)" test "$(pg_count)" = 103
check "withdrawn: logged" grep -q "withdrawn event(s) deleted from caching_event_inbox" "$T/d.log"
# A new target (another URL for the same database) queues the store again:
# the protected event of another author is skipped again.
stop_daemon
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=${PG_URL}&application_name=again"
check "new target: inbox drains" wait_for 60 pending_is "$D" 0
check "new target: skipped again (2)" test "$(status "$D" inbox.skipped_protected)" = 2
check "new target: still not in caching_event_inbox" pg_holds 0 "$P_OTHER"
check "new target: the withdrawn ones not sent again" pg_holds 0 "$NOTE" "$V1"
check "new target: the rest stays (103 rows)" test "$(pg_count)" = 103
# An imported event (source import) is forwarded like any other: the
# contract's source_class takes every source the box stores from.
echo "{\"kind\":1,\"created_at\":$((now - 54)),\"content\":\"imported\"}" |
	sign "$T/k3.key" >"$T/imported.json"
check "import: an event imported" cboxctl -d "$D" import "$T/imported.json"
IMP=$(jid <"$T/imported.json")
imported() { [ "$(pg_sql "SELECT source_class FROM caching_event_inbox WHERE event_id = '$IMP'")" = import ]; }
check "import: it reaches caching_event_inbox with source_class import" \
    wait_for 60 imported
check "import: no dead letter" test "$(status "$D" inbox.rejected)" = 0
stop_daemon

finish
