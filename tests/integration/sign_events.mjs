// sign_events.mjs — signs event templates for the integration tests with
// nostr-tools (pure JavaScript, no network). It never decides what to sign.
//   node sign_events.mjs keygen      prints "SECRET_HEX PUBKEY_HEX"
//   node sign_events.mjs < in.jsonl  one template a line, {"sk": hex, "kind",
//                                    "created_at", "tags", "content"}; prints
//                                    the signed events, one a line, in order
import { readFileSync } from 'node:fs';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';

const hex = (b) => Buffer.from(b).toString('hex');

if (process.argv[2] === 'keygen') {
	const sk = generateSecretKey();
	process.stdout.write(`${hex(sk)} ${getPublicKey(sk)}\n`);
	process.exit(0);
}
if (process.argv.length > 2) {
	process.stderr.write('usage: sign_events.mjs [keygen] < templates.jsonl\n');
	process.exit(2);
}
const out = [];
for (const line of readFileSync(0, 'utf8').split('\n')) {
	if (line.trim() === '')
		continue;
	const t = JSON.parse(line);
	if (typeof t.sk !== 'string' || !/^[0-9a-f]{64}$/.test(t.sk))
		throw new Error(`template without a 64-digit hex sk: ${line}`);
	const ev = finalizeEvent({ kind: t.kind, created_at: t.created_at,
	    tags: t.tags ?? [], content: t.content ?? '' },
	    Uint8Array.from(Buffer.from(t.sk, 'hex')));
	out.push(JSON.stringify({ id: ev.id, pubkey: ev.pubkey,
	    created_at: ev.created_at, kind: ev.kind, tags: ev.tags,
	    content: ev.content, sig: ev.sig }));
}
process.stdout.write(out.length > 0 ? out.join('\n') + '\n' : '');
