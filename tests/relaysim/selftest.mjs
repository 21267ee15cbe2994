#!/usr/bin/env node
// Self-test of the relay simulator, driven by
// tests/integration/test_relaysim_selftest.sh. It talks to a running relaysim
// only through its sockets (ws, wss, HTTP) and checks every answer against an
// oracle written here, independent of the simulator's own filter code:
//   node selftest.mjs --ready FILE --config FILE --certs DIR
// Prints one line per check and exits 1 when any check failed. It never
// starts or stops the simulator and never talks to anything but loopback.

import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { initNostrWasm } from 'nostr-wasm';
import { setNostrWasm, verifyEvent, finalizeEvent } from 'nostr-tools/wasm';
import { makeAuthEvent } from 'nostr-tools/nip42';
import { nip77 } from 'nostr-tools';

const { values: args } = parseArgs({ options: { ready: { type: 'string' },
    config: { type: 'string' }, certs: { type: 'string' } } });
setNostrWasm(await initNostrWasm());

const ready = JSON.parse(fs.readFileSync(args.ready, 'utf8').split('\n')
    .find((l) => l.includes('"ready"')));
const relay = Object.fromEntries(ready.relays.map((r) => [r.name, r]));
const ca = fs.readFileSync(`${args.certs}/ca.pem`);
const meta = JSON.parse(fs.readFileSync(ready.dataset.meta, 'utf8'));
const dataset = fs.readFileSync(ready.dataset.file, 'utf8').split('\n')
    .filter((l) => l).map((l) => JSON.parse(l));
const pk = meta.authors.map((a) => a.pubkey);
const sk = meta.authors.map((a) => Uint8Array.from(Buffer.from(a.seckey, 'hex')));

let failures = 0;
function check(cond, what, detail = '') {
	if (cond) {
		process.stdout.write(`ok - ${what}\n`);
	} else {
		failures++;
		process.stdout.write(`not ok - ${what}${detail ? ': ' + detail : ''}\n`);
	}
}

// ----- oracle: NIP-01 matching and order, written independently -----

function oracleMatch(f, ev) {
	const tagHas = (name, vals) => ev.tags.some((t) => t[0] === name && vals.includes(t[1]));
	return (!f.ids || f.ids.includes(ev.id)) && (!f.authors || f.authors.includes(ev.pubkey)) &&
	    (!f.kinds || f.kinds.includes(ev.kind)) &&
	    (f.since === undefined || ev.created_at >= f.since) &&
	    (f.until === undefined || ev.created_at <= f.until) &&
	    Object.keys(f).filter((k) => k.startsWith('#')).every((k) => tagHas(k.slice(1), f[k]));
}

