#!/usr/bin/env node
// Command line front of dataset.mjs: writes a deterministic signed dataset.
//   node gen-dataset.mjs --authors N --events M --seed S --out FILE.jsonl
//        [--relays 0,1,2] [--cache-dir DIR] [--no-cache]
// The same arguments always give the same bytes. A generated set is kept in
// the cache directory and copied from there next time. It writes only FILE,
// its .meta.json and the cache.

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureDataset, generate, writeDataset, metaPathOf, defaultCacheDir }
    from './dataset.mjs';

function fail(msg) {
	process.stderr.write(`gen-dataset: ${msg}\n`);
	process.exit(2);
}

const { values: a } = parseArgs({ options: {
	authors: { type: 'string' }, events: { type: 'string' }, seed: { type: 'string' },
	out: { type: 'string' }, relays: { type: 'string', default: '0,1,2' },
	'cache-dir': { type: 'string' }, 'no-cache': { type: 'boolean', default: false },
} });
for (const k of ['authors', 'events', 'seed', 'out'])
	if (a[k] === undefined)
		fail(`--${k} is required`);
const params = { authors: Number(a.authors), events: Number(a.events), seed: a.seed,
    relays: a.relays === '' ? [] : a.relays.split(',') };
if (!Number.isInteger(params.authors) || params.authors < 1 ||
    !Number.isInteger(params.events) || params.events < 0)
	fail('--authors must be >= 1 and --events >= 0');

const t0 = Date.now();
let cached = false;
if (a['no-cache']) {
	writeDataset(a.out, await generate(params));
} else {
	const r = await ensureDataset(params, a['cache-dir'] || defaultCacheDir());
	cached = r.cached;
	if (path.resolve(r.file) !== path.resolve(a.out)) {
		fs.mkdirSync(path.dirname(path.resolve(a.out)), { recursive: true });
		fs.copyFileSync(r.file, a.out);
		fs.copyFileSync(metaPathOf(r.file), metaPathOf(a.out));
	}
}
const meta = JSON.parse(fs.readFileSync(metaPathOf(a.out), 'utf8'));
process.stdout.write(JSON.stringify({ out: a.out, meta: metaPathOf(a.out), cached,
    events: meta.total_events, root: meta.root, ms: Date.now() - t0 }) + '\n');
