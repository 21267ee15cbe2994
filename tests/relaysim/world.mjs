// Builds the simulated network from a config file: resolves and loads the
// dataset, creates the relays, fills each relay's store with its subset and
// bursts once the real URLs are known, and serves the cross-relay HTTP views
// (/stats?all=1, /truth, /dataset). It owns the relays; it never parses
// protocol messages itself.

import fs from 'node:fs';
import path from 'node:path';
import { Relay } from './relay.mjs';
import { signInit } from './sign.mjs';
import { ensureDataset, loadDataset, substituteRelayUrls, burstEvents, subsetMatch,
    defaultCacheDir, metaPathOf } from './dataset.mjs';
import { truthMatch, truthPageable, parseFilters } from './truth.mjs';
import { validateFilter, compareEvents } from './filter.mjs';

const TOP_KEYS = ['dataset', 'relays', 'cache_dir', 'tls'];
const DATASET_KEYS = ['file', 'authors', 'events', 'seed', 'relays'];
// Placeholder tokens of generated kind 10002 lists when the config names none:
// relay number i of the config fills "relaysim:i", whatever its name.
export const DEFAULT_SLOTS = ['0', '1', '2'];

// Reads and checks a config file; relative paths in it are taken from the
// file's directory. Returns the config object.
export function readConfig(file) {
	const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
	const base = path.dirname(path.resolve(file));
	for (const k of Object.keys(cfg))
		if (!TOP_KEYS.includes(k))
			throw new Error(`config: unknown key ${k}`);
	if (!Array.isArray(cfg.relays) || cfg.relays.length === 0)
		throw new Error('config: relays must be a non-empty array');
	const names = new Set();
	for (const rc of cfg.relays) {
		if (typeof rc.name !== 'string' || !/^[A-Za-z0-9_-]+$/.test(rc.name) ||
		    names.has(rc.name))
			throw new Error(`config: every relay needs a unique name [A-Za-z0-9_-]`);
		names.add(rc.name);
		if (rc.tls === true)
			rc.tls = cfg.tls;
		if (rc.tls) {
			if (!rc.tls.cert || !rc.tls.key)
				throw new Error(`relay ${rc.name}: tls needs cert and key`);
			rc.tls = { cert: path.resolve(base, rc.tls.cert), key: path.resolve(base, rc.tls.key) };
		}
	}
	for (const k of Object.keys(cfg.dataset ?? {}))
		if (!DATASET_KEYS.includes(k))
			throw new Error(`config: unknown key dataset.${k}`);
	if (cfg.dataset?.file)
		cfg.dataset.file = path.resolve(base, cfg.dataset.file);
	return cfg;
}

function burstList(rc) {
	const b = rc.bursts ?? rc.burst;
	if (b === undefined)
		return [];
	return Array.isArray(b) ? b : [b];
}

export class World {
	constructor(cfg) {
		this.cfg = cfg;
		this.cacheDir = cfg.cache_dir ?? defaultCacheDir();
	}

	// Loads (or generates) the dataset and creates the relays.
	async init() {
		await signInit();
		const d = this.cfg.dataset ?? {};
		if (d.file) {
			this.datasetFile = d.file;
		} else {
			const params = { authors: d.authors ?? 10, events: d.events ?? 1000,
			    seed: d.seed ?? 1, relays: d.relays ?? DEFAULT_SLOTS };
			this.datasetFile = (await ensureDataset(params, this.cacheDir)).file;
		}
		this.ds = loadDataset(this.datasetFile);
		this.meta = this.ds.meta;
		this.relays = this.cfg.relays.map((rc) => new Relay(rc, this));
		this.byName = new Map(this.relays.map((r) => [r.name, r]));
	}

	async listen() {
		for (const r of this.relays)
			await r.listen();
	}

	// Placeholder token -> URL: a relay answers to its slot (the "slot" key,
	// else its position in the config) and, taking precedence, its name.
	urlMap(nameToUrl) {
		const urls = {};
		this.relays.forEach((r, i) => {
			const slot = r.rc.slot === undefined ? i : r.rc.slot;
			if (slot !== null && nameToUrl[r.name])
				urls[String(slot)] = nameToUrl[r.name];
		});
		for (const r of this.relays)
			if (nameToUrl[r.name])
				urls[r.name] = nameToUrl[r.name];
		return urls;
	}

	// Fills every relay's store. nameToUrl maps relay name -> URL, used in
	// kind 10002 lists.
	async fill(nameToUrl) {
		const urls = this.urlMap(nameToUrl);
		const events = (await substituteRelayUrls(this.ds, urls)).sort(compareEvents);
		const ctx = { authorIndex: new Map(this.meta.authors.map((a) => [a.pubkey, a.index])) };
		for (const r of this.relays) {
			const mine = events.filter((ev) => subsetMatch(r.rc.subset, ev, ctx));
			for (const b of burstList(r.rc))
				mine.push(...await burstEvents(b, this.meta, this.cacheDir));
			r.setEvents(mine);
		}
	}

	close() {
		for (const r of this.relays)
			r.close();
	}

	allStats() {
		return Object.fromEntries(this.relays.map((r) => [r.name, r.getStats()]));
	}

	// Dataset facts without secret keys, plus the relay URLs.
	publicInfo() {
		return { file: this.datasetFile, meta: metaPathOf(this.datasetFile),
		    root: this.meta.root, total_events: this.meta.total_events,
		    authors: this.meta.authors.map((a) => ({ index: a.index, pubkey: a.pubkey,
			write_relays: a.write_relays })),
		    relays: this.relays.map((r) => ({ name: r.name, url: r.url, stored: r.store.size })) };
	}

	// Relays named in a comma list ("all" or empty: every relay).
	pick(list) {
		if (!list || list === 'all')
			return this.relays;
		return list.split(',').map((n) => {
			const r = this.byName.get(n);
			if (!r)
				throw new Error(`no relay named ${n}`);
			return r;
		});
	}

	// Returns the sorted id list for a truth query (see README.md).
	truth(mode, filterText, relayList, pageLimit, whole) {
		const filters = parseFilters(filterText);
		for (const f of filters) {
			const err = validateFilter(f);
			if (err !== null)
				throw new Error(err);
		}
		const relays = this.pick(relayList);
		if (!Number.isInteger(pageLimit) || pageLimit < 0)
			throw new Error('page limit must be an integer >= 0');
		if (mode === 'match')
			return truthMatch(relays, filters);
		if (mode === 'pageable')
			return truthPageable(relays, filters, { pageLimit, whole });
		throw new Error(`unknown truth mode ${mode}`);
	}

	truthHttp(relay, q, reply) {
		let ids;
		try {
			ids = this.truth(q.get('mode') ?? 'match', q.get('filter') ?? '{}',
			    q.get('relays'), Number(q.get('page_limit') ?? 500), q.get('whole') === '1');
		} catch (e) {
			return reply(400, 'text/plain', `error: ${e.message}\n`);
		}
		if (q.get('format') === 'json')
			return reply(200, 'application/json', JSON.stringify({ count: ids.length, ids }) + '\n');
		return reply(200, 'text/plain', ids.map((id) => id + '\n').join(''));
	}
}
