#!/usr/bin/env bash
# test_relay_hostile.sh — bad input on the box's relay port while the
# author drain runs against relaysim and a poller reads /api/status
# (docs/ARCHITECTURE.md §9). Each refusal comes with a clear reason:
#   - malformed JSON, an unknown verb, a message that is not an array:
#     NOTICE "invalid: ..." and the connection stays usable;
#   - a bad filter, a filter of 1,500 authors: CLOSED with the reason;
#   - a filter of 100,000 authors (6.8 MB) and a frame declaring 1 GiB:
#     a NOTICE naming the 128 KiB limit, then close 1009, before any of
#     the payload is kept;
#   - invalid UTF-8: close 1007; a binary frame: ignored;
#   - 10,000 REQs on one connection: 20 served, 9,980 CLOSED "blocked: at
#     most 20 open subscriptions";
#   - 1,000 connections at once: 64 upgraded, every other one answered 503
#     with a reason, none closed without a word;
#   - one connection's 20 COUNTs of 10 whole-store filters hold 2 of the 8
#     query slots: another connection's REQ is answered before 8 of them;
#   - NIP-77: a second session on one connection is refused, and one kept
#     alive with a NEG-MSG every 5 s is closed after 60 s;
#   - 16 connections each sending 20 REQs of 3 filters x 8 tag letters x
#     1,000 values (120 KB, 961 KiB of filters each): 2 served in all (the
#     2 MiB the filters of every connection may hold), the second of one
#     connection refused "blocked:" (1 MiB a connection), every other
#     "error:" naming the spent budget; a small REQ meanwhile is served and
#     the account is back to 0 when they leave;
#   - NIP-70: a protected event taken only from its author authenticated
#     by NIP-42 (relay_protected.mjs);
#   - NIP-42 AUTHs signed by nostr-tools for another relay's URL: refused,
#     the box's own URLs accepted.
# Meanwhile every status poll is answered, and afterwards the drain
# finishes with every event of the upstream relay and the daemon is idle.
. "$(dirname "$0")/lib.sh"
use_relaysim
here=$(cd "$(dirname "$0")" && pwd)
command -v curl >/dev/null || { echo "skip: curl missing"; exit 77; }

cat >"$T/sim.json" <<'JSON'
{"dataset": {"authors": 6, "events": 6000, "seed": 31},
 "relays": [{"name": "up"}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
D=$T/box
start_daemon -d "$D" --set relays.bootstrap="$(relaysim_url up)" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=300 \
    --set backfill.page_size=100 --set http.listen=127.0.0.1:0 \
    --set relay.listen=127.0.0.1:0
check "relay.port and http.port written" \
    wait_for 10 test -s "$D/relay.port" -a -s "$D/http.port"
P=$(cat "$D/relay.port")
H=$(cat "$D/http.port")

# The poller: /api/status every 100 ms until told to stop.
python3 - "$H" "$T/stop" >"$T/poll.json" <<'PY' &
import json, os, sys, time, urllib.request
port, stop = sys.argv[1], sys.argv[2]
polls = failed = 0
events = []
while not os.path.exists(stop):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/api/status" % port,
                                    timeout=5) as r:
            events.append(json.load(r)["store"]["events"])
        polls += 1
    except Exception:
        failed += 1
    time.sleep(0.1)
print(json.dumps({"polls": polls, "failed": failed,
                  "events_first": events[0] if events else None,
                  "events_last": events[-1] if events else None}))
PY
poller=$!
PIDS+=("$poller")

python3 "$here/relay_attack.py" "$P" badinput >"$T/bad.json"
python3 "$here/relay_attack.py" "$P" conns 1000 1 >"$T/conns.json"
touch "$T/stop"
wait "$poller" || true

answer() { python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))[sys.argv[2]]
print(json.dumps(r["messages"][0] if r["messages"] else r["close"]))' "$T/bad.json" "$1"; }
closeof() { python3 -c 'import json, sys
print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]]["close"]))' "$T/bad.json" "$1"; }
is() { [ "$1" = "$2" ] || { echo "    got:  $1"; echo "    want: $2"; return 1; }; }

check "malformed JSON: NOTICE" is "$(answer malformed)" '["NOTICE", "invalid: malformed JSON"]'
check "unknown verb: NOTICE" is "$(answer unknown_verb)" \
    '["NOTICE", "invalid: unknown message type \"FROB\""]'
check "not an array: NOTICE" is "$(answer not_array)" \
    '["NOTICE", "invalid: a message is an array whose first element is its type"]'
check "a bad filter: CLOSED with the key at fault" is "$(answer bad_filter)" \
    '["CLOSED", "f", "invalid: filter 1: kinds: entry 0 is not an integer from 0 to 65535"]'
check "1,500 authors: CLOSED" is "$(answer many_authors)" \
    '["CLOSED", "a1500", "invalid: filter 1: authors: more than 1000 entries"]'
