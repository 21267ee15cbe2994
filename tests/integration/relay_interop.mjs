// relay_interop.mjs — independent clients against cacheboxd's own relay
// (driven by test_relay_interop.sh). Nothing here shares code with the C
// under test; the expected answers come from the dataset file and the
// relay simulator's NIP-01 matcher (relaysim/filter.mjs).
//
//   node relay_interop.mjs WS_URL DATASET.jsonl ROOT_SECRET_HEX
//
// Checks, each an "ok - " or "FAIL - " line:
//   - NIP-11 through nostr-tools' fetchRelayInformation;
//   - SimplePool.querySync for filters of every shape: the ids of the
//     matches within the limit, exactly;
//   - raw REQs: the same, in NIP-01 order (created_at desc, id asc);
//   - SimplePool.subscribe: EOSE, then an event published by the root
//     (relay.accept = roots) arrives live, and one by another key is
//     refused "blocked:";
//   - nostr-fetch fetchAllEvents over the whole store: every stored event,
//     nothing else;
//   - nostr-tools' nip77 NegentropySync from an empty set: every stored id
//     is reported as needed;
//   - COUNT.
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { SimplePool, useWebSocketImplementation } from 'nostr-tools/pool';
import { Relay, useWebSocketImplementation as useWsRelay } from 'nostr-tools/relay';
import { fetchRelayInformation } from 'nostr-tools/nip11';
import { nip77 } from 'nostr-tools';
import { NostrFetcher } from 'nostr-fetch';
import { compareEvents, matchFilter } from '../relaysim/filter.mjs';

useWebSocketImplementation(WebSocket);
useWsRelay(WebSocket);

const [url, datasetFile, rootHex] = process.argv.slice(2);
const events = readFileSync(datasetFile, 'utf8').split('\n').filter((l) => l)
	.map((l) => JSON.parse(l));
const rootSec = Uint8Array.from(Buffer.from(rootHex, 'hex'));
const rootPk = getPublicKey(rootSec);
let fails = 0;
let passes = 0;

