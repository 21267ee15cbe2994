#!/usr/bin/env bash
# The first run: a daemon with no admin token shows a setup code at the box
# (its log, its console, DIR/setup-code.issue, 0600) and nowhere a network
# peer can read; wrong codes are refused and limited per address (10 a
# minute, like wrong tokens) and for every address together (20 a minute);
# in a real browser (first_run_check.mjs) the code read from the daemon's
# output sets the admin password, a mutating form works with it and the
# used code does not; a token set on the console ends setup. (The code's
# expiry after 30 minutes is tested on an injected clock in
# unit/test_setup_code.c.) Saves $CACHEBOX_BUILD/screenshots/first-run.png.
. "$(dirname "$0")/lib.sh"

[ -x /usr/bin/chromium ] || { echo "skip: /usr/bin/chromium missing (install-deps.sh test)"; exit 77; }
[ -d "$CACHEBOX_TESTS/node_modules/playwright-core" ] ||
	{ echo "skip: playwright-core missing (cd tests && npm ci)"; exit 77; }
[ -z "$EMU" ] || { echo "skip: not under an emulator"; exit 77; }
command -v curl >/dev/null || { echo "skip: curl missing"; exit 77; }

PASSWORD=first-run-password-0123

# start_box NAME: a daemon on DIR $T/NAME with no token, its console on a
# FIFO held open on descriptor CON (for `say`); its log (and console
# output) in $T/NAME.log; base URL in BASE.
start_box() {
	local dir=$T/$1
	mkfifo "$T/$1.con"
	exec {CON}<>"$T/$1.con"
	mkdir -m 700 "$dir"
	"$CACHEBOXD" -d "$dir" --set http.listen=127.0.0.1:0 --set relay.listen= \
		--console - <&"$CON" >"$T/$1.log" 2>&1 &
	DPID=$!
	PIDS+=("$DPID")
	wait_for 10 test -s "$dir/http.port" || return 1
	BASE="http://127.0.0.1:$(cat "$dir/http.port")"
}
# say LINE: type a line on the console of the box started last.
say() { printf '%s\n' "$1" >&"$CON"; }
# post FROM_ADDR JSON: POST /api/setup from a loopback address; prints
# "STATUS BODY".
post() {
	curl -s --interface "$1" -o "$T/body" -w '%{http_code}' -X POST \
		-H 'Content-Type: application/json' -d "$2" "$BASE/api/setup"
	echo " $(cat "$T/body")"
}
# code_in FILE: the setup code the log line in FILE shows.
code_in() { sed -n 's/.*warn: setup: no admin password is set; setup code \([0-9A-Z-]*\) .*/\1/p' "$1" | tail -1; }

# ---- box A: the code at the box, nowhere else ---------------------------
start_box a || { fail "box a started"; finish; exit 1; }
check "the log shows a setup code" wait_for 5 test -n "$(code_in "$T/a.log")"
CODE=$(code_in "$T/a.log")
echo "# setup code $CODE"
check "it has 10 characters of the alphabet, in two groups" \
	grep -Eq '^[0-9ABCDEFGHJKMNPQRSTVWXYZ]{5}-[0-9ABCDEFGHJKMNPQRSTVWXYZ]{5}$' <<<"$CODE"
check "the console shows it" grep -q "^setup: no admin password is set. Setup code: $CODE\$" "$T/a.log"
check "the login-screen file holds it" grep -q "^cachebox setup code: $CODE\$" "$T/a/setup-code.issue"
check "the login-screen file is 0600" test "$(stat -c %a "$T/a/setup-code.issue")" = 600
say "setup code"
check "'setup code' on the console answers it" wait_for 5 grep -Eq "(^|> )code: $CODE\$" "$T/a.log"

curl -s "$BASE/api/setup" >"$T/setup.json"
check "GET /api/setup: needed, about 30 minutes left" python3 - "$T/setup.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if s["needed"] is True and 1700 < s["expires_in_s"] <= 1800 and s["locked_s"] == 0 else 1)
PY
for path in /api/status /api/setup /metrics /api/config/list /api/help; do
	check "$path never shows the code" bash -c "! curl -s '$BASE$path' | grep -q '$CODE'"
done
check "cacheboxctl setup never shows it" bash -c "! '$CACHEBOXCTL' -d '$T/a' setup --json | grep -q '$CODE'"
out=$("$CACHEBOXCTL" -d "$T/a" setup code 2>&1 || true)
check "cacheboxctl setup code is refused" grep -q "only available on the serial console" <<<"$out"
check "POST /api/setup/code is refused" bash -c "curl -s -X POST '$BASE/api/setup/code' | grep -q 'only available on the serial console'"

