#!/usr/bin/env bash
# test_jobs_reconcile.sh — custom jobs reconcile (NIP-77) where a relay
# speaks it and page where it does not. Two relays cannot be paged to the
# end: "burst" caps every answer at 137 and holds a burst of 300 kind 1
# events of one author in one second, "liar" caps at 137 and ignores
# until; both speak NIP-77 (liar without saying so in NIP-11). "quiet"
# advertises NIP-77 and never answers a NEG-OPEN, "plain" does not know
# the NEG commands: both are paged, within the same batches. The three
# jobs (a kind-1 time window, a window holding the burst second, author
# batches of kinds 6 and 7 in batches of 10) end complete with every event
# of their filters that any relay holds stored (relaysim's match truth,
# not only what paging can reach). A batch row says which way it went;
# the dry run says per relay which way it will go. Without reconciliation
# (negentropy.enabled false) the same jobs end incomplete (the test
# checks that the network really needs it).
. "$(dirname "$0")/lib.sh"
use_relaysim

rows() {
	python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=30)
for r in db.execute(sys.argv[2]):
    print(*r)
PY
}

# Kinds 6 and 7 come as bursts of several authors (the dataset's notes
# are kind 1); held by burst and liar, and a part of them by plain.
python3 - >"$T/net.json" <<'PY'
import json
b67 = [{"created_at": 1640000000 + 1000 * i + k, "count": 20 + 7 * i,
        "author": i, "kind": k} for i in range(24) for k in (6, 7)]
print(json.dumps({
 "dataset": {"authors": 24, "events": 2400, "seed": 91},
 "relays": [
  {"name": "burst", "negentropy": "yes", "cap": 137,
   "bursts": [{"created_at": 1650000000, "count": 300, "author": 1}] + b67},
  {"name": "liar", "negentropy": "yes", "cap": 137, "ignore_until": True,
   "supported_nips": [1, 11], "subset": {"fraction": 0.6, "seed": 5},
   "bursts": b67[::3]},
  {"name": "quiet", "negentropy": "silent", "cap": 500,
   "subset": {"fraction": 0.3, "seed": 6}},
  {"name": "plain", "cap": 100, "subset": {"fraction": 0.4, "seed": 7},
   "bursts": [b for b in b67[1::5] if b["count"] < 100]}
 ]}))
PY
relaysim_start "$T/net.json" || { fail "relaysim starts"; finish; exit 1; }
RELAYS="$(relaysim_url burst),$(relaysim_url liar),$(relaysim_url quiet),$(relaysim_url plain)"
AUTHORS=$(python3 -c 'import json,sys; print(",".join(a["pubkey"] for a in json.load(open(sys.argv[1]))["authors"]))' "$(relaysim_q meta)")
AJSON=$(python3 -c 'import json,sys; print(json.dumps([a["pubkey"] for a in json.load(open(sys.argv[1]))["authors"]]))' "$(relaysim_q meta)")
W1='"kinds": [1], "since": 1609459200, "until": 1640995199'	# 2021
W2='"since": 1649990000, "until": 1650010000'			# the burst's second

# run DIR NEG: the three jobs on a box that follows nobody, to its idle.
run() {
	local d=$1
	mkdir -p "$d"
	"$CACHEBOXD" -d "$d" --set relays.bootstrap="$RELAYS" --set backfill.pace_ms=0 \
	    --set http.listen=127.0.0.1:0 --set negentropy.enabled="$2" >>"$T/d.log" 2>&1 &
	local pid=$!
	wait_for 30 test -s "$d/http.port" || return 1
	cboxctl -d "$d" jobs new label=year kinds=1 since=2021-01-01 until=2021-12-31T23:59:59Z >/dev/null &&
	cboxctl -d "$d" jobs new label=burst since=1649990000 until=1650010000 >/dev/null &&
	cboxctl -d "$d" jobs new label=reposts kinds=6,7 "authors=$AUTHORS" batch_size=10 >/dev/null ||
	    { kill $pid; return 1; }
	wait_for 300 jobs_ended "$d" || { kill $pid; return 1; }
	cboxctl -d "$d" jobs dry-run kinds=1 --json >"$d.dry.json"
	kill -TERM $pid; wait $pid
}
jobs_ended() {
	[ "$(rows "$1/cachebox.db" "SELECT count(*) FROM jobs WHERE status IN ('complete','incomplete','failed')")" = 3 ]
}
missing() {	# missing DB FILTERJSON: held ids not stored
	relaysim_q truth match "$2" | sort -u >"$T/want"
	rows "$1" "SELECT lower(hex(id)) FROM events" | sort -u >"$T/have"
	echo "$(comm -23 "$T/want" "$T/have" | wc -l) of $(wc -l <"$T/want")"
}