check "100,000 authors (6.8 MB): NOTICE naming the limit" is "$(answer authors_100k)" \
    '["NOTICE", "error: a message of 6800031 bytes is over this relay'"'"'s limit of 131072 bytes (NIP-11 max_message_length); closing"]'
check "  then close 1009" is "$(closeof authors_100k)" '[1009, "message over 131072 bytes"]'
check "a frame declaring 1 GiB: close 1009 after the NOTICE" is "$(closeof oversized)" \
    '[1009, "message over 131072 bytes"]'
check "invalid UTF-8: close 1007" is "$(closeof invalid_utf8)" '[1007, ""]'
check "a binary frame is ignored; the next REQ is answered" is "$(answer binary)" '["EOSE", "ok"]'
check "10,000 subscriptions on one connection: 20 served, 9,980 refused" \
    is "$(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["subs_10000"]))' "$T/bad.json")" \
    '{"eose": 20, "closed": 9980, "reasons": ["blocked: at most 20 open subscriptions per connection (NIP-11 max_subscriptions)"]}'
sed 's/^/    /' "$T/conns.json"
check "1,000 connections: 64 upgraded, 936 refused with a reason, none silently" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["upgraded"] == 64 and r["refused_with_reason"] == 936 and
    r["silent"] == 0 else 1)' "$T/conns.json"
python3 "$here/relay_attack.py" "$P" inputbudget 12 >"$T/input.json"
sed 's/^/    /' "$T/input.json"
check "12 large messages begun at once: 8 fit the 1 MiB input budget, 4 closed 1013 saying why" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["refused_1013"] == 4 and r["holding_answer_ping"] == 8 and
    r["reasons"] == ["1013 busy receiving other large messages; try again later"] else 1)' "$T/input.json"
check "  once they are gone a 66 KB REQ is served" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["after"] and r["after"][0][0] == "EOSE" else 1)' "$T/input.json"
python3 "$here/relay_attack.py" "$P" negidle >"$T/negidle.json"
sed 's/^/    /' "$T/negidle.json"
check "NIP-77: two idle sessions take both slots, a third is refused saying why" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["a"] == r["b"] == "NEG-MSG" and r["c"][0] == "NEG-ERR" and
    r["c"][2].startswith("blocked: 2 reconciliations") else 1)' "$T/negidle.json"
check "  each idle session is closed by the relay, saying why" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if all(m[0] == "NEG-ERR" and m[2].startswith("closed: no NEG-MSG")
    for m in r["idle"]) else 1)' "$T/negidle.json"
check "  then a new session is served" python3 -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["after"] == "NEG-MSG" else 1)' "$T/negidle.json"
python3 "$here/relay_attack.py" "$P" fairslots >"$T/fair.json"
sed 's/^/    /' "$T/fair.json"
check "20 COUNTs of 10 whole-store filters on one connection do not keep another's REQ waiting" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["answer"] == ["EOSE", "v"] and r["counts_at_eose"] < 8 and
    r["counts_total"] == 20 else 1)' "$T/fair.json"
python3 "$here/relay_attack.py" "$P" negkeep >"$T/negkeep.json"
sed 's/^/    /' "$T/negkeep.json"
check "NIP-77: one connection cannot hold both sessions" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["first"] == "NEG-MSG" and r["second"][0] == "NEG-ERR" and
    r["second"][2].startswith("blocked: at most 1 reconciliation per connection") else 1)' "$T/negkeep.json"
check "  a session kept alive by a NEG-MSG every 5 s is closed after 60 s, saying why" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["fed"] >= 3 and r["end"][0] == "NEG-ERR" and
    r["end"][2].startswith("closed: open for 60 s") else 1)' "$T/negkeep.json"
