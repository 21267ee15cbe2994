#!/usr/bin/env bash
# test_drain_faults.sh — the author drain end to end against relaysim: five
# relays with different caps (300 silent, 500 by NIP-11, page_size 500),
# different subsets of every author's history, one relay ignoring until,
# one with a same-second burst over its cap, connections dropped mid-page,
# forged, unrequested and malformed frames. Once cacheboxd is idle the store
# must hold every pageable event and nothing unrequested, every author some
# relay could not page is incomplete with the right reason, no author is
# complete wrongly (while on the relay ignoring until, an author whose
# whole history there fits below the page it has proven it returns is
# complete, and both kinds of author occur), the well-behaved relays sent
# at most 1.05 events per distinct event, and the status, `follows` and
# `backfill reset` agree.
. "$(dirname "$0")/lib.sh"
use_relaysim
CHECK=$CACHEBOX_TESTS/integration/drain_check.py

# Relay i of this list fills the dataset's kind 10002 placeholder "i":
# capped, forger and untilbad are write relays; boot and burst bootstrap.
cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 10, "events": 8000, "seed": 21},
 "relays": [
  {"name": "capped", "cap": 300, "subset": {"fraction": 0.7, "seed": 11}},
  {"name": "forger", "subset": {"fraction": 0.6, "seed": 12},
   "drop_mid_page": {"after": 150, "every": 8},
   "bad_sig": {"probability": 0.03, "seed": 1}, "wrong_id": {"probability": 0.03, "seed": 2},
   "unrequested": {"probability": 0.05, "seed": 3},
   "malformed_json": {"probability": 0.01, "seed": 4}},
  {"name": "untilbad", "ignore_until": true, "cap": 300,
   "subset": {"fraction": 0.5, "seed": 13}},
  {"name": "boot", "max_limit": 500,
   "subset": {"any": [{"kinds": [0, 3, 10002]}, {"fraction": 0.4, "seed": 14}]}},
  {"name": "burst", "cap": 300, "subset": {"fraction": 0.3, "seed": 15},
   "burst": {"created_at": 1650000000, "count": 450, "author": 2}}
 ]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
ROOT=$(relaysim_q root)
BOOT="$(relaysim_url boot),$(relaysim_url burst)"
D=$T/state
ARGS=(-d "$D" --set relays.bootstrap="$BOOT" --set follow.roots="$ROOT"
    --set backfill.pace_ms=0 --set backfill.page_size=500
    --set http.listen=127.0.0.1:0)

check "cacheboxd drains to idle and exits 0" \
    timeout 600 "$CACHEBOXD" "${ARGS[@]}" --exit-when-idle 2>>"$T/d.log"
if python3 "$CHECK" --ready "$RELAYSIM_READY" --config "$T/sim.json" \
    --db "$D/cachebox.db" --bootstrap boot,burst --ratio capped,boot --until-both \
    --stored-out "$T/stored.jsonl" >"$T/check.out"; then
	ok "store and cursors match relaysim's truth"
else
	fail "store and cursors match relaysim's truth"
fi
sed 's/^/    /' "$T/check.out"
bad=$(cboxctl event verify "$T/stored.jsonl" | grep -vc '^valid ' || true)
check "every stored event has a valid id and signature ($bad bad)" \
    test "$bad" -eq 0

# A second run: the status document, `follows` and `backfill reset`.
start_daemon "${ARGS[@]}"
check "restarted daemon is idle" wait_for 60 idle
tot=$(json_get "$T/st.json" backfill.authors_total)
com=$(json_get "$T/st.json" backfill.authors_complete)
inc=$(json_get "$T/st.json" backfill.authors_incomplete)
check "status: 10 authors, complete $com + incomplete $inc = total $tot" \
    test "$tot" -eq 10 -a $((com + inc)) -eq "$tot" -a "$inc" -ge 1
python3 - "$T/st.json" "$BOOT" <<'PY' && ok "status relays[] from the pool" || fail "status relays[] from the pool"
import json, sys
d = json.load(open(sys.argv[1]))
urls = {r["url"] for r in d["relays"]}
assert all(set(r) >= {"url", "state", "events"} for r in d["relays"]), d["relays"]
assert set(sys.argv[2].split(",")) <= urls and len(urls) == 5, urls
assert sum(r["state"] == "open" for r in d["relays"]) >= 4, d["relays"]
PY
A2=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['authors'][2]['pubkey'])" \
    "$(relaysim_q meta)")
cboxctl -d "$D" follows "$A2" --json >"$T/f.json"
python3 - "$T/f.json" <<'PY' && ok "follows: burst author incomplete with reason and gap" || fail "follows: burst author incomplete with reason and gap"
import json, sys
a = json.load(open(sys.argv[1]))["follows"][0]
assert a["state"] == "incomplete", a
r = [x for x in a["relays"] if x.get("reason") == "same-second burst over the relay cap"]
assert len(r) == 1 and r[0]["gap_since"] == 1650000000, a["relays"]
PY
before=$(json_get "$T/st.json" store.events)
cboxctl -d "$D" backfill reset "$A2" --json >"$T/r.json"
check "backfill reset of one author resets its cursors" \
    test "$(json_get "$T/r.json" reset)" -ge 3
check "drained again to idle" wait_for 120 idle
cboxctl -d "$D" follows "$A2" --json >"$T/f2.json"
check "same outcome after the reset, nothing lost" python3 - "$T/f.json" "$T/f2.json" <<'PY'
import json, sys
a, b = (json.load(open(f))["follows"][0] for f in sys.argv[1:3])
key = lambda x: [(r["url"], r["state"], r.get("reason")) for r in x["relays"]]
assert key(a) == key(b), (key(a), key(b))
assert all(y["pages"] > x["pages"] for x, y in zip(a["relays"], b["relays"]))
PY
check "event count unchanged by the reset" \
    test "$(json_get "$T/st.json" store.events)" -eq "$before"
finish
