#!/usr/bin/env bash
# test_export_import_backup.sh — the ways data leaves and enters the box.
#   export  `cacheboxctl export` while the daemon runs: every stored event
#           once, newest first, valid; --filter gives exactly the matches;
#   export during an import: exactly the events stored up to the row the
#           export says it read to (its snapshot), none stored after
#   import  into a fresh box through its daemon: the same ids; again: all
#           duplicates; a file with bad lines: counted, the first ones
#           reported by line number and reason;
#   backup  taken while the author drain writes: the copy is 0600, passes
#           PRAGMA integrity_check and holds every event committed before
#           it began; restored (stop, copy, start) it opens and the drain
#           finishes from it; the web may not ask for one to a file;
#   download  the page's "Download backup" during the same drain: only with
#           the admin password, fetched once with its ticket (a used or
#           wrong one refused) while the status still answers, the copy
#           gone from the state directory as it is sent; it passes
#           integrity_check and holds every event committed before it was
#           asked for; a copy not fetched is removed when the daemon stops.
. "$(dirname "$0")/lib.sh"
use_relaysim
gen=$CACHEBOX_BUILD/tests/integration/prog_relayd
command -v curl >/dev/null || { echo "skip: curl missing"; exit 77; }

ids_of() { python3 -c 'import json, sys
for l in open(sys.argv[1]):
    if l.strip():
        print(json.loads(l)["id"])' "$1"; }
db_ids() { python3 - "$1" "${2:-}" <<'PY'
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
q = "SELECT lower(hex(id)) FROM events" + (" WHERE kind = %d" % int(sys.argv[2]) if sys.argv[2] else "")
for (i,) in c.execute(q):
    print(i)
PY
}

# ---- export ------------------------------------------------------------
A=$T/a
D=$A
mkdir -m 700 "$A"
$EMU "$gen" gen "$A" 3000 11 20 >/dev/null
start_daemon -d "$A" --set relays.bootstrap= --set http.listen=127.0.0.1:0
check "daemon A up" wait_for 10 st
cboxctl -d "$A" export "$T/a.jsonl" 2>"$T/export.err"
check "export says how many" grep -q "exported 3000 events" "$T/export.err"
check "export: every stored event once" \
    test "$(ids_of "$T/a.jsonl" | sort | uniq | wc -l)" = 3000 -a \
    "$(ids_of "$T/a.jsonl" | sort)" = "$(db_ids "$A/cachebox.db" | sort)"
check "export: newest first, id order on ties" python3 -c 'import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
key = [(-e["created_at"], e["id"]) for e in ev]
sys.exit(0 if key == sorted(key) else 1)' "$T/a.jsonl"
check "export: every line a valid event" \
    test "$(cboxctl event verify "$T/a.jsonl" | grep -vc '^valid ' || true)" = 0
check "export is 0600" test "$(stat -c %a "$T/a.jsonl")" = 600
cboxctl -d "$A" export --filter '{"kinds":[7]}' - >"$T/k7.jsonl" 2>/dev/null
check "export --filter: exactly the matches" \
    test "$(ids_of "$T/k7.jsonl" | sort)" = "$(db_ids "$A/cachebox.db" 7 | sort)"
cboxctl -d "$A" export --filter '[{"kinds":[0]},{"kinds":[6],"limit":5}]' - >"$T/two.jsonl" 2>/dev/null
check "export --filter with two filters and a limit: 20 + 5" \
    test "$(wc -l <"$T/two.jsonl")" = 25

# ---- import --------------------------------------------------------------
B=$T/b
start_daemon -d "$B" --set relays.bootstrap= --set http.listen=127.0.0.1:0 \
    --set relay.listen=127.0.0.1:0
BPID=$DPID
check "daemon B up" wait_for 10 st "$B"
cboxctl -d "$B" import "$T/a.jsonl" >"$T/import.out"
sed 's/^/    /' "$T/import.out"
check "import: 3000 stored, nothing refused" \
    test "$(grep -c '^stored: 3000$\|^duplicate: 0$\|^invalid: 0$' "$T/import.out")" = 3
same_ids() { test "$(db_ids "$B/cachebox.db" | sort)" = "$(db_ids "$A/cachebox.db" | sort)"; }
check "import: box B holds the same ids as box A (once committed)" \
    wait_for 10 same_ids
cboxctl -d "$B" import - <"$T/a.jsonl" >"$T/again.out"
check "import again (stdin): 3000 duplicates" grep -q '^duplicate: 3000$' "$T/again.out"
$EMU "$gen" key 12 0 >"$T/k.hex"
chmod 600 "$T/k.hex"
printf '{"kind":1,"content":"one"}\n{"kind":1,"content":"two"}\n' |
    cboxctl event sign --key "$T/k.hex" >"$T/new.jsonl"
{
	sed -n 1,2p "$T/a.jsonl"
	echo 'not json at all'
	sed -n 1p "$T/new.jsonl" | sed 's/"content":"one"/"content":"tampered"/'
	echo
	sed -n 4p "$T/a.jsonl" | cut -c1-100
	sed -n 5p "$T/a.jsonl"
	sed -n 2p "$T/new.jsonl" | python3 -c 'import json, sys
e = json.loads(sys.stdin.read()); e["sig"] = e["sig"][:-4] + "0000"
print(json.dumps(e, separators=(",", ":")))'
} >"$T/bad.jsonl"
rc=0
cboxctl -d "$B" import "$T/bad.jsonl" >"$T/bad.out" || rc=$?
sed 's/^/    /' "$T/bad.out"
check "a file with bad lines: exit 1, counted and reported by line" \
    test $rc -eq 1 -a "$(tr '\n' '|' <"$T/bad.out")" = \
    "lines: 8|stored: 0|duplicate: 3|withdrawn: 0|ephemeral: 0|invalid: 4|errors: 0|  line 3: invalid: bad json|  line 4: invalid: id mismatch|  line 6: invalid: bad json|  line 8: invalid: bad signature|"
st "$B"
check "B's status counts the import as stored events" \
    test "$(json_get "$T/st.json" store.events)" = 3000
stop_daemon
DPID=

# ---- export during an import --------------------------------------------
# F is a database of 40,000 other events, exported offline (no daemon) as
# the import; E is a running box of 3,000 into which it is imported while
# E is exported. The export names the last row it reads (rows are numbered
# in the order they are stored): it holds exactly the events up to it.
E=$T/e F=$T/f
mkdir -m 700 "$E" "$F"
$EMU "$gen" gen "$E" 3000 13 20 >/dev/null
$EMU "$gen" gen "$F" 40000 14 40 >/dev/null
cboxctl -d "$F" export "$T/f.jsonl" 2>/dev/null
start_daemon -d "$E" --set relays.bootstrap= --set http.listen=127.0.0.1:0
check "daemon E up" wait_for 10 st "$E"
cboxctl -d "$E" import "$T/f.jsonl" >"$T/eimport.out" 2>&1 &
IMP=$!
check "the import is under way" wait_for 60 bash -c "[ \"\$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1], timeout=10).execute(\"select count(*) from events\").fetchone()[0])' '$E/cachebox.db' 2>/dev/null || echo 0)\" -ge 5000 ]"
cboxctl -d "$E" export "$T/e.jsonl" 2>"$T/eexport.err"
wait "$IMP" || true
check "the import ended: 40000 stored" grep -q '^stored: 40000$' "$T/eimport.out"
sed 's/^/    /' "$T/eexport.err"
snap=$(sed -n 's/.*exported [0-9]* events (stored up to row \([0-9]*\)).*/\1/p' "$T/eexport.err")
check "the export names the row it read up to" test -n "$snap"
check "export during an import: exactly the events stored up to that row" \
    python3 - "$E/cachebox.db" "$T/e.jsonl" "${snap:-0}" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
snap = int(sys.argv[3])
rows = dict(db.execute("SELECT lower(hex(id)), rowid FROM events"))
got = [json.loads(l)["id"] for l in open(sys.argv[2]) if l.strip()]
after = [i for i in got if rows.get(i, 0) > snap]
want = {i for i, r in rows.items() if r <= snap}
later = sum(1 for r in rows.values() if r > snap)
print(f"    exported {len(got)}, stored up to row {snap}: {len(want)}, "
      f"stored after it began: {later}, of those exported: {len(after)}")
sys.exit(0 if not after and set(got) == want and len(got) == len(set(got)) else 1)
PY
stop_daemon
DPID=

# ---- backup during a drain -----------------------------------------------
cat >"$T/sim.json" <<'JSON'
{"dataset": {"authors": 5, "events": 5000, "seed": 41},
 "relays": [{"name": "up"}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
C=$T/c
# Paged (no NIP-77, which fetches a history in a few round trips) at 400 ms
# a request: the 4,500 events left once the backup is asked for take at
# least 45 requests x 400 ms, so the drain still runs when the backup ends
# whatever the machine's speed.
ARGS=(--set relays.bootstrap="$(relaysim_url up)" --set follow.roots="$(relaysim_q root)"
    --set backfill.pace_ms=400 --set backfill.page_size=100 --set negentropy.enabled=false
    --set http.listen=127.0.0.1:0 --set admin.token=backup-token-0123)
start_daemon -d "$C" "${ARGS[@]}"
CPID=$DPID
check "the drain has begun" wait_for 60 bash -c "[ \"\$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1], timeout=10).execute(\"select count(*) from events\").fetchone()[0])' '$C/cachebox.db' 2>/dev/null || echo 0)\" -ge 500 ]"
db_ids "$C/cachebox.db" | sort >"$T/before.ids"
cboxctl -d "$C" backup "$T/b.db" >"$T/backup.out"
sed 's/^/    /' "$T/backup.out"
st "$C"
check "the drain was still running when the backup was done" \
    test "$(json_get "$T/st.json" idle)" = false
check "the backup file is 0600" test "$(stat -c %a "$T/b.db")" = 600
check "the backup passes PRAGMA integrity_check" \
    test "$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("pragma integrity_check").fetchone()[0])' "$T/b.db")" = ok
db_ids "$T/b.db" | sort >"$T/backup.ids"
check "it holds every event committed before it began ($(wc -l <"$T/before.ids"))" \
    test -z "$(comm -23 "$T/before.ids" "$T/backup.ids")"
(cd "$T" && cboxctl -d "$C" backup status --json) >"$T/bstatus.json"
check "cacheboxctl backup status asks the daemon (the last backup: done)" \
    test "$(json_get "$T/bstatus.json" state)" = done
check "  and writes no file named status" test ! -e "$T/status"
H=$(cat "$C/http.port")
code=$(curl -s -o "$T/web.out" -w '%{http_code}' -X POST -d '{"file":"/tmp/x.db"}' \
    "http://127.0.0.1:$H/api/backup")
check "the web may not ask for a backup (403, saying why)" \
    test "$code" = 403 -a -n "$(grep 'names a file the daemon writes' "$T/web.out")"

# ---- the page's download, during the same drain ----------------------------
B=http://127.0.0.1:$H
post_dl() { curl -s -o "$T/dl.json" -w '%{http_code}' -X POST -d '{}' "$@" "$B/api/backup/download"; }
check "Download backup needs the admin password (401)" test "$(post_dl)" = 401
db_ids "$C/cachebox.db" | sort >"$T/before-dl.ids"
check "with it, a copy begins (200)" \
    test "$(post_dl -H 'Authorization: Bearer backup-token-0123')" = 200
url=$(json_get "$T/dl.json" download)
check "the answer names the one-time path ($url)" \
    grep -Eq '^/api/backup/file\?ticket=[0-9a-f]{64}$' <<<"$url"
copied() { curl -fsS "$B/api/backup/status" | grep -q '"state":"done"'; }
check "the copy is done" wait_for 120 copied
check "it waits in the state directory, 0600, under the daemon's name" \
    test "$(stat -c %a "$C/backup-download.db")" = 600
code=$(curl -s -o /dev/null -w '%{http_code}' "$B/api/backup/file?ticket=$(printf '%064d' 0)")
check "a wrong ticket is refused (403)" test "$code" = 403
# The download is written into a FIFO nobody reads yet: curl blocks on its
# first body byte, so the download is still open, by construction, while
# the status is asked (a rate limit alone lost the race to a small file).
mkfifo "$T/dl.fifo"
curl -s -D "$T/dl.head" -o "$T/dl.fifo" "$B$url" &
CURL=$!
gone() { [ ! -e "$C/backup-download.db" ]; }
check "the copy leaves the state directory as it is sent" wait_for 30 gone
check "the status answers while it streams" bash -c "kill -0 $CURL && curl -fsS -m 5 '$B/api/status' >/dev/null"
cat "$T/dl.fifo" >"$T/dl.db"
wait "$CURL" || true
check "it is sent as a file to save" \
    grep -Eq '^Content-Disposition: attachment; filename="cachebox-backup-[0-9]{8}-[0-9]{6}\.db"' "$T/dl.head"
check "the download passes PRAGMA integrity_check" \
    test "$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("pragma integrity_check").fetchone()[0])' "$T/dl.db")" = ok
db_ids "$T/dl.db" | sort >"$T/dl.ids"
check "it holds every event committed before it was asked for ($(wc -l <"$T/before-dl.ids"))" \
    test -z "$(comm -23 "$T/before-dl.ids" "$T/dl.ids")"
code=$(curl -s -o "$T/again.out" -w '%{http_code}' "$B$url")
check "the ticket works once (403 the second time)" test "$code" = 403
check "nothing of it is left in the state directory" \
    test -z "$(ls "$C" | grep backup-download)"
post_dl -H 'Authorization: Bearer backup-token-0123' >/dev/null
check "a copy nobody fetched ..." wait_for 120 copied
kill "$CPID"; wait "$CPID" || true
check "... is removed when the daemon stops" test -z "$(ls "$C" | grep backup-download)"

# Restore: stop (done), copy the backup in place of the database, start.
R=$T/r
mkdir -m 700 "$R"
cp "$T/b.db" "$R/cachebox.db"
start_daemon -d "$R" "${ARGS[@]}"
check "the restored box drains to idle" wait_for 300 idle "$R"
want=$(relaysim_q truth match '{}' | wc -l)
check "  with every upstream event ($want)" \
    test "$(json_get "$T/st.json" store.events)" = "$want"
check "  and the restored database passes integrity_check" \
    test "$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1], timeout=10).execute("pragma integrity_check").fetchone()[0])' "$R/cachebox.db")" = ok
finish
