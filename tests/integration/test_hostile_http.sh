#!/usr/bin/env bash
# test_hostile_http.sh — the admin boundary and the web server against a
# hostile machine and network (docs/ARCHITECTURE.md §9). Each case failed on the code
# before the hardening:
#   - slowloris (40 connections, a header byte every 2 s) and 1,000 idle
#     connections, then both at once: /api/status keeps answering (the
#     poller's p50/p99 are printed, not asserted; a poll whose connection
#     was pushed out before its request was read is tried again at once,
#     as a browser does, and the retries are printed), the attackers are
#     cut;
#   - a body trickled by a token holder is cut at the request deadline;
#   - console.tty cannot be set from the web or ctl, an old row the web
#     stored is ignored, and a regular file or a FIFO is refused as a
#     console (its contents never run, the file is never written);
#   - a state directory made 0755 beforehand: every file the daemon
#     creates is 0600 and the admin token is nowhere in clear;
#   - a Postgres password in every form libpq takes, set by --set and by
#     the web: no surface and no log line shows it;
#   - malformed, duplicated and huge Content-Length: one 400/413, never
#     two status lines; 500 query arguments: 414; wrong tokens are counted
#     per address and answered 429 without a check past 10 a minute, and
#     past 40 a minute from every address together (40 addresses, 5 each);
#   - a Host that is not the box's: 421; a state-changing call whose Origin
#     is another site's (or null, or Sec-Fetch-Site cross-site): 403, with
#     the token and for /api/setup during the first run;
#   - a non-UTF-8 argument comes back as valid UTF-8 JSON;
#   - a non-loopback http.listen without a token is warned about.
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "skip: curl missing"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
ATTACK=$CACHEBOX_TESTS/integration/http_attack.py
TOKEN=hostile-test-token-0123
ports() { cat "$1/http.port"; }
# poll_ok JSON_LINE: every poll answered, at least a few polls made.
poll_ok() {
	python3 -c 'import json, sys
r = json.loads(sys.argv[1])
sys.exit(0 if r["polls"] >= 5 and r["failed"] == 0 else 1)' "$1"
}
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# ---------------------------------------------------------------------------
# 1. State directory made 0755 beforehand; slowloris and idle floods.
D=$T/state; mkdir -m 755 "$D"
start_daemon -d "$D" --set http.listen=127.0.0.1:0 --set relays.bootstrap= \
    --set "admin.token=$TOKEN"
check "http.port written" wait_for 10 test -s "$D/http.port"
P=$(ports "$D")
check "the open state directory is named in a warning" \
    grep -q "state directory $D is mode 755" "$T/d.log"

r=$(python3 "$ATTACK" "$P" slowloris 40 20)
echo "    slowloris: $r"
check "slowloris: /api/status answered every time (p50 $(field "$r" p50_ms) ms, p99 $(field "$r" p99_ms) ms)" poll_ok "$r"
check "slowloris: every attacker connection was closed by the server" \
    test "$(field "$r" attack_closed_by_server)" = 40

r=$(python3 "$ATTACK" "$P" idle 1000 12)
echo "    1,000 idle: $r"
check "1,000 idle connections: /api/status answered every time (p99 $(field "$r" p99_ms) ms)" poll_ok "$r"
# All but the newest ones within the cap, whose head deadline may not have
# passed when the attack stopped.
check "1,000 idle connections: all but the newest 32 closed by the server" \
    test "$(field "$r" attack_closed_by_server)" -ge "$(($(field "$r" attack_opened) - 32))"

python3 "$ATTACK" "$P" idle 1000 14 >"$T/idle2" &
apid=$!
r=$(python3 "$ATTACK" "$P" slowloris 40 12)
wait "$apid"
echo "    both at once: $r / $(cat "$T/idle2")"
check "slowloris and 1,000 idle at once: status answered" poll_ok "$r"
check "  (and for the idle flood's poller)" poll_ok "$(cat "$T/idle2")"

r=$(python3 "$ATTACK" "$P" slowbody 8 22 "$TOKEN")
echo "    slow bodies: $r"
check "bodies trickled by a token holder are cut at the deadline" \
    test "$(field "$r" attack_closed_by_server)" = 8
check "  and the status answered meanwhile" poll_ok "$r"
curl -s "http://127.0.0.1:$P/api/status" >"$T/st.json"
check "status shows what the door refused and evicted" \
    python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["http"]
