#!/usr/bin/env bash
# The serial console through a pseudo-terminal (prog_console types on the
# master side), and the console-only command refused on the other surfaces.
. "$(dirname "$0")/lib.sh"

prog="$CACHEBOX_BUILD/tests/integration/prog_console"
[ -x "$prog" ] || { echo "skip: $prog not built"; exit 77; }

if $EMU "$prog" "$CACHEBOXD" "$T/d"; then ok "console through a pty"; else fail "console through a pty"; fi

# --console - on a pipe: no echo, plain newlines, stdin ending is not fatal.
out=$(printf 'log level\nkey\n' | timeout 10 "$CACHEBOXD" -d "$T/p" --console - \
	--set http.listen=127.0.0.1:0 --exit-when-idle 2>/dev/null || true)
check "stdin console answers" grep -q '^cachebox> level: info$' <<<"$out"

# The console-only command is refused on the control socket and the web.
start_daemon -d "$T/w" --set http.listen=127.0.0.1:0 --set admin.token=web-token-0123456
check "http.port written" wait_for 10 test -s "$T/w/http.port"
out=$(cboxctl -d "$T/w" admin-token set abcdefghijklmnop 2>&1) && fail "ctl accepted admin-token set" ||
	check "ctl refuses admin-token set" grep -q "only available on the serial console" <<<"$out"
code=$(curl -s -o "$T/r.json" -w '%{http_code}' -X POST -H 'Authorization: Bearer web-token-0123456' \
	-d '{"token":"abcdefghijklmnop"}' "http://127.0.0.1:$(cat "$T/w/http.port")/api/admin-token/set")
check "web refuses admin-token set (403)" test "$code" = 403
out=$(cboxctl -d "$T/w" config set admin.token abcdefghijklmnop 2>&1) && fail "config set admin.token accepted" ||
	check "config set cannot change the token" grep -q "admin-token set" <<<"$out"
finish
