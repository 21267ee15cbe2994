#!/usr/bin/env bash
# The NIP-01 uplink against a real third-party relay from npm
# (@nostr-relay/core, npm_relay.mjs) and against relaysim and small peers
# for what a good relay does not do:
#  - every stored event reaches the npm relay; it holds each one;
#  - the npm relay killed in the middle of forwarding while ingest goes
#    on, then started again at the same URL: everything arrives;
#  - "blocked:" and "invalid:" OKs become dead letters with the relay's
#    reason, exactly the refused ones; `uplink retry` sends them again;
#  - "rate-limited:" pauses and resends: nothing is lost, nothing dead;
#  - a relay that requires NIP-42 AUTH gets it, signed by the box key;
#  - a relay that never answers OK: visible in the status, no row lost;
#  - a relay that drops the connection in the middle of a window: the
#    window is sent again and every event arrives once;
#  - a relay that refuses the box's AUTH: the uplink pauses, saying so,
#    and nothing is dead;
#  - NIP-70 and answers the uplink can never get past: another author's
#    protected event is never sent (new, or queued again for a new
#    target) and is counted; the box's own goes out; "auth-required:"
#    after an accepted AUTH and "restricted:" dead-letter exactly those
#    events with the relay's words, each sent at most twice, and the rest
#    are delivered; a kind 5 and a kind 62 are forwarded, an ephemeral
#    event is not.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "skip: no node"; exit 77; }
for m in ws @nostr-relay/core @nostr-relay/event-repository-sqlite \
    better-sqlite3/build/Release/better_sqlite3.node; do
	[ -e "$CACHEBOX_TESTS/node_modules/$m" ] ||
		{ echo "skip: $m missing: run npm ci in tests/"; exit 77; }
done

BASE=(--set relays.bootstrap= --set follow.roots= --set http.listen=127.0.0.1:0
	--set log.level=debug)

