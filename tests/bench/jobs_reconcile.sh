#!/usr/bin/env bash
# jobs_reconcile.sh — one custom job (kind 1 of every author, batches of
# 10) run twice on the same relaysim network, reconciled (NIP-77) and then
# paged (negentropy.enabled false), each on a fresh store: seconds until
# the job ended (polled every 0.1 s), its status, events the relays sent
# (their events_sent) per distinct event stored, and the held events
# missing (relaysim's match truth). Three relays hold overlapping parts
# and speak NIP-77; one caps answers at 137 under a 300-event second.
#
#   tests/bench/jobs_reconcile.sh [AUTHORS [EVENTS]]
#
# Needs a build (CACHEBOX_BUILD, default ./build) and tests/install-peers.sh.
# It prints figures and asserts nothing.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${CACHEBOX_BUILD:-$SRC/build}
export CACHEBOX_SRC=$SRC CACHEBOX_BUILD=$BUILD CACHEBOX_TESTS=$SRC/tests
export CACHEBOXD=$BUILD/src/cacheboxd CACHEBOXCTL=$BUILD/src/cacheboxctl
. "$SRC/tests/integration/lib.sh"
use_relaysim
AUTHORS=${1:-40}
EVENTS=${2:-12000}
cat > "$T/net.json" <<JSON
{"dataset": {"authors": $AUTHORS, "events": $EVENTS, "seed": 7},
 "relays": [
  {"name": "a", "negentropy": "yes", "cap": 137, "subset": {"fraction": 0.8, "seed": 1},
   "burst": {"created_at": 1650000000, "count": 300, "author": 1}},
  {"name": "b", "negentropy": "yes", "cap": 500, "subset": {"fraction": 0.7, "seed": 2}},
  {"name": "c", "negentropy": "yes", "cap": 500, "subset": {"fraction": 0.6, "seed": 3}}
 ]}
JSON
relaysim_start "$T/net.json" || exit 1
RELAYS="$(relaysim_url a),$(relaysim_url b),$(relaysim_url c)"
PKS=$(python3 -c 'import json,sys; print(",".join(a["pubkey"] for a in json.load(open(sys.argv[1]))["authors"]))' "$(relaysim_q meta)")
AJSON=$(python3 -c 'import json,sys; print(json.dumps([a["pubkey"] for a in json.load(open(sys.argv[1]))["authors"]]))' "$(relaysim_q meta)")
relaysim_q truth match "{\"kinds\": [1], \"authors\": $AJSON}" | sort -u >"$T/want"
sql() { python3 -c 'import sqlite3,sys; db=sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=30)
for r in db.execute(sys.argv[2]): print(*r)' "$1" "$2"; }
sent() { local n=0 r; for r in a b c; do n=$((n + $(relaysim_q stats $r events_sent))); done; echo $n; }
echo "== one job, kind 1 of $AUTHORS authors in batches of 10, on 3 relays ($(wc -l <"$T/want") events held) =="
for neg in true false; do
	base=$(sent)
	d=$T/run.$neg
	"$CACHEBOXD" -d "$d" --set relays.bootstrap="$RELAYS" --set backfill.pace_ms=0 \
	    --set http.listen=127.0.0.1:0 --set negentropy.enabled=$neg >>"$T/d.log" 2>&1 &
	pid=$!
	wait_for 30 test -s "$d/http.port"
	t0=$(date +%s.%N)
	cboxctl -d "$d" jobs new label=bench kinds=1 "authors=$PKS" batch_size=10 >/dev/null
	until st=$(sql "$d/cachebox.db" "SELECT status FROM jobs") && \
	    case "$st" in complete|incomplete|failed) true;; *) false;; esac; do sleep 0.1; done
	t1=$(date +%s.%N)
	kill -TERM $pid; wait $pid
	sql "$d/cachebox.db" "SELECT lower(hex(id)) FROM events WHERE kind = 1" | sort -u >"$T/have"
	stored=$(wc -l <"$T/have")
	got=$(( $(sent) - base ))
	miss=$(comm -23 "$T/want" "$T/have" | wc -l)
	ways=$(sql "$d/cachebox.db" "SELECT group_concat(w || ' ' || n, ', ') FROM (SELECT coalesce(way, '-') w, count(*) n FROM job_batches GROUP BY w)")
	awk -v m="$([ $neg = true ] && echo reconciled || echo paged)" -v s="$(echo "$t1 - $t0" | bc)" \
	    -v st="$st" -v g="$got" -v n="$stored" -v x="$miss" -v w="$ways" 'BEGIN {
	    printf "%-10s %6.1f s to its end (%s), %d events sent, %d stored: %.2f per stored; %d held missing; batches: %s\n",
	    m, s, st, g, n, n ? g / n : 0, x, w }'
done
