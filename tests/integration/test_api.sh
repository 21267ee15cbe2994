#!/usr/bin/env bash
# The web API and /metrics of a running cacheboxd, endpoint by endpoint:
# reads by GET, mutations by POST with the admin token, and every refusal
# with its status code (401, 403, 404, 405, 413, 400, 431).
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "skip: curl missing"; exit 77; }

TOKEN=api-test-token-0123456789
NPUB=npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6
HEX=3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d

# --- no admin token yet: mutations are refused with a clear message -------
# relays.bootstrap is emptied at run time below (a --set value would pin it);
# with no root nothing is dialled meanwhile.
start_daemon -d "$T/d" --set http.listen=127.0.0.1:0 --set relay.listen=127.0.0.1:0
check "http.port written" wait_for 10 test -s "$T/d/http.port"
B="http://127.0.0.1:$(cat "$T/d/http.port")"
code=$(curl -s -o "$T/r" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
	-d '{"key":"backfill.page_size","value":"300"}' "$B/api/config/set")
check "no token configured: 403" test "$code" = 403
check "no token configured: says to use the console" grep -q "no admin password is set: set one from the console first" "$T/r"
# no upstream relays for the rest: stored, so the next start has none either
check "relays.bootstrap emptied in the database" cboxctl -d "$T/d" config set relays.bootstrap ""
kill "$DPID"; wait "$DPID" || true
check "http.port removed at exit" test ! -e "$T/d/http.port"

# --- a daemon with a token ---------------------------------------------------
start_daemon -d "$T/d" --set http.listen=127.0.0.1:0 --set relay.listen=127.0.0.1:0 --set "admin.token=$TOKEN"
check "http.port written" wait_for 10 test -s "$T/d/http.port"
B="http://127.0.0.1:$(cat "$T/d/http.port")"
# req METHOD PATH [curl args...]: body in $T/r, status code printed
req() { local m=$1 p=$2; shift 2; curl -s -o "$T/r" -D "$T/h" -w '%{http_code}' -X "$m" "$@" "$B$p"; }
auth=(-H "Authorization: Bearer $TOKEN")

check "GET /api/status 200" test "$(req GET /api/status)" = 200
check "status is JSON" grep -qi '^content-type: application/json' "$T/h"
for f in version uptime_s rss_bytes idle backfill.authors_total backfill.authors_complete \
	backfill.authors_incomplete store.events inbox.pending inbox.forwarded inbox.rejected; do
	check "status has $f" json_get "$T/r" "$f"
done
check "status relays is a list" test "$(json_get "$T/r" relays)" = "[]"
check "status version matches the binary" test "$(json_get "$T/r" version)" = \
	"$(cboxd --version | awk '{print $2}')"
cboxctl -d "$T/d" status --json >"$T/ctl.json"
check "cacheboxctl status --json has the same keys" python3 - "$T/r" "$T/ctl.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(0 if sorted(a) == sorted(b) and a["npub"] == b["npub"] else 1)
PY
check "HEAD /api/status 200" test "$(curl -s -o /dev/null -w '%{http_code}' -I "$B/api/status")" = 200

# every read command answers 200 by GET
check "GET /api/help 200" test "$(req GET /api/help)" = 200
python3 -c 'import json,sys; [print(c["name"]) for c in json.load(open(sys.argv[1]))["commands"] if not c["mutating"] and not c["params"]]' \
	"$T/r" >"$T/reads"
