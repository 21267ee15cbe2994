#!/bin/bash
# test_npm_relay_interop.sh — the relay pool against a third-party relay
# installed from npm: @nostr-relay/core on @nostr-relay/event-repository-
# sqlite (npm_relay.mjs). prog_interop publishes (OK true, duplicate,
# invalid signature, invalid id), subscribes (exact events, EOSE, limit,
# live delivery) and checks the pool's counters.
# Exit 77 (skip) when node, the packages (cd tests && npm ci) or
# prog_interop are missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tests=${CACHEBOX_TESTS:-$(dirname "$here")}
build=${CACHEBOX_BUILD:-}
prog=$build/tests/integration/prog_interop
emu=${CACHEBOX_EMULATOR:-}

command -v node >/dev/null || { echo "skip: no node"; exit 77; }
for m in ws @nostr-relay/core @nostr-relay/event-repository-sqlite \
    better-sqlite3/build/Release/better_sqlite3.node; do
	[ -e "$tests/node_modules/$m" ] ||
	    { echo "skip: $m missing: run npm ci in tests/"; exit 77; }
done
[ -x "$prog" ] || { echo "skip: $prog not built"; exit 77; }

tmp=$(mktemp -d)
relay=
cleanup() {
	[ -n "$relay" ] && kill "$relay" 2>/dev/null && wait "$relay" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

node "$here/npm_relay.mjs" "$tmp/relay.db" >"$tmp/ready" 2>"$tmp/relay.log" &
relay=$!
for _ in $(seq 100); do
	grep -q '"ready"' "$tmp/ready" 2>/dev/null && break
	sleep 0.1
done
url=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$tmp/ready")
[ -n "$url" ] || { echo "FAIL: npm relay did not start"; cat "$tmp/relay.log"; exit 1; }
echo "third-party relay: $url"

$emu "$prog" "$url" 2>"$tmp/prog.log"
rc=$?
[ $rc -eq 0 ] || { echo "prog log:"; tail -30 "$tmp/prog.log"; }
[ -s "$tmp/relay.log" ] && { echo "relay log:"; cat "$tmp/relay.log"; }
# The relay's own database holds exactly what was accepted: six notes.
if [ $rc -eq 0 ]; then
	n=$(NODE_PATH=$tests/node_modules node -e '
const Db = require("better-sqlite3");
const db = new Db(process.argv[1], { readonly: true });
console.log(db.prepare("select count(*) as n from events").get().n);' \
	    "$tmp/relay.db" 2>&1)
	if [ "$n" = 6 ]; then
		echo "ok - the relay stored exactly the 6 valid notes"
	else
		echo "not ok - relay database holds $n events, wanted 6"
		rc=1
	fi
fi
exit $rc
