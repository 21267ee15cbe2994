#!/usr/bin/env bash
# test_drain_crash.sh — crash safety of the author drain. cacheboxd drains
# slow relaysim relays and is killed with SIGKILL at random moments,
# restarted each time, until 20 kills landed with a drain under way (cursor
# rows still draining). After every kill no cursor may point past data that
# was not committed (crash_check.py: every pageable event newer than a
# draining cursor, and every pageable event of a finished one, is stored).
# Finally the daemon drains to idle and the store must equal the ground
# truth (drain_check.py).
#
# The count does not depend on the machine's speed. A kill's moment is
# chosen in drain progress, not in time: once the run committed a batch and
# stored a random 100 to 800 new events (committed or not), so every run
# moves the drain on by a few pages (a drain of ~19,000 events and ~195
# pages lasted 50 runs here). Should a drain finish before 20 kills landed
# in it anyway, the kills go on with a fresh state directory, i.e. a new
# drain, until they did; the final checks judge the last one.
. "$(dirname "$0")/lib.sh"
use_relaysim
KILLS=${CACHEBOX_CRASH_KILLS:-20}	# kills wanted with a drain under way

# 20 authors, 20,000 notes (signed once, then cached); relays slow per event
# and requests paced: one relay with a silent cap, one dropping connections
# mid-page, one holding a burst over its cap.
cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 20, "events": 20000, "seed": 22},
 "relays": [
  {"name": "a", "cap": 300, "subset": {"fraction": 0.7, "seed": 21},
   "slow_ms": {"per_event": 1}},
  {"name": "b", "subset": {"fraction": 0.6, "seed": 22},
   "drop_mid_page": {"after": 120, "every": 15}, "slow_ms": {"per_event": 1}},
  {"name": "c", "subset": {"fraction": 0.5, "seed": 23}, "cap": 300,
   "burst": {"created_at": 1650000000, "count": 400, "author": 2},
   "slow_ms": {"per_event": 1}}
 ]}
JSON
relaysim_start "$T/sim.json" 600 || { fail "relaysim starts"; finish; exit 1; }
SETS=(--set relays.bootstrap="$(relaysim_url a),$(relaysim_url b),$(relaysim_url c)"
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=150
    --set http.listen=127.0.0.1:0)
drains=1
D=$T/state.$drains
CHECK=$CACHEBOX_TESTS/integration

# kill_moment MIN: wait for this run's status, then until it committed a
# batch and stored MIN new events, or is idle (nothing left to do). Polled
# every 20 ms by one process, so the kill lands at a random point of the
# batch being filled.
kill_moment() {
	python3 - "$D/http.port" "$1" <<'PY' || true
import json, os, sys, time, urllib.request
port_file, want = sys.argv[1], int(sys.argv[2])
end = time.monotonic() + 300
while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
    if time.monotonic() > end:
        sys.exit(1)
    time.sleep(0.02)
url = f"http://127.0.0.1:{open(port_file).read().strip()}/api/status"
while time.monotonic() < end:
    try:
        s = json.load(urllib.request.urlopen(url, timeout=10))
    except OSError:
        sys.exit(1)
    i = s["ingest"]
    if s["idle"] or (i["transactions"] >= 1 and i["stored"] >= want):
        sys.exit(0)
    time.sleep(0.02)
PY
}

kills=0 middrain=0 inthis=0 violations=0 i=0 counts=""
while [ $middrain -lt "$KILLS" ] && [ $i -lt $((KILLS * 5)) ]; do
	i=$((i + 1))
	rm -f "$D/http.port"	# a killed run leaves its own behind
	"$CACHEBOXD" -d "$D" "${SETS[@]}" >>"$T/d.log" 2>&1 &
	pid=$!
	kill_moment "$(python3 -c 'import random; print(random.randint(100, 800))')"
	if kill -KILL "$pid" 2>/dev/null; then
		kills=$((kills + 1))
	fi
	wait "$pid" 2>/dev/null || true
	[ -f "$D/cachebox.db" ] || continue
	if ! python3 "$CHECK/crash_check.py" --ready "$RELAYSIM_READY" \
	    --db "$D/cachebox.db" >"$T/cc.out" 2>&1; then
		violations=$((violations + 1))
		echo "    after kill $kills: $(cat "$T/cc.out")"
	fi
	counts="$counts $(sed -n 's/.*"stored": \([0-9]*\).*/\1/p' "$T/cc.out")"
	echo "    kill $kills: $(cat "$T/cc.out")"
	if ! grep -q '"draining": 0,' "$T/cc.out"; then
		middrain=$((middrain + 1)) inthis=$((inthis + 1))
	elif ! grep -q '"cursors": 0,' "$T/cc.out" &&
	    [ $middrain -lt "$KILLS" ]; then
		echo "    drain $drains finished after $inthis kills in it: a fresh one"
		drains=$((drains + 1)) inthis=0
		D=$T/state.$drains
	fi
done
check "killed $kills times with SIGKILL, $middrain with a drain under way ($drains drains)" \
    test "$middrain" -ge "$KILLS"
steps=$(echo $counts | tr ' ' '\n' | sort -u | wc -l)
check "the store grew across the kills ($steps distinct sizes)" test "$steps" -ge 10
check "no cursor ever pointed past uncommitted data ($violations bad)" \
    test "$violations" -eq 0
check "the last run drains to idle and exits 0" \
    timeout 600 "$CACHEBOXD" -d "$D" "${SETS[@]}" --exit-when-idle 2>>"$T/d.log"
if python3 "$CHECK/drain_check.py" --ready "$RELAYSIM_READY" \
    --config "$T/sim.json" --db "$D/cachebox.db" --bootstrap a,b,c \
    --quiet-ok >"$T/check.out"; then
	ok "final store equals the ground truth"
else
	fail "final store equals the ground truth"
fi
sed 's/^/    /' "$T/check.out"
finish
