#!/bin/bash
# test_relay_faults.sh — the relay pool (src/relay) against relaysim fault
# knobs, one prog_relay_faults scenario at a time, each checked in the C
# driver (pool state and counters) and here against relaysim's own
# counters, the pool's state log and the `relays` table:
#   publish    OK true, duplicate, invalid, publish_reject reasons
#   tls        verified wss (every opening state in order), wrong host name
#              and untrusted CA refused and stored as state + last_error
#   oversized  max_msg_bytes: that connection closed 1009, reconnected
#   fifo       max_subscriptions 2 with 5 subscriptions
#   dead       a frozen relay (SIGSTOP) found dead by dead_ms, reconnected
#   slow       slow answers outlive dead_ms thanks to pongs
#   forged     unrequested events and wrong ids
# then prints the heap held by an idle wss (and ws) relay through the pool.
# Exit 77 (skip) when node, openssl, python3, the ws package or the driver
# is missing.
. "$(dirname "$0")/lib.sh"
tests=$CACHEBOX_TESTS
prog=$CACHEBOX_BUILD/tests/integration/prog_relay_faults

command -v node >/dev/null || { echo "skip: no node"; exit 77; }
command -v openssl >/dev/null || { echo "skip: no openssl"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
[ -d "$tests/node_modules/ws" ] || { echo "skip: run npm ci in tests/"; exit 77; }
[ -x "$prog" ] || { echo "skip: $prog not built"; exit 77; }

use_relaysim
# The relaysim of its own that the dead scenario freezes (SIGSTOP): it
# must be continued before it can take SIGTERM.
frozen=
stop_frozen() {
	[ -n "$frozen" ] || return 0
	kill -CONT "$frozen" 2>/dev/null || true
	kill -TERM "$frozen" 2>/dev/null || true
	wait "$frozen" 2>/dev/null || true
}
trap 'stop_frozen; relaysim_cleanup; cleanup' EXIT
# same WHAT GOT WANT
same() { [ "$2" = "$3" ] && ok "$1: $2" || fail "$1: got '$2', wanted '$3'"; }
stat() { relaysim_q stats "$1" "$2"; }

sh "$tests/relaysim/mkcerts.sh" "$T/certs" >/dev/null 2>&1 ||
    { fail "mkcerts"; finish; exit 1; }
cat >"$T/sim.json" <<'EOF'
{"dataset": {"authors": 5, "events": 200, "seed": 7},
 "tls": {"cert": "certs/localhost.pem", "key": "certs/localhost.key"},
 "relays": [
  {"name": "pubok"},
  {"name": "rejb", "publish_reject": {"reason": "blocked: not here"}},
  {"name": "rejr", "publish_reject": {"first": 1, "reason": "rate-limited: slow down"}},
  {"name": "tlsok", "tls": true},
  {"name": "tlswrong", "tls": {"cert": "certs/wrongname.pem", "key": "certs/wrongname.key"}},
  {"name": "tlsrogue", "tls": {"cert": "certs/untrusted.pem", "key": "certs/untrusted.key"}},
  {"name": "big", "oversized_frame": {"first": 1, "bytes": 200000}},
  {"name": "plain"},
  {"name": "cap2", "max_subscriptions": 2},
  {"name": "slow", "slow_ms": {"per_page": 2500}},
  {"name": "unreq", "unrequested": {"every": 4}},
  {"name": "wrongid", "wrong_id": {"every": 5}}
 ]}
EOF
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
RELAYSIM_CA=$T/certs/ca.pem
targets=()
for n in pubok rejb rejr tlsok tlswrong tlsrogue big plain cap2 slow unreq wrongid; do
	u=$(relaysim_url "$n") || { fail "relaysim_url $n"; finish; exit 1; }
	targets+=("$n=$u")
done

# A relaysim of its own for the relay that gets frozen.
cat >"$T/frozen.json" <<'EOF'
{"dataset": {"authors": 5, "events": 200, "seed": 7}, "relays": [{"name": "frozen"}]}
EOF
node "$tests/relaysim/relaysim.mjs" --config "$T/frozen.json" \
    >"$T/frozen.ready" 2>"$T/frozen.err" &
frozen=$!
for _ in $(seq 300); do
	grep -q '"ready":true' "$T/frozen.ready" 2>/dev/null && break
	sleep 0.1
done
grep -q '"ready":true' "$T/frozen.ready" ||
    { fail "frozen relaysim"; cat "$T/frozen.err"; finish; exit 1; }
fq() { node "$tests/relaysim/query.mjs" --ready "$T/frozen.ready" "$@"; }
u=$(fq url frozen) || { fail "url of the frozen relaysim"; finish; exit 1; }
targets+=("frozen=$u")

mkdir -p "$T/state"
# run SCENARIO [ARGS]: the driver's checks count here too.
run() {
	local sc=$1; shift
	echo "# scenario $sc"
	local rc=0
	$EMU "$prog" -c "$RELAYSIM_CA" -d "$T/state" "$@" "$sc" "${targets[@]}" \
	    >"$T/$sc.out" 2>"$T/$sc.log" || rc=$?
	grep -E '^(ok|not ok) - ' "$T/$sc.out" || true
	passes=$((passes + $(grep -c '^ok - ' "$T/$sc.out" || true)))
	fails=$((fails + $(grep -c '^not ok - ' "$T/$sc.out" || true)))
	[ $rc -eq 0 ] || { fail "$sc: driver exit $rc"; tail -20 "$T/$sc.log"; }
}
# The state transitions the pool logged for one URL, as "a>b c>d ...".
steps() {
	sed -n "s|.*relay $2: \([a-z]*\) -> \([a-z]*\).*|\1>\2|p" "$T/$1.log" |
	    tr '\n' ' ' | sed 's/ $//'
}
factv() { sed -n "s/^fact $2 $3=//p" "$T/$1.out"; }
url() { local t; for t in "${targets[@]}"; do [ "${t%%=*}" = "$1" ] && echo "${t#*=}"; done; }

run publish
same "pubok accepted/duplicate/rejected" \
    "$(stat pubok events_accepted)/$(stat pubok events_duplicate)/$(stat pubok events_rejected)" 1/1/1
same "rejb rejected/accepted" "$(stat rejb events_rejected)/$(stat rejb events_accepted)" 1/0
same "rejr rejected/accepted" "$(stat rejr events_rejected)/$(stat rejr events_accepted)" 1/1

run tls
same "tlsok states" "$(steps tls "$(url tlsok)")" \
    "new>resolving resolving>connecting connecting>tls tls>upgrading upgrading>open"
same "tlswrong states" "$(steps tls "$(url tlswrong)")" \
    "new>resolving resolving>connecting connecting>tls tls>backoff"
same "tlsrogue states" "$(steps tls "$(url tlsrogue)")" \
    "new>resolving resolving>connecting connecting>tls tls>backoff"
python3 - "$T/state/cachebox.db" "$(url tlsok)" "$(url tlswrong)" \
    "$(url tlsrogue)" >"$T/tls.db" <<'PY' || fail "reading the relays table"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for u in sys.argv[2:]:
    st, err, fl = db.execute("select state, coalesce(last_error, '-'), failures "
                             "from relays where url = ?", (u,)).fetchone()
    print(f"{st}|{err}|{fl}")
PY
same "relays row tlsok" "$(sed -n 1p "$T/tls.db")" "open|-|0"
same "relays row tlswrong" "$(sed -n 2p "$T/tls.db")" "backoff|host name mismatch|1"
same "relays row tlsrogue" "$(sed -n 3p "$T/tls.db")" "backoff|certificate not trusted|1"
same "tlsok served the REQ" "$(stat tlsok reqs)/$(stat tlsok eose_sent)" 1/1

relaysim_q stats plain --reset >/dev/null || true
run oversized
same "big: oversized sent/connections/reqs" \
    "$(stat big oversized_sent)/$(stat big connections)/$(stat big reqs)" 1/2/2
same "plain: one connection, one REQ" "$(stat plain connections)/$(stat plain reqs)" 1/1
same "big states" "$(steps oversized "$(url big)")" \
    "new>connecting connecting>upgrading upgrading>open open>backoff backoff>connecting connecting>upgrading upgrading>open"
same "plain states" "$(steps oversized "$(url plain)")" \
    "new>connecting connecting>upgrading upgrading>open"

run fifo
same "cap2: reqs/closes/max_open_subs/closed_sent" \
    "$(stat cap2 reqs)/$(stat cap2 closes)/$(stat cap2 max_open_subs)/$(stat cap2 closed_sent)" \
    5/5/2/0

run dead -S "$frozen"
grep -q "relay $(url frozen): open -> backoff (dead peer: silent for" "$T/dead.log" &&
    ok "dead peer logged as the reason of open -> backoff" ||
    fail "no dead-peer transition in the log"
same "frozen: connections/reqs/eose_sent" \
    "$(fq stats frozen connections)/$(fq stats frozen reqs)/$(fq stats frozen eose_sent)" 2/2/2

run slow
same "slow: one connection, one REQ" "$(stat slow connections)/$(stat slow reqs)" 1/1

run forged
same "unreq: unrequested events delivered = sent" \
    "$(factv forged unreq unrequested_sent)" "$(stat unreq unrequested_sent)"
same "wrongid: invalid counted = forged sent" \
    "$(factv forged wrongid forged_sent)" "$(stat wrongid forged_sent)"

# Heap held by an idle open relay through the pool (relay, ws, TLS), ten
# at a time; the goal is 64 KiB for wss. mallinfo2 reads 0 under ASan.
relay_prog=$CACHEBOX_BUILD/tests/integration/prog_relay
memcheck() {
	local out per
	out=$($EMU "$relay_prog" -N -c "$RELAYSIM_CA" -M 10 "$2" 2>/dev/null || true)
	echo "$out"
	per=$(sed -n 's/.* heap bytes, \([0-9]*\) per relay.*/\1/p' <<<"$out")
	if [ -z "$per" ]; then
		fail "$1: no figure"
	elif [ "$per" -le "$3" ]; then
		ok "$1: $per bytes per idle relay (limit $3)"
	else
		fail "$1: $per bytes per idle relay, over $3"
	fi
}
if [ -x "$relay_prog" ]; then
	memcheck "wss heap" "$(url tlsok)" 65536
	memcheck "ws heap" "$(url plain)" 65536
fi

finish
