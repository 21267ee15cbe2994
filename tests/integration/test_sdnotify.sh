#!/usr/bin/env bash
# test_sdnotify.sh — cacheboxd under a service manager's notification
# protocol, without systemd: notify_sink.py binds the datagram socket
# NOTIFY_SOCKET names and records every datagram.
#   - READY=1 comes once, first, and only when the surfaces answer: the
#     sink runs `cacheboxctl status` and GET /api/status the moment READY=1
#     arrives, once, without retrying;
#   - WATCHDOG=1 (WATCHDOG_USEC=200000: every 100 ms) never before READY=1,
#     at least one between any two other datagrams (a STATUS= line is looked
#     at every 5 s, 50 keep-alive periods), and still coming once idle;
#   - STATUS= lines follow progress: the first one (with READY=1) says the
#     follow lists are being read, a later one gives the drained authors and
#     the stored events exactly as the status document has them once idle;
#   - SIGTERM: STOPPING=1 is the last datagram, exit status 0;
#   - an abstract @name socket works, and a WATCHDOG_PID naming another
#     process means no keep-alive at all (over more than a second of uptime
#     by the daemon's own clock, ten periods);
#   - nothing breaks without NOTIFY_SOCKET, with a socket nobody listens on
#     (one warning, not one per keep-alive), or with a malformed one.
. "$(dirname "$0")/lib.sh"
use_relaysim

SINK=$CACHEBOX_TESTS/integration/notify_sink.py

# sink SOCKET OUT [CMD...]: start notify_sink.py, wait until it is bound.
sink() {
	python3 "$SINK" "$@" &
	PIDS+=("$!")
	wait_for 10 grep -q '"bound"' "$2"
}

# datagrams OUT: the messages recorded in OUT, one JSON string a line.
datagrams() {
	python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "msg" in d:
        print(json.dumps(d["msg"]))
PY
}

# count_msg OUT TEXT: how many datagrams in OUT are exactly TEXT.
count_msg() { datagrams "$1" | grep -cxF "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$2")" || true; }

# has_status OUT TEXT: a STATUS= line of OUT is exactly TEXT.
has_status() {
	python3 - "$1" "$2" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    for l in d.get("msg", "").split("\n"):
        if l == "STATUS=" + sys.argv[2]:
            sys.exit(0)
sys.exit(1)
PY
}

# up_a_second DIR: DIR's daemon has run for a second by its own clock.
up_a_second() { st "$1" && [ "$(json_get "$T/st.json" uptime_s)" -ge 1 ]; }

# term_and_wait: SIGTERM the daemon, its exit status in RC.
term_and_wait() { RC=0; kill -TERM "$DPID"; wait "$DPID" || RC=$?; }

cat >"$T/sim.json" <<'JSON'
{"dataset": {"authors": 6, "events": 300, "seed": 16},
 "relays": [{"name": "a", "ipv6": false}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }

# ---- under a manager: ready, keep-alives, status, stopping -------------
D=$T/state
N=$T/notify.log
sink "$T/notify.sock" "$N" sh -c "
	$EMU '$CACHEBOXCTL' -d '$D' status --json >'$T/ready_ctl.json' &&
	curl -fsS \"http://127.0.0.1:\$(cat '$D/http.port')/api/status\" >'$T/ready_http.json'"
NOTIFY_SOCKET=$T/notify.sock WATCHDOG_USEC=200000 start_daemon -d "$D" \
    --set relays.bootstrap="$(relaysim_url a)" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0
check "READY=1 arrives" wait_for 60 grep -q '"ready_probe"' "$N"
check "the status answered at once on the control socket and the web" \
    grep -qx '{"ready_probe": 0}' "$N"
npub=$(json_get "$T/ready_ctl.json" npub)
check "the control socket's status names the box key" test "${npub#npub1}" != "$npub"
check "the web's status names the same key" test \
    "$(json_get "$T/ready_http.json" npub)" = "$npub"
first=$(datagrams "$N" | sed -n 1p)
echo "    first datagram: $first"
check "READY=1 is the first datagram, with the start-up summary" test \
    "$first" = '"READY=1\nSTATUS=reading follow lists, 0 events, 0/1 relays open, no uplink"'

check "the drain ends idle" wait_for 120 idle
total=$(json_get "$T/st.json" backfill.authors_total)
events=$(json_get "$T/st.json" store.events)
want="$total authors backfilled, $events events, 1/1 relays open, no uplink"
check "a STATUS= line says \"$want\"" wait_for 30 has_status "$N" "$want"
check "$total authors, $events events" test "$total" -ge 6 -a "$events" -ge 300
kept=$(count_msg "$N" WATCHDOG=1)
keepalives_over() { [ "$(count_msg "$N" WATCHDOG=1)" -gt "$1" ]; }
check "keep-alives still come once idle" wait_for 30 keepalives_over $((kept + 2))
term_and_wait
check "exit status 0 after SIGTERM" test "$RC" -eq 0
check "the sink has read everything" wait_for 10 \
    sh -c "tail -n1 '$N' | grep -q STOPPING=1"
datagrams "$N" >"$T/all"
echo "    $(wc -l <"$T/all") datagrams, $(grep -cxF '"WATCHDOG=1"' "$T/all") keep-alives, $(grep -c STATUS= "$T/all") with STATUS="
python3 - "$T/all" >"$T/order" <<'PY'
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1])]
ready = [i for i, m in enumerate(msgs) if "READY=1" in m.split("\n")]
stop = [i for i, m in enumerate(msgs) if "STOPPING=1" in m.split("\n")]
dog = [i for i, m in enumerate(msgs) if m == "WATCHDOG=1"]
other = [i for i, m in enumerate(msgs) if m != "WATCHDOG=1"]
gaps_ok = all(any(a < d < b for d in dog) for a, b in zip(other, other[1:]))
statuses = [l for m in msgs for l in m.split("\n") if l.startswith("STATUS=")]
print(len(ready), ready[0] if ready else -1, len(stop),
      stop[-1] if stop else -1, len(msgs) - 1,
      min(dog) if dog else -1, int(gaps_ok), len(set(statuses)))
