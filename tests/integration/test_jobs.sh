#!/usr/bin/env bash
# test_jobs.sh — custom backfill jobs against relaysim's truth. Relays cap
# their answers below every batch's and window's size: a holds everything
# (cap 60), b a part with a same-second burst over its cap (cap 40), c a
# part and ignores until (cap 50). cacheboxd follows nobody, so only jobs
# fetch. An author-batched job, an id-batched job and a time-window job
# each store exactly what some relay can page for their batches
# (jobs_check.py judge: relaysim's pageable truth per batch, as one unit)
# and report the batches a relay cannot page as incomplete with its
# reason; the dry run's batches and requests are the job's. The outbox
# mode asks each author on its NIP-65 write relays (learnt by a relay-list
# job). A relay that refuses every request fails its batch after
# JOBS_MAX_ATTEMPTS tries with its reason, and retry runs it again.
# Cancel stops a job before its next page; a job that runs every 2 s
# moves its since to the previous run's start and fetches what was
# published in between. The status and /metrics count jobs by status.
. "$(dirname "$0")/lib.sh"
use_relaysim
command -v curl >/dev/null || { echo "skip: curl missing"; exit 77; }
CHECK=$CACHEBOX_TESTS/integration/jobs_check.py

cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 12, "events": 3000, "seed": 81},
 "relays": [
  {"name": "a", "cap": 60},
  {"name": "b", "cap": 40, "subset": {"fraction": 0.6, "seed": 3},
   "burst": {"created_at": 1650000000, "count": 90, "author": 2}},
  {"name": "c", "cap": 50, "ignore_until": true,
   "subset": {"fraction": 0.5, "seed": 4}},
  {"name": "d", "rate_limit": {"every": 1, "message": "blocked: closed for maintenance"}},
  {"name": "slow", "cap": 20, "slow_ms": {"per_page": 300}}
 ]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
A=$(relaysim_url a) B=$(relaysim_url b) C=$(relaysim_url c)
TOKEN=jobs-test-token-0123456789
D=$T/d
start_daemon -d "$D" --set relays.bootstrap="$A,$B,$C" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --set admin.token=$TOKEN \
    --set jobs.retry_base_ms=20
check "http.port written" wait_for 10 test -s "$D/http.port"
H="http://127.0.0.1:$(cat "$D/http.port")"

# ctl WORDS...: cacheboxctl --json into $T/r.json
ctl() { cboxctl -d "$D" "$@" --json >"$T/r.json"; }
# jget FIELD: a field of the last answer
jget() { json_get "$T/r.json" "$1"; }
# job_field ID FIELD
job_field() { cboxctl -d "$D" jobs show "$1" --json >"$T/s.json" && json_get "$T/s.json" "$2"; }
job_is() { [ "$(job_field "$1" "$2")" = "$3" ]; }
job_ge() { [ "$(job_field "$1" "$2")" -ge "$3" ]; }
reqs_are() { [ "$(relaysim_q stats "$1" reqs)" = "$2" ]; }
job_ended() { case "$(job_field "$1" status)" in complete|incomplete|failed|cancelled) ;; *) return 1;; esac; }
judge() { python3 "$CHECK" judge --ready "$RELAYSIM_READY" --config "$T/sim.json" --db "$D/cachebox.db" "$@"; }
report() { local st=0; "$@" >"$T/judge.out" 2>&1 || st=$?; sed 's/^/    /' "$T/judge.out";
	if [ $st -eq 0 ]; then ok "jobs_check: $*" ; else fail "jobs_check: $*"; fi; }

META=$(relaysim_q meta)
AUTHORS=$(python3 -c 'import json,sys; print(",".join(a["pubkey"] for a in json.load(open(sys.argv[1]))["authors"]))' "$META")

