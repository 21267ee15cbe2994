#!/usr/bin/env bash
# Event interop with nostr-tools, both directions:
#  1. nostr-tools signs 50 varied events (unicode, every escape, many tags)
#     with fresh keys; `cacheboxctl event verify` must call every one valid.
#  2. `cacheboxctl event sign` signs 50 templates; nostr-tools must compute
#     the same ids, verifyEvent true, and see the template fields unchanged.
#  3. Each signed event tampered (content, id, sig, pubkey, tags, malformed
#     fields, future created_at): cacheboxctl must give the exact reason.
# Exits non-zero on any mismatch, 77 when node or nostr-tools is missing.
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
mjs="$here/interop_nostr_tools.mjs"

if [ ! -x "$CACHEBOXCTL" ]; then
	echo "CACHEBOXCTL not executable"; exit 77
fi
if ! command -v node >/dev/null 2>&1; then
	echo "node not found: skipping"; exit 77
fi
if [ ! -d "$here/../node_modules/nostr-tools" ]; then
	echo "tests/node_modules/nostr-tools missing (cd tests && npm ci): skipping"
	exit 77
fi

# 1. nostr-tools -> cacheboxctl
node "$mjs" gen > "$T/nt.jsonl" || { fail "node gen"; finish; exit 1; }
rc=0
cboxctl event verify "$T/nt.jsonl" > "$T/nt.out" || rc=$?
want=$(wc -l < "$T/nt.jsonl")
valid=$(grep -c '^valid ' "$T/nt.out" || true)
# The ids cacheboxctl printed must be the ids nostr-tools wrote.
node -e 'for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n"))
    if (l) console.log("valid " + JSON.parse(l).id)' "$T/nt.jsonl" > "$T/nt.want" || true
if [ "$rc" -ne 0 ] || [ "$valid" -ne "$want" ] || ! cmp -s "$T/nt.want" "$T/nt.out"; then
	fail "nostr-tools events: $valid/$want valid (exit $rc)"
	diff "$T/nt.want" "$T/nt.out" | head -20 || true
else
	ok "cacheboxctl verified $valid/$want events signed by nostr-tools"
fi

# 2. cacheboxctl -> nostr-tools
printf '%064x\n' 0x2a > "$T/k.key"
chmod 600 "$T/k.key"
node "$mjs" templates > "$T/tpl.jsonl" || true
if cboxctl event sign --key "$T/k.key" < "$T/tpl.jsonl" > "$T/c.jsonl"; then
	ok "cacheboxctl event sign exits 0"
else
	fail "cacheboxctl event sign exited non-zero"
fi
if node "$mjs" check "$T/tpl.jsonl" "$T/c.jsonl" > "$T/check.out"; then
	ok "nostr-tools verified $(cut -d' ' -f2 "$T/check.out") events signed by cacheboxctl"
else
	fail "nostr-tools rejected events signed by cacheboxctl:"
	head -20 "$T/check.out"
fi
# And cacheboxctl accepts its own output.
if cboxctl event verify "$T/c.jsonl" > /dev/null; then
	ok "cacheboxctl accepts its own signed events"
else
	fail "cacheboxctl rejects its own signed events"
fi

# 3. Tampered events: exact reason per line.
node "$mjs" tamper "$T/c.jsonl" > "$T/tamper.tsv" || true
cut -f1 "$T/tamper.tsv" > "$T/tamper.want"
cut -f2- "$T/tamper.tsv" > "$T/tamper.jsonl"
rc=0
cboxctl event verify "$T/tamper.jsonl" > "$T/tamper.out" || rc=$?
# Output is "invalid <id-or-?> <reason>": keep the reason.
sed -E 's/^invalid [0-9a-f?]+ //; s/^invalid [0-9A-F]+ //' "$T/tamper.out" > "$T/tamper.got"
ntamper=$(wc -l < "$T/tamper.want")
if [ "$rc" -ne 1 ] || ! cmp -s "$T/tamper.want" "$T/tamper.got"; then
	fail "tampered events (exit $rc), expected vs got:"
	diff "$T/tamper.want" "$T/tamper.got" | head -20 || true
else
	ok "$ntamper tampered events each rejected with the expected reason"
fi
finish