D=$T/neg
check "the three jobs end on a box that reconciles" run "$D" true
for label in year burst reposts; do
	st=$(rows "$D/cachebox.db" "SELECT status || ' ' || coalesce(error_message, '') FROM jobs WHERE label = '$label'")
	check "  job $label is complete ($st)" test "${st%% *}" = complete
done
m=$(missing "$D/cachebox.db" "{$W1}")
check "  the 2021 window: every held kind 1 event stored ($m missing)" test "${m%% *}" -eq 0
m=$(missing "$D/cachebox.db" "{$W2}")
check "  the burst window: every held event stored ($m missing)" test "${m%% *}" -eq 0
check "  the burst second whole (300 events)" test "$(rows "$D/cachebox.db" "SELECT count(*) FROM events WHERE created_at = 1650000000")" -ge 300
m=$(missing "$D/cachebox.db" "{\"kinds\": [6, 7], \"authors\": $AJSON}")
check "  kinds 6 and 7: every held event stored ($m missing)" test "${m%% *}" -eq 0
ways() { rows "$D/cachebox.db" "SELECT b.relay, coalesce(b.way, '-'), count(*) FROM job_batches b GROUP BY b.relay, b.way ORDER BY b.relay"; }
ways | sed 's/^/    /'
check "  burst and liar reconciled every batch" test "$(rows "$D/cachebox.db" "SELECT count(*) FROM job_batches WHERE (relay LIKE '%$(relaysim_url burst | sed 's/.*://')%' OR relay LIKE '%$(relaysim_url liar | sed 's/.*://')%') AND coalesce(way, '') != 'nip77'")" -eq 0
check "  quiet and plain paged every batch" test "$(rows "$D/cachebox.db" "SELECT count(*) FROM job_batches WHERE (relay LIKE '%$(relaysim_url quiet | sed 's/.*://')%' OR relay LIKE '%$(relaysim_url plain | sed 's/.*://')%') AND coalesce(way, '') != 'paging'")" -eq 0
check "  the relay that never answered NEG-OPEN was tried, then paged" grep -q "no answer to NEG-OPEN" "$T/d.log"
way_of() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(" ".join(r["way"] for r in j["relays"] if r["url"].rstrip("/") == sys.argv[2].rstrip("/")))' "$D.dry.json" "$1"; }
check "  a dry run now says NIP-77 for burst and liar ($(way_of "$(relaysim_url burst)") $(way_of "$(relaysim_url liar)"))" \
    test "$(way_of "$(relaysim_url burst)") $(way_of "$(relaysim_url liar)")" = "nip77 nip77"
check "  and paging for quiet and plain ($(way_of "$(relaysim_url quiet)") $(way_of "$(relaysim_url plain)"))" \
    test "$(way_of "$(relaysim_url quiet)") $(way_of "$(relaysim_url plain)")" = "paging paging"
check "  no id is pending in the recovery index" test "$(rows "$D/cachebox.db" "SELECT count(*) FROM missing_ids")" -eq 0

P=$T/paged
check "the same jobs end on a box that only pages" run "$P" false
check "  paging alone leaves them incomplete (the network needs NIP-77)" \
    test "$(rows "$P/cachebox.db" "SELECT count(*) FROM jobs WHERE status = 'incomplete'")" -ge 2
relaysim_stop >/dev/null 2>&1
finish
