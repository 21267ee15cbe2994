#!/usr/bin/env bash
# Event interop with nostr-tools, both directions:
#  1. nostr-tools signs 50 varied events (unicode, every escape, many tags)
#     with fresh keys; `cacheboxctl event verify` must call every one valid.
#  2. `cacheboxctl event sign` signs 50 templates; nostr-tools must compute
#     the same ids, verifyEvent true, and see the template fields unchanged.
#  3. Each signed event tampered (content, id, sig, pubkey, tags, malformed
#     fields, future created_at): cacheboxctl must give the exact reason.
# Exits non-zero on any mismatch, 77 when node or nostr-tools is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
ctl=${CACHEBOXCTL:-}
mjs="$here/interop_nostr_tools.mjs"

if [ -z "$ctl" ] || [ ! -x "$ctl" ]; then
	echo "CACHEBOXCTL not set or not executable"; exit 77
fi
if ! command -v node >/dev/null 2>&1; then
	echo "node not found: skipping"; exit 77
fi
if [ ! -d "$here/../node_modules/nostr-tools" ]; then
	echo "tests/node_modules/nostr-tools missing (cd tests && npm ci): skipping"
	exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

# 1. nostr-tools -> cacheboxctl
node "$mjs" gen > "$work/nt.jsonl" || { echo "FAIL: node gen"; exit 1; }
"$ctl" event verify "$work/nt.jsonl" > "$work/nt.out"
rc=$?
want=$(wc -l < "$work/nt.jsonl")
valid=$(grep -c '^valid ' "$work/nt.out")
# The ids cacheboxctl printed must be the ids nostr-tools wrote.
node -e 'for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n"))
    if (l) console.log("valid " + JSON.parse(l).id)' "$work/nt.jsonl" > "$work/nt.want"
if [ "$rc" -ne 0 ] || [ "$valid" -ne "$want" ] || ! cmp -s "$work/nt.want" "$work/nt.out"; then
	echo "FAIL: nostr-tools events: $valid/$want valid (exit $rc)"
	diff "$work/nt.want" "$work/nt.out" | head -20
	fail=1
else
	echo "ok: cacheboxctl verified $valid/$want events signed by nostr-tools"
fi

# 2. cacheboxctl -> nostr-tools
printf '%064x\n' 0x2a > "$work/k.key"
chmod 600 "$work/k.key"
node "$mjs" templates > "$work/tpl.jsonl"
if ! "$ctl" event sign --key "$work/k.key" < "$work/tpl.jsonl" > "$work/c.jsonl"; then
	echo "FAIL: cacheboxctl event sign exited non-zero"
	fail=1
fi
if node "$mjs" check "$work/tpl.jsonl" "$work/c.jsonl" > "$work/check.out"; then
	echo "ok: nostr-tools verified $(cut -d' ' -f2 "$work/check.out") events signed by cacheboxctl"
else
	echo "FAIL: nostr-tools rejected events signed by cacheboxctl:"
	head -20 "$work/check.out"
	fail=1
fi
# And cacheboxctl accepts its own output.
if ! "$ctl" event verify "$work/c.jsonl" > /dev/null; then
	echo "FAIL: cacheboxctl rejects its own signed events"
	fail=1
fi

# 3. Tampered events: exact reason per line.
node "$mjs" tamper "$work/c.jsonl" > "$work/tamper.tsv"
cut -f1 "$work/tamper.tsv" > "$work/tamper.want"
cut -f2- "$work/tamper.tsv" > "$work/tamper.jsonl"
"$ctl" event verify "$work/tamper.jsonl" > "$work/tamper.out"
rc=$?
# Output is "invalid <id-or-?> <reason>": keep the reason.
sed -E 's/^invalid [0-9a-f?]+ //; s/^invalid [0-9A-F]+ //' "$work/tamper.out" > "$work/tamper.got"
ntamper=$(wc -l < "$work/tamper.want")
if [ "$rc" -ne 1 ] || ! cmp -s "$work/tamper.want" "$work/tamper.got"; then
	echo "FAIL: tampered events (exit $rc), expected vs got:"
	diff "$work/tamper.want" "$work/tamper.got" | head -20
	fail=1
else
	echo "ok: $ntamper tampered events each rejected with the expected reason"
fi

if [ "$fail" -ne 0 ]; then
	echo "interop: FAILED"
	exit 1
fi
echo "interop: all checks passed"