function nip01Order(a, b) {
	return b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function oracle(f, events = dataset) {
	const m = events.filter((ev) => oracleMatch(f, ev)).sort(nip01Order);
	return f.limit === undefined ? m : m.slice(0, f.limit);
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// ----- a small NIP-01 client -----

class Conn {
	constructor(url, opts = {}) {
		this.url = url;
		this.queue = [];
		this.waiters = [];
		this.bad = 0;
		this.big = 0;
		this.closed = false;
		this.ws = new WebSocket(url, { ca, ...opts });
		this.ws.on('message', (d) => this.push(d));
		this.ws.on('close', () => {
			this.closed = true;
			this.wake();
		});
		this.ws.on('error', (e) => {
			this.error = e;
		});
	}

	opened() {
		return new Promise((resolve, reject) => {
			this.ws.once('open', resolve);
			this.ws.once('error', reject);
		});
	}

	push(data) {
		if (data.length > 256 * 1024) {
			this.big++;
			return;
		}
		let msg;
		try {
			msg = JSON.parse(data.toString());
		} catch {
			this.bad++;
			return;
		}
		if (!Array.isArray(msg)) {
			this.bad++;
			return;
		}
		this.queue.push(msg);
		this.wake();
	}

	wake() {
		const w = this.waiters;
		this.waiters = [];
		w.forEach((f) => f());
	}

	send(msg) {
		this.ws.send(JSON.stringify(msg));
	}

	// Next message satisfying pred, or null on close or after ms.
	async next(pred = () => true, ms = 10000) {
		const deadline = Date.now() + ms;
		for (;;) {
			const i = this.queue.findIndex(pred);
			if (i >= 0)
				return this.queue.splice(i, 1)[0];
			if (this.closed || Date.now() > deadline)
				return null;
			await new Promise((r) => {
				this.waiters.push(r);
				setTimeout(r, 50);
			});
		}
	}

	// Sends a REQ, collects its events until EOSE or CLOSED and then CLOSEs it.
	// Returns {events, end: 'EOSE' | 'CLOSED' | 'gone', reason}.
	async req(sub, ...filters) {
		const r = await this.open(sub, ...filters);
		if (r.end === 'EOSE')
			this.send(['CLOSE', sub]);
		return r;
	}

	// As req(), but the subscription stays open after EOSE.
	async open(sub, ...filters) {
		this.send(['REQ', sub, ...filters]);
		const events = [];
		for (;;) {
			const m = await this.next((x) => x[1] === sub, this.timeout ?? 10000);
			if (m === null)
				return { events, end: 'gone' };
			if (m[0] === 'EVENT')
				events.push(m[2]);
			else if (m[0] === 'EOSE' || m[0] === 'CLOSED')
				return { events, end: m[0], reason: m[2] };
		}
	}

	close() {
		this.ws.terminate();
	}
}

async function connect(name, opts) {
	const c = new Conn(relay[name].url, opts);
	await c.opened();
	return c;
}

function httpGet(url, headers = {}) {
	const mod = url.startsWith('https:') ? https : http;
	return new Promise((resolve, reject) => {
		mod.get(url, { headers, ca }, (res) => {
			let body = '';
			res.on('data', (c) => body += c);
			res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }));
		}).on('error', reject);
	});
}

const truth = async (name, mode, filter, extra = '') => (await httpGet(
    `${relay[name].http}/truth?mode=${mode}&relays=${name}&filter=` +
    encodeURIComponent(JSON.stringify(filter)) + extra)).body.split('\n').filter((l) => l);
const stats = async (name) => JSON.parse((await httpGet(`${relay[name].http}/stats`)).body);

// ----- checks -----

async function checkNip11() {
	const r = await httpGet(relay.full.http + '/', { Accept: 'application/nostr+json' });
	const doc = JSON.parse(r.body);
	check(r.type === 'application/nostr+json', 'NIP-11 content type');
	check(doc.limitation.max_limit === 1000 && doc.limitation.max_subscriptions === 10,
	    'NIP-11 max_limit and max_subscriptions', JSON.stringify(doc.limitation));
	check(doc.supported_nips.includes(1) && doc.supported_nips.includes(11) &&
	    !doc.supported_nips.includes(77), 'NIP-11 supported_nips of a plain relay');
	const capped = JSON.parse((await httpGet(relay.capped.http + '/',
	    { Accept: 'application/nostr+json' })).body);
	check(capped.supported_nips.includes(77), 'NIP-11 advertises 77 when nip77 is set');
	const auth = JSON.parse((await httpGet(relay.auth.http + '/',
	    { Accept: 'application/nostr+json' })).body);
	check(auth.limitation.auth_required === true && auth.supported_nips.includes(42),
	    'NIP-11 auth_required and 42 on an auth relay');
	const plain = await httpGet(relay.full.http + '/');
	check(!plain.type.includes('nostr+json'), 'no NIP-11 document without the Accept header');
}