while read -r name; do
	check "GET /api/${name// //} 200" test "$(req GET "/api/${name// //}")" = 200
done <"$T/reads"
check "GET with a query argument" test "$(req GET '/api/config/get?key=log.level')" = 200
check "  answers that key" test "$(json_get "$T/r" value)" = info
check "GET missing argument: 400" test "$(req GET /api/config/get)" = 400
check "GET unknown query argument: 400" test "$(req GET '/api/config/get?key=log.level&x=1')" = 400
check "  names the argument" grep -q "unknown argument 'x'" "$T/r"

# mutations: token checks
body='{"key":"backfill.page_size","value":"300"}'
check "POST without a token: 401" test "$(req POST /api/config/set -d "$body")" = 401
check "  with WWW-Authenticate" grep -qi '^www-authenticate: Bearer' "$T/h"
check "  says it needs the admin password" grep -q "this change needs the admin password" "$T/r"
check "POST with a wrong token: 401" test "$(req POST /api/config/set -H 'Authorization: Bearer wrong-token-0123456789' -d "$body")" = 401
check "  says wrong password" grep -q "wrong admin password" "$T/r"
check "POST with a token prefix: 401" test "$(req POST /api/config/set -H "Authorization: Bearer ${TOKEN:0:10}" -d "$body")" = 401
check "POST with the token in another scheme: 401" test "$(req POST /api/config/set -H "Authorization: Basic $TOKEN" -d "$body")" = 401
check "nothing changed" test "$(cboxctl -d "$T/d" config get backfill.page_size --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["value"])')" = 500
check "POST with the token: 200" test "$(req POST /api/config/set "${auth[@]}" -d "$body")" = 200
check "  the value is set" test "$(json_get "$T/r" value)" = 300
check "  and stored" test "$(json_get "$T/r" source)" = database
check "a number value is taken as text" test "$(req POST /api/config/set "${auth[@]}" -d '{"key":"backfill.page_size","value":250}')" = 200
check "  value 250" test "$(json_get "$T/r" value)" = 250
check "invalid value: 400 naming the key" test "$(req POST /api/config/set "${auth[@]}" -d '{"key":"backfill.page_size","value":"0"}')" = 400
check "  message names the key" grep -q "backfill.page_size" "$T/r"

# bodies
check "malformed JSON: 400" test "$(req POST /api/config/set "${auth[@]}" -d '{"key":')" = 400
check "  with a message" grep -q "malformed JSON" "$T/r"
check "trailing garbage: 400" test "$(req POST /api/config/set "${auth[@]}" -d '{"key":"a","value":"b"} x')" = 400
check "not an object: 400" test "$(req POST /api/config/set "${auth[@]}" -d '["key"]')" = 400
check "nested value: 400" test "$(req POST /api/config/set "${auth[@]}" -d '{"key":{"a":1},"value":"b"}')" = 400
check "duplicate argument: 400" test "$(req POST /api/config/set "${auth[@]}" -d '{"key":"log.level","key":"x","value":"b"}')" = 400
check "unknown argument: 400" test "$(req POST /api/config/set "${auth[@]}" -d '{"key":"log.level","value":"info","z":1}')" = 400
check "missing argument: 400" test "$(req POST /api/config/set "${auth[@]}" -d '{"key":"log.level"}')" = 400
head -c 70000 /dev/zero | tr '\0' ' ' >"$T/big"
check "oversized body (Content-Length): 413" test "$(req POST /api/config/set "${auth[@]}" --data-binary @"$T/big")" = 413
check "chunked body: 400 (a Content-Length is required)" test "$(req POST /api/config/set "${auth[@]}" -H 'Transfer-Encoding: chunked' --data-binary @"$T/big")" = 400
check "  says so" grep -q "Transfer-Encoding is not accepted" "$T/r"
check "oversized body without a token: 413 before any of it is read" test "$(req POST /api/config/set --data-binary @"$T/big")" = 413
check "empty body for optional arguments: 200" test "$(req POST /api/log/level "${auth[@]}")" = 200
check "  answers the level" test "$(json_get "$T/r" level)" = info

# the box's own lists
check "POST /api/roots/add (npub)" test "$(req POST /api/roots/add "${auth[@]}" -d "{\"key\":\"$NPUB\"}")" = 200
check "adding the same key as hex is refused" test "$(req POST /api/roots/add "${auth[@]}" -d "{\"key\":\"$HEX\"}")" = 400
check "GET /api/roots/list shows hex" test "$(req GET /api/roots/list)" = 200
check "  the root" test "$(json_get "$T/r" roots.0.hex)" = "$HEX"
check "POST /api/roots/remove by hex" test "$(req POST /api/roots/remove "${auth[@]}" -d "{\"key\":\"$HEX\"}")" = 200
check "POST /api/relays/add" test "$(req POST /api/relays/add "${auth[@]}" -d '{"url":"ws://127.0.0.1:9"}')" = 200
check "  listed as configured" bash -c "curl -s '$B/api/relays/list' | grep -q '\"configured\":true'"
check "bad relay URL: 400" test "$(req POST /api/relays/add "${auth[@]}" -d '{"url":"http://x"}')" = 400
check "POST /api/relays/role custom" test "$(req POST /api/relays/role "${auth[@]}" -d '{"url":"ws://127.0.0.1:9","role":"custom"}')" = 200
check "  no longer a bootstrap relay" test "$(cboxctl -d "$T/d" config get relays.bootstrap --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["value"])')" = ""
check "  role recorded" bash -c "curl -s '$B/api/relays/list' | grep -q '\"role\":\"custom\"'"
check "POST /api/relays/remove of an unlisted relay: 400" test "$(req POST /api/relays/remove "${auth[@]}" -d '{"url":"ws://127.0.0.1:9"}')" = 400
check "console-only command: 403" test "$(req POST /api/admin-token/set "${auth[@]}" -d '{"token":"abcdefghijklmnop"}')" = 403
# a Postgres URL naming a file libpq would open is a console-only value
for q in 'sslrootcert=/etc/shadow' 'sslmode=require&sslkey=%2Froot%2Fk' 'ssl%63rl=/c' 'passfile=/root/.pgpass' 'service=prod'; do
	code=$(req POST /api/config/set "${auth[@]}" -d "{\"key\":\"uplink.url\",\"value\":\"postgres://127.0.0.1:9/c?$q\"}")
	check "uplink.url ?$q from the web: refused ($code)" test "$code" = 400
	check "  saying it is set on the console" grep -q 'open a file or socket path: a URL with it is set only on the serial console' "$T/r"
done
code=$(req POST /api/config/set "${auth[@]}" -d '{"key":"uplink.url","value":"postgres://%2Ftmp/c"}')
check "uplink.url with a socket path from the web: refused ($code)" test "$code" = 400
check "  naming the host" grep -q "the parameter 'host'" "$T/r"
rc=0; cboxctl -d "$T/d" config set uplink.url 'postgres://127.0.0.1:9/c?sslrootcert=/etc/shadow' >"$T/ctl.out" 2>&1 || rc=$?
check "uplink.url ?sslrootcert from cacheboxctl: refused" test "$rc" -ne 0
check "  with the same reason" grep -q "the parameter 'sslrootcert'" "$T/ctl.out"
check "  nothing stored" test "$(cboxctl -d "$T/d" config get uplink.url --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["value"])')" = ""
check "tls.ca_file from the web: refused" test "$(req POST /api/config/set "${auth[@]}" -d '{"key":"tls.ca_file","value":"/etc/shadow"}')" = 400

# paths and methods
check "unknown API path: 404" test "$(req GET /api/no/such/thing)" = 404
check "  JSON error" grep -q '"error"' "$T/r"
check "unknown page: 404" test "$(req GET /nothing.html)" = 404
check "path with a traversal: 404" test "$(curl -s -o /dev/null -w '%{http_code}' --path-as-is "$B/../index.html")" = 404
check "POST to a read: 405" test "$(req POST /api/status)" = 405
check "  Allow: GET, HEAD" grep -qi '^allow: GET, HEAD' "$T/h"
check "GET of a mutation: 405" test "$(req GET /api/config/set)" = 405
check "  Allow: POST" grep -qi '^allow: POST' "$T/h"
check "DELETE: 405" test "$(req DELETE /api/status)" = 405
big_header=$(head -c 20000 /dev/zero | tr '\0' 'x')
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big_header" "$B/api/status")
check "oversized headers refused ($code)" grep -Eq '^(431|413|414|400)$' <<<"$code"

# the page and its assets
check "GET / 200" test "$(req GET /)" = 200
check "  is HTML" grep -qi '^content-type: text/html' "$T/h"
check "  with a content security policy" grep -qi "^content-security-policy: default-src 'self'" "$T/h"
check "  refers to app.js" grep -q 'src="/app.js"' "$T/r"
check "GET /app.js 200" test "$(req GET /app.js)" = 200
check "  as JavaScript" grep -qi '^content-type: text/javascript' "$T/h"
check "GET /style.css 200" test "$(req GET /style.css)" = 200
check "  no remote resources in the page" bash -c "! grep -Eq 'https?://' '$CACHEBOX_SRC/src/ui/www/index.html' '$CACHEBOX_SRC/src/ui/www/app.js' '$CACHEBOX_SRC/src/ui/www/style.css'"

# metrics
check "GET /metrics 200" test "$(req GET /metrics)" = 200
check "  Prometheus text type" grep -qi '^content-type: text/plain; version=0.0.4' "$T/h"
check "metrics parse as Prometheus text" python3 - "$T/r" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*)?\})? (-?[0-9.e+]+|NaN|[+-]Inf)$')
typed, names, seen_type = {}, set(), set()
for line in text.splitlines():
    if line.startswith('# HELP '):
        continue
    if line.startswith('# TYPE '):
        _, _, name, kind = line.split(' ', 3)
        assert kind in ('gauge', 'counter'), line
        assert name not in seen_type, 'TYPE twice: ' + name
        seen_type.add(name)
        continue
    m = sample.match(line)
    assert m, 'bad line: ' + line
    assert m.group(1).startswith('cachebox_'), line
    assert m.group(1) in seen_type, 'sample before TYPE: ' + line
    names.add(m.group(1))