sys.exit(0 if h["evicted"] >= 900 and h["timed_out"] >= 48 and
    h["listen"] == "127.0.0.1:0" and h["loopback_only"] else 1)' "$T/st.json"

# ---------------------------------------------------------------------------
# 2. Bad heads: one answer each, never libmicrohttpd's doubled one.
raw() {
	python3 - "$P" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(sys.argv[2].encode("latin-1").decode("unicode_escape").encode("latin-1"))
out = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
except OSError:
    pass
sys.stdout.write(out.decode("latin-1"))
PY
}
once() { test "$(grep -c '^HTTP/1.1 ' <<<"$1")" = 1 && grep -q "^HTTP/1.1 $2 " <<<"$1"; }
out=$(raw 'POST /api/config/set HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n')
check "malformed Content-Length: one 400" once "$out" 400
out=$(raw 'POST /api/config/set HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello')
check "two Content-Length headers: one 400" once "$out" 400
check "  saying so" grep -q "more than one Content-Length" <<<"$out"
out=$(raw 'GET /api/status HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n')
check "a huge Content-Length: one 413" once "$out" 413
q=$(python3 -c 'print("&".join("a%d=1" % i for i in range(500)))')
out=$(raw "GET /api/status?$q HTTP/1.1\r\nHost: x\r\n\r\n")
check "500 query arguments: one 414" once "$out" 414

# ---------------------------------------------------------------------------
# 3. Wrong tokens per address; non-UTF-8 in an argument.
B="http://127.0.0.1:$P"
# DNS rebinding: a Host that is not the box's is answered nothing; a
# state-changing call from another site's page is refused, token or not.
code=$(curl -s -o "$T/r" -w '%{http_code}' -H "Host: evil.example:$P" "$B/api/status")
check "Host: evil.example: 421, nothing read" test "$code" = 421
check "  saying why" grep -q "not reached by the name 'evil.example:$P'" "$T/r"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: localhost:$P" "$B/api/status")
check "  Host: localhost is the box: 200" test "$code" = 200
code=$(curl -s -o "$T/r" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
    -H "Origin: http://evil.example" -d '{}' "$B/api/log/level")
check "a POST with the token from another site's page (Origin): 403" test "$code" = 403
check "  saying why" grep -q "a page of another site" "$T/r"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
    -H "Origin: null" -d '{}' "$B/api/log/level")
check "  Origin: null: 403" test "$code" = 403
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
    -H "Sec-Fetch-Site: cross-site" -d '{}' "$B/api/log/level")
check "  Sec-Fetch-Site: cross-site: 403" test "$code" = 403
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
    -H "Origin: http://127.0.0.1:$P" -d '{}' "$B/api/log/level")
check "  from the box's own page: 200" test "$code" = 200

for i in $(seq 10); do
	curl -s -o /dev/null -X POST -H "Authorization: Bearer wrong-token-000$i" \
	    -d '{}' "$B/api/log/level"
done
code=$(curl -s -o "$T/r" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
    -d '{}' "$B/api/log/level")
check "after 10 wrong tokens the address waits: 429, even with the right one" test "$code" = 429
check "  saying how long" grep -q "try again in" "$T/r"
printf '{"key":"no.such\xff\xfekey","value":"1"}' >"$T/bad.json"
curl -s -o "$T/r" "$B/api/config/get?key=bad%FF%FEkey"
check "a non-UTF-8 query argument comes back as valid UTF-8 JSON" \
    python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$T/r"
cboxctl -d "$D" config get --json "$(printf 'x\xff')" >"$T/r" 2>&1 || true
check "  and over the control socket" \
    python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$T/r"

# Many addresses, each under its own limit (40 addresses of 127.0.0.0/8,
# 5 wrong tokens each): the global cap answers 429 for every address.
python3 - "$P" "$TOKEN" >"$T/spread.json" <<'PY'
import json, socket, sys
port, token = int(sys.argv[1]), sys.argv[2]
def post(src, tok):
    s = socket.socket(); s.settimeout(10); s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(("POST /api/log/level HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
               "Authorization: Bearer %s\r\nContent-Length: 2\r\n\r\n{}"
               % (port, tok)).encode())
    out = b""
    while True:
        b = s.recv(65536)
        if not b: break
        out += b
    s.close()
    head, _, body = out.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body.decode()
guesses = first429 = 0
for a in range(2, 42):
    for i in range(5):
        code, body = post("127.0.0.%d" % a, "wrong-token-%02d-%d" % (a, i))
        guesses += 1
        if code == 429 and not first429:
            first429 = guesses
