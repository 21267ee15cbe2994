#!/usr/bin/env bash
# test_backpressure.sh — the drain stops asking upstream while the store is
# over store.max_bytes and goes on once it is within again. A store is
# filled past the key's minimum (16 MiB) with kind 3 events, which
# retention must keep, so it can evict nothing. The daemon then follows a
# simulated network's root: the follow graph still resolves (kinds 3, 0
# and 10002), but no history request goes out and no note is stored.
# Raised at run time, the budget is met, and the drain pages every
# author's whole history.
. "$(dirname "$0")/lib.sh"
use_relaysim

cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 5, "events": 600, "seed": 71},
 "relays": [{"name": "boot", "ipv6": false}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
D=$T/state
# 48,000 kind 3 events of about 370 bytes: over 16 MiB, all protected.
check "the store is filled with 48,000 kind 3 events" fill "$D" 48000 5000 0 9 3 0

# notes: kind-1 events of the dataset's authors in the store.
notes() {
	python3 - "$D/cachebox.db" "$(relaysim_q meta)" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=30)
pks = [bytes.fromhex(a["pubkey"]) for a in json.load(open(sys.argv[2]))["authors"]]
print(sum(db.execute("SELECT count(*) FROM events WHERE pubkey = ? AND kind = 1",
                     (p,)).fetchone()[0] for p in pks))
PY
}
# Budget and root are set at run time (a --set value would take
# precedence over a run-time change): first the budget, then the root.
start_daemon -d "$D" --set relays.bootstrap="$(relaysim_url boot)" \
    --set backfill.pace_ms=0 --set http.listen=127.0.0.1:0 --set log.level=debug
check "daemon up" wait_for 10 st
check "store.max_bytes lowered to 16m at run time" \
    cboxctl -d "$D" config set store.max_bytes 16m
protected() { st && [ "$(json_get "$T/st.json" store.retention)" = protected ]; }
check "retention: over budget, nothing it may evict" wait_for 60 protected
check "the root is added" cboxctl -d "$D" roots add "$(relaysim_q root)"
resolved() { st && [ "$(json_get "$T/st.json" backfill.authors_total)" = 5 ]; }
check "the follow graph resolves (5 authors)" wait_for 60 resolved
# The drain looks at its relays once the set is known: after it logged the
# pause, nothing may have been asked (an order, not a delay).
check "the drain is paused (logged)" wait_for 60 \
    grep -q "drain: paused while the store is over store.max_bytes" "$T/d.log"
check "no note stored while over budget" test "$(notes)" -eq 0
st
check "no author drained" \
    test "$(json_get "$T/st.json" backfill.authors_complete)" -eq 0

check "store.max_bytes raised at run time" \
    cboxctl -d "$D" config set store.max_bytes 64m
all_done() {
	st && [ "$(json_get "$T/st.json" backfill.authors_complete)" = 5 ] &&
	[ "$(json_get "$T/st.json" idle)" = true ]
}
check "within budget: every author drained to complete" wait_for 120 all_done
check "retention is within again" \
    test "$(json_get "$T/st.json" store.retention)" = within
want=$(relaysim_q truth match '{"kinds":[1]}' | wc -l)
check "every note of the network is stored ($want)" test "$(notes)" -eq "$want"
check "the drain resumed (logged)" \
    grep -q "drain: resumed: the store is within store.max_bytes" "$T/d.log"
finish
