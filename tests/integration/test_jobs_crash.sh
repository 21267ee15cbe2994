#!/usr/bin/env bash
# test_jobs_crash.sh — crash safety of a custom job. cacheboxd runs an
# author-batched job over slow relaysim relays (a silent cap, connections
# dropped mid-page, a burst over the cap) and is killed with SIGKILL at
# random moments, restarted each time, until 12 kills landed with the job
# under way. After every kill (jobs_check.py crash): every finished batch
# has all it can page stored, every unfinished one everything newer than
# its cursor (a cursor never points past uncommitted events), and no batch
# finished before was done again (its pages and counters unchanged).
# Finally the job runs to its end and equals the ground truth
# (jobs_check.py judge), as an uninterrupted run would.
#
# A kill's moment is chosen by the job's progress, not by time
# (jobs_kill.py wait): once the run committed at least one more page of
# the job and the job counts a random 1 to 8 more pages than were
# committed before the run began (the last of them may not be committed
# yet), so every run moves the job on. The first three runs of each job
# also wait for one more finished batch, so there are finished batches
# whose redoing would show. Should the job end before 12 kills landed in
# it, the kills go on with a new state directory and a new job.
. "$(dirname "$0")/lib.sh"
use_relaysim
KILLS=${CACHEBOX_CRASH_KILLS:-12}	# kills wanted with the job under way

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
. "$(dirname "$0")/jobs_crash_lib.sh"
jobs_crash_run 8
finish
