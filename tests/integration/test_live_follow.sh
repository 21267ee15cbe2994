#!/usr/bin/env bash
# test_live_follow.sh — the live stream and the follow-graph refresh end to
# end against relaysim (two bootstrap relays a and b, both holding the whole
# dataset), with a daemon that keeps running. Once the first drain is idle
# the store holds exactly what the relays hold for the eight followed
# authors. Then: three new notes of a followed author published to its
# write relay arrive live (source live, first relay a, each once), while a
# note of a key nobody follows, published just before them, is not stored.
# Relay a is paused (connections closed, upgrades refused) and two notes
# dated half a minute back are published to it meanwhile: after the daemon
# reconnects they arrive through the live re-subscription (source live,
# first relay a; a complete author's drain never asks again), which needs a
# since reaching back past them. Last, the root publishes a newer kind 3
# that follows a new key (whose older history sits on b) and drops one
# author: well before the 10-minute refresh the new key is followed and
# drained completely on both relays, exactly its events stored; the dropped
# author is stale, its events and cursors kept; the new key's notes now
# stream live from both relays, and the dropped author's do not any more.
# Then a new relay list of a kept author, published only to a bootstrap
# relay where nothing of that author is live, arrives with the next refresh
# (which asks kept authors for kinds 0 and 10002 newer than the last one).
. "$(dirname "$0")/lib.sh"
use_relaysim
SIGN=$CACHEBOX_TESTS/integration/sign_events.mjs

cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 8, "events": 400, "seed": 61},
 "relays": [{"name": "a", "ipv6": false}, {"name": "b", "ipv6": false}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
ROOT=$(relaysim_q root)
META=$(relaysim_q meta)
URLA=$(relaysim_url a)
URLB=$(relaysim_url b)
D=$T/state

# meta FIELD INDEX: an author's pubkey or seckey from the dataset's meta.
meta() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["authors"][int(sys.argv[3])][sys.argv[2]])' \
	    "$META" "$1" "$2"
}
# L: the first followed author writing to a ("0" is the slot relay a fills).
# DR: the author the new kind 3 drops (another non-root author).
read -r LI DRI < <(python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["authors"]
l = next(x["index"] for x in a[1:] if "0" in x["write_relays"])
print(l, next(x["index"] for x in reversed(a[1:]) if x["index"] != l))' "$META")
LPK=$(meta pubkey "$LI")
LSK=$(meta seckey "$LI")
DRPK=$(meta pubkey "$DRI")
DRSK=$(meta seckey "$DRI")
RSK=$(meta seckey 0)
read -r XSK XPK < <(node "$SIGN" keygen)
echo "# root $ROOT, live author $LI $LPK, dropped $DRI $DRPK, new key $XPK"

# tmpl SK KIND CREATED_AT CONTENT [TAGS_JSON]: one template line.
tmpl() {
	python3 -c 'import json, sys
print(json.dumps({"sk": sys.argv[1], "kind": int(sys.argv[2]),
    "created_at": int(sys.argv[3]), "content": sys.argv[4],
    "tags": json.loads(sys.argv[5])}))' "$1" "$2" "$3" "$4" "${5:-[]}"
}
sign() { node "$SIGN"; }
ids() { cut -d'"' -f4 "$1"; }
# publish NAME FILE: every event accepted (ok true, no reason).
publish() {
	local n
	n=$(relaysim_q publish "$1" "$2" | python3 -c 'import json, sys
r = json.load(sys.stdin)
print(sum(x.get("ok") is True and x.get("reason") == "" for x in r) - len(r))')
	[ "$n" -eq 0 ]
}
# sql QUERY [ARGS...]: rows of a read-only query, space separated.
sql() {
	python3 - "$D/cachebox.db" "$@" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=30)
args = [bytes.fromhex(a[2:]) if a.startswith("x:") else a for a in sys.argv[3:]]
for row in db.execute(sys.argv[2], args):
    print(*row)
PY
}
# stored FILE: how many of the ids in FILE are in the store.
stored() {
	python3 - "$D/cachebox.db" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=30)
ids = [bytes.fromhex(l.split('"')[3]) for l in open(sys.argv[2]) if l.strip()]
print(sum(db.execute("SELECT count(*) FROM events WHERE id = ?",
                     (i,)).fetchone()[0] for i in ids))
PY
}
# all_stored FILE: every id in FILE is in the store.
all_stored() { [ "$(stored "$1")" -eq "$(wc -l <"$1")" ]; }
# origin FILE: "source first_relay" of each id of FILE in the store.
origin() {
	python3 - "$D/cachebox.db" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=30)
