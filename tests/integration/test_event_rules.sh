#!/usr/bin/env bash
# test_event_rules.sh — the authors' rules (NIP-01 versions, NIP-09 by id
# and by address, a gift wrap deleted by its recipient, NIP-40, NIP-62,
# ephemeral kinds) for every path an event takes into the box, in both
# arrival orders, checked against a brute-force model of the NIPs
# (rules_net.mjs) on what the box's relay serves (REQ and COUNT), what
# export writes and what the uplink sends.
#
# Each case is one author of the dataset (rules_net.mjs cases): its first
# event is imported once the drain of the dataset is done; its second comes
# by one path: the drain (a paged relay added then), NIP-77 (a relay that
# reconciles), recovery (a relay that reconciles but withholds ids from
# every other REQ by id, so they are fetched again by recovery), live (a
# relay the box is subscribed to), a job (a relay only the job asks),
# import, or a client of the box's own relay. Then a NIP-77 resync round
# over everything: nothing withdrawn is fetched a second time, no id waits
# in recovery, no author is incomplete.
. "$(dirname "$0")/lib.sh"
use_relaysim
NET=$CACHEBOX_TESTS/integration/rules_net.mjs
net() { node "$NET" "$@"; }
ctl() { cboxctl -d "$D" "$@"; }
quiet() { "$@" >/dev/null; }

cat > "$T/net.json" <<'JSON'
{"dataset": {"authors": 80, "events": 400, "seed": 91},
 "relays": [
  {"name": "boot"},
  {"name": "live", "subset": "none"},
  {"name": "hist", "subset": "none", "slot": null},
  {"name": "neg", "subset": "none", "slot": null, "negentropy": "yes"},
  {"name": "rec", "subset": "none", "slot": null, "negentropy": "yes",
   "partial_ids": {"fraction": 0, "reqs": {"every": 2}}},
  {"name": "jobs", "subset": "none", "slot": null}
 ]}
JSON
relaysim_start "$T/net.json" || { fail "relaysim starts"; finish; exit 1; }
check "the cases are signed" net cases "$(relaysim_q meta)" "$(date +%s)" "$T/c"

# ---- phase 1: the dataset drained, the first arrivals imported --------------
# The relays and the root are stored at run time (not pinned with --set),
# so relays can be added in phase 2.
D=$T/d
start_daemon -d "$D" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --set relay.listen=127.0.0.1:0 \
    --set relay.accept=follows \
    --set recovery.backoff_base_ms=200 --set recovery.backoff_max_ms=2000
check "phase 1: the daemon answers" wait_for 30 st
check "phase 1: relays boot and live" quiet ctl config set relays.bootstrap \
    "$(relaysim_url boot),$(relaysim_url live)"
check "phase 1: the root" quiet ctl roots add "$(relaysim_q root)"
check "phase 1: the dataset is drained (idle)" wait_for 600 idle
check "phase 1: the first arrivals are imported" quiet ctl import "$T/c/first.jsonl"
RELAY="ws://127.0.0.1:$(cat "$D/relay.port")"

# ---- phase 2: the second arrivals, each by its path --------------------------
for r in hist neg rec jobs live; do
	case $r in
	hist) f=drain ;; neg) f=nip77 ;; rec) f=recovery ;; jobs) f=job ;; live) f=live ;;
	esac
	check "phase 2: $f's events are on relay $r" \
	    quiet relaysim_q publish "$r" "$T/c/$f.jsonl"
done
check "phase 2: import" quiet ctl import "$T/c/import.jsonl"
net publish "$RELAY" "$T/c/publish.jsonl" >"$T/published" 2>&1 || true
check "phase 2: a client published to the box's relay ($(cat "$T/published"))" \
    grep -q '"accepted":[1-9]' "$T/published"
for r in hist neg rec; do
	check "phase 2: relay $r added" quiet ctl relays add "$(relaysim_url "$r")"
done
check "phase 2: the job of the job path's authors" quiet ctl jobs new label=rules \
    kinds=1,5,62,10030,30023 "authors=$(cat "$T/c/job_authors.txt")" \
    "relays=$(relaysim_url jobs)"
check "phase 2: the job of the gift wraps" quiet ctl jobs new label=wraps kinds=1059 \
    "tags={\"#p\":[\"$(sed 's/,/","/g' "$T/c/job_recipients.txt")\"]}" \
    "relays=$(relaysim_url jobs)"
jobs_done() {
	ctl jobs list --json >"$T/jobs.json" && python3 - "$T/jobs.json" <<'PY'
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
sys.exit(0 if len(jobs) == 2 and all(j["status"] == "complete" for j in jobs) else 1)
PY
}
check "phase 2: both jobs complete" wait_for 600 jobs_done
check "phase 2: the box is idle again" wait_for 600 idle

