#!/bin/bash
# test_relay_pool.sh — the relay pool (src/relay) against tests/relaysim,
# driven by prog_relay: a plain relay (events + EOSE), NIP-42 required
# (CLOSED auth-required, AUTH, REQ resent once), CLOSED rate-limited (REQs
# paused, then resent), a connection dropped mid-page (backoff, reconnect,
# REQ resent), bad signatures and malformed JSON (counted, connection
# kept), a black-holed relay that does not stall the others, and the
# relays table rows written by the pool.
# Exit 77 (skip) when node, the ws package or prog_relay is missing.
. "$(dirname "$0")/lib.sh"
tests=$CACHEBOX_TESTS
prog=$CACHEBOX_BUILD/tests/integration/prog_relay

command -v node >/dev/null || { echo "skip: no node"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
[ -d "$tests/node_modules/ws" ] || { echo "skip: run npm ci in tests/"; exit 77; }
[ -x "$prog" ] || { echo "skip: $prog not built"; exit 77; }

# expect LINE KEY=VALUE...: every pair appears in the relay's report line.
expect() {
	local line=$1 what=$2 kv; shift 2
	for kv in "$@"; do
		case " $line " in
		*" $kv "*) ;;
		*) fail "$what: wanted $kv in: $line"; return ;;
		esac
	done
	ok "$what"
}
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }

cat >"$T/cfg.json" <<EOF
{"dataset": {"authors": 5, "events": 200, "seed": 7},
 "cache_dir": "$T/cache",
 "relays": [
  {"name": "plain", "max_subscriptions": 4},
  {"name": "authr", "auth": true},
  {"name": "rl", "rate_limit": {"first": 1}},
  {"name": "drop", "drop_mid_page": {"first": 1, "after": 10}},
  {"name": "bad", "bad_sig": {"every": 5}, "malformed_json": {"every": 3}}
 ]}
EOF
NODE_PATH=$tests/node_modules node "$tests/relaysim/relaysim.mjs" \
    --config "$T/cfg.json" >"$T/ready" 2>"$T/sim.log" &
PIDS+=("$!")
for _ in $(seq 300); do
	grep -q '"ready"' "$T/ready" 2>/dev/null && break
	sleep 0.1
done
grep -q '"ready"' "$T/ready" || { fail "relaysim"; cat "$T/sim.log"; finish; exit 1; }
url() {
	python3 -c 'import json,sys
for r in json.loads(open(sys.argv[1]).readline())["relays"]:
    if r["name"] == sys.argv[2]: print(r["url"])' "$T/ready" "$1"
}
plain=$(url plain); authr=$(url authr); rl=$(url rl); drop=$(url drop)
badr=$(url bad)

# A black hole: accepts TCP, never answers the upgrade.
node -e 'const s=require("net").createServer(()=>{});s.listen(0,"127.0.0.1",
  ()=>console.log(s.address().port))' >"$T/hole" &
PIDS+=("$!")
for _ in $(seq 50); do [ -s "$T/hole" ] && break; sleep 0.1; done
hole="ws://127.0.0.1:$(head -n1 "$T/hole")"

mkdir -p "$T/state"
# -n 4: done when the four real relays finished; the hole cannot.
rc=0
$EMU "$prog" -k -t 25 -b 200 -n 4 -d "$T/state" -f '{"kinds":[1],"limit":40}' \
    "$hole" "$plain" "$rl" "$drop" "$badr" >"$T/out" 2>"$T/prog.log" || rc=$?
# NIP-42 on its own, without NIP-11: the REQ then goes out as the
# connection opens, ahead of the challenge, so it is refused first every
# time. (With a NIP-11 fetch in flight REQs wait for it, and the AUTH may
# be done before the REQ leaves: both orders are correct, only this one is
# certain.)
$EMU "$prog" -k -N -t 25 -b 200 -f '{"kinds":[1],"limit":40}' "$authr" \
    >>"$T/out" 2>>"$T/prog.log" || fail "auth run: prog_relay exit $?"
cat "$T/out"
[ "$rc" -eq 0 ] && ok "four relays finished while one is black-holed" ||
    fail "prog_relay exit $rc"
line() { grep "^relay $1 " "$T/out" || true; }

h=$(line "$hole")
case "$(field "$h" state)" in
connecting|upgrading) ok "black hole still opening: $(field "$h" state)" ;;
*) fail "black hole state: $h" ;;
esac
expect "$(line "$plain")" "plain: events and EOSE" state=open eose=1 \
    events=40 valid=40 invalid=0 reqs=1 bad=0
expect "$(line "$authr")" "auth: CLOSED auth-required, AUTH, REQ resent" \
    state=open eose=1 valid=40 authenticated=1 auth=1 resent=1 reqs=2
expect "$(line "$rl")" "rate-limited: paused and resent" state=open eose=1 \
    valid=40 resent=1 reqs=2
expect "$(line "$drop")" "dropped mid-page: reconnected and resent" \
    state=open eose=1 resent=1 reqs=2
# 40 events asked: every 5th has a bad signature; malformed frames counted
# as protocol errors; the connection stays up (failures=0).
l=$(line "$badr")
expect "$l" "bad relay: connection kept" state=open eose=1 failures=0
[ "$(field "$l" invalid)" -ge 1 ] && [ "$(field "$l" bad)" -gt "$(field "$l" invalid)" ] &&
    ok "bad relay: bad signatures ($(field "$l" invalid)) and malformed frames counted" ||
    fail "bad relay counters: $l"
# Every opening step is a state of its own (no name to resolve, no TLS).
steps=$(sed -n "s|.*relay $plain: \([a-z]*\) -> \([a-z]*\).*|\1>\2|p" "$T/prog.log" |
    tr '\n' ' ')
[ "$steps" = "new>connecting connecting>upgrading upgrading>open " ] &&
    ok "plain relay states: $steps" || fail "plain relay states: '$steps'"
grep -q "drop.*backoff\|open -> backoff" "$T/prog.log" &&
    ok "state log shows the backoff" || fail "no backoff transition logged"

# The relays table holds the states, facts and flushed counters.
python3 - "$T/state/cachebox.db" "$plain" "$drop" "$hole" >"$T/db" <<'PY' ||
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for u in sys.argv[2:]:
    r = db.execute("select state, events, reqs, eose, max_subscriptions, "
                   "supported_nips, nip11_at is not null from relays where url = ?",
                   (u,)).fetchone()
    print(u, *r)
PY
    fail "reading the relays table"
cat "$T/db"
read -r _ st ev rq eo ms nips n11 < <(grep "^$plain " "$T/db") || true
[ "$st" = open ] && [ "$ev" = 40 ] && [ "$rq" = 1 ] && [ "$eo" = 1 ] &&
    [ "$ms" = 4 ] && [ "$n11" = 1 ] &&
    ok "relays row: state, counters and NIP-11 facts" || fail "relays row: $(cat "$T/db")"
read -r _ st _ < <(grep "^$hole " "$T/db") || true
case "$st" in connecting|upgrading) ok "relays row of the hole: $st" ;;
*) fail "hole row state $st" ;; esac

[ "$fails" -eq 0 ] || { echo "prog log:"; tail -40 "$T/prog.log"; }
finish
