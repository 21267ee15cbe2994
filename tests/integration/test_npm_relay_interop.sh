#!/bin/bash
# test_npm_relay_interop.sh — the relay pool against a third-party relay
# installed from npm: @nostr-relay/core on @nostr-relay/event-repository-
# sqlite (npm_relay.mjs). prog_interop publishes (OK true, duplicate,
# invalid signature, invalid id), subscribes (exact events, EOSE, limit,
# live delivery) and checks the pool's counters.
# Exit 77 (skip) when node, the packages (cd tests && npm ci) or
# prog_interop are missing.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
prog=$CACHEBOX_BUILD/tests/integration/prog_interop

command -v node >/dev/null || { echo "skip: no node"; exit 77; }
for m in ws @nostr-relay/core @nostr-relay/event-repository-sqlite \
    better-sqlite3/build/Release/better_sqlite3.node; do
	[ -e "$CACHEBOX_TESTS/node_modules/$m" ] ||
	    { echo "skip: $m missing: run npm ci in tests/"; exit 77; }
done
[ -x "$prog" ] || { echo "skip: $prog not built"; exit 77; }

node "$here/npm_relay.mjs" "$T/relay.db" >"$T/ready" 2>"$T/relay.log" &
PIDS+=("$!")
wait_for 10 grep -q '"ready"' "$T/ready" || true
url=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$T/ready")
[ -n "$url" ] || { fail "npm relay did not start"; cat "$T/relay.log"; finish; exit 1; }
echo "third-party relay: $url"

# prog_interop prints its own ok/not ok lines.
rc=0
$EMU "$prog" "$url" 2>"$T/prog.log" || rc=$?
if [ $rc -eq 0 ]; then
	ok "prog_interop: every check passed"
else
	fail "prog_interop exit $rc"
	echo "prog log:"; tail -30 "$T/prog.log"
fi
[ -s "$T/relay.log" ] && { echo "relay log:"; cat "$T/relay.log"; }
# The relay's own database holds exactly what was accepted: six notes.
if [ $rc -eq 0 ]; then
	n=$(NODE_PATH=$CACHEBOX_TESTS/node_modules node -e '
const Db = require("better-sqlite3");
const db = new Db(process.argv[1], { readonly: true });
console.log(db.prepare("select count(*) as n from events").get().n);' \
	    "$T/relay.db" 2>&1 || true)
	if [ "$n" = 6 ]; then
		ok "the relay stored exactly the 6 valid notes"
	else
		fail "relay database holds $n events, wanted 6"
	fi
fi
finish