python3 "$here/relay_attack.py" "$P" memory 16 0 >"$T/mem.json"
cut -c1-300 "$T/mem.json" | sed 's/^/    /'
check "filters of 16 x 20 huge REQs: 2 served (the relay's filter budget), the rest refused saying why" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
why = r["reasons"]
sys.exit(0 if r["eose"] == 2 and r["closed"] == 318 and r["closes"] == [] and
    len(why) == 2 and why[0].startswith("blocked: this connection'"'"'s filters") and
    why[1].startswith("error: the relay'"'"'s memory for filters is spent") else 1)' "$T/mem.json"
check "  a small REQ meanwhile is served" python3 -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["small"] == ["EOSE", "small"] else 1)' "$T/mem.json"
check "  and the account is empty once they left" wait_for 30 python3 -c 'import json, sys, urllib.request
r = json.load(urllib.request.urlopen("http://127.0.0.1:%s/api/status" % sys.argv[1],
    timeout=5))["relay_endpoint"]
sys.exit(0 if r["filter_bytes"] == 0 and r["clients"] == 0 and
    r["refused_memory"] == 318 else 1)' "$H"
sed 's/^/    /' "$T/poll.json"
check "every status poll answered during the attacks" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["polls"] >= 10 and r["failed"] == 0 else 1)' "$T/poll.json"

want=$(relaysim_q truth match '{}' | wc -l)
check "the drain goes on to idle" wait_for 300 idle
check "  with every upstream event stored ($want)" \
    test "$(json_get "$T/st.json" store.events)" = "$want"
check "  every author complete" test "$(json_get "$T/st.json" backfill.authors_complete)" = \
    "$(json_get "$T/st.json" backfill.authors_total)"
check "status: the refusals counted" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["relay_endpoint"]
sys.exit(0 if r["bad_messages"] >= 9987 and r["refused_full"] == 936 and
    r["clients"] == 0 else 1)' "$T/st.json"

# NIP-70 with relay.accept = roots (relay.auth none): the root's protected
# note is refused without AUTH (a challenge comes with the refusal) and
# after an AUTH as another key, taken after an AUTH as the root; its plain
# note needs no AUTH.
SEC=3f2a8c1d9e7b6a5f4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b
ROOTSK=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["authors"][0]["seckey"])' "$(relaysim_q meta)")
check "relay.accept = roots" \
    bash -c "'$CACHEBOXCTL' -d '$D' config set relay.accept roots >/dev/null"
(cd "$CACHEBOX_TESTS" && node "$here/relay_protected.mjs" "$P" "$ROOTSK" "$SEC") >"$T/prot.json"
sed 's/^/    /' "$T/prot.json"
check "NIP-70: a protected event without AUTH: auth-required, with a challenge, not stored" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["no_auth"]
sys.exit(0 if r["challenge"] and len(r["ok"]) == 1 and r["ok"][0][0] is False and
    r["ok"][0][1].startswith("auth-required: ") and r["req"] == [] else 1)' "$T/prot.json"
check "  after an AUTH as another key: restricted, not stored, that key still reads" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["other"]
sys.exit(0 if r["auth"] == [True, ""] and [o[0] for o in r["ok"]] == [False, False] and
    r["ok"][1][1].startswith("restricted: ") and r["req"] == [] else 1)' "$T/prot.json"
check "  after an AUTH as its author: accepted and served" python3 -c 'import json, sys
j = json.load(open(sys.argv[1])); r = j["author"]
sys.exit(0 if r["auth"] == [True, ""] and r["ok"] == [[False, r["ok"][0][1]], [True, ""]] and
    r["req"] == [j["id"]] else 1)' "$T/prot.json"
check "  the root's plain note without AUTH: accepted as before" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["plain"]
sys.exit(0 if not r["challenge"] and r["ok"] == [[True, ""]] and len(r["req"]) == 1 else 1)' "$T/prot.json"
check "  the four refusals counted (relay_endpoint.protected_refused)" \
    test "$(status "$D" relay_endpoint.protected_refused)" = 4

# NIP-42: an AUTH signed (nostr-tools) for another relay's URL proves
# nothing here; one naming a URL the box answers as lets the key read.
PK=$(cd "$CACHEBOX_TESTS" && node --input-type=module -e "import { getPublicKey } from 'nostr-tools/pure'; console.log(getPublicKey(Uint8Array.from(Buffer.from('$SEC', 'hex'))))")
check "relay.auth = owners with a reader key and a box name set" bash -c \
    "'$CACHEBOXCTL' -d '$D' config set relay.readers '$PK' >/dev/null &&
     '$CACHEBOXCTL' -d '$D' config set box.names mybox.lan >/dev/null &&
     '$CACHEBOXCTL' -d '$D' config set relay.auth owners >/dev/null"
(cd "$CACHEBOX_TESTS" && node "$here/relay_auth.mjs" "$P" "$SEC" mybox.lan) >"$T/auth.json"
sed 's/^/    /' "$T/auth.json"
check "AUTH for another relay's URL: refused, and reads stay refused" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["cases"][:8]
sys.exit(0 if len(r) == 8 and all(c["ok"][0] is False and
    c["ok"][1].startswith("invalid: the relay tag does not name this relay") and
    c["req"] == "auth-required" for c in r) else 1)' "$T/auth.json"
check "AUTH for the box's URLs (address, cachebox.local, box.names, ::1, trailing slash): reads" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["cases"][8:]
sys.exit(0 if len(r) == 6 and all(c["ok"] == [True, ""] and c["req"] == "EOSE"
    for c in r) else 1)' "$T/auth.json"
check "  the right URL with a wrong challenge: refused" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["wrong_challenge"]
sys.exit(0 if r["ok"][0] is False and "challenge" in r["ok"][1] and
    r["req"] == "auth-required" else 1)' "$T/auth.json"
check "the daemon is still running" kill -0 "$DPID"
finish