async function checkQueries() {
	const c = await connect('full');
	const heavy = pk.map((p) => [p, dataset.filter((e) => e.pubkey === p).length])
	    .sort((a, b) => b[1] - a[1])[0][0];
	const notes = oracle({ authors: [heavy], kinds: [1] });
	const until = notes[Math.floor(notes.length / 3)].created_at;
	const f = { authors: [heavy], kinds: [1], until, limit: 50 };
	const r = await c.req('q1', f);
	const want = oracle(f).map((e) => e.id);
	check(r.end === 'EOSE' && same(r.events.map((e) => e.id), want),
	    'REQ with until and limit: newest first, ties by id, until inclusive',
	    `${r.events.length} events`);
	check(r.events.every((e) => e.created_at <= until) &&
	    r.events.some((e) => e.created_at === until), 'until is inclusive');

	// A same-second cluster: limit cuts inside one second in id order.
	const bySecond = new Map();
	for (const e of notes)
		bySecond.set(e.created_at, (bySecond.get(e.created_at) ?? 0) + 1);
	const cluster = [...bySecond].find(([, n]) => n >= 3);
	if (cluster) {
		const g = { authors: [heavy], until: cluster[0], limit: 2 };
		const rr = await c.req('q2', g);
		check(same(rr.events.map((e) => e.id), oracle(g).map((e) => e.id)),
		    'limit inside a same-second cluster keeps the lowest ids');
	}
	const e0 = notes[7];
	const exact = await c.req('q3', { ids: [e0.id], since: e0.created_at, until: e0.created_at });
	check(exact.events.length === 1 && exact.events[0].id === e0.id, 'since and until both inclusive');

	const multi = [{ kinds: [0] }, { authors: [pk[2]], kinds: [1], limit: 5 }, { '#t': ['nostr'] }];
	const rm = await c.req('q4', ...multi);
	const wantMulti = [...new Set(multi.flatMap((x) => oracle(x).map((e) => e.id)))].sort();
	check(same(rm.events.map((e) => e.id).sort(), wantMulti),
	    'REQ with several filters is the union of each filter with its own limit',
	    `${rm.events.length} vs ${wantMulti.length}`);
	check(rm.events.every((e, i) => i === 0 || nip01Order(rm.events[i - 1], e) <= 0),
	    'a several-filter answer is in NIP-01 order');

	const z = await c.req('q5', { kinds: [1], limit: 0 });
	check(z.end === 'EOSE' && z.events.length === 0, 'limit 0 gives only EOSE');
	const bad = await c.req('q6', { authors: ['xyz'] });
	check(bad.end === 'CLOSED' && bad.reason.startsWith('invalid:'), 'bad filter gives CLOSED invalid:');

	c.send(['COUNT', 'n1', { authors: [heavy] }, { kinds: [0] }]);
	const cnt = await c.next((m) => m[0] === 'COUNT');
	const wantCount = new Set([...oracle({ authors: [heavy] }), ...oracle({ kinds: [0] })]
	    .map((e) => e.id)).size;
	check(cnt && cnt[2].count === wantCount, 'COUNT counts the union', JSON.stringify(cnt));

	for (let i = 0; i < 10; i++)
		await c.open(`s${i}`, { kinds: [0], limit: 1 });
	const over = await c.req('s10', { kinds: [0], limit: 1 });
	check(over.end === 'CLOSED' && over.reason.startsWith('rate-limited:'),
	    'max_subscriptions is enforced with CLOSED');
	for (let i = 0; i < 10; i++)
		c.send(['CLOSE', `s${i}`]);
	await checkPublish(c);
	c.close();
}

async function checkPublish(c) {
	const live = await c.open('live', { authors: [pk[3]], since: 1800000000 });
	check(live.end === 'EOSE' && live.events.length === 0, 'live subscription starts empty');
	const ev = finalizeEvent({ kind: 1, created_at: 1800000100, tags: [],
	    content: 'selftest live note' }, sk[3]);
	c.send(['EVENT', ev]);
	const ok = await c.next((m) => m[0] === 'OK' && m[1] === ev.id);
	check(ok && ok[2] === true && ok[3] === '', 'EVENT is accepted with OK true');
	const pushed = await c.next((m) => m[0] === 'EVENT' && m[1] === 'live');
	check(pushed && pushed[2].id === ev.id, 'an accepted event reaches a live subscription');
	c.send(['EVENT', ev]);
	const dup = await c.next((m) => m[0] === 'OK' && m[1] === ev.id);
	check(dup && dup[2] === true && dup[3].startsWith('duplicate:'), 'a second copy is OK duplicate:');
	const forged = { ...ev, content: 'changed' };
	c.send(['EVENT', forged]);
	const inv = await c.next((m) => m[0] === 'OK' && m[1] === ev.id);
	check(inv && inv[2] === false && inv[3].startsWith('invalid:'), 'a forged event is OK false invalid:');
	c.send(['CLOSE', 'live']);
}

