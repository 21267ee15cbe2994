#!/usr/bin/env bash
# test_store_damaged.sh — a database SQLite finds corrupt while the daemon
# runs is written no more, and the daemon says so instead of dying or
# spreading the damage. A store is filled with 3,000 events through the
# real ingest path; then the root page of the events table and of each of
# its indexes is overwritten with bytes no b-tree page can hold (the
# header, the schema and every other table stay sound, so the store opens
# as it would after a bad sector under the events). The daemon then starts
# on a simulated relay: the root's follow list is the first event to reach
# the store, and its duplicate check meets the damage (unless the expiry
# sweep's first read met it already).
#   1. It keeps running: status answers on the control socket and the web
#      with store.state "damaged" and the event counted as a store error;
#      the log says once what to do; a run-time `config set` is refused;
#      neither that nor the shutdown changes the database or its WAL.
#   2. With --exit-when-idle it exits with status 1 instead of 0.
. "$(dirname "$0")/lib.sh"
use_relaysim
D=$T/state

cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 3, "events": 3000, "seed": 97},
 "relays": [{"name": "boot", "ipv6": false, "max_limit": 100}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
fill "$D" 3000

# Overwrite the root page of events and of its indexes with 0xff (not a
# page type SQLite knows).
check "the events b-trees are damaged on disk" python3 - "$D/cachebox.db" <<'PY'
import sqlite3, sys
path = sys.argv[1]
db = sqlite3.connect(path)
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
size = db.execute("PRAGMA page_size").fetchone()[0]
roots = [r[0] for r in db.execute(
    "SELECT rootpage FROM sqlite_master WHERE tbl_name = 'events' "
    "AND type IN ('table', 'index') AND rootpage > 1")]
db.close()
with open(path, "r+b") as f:
    for p in roots:
        f.seek((p - 1) * size)
        f.write(b"\xff" * size)
print(f"    {len(roots)} root pages of {size} bytes overwritten")
sys.exit(0 if len(roots) >= 4 else 1)
PY

start_daemon -d "$D" --set relays.bootstrap="$(relaysim_url boot)" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0
damaged() { st && [ "$(json_get "$T/st.json" store.state)" = damaged ]; }
check "status says the store is damaged" wait_for 60 damaged
check "the log says what to do, once" \
    test "$(grep -c 'is damaged (SQLite found corruption)' "$T/d.log")" = 1
check "the log names restoring a backup" grep -q "restore a backup" "$T/d.log"
port=$(cat "$D/http.port")
check "the web status answers with the same state" \
    sh -c "curl -sf http://127.0.0.1:$port/api/status | grep -q '\"damaged\"'"
# The damage may be met first by another reader of the events (the expiry
# sweep at start): the follow list's insert is then refused a moment later.
store_error() { st && [ "$(json_get "$T/st.json" ingest.errors)" -ge 1 ]; }
check "an event that reached the damaged store is counted as a store error" \
    wait_for 60 store_error

sums() { md5sum "$D/cachebox.db" "$D/cachebox.db-wal" 2>/dev/null | awk '{print $1}'; }
before=$(sums)
if cboxctl -d "$D" config set log.level debug >"$T/set.out" 2>&1; then
	fail "a run-time config set is refused"
else
	ok "a run-time config set is refused: $(head -c 120 "$T/set.out")"
fi
check "saying the database is damaged" grep -q "database is damaged" "$T/set.out"
check "the daemon is still running" kill -0 "$DPID"
stop_daemon
check "nothing since, the refused change and the shutdown included, changed the database or its WAL" \
    test "$before" = "$(sums)"

cboxd -d "$D" --set relays.bootstrap="$(relaysim_url boot)" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0 --exit-when-idle >>"$T/d2.log" 2>&1 &
pid=$!
PIDS+=("$pid")
rc=0
wait "$pid" || rc=$?
check "--exit-when-idle exits 1 on a damaged store (exit $rc)" test "$rc" = 1
check "and says why" grep -q "the store is damaged: exiting" "$T/d2.log"
finish
