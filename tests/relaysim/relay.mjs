// One simulated upstream relay: an HTTP(S) server on a loopback port that
// speaks NIP-01 over WebSocket (and NIP-77 through neg.mjs), answers NIP-11
// and /stats on the same port, runs the optional NIP-42 handshake and
// carries out the configured faults.
// It owns its event store, its connections and its counters. It never reads
// another relay's store and never listens on anything but loopback.

import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocketServer } from 'ws';
import { validateEvent } from 'nostr-tools/pure';
import { EventStore, validateFilter, matchAny, compareEvents, JSON_OF } from './filter.mjs';
import { parseFaults, partialIds } from './faults.mjs';
import { NegServer, negLoad } from './neg.mjs';
import { checkEvent, signOne } from './sign.mjs';
import { Rng } from './prng.mjs';
import { T_END } from './dataset.mjs';

export const RELAY_KEYS = ['name', 'slot', 'port', 'host', 'url_host', 'ipv6', 'tls', 'subset', 'bursts',
    'burst', 'max_limit', 'default_limit', 'max_subscriptions', 'supported_nips', 'nip11',
    'auth', 'auth_pubkeys', 'nip77', 'cap', 'ignore_until', 'drop_mid_page', 'slow_ms',
    'rate_limit', 'no_eose', 'bad_sig', 'wrong_id', 'unrequested', 'malformed_json',
    'oversized_frame', 'publish_reject', 'read_only', 'silent', 'bad_sig_flood', 'unrequested_flood', 'tag_bomb',
    'negentropy', 'neg_frame_limit', 'neg_max_records', 'neg_drop', 'neg_bad_hex', 'partial_ids'];

const MAX_PAYLOAD = 16 * 1024 * 1024;	// largest frame accepted from a client, bytes
const FLUSH_EVERY = 200;		// events sent between waits for the socket to drain
const AUTH_WINDOW_S = 600;		// accepted clock skew of a kind 22242 event, seconds
const STAT_NAMES = ['connections', 'connections_open', 'reqs', 'reqs_served', 'closes',
    'counts', 'events_sent', 'distinct_events_sent', 'eose_sent', 'closed_sent', 'notices_sent',
    'rate_limited', 'auth_required_sent', 'drops', 'no_eose', 'forged_sent',
    'unrequested_sent', 'malformed_sent', 'oversized_sent', 'auth_challenges', 'auth_ok',
    'auth_fail', 'events_received', 'events_accepted', 'events_duplicate',
    'events_rejected', 'bad_messages', 'max_open_subs', 'stored', 'silent_reqs', 'flood_sent', 'unrequested_flood_sent',
    'tag_bombs_sent', 'ids_withheld', 'neg_opens', 'neg_msgs_in', 'neg_msgs_out', 'neg_bytes_in',
    'neg_bytes_out', 'neg_max_msg_bytes', 'neg_errs_sent', 'neg_closes', 'neg_refusals',
    'neg_ignored', 'neg_drops', 'neg_bad_hex_sent', 'neg_sessions_open'];

function isReplaceable(k) {
	return k === 0 || k === 3 || (k >= 10000 && k < 20000);
}

function dTag(ev) {
	const t = ev.tags.find((x) => x[0] === 'd');
	return t ? (t[1] ?? '') : '';
}

function withJson(ev) {
	if (ev[JSON_OF] === undefined)
		ev[JSON_OF] = JSON.stringify(ev);
	return ev;
}

