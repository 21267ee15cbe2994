#!/usr/bin/env bash
# test_fd_reconnect.sh — cacheboxd does not leak descriptors on the error
# paths of src/net and src/relay. Four bootstrap relays fail over and over:
#   wsdrop   ws://, drops the TCP connection mid-page on every page
#   wssdrop  wss://, the same through TLS
#   badcert  wss:// with a certificate for another name (TLS refused)
#   refused  a loopback port nobody listens on (connect refused)
# relay.backoff_max_ms is at its floor so each relay cycles about once a
# second. The daemon's descriptors (/proc/PID/fd) are sampled throughout:
# the count at a quiet moment (fewest seen in a window) after every relay
# went through at least CYCLES reconnects must equal the count before, and
# no sample may exceed the quiet count by more than two per relay (one
# socket in flight plus a NIP-11 fetch). SIGTERM with connections in
# flight must then exit 0 (under ASan, a leak at exit fails it).
# Prints the figures. Exit 77 (skip) without node, openssl, ws or /proc.
. "$(dirname "$0")/lib.sh"
tests=${CACHEBOX_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
command -v node >/dev/null || { echo "skip: no node"; exit 77; }
command -v openssl >/dev/null || { echo "skip: no openssl"; exit 77; }
[ -d "$tests/node_modules/ws" ] || { echo "skip: run npm ci in tests/"; exit 77; }
[ -d /proc/self/fd ] || { echo "skip: no /proc"; exit 77; }
[ -z "$EMU" ] || { echo "skip: descriptors of an emulated process"; exit 77; }
export NODE_PATH=$tests/node_modules
. "$tests/relaysim/relaysim.sh"

CYCLES=20	# reconnects every relay must go through
NRELAYS=4

sh "$tests/relaysim/mkcerts.sh" "$T/certs" >/dev/null 2>&1 ||
	{ echo "FAIL: mkcerts"; exit 1; }
cat >"$T/sim.json" <<'JSON'
{"dataset": {"authors": 5, "events": 200, "seed": 7},
 "tls": {"cert": "certs/localhost.pem", "key": "certs/localhost.key"},
 "relays": [
  {"name": "wsdrop", "drop_mid_page": {"every": 1, "after": 3}},
  {"name": "wssdrop", "tls": true, "drop_mid_page": {"every": 1, "after": 3}},
  {"name": "badcert", "tls": {"cert": "certs/wrongname.pem", "key": "certs/wrongname.key"}}
 ]}
JSON
relaysim_start "$T/sim.json" || exit 1
PIDS+=("$RELAYSIM_PID")
# A port that was free a moment ago: nothing listens there now.
refused=ws://127.0.0.1:$(python3 -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
urls=("$(relaysim_url wsdrop)" "$(relaysim_url wssdrop)" \
    "$(relaysim_url badcert)" "$refused")
D=$T/state
start_daemon -d "$D" --set relays.bootstrap="$(IFS=,; echo "${urls[*]}")" \
    --set follow.roots="$(relaysim_q root)" --set tls.ca_file="$T/certs/ca.pem" \
    --set relay.backoff_max_ms=1000 --set http.listen=127.0.0.1:0

fds() { ls "/proc/$DPID/fd" 2>/dev/null | wc -l; }
# lost URL: how many times the relay at URL went into backoff.
lost() { grep -F "relay $1: " "$T/d.log" | grep -c -- '-> backoff' || true; }
least_lost() {
	local u n min=
	for u in "${urls[@]}"; do
		n=$(lost "$u")
		[ -z "$min" ] || [ "$n" -lt "$min" ] && min=$n
	done
	echo "${min:-0}"
}
# quiet SECONDS: the fewest descriptors seen over that window (0.1 s steps);
# also raises MAX.
MAX=0
quiet() {
	local end=$((SECONDS + $1)) n min=
	while [ $SECONDS -lt $end ]; do
		n=$(fds)
		[ "$n" -gt "$MAX" ] && MAX=$n
		[ -z "$min" ] || [ "$n" -lt "$min" ] && min=$n
		sleep 0.1
	done
	echo "${min:-0}"
}

check "every relay failed once (warm-up)" wait_for 60 \
    sh -c "test \"\$(grep -c -- '-> backoff' '$T/d.log')\" -ge $NRELAYS"
start_lost=$(least_lost)
before=$(quiet 3)
# Keep sampling (and raising MAX) until every relay cycled CYCLES times
# (about 20 s here; the cap only keeps a broken daemon from hanging the test).
end=$((SECONDS + 400))
while [ "$(least_lost)" -lt $((start_lost + CYCLES)) ] && [ $SECONDS -lt $end ]; do
	quiet 1 >/dev/null
done
after=$(quiet 3)
for u in "${urls[@]}"; do
	echo "    $u: $(lost "$u") reconnect cycles"
done
echo "    descriptors: $before before, $after after, at most $MAX in between"
check "every relay went through $CYCLES more reconnects" \
    test "$(least_lost)" -ge $((start_lost + CYCLES))
check "descriptor count flat across the reconnects ($before -> $after)" \
    test "$after" -eq "$before"
check "no more than $((2 * NRELAYS)) descriptors in flight (max $MAX)" \
    test "$MAX" -le $((before + 2 * NRELAYS))
kill -TERM "$DPID"
st=0
wait "$DPID" || st=$?
check "SIGTERM with connections in flight: exit 0 (got $st)" test "$st" -eq 0
[ "$st" -eq 0 ] || tail -n 40 "$T/d.log"
finish