async function checkCap() {
	const c = await connect('capped');
	const r = await c.req('c1', { authors: [pk[1]], limit: 1000 });
	check(r.events.length === 300, 'cap: a limit of 1000 returns 300 events', `${r.events.length}`);
	const r2 = await c.req('c2', { authors: [pk[1]], limit: 100 });
	check(r2.events.length === 100, 'cap does not raise a smaller limit');
	const b = await c.req('c3', { authors: [pk[1]], until: 1700000000, limit: 1000 });
	check(b.events.length === 300 && b.events.every((e) => e.created_at === 1700000000),
	    'a burst of 350 in one second is cut to 300');
	c.close();
}

async function checkAuth() {
	const c = new Conn(relay.auth.url);
	await c.opened();
	const ch = await c.next((m) => m[0] === 'AUTH');
	check(ch !== null && typeof ch[1] === 'string', 'AUTH challenge on connect');
	const pre = await c.req('a1', { kinds: [0] });
	check(pre.end === 'CLOSED' && pre.reason.startsWith('auth-required:'), 'REQ before AUTH gets CLOSED auth-required:');
	const ev = finalizeEvent({ kind: 1, created_at: 1800000200, tags: [], content: 'x' }, sk[0]);
	c.send(['EVENT', ev]);
	const okPre = await c.next((m) => m[0] === 'OK' && m[1] === ev.id);
	check(okPre && okPre[2] === false && okPre[3].startsWith('auth-required:'), 'EVENT before AUTH gets OK false auth-required:');
	const wrong = finalizeEvent(makeAuthEvent(relay.auth.url, 'not-the-challenge'), sk[0]);
	c.send(['AUTH', wrong]);
	const no = await c.next((m) => m[0] === 'OK' && m[1] === wrong.id);
	check(no && no[2] === false, 'AUTH with a wrong challenge is refused');
	const otherRelay = finalizeEvent(makeAuthEvent('ws://127.0.0.1:1', ch[1]), sk[0]);
	c.send(['AUTH', otherRelay]);
	const no2 = await c.next((m) => m[0] === 'OK' && m[1] === otherRelay.id);
	check(no2 && no2[2] === false, 'AUTH naming another relay is refused');
	const good = finalizeEvent(makeAuthEvent(relay.auth.url, ch[1]), sk[0]);
	c.send(['AUTH', good]);
	const yes = await c.next((m) => m[0] === 'OK' && m[1] === good.id);
	check(yes && yes[2] === true, 'AUTH with challenge and relay tags is accepted');
	const post = await c.req('a2', { kinds: [0] });
	check(post.end === 'EOSE' && post.events.length > 0, 'REQ after AUTH is served');
	c.close();
	const s = await stats('auth');
	check(s.auth_ok === 1 && s.auth_fail === 2, 'auth counters', JSON.stringify(s));
}

async function checkTruth() {
	const c = await connect('plain');
	const f = { authors: [pk[2], pk[4]] };
	const r = await c.req('t1', f);
	c.close();
	const got = r.events.map((e) => e.id).sort();
	const viaHttp = await truth('plain', 'match', f);
	check(same(got, viaHttp), 'HTTP truth equals a full REQ', `${got.length} vs ${viaHttp.length}`);
	const cli = spawnSync(process.execPath, [new URL('./relaysim.mjs', import.meta.url).pathname,
	    '--config', args.config, '--ready', args.ready, '--relays', 'plain',
	    '--truth', JSON.stringify(f)], { encoding: 'utf8' });
	const viaCli = cli.stdout.split('\n').filter((l) => l);
	check(cli.status === 0 && same(got, viaCli), 'command line truth equals a full REQ',
	    cli.stderr);
	const k = { kinds: [10002] };
	const r2 = await (await connect('plain')).req('t2', k);
	const cli2 = spawnSync(process.execPath, [new URL('./relaysim.mjs', import.meta.url).pathname,
	    '--config', args.config, '--ready', args.ready, '--relays', 'plain',
	    '--truth', JSON.stringify(k)], { encoding: 'utf8' });
	check(same(r2.events.map((e) => e.id).sort(), cli2.stdout.split('\n').filter((l) => l)),
	    'command line truth with --ready reproduces the relay-list events');
	check(r2.events.every((e) => e.tags.every((t) => t[0] !== 'r' || t[1].startsWith('ws'))),
	    'kind 10002 lists carry real relay URLs');
	const notMeta = { authors: [pk[2], pk[4]], kinds: [0, 1, 3] };
	const c3 = await connect('plain');
	const r3 = await c3.req('t3', notMeta);
	c3.close();
	check(same(r3.events.map((e) => e.id).sort(), oracle(notMeta).map((e) => e.id).sort()),
	    'a full REQ equals the oracle over the dataset file', `${r3.events.length}`);
}