export class Relay {
	// rc: this relay's config; world: {meta, truthHandler} shared by all relays.
	constructor(rc, world) {
		for (const k of Object.keys(rc))
			if (!RELAY_KEYS.includes(k))
				throw new Error(`relay ${rc.name}: unknown key ${k}`);
		this.rc = rc;
		this.name = rc.name;
		this.world = world;
		this.faults = parseFaults(rc);
		this.maxLimit = rc.max_limit ?? Infinity;
		this.defaultLimit = rc.default_limit ?? Infinity;
		this.maxSubs = rc.max_subscriptions ?? Infinity;
		this.auth = rc.auth === true ? 'required' : (rc.auth || 'off');
		if (!['off', 'optional', 'required'].includes(this.auth))
			throw new Error(`relay ${rc.name}: auth must be false, "optional" or "required"`);
		this.store = new EventStore();
		this.conns = new Set();
		this.servers = [];
		this.pausedUntil = 0;
		this.lastReqAt = 0;
		this.pages = 0;
		this.oversizedCache = new Map();
		this.bombCache = new Map();
		this.floodSeq = 0;
		this.rng = new Rng(`relay:${rc.name}`);
		this.neg = new NegServer(this);
		this.resetStats();
	}

	resetStats() {
		this.stats = Object.fromEntries(STAT_NAMES.map((k) => [k, 0]));
		this.stats.closed_reasons = {};
		this.distinct = new Set();
	}

	// Counters as a plain object (a copy).
	getStats() {
		let negs = 0;
		for (const c of this.conns)
			negs += c.negs.size;
		return { ...this.stats, connections_open: this.conns.size, stored: this.store.size,
		    distinct_events_sent: this.distinct.size, neg_sessions_open: negs,
		    closed_reasons: { ...this.stats.closed_reasons } };
	}

	// Effective page size of one filter: its limit, clamped by max_limit and the
	// silent cap.
	effectiveLimit(f) {
		return Math.min(f.limit ?? this.defaultLimit, this.maxLimit, this.faults.cap);
	}

	setEvents(events) {
		this.store = new EventStore(events.map(withJson));
	}

	get scheme() {
		return this.rc.tls ? 'wss' : 'ws';
	}