# node_start NAME ARGS...: start a node peer; its url lands in URL_NAME.
node_start() {
	local name=$1; shift
	# Emptied here, not only by the background job's redirection: a peer
	# started again would otherwise be found "ready" by its old line.
	: >"$T/$name.ready"
	node "$@" >"$T/$name.ready" 2>"$T/$name.log" &
	PIDS+=("$!")
	eval "PID_$name=$!"
	wait_for 120 grep -q '"ready"' "$T/$name.ready" || {
		echo "peer $name did not start"; cat "$T/$name.log"; exit 1; }
	eval "URL_$name=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$T/$name.ready" | head -1)"
	eval "HTTP_$name=$(sed -n 's/.*"http":"\([^"]*\)".*/\1/p' "$T/$name.ready" | head -1)"
}
rejected_is() { [ "$(status "$1" inbox.rejected)" = "$2" ]; }
forwarded_over() { [ "$(status "$1" inbox.forwarded)" -gt "$2" ]; }
# relay_holds_all DIR URL: the relay at URL holds every event stored in DIR.
relay_holds_all() {
	local_ids "$1" >"$T/local.ids"
	node "$HERE/uplink_peer.mjs" query "$2" "$T/local.ids" >"$T/relay.ids" &&
		[ -s "$T/local.ids" ] && cmp -s "$T/local.ids" "$T/relay.ids"
}
http_get() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' "$1"; }
peer_stat() { http_get "$1/stats" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }
peer_stat_ge() { [ "$(peer_stat "$1" "$2")" -ge "$3" ]; }

# --- 1. the npm relay gets everything ---------------------------------------------
RPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
NPM_RELAY_PORT=$RPORT node_start npm "$HERE/npm_relay.mjs" "$T/relay.db"
D=$T/npm
fill "$D" 1000
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$URL_npm"
check "npm relay: inbox drains" wait_for 60 pending_is "$D" 0
check "npm relay: holds every stored event" relay_holds_all "$D" "$URL_npm"
check "status: driver nostr" test "$(status "$D" uplink.driver)" = nostr
check "status: forwarded 1000" test "$(status "$D" inbox.forwarded)" = 1000
check "status: no error" test "$(status "$D" uplink.last_error)" = null
# The relays table is written with ingest's next batch, not with each frame:
# the role is waited for, not read at once.
uplink_role() { test "$(python3 -c "import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute('SELECT role FROM relays WHERE url = ?', (sys.argv[2],)).fetchone(); print(r[0] if r else '')" "$D/cachebox.db" "$URL_npm")" = uplink; }
check "relays table: the owner's relay has role uplink" wait_for 30 uplink_role

# --- 2. the npm relay killed mid-forwarding, ingest goes on ------------------------
stop_daemon
fill "$D" 2000 500 0 2
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$URL_npm"
check "forwarding under way" wait_for 60 forwarded_over "$D" 1100
kill -9 "$PID_npm"; wait "$PID_npm" 2>/dev/null || true
fill "$D" 500 100 10 3
check "relay down: reason in status" wait_for 20 error_has "$D" "connect\|lost\|refused\|no OK"
check "relay down: rows kept" test "$(status "$D" inbox.pending)" -gt 0
check "relay down: not idle" test "$(status "$D" idle)" = false
NPM_RELAY_PORT=$RPORT node_start npm "$HERE/npm_relay.mjs" "$T/relay.db"
check "relay back: inbox drains" wait_for 120 pending_is "$D" 0
check "relay back: holds all 3500 events" relay_holds_all "$D" "$URL_npm"
check "ingest went on: 3500 stored" test "$(local_ids "$D" | wc -l)" = 3500
stop_daemon

# --- 3. rejections: dead letters with the relay's reason -----------------------------
cat >"$T/sim.json" <<EOF
{"dataset": {"authors": 2, "events": 10, "seed": 7},
 "relays": [
  {"name": "blocky", "subset": "none",
   "publish_reject": {"every": 5, "reason": "blocked: test says no"}},
  {"name": "picky", "subset": "none",
   "publish_reject": {"every": 1, "reason": "invalid: test says bad"}},
  {"name": "slow", "subset": "none",
   "publish_reject": {"first": 3, "reason": "rate-limited: slow down"}},
  {"name": "authy", "subset": "none", "auth": "required"},
  {"name": "authno", "subset": "none", "auth": "required",
   "auth_pubkeys": ["$(printf '0%.0s' $(seq 64))"]}]}
EOF
node "$CACHEBOX_TESTS/relaysim/relaysim.mjs" --config "$T/sim.json" >"$T/sim.ready" 2>"$T/sim.log" &
PIDS+=("$!")
wait_for 60 grep -q '"ready"' "$T/sim.ready" || { echo "relaysim did not start"; cat "$T/sim.log"; exit 1; }
sim_url() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['relays']; print([x for x in r if x['name']==sys.argv[2]][0][sys.argv[3]])" "$T/sim.ready" "$1" "$2"; }
sim_stat() { http_get "$(sim_url "$1" http)/stats" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }

D=$T/blocky
fill "$D" 1000 500 0 11
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$(sim_url blocky url)"
check "blocked: inbox drains" wait_for 60 pending_is "$D" 0
check "blocked: exactly every 5th refused (200 dead)" test "$(status "$D" inbox.rejected)" = 200
check "blocked: 800 forwarded" test "$(status "$D" inbox.forwarded)" = 800
check "blocked: relay accepted 800" test "$(sim_stat blocky events_accepted)" = 800
cboxctl -d "$D" uplink deadletter --json >"$T/dl.json"
check "blocked: reason kept" test "$(json_get "$T/dl.json" dead.0.reason)" = "blocked: test says no"
check "blocked: dead letter total" test "$(json_get "$T/dl.json" total)" = 200
check "blocked: one listing is bounded" test "$(python3 -c "import json; print(len(json.load(open('$T/dl.json'))['dead']))")" = 100
seq1=$(json_get "$T/dl.json" dead.0.seq)
check "retry one: 1 moved" test "$(cboxctl -d "$D" uplink retry "$seq1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["retried"])')" = 1
check "retry one: delivered (199 dead)" wait_for 120 rejected_is "$D" 199
check "retry all: 199 moved" test "$(cboxctl -d "$D" uplink retry --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["retried"])')" = 199
# The relay refuses every 5th EVENT it receives: 1001 were sent before,
# so of the next 199 those numbered 1005, 1010, ..., 1200 are refused.
check "retry all: every 5th refused again (40 dead)" wait_for 120 rejected_is "$D" 40
check "retry all: inbox drains" wait_for 120 pending_is "$D" 0
stop_daemon

D=$T/picky
fill "$D" 50 50 0 12
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$(sim_url picky url)"
check "invalid: all 50 dead" wait_for 120 rejected_is "$D" 50
check "invalid: none pending" pending_is "$D" 0
cboxctl -d "$D" uplink deadletter --json >"$T/dl.json"
check "invalid: reason kept" test "$(json_get "$T/dl.json" dead.0.reason)" = "invalid: test says bad"
check "invalid: dead letters do not keep the box busy" wait_for 30 idle "$D"
stop_daemon

D=$T/slow
fill "$D" 300 300 0 13
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$(sim_url slow url)"
check "rate-limited: inbox drains" wait_for 60 pending_is "$D" 0
check "rate-limited: nothing dead" test "$(status "$D" inbox.rejected)" = 0
check "rate-limited: relay accepted all 300" test "$(sim_stat slow events_accepted)" = 300
check "rate-limited: the pause was reported" grep -q "rate-limited the uplink: rate-limited: slow down" "$T/d.log"
stop_daemon