code, body = post("127.0.0.99", token)
print(json.dumps({"guesses": guesses, "first_429": first429,
                  "right_token": [code, body]}))
PY
sed 's/^/    /' "$T/spread.json"
check "wrong tokens from 40 addresses (5 each): 429 once every address together has sent 40 in a minute" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if 0 < r["first_429"] <= 31 else 1)' "$T/spread.json"
check "  then even the right token from a new address waits, saying why" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["right_token"]
sys.exit(0 if r[0] == 429 and "every address" in r[1] else 1)' "$T/spread.json"

# ---------------------------------------------------------------------------
# 4. console.tty is never set remotely.
out=$(cboxctl -d "$D" config set console.tty /tmp/evil 2>&1) && fail "ctl set console.tty" ||
	check "ctl cannot set console.tty" grep -q "serial console, in the -c file or with --set" <<<"$out"
kill "$DPID"; wait "$DPID" || true
# (the rate limit above is per address and in memory: a new daemon forgets it)
start_daemon -d "$D" --set http.listen=127.0.0.1:0 --set relays.bootstrap= \
    --set "admin.token=$TOKEN"
check "http.port written again" wait_for 10 test -s "$D/http.port"
B="http://127.0.0.1:$(ports "$D")"
code=$(curl -s -o "$T/r" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
    -d '{"key":"console.tty","value":"/tmp/evil"}' "$B/api/config/set")
check "the web cannot set console.tty (400)" test "$code" = 400
check "  the database holds no console.tty" test "$(python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print(db.execute("SELECT count(*) FROM config WHERE key = ?", ("console.tty",)).fetchone()[0])' "$D/cachebox.db")" = 0

# ---------------------------------------------------------------------------
# 5. Every file 0600; the token nowhere in clear.
check "every file the daemon created is 0600" test -z "$(find "$D" -type f ! -perm 600)"
check "the control socket is 0600" test "$(stat -c %a "$D/cacheboxd.sock")" = 600
check "the token is not in the database in clear" \
    bash -c "! grep -aq '$TOKEN' '$D'/cachebox.db*"
kill "$DPID"; wait "$DPID" || true
check "the token is not in the database after a checkpoint either" \
    bash -c "! grep -aq '$TOKEN' '$D'/cachebox.db*"
check "  the stored form is a salted hash" python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
v = db.execute("SELECT value FROM config WHERE key = ?", ("admin.token",)).fetchone()
sys.exit(0 if v is None or v[0].startswith("pbkdf2-sha256$") else 1)' "$D/cachebox.db"

# An older version let the web store console.tty: that row is ignored, and
# a regular file or a FIFO given on the command line is refused.
python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT OR REPLACE INTO config (key, value, updated_at, origin) VALUES (?, ?, 1, NULL)", ("console.tty", sys.argv[2]))
db.commit()' "$D/cachebox.db" "$T/evil"
printf 'admin-token set attacker-token-000\n' >"$T/evil"
sum=$(sha256sum <"$T/evil")
cboxd -d "$D" --set http.listen=127.0.0.1:0 --set relays.bootstrap= \
    --exit-when-idle >"$T/old.log" 2>&1
check "a console.tty the web stored earlier is ignored, and said so" \
    grep -q "stored console.tty was not set from the console; ignored" "$T/old.log"
cboxd -d "$D" --set http.listen=127.0.0.1:0 --set relays.bootstrap= \
    --console "$T/evil" --exit-when-idle >"$T/file.log" 2>&1
check "a regular file as console: refused in one clear line" \
    grep -q "is not a character device (a tty); refused" "$T/file.log"
check "  its contents never ran (no token set from it)" \
    bash -c "! grep -q 'admin-token' '$T/file.log'"
check "  the file was not written" test "$(sha256sum <"$T/evil")" = "$sum"
mkfifo -m 666 "$T/fifo"
cboxd -d "$D" --set http.listen=127.0.0.1:0 --set relays.bootstrap= \
    --console "$T/fifo" --exit-when-idle >"$T/fifo.log" 2>&1
check "a world-writable FIFO as console: refused" \
    grep -q "is not a character device (a tty); refused" "$T/fifo.log"