# ---- what the box holds, against the model -------------------------------------
net dump "$(relaysim_url boot)" >"$T/boot.jsonl"
cat "$T"/c/*.jsonl "$T/boot.jsonl" >"$T/all.jsonl"
net model "$(date +%s)" "$T/all.jsonl" >"$T/want"
# diff_is NAME FILE: FILE holds exactly the model's ids (what differs printed).
diff_is() {
	local extra missing
	extra=$(comm -13 "$T/want" <(sort -u "$2") | wc -l)
	missing=$(comm -23 "$T/want" <(sort -u "$2") | wc -l)
	if [ "$extra" -ne 0 ] || [ "$missing" -ne 0 ]; then
		python3 - "$T/c/cases.json" "$T/want" "$2" <<'PY' | head -20
import json, sys
cases = json.load(open(sys.argv[1]))
want, got = set(open(sys.argv[2]).read().split()), set(open(sys.argv[3]).read().split())
for c in cases:
    for i in c["ids"]:
        if (i in want) != (i in got):
            print(f"    {c['rule']} {c['order']} via {c['path']}: {i[:12]} "
                  f"{'kept by the model, missing' if i in want else 'withdrawn, yet there'}")
for i in sorted((want ^ got) - {i for c in cases for i in c["ids"]})[:5]:
    print(f"    dataset event {i[:12]}: {'missing' if i in want else 'extra'}")
PY
	fi
	check "$1: exactly the model's $(wc -l <"$T/want") events ($extra extra, $missing missing)" \
	    test "$extra" -eq 0 -a "$missing" -eq 0
}
net served "$RELAY" >"$T/served" 2>"$T/count"
diff_is "the box's relay (REQ)" "$T/served"
check "the box's relay (COUNT): $(cat "$T/count")" \
    test "$(cat "$T/count")" = "count $(wc -l <"$T/want")"
ctl export "$T/export.jsonl" 2>/dev/null
python3 -c 'import json, sys
for l in open(sys.argv[1]):
    print(json.loads(l)["id"])' "$T/export.jsonl" >"$T/exported"
diff_is "export" "$T/exported"
check "every path brought events in ($(python3 - "$D/cachebox.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print(", ".join(f"{s} {n}" for s, n in db.execute(
    "SELECT source, count(*) FROM events GROUP BY source ORDER BY source")))
PY
))" python3 - "$D/cachebox.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
have = {s for (s,) in db.execute("SELECT DISTINCT source FROM events")}
sys.exit(0 if {"backfill", "live", "job", "import", "client"} <= have else 1)
PY
check "recovery fetched what rec withheld ($(status recovery.attempts) attempts)" \
    test "$(status recovery.attempts)" -ge 1
st
python3 - "$T/st.json" <<'PY' | sed 's/^/    /'
import json, sys
s = json.load(open(sys.argv[1]))
i, r = s["ingest"], s["rules"]
print("ingest: " + ", ".join(f"{k} {i[k]}" for k in ("stored", "superseded", "deleted",
      "expired", "vanished", "ephemeral", "withdrawn")))
print("removed: " + ", ".join(f"{k} {v}" for k, v in r["removed"].items()) +
      f"; tombstones {r['tombstones']}, vanished authors {r['vanished_authors']}")
PY

# ---- a NIP-77 resync round fetches nothing withdrawn again ------------------------
# A restart with negentropy.resync_s 1 reconciles every complete row on the
# relays that speak NIP-77 again (the follow graph's first sync looks);
# live is off, so every event a relay sends now is one the box asked for.
stop_daemon
for r in neg rec hist; do relaysim_q stats "$r" --reset >/dev/null; done
N=$(python3 - "$D/cachebox.db" "$(relaysim_url neg)" "$(relaysim_url rec)" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print(db.execute("SELECT count(*) FROM cursors WHERE relay IN (?, ?)",
                 sys.argv[2:4]).fetchone()[0])
PY
)
start_daemon -d "$D" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --set relay.listen=127.0.0.1:0 \
    --set relay.accept=follows --set live.enabled=false \
    --set negentropy.resync_s=1
round_done() { [ "$(status negentropy.steps)" -ge "$N" ] && idle; }
check "resync: a round over the $N rows of neg and rec" wait_for 600 round_done
check "resync: ids withdrawn here were found and skipped ($(status negentropy.withdrawn))" \
    test "$(status negentropy.withdrawn)" -gt 0
for r in neg rec hist; do
	check "resync: relay $r sent nothing again ($(relaysim_q stats "$r" events_sent) events)" \
	    test "$(relaysim_q stats "$r" events_sent)" -eq 0
done
check "resync: no id waits in recovery" test "$(status recovery.pending)" -eq 0
check "resync: no author is incomplete" test "$(status backfill.authors_incomplete)" -eq 0

# ---- what the uplink sends -----------------------------------------------------------
node "$CACHEBOX_TESTS/integration/uplink_peer.mjs" close-after 1000000000 \
    >"$T/peer.out" 2>&1 &
PIDS+=("$!")
wait_for 30 grep -q '"ready"' "$T/peer.out"
PEER=$(python3 -c 'import json, sys
print(json.loads(open(sys.argv[1]).readline())["url"])' "$T/peer.out")
check "uplink: configured" quiet ctl config set uplink.url "$PEER"
drained() { [ "$(status inbox.pending)" = 0 ] && [ "$(status inbox.forwarded)" != 0 ]; }
check "uplink: every queued event was taken" wait_for 600 drained
curl -sf "${PEER/ws:/http:}/ids" >"$T/sent"
diff_is "uplink" "$T/sent"
stop_daemon
finish
