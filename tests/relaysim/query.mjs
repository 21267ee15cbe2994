#!/usr/bin/env node
// Asks a running relaysim over HTTP, for shell scripts that have no curl or
// jq (and for https with the test CA):
//   node query.mjs --ready FILE [--ca FILE] COMMAND ...
//   url NAME | http NAME | port NAME | root | meta | dataset
//   stats NAME [FIELD] [--reset] | stats-all
//   truth MODE FILTER [--relays a,b] [--page-limit N] [--whole]   (MODE: match|pageable)
//   kick NAME | pause NAME MS | publish NAME FILE.jsonl
// Prints the answer on stdout; exits 1 on an HTTP error. It only ever talks
// to the URLs in the ready line.

import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { parseArgs } from 'node:util';

const { values: o, positionals: p } = parseArgs({ allowPositionals: true, options: {
	ready: { type: 'string' }, ca: { type: 'string' }, relays: { type: 'string' },
	'page-limit': { type: 'string', default: '500' }, whole: { type: 'boolean' },
	reset: { type: 'boolean' },
} });

function die(msg) {
	process.stderr.write(`query: ${msg}\n`);
	process.exit(1);
}

if (!o.ready)
	die('--ready FILE is required');
const line = fs.readFileSync(o.ready, 'utf8').split('\n').find((l) => l.includes('"ready"'));
if (!line)
	die(`no ready line in ${o.ready}`);
const ready = JSON.parse(line);
const ca = o.ca ? fs.readFileSync(o.ca) : undefined;

function relay(name) {
	const r = ready.relays.find((x) => x.name === name);
	if (!r)
		die(`no relay named ${name}`);
	return r;
}

function request(url, method = 'GET', body = null) {
	const mod = url.startsWith('https:') ? https : http;
	return new Promise((resolve, reject) => {
		const req = mod.request(url, { method, ca }, (res) => {
			let text = '';
			res.on('data', (c) => text += c);
			res.on('end', () => res.statusCode === 200 ? resolve(text) :
			    reject(new Error(`${res.statusCode}: ${text.trim()}`)));
		});
		req.on('error', reject);
		req.end(body);
	});
}

const out = (s) => process.stdout.write(s.endsWith('\n') ? s : s + '\n');
const base = (name) => relay(name).http;
const anyBase = () => ready.relays[0].http;

const commands = {
	url: (name) => out(relay(name).url),
	http: (name) => out(base(name)),
	port: (name) => out(String(relay(name).port)),
	root: () => out(ready.dataset.root),
	meta: () => out(ready.dataset.meta),
	dataset: async () => out(await request(`${anyBase()}/dataset`)),
	'stats-all': async () => out(await request(`${anyBase()}/stats?all=1`)),
	stats: async (name, field) => {
		const s = JSON.parse(await request(`${base(name)}/stats${o.reset ? '?reset=1' : ''}`));
		out(field === undefined ? JSON.stringify(s) : String(s[field]));
	},
	truth: async (mode, filter) => {
		const q = new URLSearchParams({ mode, filter, page_limit: o['page-limit'] });
		if (o.relays)
			q.set('relays', o.relays);
		if (o.whole)
			q.set('whole', '1');
		process.stdout.write(await request(`${anyBase()}/truth?${q}`));
	},
	kick: async (name) => out(await request(`${base(name)}/kick`, 'POST')),
	pause: async (name, ms) => out(await request(`${base(name)}/pause?ms=${ms}`, 'POST')),
	publish: async (name, file) => out(await request(`${base(name)}/publish`, 'POST',
	    fs.readFileSync(file))),
};

const fn = commands[p[0]];
if (!fn)
	die(`unknown command ${p[0] ?? '(none)'}; see the head of query.mjs`);
try {
	await fn(...p.slice(1));
} catch (e) {
	die(e.message);
}
