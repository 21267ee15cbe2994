#!/bin/bash
# test_neg_client.sh — NIP-77 client sessions of the relay pool
# (pool_neg_open, pool_neg_send, NEG-CLOSE by pool_sub_close) against
# tests/relaysim's NIP-77 server (@nostr-dev-kit/sync), driven by prog_neg
# with the C negentropy code as the initiator:
#   - a set reconciled to exactly the have/need the truth gives, five
#     sessions at once under a subscription cap of 2 (NIP-11), both sides
#     with a 4096-byte frame-size limit (many rounds);
#   - NEG-OPEN before AUTH: NEG-ERR auth-required:, AUTH, sent again once;
#   - a connection lost under a session: on_err "connection lost", the
#     session not resent by the pool (the relay sees the lost one and the
#     one the driver opened again, no third);
#   - a NEG-MSG that is not hex: on_err "bad NEG-MSG: not hex", NEG-CLOSE;
#   - each refusal: NEG-ERR (err), a NOTICE (notice, and a relay without
#     NIP-77), no answer at all (silent: still waiting when a REQ sent after
#     it was answered), with no NEG-CLOSE after a NOTICE.
# Every count is read after a last REQ per relay was answered, so the
# relay has seen everything sent before it. Exit 77 without node.
. "$(dirname "$0")/lib.sh"
use_relaysim
prog=$CACHEBOX_BUILD/tests/integration/prog_neg
[ -x "$prog" ] || { echo "skip: $prog not built"; exit 77; }

cat >"$T/sim.json" <<'JSON'
{"dataset": {"authors": 6, "events": 3000, "seed": "selftest"},
 "relays": [
  {"name": "neg", "negentropy": "yes", "subset": {"every": 2}, "neg_frame_limit": 4096,
   "max_subscriptions": 2},
  {"name": "negauth", "negentropy": "yes", "auth": "required"},
  {"name": "negdrop", "negentropy": "yes", "neg_drop": {"first": 1}},
  {"name": "negbad", "negentropy": "yes", "neg_bad_hex": {"first": 1}},
  {"name": "negerr", "negentropy": "err"},
  {"name": "negnotice", "negentropy": "notice"},
  {"name": "negsilent", "negentropy": "silent"},
  {"name": "plain"}
 ]}
JSON
relaysim_start "$T/sim.json" || exit 1
FILTER='{"kinds":[1]}'
relaysim_q truth match "$FILTER" --relays neg >"$T/neg.ids"
relaysim_q truth match "$FILTER" --relays negauth >"$T/all.ids"

# Our set: the kind 1 notes "neg" holds, less those whose first id byte is
# a multiple of 5 (it has them, we need them), plus 30 notes it does not
# hold (we have them). The wanted answers follow from the sets alone.
python3 - "$(json_get "$RELAYSIM_READY" dataset.file)" "$T" <<'PY'
import json, sys
ds, t = sys.argv[1], sys.argv[2]
neg = set(open(f"{t}/neg.ids").read().split())
allk = set(open(f"{t}/all.ids").read().split())
notes = [json.loads(l) for l in open(ds) if l.strip()]
notes = [e for e in notes if e["kind"] == 1]
mine = [e for e in notes if e["id"] in neg and int(e["id"][:2], 16) % 5 != 0]
extra = [e for e in notes if e["id"] not in neg][:30]
with open(f"{t}/items", "w") as f:
    for e in mine + extra:
        f.write(f"{e['created_at']} {e['id']}\n")
ids = {e["id"] for e in mine + extra}
def put(name, xs):
    open(f"{t}/{name}", "w").write("".join(x + "\n" for x in sorted(xs)))
put("want_need_neg", neg - ids)
put("want_have_neg", ids - neg)
put("want_need_all", allk - ids)
put("want_have_all", ids - allk)
PY
check "the sets differ both ways ($(wc -l <"$T/want_need_neg") needed, $(wc -l <"$T/want_have_neg") had)" \
    test "$(wc -l <"$T/want_need_neg")" -gt 50 -a "$(wc -l <"$T/want_have_neg")" -eq 30

# ids KIND K FILE: session K's reported ids of one kind, each once.
ids() { awk -v w="$1" -v k="$2" '$1 == w && $2 == k { print $3 }' "$3" | sort -u; }
# line FILE WORD K: session K's summary line ("session K ...") or the relay's.
line() { awk -v w="$2" -v k="$3" '$1 == w && $2 == k' "$1"; }
# has LINE KEY=VALUE...: every pair is in the line.
has() {
	local l=" $1 " kv; shift
	for kv in "$@"; do
		case $l in *" $kv "* | *" $kv") ;; *) echo "missing $kv in: $1"; return 1 ;; esac
	done
}
stat() { relaysim_q stats "$1" "$2"; }
# run NAME ARGS...: prog_neg with ARGS, output in $T/NAME.out; its status
# must be 0 (every session ended, every relay answered the last REQ).
run() {
	local name=$1 rc=0; shift
	"$prog" "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	check "$name: prog_neg finished (status $rc)" test "$rc" -eq 0
	[ "$rc" -eq 0 ] || cat "$T/$name.err"
}
# exact K RUN WANT: session K of RUN reported exactly the wanted have/need.
exact() {
	local k=$1 run=$2 want=$3
	cmp -s <(ids need "$k" "$T/$run.out") "$T/want_need_$want" &&
	    cmp -s <(ids have "$k" "$T/$run.out") "$T/want_have_$want"
}

