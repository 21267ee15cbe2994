#!/usr/bin/env bash
# Every control takes effect or says why not (README "Web status page and
# API"), tried on the demo as a newcomer would: tests/relaysim/demo.sh (its
# network with free ports) stores its relays, root and pace at run time,
# so the page can change them; a key pinned by --set is shown pinned (by
# what) and a change to it is refused, not stored to no effect; a relay
# added that never opens reads "never opened", not "connected"; a removed
# bootstrap relay is closed and no longer dialled; the uplink's status
# read right after a change of uplink.url shows the new target (and after
# clearing it, none); an author's events count is what the store holds
# of it; /metrics' cachebox_idle is 1 beside events left
# queued without an uplink, and its HELP says that those do not count;
# stopping the demo wipes its state directory.
. "$(dirname "$0")/lib.sh"
use_relaysim
command -v curl >/dev/null || exit 77

python3 - "$CACHEBOX_TESTS/relaysim/examples/demo.json" >"$T/demo.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for r in c["relays"]:
    r.pop("port", None)
print(json.dumps(c))
PY
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
TOKEN=demo-token-1234
DEMO_CONFIG="$T/demo.json" DEMO_HTTP="127.0.0.1:$port" \
	setsid bash "$CACHEBOX_TESTS/relaysim/demo.sh" "$CACHEBOX_BUILD" >"$T/demo.log" 2>&1 &
demo=$!
PIDS+=("$demo")
stop_demo() { kill -TERM -- "-$demo" 2>/dev/null || true; wait "$demo" 2>/dev/null || true; }
trap 'stop_demo; relaysim_cleanup; cleanup' EXIT

get() { curl -fsS "$base$1"; }
post() { curl -sS -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d "$2" "$base/api/$1"; }
field() { python3 -c 'import json,sys; v=json.load(sys.stdin)
for p in sys.argv[1].split("."): v = v[int(p)] if isinstance(v, list) else v.get(p)
print("" if v is None else v)' "$1"; }
following() { [ "$(get /api/status | field backfill.authors_total)" -gt 0 ] 2>/dev/null; }
check "the demo's daemon follows its root" wait_for 240 following
state=$(sed -n 's/^demo: state directory \(.*\) (wiped.*/\1/p' "$T/demo.log")
check "the demo names its state directory ($state)" test -d "$state"

# 1. Stored at run time, so not pinned; what --set pins says so.
for k in follow.roots relays.bootstrap backfill.pace_ms; do
	got=$(get "/api/config/get?key=$k" | field source)/$(get "/api/config/get?key=$k" | field pinned_by)
	check "$k is stored in the database, not pinned ($got)" test "$got" = "database/"
done
got=$(get "/api/config/get?key=http.listen" | field pinned_by)
check "http.listen is shown pinned by what pins it ($got)" test "$got" = "--set on the command line"
got=$(post config/set '{"key":"http.listen","value":"127.0.0.1:1"}' | field error)
check "a change to a pinned key is refused, saying why ($got)" \
	grep -q "pinned by --set on the command line: change it there" <<<"$got"
got=$(post config/set '{"key":"backfill.pace_ms","value":"60"}' | field source)
check "a stored key changes ($got)" test "$got" = database

# A second root and a spare relay can be added and removed.
npub=$(get '/api/follows?offset=3&limit=1' | field follows.0.npub)
post roots/add "{\"key\":\"$npub\"}" >/dev/null
check "a root added from the page is listed" bash -c "curl -fsS $base/api/roots/list | grep -q $npub"
post roots/remove "{\"key\":\"$npub\"}" >/dev/null
check "and removed again" bash -c "! curl -fsS $base/api/roots/list | grep -q $npub"

# 3. A relay nothing listens on: backing off, never opened.
spare=ws://127.0.0.1:9
got=$(post relays/add "{\"url\":\"$spare\"}" | field done)
check "a relay is added as bootstrap ($got)" test "$got" = added
health() { get /api/status | python3 -c 'import json,sys
r=[x for x in json.load(sys.stdin)["relays"] if x["url"] == sys.argv[1]]
print(r[0]["state"] + "/" + r[0]["health"] if r else "absent")' "$spare"; }
never() { [[ "$(health)" == backoff/"never opened" ]]; }
check "a relay that never opened reads 'never opened' while it backs off" wait_for 60 never
health >"$T/health"
check "it is never called connected ($(cat "$T/health"))" bash -c "! grep -q connected '$T/health'"

# 2. Removed: closed, and not dialled again when the drain plans anew.
got=$(post relays/remove "{\"url\":\"$spare\"}" | field done)
check "the relay is removed ($got)" test "$got" = removed
absent() { [ "$(health)" = absent ]; }
check "the removed relay leaves the pool" wait_for 20 absent
got=$(post backfill/reset '{}' | field reset)
check "every author drains again ($got cursors)" test "$got" -gt 0
drained() { [ "$(get /api/status | field idle)" = True ]; }
check "the drain planned and drained again" wait_for 180 drained
check "the removed relay is still not dialled after the drain planned again" absent
check "nor listed by relays list" bash -c "! curl -fsS $base/api/relays/list | grep -q '\"$spare\"'"

# 5. An author's count is what the store holds of it, however it came (a
# root's drain stores the events of others that it is sent), not what
# its own drain newly stored: each of a page matches the database.
counts_match() { get '/api/follows?limit=25' | python3 -c 'import json, sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "/cachebox.db?mode=ro", uri=True, timeout=10)
bad = [a["npub"] for a in json.load(sys.stdin)["follows"]
       if a.get("events_stored") != db.execute("SELECT count(*) FROM events "
       "WHERE pubkey = ?", (bytes.fromhex(a["pubkey"]),)).fetchone()[0]]
sys.exit(1 if bad else 0)' "$state"; }
check "each author's events_stored is the store's count for it" wait_for 60 counts_match
got=$(get '/api/follows?limit=25' | python3 -c 'import json,sys; print(sum(a["events_stored"] for a in json.load(sys.stdin)["follows"]))')
check "and the page's authors hold events ($got)" test "$got" -gt 0

# 4. The uplink follows uplink.url at once.
post config/set "{\"key\":\"uplink.url\",\"value\":\"$spare\"}" >/dev/null
got=$(get /api/uplink/status | field uplink.url)
check "right after saving, the uplink status names the new target ($got)" test "$got" = "$spare"
queued() { [ "$(get /api/status | field inbox.pending)" -gt 0 ]; }
check "the stored events are queued for it" wait_for 60 queued
post config/set '{"key":"uplink.url","value":""}' >/dev/null
got=$(get /api/uplink/status | field uplink.url)
check "right after clearing, the uplink status names none ('$got')" test -z "$got"
metrics_idle() { get /metrics | grep -x 'cachebox_idle 1' >/dev/null; }
check "idle with events left queued and no uplink" wait_for 120 metrics_idle
get /metrics >"$T/metrics"
pending=$(sed -n 's/^cachebox_inbox_pending //p' "$T/metrics")
check "cachebox_inbox_pending beside it ($pending)" test "$pending" -gt 0
help=$(grep '^# HELP cachebox_idle ' "$T/metrics")
check "its HELP says queued events without an uplink do not count" \
	grep -q "while no uplink is configured.*do not count" <<<"$help"
check "its HELP does not promise an empty inbox" bash -c "! grep -q 'inbox empty' <<<'$help'"

stop_demo
check "stopping the demo wipes its state directory" test ! -e "$state"
finish
