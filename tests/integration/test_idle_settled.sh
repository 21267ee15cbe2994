#!/usr/bin/env bash
# test_idle_settled.sh — idle means settled: a relay that reconciles
# (NIP-77) but never delivers half the ids it reports. Those ids sit in the
# recovery index, fetched again with backoff.
#   A. --exit-when-idle with the default recovery.settle_s (300 s) and a
#      backoff of at most 400 ms: the box exits only once recovery has no
#      id left to fetch within settle_s, which here means every withheld id
#      spent its budget and expired (before, it exited with ids pending);
#   B. recovery.settle_s=0: idle does not wait, the box exits with ids
#      still pending;
#   C. a long backoff (60 s) within settle_s: the status says idle false,
#      recovery.waiting names the relay, its ids and the deadline, and the
#      sentence "waiting for N ids from relay X until HH:MM UTC", which
#      cacheboxctl status says on its first line and the status page's
#      Summary in its own words (headless chromium, when installed).
. "$(dirname "$0")/lib.sh"
use_relaysim

rows() {
	python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for r in db.execute(sys.argv[2]):
    print(*r)
PY
}
pending() { rows "$1/cachebox.db" "SELECT count(*) FROM missing_ids WHERE state = 'pending'"; }
expired() { rows "$1/cachebox.db" "SELECT count(*) FROM missing_ids WHERE state = 'expired'"; }

cat > "$T/net.json" <<'JSON'
{"dataset": {"authors": 3, "events": 600, "seed": 91},
 "relays": [{"name": "half", "negentropy": "yes", "partial_ids": {"fraction": 0.5}}]}
JSON
relaysim_start "$T/net.json" || { fail "relaysim starts"; finish; exit 1; }
URL=$(relaysim_url half)

# --- A ---------------------------------------------------------------------
check "A: the drain reaches idle and exits 0" \
    timeout 300 "$CACHEBOXD" -d "$T/a" --set relays.bootstrap="$URL" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --set recovery.backoff_base_ms=100 \
    --set recovery.backoff_max_ms=400 --exit-when-idle 2>>"$T/a.log"
check "A: at exit no id is pending in recovery ($(pending "$T/a") pending)" \
    test "$(pending "$T/a")" -eq 0
check "A: the withheld ids were fetched until they expired ($(expired "$T/a"))" \
    test "$(expired "$T/a")" -gt 0

# --- B ---------------------------------------------------------------------
check "B: with recovery.settle_s=0 the drain exits 0" \
    timeout 300 "$CACHEBOXD" -d "$T/b" --set relays.bootstrap="$URL" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --set recovery.backoff_base_ms=100 \
    --set recovery.backoff_max_ms=400 --set recovery.settle_s=0 \
    --exit-when-idle 2>>"$T/b.log"
check "B: ... without waiting for recovery ($(pending "$T/b") pending)" \
    test "$(pending "$T/b")" -gt 0

# --- C ---------------------------------------------------------------------
D=$T/c
start_daemon -d "$D" --set relays.bootstrap="$URL" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --set recovery.backoff_base_ms=60000 \
    --set recovery.backoff_max_ms=60000
waiting() {
	st "$D" && python3 - "$T/st.json" "$URL" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1]))
w = s.get("recovery", {}).get("waiting")
sys.exit(0 if w and w["relay"] == sys.argv[2] and w["ids"] > 0 and
         s["idle"] is False and s["backfill"]["authors_draining"] == 0 and
         re.fullmatch(r"waiting for %d ids from relay %s until \d\d:\d\d UTC"
                      % (w["ids"], re.escape(sys.argv[2])), s["waiting"])
         else 1)
PY
}
check "C: the status says idle false, waiting for the relay's ids until a time" \
    wait_for 120 waiting
python3 -c 'import json, sys; print("    " + json.load(open(sys.argv[1])).get("waiting", "-"))' "$T/st.json" || true
head1=$(cboxctl -d "$D" status | head -1)
echo "    $head1"
check "C: cacheboxctl status says what it waits for on its first line" \
    grep -Eq "^cachebox [0-9.]+, up .*: waiting for [0-9]+ ids from relay ${URL//./\\.} until [0-9]{2}:[0-9]{2} UTC$" <<<"$head1"
if [ -x /usr/bin/chromium ] && [ -d "$CACHEBOX_TESTS/node_modules/playwright-core" ] && [ -z "$EMU" ]; then
	if (cd "$CACHEBOX_TESTS" && node integration/page_text_check.mjs \
	    "http://127.0.0.1:$(cat "$D/http.port")" summary '#activity' \
	    "^Waiting for [0-9]+ ids from relay ${URL//./\\.} until [0-9]{2}:[0-9]{2} UTC" 30 "$T/chromium"); then
		ok "C: the page's Summary says what it waits for"
	else
		fail "C: the page's Summary says what it waits for"
	fi
else
	echo "# no chromium or playwright-core: the page's words not checked"
fi
stop_daemon
relaysim_stop >/dev/null 2>&1
finish