D=$T/authy
fill "$D" 100 100 0 16
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$(sim_url authy url)"
check "auth-required: inbox drains" wait_for 60 pending_is "$D" 0
check "auth-required: relay accepted all 100" test "$(sim_stat authy events_accepted)" = 100
check "auth-required: the box authenticated with its key" test "$(sim_stat authy auth_ok)" -ge 1
check "auth-required: no failed AUTH" test "$(sim_stat authy auth_fail)" = 0
check "auth-required: nothing dead" test "$(status "$D" inbox.rejected)" = 0
stop_daemon

# Our AUTH refused: every EVENT gets "auth-required:"; nothing the relay
# says is about an event, so the uplink waits and says why.
D=$T/authno
fill "$D" 20 20 0 18
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$(sim_url authno url)"
check "AUTH refused: last_error says so" wait_for 60 error_has "$D" "relay wants AUTH and refused ours"
check "AUTH refused: the relay refused it" test "$(sim_stat authno auth_fail)" -ge 1
check "AUTH refused: nothing dead" test "$(status "$D" inbox.rejected)" = 0
check "AUTH refused: all 20 still pending" pending_is "$D" 20
stop_daemon

# --- 4. a relay that never answers OK ----------------------------------------------
node_start silent "$HERE/uplink_peer.mjs" silent
D=$T/silent
fill "$D" 50 50 0 14
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$URL_silent"
check "no OK: reason in status" wait_for 120 error_has "$D" "no OK"
check "no OK: all 50 still pending" pending_is "$D" 50
check "no OK: nothing dead" test "$(status "$D" inbox.rejected)" = 0
check "no OK: resent after reconnecting" wait_for 120 peer_stat_ge "$HTTP_silent" connections 2
stop_daemon

# --- 5. a relay that drops the connection mid-window ---------------------------------
node_start closer "$HERE/uplink_peer.mjs" close-after 60
D=$T/closer
fill "$D" 1000 500 0 15
start_daemon -d "$D" "${BASE[@]}" --set "uplink.url=$URL_closer"
check "dropped mid-window: inbox drains" wait_for 60 pending_is "$D" 0
http_get "$HTTP_closer/ids" | sort >"$T/peer.ids"
local_ids "$D" >"$T/local.ids"
check "dropped mid-window: every event arrived" cmp -s "$T/local.ids" "$T/peer.ids"
check "dropped mid-window: stored once each (1000)" test "$(peer_stat "$HTTP_closer" stored)" = 1000
check "dropped mid-window: the loss was reported" grep -q "connection lost" "$T/d.log"
check "dropped mid-window: error cleared" test "$(status "$D" uplink.last_error)" = null
stop_daemon

# --- 6. NIP-70, and answers the uplink cannot get past ------------------------
# hexkey FILE BYTE: a secret key file (0600) of 31 zero bytes after BYTE, +1.
hexkey() { printf '%s%060d01\n' "$2" 0 >"$1"; chmod 600 "$1"; }
sign() { cboxctl event sign --key "$1"; }
D=$T/gate
fill "$D" 40 40 0 19
pubkeys() {
	python3 - "$D/cachebox.db" <<'PY'
import sqlite3, sys
for (p,) in sqlite3.connect(sys.argv[1]).execute(
        "SELECT DISTINCT lower(hex(pubkey)) FROM events ORDER BY 1"):
    print(p)
PY
}
mapfile -t PKS < <(pubkeys)
check "four authors filled" test "${#PKS[@]}" = 4
node_start gate "$HERE/uplink_peer.mjs" auth-gate "${PKS[0]}" "${PKS[1]}"
start_daemon -d "$D" "${BASE[@]}"
check "gate: the box key exists" wait_for 30 test -S "$D/cacheboxd.sock" -a -s "$D/box.key"
cboxctl -d "$D" config set uplink.url "$URL_gate" >/dev/null
hexkey "$T/other.key" 7a
hexkey "$T/k3.key" 7b
hexkey "$T/k4.key" 7c
now=$(date +%s)
echo "{\"kind\":1,\"created_at\":$((now - 60)),\"tags\":[[\"-\"]],\"content\":\"protected, not the box's\"}" |
	sign "$T/other.key" >"$T/p_other.jsonl"