# --- an author-batched job: dry run first, then the job ----------------------
check "dry run answers" ctl jobs dry-run kinds=1 "authors=$AUTHORS" batch_size=5
check "  12 authors, 3 chunks on 3 relays: 9 batches" test "$(jget batches)" = 9
check "  one request per batch" test "$(jget requests)" = 9
check "  authors counted and shown" test "$(jget authors)" = 12 -a "$(jget authors_first.0)" != ""
check "  three relays, three batches each" test "$(jget relays.2.batches)" = 3
check "  nothing stored by a dry run" test "$(cboxctl -d "$D" jobs list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')" = 0
check "jobs new answers" ctl jobs new label=authors kinds=1 "authors=$AUTHORS" batch_size=5
J1=$(jget job)
check "  job $J1 with the dry run's 9 batches" test "$(jget batches)" = 9 -a "$(jget requests)" = 9
check "job $J1 ends" wait_for 120 job_ended "$J1"
check "  its batches_total is the dry run's" test "$(job_field "$J1" batches_total)" = 9
check "  every batch done" test "$(job_field "$J1" batches_done)" = 9
check "  at least one request per batch was sent" test "$(job_field "$J1" requests)" -ge 9
check "  incomplete: b hides a burst, c ignores until" test "$(job_field "$J1" status)" = incomplete
check "  its error names a reason" grep -q "same-second burst over the relay cap\|relay ignores until" <<<"$(job_field "$J1" error)"
curl -s "$H/api/jobs/show?job=$J1" >"$T/show.json"
check "GET /api/jobs/show has the promised fields" python3 - "$T/show.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
need = ["job", "label", "status", "filter", "batch_mode", "batches_total",
        "batches_done", "events_fetched", "error", "batches"]
assert all(k in j for k in need), [k for k in need if k not in j]
assert j["filter"] == {"kinds": [1]} and j["batch_mode"] == "authors"
bad = [b for b in j["batches"] if b["status"] in ("incomplete", "failed")]
assert bad and all(b["relay"].startswith("ws://") and b["reason"] for b in bad)
PY
report judge --jobs "$J1" --layout plain --relays a,b,c --batch-size 5

# --- an id-batched job -----------------------------------------------------------
relaysim_q truth match '{"kinds":[1]}' >"$T/all-ids"
awk 'NR % 41 == 1 && n++ < 60' "$T/all-ids" >"$T/ids"
check "60 ids picked" test "$(wc -l <"$T/ids")" -eq 60
check "ids job" ctl jobs new label=ids "ids=$(paste -sd, "$T/ids")" batch_size=8 "relays=$A $B $C"
J2=$(jget job)
check "  8 chunks on 3 relays" test "$(jget batches)" = 24 -a "$(jget batch_mode)" = ids
check "job $J2 ends" wait_for 120 job_ended "$J2"
report judge --jobs "$J2" --layout plain --relays a,b,c --batch-size 8

# --- a time-window job: no authors, no ids, drained inside the window ---------
check "time-window dry run" ctl jobs dry-run kinds=1 since=2021-06-01 until=2022-06-01T12:00:00Z
check "  one batch per relay" test "$(jget batches)" = 3 -a "$(jget batch_mode)" = none
check "time-window job" ctl jobs new label=window kinds=1 since=2021-06-01 until=2022-06-01T12:00:00Z
J3=$(jget job)
check "job $J3 ends" wait_for 120 job_ended "$J3"
check "  far more events than any relay's cap came" test "$(job_field "$J3" events_fetched)" -gt 200
report judge --jobs "$J3" --layout plain --relays a,b,c --batch-size 100
report judge --jobs "$J1,$J2,$J3"

# --- outbox: learn the relay lists, then ask each author on its write relays --
check "relay lists of the authors (preset, typed authors)" ctl jobs new preset=relay-lists "authors=$AUTHORS"
J4=$(jget job)
check "  the preset's kind and the typed list" test "$(jget filter.kinds.0)" = 10002 -a "$(jget authors_source)" = manual
check "job $J4 ends complete" wait_for 120 job_is "$J4" status complete
check "outbox dry run" ctl jobs dry-run kinds=0,1 "authors=$AUTHORS" relay_mode=outbox batch_size=4
DRY=$(jget batches)
check "outbox job" ctl jobs new label=outbox kinds=0,1 "authors=$AUTHORS" relay_mode=outbox batch_size=4
J5=$(jget job)
check "  the dry run's batch count ($DRY)" test "$(jget batches)" = "$DRY"
check "job $J5 ends" wait_for 120 job_ended "$J5"
report judge --jobs "$J5" --layout outbox --relays a,b,c
report judge --jobs "$J1,$J2,$J3,$J4,$J5"

# --- a relay that refuses everything: retried, then failed with its reason ----
check "a job on a refusing relay" ctl jobs new label=refused kinds=0 "relays=$(relaysim_url d)"
J6=$(jget job)
check "job $J6 ends failed" wait_for 60 job_is "$J6" status failed
check "  the relay's reason recorded" grep -q "blocked: closed for maintenance" <<<"$(job_field "$J6" error)"
check "  after $((5)) attempts" test "$(json_get "$T/s.json" batches.0.attempts)" = 5
check "  the relay saw those 5 requests" test "$(relaysim_q stats d reqs)" = 5
check "retry" ctl jobs retry "$J6"
check "  one batch again" test "$(jget batches)" = 1
check "job $J6 ran again: 5 more requests" wait_for 60 reqs_are d 10
check "  failed again" wait_for 30 job_is "$J6" status failed