# ---- wrong codes: refused, then the address waits ------------------------
r=$(post 127.0.0.1 '{"code":"ZZZZZ-ZZZZZ"}')
check "a body without a token is refused ($r)" grep -q '^400 ' <<<"$r"
r=$(post 127.0.0.1 "{\"code\":\"$CODE\",\"token\":\"short\"}")
check "a password breaking the token rule is refused, the code kept ($r)" grep -q '^400 .*12 to 256' <<<"$r"
for i in $(seq 10); do
	r=$(post 127.0.0.2 '{"code":"ZZZZZ-ZZZZZ","token":"wrong-guess-0123"}')
	[ "${r%% *}" = 403 ] || break
done
check "ten wrong codes from one address are each refused ($r)" grep -q '^403 .*wrong setup code' <<<"$r"
r=$(post 127.0.0.2 "{\"code\":\"$CODE\",\"token\":\"stolen-password-0\"}")
check "then that address waits, even with the right code ($r)" grep -q '^429 .*from this address' <<<"$r"
check "the log names the wrong codes" grep -q "setup: a wrong setup code from the web" "$T/a.log"

# ---- the browser ----------------------------------------------------------
mkdir -p "$CACHEBOX_BUILD/screenshots"
if (cd "$CACHEBOX_TESTS" && node integration/first_run_check.mjs "$BASE" "$CODE" "$PASSWORD" \
    "$T/chromium-profile" "$CACHEBOX_BUILD/screenshots/first-run.png"); then
	ok "first run in the browser"
else
	fail "first run in the browser"
	tail -20 "$T/a.log"
fi
check "the log says the token was set with the code" \
	grep -q "setup: the admin password was set on the status page with the setup code" "$T/a.log"
check "the login-screen file is empty again" test ! -s "$T/a/setup-code.issue"
check "the database holds a hash, not the password" bash -c "! grep -aq '$PASSWORD' '$T/a/cachebox.db'*"
say "setup code"
check "the console says setup is over" wait_for 5 grep -Eq "(^|> )error: an admin password is set already" "$T/a.log"
check "the log never shows the password" bash -c "! grep -q '$PASSWORD' '$T/a.log'"
stop_daemon

# ---- box B: every address together, and the console ending setup --------
start_box b || { fail "box b started"; finish; exit 1; }
wait_for 5 test -n "$(code_in "$T/b.log")" || true
CODE=$(code_in "$T/b.log")
for from in 127.0.0.3 127.0.0.4; do
	for i in $(seq 10); do
		r=$(post "$from" '{"code":"ZZZZZ-ZZZZZ","token":"wrong-guess-0123"}')
	done
done
check "twenty wrong codes from two addresses are refused ($r)" grep -q '^403 ' <<<"$r"
r=$(post 127.0.0.5 "{\"code\":\"$CODE\",\"token\":\"stolen-password-0\"}")
check "then no address is checked, a fresh one with the right code neither ($r)" \
	grep -q '^429 .*too many wrong setup codes lately' <<<"$r"
check "the log says so once" test "$(grep -c 'setup: 20 wrong setup codes within 60 s' "$T/b.log")" = 1
check "GET /api/setup tells the page to wait" bash -c \
	"curl -s '$BASE/api/setup' | grep -Eq '\"locked_s\":(5[0-9]|60)'"
say "admin-token set console-password-0123"
check "a token set on the console ends setup" wait_for 5 bash -c \
	"curl -s '$BASE/api/setup' | grep -q '\"needed\":false'"
check "and empties the login-screen file" test ! -s "$T/b/setup-code.issue"
r=$(post 127.0.0.6 "{\"code\":\"$CODE\",\"token\":\"stolen-password-0\"}")
check "the setup endpoint then refuses ($r)" grep -q '^409 ' <<<"$r"
stop_daemon

# ---- box C: a token from the start means no setup at all ------------------
mkdir -m 700 "$T/c"
start_daemon -d "$T/c" --set http.listen=127.0.0.1:0 --set relay.listen= \
	--set admin.token=configured-token-0123
wait_for 10 test -s "$T/c/http.port" || true
BASE="http://127.0.0.1:$(cat "$T/c/http.port")"
check "with a token configured: not needed" bash -c "curl -s '$BASE/api/setup' | grep -q '\"needed\":false'"
check "no code in the log" bash -c "! grep -q 'setup code' '$T/d.log'"
check "no login-screen file" test ! -e "$T/c/setup-code.issue"
stop_daemon

# ---- box D: a token put in the -c file and reloaded ends setup -------------
mkdir -m 700 "$T/e"
: >"$T/e.conf"
start_daemon -d "$T/e" -c "$T/e.conf" --set http.listen=127.0.0.1:0 --set relay.listen=
check "box d shows a code" wait_for 10 test -s "$T/e/setup-code.issue"
echo "admin.token = file-token-012345" >"$T/e.conf"
kill -HUP "$DPID"
check "after a reload with a token in the file: setup is over" wait_for 10 \
	bash -c "curl -s 'http://127.0.0.1:$(cat "$T/e/http.port")/api/setup' | grep -q '\"needed\":false'"
check "and the login-screen file is empty" test ! -s "$T/e/setup-code.issue"
stop_daemon
finish