echo "{\"kind\":1,\"created_at\":$((now - 59)),\"tags\":[[\"-\"]],\"content\":\"protected, the box's own\"}" |
	sign "$D/box.key" >"$T/p_box.jsonl"
{
	echo "{\"kind\":5,\"created_at\":$((now - 58)),\"tags\":[[\"e\",\"$(printf 'ab%.0s' $(seq 32))\"]],\"content\":\"\"}" | sign "$T/k3.key"
	echo "{\"kind\":62,\"created_at\":$((now - 57)),\"tags\":[[\"relay\",\"ALL_RELAYS\"]],\"content\":\"\"}" | sign "$T/k4.key"
	echo "{\"kind\":20001,\"created_at\":$((now - 56)),\"content\":\"ephemeral\"}" | sign "$T/k3.key"
} >"$T/kinds.jsonl"
jid() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[int(sys.argv[2])])["id"])' "$1" "${2:-0}"; }
P_OTHER=$(jid "$T/p_other.jsonl"); P_BOX=$(jid "$T/p_box.jsonl")
K5=$(jid "$T/kinds.jsonl" 0); K62=$(jid "$T/kinds.jsonl" 1); EPH=$(jid "$T/kinds.jsonl" 2)
cat "$T/p_other.jsonl" "$T/p_box.jsonl" "$T/kinds.jsonl" >"$T/gate.jsonl"
cboxctl -d "$D" import "$T/gate.jsonl" >/dev/null
check "gate: 44 stored (the ephemeral event is not)" test "$(status "$D" store.events)" = 44
check "gate: inbox drains" wait_for 60 pending_is "$D" 0
http_get "$HTTP_gate/received" | sort >"$T/gate.received"
http_get "$HTTP_gate/ids" | sort >"$T/gate.ids"
check "NIP-70: another author's protected event never sent" bash -c "! grep -qx '$P_OTHER' '$T/gate.received'"
check "NIP-70: the relay saw no protected event of another key" test "$(peer_stat "$HTTP_gate" protected_foreign)" = 0
check "NIP-70: counted as skipped (1)" test "$(status "$D" inbox.skipped_protected)" = 1
check "NIP-70: the box's own protected event delivered" grep -qx "$P_BOX" "$T/gate.ids"
http_get "http://127.0.0.1:$(cat "$D/http.port")/metrics" >"$T/gate.metrics"
check "NIP-70: skipped on /metrics" grep -qx 'cachebox_inbox_skipped_protected_total 1' "$T/gate.metrics"
check "kind 5 forwarded" grep -qx "$K5" "$T/gate.ids"
check "kind 62 forwarded" grep -qx "$K62" "$T/gate.ids"
check "ephemeral event not forwarded" bash -c "! grep -qx '$EPH' '$T/gate.received'"
check "gate: the box authenticated" peer_stat_ge "$HTTP_gate" auth_ok 1
check "gate: 20 dead letters (auth-required after AUTH, restricted)" test "$(status "$D" inbox.rejected)" = 20
check "gate: the rest delivered (20 + 3)" test "$(peer_stat "$HTTP_gate" stored)" = 23
FWD=$(status "$D" inbox.forwarded); MAXF=$(peer_stat "$HTTP_gate" max_frames)
check "gate: forwarded 23 (counted $FWD)" test "$FWD" = 23
# The new target's queue-everything pass and the sending never overlap: a
# row delivered before the pass reached its event would be queued again.
check "gate: nothing delivered twice" test "$(peer_stat "$HTTP_gate" duplicates)" = 0
check "gate: each event sent at most twice, the pool's one resend (at most $MAXF)" test "$MAXF" -le 2
check "gate: no pause, no last_error" test "$(status "$D" uplink.last_error)" = null
cboxctl -d "$D" uplink deadletter --json >"$T/dl.json"
reasons() { python3 -c 'import json,sys; [print(r) for r in sorted({d["reason"] for d in json.load(open(sys.argv[1]))["dead"]})]' "$T/dl.json"; }
check "gate: dead letters carry the relay's words" test "$(reasons | tr '\n' '|')" = \
	"auth-required: members only, and this author is not one|restricted: this author may not publish here|"
# A new target queues the whole store again: the protected event of
# another author is skipped (and counted) again.
node_start gate2 "$HERE/uplink_peer.mjs" auth-gate "${PKS[0]}" "${PKS[1]}"
cboxctl -d "$D" config set uplink.url "$URL_gate2" >/dev/null
check "new target: inbox drains" wait_for 60 pending_is "$D" 0
check "new target: skipped again (2)" test "$(status "$D" inbox.skipped_protected)" = 2
http_get "$HTTP_gate2/received" >"$T/gate2.received"
check "new target: never sent there either" bash -c "! grep -qx '$P_OTHER' '$T/gate2.received'"
check "new target: the rest delivered (23)" test "$(peer_stat "$HTTP_gate2" stored)" = 23
stop_daemon

finish
