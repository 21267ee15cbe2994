#!/usr/bin/env bash
# tag_index_cost.sh — what the single-letter tag index (event_tags,
# sql/sqlite/010_relay.sql) costs:
#   - on ingest: tests/bench/ingest of a build without the index (BASE, e.g.
#     one made from 7e28258, the commit before the relay endpoint) against
#     this one, invocations alternated ROUNDS times so both see the same
#     load. ingest reports the time of a bare signature check over the
#     time of the whole ingest path ("verify/ingest", CPU time, measured
#     in one run), which cancels most of the machine's load; the cost is
#     the ratio of the two builds' medians (how much longer ingest takes
#     per event). Its events carry 0 to 4 "e"/"p" tags (2 on average),
#     and its samples are signed afresh by each invocation (random keys,
#     the same shapes).
#   - on disk: a store of EVENTS events made by prog_relayd through ingest
#     (the relay tests' dataset: notes, replies with "e" and "p" tags,
#     reactions, reposts, some "t" hashtags), bytes of each table and
#     index from SQLite's dbstat.
# Prints figures; judges nothing.
#
#   tests/bench/tag_index_cost.sh BASE_BUILD [BUILD [EVENTS [ROUNDS
#       [DISK_EVENTS]]]]       (defaults: build, 20000, 5, 200000)
# ROUNDS 0 leaves out the ingest part, DISK_EVENTS 0 the disk part.
set -euo pipefail
BASE=$(cd "$1" && pwd)
B=$(cd "${2:-build}" && pwd)
N=${3:-20000}
ROUNDS=${4:-5}
DISK_N=${5:-200000}
T=$(mktemp -d /tmp/tag-index-cost.XXXXXX)
trap 'rm -rf "$T"' EXIT

# "policy ratio min A median B max C  E events/s ..." -> "B E"
policy() { sed -n 's/^policy .*median \([0-9.]*\) .* \([0-9]*\) events\/s.*/\1 \2/p'; }

if [ "$ROUNDS" -gt 0 ]; then
echo "ingest: $N events, 3 runs per invocation, $ROUNDS invocations per build"
for r in $(seq "$ROUNDS"); do
	for which in base new; do
		bin=$B/tests/bench/ingest
		[ $which = base ] && bin=$BASE/tests/bench/ingest
		"$bin" "$N" 3 | tee "$T/$which.$r.out" | policy >>"$T/$which"
		printf '  %-4s round %d: verify/ingest %s, events/s %s\n' \
		    $which "$r" $(tail -1 "$T/$which")
	done
done
python3 - "$T" <<'PY'
import statistics, sys
t = sys.argv[1]
r = {}
for w in ("base", "new"):
    rows = [l.split() for l in open(f"{t}/{w}") if l.strip()]
    r[w] = (statistics.median(float(a) for a, _ in rows),
            statistics.median(int(b) for _, b in rows))
print("%-34s %12s %12s" % ("", "no index", "tag index"))
print("%-34s %12.3f %12.3f" % ("verify/ingest, median", r["base"][0], r["new"][0]))
print("%-34s %12d %12d" % ("ingest events/s (CPU), median", r["base"][1], r["new"][1]))
print("ingest time per event with the index: %.3fx (from verify/ingest), "
      "%.3fx (from events/s)" % (r["base"][0] / r["new"][0], r["base"][1] / r["new"][1]))
PY
echo "commits and bytes written (policy, first invocation's median run):"
for which in base new; do
	printf '  %-4s %s\n' $which "$(sed -n 's/^policy .*\(commits\)/\1/p' \
	    "$T/$which.1.out")"
done
fi

[ "$DISK_N" -gt 0 ] || exit 0
echo "on disk: $DISK_N events by prog_relayd through ingest"
mkdir -m 700 "$T/box"
"$B/tests/integration/prog_relayd" gen "$T/box" "$DISK_N" 1 200 - >/dev/null
sqlite3 "$T/box/cachebox.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
python3 - "$T/box/cachebox.db" "$DISK_N" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = int(sys.argv[2])
size = dict(db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
idx = [r[0] for r in db.execute(
    "SELECT name FROM sqlite_schema WHERE tbl_name = 'events' AND type = 'index'")]
rows = db.execute("SELECT count(*) FROM event_tags").fetchone()[0]
ev = size.get("events", 0)
evi = sum(size.get(i, 0) for i in idx)
tags = size.get("event_tags", 0)
total = sum(size.values())
print("%-40s %14s %10s" % ("", "bytes", "B/event"))
for name, b in [("events (table)", ev), ("events' indexes (%d)" % len(idx), evi),
                ("event_tags (%d rows, %.2f per event)" % (rows, rows / n), tags),
                ("whole file", total)]:
    print("%-40s %14d %10.1f" % (name, b, b / n))
print("event_tags / events table %.3f, / events with its indexes %.3f, "
      "share of the file %.3f" % (tags / ev, tags / (ev + evi), tags / total))
PY