function check(ok, what, detail = '') {
	if (ok) {
		passes++;
		console.log(`ok - ${what}`);
	} else {
		fails++;
		console.log(`FAIL - ${what}${detail ? ` (${detail})` : ''}`);
	}
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// What the box must answer for filter f: matches, NIP-01 order, its limit
// (or the relay's max_limit of 5000 when it has none).
function expected(f) {
	const m = events.filter((e) => matchFilter(f, e)).sort(compareEvents);
	return m.slice(0, f.limit ?? 5000).map((e) => e.id);
}

// A raw REQ: the events in the order they came, up to EOSE.
function rawReq(filter) {
	return new Promise((resolve, reject) => {
		const ws = new WebSocket(url);
		const got = [];
		ws.on('open', () => ws.send(JSON.stringify(['REQ', 'r', filter])));
		ws.on('message', (d) => {
			const m = JSON.parse(d.toString());
			if (m[0] === 'EVENT' && m[1] === 'r')
				got.push(m[2].id);
			else if (m[0] === 'EOSE') {
				ws.close();
				resolve(got);
			} else if (m[0] === 'CLOSED') {
				ws.close();
				reject(new Error(m[2]));
			}
		});
		ws.on('error', reject);
	});
}

function rawCount(filter) {
	return new Promise((resolve, reject) => {
		const ws = new WebSocket(url);
		ws.on('open', () => ws.send(JSON.stringify(['COUNT', 'c', filter])));
		ws.on('message', (d) => {
			const m = JSON.parse(d.toString());
			if (m[0] === 'COUNT') {
				ws.close();
				resolve(m[2].count);
			}
		});
		ws.on('error', reject);
	});
}

const byKind = (k) => events.filter((e) => e.kind === k);
const reply = byKind(1).find((e) => e.tags.some((t) => t[0] === 'e'));
const target = reply.tags.find((t) => t[0] === 'e')[1];
const mentioned = reply.tags.find((t) => t[0] === 'p')[1];
const mid = events[Math.floor(events.length / 2)].created_at;
const filters = [
	{ kinds: [1], limit: 50 },
	{ authors: [rootPk], kinds: [1], limit: 100 },
	{ authors: [rootPk] },
	{ '#e': [target] },
	{ '#p': [mentioned], kinds: [7], limit: 20 },
	{ '#t': ['nostr'] },
	{ ids: events.slice(100, 120).map((e) => e.id) },
	{ since: mid - 30, until: mid + 30 },
	{ kinds: [0, 6], until: mid, limit: 300 },
];

async function checkNip11() {
	const info = await fetchRelayInformation(url);
	check(info.name === 'cachebox' && /^[0-9a-f]{64}$/.test(info.pubkey) &&
	    [1, 11, 42, 45, 70, 77].every((n) => info.supported_nips.includes(n)) &&
	    info.limitation.max_subscriptions === 20 &&
	    info.limitation.max_filters === 10 &&
	    info.limitation.max_limit === 5000 &&
	    info.limitation.max_message_length === 131072 &&
	    info.limitation.auth_required === false &&
	    info.limitation.restricted_writes === true,
	'NIP-11: nostr-tools parses the document (name, pubkey, NIPs, limitation)',
	JSON.stringify(info));
}

async function checkQueries(pool) {
	for (const f of filters) {
		const want = expected(f);
		// nostr-tools ends a subscription after its eoseTimeout (4.4 s)
		// without EOSE and returns what came so far: on a loaded machine
		// that is a partial answer, so it waits for the EOSE itself.
		const got = (await pool.querySync([url], f, { maxWait: 60000 }))
		    .map((e) => e.id);
		check(same([...got].sort(), [...want].sort()),
		    `SimplePool.querySync ${JSON.stringify(f).slice(0, 60)}: ` +
		    `${want.length} events`, `got ${got.length}`);
		const raw = await rawReq(f);
		check(same(raw, want), `  raw REQ: same events, newest first, ` +
		    'id order on ties', `got ${raw.length}`);
	}
	const multi = [{ kinds: [7], limit: 30 }, { authors: [rootPk], limit: 30 },
	    { '#t': ['relay'], limit: 10 }];
	const union = new Set(multi.flatMap((f) => expected(f)));
	const want = events.filter((e) => union.has(e.id)).sort(compareEvents)
	    .map((e) => e.id);
	check(same(await rawReq(multi.length ? multi[0] : {}), expected(multi[0])),
	    'raw REQ, one filter of the three');
	const ws = new WebSocket(url);
	const got = await new Promise((resolve) => {
		const ids = [];
		ws.on('open', () => ws.send(JSON.stringify(['REQ', 'm', ...multi])));
		ws.on('message', (d) => {
			const m = JSON.parse(d.toString());
			if (m[0] === 'EVENT')
				ids.push(m[2].id);
			else if (m[0] === 'EOSE')
				resolve(ids);
		});
	});
	ws.close();
	check(same(got, want), `REQ with three filters: their union (${want.length}), ` +
	    'each once, in order', `got ${got.length}`);
	const n = await rawCount({ kinds: [1] });
	check(n === byKind(1).length, `COUNT {kinds:[1]} = ${byKind(1).length}`,
	    `got ${n}`);
}

async function checkLive(pool) {
	const since = Math.floor(Date.now() / 1000) - 5;
	let eose = false;
	let closed = null;
	const live = [];
	const sub = pool.subscribe([url], { kinds: [1], since }, {
		onevent: (e) => live.push({ id: e.id, afterEose: eose }),
		oneose: () => { eose = true; },
		onclose: (r) => { closed = r; },
	});
	for (let i = 0; i < 50 && !eose; i++)
		await new Promise((r) => setTimeout(r, 100));
	check(eose && closed === null, 'SimplePool.subscribe: EOSE, not closed',
	    JSON.stringify(closed));
	const ev = finalizeEvent({ kind: 1, created_at: Math.floor(Date.now() / 1000),
	    tags: [['t', 'live']], content: 'live from the root' }, rootSec);
	const okMsg = await Promise.any(pool.publish([url], ev));
	check(okMsg === '', 'an EVENT signed by a root is stored (OK true)', okMsg);
	for (let i = 0; i < 50 && !live.some((l) => l.id === ev.id); i++)
		await new Promise((r) => setTimeout(r, 100));
	check(live.some((l) => l.id === ev.id && l.afterEose),
	    'SimplePool.subscribe: the new event arrives live after EOSE');
	const stranger = finalizeEvent({ kind: 1, created_at: Math.floor(Date.now() / 1000),
	    tags: [], content: 'not a root' }, generateSecretKey());
	let refusal = '';
	try {
		await Promise.any(pool.publish([url], stranger));
	} catch (e) {
		refusal = String(e.errors?.[0]?.message ?? e.errors?.[0] ?? e);
	}
	check(refusal.includes('blocked:'), 'an EVENT by another key is refused "blocked:"',
	    refusal);
	sub.close();
	events.push(ev);
}

async function checkFetchAll() {
	const fetcher = NostrFetcher.init({ webSocketConstructor: WebSocket,
	    minLogLevel: 'none' });
	const all = await fetcher.fetchAllEvents([url], {}, {}, { sort: false });
	fetcher.shutdown();
	const got = all.map((e) => e.id).sort();
	const want = events.map((e) => e.id).sort();
	check(same(got, want), `nostr-fetch fetchAllEvents: every stored event ` +
	    `(${want.length}), nothing else`, `got ${got.length}`);
}

async function checkNegentropy() {
	const relay = await Relay.connect(url);
	const storage = new nip77.NegentropyStorageVector();
	storage.seal();
	const need = [];
	let reason;
	await new Promise((resolve) => {
		const sync = new nip77.NegentropySync(relay, storage, {}, {
			onneed: (id) => need.push(id),
			onclose: (r) => { reason = r; resolve(); },
		});
		sync.start();
	});
	relay.close();
	const want = events.map((e) => e.id).sort();
	check(reason === undefined && same(need.sort(), want),
	    `NIP-77 NegentropySync from an empty set: every stored id needed ` +
	    `(${want.length})`, `need ${need.length}, end ${reason}`);
}

const pool = new SimplePool();
try {
	await checkNip11();
	await checkQueries(pool);
	await checkLive(pool);
	await checkFetchAll();
	await checkNegentropy();
} catch (e) {
	check(false, 'no exception', e.stack);
}
pool.destroy();
console.log(`${passes} passed, ${fails} failed`);
process.exit(fails === 0 ? 0 : 1);