for want in ('cachebox_uptime_seconds', 'cachebox_rss_bytes', 'cachebox_store_events',
             'cachebox_inbox_pending', 'cachebox_inbox_forwarded_total',
             'cachebox_inbox_dead_letters', 'cachebox_backfill_authors', 'cachebox_info'):
    assert want in names, 'missing ' + want
PY
check "metrics carry the status values" bash -c "grep -q '^cachebox_store_events $(curl -s "$B/api/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["store"]["events"])')\$' '$T/r'"
# relays appear with labels once the box knows one
check "relay metrics labelled" bash -c "curl -s '$B/metrics' | grep -q '^cachebox_relay_events_total{url=\"ws://127.0.0.1:9\",role=\"custom\"} 0\$'"
check "relay state metric" bash -c "curl -s '$B/metrics' | grep -Eq '^cachebox_relay_state\\{url=\"ws://127.0.0.1:9\",role=\"custom\",state=\"[a-z]+\"\\} 1\$'"

# connection limit: many idle connections do not stop the API
for i in $(seq 40); do exec {fd}<>/dev/tcp/127.0.0.1/"${B##*:}"; fds+=("$fd"); done
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$B/api/status" || true)
check "over the connection limit: refused or served, never hung ($code)" grep -Eq '^(200|000|503)$' <<<"$code"
for fd in "${fds[@]}"; do exec {fd}>&-; done
check "after idle connections close: 200" wait_for 10 bash -c "test \"\$(curl -s -m 3 -o /dev/null -w '%{http_code}' '$B/api/status')\" = 200"

kill -TERM "$DPID"; wait "$DPID"; rc=$?
check "clean exit" test "$rc" -eq 0
finish
