#!/usr/bin/env bash
# test_relay_interop.sh — the box's own relay (relay.listen) against
# independent clients from npm, on a generated store of 3,000 signed
# events (prog_relayd): nostr-tools (NIP-11 fetchRelayInformation,
# SimplePool.querySync for filters of every shape, SimplePool.subscribe
# with live delivery of an event a root publishes, nip77 NegentropySync
# from an empty set), nostr-fetch fetchAllEvents over the whole store, and
# raw REQs checked in NIP-01 order; the expected answers come from the
# dataset file and relaysim's matcher (relay_interop.mjs). Then the
# status document's relay_endpoint counters, /metrics and `cacheboxctl
# clients`.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
gen=$CACHEBOX_BUILD/tests/integration/prog_relayd
command -v node >/dev/null || { echo "skip: no node"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
command -v curl >/dev/null || { echo "skip: no curl"; exit 77; }
for m in ws nostr-tools nostr-fetch; do
	[ -e "$CACHEBOX_TESTS/node_modules/$m" ] ||
	    { echo "skip: $m missing: run tests/install-peers.sh"; exit 77; }
done

D=$T/box
mkdir -m 700 "$D"
check "3,000 signed events stored through ingest" \
    $EMU "$gen" gen "$D" 3000 7 20 "$T/events.jsonl"
root_sec=$($EMU "$gen" key 7 0)
root_pk=$(head -1 "$T/events.jsonl" | python3 -c 'import json, sys; print(json.load(sys.stdin)["pubkey"])')
start_daemon -d "$D" --set relays.bootstrap= --set http.listen=127.0.0.1:0 \
    --set relay.listen=127.0.0.1:0 --set relay.accept=roots \
    --set "follow.roots=$root_pk"
check "relay.port written" wait_for 10 test -s "$D/relay.port"
P=$(cat "$D/relay.port")
H=$(cat "$D/http.port")
grep -q "relay: serving the store on ws://127.0.0.1:0 (port $P)" "$T/d.log" &&
    ok "the relay's port is logged" || fail "the relay's port is logged"

rc=0
node "$here/relay_interop.mjs" "ws://127.0.0.1:$P" "$T/events.jsonl" \
    "$root_sec" >"$T/interop.out" 2>&1 || rc=$?
sed 's/^/    /' "$T/interop.out"
check "relay_interop.mjs: every check passed" test $rc -eq 0

st
check "status: relay_endpoint counts REQs, events sent, the stored write" \
    python3 - "$T/st.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["relay_endpoint"]
ok = (r["reqs"] >= 20 and r["events_sent"] >= 3000 and r["live_sent"] >= 1 and
      r["writes_accepted"] == 1 and r["writes_refused"] == 1 and
      r["negentropy"] == 1 and r["counts"] == 1 and r["bytes_out"] > 1000000 and
      r["clients"] == 0 and r["accept"] == "roots" and r["tag_index_ready"] is True)
print(json.dumps(r))
sys.exit(0 if ok else 1)
PY
curl -s "http://127.0.0.1:$H/metrics" >"$T/metrics"
check "/metrics carries the relay endpoint's counters" \
    grep -q '^cachebox_relay_endpoint_events_sent_total [1-9]' "$T/metrics"

# A client that stays: `cacheboxctl clients` lists it with its subscription.
node -e '
const WebSocket = require("ws");
const ws = new WebSocket(process.argv[1]);
ws.on("open", () => ws.send(JSON.stringify(["REQ", "stay", { kinds: [7], limit: 3 }])));
setTimeout(() => process.exit(0), 20000);' "ws://127.0.0.1:$P" &
PIDS+=("$!")
has_client() {
	cboxctl -d "$D" clients --json >"$T/clients.json" 2>/dev/null &&
	    python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["clients"]
sys.exit(0 if len(c) == 1 and c[0]["subscriptions"] == 1 and
    c[0]["events_sent"] == 3 and c[0]["address"] == "127.0.0.1" else 1)' "$T/clients.json"
}
check "cacheboxctl clients lists the client, its subscription and events" \
    wait_for 10 has_client
cboxctl -d "$D" clients | sed 's/^/    /'
finish
