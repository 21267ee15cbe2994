// Worker thread for sign.mjs: signs a slice of event templates with
// deterministic (all-zero) BIP-340 auxiliary randomness and posts the
// finished events back. It owns nothing beyond its slice and never writes files.

import { parentPort, workerData } from 'node:worker_threads';
import { initNostrWasm } from 'nostr-wasm';

const nw = await initNostrWasm();
const aux = new Uint8Array(32);
const keys = workerData.keys.map((k) => Uint8Array.from(Buffer.from(k, 'hex')));

parentPort.on('message', (msg) => {
	const out = msg.items.map(([ki, t]) => {
		const ev = { kind: t.kind, created_at: t.created_at, tags: t.tags, content: t.content };
		nw.finalizeEvent(ev, keys[ki], aux);
		return { id: ev.id, pubkey: ev.pubkey, created_at: ev.created_at, kind: ev.kind,
		    tags: ev.tags, content: ev.content, sig: ev.sig };
	});
	parentPort.postMessage({ seq: msg.seq, out });
});
