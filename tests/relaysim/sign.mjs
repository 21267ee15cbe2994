// Signing and verification for the simulator, on top of nostr-tools' wasm
// backend. Signatures use all-zero auxiliary randomness, so a template and a
// key always give the same event: datasets and injected bursts are byte-stable.
// Large batches are spread over worker threads. This module never touches the
// network and never decides what is signed.

import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { initNostrWasm } from 'nostr-wasm';
import { setNostrWasm, verifyEvent as wasmVerify } from 'nostr-tools/wasm';
import { getEventHash } from 'nostr-tools/pure';

let nw = null;
const aux = new Uint8Array(32);

// Loads the wasm module once; every other function here needs it.
export async function signInit() {
	if (nw === null) {
		nw = await initNostrWasm();
		setNostrWasm(nw);
	}
}

function hexKey(k) {
	return typeof k === 'string' ? Uint8Array.from(Buffer.from(k, 'hex')) : k;
}

// x-only public key (hex) of a secret key given as hex or bytes.
export function pubkeyOf(sk) {
	return Buffer.from(nw.getPublicKey(hexKey(sk))).toString('hex');
}

// Returns a new signed event for template t ({kind, created_at, tags, content}).
export function signOne(t, sk) {
	const ev = { kind: t.kind, created_at: t.created_at, tags: t.tags, content: t.content };
	nw.finalizeEvent(ev, hexKey(sk), aux);
	return { id: ev.id, pubkey: ev.pubkey, created_at: ev.created_at, kind: ev.kind,
	    tags: ev.tags, content: ev.content, sig: ev.sig };
}

// Returns the id the event's fields hash to (does not look at ev.id).
export function computeId(ev) {
	return getEventHash(ev);
}

// Checks id and signature: returns null when valid, else an "invalid: ..." reason.
export function checkEvent(ev) {
	if (computeId(ev) !== ev.id)
		return 'invalid: event id does not match its content';
	if (!wasmVerify({ ...ev }))
		return 'invalid: bad signature';
	return null;
}

// Signs items = [[keyIndex, template], ...] with keys (hex). Returns the events
// in the same order. Small batches run inline, large ones on worker threads.
export async function signMany(items, keys) {
	await signInit();
	const nworkers = Math.min(availableParallelism(), 8);
	if (items.length < 400 || nworkers < 2)
		return items.map(([ki, t]) => signOne(t, keys[ki]));
	const chunk = Math.ceil(items.length / nworkers);
	const url = new URL('./sign-worker.mjs', import.meta.url);
	const jobs = [];
	for (let w = 0; w < nworkers; w++) {
		const slice = items.slice(w * chunk, (w + 1) * chunk);
		if (slice.length === 0)
			continue;
		jobs.push(new Promise((resolve, reject) => {
			const worker = new Worker(url, { workerData: { keys } });
			worker.once('message', (m) => {
				resolve(m.out);
				worker.terminate();
			});
			worker.once('error', reject);
			worker.postMessage({ seq: w, items: slice });
		}));
	}
	return (await Promise.all(jobs)).flat();
}
