#!/usr/bin/env bash
# test_jobs_share.sh — a custom job and the author drain on the same relay,
# which allows three subscriptions at once (NIP-11 max_subscriptions) and
# answers slowly. Neither starves the other: both finish (every followed
# author complete, the job complete with everything the relay holds for
# it), the job never holds more than jobs.max_subs_per_relay requests, the
# relay's cap is never overshot (no "too many subscriptions" refusal, at
# most 3 open at its end), and while the job ran the drain kept requests
# open beside it (live is off, so no other planner holds any).
# The drain pages (no NIP-77) at 250 ms between two requests to the relay,
# so it lasts at least its 30-odd requests x 250 ms whatever the machine's
# speed: the job, made as soon as the drain has begun, runs beside it, and
# the paced requests of both wait in the pool's queue where the status
# shows them.
. "$(dirname "$0")/lib.sh"
use_relaysim

cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 10, "events": 2500, "seed": 92},
 "relays": [
  {"name": "r", "cap": 100, "max_subscriptions": 3, "slow_ms": {"per_page": 60}}
 ]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
R=$(relaysim_url r)
D=$T/d
start_daemon -d "$D" --set relays.bootstrap="$R" --set follow.roots="$(relaysim_q root)" \
    --set backfill.pace_ms=250 --set negentropy.enabled=false \
    --set backfill.max_subs_per_relay=4 \
    --set jobs.max_subs_per_relay=2 --set live.enabled=false \
    --set http.listen=127.0.0.1:0
check "http.port written" wait_for 10 test -s "$D/http.port"
AUTHORS=$(python3 -c 'import json,sys; print(",".join(a["pubkey"] for a in json.load(open(sys.argv[1]))["authors"]))' "$(relaysim_q meta)")
check "the drain has begun" wait_for 60 bash -c "[ \"\$($CACHEBOXCTL -d '$D' status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"backfill\"][\"authors_total\"])')\" -gt 0 ]"
new_job() { cboxctl -d "$D" jobs new label=share kinds=1,0 "authors=$AUTHORS" batch_size=1 >/dev/null; }
check "a job on the same relay" new_job

# Sample the status while the job runs: the job's requests in flight and
# every request open or queued on the relay.
python3 - "$D/http.port" "$R" >"$T/samples" <<'PY'
import json, sys, time, urllib.request
port, url = open(sys.argv[1]).read().strip(), sys.argv[2]
base = f"http://127.0.0.1:{port}/api"
most_job = most_open = both = n = 0
end = time.monotonic() + 300
while time.monotonic() < end:
    s = json.load(urllib.request.urlopen(f"{base}/status", timeout=10))
    j = json.load(urllib.request.urlopen(f"{base}/jobs/show?job=1", timeout=10))
    r = next(x for x in s["relays"] if x["url"] == url)
    job = s["jobs"]["in_flight"]
    most_job = max(most_job, job)
    most_open = max(most_open, r["subs_open"])
    if job > 0 and r["subs_open"] + r["subs_queued"] > job:
        both += 1
    n += 1
    if j["status"] not in ("pending", "running"):
        break
    time.sleep(0.02)
print(json.dumps({"samples": n, "most_job": most_job, "most_open": most_open,
                  "both": both, "status": j["status"]}))
PY
cat "$T/samples"
check "the job finished complete" test "$(json_get "$T/samples" status)" = complete
check "  never more than jobs.max_subs_per_relay (2) requests of the job" test "$(json_get "$T/samples" most_job)" -le 2
check "  never more than the relay's 3 open" test "$(json_get "$T/samples" most_open)" -le 3
check "  the drain had requests beside the job's" test "$(json_get "$T/samples" both)" -ge 1
check "the drain finishes too" wait_for 300 idle
check "  every followed author complete" test "$(json_get "$T/st.json" backfill.authors_complete)" = \
    "$(json_get "$T/st.json" backfill.authors_total)"
check "the relay never refused a subscription over its cap" test "$(relaysim_q stats r rate_limited)" = 0
check "  and never had more than 3 open" test "$(relaysim_q stats r max_open_subs)" -le 3
python3 "$CACHEBOX_TESTS/integration/jobs_check.py" judge --ready "$RELAYSIM_READY" \
    --config "$T/sim.json" --db "$D/cachebox.db" --jobs 1 >"$T/judge.out" 2>&1 && st=0 || st=$?
grep -v '^ok - job 1 batch' "$T/judge.out" | sed 's/^/    /'
check "the job has everything the relay can page for it" test $st -eq 0
stop_daemon
finish
