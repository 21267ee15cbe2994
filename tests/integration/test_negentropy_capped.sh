#!/usr/bin/env bash
# test_negentropy_capped.sh — exact-id fetches at a relay's own pace: two
# relays that reconcile (NIP-77) but answer at most 137 events per REQ, one
# holding a burst of 300 events of one author in one second, the other
# ignoring until. The need list of the burst's author is longer than the
# cap; the ids past it are asked again at once (the cap is learnt from the
# short answer), so at the first idle (--exit-when-idle) every event the
# relays hold is stored, every row is complete and no id waits in the
# recovery index. (Before, the ids past the cap went to recovery and
# waited out its backoff, so the first idle came with events missing.)
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
missing() { comm -23 <(sort -u "$1") <(sort -u "$2") | wc -l; }

cat > "$T/net.json" <<'JSON'
{"dataset": {"authors": 6, "events": 2400, "seed": 81},
 "relays": [
  {"name": "burst", "negentropy": "yes", "cap": 137,
   "burst": {"created_at": 1650000000, "count": 300, "author": 1}},
  {"name": "liar", "negentropy": "yes", "cap": 137, "ignore_until": true,
   "subset": {"fraction": 0.6, "seed": 5}}
 ]}
JSON
relaysim_start "$T/net.json" || { fail "relaysim starts"; finish; exit 1; }
D=$T/d
check "the drain reaches idle and exits 0" \
    timeout 300 "$CACHEBOXD" -d "$D" \
    --set relays.bootstrap="$(relaysim_url burst),$(relaysim_url liar)" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --exit-when-idle 2>>"$T/d.log"
ALL=$(all_authors)
relaysim_q truth match "$ALL" >"$T/want"
ids_stored "$D/cachebox.db" >"$T/have"
check "at the first idle every held event is stored ($(wc -l <"$T/want") ids, $(missing "$T/want" "$T/have") missing)" \
    test "$(missing "$T/want" "$T/have")" -eq 0
check "the burst of 300 events in one second (cap 137) is stored whole" \
    test "$(rows "$D/cachebox.db" "SELECT count(*) FROM events WHERE created_at = 1650000000")" -ge 300
read -r nrows ncomplete < <(rows "$D/cachebox.db" "SELECT count(*), coalesce(sum(complete), 0) FROM cursors")
check "every row is complete ($ncomplete of $nrows)" test "$nrows" -gt 0 -a "$nrows" = "$ncomplete"
check "no id is pending in the recovery index" \
    test "$(rows "$D/cachebox.db" "SELECT count(*) FROM missing_ids")" -eq 0
check "both relays reconciled" \
    test "$(rows "$D/cachebox.db" "SELECT count(*) FROM relays WHERE negentropy = 1")" -eq 2
check "the cap was learnt from a short answer (the log says so)" \
    grep -q "answers at most 137 ids at once" "$T/d.log"
relaysim_stop >/dev/null 2>&1
finish
