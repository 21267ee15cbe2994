#!/usr/bin/env bash
# test_negentropy_sync.sh — NIP-77 sync of the author drain end to end
# against relaysim, whose NIP-77 side is an independent implementation
# (@nostr-dev-kit/sync):
#   A. three relays that reconcile — one holding a same-second burst over
#      its cap, one ignoring until under a cap — and four that do not (NEG-ERR,
#      a NOTICE though it advertises 77, silence, no NIP-77 at all): every
#      event the reconciling relays hold is stored and their rows are
#      complete (paging could not get the burst nor page past the relay
#      ignoring until); the others are paged and the run reaches idle; the
#      relays table and the status say which relay reconciles; a second
#      run reconciles complete rows again after negentropy.resync_s;
#   B. three relays holding the same events: together they send at most
#      1.05 events per distinct event stored (paging sends each once per
#      relay);
#   C. a relay that delivers only 100 ids of each exact-id REQ (a silent
#      cap): the cap is learnt and the ids past it are asked again at once,
#      so every event is stored and every row complete without one id going
#      to the recovery index (a cap is not a failure);
#   D. a relay that withholds half its ids and another that delivers them:
#      the ids come by the other relay, the recovery index is cleared
#      without spending attempts, every row ends complete.
. "$(dirname "$0")/lib.sh"
use_relaysim

ids_stored() {
	python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for (i,) in db.execute("SELECT lower(hex(id)) FROM events"):
    print(i)
PY
}
# rows DB SQL: the answer of one query, space separated.
rows() {
	python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for r in db.execute(sys.argv[2]):
    print(*r)
PY
}
all_authors() {
	python3 -c 'import json, sys
print(json.dumps({"authors": [a["pubkey"] for a in json.load(open(sys.argv[1]))["authors"]]}))' \
	    "$(relaysim_q meta)"
}
# missing WANT HAVE: how many ids of WANT are not in HAVE.
missing() { comm -23 <(sort -u "$1") <(sort -u "$2") | wc -l; }
sent() { relaysim_q stats "$1" events_sent; }

# --- A ---------------------------------------------------------------------
cat > "$T/a.json" <<'JSON'
{"dataset": {"authors": 6, "events": 3000, "seed": 71},
 "relays": [
  {"name": "n1", "negentropy": "yes", "cap": 300,
   "burst": {"created_at": 1650000000, "count": 450, "author": 2}},
  {"name": "n2", "negentropy": "yes", "ignore_until": true, "cap": 300,
   "subset": {"fraction": 0.6, "seed": 5}},
  {"name": "n3", "negentropy": "yes", "subset": {"fraction": 0.5, "seed": 6}},
  {"name": "e", "negentropy": "err", "subset": {"fraction": 0.3, "seed": 7}},
  {"name": "o", "negentropy": "notice", "subset": {"fraction": 0.3, "seed": 8}},
  {"name": "s", "negentropy": "silent", "subset": {"fraction": 0.3, "seed": 9}},
  {"name": "p", "subset": {"fraction": 0.3, "seed": 10}}
 ]}
JSON
relaysim_start "$T/a.json" || { fail "relaysim starts (A)"; finish; exit 1; }
D=$T/a
BOOT="$(relaysim_url n1),$(relaysim_url e),$(relaysim_url o),$(relaysim_url s),$(relaysim_url p)"
check "A: the drain reaches idle and exits 0 (silence costs one probe timeout)" \
    timeout 300 "$CACHEBOXD" -d "$D" --set relays.bootstrap="$BOOT" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --exit-when-idle 2>>"$T/a.log"
ALL=$(all_authors)
relaysim_q truth match "$ALL" --relays n1,n2,n3 >"$T/want_neg"
relaysim_q truth pageable "$ALL" --relays e,o,s,p >"$T/want_paged"
relaysim_q truth match "$ALL" >"$T/may"
ids_stored "$D/cachebox.db" >"$T/have"
check "A: every event the reconciling relays hold is stored ($(wc -l <"$T/want_neg") ids, $(missing "$T/want_neg" "$T/have") missing)" \
    test "$(missing "$T/want_neg" "$T/have")" -eq 0
check "A: so is every event the others can page" \
    test "$(missing "$T/want_paged" "$T/have")" -eq 0
check "A: nothing stored that no relay holds" \
    test "$(missing "$T/have" "$T/may")" -eq 0
check "A: the burst of 450 events in one second (cap 300) is stored whole" \
    test "$(rows "$D/cachebox.db" "SELECT count(*) FROM events WHERE created_at = 1650000000")" -ge 450
neg_rows() {
	rows "$D/cachebox.db" "SELECT count(*), sum(complete) FROM cursors WHERE relay IN ('$(relaysim_url n1)', '$(relaysim_url n2)', '$(relaysim_url n3)')"
}
read -r nrows ncomplete < <(neg_rows)
check "A: every row on a reconciling relay is complete ($ncomplete of $nrows), the burst's and the ignored until's included" \
    test "$nrows" -gt 0 -a "$nrows" = "$ncomplete"
negval() {
	rows "$D/cachebox.db" "SELECT coalesce(negentropy, -1) FROM relays WHERE url = '$(relaysim_url "$1")'"
}
for r in n1 n2 n3; do
	check "A: the relays table records that $r reconciles" test "$(negval $r)" = 1
done
for r in e o s p; do
	check "A: ... and that $r does not" test "$(negval $r)" = 0
done
check "A: the silent relay was given up after the first-reply timeout" \
    grep -q "does not reconcile (no answer to NEG-OPEN)" "$T/a.log"
