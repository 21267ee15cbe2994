#!/bin/bash
# test_net.sh — src/net against real loopback peers: a Node ws/wss echo
# server (net_echo_server.mjs) with a throw-away PKI made by openssl
# (gen_net_certs.sh), driven by the C program prog_net. Then prints the heap
# held by one idle wss connection (prog_net mem 10).
# Exit 77 (skip) when node, openssl, the ws package or prog_net is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tests=${CACHEBOX_TESTS:-$(dirname "$here")}
build=${CACHEBOX_BUILD:-}
prog=$build/tests/integration/prog_net
emu=${CACHEBOX_EMULATOR:-}

command -v node >/dev/null || { echo "skip: no node"; exit 77; }
command -v openssl >/dev/null || { echo "skip: no openssl"; exit 77; }
[ -d "$tests/node_modules/ws" ] || { echo "skip: run npm ci in tests/"; exit 77; }
[ -x "$prog" ] || { echo "skip: $prog not built"; exit 77; }

tmp=$(mktemp -d)
server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

bash "$here/gen_net_certs.sh" "$tmp/pki" || { echo "FAIL: certificates"; exit 1; }
NODE_PATH=$tests/node_modules node "$here/net_echo_server.mjs" "$tmp/pki" \
    >"$tmp/ports" 2>"$tmp/server.log" &
server=$!
for _ in $(seq 100); do
	[ -s "$tmp/ports" ] && break
	sleep 0.1
done
ports=$(head -n1 "$tmp/ports")
[ -n "$ports" ] || { echo "FAIL: server did not start"; cat "$tmp/server.log"; exit 1; }
echo "peers: $ports"

export NET_PORTS=$ports NET_CA=$tmp/pki/ca.pem
$emu "$prog"
rc=$?
[ $rc -eq 0 ] && $emu "$prog" mem 10 && $emu "$prog" mem 10 ws
[ -s "$tmp/server.log" ] && { echo "server log:"; cat "$tmp/server.log"; }
exit $rc
