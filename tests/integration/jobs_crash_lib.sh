# jobs_crash_lib.sh — the kill loop and the checks the job crash tests
# share (test_jobs_crash.sh, a paged job; test_jobs_crash_neg.sh, one that
# reconciles); sourced after lib.sh, with relaysim's network described in
# $T/sim.json, its relays named a, b and c, and KILLS set.
#
# jobs_crash_run STEP_MAX [MATCH_ARGS...]: start relaysim; then, until
# KILLS kills landed with the job under way, start cacheboxd on a state
# directory, make its job on the first run (author batches of 2, kind 1),
# kill it with SIGKILL at a moment of the job's progress (jobs_kill.py
# wait: one more page or window committed in the run and a random 1 to
# STEP_MAX more counted than were committed before it; the first three
# runs of a job also one more finished batch) and check the store after
# every kill (jobs_check.py crash, with MATCH_ARGS); a job that ended
# before KILLS kills landed in it is followed by a fresh one in a new
# state directory. Then the run's checks, the last run to the job's end
# and jobs_check.py judge (with MATCH_ARGS). Leaves D, the last state
# directory.
jobs_crash_run() {
	local step_max=$1 match
	local CHECK=$CACHEBOX_TESTS/integration/jobs_check.py
	local KILL=$CACHEBOX_TESTS/integration/jobs_kill.py
	shift
	match=("$@")
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
		    $((base + $(python3 -c "import random; print(random.randint(1, $step_max))"))) \
		    $want_done || true
		if kill -KILL "$pid" 2>/dev/null; then
			kills=$((kills + 1))
		fi
		wait "$pid" 2>/dev/null || true
		if ! python3 "$CHECK" crash "${match[@]}" --ready "$RELAYSIM_READY" --db "$D/cachebox.db" \
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
	finished=$(python3 -c 'import json, sys; print(sum(len(json.load(open(f))) for f in sys.argv[1:]))' \
	    "$T"/state.*.finished)
	check "batches finished between kills, so redoing one would show ($finished)" \
	    test "$finished" -ge 3
	check "every run committed more of the job ($steps distinct points)" \
	    test "$steps" -ge "$KILLS"
	check "no cursor past uncommitted data, no batch done twice ($violations bad)" \
	    test "$violations" -eq 0
	check "the last run finishes the job and exits 0" \
	    timeout 600 "$CACHEBOXD" -d "$D" "${SETS[@]}" --exit-when-idle 2>>"$T/d.log"
	if python3 "$CHECK" crash "${match[@]}" --ready "$RELAYSIM_READY" --db "$D/cachebox.db" \
	    --state "$D.finished" >"$T/cc.out"; then
		ok "after the end no finished batch was done again: $(cat "$T/cc.out")"
	else
		fail "after the end no finished batch was done again: $(cat "$T/cc.out")"
	fi
	if python3 "$CHECK" judge "${match[@]}" --ready "$RELAYSIM_READY" --config "$T/sim.json" \
	    --db "$D/cachebox.db" --layout plain --relays a,b,c --batch-size 2 \
	    >"$T/check.out"; then
		ok "the job's result equals the ground truth"
	else
		fail "the job's result equals the ground truth"
	fi
	grep -v '^ok - job .* batch' "$T/check.out" | sed 's/^/    /'
}