# 1. Five sessions under a cap of two, many rounds each.
url=$(relaysim_url neg)
run r1 -i "$T/items" -f "$FILTER" -F 4096 -n 5 "$url"
check "five sessions reconciled" test "$(grep -c '^session .* end=done ' "$T/r1.out")" -eq 5
for k in 0 1 2 3 4; do
	check "session $k: have and need are exactly the set differences" exact "$k" r1 neg
done
r=$(awk '$1 == "session" { sub("rounds=", "", $5); print $5 }' "$T/r1.out" | sort -n | head -1)
check "every session took several rounds under the frame limits (least $r)" test "${r:-0}" -gt 2
check "the relay saw 5 NEG-OPENs, no more than 2 open at once, 5 NEG-CLOSEs" \
    test "$(stat neg neg_opens) $(stat neg max_open_subs) $(stat neg neg_closes) $(stat neg neg_sessions_open) $(stat neg neg_errs_sent)" = "5 2 5 0 0"
rl=$(line "$T/r1.out" relay "$url")
check "the pool counted what the relay counted" has "$rl" neg_opens=5 \
    "neg_msgs_out=$(stat neg neg_msgs_in)" "neg_msgs_in=$(stat neg neg_msgs_out)" neg_errs=0 invalid=0

# 2. NEG-OPEN before AUTH (-N: sent as the connection opens, before the
#    challenge is read): refused with auth-required:, sent once more after AUTH.
url=$(relaysim_url negauth)
run r2 -i "$T/items" -f "$FILTER" -F 4096 -k -N "$url"
check "auth: the session ends done after one resend" has "$(line "$T/r2.out" session 0)" end=done resent=1
check "auth: have and need exact" exact 0 r2 all
check "auth: one auth-required refusal, one AUTH, two NEG-OPENs" \
    test "$(stat negauth auth_required_sent) $(stat negauth auth_ok) $(stat negauth neg_opens)" = "1 1 2"

# 3. The connection drops at the first NEG-OPEN: "connection lost"; the
#    pool does not send it again; the driver opens a new one, which works.
url=$(relaysim_url negdrop)
run r3 -i "$T/items" -f "$FILTER" -F 4096 -r -b 100 "$url"
check "lost: on_err says connection lost" grep -qx 'lost 0 connection lost' "$T/r3.out"
check "lost: the session opened again ends done" has "$(line "$T/r3.out" session 0)" end=done resent=0
check "lost: have and need exact" exact 0 r3 all
check "lost: the relay saw the lost NEG-OPEN and the new one, no resend" \
    test "$(stat negdrop neg_drops) $(stat negdrop neg_opens)" = "1 2"
check "lost: the pool sent two NEG-OPENs" has "$(line "$T/r3.out" relay "$url")" neg_opens=2

# 4. An answer that is not hex ends the session, which is closed.
url=$(relaysim_url negbad)
run r4 -i "$T/items" -f "$FILTER" "$url"
check "bad hex: on_err bad NEG-MSG: not hex" has "$(line "$T/r4.out" session 0)" end=bad_msg "text=bad NEG-MSG: not hex"
check "bad hex: counted invalid" has "$(line "$T/r4.out" relay "$url")" invalid=1
check "bad hex: the relay got a NEG-CLOSE" \
    test "$(stat negbad neg_bad_hex_sent) $(stat negbad neg_closes) $(stat negbad neg_sessions_open)" = "1 1 0"

# 5. Refusals: NEG-ERR, a NOTICE, nothing at all, a relay without NIP-77.
u_err=$(relaysim_url negerr); u_not=$(relaysim_url negnotice)
u_sil=$(relaysim_url negsilent); u_pl=$(relaysim_url plain)
run r5 -i "$T/items" -f "$FILTER" -p "$u_err" "$u_not" "$u_sil" "$u_pl"
check "err: NEG-ERR with the relay's reason" has "$(line "$T/r5.out" session 0)" end=err "text=blocked: negentropy disabled"
check "err: the pool counted one NEG-ERR" has "$(line "$T/r5.out" relay "$u_err")" neg_opens=1 neg_errs=1
check "notice: the NOTICE ends the session" has "$(line "$T/r5.out" session 1)" end=notice "text=notice: ERROR: unknown cmd"
check "notice: no NEG-CLOSE after a NOTICE" test "$(stat negnotice neg_opens) $(stat negnotice neg_closes)" = "1 0"
check "silent: no answer before a later REQ's EOSE" has "$(line "$T/r5.out" session 2)" end=silent rounds=0
check "silent: the session was closed with NEG-CLOSE" test "$(stat negsilent neg_opens) $(stat negsilent neg_closes)" = "1 1"
check "no NIP-77: its unknown-type NOTICE ends the session" has "$(line "$T/r5.out" session 3)" end=notice "text=notice: error: unknown message type"
check "no NIP-77: one bad message (the NEG-OPEN), no NEG-CLOSE" test "$(stat plain bad_messages)" = 1
finish