PY
read -r nready iready nstop istop ilast firstdog gaps nstatus <"$T/order"
check "exactly one READY=1, the first datagram" test "$nready" -eq 1 -a "$iready" -eq 0
check "no keep-alive before READY=1" test "$firstdog" -gt 0
check "a keep-alive between any two other datagrams" test "$gaps" -eq 1
check "STATUS= changed with progress ($nstatus distinct lines)" test "$nstatus" -ge 3
check "exactly one STOPPING=1, the last datagram" test "$nstop" -eq 1 -a "$istop" -eq "$ilast"
check "STOPPING=1 says stopping" test "$(tail -n1 "$T/all")" = '"STOPPING=1\nSTATUS=stopping"'

# ---- an abstract socket; the watchdog of another process -----------------
D=$T/state2
N=$T/notify2.log
name=@cachebox-it-$$-notify
sink "$name" "$N"
: >"$T/d.log"
NOTIFY_SOCKET=$name WATCHDOG_USEC=200000 WATCHDOG_PID=1 start_daemon \
    -d "$D" --set http.listen=127.0.0.1:0
check "READY=1 arrives on the abstract socket" wait_for 60 \
    has_status "$N" "no roots to follow, 0 events, no uplink"
check "the daemon has run for a second by its own clock" wait_for 30 \
    up_a_second "$D"
term_and_wait
check "exit status 0" test "$RC" -eq 0
check "STOPPING=1 arrives" wait_for 10 grep -q STOPPING=1 "$N"
check "no keep-alive for another process's watchdog" test "$(count_msg "$N" WATCHDOG=1)" -eq 0
check "the log says whose watchdog it is" \
    grep -q "no watchdog (it is process 1's)" "$T/d.log"

# ---- nothing breaks without a manager -------------------------------------
run_without() {
	: >"$T/d.log"
	start_daemon -d "$T/state3" --set http.listen=127.0.0.1:0
	wait_for 30 up_a_second "$T/state3" || return 1
	term_and_wait
	[ "$RC" -eq 0 ]
}
export -n NOTIFY_SOCKET 2>/dev/null || true
unset NOTIFY_SOCKET
WATCHDOG_USEC=200000 check "no NOTIFY_SOCKET: runs a second, exits 0" run_without
check "no NOTIFY_SOCKET: not a word about a service manager" \
    test "$(grep -c 'service manager\|NOTIFY_SOCKET' "$T/d.log" || true)" -eq 0
NOTIFY_SOCKET=$T/nobody.sock WATCHDOG_USEC=200000 check \
    "a socket nobody listens on: runs a second, exits 0" run_without
check "one warning for it, not one per keep-alive" \
    test "$(grep -c "cannot notify $T/nobody.sock" "$T/d.log" || true)" -eq 1
NOTIFY_SOCKET=relative/notify check "a malformed NOTIFY_SOCKET: runs, exits 0" run_without
check "the log says why it is not used" grep -q \
    'NOTIFY_SOCKET "relative/notify": neither an absolute path nor an @name' "$T/d.log"
finish
