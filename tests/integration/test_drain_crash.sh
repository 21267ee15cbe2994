#!/usr/bin/env bash
# test_drain_crash.sh — crash safety of the author drain. cacheboxd drains
# slow relaysim relays and is killed with SIGKILL at random moments, at
# least 20 times, restarted each time. After every kill no cursor may point
# past data that was not committed (crash_check.py: every pageable event
# newer than a draining cursor, and every pageable event of a finished one,
# is stored). Finally the daemon drains to idle and the store must equal
# the ground truth (drain_check.py).
. "$(dirname "$0")/lib.sh"
use_relaysim
KILLS=${CACHEBOX_CRASH_KILLS:-24}

# 20 authors, 20,000 notes (signed once, then cached); relays slow per event
# and requests paced so a drain lasts long enough to be cut many times: one
# relay with a silent cap, one dropping connections mid-page, one holding a
# burst over its cap.
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
D=$T/state
ARGS=(-d "$D" --set relays.bootstrap="$(relaysim_url a),$(relaysim_url b),$(relaysim_url c)"
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=150
    --set http.listen=127.0.0.1:0)
CHECK=$CACHEBOX_TESTS/integration

kills=0 middrain=0 violations=0 i=0 counts=""
while [ $kills -lt "$KILLS" ] && [ $i -lt $((KILLS * 3)) ]; do
	i=$((i + 1))
	"$CACHEBOXD" "${ARGS[@]}" >>"$T/d.log" 2>&1 &
	pid=$!
	# A random moment: 300 ms to 1.5 s into this run.
	sleep "$(python3 -c 'import random; print(0.3 + random.random() * 1.2)')"
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
	grep -q '"draining": 0,' "$T/cc.out" || middrain=$((middrain + 1))
	counts="$counts $(sed -n 's/.*"stored": \([0-9]*\).*/\1/p' "$T/cc.out")"
	echo "    kill $kills: $(cat "$T/cc.out")"
done
check "killed $kills times with SIGKILL ($middrain with a drain under way)" \
    test "$kills" -ge "$KILLS" -a "$middrain" -ge 20
steps=$(echo $counts | tr ' ' '\n' | sort -u | wc -l)
check "the store grew across the kills ($steps distinct sizes)" test "$steps" -ge 10
check "no cursor ever pointed past uncommitted data ($violations bad)" \
    test "$violations" -eq 0
check "the last run drains to idle and exits 0" \
    timeout 600 "$CACHEBOXD" "${ARGS[@]}" --exit-when-idle 2>>"$T/d.log"
if python3 "$CHECK/drain_check.py" --ready "$RELAYSIM_READY" \
    --config "$T/sim.json" --db "$D/cachebox.db" --bootstrap a,b,c \
    --quiet-ok >"$T/check.out"; then
	ok "final store equals the ground truth"
else
	fail "final store equals the ground truth"
fi
sed 's/^/    /' "$T/check.out"
finish
