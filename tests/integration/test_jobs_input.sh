#!/usr/bin/env bash
# test_jobs_input.sh — bad input to the custom jobs' commands, on every
# surface: the serial console (--console - on a pipe), cacheboxctl and the
# web API (POST with the admin token). Each invalid field is refused with
# a message naming it, the same words everywhere; nothing is stored; a
# word that names no parameter is refused on the console and cacheboxctl,
# an unknown member of the body on the web; dry-run and the mutations need
# the token; a body over the limit is refused before it is read. Then the
# console makes, cancels and deletes a job.
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "skip: curl missing"; exit 77; }

TOKEN=jobs-input-token-0123456789
D=$T/d
mkfifo "$T/in"
"$CACHEBOXD" -d "$D" --console - --set http.listen=127.0.0.1:0 \
    --set relays.bootstrap= --set "admin.token=$TOKEN" <"$T/in" >"$T/console.out" 2>>"$T/d.log" &
DPID=$!
PIDS+=("$DPID")
exec 3>"$T/in"
check "http.port written" wait_for 10 test -s "$D/http.port"
H="http://127.0.0.1:$(cat "$D/http.port")"

# Each case: the arguments as name=value words (the console and ctl form),
# the same as a JSON body, and the start of the refusal (after "jobs new: ").
PK=3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d
cat >"$T/cases" <<EOF
kinds=0,70000|{"kinds":"0,70000"}|kinds: entry 2 '70000' is not a kind (0..65535)
kinds=one|{"kinds":"one"}|kinds: entry 1 'one' is not a kind
authors=$PK,zz|{"authors":"$PK,zz"}|authors: entry 2 'zz' is not an npub or 64 hex digits
authors=npub1notakey|{"authors":"npub1notakey"}|authors: entry 1 'npub1notakey' is not an npub
authors_source=everyone|{"authors_source":"everyone"}|authors_source: 'everyone' is not one of manual, all, kind1, followed, none
authors_source=manual|{"authors_source":"manual"}|authors: authors_source manual needs a list
ids=abc|{"ids":"abc"}|ids: entry 1 'abc' is not a note or 64 hex digits
authors=$PK ids=$PK|{"authors":"$PK","ids":"$PK"}|ids: give authors or ids, not both
since=yesterday|{"since":"yesterday"}|since: 'yesterday' is not Unix seconds or an ISO-8601 date
until=2024-02-30|{"until":"2024-02-30"}|until: '2024-02-30' is not a valid date
since=2024-02-01 until=2024-01-01|{"since":"2024-02-01","until":"2024-01-01"}|since: 2024-02-01 is after until 2024-01-01
limit=-3|{"limit":-3}|limit: '-3' is not a count
tags={"t":["x"]}|{"tags":"{\"t\":[\"x\"]}"}|tags: key "t" is not #<letter>
tags={"#t":"x"}|{"tags":"{\"#t\":\"x\"}"}|tags: "#t" must be an array of 1 to 1000 strings
tags=[1]|{"tags":"[1]"}|tags: not a JSON object
batch_size=0|{"batch_size":0}|batch_size: '0' is not 1 .. 1000
batch_size=5000|{"batch_size":"5000"}|batch_size: '5000' is not 1 .. 1000
relay_mode=everywhere|{"relay_mode":"everywhere"}|relay_mode: 'everywhere' is not one of bootstrap, outbox, custom
relays=http://relay.example|{"relays":"http://relay.example"}|relays: 'http://relay.example' is not a relay URL: not ws:// or wss://
relay_mode=custom|{"relay_mode":"custom"}|relays: relay_mode custom needs at least one ws:// or wss:// URL
relay_mode=outbox relays=wss://r.example|{"relay_mode":"outbox","relays":"wss://r.example"}|relays: a list is for relay_mode custom (not outbox)
authors_source=all only_missing_kind0=maybe|{"authors_source":"all","only_missing_kind0":"maybe"}|only_missing_kind0: 'maybe' is not true or false
only_missing_kind0=true|{"only_missing_kind0":true}|only_missing_kind0: needs an authors_source
every=5x|{"every":"5x"}|every: '5x' is not a count and a unit
every=1h until=1700000000|{"every":"1h","until":1700000000}|every: a scheduled job takes no until
preset=everything|{"preset":"everything"}|preset: unknown 'everything' (one of: missing-profiles-kind1
kinds=1|{"kinds":"1"}|relay_mode: no relay to ask (relays.bootstrap is empty)
EOF

# console: one line per case (quotes keep a JSON value one word)
n=0
while IFS='|' read -r words body want; do
	line="jobs new"
	for w in $words; do line="$line '$w'"; done
	echo "$line" >&3
	n=$((n + 1))
done <"$T/cases"
echo "jobs new colour=red" >&3
echo "jobs dry-run kinds=70000" >&3
echo "jobs show job=abc" >&3
echo "jobs show 999" >&3
echo "jobs cancel 999" >&3
echo "jobs retry" >&3
echo "log level" >&3
check "the console answered every line" wait_for 30 grep -q '^cachebox> level: ' "$T/console.out"

while IFS='|' read -r words body want; do
	name=${want%%:*}
	# console
	check "console: $name refused: $want" grep -qF "error: jobs new: $want" "$T/console.out"
	# cacheboxctl
	set -f
	out=$(cboxctl -d "$D" jobs new $words 2>&1) && st=0 || st=$?
	set +f
	check "ctl: $name refused (exit 1): $want" test "$st" = 1 -a "${out#cacheboxctl: jobs new: $want}" != "$out"
	# web
	code=$(curl -s -o "$T/r.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
	    -d "$body" "$H/api/jobs/new")
	check "web: $name refused (400): $want" test "$code" = 400 -a \
	    "$(json_get "$T/r.json" error | cut -c1-$((10 + ${#want})))" = "jobs new: $want"
done <"$T/cases"

check "console: a word that names no parameter" grep -qF "error: jobs new: 'colour=red' is not name=value with one of: [label]" "$T/console.out"
check "console: dry-run checks the same" grep -qF "error: jobs dry-run: kinds: entry 1 '70000'" "$T/console.out"
check "console: job must be a number" grep -qF "error: jobs show: job: 'abc' is not a job number" "$T/console.out"
check "console: an unknown job" grep -qF "error: jobs show: no such job" "$T/console.out"
check "console: nothing to cancel" grep -qF "error: jobs cancel: job 999 is not pending, running or scheduled" "$T/console.out"
check "console: retry needs a job" grep -qF "error: jobs retry: missing job" "$T/console.out"
out=$(cboxctl -d "$D" jobs new kinds=1 colour=red 2>&1) && fail "ctl took colour=red" ||
    check "ctl: a word that names no parameter" grep -qF "'colour=red' is not name=value" <<<"$out"
code=$(curl -s -o "$T/r.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
    -d '{"kinds":"1","colour":"red"}' "$H/api/jobs/new")
check "web: an unknown member (400)" test "$code" = 400
check "  named" grep -q "unknown argument 'colour'" "$T/r.json"
code=$(curl -s -o "$T/r.json" -w '%{http_code}' -X POST -d '{"kinds":"1"}' "$H/api/jobs/dry-run")
check "web: dry-run needs the token (401)" test "$code" = 401
code=$(curl -s -o "$T/r.json" -w '%{http_code}' "$H/api/jobs/dry-run?kinds=1")
check "web: dry-run is not a GET (405)" test "$code" = 405
code=$(curl -s -o "$T/r.json" -w '%{http_code}' -X POST -d '{"job":"1"}' "$H/api/jobs/cancel")
check "web: cancel needs the token (401)" test "$code" = 401
python3 -c 'import json; print(json.dumps({"authors": ",".join(["a" * 64] * 2000)}))' >"$T/big.json"
code=$(curl -s -o "$T/r.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
    --data-binary @"$T/big.json" "$H/api/jobs/new")
check "web: a body over the limit (413)" test "$code" = 413
code=$(curl -s -o "$T/r.json" -w '%{http_code}' "$H/api/jobs/show?job=x")
check "web: show job=x (400)" test "$code" = 400 -a "$(json_get "$T/r.json" error)" = "jobs show: job: 'x' is not a job number"
code=$(curl -s -o "$T/r.json" -w '%{http_code}' "$H/api/jobs/list")
check "web: nothing was stored" test "$code" = 200 -a "$(json_get "$T/r.json" jobs)" = "[]"
check "web: the presets are listed" test "$(curl -s "$H/api/jobs/presets" | python3 -c 'import json,sys; print(" ".join(p["name"] for p in json.load(sys.stdin)["presets"]))')" = \
    "missing-profiles-kind1 missing-profiles-all profiles-date-range relay-lists contact-lists"

# The same commands succeed on the console: a job on a relay nobody
# answers on, listed, cancelled, deleted.
: >"$T/console.out"
echo "jobs new label=console kinds=1 relays=ws://127.0.0.1:9" >&3
echo "jobs cancel 1" >&3
echo "jobs delete job=1" >&3
echo "log level" >&3
check "console: the job answered" wait_for 30 grep -q '^cachebox> level: ' "$T/console.out"
check "console: jobs new made job 1" grep -q '^cachebox> job: 1' "$T/console.out"
check "console: cancelled" grep -q '^status: cancelled' "$T/console.out"
check "console: deleted" grep -q '^deleted: yes' "$T/console.out"
# The end of the console's input stops a daemon started with --console -.
exec 3>&-
check "console: end of input stops the daemon" wait_for 20 sh -c "! kill -0 $DPID"
wait "$DPID" || fail "the daemon exited $? at the end of its input"
finish