# ---------------------------------------------------------------------------
# 6. A Postgres password in every form libpq takes: on no surface, in no log.
SECRET=Pw4uplinkSecretXyz
# surfaces URL DIR: everything the web and cacheboxctl show about the box.
surfaces() {
	local c
	for c in /api/status /metrics /api/config/list "/api/config/get?key=uplink.url" \
	    /api/uplink/status /; do
		curl -s "$1$c" || true
	done
	cboxctl -d "$2" config list || true
	cboxctl -d "$2" config list --json || true
	cboxctl -d "$2" config get uplink.url || true
	cboxctl -d "$2" uplink status || true
	cboxctl -d "$2" status --json || true
}
E=$T/pg; mkdir -m 700 "$E"
form=0
for url in "postgres://relay:$SECRET@127.0.0.1:1/relay" \
    "postgres://relay@127.0.0.1:1/relay?password=$SECRET&sslmode=disable" \
    "postgresql://127.0.0.1:1/relay?sslpassword=$SECRET&pass%77ord=$SECRET" \
    "postgres://relay:$SECRET@127.0.0.1:1/re%zzlay"; do
	: >"$T/d.log"
	form=$((form + 1))
	start_daemon -d "$E" --set http.listen=127.0.0.1:0 --set relays.bootstrap= \
	    --set "admin.token=$TOKEN" --set "uplink.url=$url"
	wait_for 10 test -s "$E/http.port" || fail "http.port ($url)"
	B="http://127.0.0.1:$(ports "$E")"
	wait_for 10 grep -q "uplink" "$T/d.log" || true
	sleep 1
	surfaces "$B" "$E" >"$T/surfaces" 2>&1
	check "uplink.url set by --set, form $form: a password appears on no surface" \
	    bash -c "! grep -q '$SECRET' '$T/surfaces'"
	check "  the surfaces show it masked" grep -q '\*\*\*' "$T/surfaces"
	kill "$DPID"; wait "$DPID" || true
	check "  nor in the log" bash -c "! grep -q '$SECRET' '$T/d.log'"
done
: >"$T/d.log"
start_daemon -d "$E" --set http.listen=127.0.0.1:0 --set relays.bootstrap= \
    --set "admin.token=$TOKEN"
wait_for 10 test -s "$E/http.port" || fail "http.port (web)"
B="http://127.0.0.1:$(ports "$E")"
curl -s -o "$T/r" -X POST -H "Authorization: Bearer $TOKEN" \
    -d "{\"key\":\"uplink.url\",\"value\":\"postgres://u:$SECRET@127.0.0.1:1/x\"}" \
    "$B/api/config/set"
curl -s -o "$T/r2" -X POST -H "Authorization: Bearer $TOKEN" \
    -d "{\"key\":\"uplink.url\",\"value\":\"host=127.0.0.1 password=$SECRET\"}" \
    "$B/api/config/set"
sleep 1
{ cat "$T/r" "$T/r2"; surfaces "$B" "$E"; } >"$T/surfaces" 2>&1
check "uplink.url set over the web (and a refused keyword string): no surface shows the password" \
    bash -c "! grep -q '$SECRET' '$T/surfaces'"
kill "$DPID"; wait "$DPID" || true
check "  nor the log" bash -c "! grep -q '$SECRET' '$T/d.log'"

# ---------------------------------------------------------------------------
# 7. A listen address others can reach, without a token: said so.
F=$T/lan; mkdir -m 700 "$F"
start_daemon -d "$F" --set http.listen=0.0.0.0:0 --set relays.bootstrap=
check "http.port written (0.0.0.0)" wait_for 10 test -s "$F/http.port"
check "a network-reachable page without a token is warned about" \
    grep -q "reachable from the network and no admin password is set" "$T/d.log"
curl -s "http://127.0.0.1:$(ports "$F")/api/status" >"$T/st.json"
check "  and the status shows the bind address" python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["http"]
sys.exit(0 if h["listen"] == "0.0.0.0:0" and not h["loopback_only"] else 1)' "$T/st.json"
# During the first run a cross-site text/plain POST (no preflight) to
# /api/setup is refused before the code is looked at.
code=$(curl -s -o "$T/r" -w '%{http_code}' -X POST -H "Content-Type: text/plain" \
    -H "Origin: http://evil.example" -d '{"code":"0000000000","token":"cross-site-token-1"}' \
    "http://127.0.0.1:$(ports "$F")/api/setup")
check "first run: a cross-site POST to /api/setup is refused (403)" test "$code" = 403
check "  as a page of another site, the code never compared" grep -q "a page of another site" "$T/r"
check "  and no wrong code counted" bash -c "! grep -q 'wrong setup code' '$T/d.log'"
finish
