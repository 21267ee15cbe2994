#!/usr/bin/env bash
# test_commit_before_ok.sh — what the box tells a writer it has kept
# survives a crash right after the answer: an EVENT its relay answered
# "OK true" and the events an import counted as stored are in the database
# after a SIGKILL sent as soon as the answer arrived. Ingest gathers events
# into batches committed later; these answers wait for the commit.
. "$(dirname "$0")/lib.sh"
command -v node >/dev/null || { echo "skip: no node"; exit 77; }
here=$(dirname "$0")

read -r SK PK < <(node "$here/sign_events.mjs" keygen)
NOW=$(date +%s)
for i in 1 2 3; do
	echo "{\"sk\":\"$SK\",\"kind\":1,\"created_at\":$((NOW - i)),\"content\":\"kept $i\"}"
done | node "$here/sign_events.mjs" >"$T/ev.jsonl"
ids() { python3 -c 'import json, sys
for l in open(sys.argv[1]): print(json.loads(l)["id"])' "$1"; }
stored() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=10)
sys.exit(0 if c.execute("select 1 from events where lower(hex(id)) = ?",
    (sys.argv[2],)).fetchone() else 1)' "$D/cachebox.db" "$1"; }

D=$T/d
mkdir -m 700 "$D"
run() {
	start_daemon -d "$D" --set relays.bootstrap= --set http.listen=127.0.0.1:0 \
	    --set relay.listen=127.0.0.1:0 --set relay.accept=roots \
	    --set "follow.roots=$PK"
	wait_for 10 test -s "$D/relay.port"
}

run
check "the relay listens" test -s "$D/relay.port"
P=$(cat "$D/relay.port")
answer=$(python3 "$here/relay_attack.py" "$P" publish "$(head -1 "$T/ev.jsonl")")
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null || true
echo "    $answer"
check "the relay answered OK true" python3 -c 'import json, sys
m = json.loads(sys.argv[1]); sys.exit(0 if m[0] == "OK" and m[2] is True else 1)' "$answer"
check "  and after SIGKILL at once the event is stored" stored "$(ids "$T/ev.jsonl" | sed -n 1p)"

rm -f "$D/relay.port"
run
tail -n +2 "$T/ev.jsonl" >"$T/two.jsonl"
cboxctl -d "$D" import "$T/two.jsonl" >"$T/import.out" 2>&1 && rc=0 || rc=$?
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null || true
sed 's/^/    /' "$T/import.out"
check "the import counted 2 stored" grep -q "stored: 2" "$T/import.out"
for id in $(ids "$T/two.jsonl"); do
	check "  and after SIGKILL at once ${id:0:12}... is stored" stored "$id"
done
finish
