#!/usr/bin/env bash
# Retention: the running daemon keeps the events' JSON bytes within
# store.max_bytes. A store is filled past the key's minimum (16 MiB) with
# plain events never queued (evictable), events still queued in the inbox
# with no uplink configured (they stay queued), and kinds 0, 3 and 10002,
# all spread over the same seconds so protected rows sit between the
# evictable ones. Then, against a copy of the store taken before:
#  A. a budget lowered at run time (cacheboxctl config set) takes effect;
#  B. --exit-when-idle waits for retention and exits within budget;
#  C. more protected events than the budget holds: every evictable event
#     goes, nothing protected does, and that is said once, not looped on.
# Each time: exactly the oldest evictable events by (created_at, id) are
# gone (down to RETENTION_LOW_WATER_PCT of the budget), every kind 0/3/
# 10002 and every queued event is kept, and event_totals matches the rows.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { echo "python3 not found: skip"; exit 77; }
python3 -c 'import sqlite3' 2>/dev/null || { echo "python3 sqlite3 module not found: skip"; exit 77; }

BASE=(--set relays.bootstrap= --set follow.roots= --set http.listen=127.0.0.1:0)
MAX=$((16 * 1024 * 1024))	# store.max_bytes=16m, the key's minimum
PCT=$(sed -n 's/^#define RETENTION_LOW_WATER_PCT[[:space:]]*\([0-9]*\).*/\1/p' \
	"$CACHEBOX_SRC/src/core/limits.h")
[ -n "$PCT" ] || { echo "RETENTION_LOW_WATER_PCT not found in limits.h"; exit 1; }
LOW=$((MAX / 100 * PCT))
N=10000

