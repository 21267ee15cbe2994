#!/usr/bin/env node
// Scriptable upstream Nostr relays for the cachebox test suite.
//   node relaysim.mjs --config FILE            serve; prints one JSON "ready" line
//   node relaysim.mjs --config FILE --truth FILTER [--relays a,b] [--ready FILE]
//   node relaysim.mjs --config FILE --truth-pageable FILTER [--page-limit N] [--whole]
// SIGTERM or SIGINT stops the relays and exits 0; SIGUSR2 prints the counters
// as one JSON line on stdout. This file only wires the command line to
// world.mjs; it never listens on anything but loopback.

import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { World, readConfig } from './world.mjs';

function fail(msg) {
	process.stderr.write(`relaysim: ${msg}\n`);
	process.exit(2);
}

let args;
try {
	args = parseArgs({ options: {
		config: { type: 'string' }, truth: { type: 'string' },
		'truth-pageable': { type: 'string' }, relays: { type: 'string' },
		ready: { type: 'string' }, 'page-limit': { type: 'string', default: '500' },
		whole: { type: 'boolean', default: false },
	} }).values;
} catch (e) {
	fail(e.message);
}
if (!args.config)
	fail('--config FILE is required');

// URLs for kind 10002 lists when not serving: from a saved ready line, else
// from fixed ports in the config.
function offlineUrls(cfg) {
	const urls = {};
	for (const rc of cfg.relays)
		if (rc.port)
			urls[rc.name] = `${rc.tls ? 'wss' : 'ws'}://${rc.url_host ??
			    (rc.tls ? 'localhost' : '127.0.0.1')}:${rc.port}`;
	if (args.ready) {
		const line = fs.readFileSync(args.ready, 'utf8').split('\n').find((l) =>
		    l.includes('"ready"'));
		for (const r of JSON.parse(line).relays)
			urls[r.name] = r.url;
	}
	return urls;
}

async function truthMode(world) {
	const mode = args.truth !== undefined ? 'match' : 'pageable';
	await world.fill(offlineUrls(world.cfg));
	const ids = world.truth(mode, args.truth ?? args['truth-pageable'], args.relays,
	    Number(args['page-limit']), args.whole);
	process.stdout.write(ids.map((id) => id + '\n').join(''));
}

async function serve(world) {
	await world.listen();
	await world.fill(Object.fromEntries(world.relays.map((r) => [r.name, r.url])));
	const stop = () => {
		world.close();
		process.exit(0);
	};
	process.on('SIGTERM', stop);
	process.on('SIGINT', stop);
	process.on('SIGUSR2', () => process.stdout.write(JSON.stringify({
	    stats: world.allStats() }) + '\n'));
	const info = world.publicInfo();
	process.stdout.write(JSON.stringify({ ready: true, pid: process.pid,
	    relays: world.relays.map((r) => ({ name: r.name, url: r.url, http: r.httpUrl,
		tls: Boolean(r.rc.tls), port: r.port, stored: r.store.size })),
	    dataset: { file: info.file, meta: info.meta, root: info.root,
		authors: info.authors.length, events: info.total_events } }) + '\n');
}

try {
	const world = new World(readConfig(args.config));
	await world.init();
	if (args.truth !== undefined || args['truth-pageable'] !== undefined)
		await truthMode(world);
	else
		await serve(world);
} catch (e) {
	fail(e.message);
}