opens=$(relaysim_q stats n1 neg_opens)
start_daemon -d "$D" --set relays.bootstrap="$BOOT" --set http.listen=127.0.0.1:0 \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set negentropy.resync_s=1
check "A: the daemon answers again" wait_for 20 st "$D"
check "A: complete rows are reconciled again after negentropy.resync_s" \
    wait_for 60 test "$(relaysim_q stats n1 neg_opens)" -gt "$opens"
wait_for 20 python3 -c 'import json, sys
r = {x["url"]: x for x in json.load(open(sys.argv[1]))["relays"]}
sys.exit(0 if len(r) >= 7 else 1)' "$T/st.json" || st "$D" || true
st "$D" || true
check "A: the status shows each relay's NIP-77 support" python3 - "$T/st.json" \
    "$(relaysim_url n1)" "$(relaysim_url e)" "$(relaysim_url s)" <<'PY'
import json, sys
r = {x["url"]: x for x in json.load(open(sys.argv[1]))["relays"]}
sys.exit(0 if r[sys.argv[2]]["negentropy"] == "yes" and
         r[sys.argv[3]]["negentropy"] == "no" and
         r[sys.argv[4]]["negentropy"] == "no" else 1)
PY
cboxctl -d "$D" recovery --json >"$T/rec.json" || true
check "A: cacheboxctl recovery answers (nothing pending)" python3 -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["pending"] == 0 else 1)' "$T/rec.json"
stop_daemon
relaysim_stop >/dev/null 2>&1

# --- B ---------------------------------------------------------------------
cat > "$T/b.json" <<'JSON'
{"dataset": {"authors": 20, "events": 20000, "seed": 72},
 "relays": [{"name": "r1", "negentropy": "yes"},
            {"name": "r2", "negentropy": "yes"},
            {"name": "r3", "negentropy": "yes"}]}
JSON
relaysim_start "$T/b.json" 600 || { fail "relaysim starts (B)"; finish; exit 1; }
D=$T/b
check "B: three reconciling relays with the same events: idle, exit 0" \
    timeout 600 "$CACHEBOXD" -d "$D" \
    --set relays.bootstrap="$(relaysim_url r1),$(relaysim_url r2),$(relaysim_url r3)" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --exit-when-idle 2>>"$T/b.log"
ALL=$(all_authors)
relaysim_q truth match "$ALL" >"$T/want"
ids_stored "$D/cachebox.db" >"$T/have"
check "B: every event is stored ($(wc -l <"$T/want") ids)" test "$(missing "$T/want" "$T/have")" -eq 0
total=$(( $(sent r1) + $(sent r2) + $(sent r3) ))
distinct=$(wc -l <"$T/have")
ratio=$(python3 -c "print(f'{$total / $distinct:.4f}')")
echo "    events sent: r1 $(sent r1), r2 $(sent r2), r3 $(sent r3); distinct stored $distinct; received/distinct $ratio"
check "B: received / distinct over the three relays together <= 1.05 ($ratio)" \
    python3 -c "import sys; sys.exit(0 if $total <= 1.05 * $distinct else 1)"
relaysim_stop >/dev/null 2>&1

# --- C ---------------------------------------------------------------------
cat > "$T/c.json" <<'JSON'
{"dataset": {"authors": 3, "events": 1200, "seed": 73},
 "relays": [{"name": "pa", "negentropy": "yes", "partial_ids": {"count": 100}}]}
JSON
relaysim_start "$T/c.json" || { fail "relaysim starts (C)"; finish; exit 1; }
D=$T/c
: >"$T/d.log"
start_daemon -d "$D" --set relays.bootstrap="$(relaysim_url pa)" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --set recovery.backoff_base_ms=200 \
    --set recovery.backoff_max_ms=1000
ALL=$(all_authors)
relaysim_q truth match "$ALL" >"$T/want"
done_c() {
	ids_stored "$D/cachebox.db" >"$T/have" 2>/dev/null &&
	    [ "$(missing "$T/want" "$T/have")" -eq 0 ] &&
	    st "$D" && python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
b = s["backfill"]
sys.exit(0 if s["recovery"]["pending"] == 0 and b["authors_total"] > 0 and
         b["authors_complete"] == b["authors_total"] else 1)' "$T/st.json"
}
check "C: every event stored, every author complete, nothing pending" \
    wait_for 240 done_c
st "$D" || true
echo "    recovery: $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["recovery"])' "$T/st.json")"
check "C: no id went to the recovery index (the ids past the cap were asked again at once)" \
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["recovery"]
sys.exit(0 if r["registered"] == 0 and r["attempts"] == 0 else 1)' "$T/st.json"
check "C: the relay capped its answers (its counter)" test "$(relaysim_q stats pa ids_withheld)" -gt 0
check "C: the cap was learnt (the log says so)" grep -q "answers at most 100 ids at once" "$T/d.log"
stop_daemon
relaysim_stop >/dev/null 2>&1

# --- D ---------------------------------------------------------------------
cat > "$T/d.json" <<'JSON'
{"dataset": {"authors": 4, "events": 1600, "seed": 74},
 "relays": [{"name": "half", "negentropy": "yes", "partial_ids": {"fraction": 0.5}},
            {"name": "full", "negentropy": "yes"}]}
JSON
relaysim_start "$T/d.json" || { fail "relaysim starts (D)"; finish; exit 1; }
D=$T/d
: >"$T/d.log"
start_daemon -d "$D" --set relays.bootstrap="$(relaysim_url half),$(relaysim_url full)" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --set recovery.backoff_base_ms=60000
ALL=$(all_authors)
relaysim_q truth match "$ALL" >"$T/want"
check "D: every event stored, every author complete, nothing pending" \
    wait_for 240 done_c
check "D: no recovery attempt was needed (the other relay had them)" \
    python3 -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["recovery"]["attempts"] == 0 else 1)' "$T/st.json"
stop_daemon
finish