	// Starts listening. Resolves once bound; this.port and this.url are set.
	async listen() {
		const host = this.rc.host ?? '127.0.0.1';
		if (!['127.0.0.1', '::1', 'localhost'].includes(host))
			throw new Error(`relay ${this.name}: host must be a loopback address`);
		if (this.faults.neg === 'yes')
			await negLoad();
		this.wss = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD });
		this.wss.on('connection', (ws, req) => this.onConnection(ws, req));
		const first = await this.bind(host === 'localhost' ? '127.0.0.1' : host,
		    this.rc.port ?? 0);
		this.port = first.address().port;
		if ((this.rc.ipv6 ?? true) && host !== '::1')
			await this.bind('::1', this.port).catch(() => null);
		const uh = this.rc.url_host ?? (this.rc.tls ? 'localhost' : '127.0.0.1');
		this.url = `${this.scheme}://${uh}:${this.port}`;
		this.httpUrl = `${this.rc.tls ? 'https' : 'http'}://${uh}:${this.port}`;
		this.urlSet = new Set(['127.0.0.1', 'localhost', '[::1]', uh].map((h) =>
		    `${this.scheme}://${h}:${this.port}`));
	}

	bind(addr, port) {
		let srv;
		const handler = (req, res) => this.onHttp(req, res);
		if (this.rc.tls) {
			const t = this.rc.tls;
			srv = https.createServer({ cert: fs.readFileSync(t.cert),
			    key: fs.readFileSync(t.key) }, handler);
		} else {
			srv = http.createServer(handler);
		}
		srv.on('upgrade', (req, sock, head) => this.onUpgrade(req, sock, head));
		srv.on('tlsClientError', () => {});
		return new Promise((resolve, reject) => {
			srv.once('error', reject);
			srv.listen({ host: addr, port, ipv6Only: addr === '::1' }, () => {
				srv.removeListener('error', reject);
				srv.on('error', () => {});
				this.servers.push(srv);
				resolve(srv);
			});
		});
	}

	// Stops listening and drops every connection.
	close() {
		for (const c of this.conns)
			c.ws.terminate();
		for (const s of this.servers) {
			s.close();
			s.closeAllConnections?.();
		}
	}

	onUpgrade(req, sock, head) {
		if (Date.now() < this.pausedUntil) {
			sock.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n');
			return;
		}
		this.wss.handleUpgrade(req, sock, head, (ws) => this.wss.emit('connection', ws, req));
	}

	// ----- NIP-01 over WebSocket -----

	onConnection(ws) {
		const conn = { ws, subs: new Map(), negs: new Map(), authed: null, challenge: null,
		    alive: true };
		this.conns.add(conn);
		this.stats.connections++;
		ws.on('message', (data, isBinary) => this.onMessage(conn, data, isBinary));
		ws.on('close', () => this.dropConn(conn));
		ws.on('error', () => this.dropConn(conn));
		if (this.auth !== 'off') {
			conn.challenge = randomBytes(16).toString('hex');
			this.send(conn, ['AUTH', conn.challenge]);
			this.stats.auth_challenges++;
		}
	}

	dropConn(conn) {
		conn.alive = false;
		conn.subs.clear();
		conn.negs.clear();
		this.conns.delete(conn);
	}

	send(conn, msg, cb) {
		if (!conn.alive || conn.ws.readyState !== conn.ws.OPEN)
			return false;
		conn.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg), cb);
		return true;
	}

	// Sends msg and resolves once it (and all queued before it) has been
	// handed to the kernel, so a large page never piles up in memory.
	sendFlushed(conn, msg) {
		return new Promise((resolve) => {
			if (!this.send(conn, msg, () => resolve()))
				resolve();
		});
	}

	notice(conn, text) {
		this.stats.notices_sent++;
		this.send(conn, ['NOTICE', text]);
	}

	closed(conn, subId, reason) {
		this.stats.closed_sent++;
		const prefix = reason.split(':')[0];
		this.stats.closed_reasons[prefix] = (this.stats.closed_reasons[prefix] ?? 0) + 1;
		this.send(conn, ['CLOSED', subId, reason]);
	}

	onMessage(conn, data, isBinary) {
		let msg;
		try {
			msg = JSON.parse(isBinary ? Buffer.from(data).toString('utf8') : data.toString());
		} catch {
			this.stats.bad_messages++;
			this.notice(conn, 'error: could not parse message as JSON');
			return;
		}
		const handler = Array.isArray(msg) ? this.handlers[msg[0]] : undefined;
		if (handler === undefined) {
			this.stats.bad_messages++;
			this.notice(conn, 'error: unknown message type');
			return;
		}
		try {
			handler.call(this, conn, msg);
		} catch (e) {
			// A bug here must cost one message, never the whole simulator.
			this.stats.bad_messages++;
			this.notice(conn, 'error: internal error');
			process.stderr.write(`relaysim ${this.name}: ${e.stack}\n`);
		}
	}

	get handlers() {
		return { REQ: this.onReq, CLOSE: this.onClose, EVENT: this.onEvent,
		    AUTH: this.onAuth, COUNT: this.onCount, ...this.neg.handlers() };
	}

	// Subscriptions open on conn: REQs and negentropy sessions.
	openSubs(conn) {
		return conn.subs.size + conn.negs.size;
	}

	notePeak(conn) {
		this.stats.max_open_subs = Math.max(this.stats.max_open_subs, this.openSubs(conn));
	}

	// Common checks of REQ and COUNT; returns a CLOSED reason or null.
	checkSub(conn, msg) {
		if (typeof msg[1] !== 'string' || msg[1].length === 0 || msg[1].length > 64)
			return 'invalid: subscription id must be a string of 1 to 64 characters';
		if (msg.length < 3)
			return 'invalid: at least one filter is required';
		for (const f of msg.slice(2)) {
			const err = validateFilter(f);
			if (err !== null)
				return err;
		}
		if (this.auth === 'required' && conn.authed === null) {
			this.stats.auth_required_sent++;
			return 'auth-required: this relay only serves authenticated clients';
		}
		return null;
	}

	rateLimited() {
		const r = this.faults.rate;
		if (r === null)
			return null;
		const now = Date.now();
		const gap = now - this.lastReqAt;
		let hit = !r.interval_only && r.trigger.hit();
		if (r.spec.min_interval_ms !== undefined && this.lastReqAt > 0 &&
		    gap < r.spec.min_interval_ms)
			hit = true;
		if (hit)
			return r.spec.message ?? 'rate-limited: slow down';
		this.lastReqAt = now;
		return null;
	}

	onReq(conn, msg) {
		this.stats.reqs++;
		const subId = msg[1];
		let err = this.checkSub(conn, msg);
		if (err === null && !conn.subs.has(subId) && this.openSubs(conn) >= this.maxSubs)
			err = `rate-limited: too many open subscriptions (max ${this.maxSubs})`;
		if (err === null && (err = this.rateLimited()) !== null)
			this.stats.rate_limited++;
		if (err !== null) {
			if (typeof subId === 'string')
				this.closed(conn, subId, err);
			else
				this.notice(conn, err);
			return;
		}
		const sub = { id: subId, filters: msg.slice(2), live: false };
		conn.subs.set(subId, sub);
		this.notePeak(conn);
		if (this.faults.silent && this.faults.silent.trigger.hit()) {
			this.stats.silent_reqs++;
			return;
		}
		this.servePage(conn, sub).catch((e) => {
			process.stderr.write(`relaysim ${this.name}: ${e.stack}\n`);
		});
	}

	onClose(conn, msg) {
		this.stats.closes++;
		conn.subs.delete(msg[1]);
	}

	onCount(conn, msg) {
		this.stats.counts++;
		const err = this.checkSub(conn, msg);
		if (err !== null) {
			if (typeof msg[1] === 'string')
				this.closed(conn, msg[1], err);
			else
				this.notice(conn, err);
			return;
		}
		this.send(conn, ['COUNT', msg[1], { count: this.store.count(msg.slice(2)) }]);
	}

	// The answer to one REQ before the faults of servePage: per filter up to
	// its effective limit (a filter with ids cut by partial_ids), merged,
	// deduplicated, in NIP-01 order.
	answer(filters) {
		const seen = new Map();
		const p = this.faults.partial_ids;
		const withhold = p !== null && filters.some((f) => f.ids) &&
		    (p.reqs === null || p.reqs.trigger.hit());
		for (const f0 of filters) {
			const f = { ...f0 };
			if (this.faults.ignore_until)
				delete f.until;
			let evs = this.store.query(f, this.effectiveLimit(f));
			if (f.ids && withhold) {
				const kept = partialIds(this.faults.partial_ids, evs);
				this.stats.ids_withheld += evs.length - kept.length;
				evs = kept;
			}
			for (const ev of evs)
				seen.set(ev.id, ev);
		}
		return [...seen.values()].sort(compareEvents);
	}

	async servePage(conn, sub) {
		const fl = this.faults;
		this.stats.reqs_served++;
		this.pages++;
		const events = this.answer(sub.filters);
		const drop = fl.drop && fl.drop.trigger.hit() ? fl.drop.after : -1;
		const noEose = fl.no_eose !== null && fl.no_eose.trigger.hit();
		const alive = () => conn.alive && conn.subs.get(sub.id) === sub;
		if (fl.slow.per_page > 0)
			await sleep(fl.slow.per_page);
		if (fl.oversized && fl.oversized.trigger.hit() && alive())
			this.sendOversized(conn, sub);
		if (fl.tag_bomb && fl.tag_bomb.trigger.hit() && alive())
			this.sendTagBomb(conn, sub);
		if (fl.flood && fl.flood.trigger.hit() && alive())
			await this.sendFlood(conn, sub, alive);
		if (fl.unreq_flood && fl.unreq_flood.trigger.hit() && alive())
			await this.sendUnrequestedFlood(conn, sub, alive);
		for (let i = 0; i < events.length; i++) {
			if (!alive())
				return;
			if (i === drop)
				return this.dropMidPage(conn);
			this.sendExtras(conn, sub, events[i]);
			const frame = `["EVENT",${JSON.stringify(sub.id)},${events[i][JSON_OF]}]`;
			this.stats.events_sent++;
			this.distinct.add(events[i].id);
			if ((i + 1) % FLUSH_EVERY === 0)
				await this.sendFlushed(conn, frame);
			else
				this.send(conn, frame);
			if (fl.slow.per_event > 0)
				await sleep(fl.slow.per_event);
		}
		if (drop >= 0 && alive())
			return this.dropMidPage(conn);
		if (fl.slow.before_eose > 0)
			await sleep(fl.slow.before_eose);
		if (!alive())
			return;
		sub.live = true;
		if (noEose) {
			this.stats.no_eose++;
			return;
		}
		this.stats.eose_sent++;
		this.send(conn, ['EOSE', sub.id]);
	}

	dropMidPage(conn) {
		this.stats.drops++;
		conn.alive = false;
		conn.ws.terminate();
	}

	// Forged copies, unrequested events and malformed frames sent before ev.
	sendExtras(conn, sub, ev) {
		const fl = this.faults;
		const pre = `["EVENT",${JSON.stringify(sub.id)},`;
		if (fl.malformed && fl.malformed.trigger.hit())
			this.sendMalformed(conn, sub);
		if (fl.bad_sig && fl.bad_sig.trigger.hit()) {
			const last = ev.sig.slice(-1) === '0' ? '1' : '0';
			this.send(conn, pre + JSON.stringify({ ...ev, sig: ev.sig.slice(0, -1) + last }) + ']');
			this.stats.forged_sent++;
		}
		if (fl.wrong_id && fl.wrong_id.trigger.hit()) {
			this.send(conn, pre + JSON.stringify({ ...ev, content: ev.content + ' (altered)' }) + ']');
			this.stats.forged_sent++;
		}
		if (fl.unrequested && fl.unrequested.trigger.hit()) {
			for (let t = 0; t < 20 && this.store.size > 0; t++) {
				const other = this.store.all[this.rng.int(0, this.store.size - 1)];
				if (!matchAny(sub.filters, other)) {
					this.send(conn, pre + other[JSON_OF] + ']');
					this.stats.unrequested_sent++;
					break;
				}
			}
		}
	}

	sendMalformed(conn, sub) {
		const kinds = this.faults.malformed.kinds;
		const kind = kinds[this.stats.malformed_sent % kinds.length];
		const sid = JSON.stringify(sub.id);
		const frames = {
			truncated: `["EVENT",${sid},{"id":"00`,
			not_json: 'this is not json {',
			unknown_type: `["BOGUS",${sid},{}]`,
			short_event: `["EVENT",${sid}]`,
			event_not_object: `["EVENT",${sid},"not an event"]`,
		};
		this.stats.malformed_sent++;
		if (kind === 'bad_utf8')
			conn.ws.send(Buffer.from([0x5b, 0x22, 0xff, 0xfe, 0x22, 0x5d]), { binary: false });
		else if (kind === 'binary')
			conn.ws.send(Buffer.from(`["NOTICE","binary frame"]`), { binary: true });
		else
			this.send(conn, frames[kind]);
	}

	// One frame of about oversized.bytes bytes: a validly signed event by the
	// first author asked for (or author 0), or a NOTICE.
	sendOversized(conn, sub) {
		const o = this.faults.oversized;
		this.stats.oversized_sent++;
		if (o.as === 'notice') {
			this.send(conn, JSON.stringify(['NOTICE', 'x'.repeat(Math.max(0, o.bytes - 14))]));
			return;
		}
		const author = this.subAuthor(sub);
		const key = `${author.pubkey}:${o.bytes}`;
		if (!this.oversizedCache.has(key)) {
			const ev = signOne({ kind: 1, created_at: T_END - 1, tags: [],
			    content: 'x'.repeat(Math.max(0, o.bytes - 420)) }, author.seckey);
			this.oversizedCache.set(key, JSON.stringify(ev));
		}
		this.send(conn, `["EVENT",${JSON.stringify(sub.id)},${this.oversizedCache.get(key)}]`);
	}

	// The author a forged or hostile event of this subscription claims: the
	// first one asked for, else author 0 (with its keys from the meta file).
	subAuthor(sub) {
		const meta = this.world.meta;
		const want = sub.filters[0].authors?.[0];
		return meta.authors.find((a) => a.pubkey === want) ?? meta.authors[0];
	}

	// bad_sig_flood: count events matching the subscription's first filter,
	// each with a correct id (so only a signature check can refuse it) and
	// a random signature, as fast as the socket takes them.
	async sendFlood(conn, sub, alive) {
		const f = sub.filters[0];
		const pubkey = this.subAuthor(sub).pubkey;
		const kind = f.kinds?.[0] ?? 1;
		const at = f.until ?? f.since ?? T_END - 1;
		const pre = `["EVENT",${JSON.stringify(sub.id)},`;
		for (let i = 0; i < this.faults.flood.count && alive(); i++) {
			const content = `flood ${this.name} ${this.floodSeq++}`;
			const id = createHash('sha256').update(JSON.stringify([0, pubkey, at, kind, [],
			    content])).digest('hex');
			const ev = { id, pubkey, created_at: at, kind, tags: [], content,
			    sig: randomBytes(64).toString('hex') };
			this.stats.flood_sent++;
			const frame = pre + JSON.stringify(ev) + ']';
			if ((i + 1) % FLUSH_EVERY === 0)
				await this.sendFlushed(conn, frame);
			else
				this.send(conn, frame);
		}
	}

	// unrequested_flood: count stored, validly signed events that match no
	// filter of the subscription (other authors' events), cycling through
	// the store, as fast as the socket takes them.
	async sendUnrequestedFlood(conn, sub, alive) {
		const pre = `["EVENT",${JSON.stringify(sub.id)},`;
		const others = this.store.all.filter((ev) => !matchAny(sub.filters, ev));
		for (let i = 0; i < this.faults.unreq_flood.count && others.length > 0 && alive(); i++) {
			const frame = pre + others[i % others.length][JSON_OF] + ']';
			this.stats.unrequested_flood_sent++;
			if ((i + 1) % FLUSH_EVERY === 0)
				await this.sendFlushed(conn, frame);
			else
				this.send(conn, frame);
		}
	}

	// tag_bomb: one validly signed kind 1 event by the subscription's
	// author with `tags` tags of `items` empty strings each.
	sendTagBomb(conn, sub) {
		const b = this.faults.tag_bomb;
		const author = this.subAuthor(sub);
		const key = `${author.pubkey}:${b.tags}:${b.items}`;
		if (!this.bombCache.has(key)) {
			const tag = new Array(b.items).fill('');
			const ev = signOne({ kind: 1, created_at: T_END - 2,
			    tags: new Array(b.tags).fill(tag), content: 'tag bomb' }, author.seckey);
			this.bombCache.set(key, JSON.stringify(ev));
		}
		this.stats.tag_bombs_sent++;
		this.send(conn, `["EVENT",${JSON.stringify(sub.id)},${this.bombCache.get(key)}]`);
	}

	// ----- publishing and NIP-42 -----

	onEvent(conn, msg) {
		this.stats.events_received++;
		const ev = msg[1];
		if (ev === null || typeof ev !== 'object' || typeof ev.id !== 'string') {
			this.stats.events_rejected++;
			this.notice(conn, 'invalid: EVENT needs an event object');
			return;
		}
		const reply = (ok, reason) => this.send(conn, ['OK', ev.id, ok, reason]);
		if (this.auth === 'required' && conn.authed === null) {
			this.stats.events_rejected++;
			this.stats.auth_required_sent++;
			return reply(false, 'auth-required: publishing needs authentication');
		}
		const pr = this.faults.publish_reject;
		if (this.rc.read_only || (pr && pr.trigger.hit())) {
			this.stats.events_rejected++;
			return reply(false, (pr && pr.spec.reason) || 'blocked: this relay is read-only');
		}
		const r = this.ingest(ev);
		return reply(r.ok, r.reason);
	}

	// Validates and stores ev, tells live subscriptions. Used for EVENT and
	// POST /publish. Returns {ok, reason} as an OK message would carry them.
	ingest(ev) {
		if (!validateEvent(ev) || !/^[0-9a-f]{64}$/.test(ev.id) ||
		    typeof ev.sig !== 'string') {
			this.stats.events_rejected++;
			return { ok: false, reason: 'invalid: malformed event' };
		}
		const bad = checkEvent(ev);
		if (bad !== null) {
			this.stats.events_rejected++;
			return { ok: false, reason: bad };
		}
		if (this.store.has(ev.id)) {
			this.stats.events_duplicate++;
			return { ok: true, reason: 'duplicate: already have this event' };
		}
		const clean = withJson({ id: ev.id, pubkey: ev.pubkey, created_at: ev.created_at,
		    kind: ev.kind, tags: ev.tags, content: ev.content, sig: ev.sig });
		this.stats.events_accepted++;
		if (ev.kind >= 20000 && ev.kind < 30000) {
			this.broadcast(clean);
			return { ok: true, reason: '' };
		}
		if (!this.replace(clean))
			return { ok: true, reason: 'duplicate: a newer version is stored' };
		this.store.add(clean);
		this.broadcast(clean);
		return { ok: true, reason: '' };
	}

	// For (parameterized) replaceable kinds drops the older version; returns
	// false when the stored version is newer and ev must not be stored.
	replace(ev) {
		const param = ev.kind >= 30000 && ev.kind < 40000;
		if (!isReplaceable(ev.kind) && !param)
			return true;
		const same = (this.store.byAuthor.get(ev.pubkey) || []).filter((o) =>
		    o.kind === ev.kind && (!param || dTag(o) === dTag(ev)));
		for (const o of same)
			if (compareEvents(o, ev) < 0)
				return false;
		for (const o of same)
			this.store.remove(o);
		return true;
	}

	broadcast(ev) {
		for (const conn of this.conns)
			for (const sub of conn.subs.values())
				if (sub.live && matchAny(sub.filters, ev)) {
					this.send(conn, `["EVENT",${JSON.stringify(sub.id)},${ev[JSON_OF]}]`);
					this.stats.events_sent++;
					this.distinct.add(ev.id);
				}
	}

	onAuth(conn, msg) {
		const ev = msg[1];
		const id = ev && typeof ev.id === 'string' ? ev.id : '';
		const reason = this.checkAuth(conn, ev);
		if (reason === null) {
			conn.authed = ev.pubkey;
			this.stats.auth_ok++;
			this.send(conn, ['OK', id, true, '']);
		} else {
			this.stats.auth_fail++;
			this.send(conn, ['OK', id, false, reason]);
		}
	}

	checkAuth(conn, ev) {
		if (this.auth === 'off')
			return 'restricted: this relay does not use NIP-42';
		if (ev === null || typeof ev !== 'object' || !validateEvent(ev))
			return 'invalid: malformed auth event';
		if (ev.kind !== 22242)
			return 'invalid: auth event must be kind 22242';
		const tag = (n) => (ev.tags.find((t) => t[0] === n) || [])[1];
		if (tag('challenge') !== conn.challenge)
			return 'invalid: challenge does not match';
		const rel = String(tag('relay') ?? '').toLowerCase().replace(/\/+$/, '');
		if (!this.urlSet.has(rel))
			return 'invalid: relay tag does not name this relay';
		if (Math.abs(ev.created_at - Date.now() / 1000) > AUTH_WINDOW_S)
			return 'invalid: auth event created_at is too far from now';
		const bad = checkEvent(ev);
		if (bad !== null)
			return bad;
		const allow = this.rc.auth_pubkeys;
		if (Array.isArray(allow) && !allow.includes(ev.pubkey))
			return 'restricted: this key may not use this relay';
		return null;
	}

	// ----- HTTP on the same port -----

	nip11() {
		const neg = this.faults.neg;
		const nips = this.rc.supported_nips ?? [1, 11, 45,
		    ...(this.auth !== 'off' ? [42] : []), ...(neg !== null && neg !== 'err' ? [77] : [])];
		const limitation = { auth_required: this.auth === 'required',
		    max_message_length: MAX_PAYLOAD };
		if (this.maxLimit !== Infinity)
			limitation.max_limit = this.maxLimit;
		if (this.maxSubs !== Infinity)
			limitation.max_subscriptions = this.maxSubs;
		if (this.defaultLimit !== Infinity)
			limitation.default_limit = this.defaultLimit;
		const doc = { name: `relaysim-${this.name}`,
		    description: 'cachebox test relay simulator', software: 'cachebox-relaysim',
		    version: '1', supported_nips: nips, limitation };
		const extra = this.rc.nip11 ?? {};
		for (const [k, v] of Object.entries(extra))
			doc[k] = k === 'limitation' ? { ...doc.limitation, ...v } : v;
		return doc;
	}

	onHttp(req, res) {
		const u = new URL(req.url, 'http://x');
		const reply = (code, type, body) => {
			res.writeHead(code, { 'Content-Type': type, 'Access-Control-Allow-Origin': '*',
			    'Access-Control-Allow-Headers': '*', 'Access-Control-Allow-Methods': '*' });
			res.end(body);
		};
		const json = (obj) => reply(200, 'application/json', JSON.stringify(obj) + '\n');
		if (req.method === 'OPTIONS')
			return reply(204, 'text/plain', '');
		if (req.method === 'GET' && u.pathname === '/' &&
		    (req.headers.accept || '').includes('application/nostr+json'))
			return reply(200, 'application/nostr+json', JSON.stringify(this.nip11()));
		if (req.method === 'GET' && u.pathname === '/stats') {
			const all = u.searchParams.get('all') === '1';
			const out = all ? this.world.allStats() : this.getStats();
			if (u.searchParams.get('reset') === '1')
				(all ? this.world.relays : [this]).forEach((r) => r.resetStats());
			return json(out);
		}
		if (req.method === 'GET' && u.pathname === '/truth')
			return this.world.truthHttp(this, u.searchParams, reply);
		if (req.method === 'GET' && u.pathname === '/dataset')
			return json(this.world.publicInfo());
		if (req.method === 'POST')
			return this.onPost(req, u, json, reply);
		return reply(200, 'text/plain', `relaysim ${this.name}: use a WebSocket client\n`);
	}

	onPost(req, u, json, reply) {
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => {
			const body = Buffer.concat(chunks).toString('utf8');
			if (u.pathname === '/kick') {
				const n = this.conns.size;
				for (const c of this.conns)
					c.ws.terminate();
				return json({ kicked: n });
			}
			if (u.pathname === '/pause') {
				this.pausedUntil = Date.now() + Number(u.searchParams.get('ms') ?? 1000);
				for (const c of this.conns)
					c.ws.terminate();
				return json({ paused_until_ms: this.pausedUntil });
			}
			if (u.pathname === '/publish') {
				const out = [];
				for (const line of body.split('\n').filter((l) => l.trim())) {
					let ev;
					try {
						ev = JSON.parse(line);
					} catch {
						out.push({ ok: false, reason: 'invalid: not JSON' });
						continue;
					}
					out.push({ id: ev.id, ...this.ingest(ev) });
				}
				return json(out);
			}
			if (u.pathname === '/stats/reset') {
				this.resetStats();
				return json({ reset: true });
			}
			return reply(404, 'text/plain', 'not found\n');
		});
	}
}
