#!/bin/bash
# test_net.sh — src/net against real loopback peers: a Node ws/wss echo
# server (net_echo_server.mjs) with a throw-away PKI made by openssl
# (gen_net_certs.sh), driven by the C program prog_net. Then prints the heap
# held by one idle wss connection (prog_net mem 10).
# Exit 77 (skip) when node, openssl, the ws package or prog_net is missing.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
prog=$CACHEBOX_BUILD/tests/integration/prog_net

command -v node >/dev/null || { echo "skip: no node"; exit 77; }
command -v openssl >/dev/null || { echo "skip: no openssl"; exit 77; }
[ -d "$CACHEBOX_TESTS/node_modules/ws" ] || { echo "skip: run npm ci in tests/"; exit 77; }
[ -x "$prog" ] || { echo "skip: $prog not built"; exit 77; }

bash "$here/gen_net_certs.sh" "$T/pki" || { fail "certificates"; finish; exit 1; }
NODE_PATH=$CACHEBOX_TESTS/node_modules node "$here/net_echo_server.mjs" "$T/pki" \
    >"$T/ports" 2>"$T/server.log" &
PIDS+=("$!")
wait_for 10 test -s "$T/ports" || true
ports=$(head -n1 "$T/ports")
[ -n "$ports" ] || { fail "server did not start"; cat "$T/server.log"; finish; exit 1; }
echo "peers: $ports"

export NET_PORTS=$ports NET_CA=$T/pki/ca.pem
# prog_net prints its own ok/not ok lines; the heap figures are printed,
# not judged.
if $EMU "$prog"; then
	ok "prog_net: every check passed"
	{ $EMU "$prog" mem 10 && $EMU "$prog" mem 10 ws; } || true
else
	fail "prog_net exit $?"
fi
[ -s "$T/server.log" ] && { echo "server log:"; cat "$T/server.log"; }
finish
