// Fault knobs of one simulated relay: parsing and checking the config
// values and the deterministic "should it happen now" decisions. This module
// decides when a fault fires; relay.mjs carries it out. A knob that was not
// configured never fires.

import { Rng } from './prng.mjs';

const TRIGGER_KEYS = ['every', 'first', 'probability', 'fraction', 'always'];

// A countable trigger: {every N} fires on the N-th, 2N-th, ... occasion,
// {first N} on the first N, {probability p} (alias fraction) at random with
// a seeded generator, and a spec with none of these fires every time.
export class Trigger {
	constructor(spec, seedName) {
		this.spec = spec;
		this.n = 0;
		const p = spec.probability ?? spec.fraction;
		this.p = p;
		this.rng = p !== undefined ? new Rng(`${seedName}:${spec.seed ?? 0}`) : null;
		if (spec.every !== undefined && !(Number.isInteger(spec.every) && spec.every >= 1))
			throw new Error(`${seedName}: every must be an integer >= 1`);
		if (spec.first !== undefined && !(Number.isInteger(spec.first) && spec.first >= 0))
			throw new Error(`${seedName}: first must be an integer >= 0`);
		if (p !== undefined && !(p >= 0 && p <= 1))
			throw new Error(`${seedName}: probability must be within [0, 1]`);
	}

	// Counts one occasion and says whether the fault fires on it.
	hit() {
		this.n++;
		const s = this.spec;
		if (s.every !== undefined)
			return this.n % s.every === 0;
		if (s.first !== undefined)
			return this.n <= s.first;
		if (this.rng !== null)
			return this.rng.next() < this.p;
		return true;
	}

	// True when the fault fires on every occasion, so retrying never helps.
	get permanent() {
		const s = this.spec;
		if (s.every !== undefined)
			return s.every === 1;
		if (s.first !== undefined)
			return false;
		if (this.p !== undefined)
			return this.p >= 1;
		return true;
	}
}

