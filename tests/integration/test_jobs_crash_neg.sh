#!/usr/bin/env bash
# test_jobs_crash_neg.sh — crash safety of a custom job that reconciles
# (NIP-77), as test_jobs_crash.sh for a paged one. cacheboxd runs an
# author-batched job over slow relaysim relays that speak NIP-77 and cap
# every answer at 137 (one holds a burst of 300 events in one second,
# one ignores until) and is killed with SIGKILL at random moments, restarted each time,
# until 12 kills landed with the job under way. Each batch is reconciled
# window by window; a window's cursor commits with its events. After every
# kill (jobs_check.py crash --match-relays): every finished batch has every
# event its relay holds stored, every unfinished one everything newer than
# its cursor, and no batch finished before was done again (its windows and
# counters unchanged). Finally the job runs to its end complete, with every
# held event stored (jobs_check.py judge).
#
# A kill's moment is chosen by the job's progress, not by time, as in
# test_jobs_crash.sh (jobs_kill.py wait): at least one more window
# committed in the run and a random 1 to 4 more counted than were
# committed before it began; the first three runs of each job also wait
# for one more finished batch. Should the job end before 12 kills landed
# in it, the kills go on with a new state directory and a new job.
. "$(dirname "$0")/lib.sh"
use_relaysim
KILLS=${CACHEBOX_CRASH_KILLS:-12}	# kills wanted with the job under way
CHECK=$CACHEBOX_TESTS/integration/jobs_check.py

cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 20, "events": 20000, "seed": 22},
 "relays": [
  {"name": "a", "negentropy": "yes", "cap": 137,
   "subset": {"fraction": 0.7, "seed": 21}, "slow_ms": {"per_event": 1},
   "burst": {"created_at": 1650000000, "count": 300, "author": 2}},
  {"name": "b", "negentropy": "yes", "subset": {"fraction": 0.6, "seed": 22},
   "cap": 137, "slow_ms": {"per_event": 1}},
  {"name": "c", "negentropy": "yes", "subset": {"fraction": 0.5, "seed": 23},
   "cap": 137, "ignore_until": true, "slow_ms": {"per_event": 1}}
 ]}
JSON
relaysim_start "$T/sim.json" 600 || { fail "relaysim starts"; finish; exit 1; }
SETS=(--set relays.bootstrap="$(relaysim_url a),$(relaysim_url b),$(relaysim_url c)"
    --set backfill.pace_ms=150 --set http.listen=127.0.0.1:0)
AUTHORS=$(python3 -c 'import json,sys; print(",".join(a["pubkey"] for a in json.load(open(sys.argv[1]))["authors"]))' "$(relaysim_q meta)")
jobs=1
D=$T/state.$jobs

# new_job: the job of this state directory, made on its first run.
new_job() {
	wait_for 30 cboxctl -d "$D" jobs new label=crash kinds=1 "authors=$AUTHORS" \
	    batch_size=2 >/dev/null
}

kills=0 midjob=0 inthis=0 violations=0 i=0 counts="" made=""
KILL=$CACHEBOX_TESTS/integration/jobs_kill.py
while [ $midjob -lt "$KILLS" ] && [ $i -lt $((KILLS * 6)) ]; do
	i=$((i + 1))
	rm -f "$D/http.port"	# a killed run leaves its own behind
	read -r base done <<<"$(python3 "$KILL" committed "$D/cachebox.db")"
	"$CACHEBOXD" -d "$D" "${SETS[@]}" >>"$T/d.log" 2>&1 &
	pid=$!
	if [ "$made" != "$D" ]; then
		new_job || { fail "job made in $D"; kill -KILL $pid; break; }
		made=$D
	fi
	# the first three runs of a job each wait for one more finished batch
	# as well, so batches finished before a kill are there to check
	want_done=0
	[ $inthis -lt 3 ] && want_done=$((done + 1))
	python3 "$KILL" wait "$D/http.port" "$D/cachebox.db" "$base" \
	    $((base + $(python3 -c 'import random; print(random.randint(1, 4))'))) \
	    $want_done || true
	if kill -KILL "$pid" 2>/dev/null; then
		kills=$((kills + 1))
	fi
	wait "$pid" 2>/dev/null || true
	if ! python3 "$CHECK" crash --match-relays a,b,c --ready "$RELAYSIM_READY" --db "$D/cachebox.db" \
	    --state "$D.finished" >"$T/cc.out" 2>&1; then
		violations=$((violations + 1))
		echo "    after kill $kills: $(cat "$T/cc.out")"
	fi
	counts="$counts $jobs:$(python3 "$KILL" committed "$D/cachebox.db" | cut -d' ' -f1)"
	echo "    kill $kills: $(cat "$T/cc.out")"
	if ! grep -q '"unfinished": 0,' "$T/cc.out"; then
		midjob=$((midjob + 1)) inthis=$((inthis + 1))
	elif [ $midjob -lt "$KILLS" ]; then
		echo "    job $jobs ended after $inthis kills in it: a fresh one"
		jobs=$((jobs + 1)) inthis=0
		D=$T/state.$jobs
	fi
done
check "killed $kills times with SIGKILL, $midjob with the job under way ($jobs jobs)" \
    test "$midjob" -ge "$KILLS"
steps=$(echo $counts | tr ' ' '\n' | sort -u | wc -l)
finished=$(python3 -c 'import json,sys
print(sum(len(json.load(open(f))) for f in sys.argv[1:]))' "$T"/state.*.finished)
check "batches finished between kills, so redoing one would show ($finished)" \
    test "$finished" -ge 3
check "every run committed more of the job ($steps distinct points)" \
    test "$steps" -ge "$KILLS"
check "no cursor past uncommitted data, no batch done twice ($violations bad)" \
    test "$violations" -eq 0
check "the last run finishes the job and exits 0" \
    timeout 600 "$CACHEBOXD" -d "$D" "${SETS[@]}" --exit-when-idle 2>>"$T/d.log"
if python3 "$CHECK" crash --match-relays a,b,c --ready "$RELAYSIM_READY" --db "$D/cachebox.db" \
    --state "$D.finished" >"$T/cc.out"; then
	ok "after the end no finished batch was done again: $(cat "$T/cc.out")"
else
	fail "after the end no finished batch was done again: $(cat "$T/cc.out")"
fi
if python3 "$CHECK" judge --match-relays a,b,c --ready "$RELAYSIM_READY" --config "$T/sim.json" \
    --db "$D/cachebox.db" --layout plain --relays a,b,c --batch-size 2 \
    >"$T/check.out"; then
	ok "the job's result equals the ground truth"
else
	fail "the job's result equals the ground truth"
fi
grep -v '^ok - job .* batch' "$T/check.out" | sed 's/^/    /'
check "every batch was reconciled" test "$(python3 - "$D/cachebox.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print(db.execute("SELECT count(*) FROM job_batches WHERE coalesce(way, '') != 'nip77'").fetchone()[0])
PY
)" -eq 0
finish
