#!/usr/bin/env bash
# test_disk_full.sh — a full disk in the middle of a drain loses nothing.
# The state directory is a 5 MiB tmpfs, far too small for the simulated
# network's 20,000 notes: commits and inserts fail with "database or disk
# is full" (SQLite then rolls the open batch back by itself). The daemon
# must keep running, never move a cursor past events it did not keep, and
# keep its totals true. The tmpfs is then grown: the drain goes on to
# complete, every pageable note is stored exactly once, and event_totals
# equals the rows. Needs root (mount); skipped otherwise.
. "$(dirname "$0")/lib.sh"
command -v node >/dev/null && [ -d "$CACHEBOX_TESTS/node_modules/ws" ] || exit 77
command -v python3 >/dev/null || exit 77
[ "$(id -u)" -eq 0 ] || { echo "not root: cannot mount a tmpfs; skip"; exit 77; }
. "$CACHEBOX_TESTS/relaysim/relaysim.sh"
D=$T/state
# set -e holds in the trap too: every step may fail (no daemon yet when the
# mount is refused) and the next must still run.
trap 'relaysim_cleanup; kill "${DPID:-}" 2>/dev/null || true; wait 2>/dev/null || true
umount "$D" 2>/dev/null || true; cleanup' EXIT
mkdir -p "$D"
mount -t tmpfs -o size=5m,mode=700 tmpfs "$D" ||
    { echo "mount refused: skip"; exit 77; }

cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 4, "events": 20000, "seed": 81},
 "relays": [{"name": "boot", "ipv6": false, "max_limit": 500}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
start_daemon -d "$D" --set relays.bootstrap="$(relaysim_url boot)" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0
full() { grep -q "database or disk is full" "$T/d.log"; }
check "the disk fills up during the drain" wait_for 60 full
sleep 3
check "the daemon keeps running on a full disk" kill -0 "$DPID"
check "it still answers status" st
check "no author is complete on a full disk" \
    test "$(json_get "$T/st.json" backfill.authors_complete)" -lt 4

check "the disk grows to 300 MiB" mount -o remount,size=300m "$D"
done_() {
	st && [ "$(json_get "$T/st.json" idle)" = true ] &&
	[ "$(json_get "$T/st.json" backfill.authors_complete)" = 4 ]
}
check "the drain completes every author" wait_for 180 done_
relaysim_q truth pageable '{"kinds":[1]}' >"$T/want"
check "every pageable note is stored ($(wc -l <"$T/want"))" python3 - "$D/cachebox.db" "$T/want" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=30)
want = set(bytes.fromhex(l.strip()) for l in open(sys.argv[2]) if l.strip())
have = set(r[0] for r in db.execute("SELECT id FROM events WHERE kind = 1"))
print(f"    want {len(want)}, have {len(have)}, missing {len(want - have)}")
sys.exit(0 if want <= have and len(want) == 20000 else 1)
PY
check "event_totals equals the rows and their bytes" python3 - "$D/cachebox.db" <<'PY'
import os, sqlite3, sys
sys.path.insert(0, os.path.join(os.environ["CACHEBOX_TESTS"], "integration"))
from rowjson import size_sql
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=30)
t = db.execute("SELECT count, bytes FROM event_totals").fetchone()
r = db.execute("SELECT count(*), coalesce(sum(" + size_sql() + "), 0) "
               "FROM events").fetchone()
print(f"    totals {t}, rows {r}")
sys.exit(0 if tuple(t) == tuple(r) else 1)
PY
check "status counts the lost batches ($(json_get "$T/st.json" ingest.lost_batches))" \
    test "$(json_get "$T/st.json" ingest.lost_batches)" -gt 0
check "status store.events agrees" \
    test "$(json_get "$T/st.json" store.events)" -eq "$(python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM events").fetchone()[0])' "$D/cachebox.db")"
finish