function isObj(v) {
	return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function posInt(v, what) {
	if (!Number.isInteger(v) || v < 0)
		throw new Error(`${what} must be a non-negative integer`);
	return v;
}

function trig(name, v, relay, extra = []) {
	if (v === undefined || v === false || v === null)
		return null;
	const spec = v === true ? {} : v;
	if (!isObj(spec))
		throw new Error(`relay ${relay}: ${name} must be an object`);
	for (const k of Object.keys(spec))
		if (!TRIGGER_KEYS.includes(k) && k !== 'seed' && !extra.includes(k))
			throw new Error(`relay ${relay}: unknown key ${name}.${k}`);
	return { spec, trigger: new Trigger(spec, `${relay}:${name}`) };
}

// What a relay does with NIP-77 messages (the `negentropy` knob): serve
// them, refuse each with NEG-ERR, answer with an "unknown command" NOTICE,
// or say nothing; or attack the client: answer every message with random
// fingerprints so the session never ends, or with one message of 16 MiB.
// Absent: the relay does not know the commands at all.
export const NEG_MODES = ['yes', 'err', 'notice', 'silent', 'endless', 'huge'];
const NEG_FRAME_MIN = 4096;	// smallest frame-size limit of NIP-77 peers, bytes

// partial_ids: the events of a filter with `ids` that are delivered, out of
// evs (the relay's answer to that filter, in NIP-01 order). {fraction: f}
// keeps an id when its first 32 bits, read as a big-endian number, are
// below f * 2^32 (so which ids are kept depends on the id alone);
// {count: n} keeps the first n. With "reqs" (a trigger per REQ with ids)
// the ids are withheld only from the REQs it fires on, so a client that
// asks again later gets them (a transient fault).
export function partialIds(p, evs) {
	if (p.count !== undefined)
		return evs.slice(0, p.count);
	return evs.filter((ev) => Number.parseInt(ev.id.slice(0, 8), 16) < p.fraction * 2 ** 32);
}

function parsePartial(v, name) {
	if (v === undefined || v === null)
		return null;
	const keys = isObj(v) ? Object.keys(v).filter((k) => k !== 'reqs') : [];
	if (keys.length !== 1 || !['fraction', 'count'].includes(keys[0]))
		throw new Error(`relay ${name}: partial_ids must be {"fraction": f} or {"count": n}, with "reqs" optional`);
	const reqs = trig('partial_ids.reqs', v.reqs, name);
	if (keys[0] === 'count')
		return { count: posInt(v.count, `relay ${name}: partial_ids.count`), reqs };
	if (!(typeof v.fraction === 'number' && v.fraction >= 0 && v.fraction <= 1))
		throw new Error(`relay ${name}: partial_ids.fraction must be within [0, 1]`);
	return { fraction: v.fraction, reqs };
}

// The NIP-77 knobs: negentropy (or its older alias nip77: true = "yes"),
// neg_frame_limit, neg_max_records, neg_drop and neg_bad_hex.
function parseNeg(rc, f) {
	const name = rc.name;
	if (rc.negentropy !== undefined && !NEG_MODES.includes(rc.negentropy))
		throw new Error(`relay ${name}: negentropy must be one of ${NEG_MODES.join(', ')}`);
	if (rc.nip77 !== undefined && typeof rc.nip77 !== 'boolean')
		throw new Error(`relay ${name}: nip77 must be a boolean`);
	if (rc.nip77 !== undefined && rc.negentropy !== undefined &&
	    rc.nip77 !== (rc.negentropy !== 'err'))
		throw new Error(`relay ${name}: nip77 contradicts negentropy`);
	f.neg = rc.negentropy ?? (rc.nip77 ? 'yes' : null);
	f.neg_frame_limit = rc.neg_frame_limit === undefined ? 0 :
	    posInt(rc.neg_frame_limit, `relay ${name}: neg_frame_limit`);
	if (f.neg_frame_limit !== 0 && f.neg_frame_limit < NEG_FRAME_MIN)
		throw new Error(`relay ${name}: neg_frame_limit must be 0 or at least ${NEG_FRAME_MIN}`);
	f.neg_max_records = rc.neg_max_records === undefined ? Infinity :
	    posInt(rc.neg_max_records, `relay ${name}: neg_max_records`);
	f.neg_drop = trig('neg_drop', rc.neg_drop, name);
	f.neg_bad_hex = trig('neg_bad_hex', rc.neg_bad_hex, name);
	if ((f.neg_frame_limit || f.neg_max_records !== Infinity || f.neg_drop || f.neg_bad_hex) &&
	    f.neg !== 'yes')
		throw new Error(`relay ${name}: neg_frame_limit, neg_max_records, neg_drop and neg_bad_hex need negentropy "yes"`);
}

export const MALFORMED_DEFAULT = ['truncated', 'not_json', 'unknown_type', 'short_event',
    'event_not_object'];
export const MALFORMED_ALL = [...MALFORMED_DEFAULT, 'bad_utf8', 'binary'];

// Builds the fault set of relay `name` from its config object. Throws with a
// message naming the relay and the key on any malformed value.
export function parseFaults(rc) {
	const name = rc.name;
	const f = {};
	f.cap = rc.cap === undefined ? Infinity : posInt(rc.cap, `relay ${name}: cap`);
	f.ignore_until = rc.ignore_until === true;
	f.drop = trig('drop_mid_page', rc.drop_mid_page, name, ['after']);
	if (f.drop)
		f.drop.after = posInt(f.drop.spec.after ?? 0, `relay ${name}: drop_mid_page.after`);
	f.rate = trig('rate_limit', rc.rate_limit, name, ['min_interval_ms', 'message']);
	if (f.rate && f.rate.spec.min_interval_ms !== undefined &&
	    !TRIGGER_KEYS.some((k) => k in f.rate.spec))
		f.rate.interval_only = true;
	f.no_eose = trig('no_eose', rc.no_eose, name);
	f.bad_sig = trig('bad_sig', rc.bad_sig, name);
	f.wrong_id = trig('wrong_id', rc.wrong_id, name);
	f.unrequested = trig('unrequested', rc.unrequested, name);
	f.malformed = trig('malformed_json', rc.malformed_json, name, ['kinds']);
	if (f.malformed) {
		f.malformed.kinds = f.malformed.spec.kinds ?? MALFORMED_DEFAULT;
		for (const k of f.malformed.kinds)
			if (!MALFORMED_ALL.includes(k))
				throw new Error(`relay ${name}: unknown malformed_json kind ${k}`);
	}
	f.oversized = trig('oversized_frame', rc.oversized_frame, name, ['bytes', 'as']);
	if (f.oversized) {
		if (!TRIGGER_KEYS.some((k) => k in f.oversized.spec))
			f.oversized.trigger = new Trigger({ first: 1 }, `${name}:oversized_frame`);
		f.oversized.bytes = posInt(f.oversized.spec.bytes, `relay ${name}: oversized_frame.bytes`);
		f.oversized.as = f.oversized.spec.as ?? 'event';
	}
	f.publish_reject = trig('publish_reject', rc.publish_reject, name, ['reason']);
	f.silent = trig('silent', rc.silent, name);
	f.flood = trig('bad_sig_flood', rc.bad_sig_flood, name, ['count']);
	if (f.flood)
		f.flood.count = posInt(f.flood.spec.count ?? 1000, `relay ${name}: bad_sig_flood.count`);
	f.unreq_flood = trig('unrequested_flood', rc.unrequested_flood, name, ['count']);
	if (f.unreq_flood)
		f.unreq_flood.count = posInt(f.unreq_flood.spec.count ?? 1000, `relay ${name}: unrequested_flood.count`);
	f.tag_bomb = trig('tag_bomb', rc.tag_bomb, name, ['tags', 'items']);
	if (f.tag_bomb) {
		if (!TRIGGER_KEYS.some((k) => k in f.tag_bomb.spec))
			f.tag_bomb.trigger = new Trigger({ first: 1 }, `${name}:tag_bomb`);
		f.tag_bomb.tags = posInt(f.tag_bomb.spec.tags ?? 100000, `relay ${name}: tag_bomb.tags`);
		f.tag_bomb.items = posInt(f.tag_bomb.spec.items ?? 0, `relay ${name}: tag_bomb.items`);
	}
	f.partial_ids = parsePartial(rc.partial_ids, name);
	parseNeg(rc, f);
	f.slow = { per_page: 0, per_event: 0, before_eose: 0 };
	if (typeof rc.slow_ms === 'number')
		f.slow.per_page = rc.slow_ms;
	else if (isObj(rc.slow_ms))
		for (const [k, v] of Object.entries(rc.slow_ms)) {
			if (!(k in f.slow))
				throw new Error(`relay ${name}: unknown key slow_ms.${k}`);
			f.slow[k] = posInt(v, `relay ${name}: slow_ms.${k}`);
		}
	return f;
}