// A drain of one author on one relay as docs/ARCHITECTURE.md §6 describes it:
// cursor = oldest created_at of the page (inclusive); a full single-second
// page steps to T-1; a page without a new id ends it; events newer than until
// end it as incomplete. Retries on dropped connections and rate limits.
async function drain(name, author, limit) {
	const ids = new Set();
	let cursor;
	let largest = 0;
	let retries = 0;
	let rejected = 0;
	let conn = null;
	for (let page = 0; page < 1000; page++) {
		if (conn === null || conn.closed) {
			conn = await connect(name);
		}
		const f = { authors: [author], limit };
		if (cursor !== undefined)
			f.until = cursor;
		const r = await conn.req(`d${page}`, f);
		let fresh = 0;
		let newer = false;
		const good = [];
		for (const ev of r.events) {
			if (!verifyEvent({ ...ev }) || ev.pubkey !== author) {
				rejected++;
				continue;
			}
			if (cursor !== undefined && ev.created_at > cursor)
				newer = true;
			good.push(ev);
			if (!ids.has(ev.id)) {
				ids.add(ev.id);
				fresh++;
			}
		}
		if (r.end !== 'EOSE') {
			if (++retries > 50)
				return { ids, complete: false, reason: 'too many retries' };
			await sleep(r.end === 'CLOSED' ? 20 : 0);
			page--;
			continue;
		}
		if (newer)
			return { ids, complete: false, reason: 'ignores until', retries, rejected, conn };
		if (good.length === 0 || fresh === 0)
			return { ids, complete: true, retries, rejected, conn };
		largest = Math.max(largest, good.length);
		const oldest = Math.min(...good.map((e) => e.created_at));
		const oneSecond = good.every((e) => e.created_at === oldest);
		cursor = oneSecond && good.length >= largest ? oldest - 1 : oldest;
	}
	return { ids, complete: false, reason: 'too many pages' };
}

async function checkDrains() {
	for (const [name, detail] of [['full', 'no faults'], ['capped', 'cap 300 and a burst of 350'],
	    ['flaky', 'drops, rate limits, forged, malformed, unrequested'],
	    ['liar', 'ignore_until with cap 200']]) {
		await httpGet(`${relay[name].http}/stats?reset=1`);
		let union = new Set();
		const results = [];
		for (let a = 0; a < pk.length; a++) {
			const d = await drain(name, pk[a], 500);
			d.conn?.close();
			results.push(d);
			union = new Set([...union, ...d.ids]);
		}
		const want = await truth(name, 'pageable', { authors: pk }, '&page_limit=500');
		const got = [...union].sort();
		check(same(got, want), `drain on ${name} (${detail}) obtains exactly the pageable set`,
		    `${got.length} vs ${want.length}`);
		const s = await stats(name);
		if (name === 'full') {
			check(s.distinct_events_sent === want.length &&
			    s.events_sent / s.distinct_events_sent <= 1.05,
			    'drain overhead on a plain relay: events sent per distinct event <= 1.05',
			    `${s.events_sent}/${s.distinct_events_sent}`);
		}
		if (name === 'capped') {
			const all = await truth(name, 'match', { authors: pk });
			check(all.length - want.length === 50, 'pageable leaves out the 50 burst events past the cap');
		}
		if (name === 'flaky') {
			check(s.drops > 0 && s.rate_limited === 2 && s.forged_sent > 0 &&
			    s.malformed_sent > 0 && s.unrequested_sent > 0 && s.oversized_sent === 1,
			    'flaky relay fired every fault', JSON.stringify(s));
			check(results.every((d) => d.complete), 'drains on the flaky relay complete');
		}
		if (name === 'liar')
			check(results.every((d) => !d.complete && d.reason === 'ignores until' ||
			    d.complete && d.ids.size < 200), 'drain notices a relay that ignores until');
	}
}

async function tlsRefused(name, opts, code) {
	try {
		const c = await connect(name, opts);
		c.close();
		return 'connected';
	} catch (e) {
		return e.code === code ? 'ok' : e.code;
	}
}