# --- cancel: stops before the next page ----------------------------------------
check "a long job on a slow relay" ctl jobs new label=long kinds=1 "relays=$(relaysim_url slow)"
J7=$(jget job)
check "  a few pages in" wait_for 60 job_ge "$J7" requests 3
out=$(cboxctl -d "$D" jobs delete "$J7" 2>&1) && fail "a running job was deleted" ||
    check "delete refuses a running job" grep -q "is running: cancel it first" <<<"$out"
check "cancel" ctl jobs cancel "$J7"
REQS=$(relaysim_q stats slow reqs)
PAGES=$(job_field "$J7" requests)
check "  cancelled, nothing in flight" test "$(job_field "$J7" status)" = cancelled -a "$(json_get "$T/s.json" in_flight)" = 0
# The next job runs on the same slow relay: once it has paged, any REQ the
# cancelled job would still have sent would have arrived before.
check "a job after it" ctl jobs new label=after kinds=0 "relays=$(relaysim_url slow)"
J8=$(jget job)
check "job $J8 ends" wait_for 60 job_ended "$J8"
check "  no page of the cancelled job after cancel ($PAGES)" test "$(job_field "$J7" requests)" = "$PAGES"
check "  the relay got only the next job's requests" test "$(relaysim_q stats slow reqs)" -le $((REQS + $(job_field "$J8" requests) + 1))
check "delete a finished job" ctl jobs delete "$J7"
out=$(cboxctl -d "$D" jobs show "$J7" 2>&1) && fail "deleted job still shown" ||
    check "  gone" grep -q "no such job" <<<"$out"

# --- a schedule: every 2 s, since moved to the previous run's start -----------
read -r SK PK < <(node "$CACHEBOX_TESTS/integration/sign_events.mjs" keygen)
check "a scheduled job" ctl jobs new label=every kinds=1 "authors=$PK" every=2s "relays=$A"
J9=$(jget job)
check "  every 2s" test "$(jget every)" = 2s
check "first run ends" wait_for 60 job_is "$J9" status complete
FIRST=$(job_field "$J9" started_at)
# A minute ahead: a run's since is the previous run's start, so an event
# dated before a run that began while it was still being signed and
# published would fall before every later window. Dated a minute ahead, it
# is inside the window of every run until the publishing has taken a minute.
NOW=$(( $(date +%s) + 60 ))
echo "{\"sk\":\"$SK\",\"kind\":1,\"created_at\":$NOW,\"content\":\"between runs\"}" |
    node "$CACHEBOX_TESTS/integration/sign_events.mjs" >"$T/new.jsonl"
NEWID=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["id"])' "$T/new.jsonl")
relaysim_q publish a "$T/new.jsonl" >/dev/null
check "a later run fetches the event published after the first" wait_for 180 bash -c "python3 -c '
import sqlite3,sys; c=sqlite3.connect(sys.argv[1], timeout=10)
sys.exit(0 if c.execute(\"select 1 from events where lower(hex(id))=? and source=?\", (sys.argv[2], \"job\")).fetchone() else 1)' '$D/cachebox.db' $NEWID"
check "  runs again and again" wait_for 60 job_ge "$J9" runs 3
check "  since is the previous run's start" test "$(json_get "$T/s.json" since)" = "$(json_get "$T/s.json" prev_run_at)"
check "  and after the first run's start" test "$(json_get "$T/s.json" since)" -ge "$FIRST"
check "cancel stops the schedule" ctl jobs cancel "$J9"
check "  no next run" test "$(job_field "$J9" next_run_at)" = null -a "$(job_field "$J9" status)" = cancelled

# --- status and metrics -----------------------------------------------------------
check "status has a jobs section" status jobs.failed
check "  one failed job" test "$(json_get "$T/st.json" jobs.failed)" = 1
check "  jobs complete counted" test "$(json_get "$T/st.json" jobs.complete)" -ge 2
check "  events fetched by jobs" test "$(json_get "$T/st.json" jobs.events_fetched)" -gt 0
curl -s "$H/metrics" >"$T/metrics"
check "/metrics: jobs by status" grep -q '^cachebox_jobs{status="failed"} 1$' "$T/metrics"
check "/metrics: events jobs fetched" grep -q '^cachebox_jobs_events_fetched [1-9]' "$T/metrics"
check "the daemon still runs" kill -0 "$DPID"
stop_daemon
finish
