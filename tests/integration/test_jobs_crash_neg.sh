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
. "$(dirname "$0")/jobs_crash_lib.sh"
jobs_crash_run 4 --match-relays a,b,c
check "every batch was reconciled" test "$(python3 - "$D/cachebox.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print(db.execute("SELECT count(*) FROM job_batches WHERE coalesce(way, '') != 'nip77'").fetchone()[0])
PY
)" -eq 0
finish
