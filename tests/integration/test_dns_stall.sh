#!/usr/bin/env bash
# test_dns_stall.sh — a slow DNS answer or a black-holed address does not
# stall the other relays. cacheboxd gets three bootstrap relays: slow.test
# (a relaysim relay whose name fake_dns.mjs holds unanswered until told),
# fast.test (another relaysim relay, answered at once) and a loopback
# listener that accepts TCP and never answers the upgrade. dns.servers
# points c-ares at fake_dns, so neither name resolves any other way.
#
# Shown, by the order of events and not by a clock: the fast relay opens
# and delivers while slow.test is still unanswered (fake_dns answers it
# only when the test says so, after that), with the slow relay still
# resolving and the black hole not open; then, once the answer is out, the
# slow relay opens and delivers too, and the black hole never opens.
# Prints the timings seen.
# Exit 77 (skip) when node, python3 or the ws package is missing.
. "$(dirname "$0")/lib.sh"
tests=${CACHEBOX_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
command -v node >/dev/null || { echo "skip: no node"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
[ -d "$tests/node_modules/ws" ] || { echo "skip: run npm ci in tests/"; exit 77; }
export NODE_PATH=$tests/node_modules
. "$tests/relaysim/relaysim.sh"

WAIT_MS=120000		# give up waiting for the fast relay after (a cap, not a bound)

now_ms() { date +%s%3N; }

# --- peers -------------------------------------------------------------------
cat >"$T/sim.json" <<'JSON'
{"dataset": {"authors": 5, "events": 200, "seed": 7},
 "relays": [{"name": "slow", "url_host": "slow.test"},
            {"name": "fast", "url_host": "fast.test"}]}
JSON
relaysim_start "$T/sim.json" || exit 1
PIDS+=("$RELAYSIM_PID")
slow=$(relaysim_url slow)
fast=$(relaysim_url fast)
root=$(relaysim_q root)

# The black hole: accepts connections, reads nothing, answers nothing.
node -e 'const s = require("net").createServer(() => {});
  s.listen(0, "127.0.0.1", () => console.log(s.address().port))' >"$T/hole" &
PIDS+=($!)
wait_for 10 test -s "$T/hole" || { echo "FAIL: black hole did not listen"; exit 1; }
hole=ws://127.0.0.1:$(head -n1 "$T/hole")

node "$(dirname "$0")/fake_dns.mjs" slow.test=127.0.0.1@hold \
    fast.test=127.0.0.1@0 >"$T/dns.log" 2>"$T/dns.err" &
DNSPID=$!
PIDS+=($DNSPID)
wait_for 10 grep -q '"ready":true' "$T/dns.log" ||
	{ echo "FAIL: fake_dns did not start"; cat "$T/dns.err"; exit 1; }
dnsport=$(head -n1 "$T/dns.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["port"])')
echo "relays: slow $slow, fast $fast, hole $hole; dns 127.0.0.1:$dnsport"

# relay_get FILE HOSTPART FIELD: FIELD of the relay whose url has HOSTPART.
relay_get() {
	python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rs = [r for r in doc.get("relays", []) if sys.argv[2] in r["url"]]
print(rs[0][sys.argv[3]] if rs else "absent")
PY
}
answered() { grep -q "\"a\":\"$1\"" "$T/dns.log"; }
asked() { grep -q "\"q\":\"$1\"" "$T/dns.log"; }

# --- the daemon ----------------------------------------------------------------
D=$T/state
t0=$(now_ms)
start_daemon -d "$D" --set dns.servers=127.0.0.1:$dnsport \
    --set relays.bootstrap="$slow,$fast,$hole" --set follow.roots="$root" \
    --set backfill.pace_ms=0 --set http.listen=127.0.0.1:0 \
    --set log.level=debug

# Poll until the fast relay is open with events; slow.test stays held.
t_fast=
while :; do
	if st; then
		t=$(now_ms)
		# Read fake_dns' log after the status: no answer in the log now
		# means none had been sent when the status was taken.
		slow_answered=no; answered slow.test && slow_answered=yes
		if [ "$(relay_get "$T/st.json" fast.test state)" = open ] &&
		    [ "$(relay_get "$T/st.json" fast.test events)" -gt 0 ]; then
			t_fast=$((t - t0))
			break
		fi
	fi
	kill -0 "$DPID" 2>/dev/null || break
	[ $(($(now_ms) - t0)) -gt $WAIT_MS ] && break
	sleep 0.1
done
cp "$T/st.json" "$T/at_fast.json"
fast_events=$(relay_get "$T/at_fast.json" fast.test events)
slow_state=$(relay_get "$T/at_fast.json" slow.test state)
hole_state=$(relay_get "$T/at_fast.json" 127.0.0.1 state)
store_events=$(json_get "$T/at_fast.json" store.events 2>/dev/null || echo 0)
echo "at ${t_fast:-never} ms: fast events $fast_events, store.events" \
    "$store_events, slow $slow_state, hole $hole_state," \
    "slow.test answered: $slow_answered"

check "fast relay open with events while slow.test was unanswered" \
    test -n "$t_fast" -a "$slow_answered" = no
check "store.events > 0 by then" test "$store_events" -gt 0
check "slow.test was asked through dns.servers" asked slow.test
check "fast.test was asked through dns.servers" asked fast.test
# "resolving" where the relay reports the DNS stage, else "connecting".
check "slow relay still resolving then (got $slow_state)" \
    test "$slow_state" = resolving -o "$slow_state" = connecting
# Connecting or upgrading, or in backoff after WS_OPEN_TIMEOUT_MS.
check "black hole not open then (got $hole_state)" \
    test "$hole_state" = connecting -o "$hole_state" = upgrading -o \
    "$hole_state" = backoff

# --- the slow relay catches up ----------------------------------------------------
kill -USR1 "$DNSPID"
t_rel=$(($(now_ms) - t0))
t_slow=
while [ $(($(now_ms) - t0)) -lt $((t_rel + WAIT_MS)) ]; do
	if st &&
	    [ "$(relay_get "$T/st.json" slow.test state)" = open ] &&
	    [ "$(relay_get "$T/st.json" slow.test events)" -gt 0 ]; then
		t_slow=$(($(now_ms) - t0))
		break
	fi
	kill -0 "$DPID" 2>/dev/null || break
	sleep 0.2
done
echo "fake_dns, slow.test (ms on its own clock):" $(python3 - "$T/dns.log" <<'PY'
import json, sys
for d in map(json.loads, open(sys.argv[1])):
    if "slow.test" in (d.get("q"), d.get("a")):
        print("%s %s/%s@%d;" % ("asked" if "q" in d else "answered",
              d["type"], d["proto"], d["ms"]))
PY
)
echo "slow.test released at $t_rel ms; slow relay open with" \
    "$(relay_get "$T/st.json" slow.test events) events at ${t_slow:-never} ms"
check "slow relay opens and delivers after its answer" test -n "$t_slow"
check "fake_dns answered slow.test only after the release" python3 - "$T/dns.log" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rel = next(i for i, d in enumerate(rows) if d.get("released"))
sys.exit(0 if all(i > rel for i, d in enumerate(rows) if d.get("a") == "slow.test") else 1)
PY
hole_state=$(relay_get "$T/st.json" 127.0.0.1 state)
check "black hole never opened (now $hole_state)" test "$hole_state" != open
check "daemon still running" kill -0 "$DPID"

kill -TERM "$DPID"; rc=0; wait "$DPID" || rc=$?
check "SIGTERM: clean exit 0" test "$rc" -eq 0
[ "$fails" -eq 0 ] || { echo "--- daemon log (tail)"; tail -n 60 "$T/d.log";
	echo "--- fake_dns log"; cat "$T/dns.log"; }
finish
