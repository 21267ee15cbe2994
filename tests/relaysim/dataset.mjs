// Deterministic signed datasets for the simulator: generation, the on-disk
// cache, loading, the per-relay subset rules, injected same-second bursts and
// the substitution of real relay URLs into kind 10002 lists. A dataset is a
// JSONL file of events (one per line, oldest first) plus a sidecar
// <name>.meta.json with the seed, the authors and their secret keys.
// Nothing here opens a socket; everything here is a pure function of its
// arguments and the seed.

import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { Rng, sha256, unitHash } from './prng.mjs';
import { signInit, signMany, pubkeyOf, computeId } from './sign.mjs';
import { JSON_OF, LINE_OF, FILE_ID, compareEvents } from './filter.mjs';

export const GEN_VERSION = 1;
export const PLACEHOLDER = 'relaysim:';
export const T_START = 1546300800;	// 2019-01-01T00:00:00Z
export const T_END = 1735689599;	// 2024-12-31T23:59:59Z

const CURVE_N = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
const TOPICS = ['nostr', 'bitcoin', 'cachebox', 'relay', 'pi', 'music', 'art', 'news'];
const WORDS = ('the a relay note cache board home follow list event key sign sync page ' +
    'cursor until since limit second minute year old new quiet loud tiny large river ' +
    'stone garden coffee morning night signal packet window').split(' ');

// Directory for cached datasets and signed bursts.
export function defaultCacheDir() {
	if (process.env.RELAYSIM_CACHE)
		return process.env.RELAYSIM_CACHE;
	if (process.env.CACHEBOX_BUILD)
		return path.join(process.env.CACHEBOX_BUILD, 'relaysim-cache');
	return path.join(os.tmpdir(), `relaysim-cache-${process.getuid ? process.getuid() : 0}`);
}

export function metaPathOf(file) {
	return file.replace(/\.jsonl$/, '') + '.meta.json';
}

function secretKey(seed, i) {
	for (let n = 0; ; n++) {
		const k = sha256(`relaysim-key:${seed}:${i}:${n}`);
		const v = BigInt('0x' + k.toString('hex'));
		if (v > 0n && v < CURVE_N)
			return k.toString('hex');
	}
}

// Splits total into parts proportional to weights (largest remainder).
function apportion(total, weights) {
	const sum = weights.reduce((a, b) => a + b, 0);
	const exact = weights.map((w) => total * w / sum);
	const out = exact.map(Math.floor);
	let left = total - out.reduce((a, b) => a + b, 0);
	const order = exact.map((x, i) => [x - Math.floor(x), i]).sort((a, b) => b[0] - a[0]);
	for (let j = 0; left > 0; j++, left--)
		out[order[j % order.length][1]]++;
	return out;
}

// Note timestamps for one author, ascending, with same-second clusters.
function noteTimes(rng, count, span) {
	const times = [];
	while (times.length < count) {
		const t = rng.int(span[0], span[1]);
		const k = rng.chance(0.05) ? rng.int(2, 6) : 1;
		for (let j = 0; j < k && times.length < count; j++)
			times.push(t);
	}
	return times.sort((a, b) => a - b);
}

function noteTags(rng, pubkeys, own) {
	const r = rng.next();
	if (r < 0.1)
		return [['t', rng.pick(TOPICS)]];
	if (r < 0.2)
		return [['p', rng.pick(pubkeys)]];
	if (r < 0.25 && own.length > 0)
		return [['e', own[rng.int(0, own.length - 1)], '', 'reply']];
	return [];
}

function metaTemplates(rng, i, authors, relayNames) {
	const pk = authors.map((a) => a.pubkey);
	const name = { kind: 0, created_at: T_END - 86400 * (i % 30) - i, tags: [],
	    content: JSON.stringify({ name: `author${i}`, about: `relaysim author ${i}` }) };
	let follows;
	if (i === 0)
		follows = pk.slice(1);
	else
		follows = [...new Set(Array.from({ length: rng.int(0, 5) }, () => rng.pick(pk)))]
		    .filter((p) => p !== pk[i]);
	const contacts = { kind: 3, created_at: T_END - 3600 - 7 * i, content: '',
	    tags: follows.map((p) => ['p', p]) };
	const out = [name, contacts];
	if (relayNames.length > 0) {
		const names = relayNames.filter(() => rng.chance(0.5));
		if (names.length === 0)
			names.push(relayNames[i % relayNames.length]);
		authors[i].write_relays = names;
		out.push({ kind: 10002, created_at: T_END - 7200 - 7 * i, content: '',
		    tags: names.map((n) => ['r', PLACEHOLDER + n]) });
	}
	return out;
}

