// NIP-01 filters and the in-memory event store of one simulated relay.
// This module owns the matching rules and the result order (newest
// created_at first, then lowest id first) that every answer and every truth
// computation share. It never applies faults: relay.mjs and truth.mjs decide
// what a misbehaving relay does with a correct answer.

const HEX64 = /^[0-9a-f]{64}$/;

// Side data kept on event objects under symbols, so JSON.stringify and the
// wire form never see it: the exact serialization sent, the line in the
// dataset file (-1 when not from the file) and the id the file gave it.
export const JSON_OF = Symbol('json');
export const LINE_OF = Symbol('line');
export const FILE_ID = Symbol('fileId');
export const TAGS_OF = Symbol('tags');
const KNOWN = new Set(['ids', 'authors', 'kinds', 'since', 'until', 'limit']);

// NIP-01 order: a before b when a is newer, ties broken by the lower id.
export function compareEvents(a, b) {
	if (a.created_at !== b.created_at)
		return b.created_at - a.created_at;
	return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function isInt(v) {
	return Number.isInteger(v) && v >= 0;
}

function checkHexList(f, key) {
	if (!Array.isArray(f[key]))
		return `invalid: ${key} must be an array`;
	for (const v of f[key])
		if (typeof v !== 'string' || !HEX64.test(v))
			return `invalid: ${key} must hold 64 lowercase hex characters`;
	return null;
}

// Returns null for a filter this relay accepts, else a CLOSED reason.
export function validateFilter(f) {
	if (f === null || typeof f !== 'object' || Array.isArray(f))
		return 'invalid: a filter must be an object';
	for (const [k, v] of Object.entries(f)) {
		let err = null;
		if (k === 'ids' || k === 'authors')
			err = checkHexList(f, k);
		else if (k === 'kinds')
			err = Array.isArray(v) && v.every((x) => isInt(x) && x <= 65535) ? null :
			    'invalid: kinds must be integers 0..65535';
		else if (k === 'since' || k === 'until' || k === 'limit')
			err = isInt(v) ? null : `invalid: ${k} must be a non-negative integer`;
		else if (/^#[A-Za-z]$/.test(k))
			err = Array.isArray(v) && v.every((x) => typeof x === 'string') ? null :
			    `invalid: ${k} must be an array of strings`;
		if (err !== null)
			return err;
	}
	return null;
}

function tagIndex(ev) {
	if (ev[TAGS_OF] === undefined) {
		const m = new Map();
		for (const t of ev.tags) {
			if (t.length < 2 || t[0].length !== 1)
				continue;
			if (!m.has(t[0]))
				m.set(t[0], new Set());
			m.get(t[0]).add(t[1]);
		}
		ev[TAGS_OF] = m;
	}
	return ev[TAGS_OF];
}

// True when ev matches the single filter f (its limit is not looked at).
export function matchFilter(f, ev) {
	if (f.ids && !f.ids.includes(ev.id))
		return false;
	if (f.authors && !f.authors.includes(ev.pubkey))
		return false;
	if (f.kinds && !f.kinds.includes(ev.kind))
		return false;
	if (f.since !== undefined && ev.created_at < f.since)
		return false;
	if (f.until !== undefined && ev.created_at > f.until)
		return false;
	for (const k of Object.keys(f)) {
		if (k[0] !== '#' || KNOWN.has(k))
			continue;
		const vals = tagIndex(ev).get(k.slice(1));
		if (!vals || !f[k].some((v) => vals.has(v)))
			return false;
	}
	return true;
}

// True when ev matches any filter of the list.
export function matchAny(filters, ev) {
	return filters.some((f) => matchFilter(f, ev));
}

// First index in arr (sorted by compareEvents) whose created_at <= until.
function firstAtOrBefore(arr, until) {
	let lo = 0;
	let hi = arr.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (arr[mid].created_at > until)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

function isSorted(arr) {
	for (let i = 1; i < arr.length; i++)
		if (compareEvents(arr[i - 1], arr[i]) > 0)
			return false;
	return true;
}

function insertSorted(arr, ev) {
	let lo = 0;
	let hi = arr.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (compareEvents(arr[mid], ev) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	arr.splice(lo, 0, ev);
}

function removeFrom(arr, ev) {
	const i = arr.indexOf(ev);
	if (i >= 0)
		arr.splice(i, 1);
}

// Scans arr (sorted) for at most `limit` matches of f, in order.
function scan(arr, f, limit, out) {
	let n = 0;
	const start = f.until === undefined ? 0 : firstAtOrBefore(arr, f.until);
	for (let i = start; i < arr.length && n < limit; i++) {
		if (f.since !== undefined && arr[i].created_at < f.since)
			break;
		if (matchFilter(f, arr[i])) {
			out.push(arr[i]);
			n++;
		}
	}
}

// The events one relay holds, indexed by id and by author, each list kept
// in NIP-01 order. Events are plain objects; ev[JSON_OF], when present, is
// the exact serialization sent on the wire.
export class EventStore {
	constructor(events = []) {
		this.byId = new Map();
		this.byAuthor = new Map();
		this.all = [];
		for (const ev of events) {
			if (this.byId.has(ev.id))
				continue;
			this.byId.set(ev.id, ev);
			this.all.push(ev);
			if (!this.byAuthor.has(ev.pubkey))
				this.byAuthor.set(ev.pubkey, []);
			this.byAuthor.get(ev.pubkey).push(ev);
		}
		if (!isSorted(this.all)) {
			this.all.sort(compareEvents);
			for (const arr of this.byAuthor.values())
				arr.sort(compareEvents);
		}
	}

	get size() {
		return this.all.length;
	}

	has(id) {
		return this.byId.has(id);
	}

	add(ev) {
		if (this.byId.has(ev.id))
			return false;
		this.byId.set(ev.id, ev);
		insertSorted(this.all, ev);
		if (!this.byAuthor.has(ev.pubkey))
			this.byAuthor.set(ev.pubkey, []);
		insertSorted(this.byAuthor.get(ev.pubkey), ev);
		return true;
	}

	remove(ev) {
		if (!this.byId.delete(ev.id))
			return;
		removeFrom(this.all, ev);
		removeFrom(this.byAuthor.get(ev.pubkey), ev);
	}

	// Returns up to `limit` events matching the single filter f, in NIP-01
	// order. The array is new; the events are the store's own objects.
	query(f, limit = Infinity) {
		const out = [];
		if (limit <= 0)
			return out;
		if (f.ids) {
			for (const id of new Set(f.ids)) {
				const ev = this.byId.get(id);
				if (ev && matchFilter(f, ev))
					out.push(ev);
			}
		} else if (f.authors) {
			for (const pk of new Set(f.authors))
				scan(this.byAuthor.get(pk) || [], f, limit, out);
		} else {
			scan(this.all, f, limit, out);
			return out;
		}
		out.sort(compareEvents);
		return out.length > limit ? out.slice(0, limit) : out;
	}

	// Number of events matching any of the filters (limits ignored).
	count(filters) {
		const seen = new Set();
		for (const f of filters) {
			const g = { ...f };
			delete g.limit;
			for (const ev of this.query(g))
				seen.add(ev.id);
		}
		return seen.size;
	}
}