db_bytes() { python3 -c 'import sqlite3,sys
c = sqlite3.connect(sys.argv[1], timeout=10)
print(c.execute("SELECT bytes FROM event_totals").fetchone()[0])' "$1/cachebox.db"; }
bytes_at_most() { [ "$(db_bytes "$1")" -le "$2" ]; }
log_count() { grep -c -- "$1" "$T/d.log" || true; }

# verify BEFORE_DIR AFTER_DIR TARGET: compare the store after retention
# with its copy from before; prints "name value" lines into $T/v.
verify() {
	python3 - "$1/cachebox.db" "$2/cachebox.db" "$3" >"$T/v" <<'PY'
import os, sqlite3, sys
sys.path.insert(0, os.path.join(os.environ["CACHEBOX_TESTS"], "integration"))
from rowjson import size_sql
before = sqlite3.connect(sys.argv[1], timeout=10)
after = sqlite3.connect(sys.argv[2], timeout=10)
target = int(sys.argv[3])
PROTECTED = (0, 3, 10002)
q = ("SELECT e.id, e.created_at, e.kind, " + size_sql("e.") + ", "
     "EXISTS (SELECT 1 FROM inbox i WHERE i.event_id = e.id) "
     "FROM events e ORDER BY e.created_at, e.id")
rows = before.execute(q).fetchall()
ids_after = set(r[0] for r in after.execute("SELECT id FROM events"))
total = sum(r[3] for r in rows)
# The documented order: oldest (created_at, id) first, skipping queued
# rows and kinds 0/3/10002, while the total is over the target.
expected = []
for rid, at, kind, n, queued in rows:
    if total <= target:
        break
    if kind in PROTECTED or queued:
        continue
    expected.append((rid, at))
    total -= n
gone = [(r[0], r[1]) for r in rows if r[0] not in ids_after]
prot = [r for r in rows if r[2] in PROTECTED]
queued = [r for r in rows if r[4]]
cnt, size = after.execute("SELECT count(*), coalesce(sum(" + size_sql() + "), 0) FROM events").fetchone()
tc, tb = after.execute("SELECT count, bytes FROM event_totals").fetchone()
newest_gone = max(((at, rid) for rid, at in gone), default=None)
left = after.execute("SELECT count(*) FROM events e WHERE e.kind NOT IN (0, 3, 10002) "
    "AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.event_id = e.id)").fetchone()[0]
out = {
    "bytes_before": sum(r[3] for r in rows),
    "bytes": size, "count": cnt, "totals_bytes": tb, "totals_count": tc,
    "gone": len(gone), "expected": len(expected),
    "gone_is_expected": int(sorted(gone) == sorted(expected)),
    "new_rows": len(ids_after - set(r[0] for r in rows)),
    "protected": len(prot),
    "protected_gone": sum(1 for r in prot if r[0] not in ids_after),
    "queued": len(queued),
    "queued_gone": sum(1 for r in queued if r[0] not in ids_after),
    "inbox": after.execute("SELECT count(*) FROM inbox").fetchone()[0],
    "evictable_left": left,
    # Protected rows older than the newest evicted one: they were in the
    # way, so keeping them is something the daemon did, not luck.
    "protected_in_way": sum(1 for r in prot + queued
        if gone and (r[1], r[0]) < newest_gone),
}
for k, v in out.items():
    print(k, v)
PY
}
v() { awk -v k="$1" '$1 == k { print $2 }' "$T/v"; }

# checks_common NAME: what holds after every run.
checks_common() {
	check "$1: event_totals count is the real count ($(v count))" test "$(v totals_count)" = "$(v count)"
	check "$1: event_totals bytes is the real sum ($(v bytes))" test "$(v totals_bytes)" = "$(v bytes)"
	check "$1: no row appeared" test "$(v new_rows)" = 0
	check "$1: every kind 0/3/10002 event kept ($(v protected))" test "$(v protected_gone)/$(v protected)" = "0/$2"
	check "$1: every queued event kept ($(v queued))" test "$(v queued_gone)/$(v queued)" = "0/$N"
	check "$1: inbox untouched" test "$(v inbox)" = "$N"
	check "$1: evicted exactly the oldest evictable ($(v gone) of $(v expected) expected)" \
		test "$(v gone_is_expected)" = 1
	check "$1: protected rows were in the way of eviction ($(v protected_in_way))" \
		test "$(v protected_in_way)" -gt 0
}

# The store: N events of each kind; one kind-1 set queued, one not. Every
# fill walks back one second per event from the same start, so each second
# holds one event of every set.
B=$T/base
# fill DIR COUNT BATCH SLEEP_MS SEED KIND QUEUE (lib.sh)
fill "$B" $N 5000 0 1 1 0
fill "$B" $N 5000 0 2 1 1
fill "$B" $N 5000 0 3 0 0
fill "$B" $N 5000 0 4 3 0
fill "$B" $N 5000 0 5 10002 0

# --- A. store.max_bytes lowered at run time ---------------------------------
D=$T/a
cp -a "$B" "$D"
start_daemon -d "$D" "${BASE[@]}" --set log.level=debug
check "A: daemon up" wait_for 30 test -S "$D/cacheboxd.sock"
sleep 1
check "A: default budget (4 GiB): nothing evicted" test "$(db_bytes "$D")" = "$(db_bytes "$B")"
check "A: default budget: no eviction started" test "$(log_count 'evicting the oldest')" = 0
check "A: store is over 16 MiB before" test "$(db_bytes "$B")" -gt "$MAX"
cboxctl -d "$D" config set store.max_bytes 16m >/dev/null
check "A: after config set, within the budget" wait_for 60 bytes_at_most "$D" "$MAX"
check "A: eviction reported finished" wait_for 30 grep -q "retention: within budget" "$T/d.log"
stop_daemon
verify "$B" "$D" "$LOW"
checks_common A $((3 * N))
check "A: events were evicted ($(v gone))" test "$(v gone)" -gt 0
check "A: bytes <= store.max_bytes ($(v bytes) <= $MAX)" test "$(v bytes)" -le "$MAX"
check "A: bytes <= low water ($(v bytes) <= $LOW)" test "$(v bytes)" -le "$LOW"
check "A: evictable events are left (it stopped at the budget)" test "$(v evictable_left)" -gt 0
check "A: start logged once" test "$(log_count 'evicting the oldest')" = 1
check "A: no per-step info lines" test "$(grep -c 'info: store: retention evicted' "$T/d.log" || true)" = 0
mv "$T/d.log" "$T/a.log"

# --- B. --exit-when-idle waits for retention ---------------------------------
D=$T/b
cp -a "$B" "$D"
rc=0
timeout 120 "$CACHEBOXD" -d "$D" "${BASE[@]}" --set store.max_bytes=16m \
	--exit-when-idle >"$T/d.log" 2>&1 || rc=$?
check "B: exits 0 once idle (rc $rc)" test "$rc" = 0
check "B: exit was the idle exit" grep -q "idle: no work left" "$T/d.log"
verify "$B" "$D" "$LOW"
checks_common B $((3 * N))
check "B: events were evicted ($(v gone))" test "$(v gone)" -gt 0
check "B: bytes <= store.max_bytes ($(v bytes) <= $MAX)" test "$(v bytes)" -le "$MAX"
check "B: start logged once" test "$(log_count 'evicting the oldest')" = 1
check "B: stop logged once, with the figure" \
	test "$(log_count "within budget: $(v bytes) bytes of events, store.max_bytes $MAX; $(v gone) events evicted")" = 1
check "B: no protected warning" test "$(log_count 'every event left is protected')" = 0
gone_b=$(v gone)

# --- C. only protected events left over the budget ---------------------------
# 8,000 more kind 3: protected alone now exceed 16 MiB.
cp -a "$D" "$T/c0"
fill "$T/c0" 8000 5000 0 6 3 0
D=$T/c
cp -a "$T/c0" "$D"
rc=0
timeout 120 "$CACHEBOXD" -d "$D" "${BASE[@]}" --set store.max_bytes=16m \
	--exit-when-idle >"$T/d.log" 2>&1 || rc=$?
check "C: exits 0 once idle (rc $rc)" test "$rc" = 0
verify "$T/c0" "$D" "$LOW"
checks_common C $((3 * N + 8000))
check "C: every evictable event went ($(v gone))" test "$(v evictable_left)/$(v gone)" = "0/$((N - gone_b))"
check "C: still over the budget, protected only ($(v bytes) > $MAX)" test "$(v bytes)" -gt "$MAX"
check "C: said once that only protected events are left" \
	test "$(log_count 'every event left is protected')" = 1
check "C: not reported within budget" test "$(log_count 'within budget')" = 0

finish