async function checkTls() {
	check(relay.tls.url.startsWith('wss://localhost:'), 'wss relay URL names localhost');
	const c = await connect('tls');
	const r = await c.req('w1', { kinds: [0] });
	c.close();
	check(r.end === 'EOSE' && r.events.length > 0, 'wss relay serves with the test CA trusted');
	const ip = new Conn(relay.tls.url.replace('localhost', '127.0.0.1'));
	await ip.opened();
	ip.close();
	check(true, 'wss relay verifies by IP address 127.0.0.1');
	let res = await tlsRefused('tls', { ca: undefined }, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
	check(res === 'ok', 'wss relay is refused without the test CA', res);
	res = await tlsRefused('wrong', {}, 'ERR_TLS_CERT_ALTNAME_INVALID');
	check(res === 'ok', 'a wrong-host certificate is refused', res);
	res = await tlsRefused('expired', {}, 'CERT_HAS_EXPIRED');
	check(res === 'ok', 'an expired certificate is refused', res);
	res = await tlsRefused('untrusted', {}, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
	check(res === 'ok', 'a certificate from the untrusted CA is refused', res);
	const s = JSON.parse((await httpGet(`${relay.tls.http}/stats`)).body);
	check(s.connections >= 2 && s.eose_sent >= 1, 'stats over https', JSON.stringify(s));
}

async function checkOtherKnobs() {
	const c = await connect('odd');
	const a = await c.req('o1', { kinds: [0] });
	c.timeout = 1500;
	const b = await c.open('o2', { kinds: [0] });
	c.timeout = undefined;
	check(a.end === 'EOSE' && b.end === 'gone' && b.events.length === a.events.length,
	    'no_eose every 2: the second page never ends', `${a.end} ${b.end}`);
	const ev = finalizeEvent({ kind: 1, created_at: 1800000300, tags: [], content: 'r' }, sk[1]);
	c.send(['EVENT', ev]);
	const r1 = await c.next((m) => m[0] === 'OK');
	c.send(['EVENT', ev]);
	const r2 = await c.next((m) => m[0] === 'OK');
	check(r1[2] === false && r1[3] === 'blocked: not today' && r2[2] === true && r2[3] === '',
	    'publish_reject first 1 refuses one EVENT with its reason', JSON.stringify([r1, r2]));
	c.close();
	const p = await connect('paced');
	const d = await p.req('p1', { kinds: [1] });
	const e = await p.req('p2', { kinds: [1] });
	await sleep(350);
	const f = await p.req('p3', { kinds: [1] });
	check(d.end === 'EOSE' && d.events.length === 20, 'default_limit applies to a filter without limit');
	check(e.end === 'CLOSED' && e.reason.startsWith('rate-limited:') && f.end === 'EOSE',
	    'rate_limit min_interval_ms refuses a REQ that comes too soon');
	p.close();
	const s = await stats('paced');
	check(s.reqs === 3 && s.reqs_served === 2 && s.rate_limited === 1 &&
	    s.closed_reasons['rate-limited'] === 1, 'paced counters', JSON.stringify(s));
}

// ----- NIP-77: the server side, driven by nostr-tools' nip77 (a client
// independent of the simulator's @nostr-dev-kit/sync) -----

// Reconciles `mine` (events or {created_at, id}) with relay `name` over
// filter f as the initiator with frame-size limit `limit`. Returns {have,
// need, rounds, biggest (largest relay message, bytes), end (null, or the
// message that ended it), hexIn (hex digits received)}.
async function reconcile(name, f, mine, limit) {
	const st = new nip77.NegentropyStorageVector();
	for (const e of mine)
		st.insert(e.created_at, e.id);
	st.seal();
	const ne = new nip77.Negentropy(st, limit);
	const c = await connect(name);
	const out = { have: [], need: [], rounds: 0, biggest: 0, end: null, hexIn: 0 };
	c.send(['NEG-OPEN', 'neg1', f, ne.initiate()]);
	for (;;) {
		const m = await c.next((x) => x[1] === 'neg1' || x[0] === 'NOTICE');
		if (m === null || m[0] !== 'NEG-MSG') {
			out.end = m ?? ['gone'];
			break;
		}
		out.rounds++;
		out.hexIn += m[2].length;
		out.biggest = Math.max(out.biggest, m[2].length / 2);
		const next = ne.reconcile(m[2], (id) => out.have.push(id), (id) => out.need.push(id));
		if (next === null)
			break;
		c.send(['NEG-MSG', 'neg1', next]);
	}
	c.send(['NEG-CLOSE', 'neg1']);
	// A REQ answered after the NEG-CLOSE shows the close was handled.
	await c.req('after', { limit: 0 });
	c.close();
	return out;
}

// The first answer to one NIP-77 message on a fresh connection, or what
// came instead: 'gone' when the connection closed, 'nothing' when a REQ
// sent after it was answered first. Only for answers the relay sends at
// once (refusals): a served session is answered asynchronously.
async function negAnswer(name, msg) {
	const c = await connect(name);
	c.send(msg);
	c.send(['REQ', 'probe', { limit: 0 }]);
	const m = await c.next(() => true);
	c.close();
	if (m === null)
		return 'gone';
	if (m[0] === 'EOSE' && m[1] === 'probe')
		return 'nothing';
	return m;
}

async function checkNegentropy() {
	const doc = async (name) => JSON.parse((await httpGet(relay[name].http + '/',
	    { Accept: 'application/nostr+json' })).body);
	const adv = [];
	for (const n of ['neg', 'negnotice', 'negsilent', 'negerr', 'plain'])
		adv.push((await doc(n)).supported_nips.includes(77));
	check(same(adv, [true, true, true, false, false]),
	    'NIP-11 lists 77 for negentropy yes, notice and silent, not for err or none', `${adv}`);

	// Exact have/need over several rounds, every answer within the frame limit.
	await httpGet(`${relay.neg.http}/stats?reset=1`);
	const f = { authors: [pk[1], pk[2]] };
	const theirs = await truth('neg', 'match', f);
	const held = new Set(theirs);
	const mine = dataset.filter((e) => oracleMatch(f, e) && held.has(e.id) &&
	    Number.parseInt(e.id.slice(0, 2), 16) % 5 !== 0);
	const extra = dataset.filter((e) => oracleMatch(f, e) && !held.has(e.id)).slice(0, 25);
	const r = await reconcile('neg', f, [...mine, ...extra], 4096);
	const wantNeed = theirs.filter((id) => !mine.some((e) => e.id === id)).sort();
	check(r.end === null && same(r.need.sort(), wantNeed) &&
	    same(r.have.sort(), extra.map((e) => e.id).sort()),
	    'negentropy yes: have and need are exactly the two differences',
	    `need ${r.need.length}/${wantNeed.length} have ${r.have.length}/${extra.length} end ${r.end}`);
	check(r.rounds > 1 && r.biggest <= 4096, 'neg_frame_limit 4096: several rounds, no answer longer',
	    `${r.rounds} rounds, largest ${r.biggest} bytes`);
	check(wantNeed.length > 0 && extra.length === 25,
	    'the two sets differ both ways (the check above is not vacuous)');
	let s = await stats('neg');
	check(s.neg_opens === 1 && s.neg_msgs_in === r.rounds - 1 && s.neg_msgs_out === r.rounds &&
	    s.neg_bytes_out === r.hexIn / 2 && s.neg_max_msg_bytes === r.biggest &&
	    s.neg_closes === 1 && s.neg_sessions_open === 0,
	    'negentropy counters: opens, messages and bytes both ways, closes', JSON.stringify(s));

	const big = await negAnswer('neg', ['NEG-OPEN', 'big', {}, '61']);
	check(big[0] === 'NEG-ERR' && big[1] === 'big' && big[2].startsWith('blocked: too many records'),
	    'neg_max_records: a larger set is refused with NEG-ERR blocked:', JSON.stringify(big));
	const bad = await negAnswer('neg', ['NEG-OPEN', 'bad', {}, 'XYZ']);
	check(bad[0] === 'NEG-ERR' && bad[2].startsWith('invalid:'), 'NEG-OPEN with bad hex: NEG-ERR invalid:');
	const unk = await negAnswer('neg', ['NEG-MSG', 'nope', '61']);
	check(unk[0] === 'NEG-ERR' && unk[2].startsWith('closed:'), 'NEG-MSG for no session: NEG-ERR closed:');

	const e = await negAnswer('negerr', ['NEG-OPEN', 'x', {}, '6100']);
	check(e[0] === 'NEG-ERR' && e[1] === 'x' && e[2] === 'blocked: negentropy disabled',
	    'negentropy err: NEG-ERR blocked: negentropy disabled', JSON.stringify(e));
	const n = await negAnswer('negnotice', ['NEG-OPEN', 'x', {}, '6100']);
	check(n[0] === 'NOTICE' && n[1] === 'ERROR: unknown cmd', 'negentropy notice: NOTICE ERROR: unknown cmd',
	    JSON.stringify(n));
	const q = await negAnswer('negsilent', ['NEG-OPEN', 'x', {}, '6100']);
	check(q === 'nothing', 'negentropy silent: no answer at all (a later REQ is answered first)',
	    JSON.stringify(q));
	const none = await negAnswer('plain', ['NEG-OPEN', 'x', {}, '6100']);
	check(none[0] === 'NOTICE' && none[1] === 'error: unknown message type',
	    'a relay without the knob does not know NEG-OPEN', JSON.stringify(none));
	s = await stats('negsilent');
	check(s.neg_opens === 1 && s.neg_ignored === 1 && s.notices_sent === 0, 'silent counters');

	const d1 = await negAnswer('negdrop', ['NEG-OPEN', 'x', {}, '6100']);
	const dc = await connect('negdrop');
	dc.send(['NEG-OPEN', 'x', { kinds: [0] }, '61']);
	const d2 = await dc.next((m) => m[1] === 'x') ?? ['gone'];
	dc.close();
	s = await stats('negdrop');
	check(d1 === 'gone' && d2[0] === 'NEG-MSG' && s.neg_drops === 1,
	    'neg_drop first 1: the first NEG-OPEN loses the connection, the next is served',
	    `${JSON.stringify(d1)} ${JSON.stringify(d2).slice(0, 80)}`);
	check(d2[2] === '6' && s.neg_bad_hex_sent === 1,
	    'neg_bad_hex first 1: that first answer ("61") lost its last digit', JSON.stringify(d2));
}

async function checkPartialIds() {
	// fraction 0.5: an id is sent when its first 32 bits are below 2^31,
	// i.e. its first hex digit is 0-7.
	const ids = (await truth('neg', 'match', { authors: [pk[3]] })).slice(0, 60);
	await httpGet(`${relay.neg.http}/stats?reset=1`);
	const c = await connect('neg');
	const r = await c.req('p1', { ids });
	const want = ids.filter((id) => id[0] < '8').sort();
	check(r.end === 'EOSE' && same(r.events.map((x) => x.id).sort(), want) &&
	    want.length > 0 && want.length < ids.length,
	    'partial_ids fraction 0.5: only the ids whose first hex digit is 0-7 are sent',
	    `${r.events.length} of ${ids.length}, want ${want.length}`);
	const s = await stats('neg');
	check(s.ids_withheld === ids.length - want.length, 'ids_withheld counts the rest',
	    `${s.ids_withheld}`);
	const kinds = await c.req('p2', { authors: [pk[3]] });
	check(kinds.events.length >= ids.length, 'partial_ids leaves filters without ids alone');
	c.close();
	const pageable = await truth('neg', 'pageable', { ids });
	check(same(pageable, want), 'pageable truth of an ids filter leaves the withheld ids out');

	const d = await connect('negdrop');
	const ten = (await truth('negdrop', 'match', { kinds: [1] })).slice(0, 10);
	const r2 = await d.req('p3', { ids: ten });
	const newest = dataset.filter((e) => ten.includes(e.id)).sort(nip01Order).slice(0, 3)
	    .map((e) => e.id);
	check(same(r2.events.map((x) => x.id), newest), 'partial_ids count 3: the 3 newest asked ids',
	    `${r2.events.length}`);
	d.close();
}

for (const step of [checkNip11, checkQueries, checkCap, checkAuth, checkTruth, checkDrains,
    checkTls, checkOtherKnobs, checkNegentropy, checkPartialIds]) {
	const t0 = Date.now();
	try {
		await step();
		process.stdout.write(`# ${step.name}: ${Date.now() - t0} ms\n`);
	} catch (e) {
		check(false, step.name, e.stack);
	}
}
process.stdout.write(failures === 0 ? 'all checks passed\n' : `${failures} checks failed\n`);
process.exit(failures === 0 ? 0 : 1);