function noteTemplates(rng, i, count, authors) {
	const start = T_START + rng.int(0, 3 * 365 * 86400);
	const times = noteTimes(rng, count, [start, T_END - 2 * 86400]);
	const pks = authors.map((a) => a.pubkey);
	const own = [];
	return times.map((t, j) => {
		const words = Array.from({ length: rng.int(3, 20) }, () => rng.pick(WORDS));
		const tmpl = { kind: 1, created_at: t, tags: noteTags(rng, pks, own),
		    content: `note ${j} by author ${i}: ${words.join(' ')}` };
		own.push(computeId({ ...tmpl, pubkey: pks[i] }));
		return tmpl;
	});
}

// Generates a dataset in memory. params: {authors, events, seed, relays}.
// Returns {events, meta}; events are sorted oldest first, then by id.
export async function generate(params) {
	await signInit();
	const { authors: n, events: m, seed } = params;
	const relayNames = params.relays || [];
	const rng = new Rng(`dataset:${seed}`);
	const authors = Array.from({ length: n }, (_, i) => {
		const seckey = secretKey(seed, i);
		return { index: i, pubkey: pubkeyOf(seckey), seckey, write_relays: [] };
	});
	const items = [];
	for (let i = 0; i < n; i++)
		for (const t of metaTemplates(rng, i, authors, relayNames))
			items.push([i, t]);
	const weights = authors.map(() => 0.2 + rng.next() * rng.next() * 4);
	apportion(m, weights).forEach((c, i) => {
		for (const t of noteTemplates(rng, i, c, authors))
			items.push([i, t]);
	});
	const events = await signMany(items, authors.map((a) => a.seckey));
	events.sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
	const meta = { format: 'relaysim-dataset/1', version: GEN_VERSION,
	    params: { authors: n, events: m, seed, relays: relayNames },
	    root: authors[0] ? authors[0].pubkey : null, placeholder: PLACEHOLDER,
	    time_range: [T_START, T_END], total_events: events.length, authors };
	return { events, meta };
}

function writeAtomic(file, text) {
	const tmp = `${file}.tmp-${process.pid}`;
	fs.writeFileSync(tmp, text);
	fs.renameSync(tmp, file);
}

// Writes a generated dataset to file (and its .meta.json, written last).
export function writeDataset(file, { events, meta }) {
	fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
	writeAtomic(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
	writeAtomic(metaPathOf(file), JSON.stringify(meta, null, 1) + '\n');
}

// Cache key of a parameter set: the file name under the cache directory.
export function datasetKey(params) {
	const p = { v: GEN_VERSION, authors: params.authors, events: params.events,
	    seed: params.seed, relays: params.relays || [] };
	return 'dataset-' + sha256(JSON.stringify(p)).toString('hex').slice(0, 16);
}

// Returns the path of the cached dataset for params, generating it first if
// the cache lacks it. Concurrent callers may both generate; rename keeps the
// files whole.
export async function ensureDataset(params, cacheDir = defaultCacheDir()) {
	const file = path.join(cacheDir, datasetKey(params) + '.jsonl');
	if (fs.existsSync(metaPathOf(file)) && fs.existsSync(file))
		return { file, cached: true };
	writeDataset(file, await generate(params));
	return { file, cached: false };
}

// Loads a dataset file. Returns {events, meta}; events are in NIP-01 order
// (newest first) and carry their file line, wire form and file id under the
// symbols of filter.mjs.
export function loadDataset(file) {
	const meta = JSON.parse(fs.readFileSync(metaPathOf(file), 'utf8'));
	const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0);
	const events = JSON.parse('[' + lines.join(',') + ']');
	events.forEach((ev, i) => {
		ev[LINE_OF] = i;
		ev[JSON_OF] = lines[i];
		ev[FILE_ID] = ev.id;
	});
	events.sort(compareEvents);
	return { events, meta };
}

