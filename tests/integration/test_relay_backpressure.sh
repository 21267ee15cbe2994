#!/usr/bin/env bash
# test_relay_backpressure.sh — what a client of the box's relay can make
# the daemon hold (docs/ARCHITECTURE.md §9). A client with a 4 KiB receive buffer
# subscribes to everything and never reads while 800 events of 16 KiB
# each (12.5 MiB) arrive through `cacheboxctl import`: it is cut off as a
# slow reader, the daemon's peak RSS (VmHWM) stays inside 16 MiB, and a
# client that reads gets every one of the 800 live. Then 50 clients with
# 10 subscriptions each: every subscription answered, the RSS printed.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
gen=$CACHEBOX_BUILD/tests/integration/prog_relayd
command -v node >/dev/null || { echo "skip: no node"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
[ -e "$CACHEBOX_TESTS/node_modules/ws" ] || { echo "skip: ws missing"; exit 77; }
[ -r /proc/self/status ] || { echo "skip: no /proc"; exit 77; }
[ -z "$EMU" ] || { echo "skip: memory is not judged under an emulator"; exit 77; }

D=$T/box
mkdir -m 700 "$D"
$EMU "$gen" gen "$D" 2000 5 20 >/dev/null
start_daemon -d "$D" --set relays.bootstrap= --set http.listen=127.0.0.1:0 \
    --set relay.listen=127.0.0.1:0
check "relay.port written" wait_for 10 test -s "$D/relay.port"
P=$(cat "$D/relay.port")
vm() { awk -v k="$1:" '$1 == k { print $2 * 1024 }' "/proc/$DPID/status"; }

# 800 events of 16 KiB, signed by a key of our own.
$EMU "$gen" key 99 0 >"$T/k.hex"
chmod 600 "$T/k.hex"
python3 -c '
import json, sys, time
now = int(time.time())
for i in range(800):
    print(json.dumps({"kind": 1, "created_at": now - i, "tags": [["t", "flood"]],
        "content": ("flood %d " % i) + "x" * 16384}))' >"$T/tpl.jsonl"
cboxctl event sign --key "$T/k.hex" <"$T/tpl.jsonl" >"$T/flood.jsonl"
check "800 flood events signed" test "$(wc -l <"$T/flood.jsonl")" -eq 800

python3 "$here/relay_attack.py" "$P" slow 8 >"$T/slow.out" &
slow=$!
node "$here/relay_load.mjs" live "ws://127.0.0.1:$P" '{"#t":["flood"]}' 800 60000 \
    >"$T/reader.out" 2>"$T/reader.err" &
reader=$!
PIDS+=("$slow" "$reader")
wait_for 10 grep -q subscribed "$T/slow.out"
wait_for 10 grep -q eose "$T/reader.err"
cboxctl -d "$D" import "$T/flood.jsonl" >"$T/import.out"
check "the import stored all 800" grep -q '^stored: 800$' "$T/import.out"
wait "$slow" || true
wait "$reader" || true
sed 's/^/    /' "$T/slow.out" "$T/reader.out"
check "the client that never reads was cut off by the server" \
    grep -q '"closed_by_server": true' "$T/slow.out"
check "  and the log says why" grep -q "cut off: slow reader" "$T/d.log"
check "the client that reads got all 800 live" \
    grep -q '"live":800' "$T/reader.out"
st
check "status: one client cut for not reading" \
    test "$(json_get "$T/st.json" relay_endpoint.cut_slow)" = 1
peak=$(vm VmHWM)
echo "    peak RSS (VmHWM) through the flood: $((peak / 1024)) KiB"
if ! measured_natively; then
	echo "    (sanitizer or emulator: memory printed, not judged)"
else
	check "peak RSS within 16 MiB ($((peak / 1024)) KiB)" \
	    test "$peak" -le $((16 * 1024 * 1024))
fi

# The clients stay connected until the end of the test (or 10 minutes).
node "$here/relay_load.mjs" many "ws://127.0.0.1:$P" 50 10 600000 >"$T/many.out" &
PIDS+=("$!")
check "50 clients x 10 subscriptions: every one answered (EOSE)" \
    wait_for 300 grep -q '"ready":true,"eose":500' "$T/many.out"
st
echo "    with 50 clients and 500 subscriptions: RSS $(( $(vm VmRSS) / 1024 )) KiB," \
    "peak $(( $(vm VmHWM) / 1024 )) KiB, status rss_bytes $(json_get "$T/st.json" rss_bytes)"
check "status: 50 clients, 500 subscriptions live" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["relay_endpoint"]
sys.exit(0 if r["clients"] == 50 and r["subscriptions"] == 500 and
    r["subscriptions_live"] == 500 else 1)' "$T/st.json"
finish