for l in open(sys.argv[2]):
    if l.strip():
        for r in db.execute("SELECT source, first_relay FROM events WHERE id = ?",
                            (bytes.fromhex(l.split('"')[3]),)):
            print(*r)
PY
}
# count_by PK [KIND]: stored events of an author (of one kind).
count_by() {
	if [ $# -eq 2 ]; then
		sql "SELECT count(*) FROM events WHERE pubkey = ? AND kind = ?" \
		    "x:$1" "$2"
	else
		sql "SELECT count(*) FROM events WHERE pubkey = ?" "x:$1"
	fi
}

# 1. The first drain of the eight followed authors, daemon kept running.
start_daemon -d "$D" --set relays.bootstrap="$URLA,$URLB" \
    --set follow.roots="$ROOT" --set backfill.pace_ms=0 \
    --set http.listen=127.0.0.1:0
check "the first drain goes idle" wait_for 240 idle
check "eight authors followed, none stale" \
    test "$(sql 'SELECT sum(stale = 0), sum(stale = 1), sum(is_root) FROM follows')" = "8 0 1"
ALL=$(python3 -c 'import json, sys
print(json.dumps({"authors": [a["pubkey"] for a in json.load(open(sys.argv[1]))["authors"]]}))' "$META")
relaysim_q truth match "$ALL" | sort >"$T/want"
sql "SELECT lower(hex(id)) FROM events" | sort >"$T/have"
check "the store holds exactly the relays' $(wc -l <"$T/want") events" \
    cmp -s "$T/want" "$T/have"
LBEFORE=$(count_by "$LPK" 1)

# 2. Live: three notes of L on its write relay a, after a note by the new
# key X, which nobody follows yet (X's note is the older, so a daemon that
# takes it would hold it by the time L's notes are in).
NOW=$(date +%s)
{
	tmpl "$XSK" 1 $((NOW - 3)) "unfollowed yet"
	for i in 1 2 3; do tmpl "$LSK" 1 $((NOW - 3 + i)) "live note $i"; done
} | sign >"$T/live.jsonl"
head -1 "$T/live.jsonl" >"$T/x_unf.jsonl"
tail -3 "$T/live.jsonl" >"$T/l_live.jsonl"
check "relay a accepts the live notes" publish a "$T/live.jsonl"
check "the three live notes are stored" wait_for 60 all_stored "$T/l_live.jsonl"
check "each came live from a" \
    test "$(origin "$T/l_live.jsonl" | sort | uniq -c | awk '{$1 = $1; print}')" = "3 live $URLA"
check "L's notes: exactly three more" \
    test "$(count_by "$LPK" 1)" -eq $((LBEFORE + 3))
check "the unfollowed key's note is not stored" \
    test "$(stored "$T/x_unf.jsonl")" -eq 0

# 3. Reconnect catch-up: a refuses connections for 6 s; two notes dated
# before what the daemon saw live there are published to it meanwhile.
CONN0=$(relaysim_q stats a connections)
relaysim_q pause a 6000 >/dev/null
NOW=$(date +%s)
{ tmpl "$LSK" 1 $((NOW - 30)) "while paused 1"
  tmpl "$LSK" 1 $((NOW - 29)) "while paused 2"; } | sign >"$T/paused.jsonl"
check "relay a accepts notes while paused" publish a "$T/paused.jsonl"
check "the notes published during the pause are not stored yet" \
    test "$(stored "$T/paused.jsonl")" -eq 0
check "after the pause they arrive" wait_for 120 all_stored "$T/paused.jsonl"
check "through the live re-subscription on a" \
    test "$(origin "$T/paused.jsonl" | sort | uniq -c | awk '{$1 = $1; print}')" = "2 live $URLA"
check "the daemon reconnected to a" \
    test "$(relaysim_q stats a connections)" -gt "$CONN0"
check "L's notes: exactly five more" \
    test "$(count_by "$LPK" 1)" -eq $((LBEFORE + 5))

# 4. Follow refresh. X's older history goes to b only; then the root's
# newer kind 3 (to a only) follows X and drops DR.
for i in 0 1 2 3 4; do
	tmpl "$XSK" 1 $((1690000000 + i * 86400)) "older note $i of the new key"
done | sign >"$T/x_old.jsonl"
check "relay b accepts X's history" publish b "$T/x_old.jsonl"
DRBEFORE=$(count_by "$DRPK")
DRCURSORS=$(sql 'SELECT count(*) FROM cursors WHERE pubkey = ?' "x:$DRPK")
TAGS=$(python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["authors"]
p = [x["pubkey"] for x in a[1:] if x["pubkey"] != sys.argv[2]] + [sys.argv[3]]
print(json.dumps([["p", k] for k in p]))' "$META" "$DRPK" "$XPK")
tmpl "$RSK" 3 "$(date +%s)" "" "$TAGS" | sign >"$T/k3.jsonl"
check "relay a accepts the root's new kind 3" publish a "$T/k3.jsonl"
followed() {
	test "$(sql 'SELECT stale FROM follows WHERE pubkey = ?' "x:$XPK")" = 0 &&
	test "$(sql 'SELECT stale FROM follows WHERE pubkey = ?' "x:$DRPK")" = 1
}
check "the new kind 3 is taken up: X followed, DR stale" wait_for 120 followed
check "the kind 3 came live from a" \
    test "$(origin "$T/k3.jsonl")" = "live $URLA"
check "the log says: 8 followed, 1 added, 1 dropped" \
    grep -q 'follow: 8 followed (1 added, 0 back, 1 dropped)' "$T/d.log"
check "follows: 8 active, 1 stale" \
    test "$(sql 'SELECT sum(stale = 0), sum(stale = 1) FROM follows')" = "8 1"
cat "$T/x_old.jsonl" "$T/x_unf.jsonl" >"$T/x_all.jsonl"
xdone() {
	cboxctl -d "$D" follows "$XPK" --json >"$T/fx.json" 2>/dev/null &&
	python3 - "$T/fx.json" "$URLA" "$URLB" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["follows"][0]
assert a["state"] == "complete" and not a["stale"], a
assert sorted(r["url"] for r in a["relays"]) == sorted(sys.argv[2:4]), a
PY
}
check "X is drained, complete on a and b" wait_for 120 xdone
check "X's six events are stored" all_stored "$T/x_all.jsonl"
check "and nothing else of X" test "$(count_by "$XPK")" -eq 6
check "X's history on b came from the drain" \
    test "$(origin "$T/x_old.jsonl" | sort | uniq -c | awk '{$1 = $1; print}')" = "5 backfill $URLB"
cboxctl -d "$D" follows "$DRPK" --json >"$T/fdr.json"
check "follows DR: stale, cursors kept" python3 - "$T/fdr.json" "$DRCURSORS" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["follows"][0]
assert a["stale"] is True and a["is_root"] is False, a
assert len(a["relays"]) == int(sys.argv[2]) and a["state"] == "complete", a
PY
check "DR's $DRBEFORE events are kept" test "$(count_by "$DRPK")" -eq "$DRBEFORE"

# 5. After the refresh X streams live from both relays (it has no relay
# list, so it is on the bootstrap relays); DR does not any more. DR's note
# goes to both relays before a root note on each, the root being on every
# bootstrap relay's live set: once the root notes are in, DR's would be.
NOW=$(date +%s)
{ tmpl "$XSK" 1 "$NOW" "X live on a"; } | sign >"$T/x_la.jsonl"
{ tmpl "$XSK" 1 "$NOW" "X live on b"; } | sign >"$T/x_lb.jsonl"
check "X's live note accepted on a" publish a "$T/x_la.jsonl"
check "X's live note accepted on b" publish b "$T/x_lb.jsonl"
cat "$T/x_la.jsonl" "$T/x_lb.jsonl" >"$T/x_live.jsonl"
check "X's live notes are stored" wait_for 60 all_stored "$T/x_live.jsonl"
check "each from its own relay" \
    test "$(origin "$T/x_la.jsonl") $(origin "$T/x_lb.jsonl")" = "live $URLA live $URLB"
{ tmpl "$DRSK" 1 "$NOW" "dropped author, live"; } | sign >"$T/dr_live.jsonl"
{ tmpl "$RSK" 1 $((NOW + 1)) "root marker a"; } | sign >"$T/mark_a.jsonl"
{ tmpl "$RSK" 1 $((NOW + 1)) "root marker b"; } | sign >"$T/mark_b.jsonl"
cat "$T/dr_live.jsonl" "$T/mark_a.jsonl" >"$T/pub_a.jsonl"
cat "$T/dr_live.jsonl" "$T/mark_b.jsonl" >"$T/pub_b.jsonl"
check "DR's note and the marker accepted on a" publish a "$T/pub_a.jsonl"
check "DR's note and the marker accepted on b" publish b "$T/pub_b.jsonl"
cat "$T/mark_a.jsonl" "$T/mark_b.jsonl" >"$T/marks.jsonl"
check "the root's markers are stored" wait_for 60 all_stored "$T/marks.jsonl"
check "the dropped author's live note is not" \
    test "$(stored "$T/dr_live.jsonl")" -eq 0
check "DR still has exactly its $DRBEFORE events" \
    test "$(count_by "$DRPK")" -eq "$DRBEFORE"

# 6. A refresh also asks the authors it keeps for newer kinds 0 and 10002
# on the bootstrap relays. L writes to a only, so its live subscription is
# on a; a new relay list of L's, published only to b, is not seen live and
# arrives with the next refresh (triggered here by another kind 3 of the
# root with the same follows).
check "L's relay list names a only (so nothing of L is live on b)" \
    test "$(sql 'SELECT relay FROM author_relays WHERE pubkey = ? AND write = 1' "x:$LPK")" = "$URLA"
NOW=$(date +%s)
tmpl "$LSK" 10002 "$NOW" "" "[[\"r\", \"$URLA\"], [\"r\", \"$URLB\"]]" |
    sign >"$T/l_rl.jsonl"
check "relay b accepts L's new relay list" publish b "$T/l_rl.jsonl"
sleep 3
check "L's new relay list is not stored live" \
    test "$(stored "$T/l_rl.jsonl")" -eq 0
tmpl "$RSK" 3 $((NOW + 1)) "" "$TAGS" | sign >"$T/k3b.jsonl"
check "relay a accepts the root's kind 3 again (same follows)" \
    publish a "$T/k3b.jsonl"
check "the refresh fetches L's new relay list from b" \
    wait_for 60 all_stored "$T/l_rl.jsonl"
check "...and L now writes to a and b" \
    test "$(sql 'SELECT relay FROM author_relays WHERE pubkey = ? AND write = 1 ORDER BY relay' "x:$LPK" | sort | paste -sd' ')" = "$(printf '%s\n' "$URLA" "$URLB" | sort | paste -sd' ')"
check "the follow set did not change" \
    test "$(sql 'SELECT sum(stale = 0), sum(stale = 1) FROM follows')" = "8 1"
finish