function hidden(ev, line, fileId) {
	ev[LINE_OF] = line;
	ev[JSON_OF] = JSON.stringify(ev);
	ev[FILE_ID] = fileId;
	return ev;
}

// Replaces "relaysim:NAME" in every kind 10002 list by urls[NAME] and signs
// the lists again (same created_at, new id). Names without a URL are kept.
// Returns a new event array; the input is not changed.
export async function substituteRelayUrls(ds, urls) {
	const keyOf = new Map(ds.meta.authors.map((a) => [a.pubkey, a.index]));
	const todo = [];
	ds.events.forEach((ev, pos) => {
		if (ev.kind !== 10002 || !keyOf.has(ev.pubkey))
			return;
		const tags = ev.tags.map((t) => t[0] === 'r' && t[1].startsWith(PLACEHOLDER) &&
		    urls[t[1].slice(PLACEHOLDER.length)] ?
		    [t[0], urls[t[1].slice(PLACEHOLDER.length)], ...t.slice(2)] : t);
		todo.push([pos, [keyOf.get(ev.pubkey), { kind: ev.kind,
		    created_at: ev.created_at, tags, content: ev.content }]]);
	});
	const signed = await signMany(todo.map((x) => x[1]),
	    ds.meta.authors.map((a) => a.seckey));
	const out = ds.events.slice();
	todo.forEach(([pos], j) => {
		out[pos] = hidden(signed[j], ds.events[pos][LINE_OF], ds.events[pos][FILE_ID]);
	});
	return out;
}

// Signs the events of one burst spec {created_at, count, author, kind}.
// Signed bursts are cached under cacheDir by their templates and key.
export async function burstEvents(spec, meta, cacheDir = defaultCacheDir()) {
	const author = meta.authors[spec.author ?? (meta.authors.length > 1 ? 1 : 0)];
	if (!author)
		throw new Error(`burst: no author ${spec.author}`);
	const kind = spec.kind ?? 1;
	const tmpl = Array.from({ length: spec.count }, (_, j) => [0, { kind,
	    created_at: spec.created_at, tags: [['t', 'burst']],
	    content: `burst at ${spec.created_at} number ${j} of ${spec.count}` }]);
	const key = sha256(JSON.stringify([author.seckey, tmpl])).toString('hex').slice(0, 16);
	const file = path.join(cacheDir, `burst-${key}.jsonl`);
	let events;
	if (fs.existsSync(file)) {
		events = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l)
		    .map((l) => JSON.parse(l));
	} else {
		events = await signMany(tmpl, [author.seckey]);
		fs.mkdirSync(cacheDir, { recursive: true });
		writeAtomic(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
	}
	return events.map((ev) => hidden(ev, -1, ev.id));
}

// Subset rules, see README.md. ctx: {authorIndex: Map pubkey -> index}.
const RULES = {
	authors: (r, ev, ctx) => {
		const i = ctx.authorIndex.get(ev.pubkey);
		return i !== undefined && i >= r.authors[0] && i <= r.authors[1];
	},
	every: (r, ev) => ev[LINE_OF] >= 0 && ev[LINE_OF] % r.every === (r.offset ?? 0),
	created_at: (r, ev) => ev.created_at >= r.created_at[0] &&
	    ev.created_at <= r.created_at[1],
	fraction: (r, ev) => unitHash(`${r.seed ?? 0}:${ev[FILE_ID]}`) < r.fraction,
	kinds: (r, ev) => r.kinds.includes(ev.kind),
	not: (r, ev, ctx) => !subsetMatch(r.not, ev, ctx),
	any: (r, ev, ctx) => r.any.some((x) => subsetMatch(x, ev, ctx)),
};

// True when ev belongs to the subset described by rule (see README.md).
export function subsetMatch(rule, ev, ctx) {
	if (rule === undefined || rule === 'all')
		return true;
	if (rule === 'none')
		return false;
	if (Array.isArray(rule))
		return rule.every((x) => subsetMatch(x, ev, ctx));
	const keys = Object.keys(rule).filter((k) => k in RULES);
	if (keys.length !== 1)
		throw new Error(`subset rule needs exactly one of ${Object.keys(RULES)}: ` +
		    JSON.stringify(rule));
	return RULES[keys[0]](rule, ev, ctx);
}
