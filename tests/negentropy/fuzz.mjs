// fuzz.mjs — drives two negentropy conformance harnesses against each other,
// in the manner of the reference repository's test/fuzz.pl: it makes two
// item sets with a shared part and extras on each side, feeds them to an
// initiator and a responder process, relays every msg line between them,
// and checks that the initiator's have and need ids are exactly the two
// set differences (so both sides would end with the union).
//
//   node fuzz.mjs [--init c|sync|nostr-tools] [--resp c|sync]
//                 [--recs N | --clustered [--segs S] [--per-seg K]]
//                 [--p1 A] [--p2 B] [--p3 C] [--limit1 BYTES] [--limit2 BYTES]
//                 [--seed S] [--shadow IMPL] [--stats] [--dump DIR]
//                 [--timeout SECONDS]
//
// --recs N      N items, timestamps drawn from N seconds (many share one);
// --clustered   up to S runs of up to K consecutive seconds, each run wholly
//               on side 1, side 2 or both (long stretches in common);
// --p1/p2/p3    weights of "side 1 only", "side 2 only", "both" (1/1/98);
// --limit1/2    FRAMESIZELIMIT of the initiator / responder (0 = none);
// --shadow IMPL a second initiator of another implementation is fed the
//               same replies; its messages must equal the initiator's byte
//               for byte (except the 16 bytes of a closing fingerprint,
//               see src/nostr/negentropy.c) and its have/need the same ids;
// --stats       CPU seconds and peak RSS (VmHWM) of each harness process;
// --dump DIR    write the two sets as DIR/set1, DIR/set2 ("created,id").
// Harnesses: c is `$CACHEBOXCTL negentropy harness` (default
// build/src/cacheboxctl), the others tests/negentropy/harness.mjs.
// Prints one summary line; exits 0 when the check holds, 1 otherwise.
// The only timer is a generous overall one (--timeout, default 900 s).

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../relaysim/prng.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const BASE_TS = 1677970534;

function parseArgs(argv) {
	const o = { init: 'c', resp: 'c', recs: 1000, clustered: false, segs: 2000,
	    perSeg: 50, p1: 1, p2: 1, p3: 98, limit1: 0, limit2: 0, seed: 1,
	    shadow: null, stats: false, dump: null, timeout: 900 };
	const names = { '--per-seg': 'perSeg' };
	for (let i = 0; i < argv.length; i++) {
		const key = names[argv[i]] ?? argv[i].replace(/^--/, '');
		if (!(key in o))
			throw new Error(`unknown option ${argv[i]}`);
		if (typeof o[key] === 'boolean')
			o[key] = true;
		else
			o[key] = typeof o[key] === 'number' ? Number(argv[++i]) : argv[++i];
	}
	return o;
}

// The two sets: ids of side 1 and side 2 (Sets of hex) and the item lines.
function makeSets(o) {
	const rng = new Rng(`negentropy-fuzz:${o.seed}`);
	const total = o.p1 + o.p2 + o.p3;
	const s = { ids1: new Set(), ids2: new Set(), lines1: [], lines2: [] };
	const pick = () => {
		const r = rng.next() * total;
		return r < o.p1 ? 1 : r < o.p1 + o.p2 ? 2 : 3;
	};
	const put = (side, created) => {
		let id = '';
		for (let k = 0; k < 8; k++)
			id += rng.u32().toString(16).padStart(8, '0');
		if (side & 1) { s.ids1.add(id); s.lines1.push(`${created},${id}`); }
		if (side & 2) { s.ids2.add(id); s.lines2.push(`${created},${id}`); }
	};
	if (o.clustered) {
		let cur = 0;
		const segs = Math.floor(rng.next() * o.segs);
		for (let g = 0; g < segs; g++) {
			const side = pick(), n = Math.floor(rng.next() * o.perSeg) + 1;
			for (let k = 0; k < n; k++)
				put(side, BASE_TS + cur++);
		}
	} else {
		for (let k = 0; k < o.recs; k++)
			put(pick(), BASE_TS + Math.floor(rng.next() * o.recs));
	}
	return s;
}

function harnessCmd(impl) {
	if (impl === 'c') {
		const ctl = process.env.CACHEBOXCTL ??
		    join(here, '../../build/src/cacheboxctl');
		const emu = (process.env.CACHEBOX_EMULATOR ?? '').split(' ').filter(Boolean);
		return [...emu, ctl, 'negentropy', 'harness'];
	}
	if (impl === 'sync' || impl === 'nostr-tools')
		return [process.execPath, join(here, 'harness.mjs'), impl];
	throw new Error(`unknown harness ${impl}`);
}

// One harness process: lines out of it arrive through next().
class Harness {
	constructor(name, impl, limit) {
		const [cmd, ...args] = harnessCmd(impl);
		this.name = name;
		this.lines = [];
		this.waiters = [];
		this.partial = '';
		this.stderr = '';
		this.ended = false;
		this.proc = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'],
		    env: { ...process.env, FRAMESIZELIMIT: String(limit) } });
		this.proc.stdout.setEncoding('utf8');
		this.proc.stdout.on('data', (d) => this.onData(d));
		this.proc.stderr.on('data', (d) => { this.stderr += d; });
		this.proc.on('close', (code) => { this.ended = true; this.code = code; this.wake(); });
		this.proc.stdin.on('error', () => {});
	}

	onData(d) {
		const parts = (this.partial + d).split('\n');
		this.partial = parts.pop();
		this.lines.push(...parts);
		this.wake();
	}

	wake() {
		while (this.waiters.length && (this.lines.length || this.ended)) {
			const w = this.waiters.shift();
			if (this.lines.length)
				w.resolve(this.lines.shift());
			else
				w.reject(new Error(`${this.name} exited (${this.code}): ${this.stderr.trim()}`));
		}
	}

	next() {
		return new Promise((resolve, reject) => {
			this.waiters.push({ resolve, reject });
			this.wake();
		});
	}

	async write(text) {
		if (!this.proc.stdin.write(text))
			await new Promise((r) => this.proc.stdin.once('drain', r));
	}

	async feed(lines) {
		const chunk = 4096;
		for (let i = 0; i < lines.length; i += chunk)
			await this.write(lines.slice(i, i + chunk).map((l) => `item,${l}\n`).join(''));
		await this.write('seal\n');
	}

	// CPU seconds and peak RSS of the process so far (Linux /proc).
	stats() {
		const stat = readFileSync(`/proc/${this.proc.pid}/stat`, 'utf8');
		const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		const status = readFileSync(`/proc/${this.proc.pid}/status`, 'utf8');
		const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
		return { cpu: (Number(f[11]) + Number(f[12])) / 100,
		    hwmKiB: hwm ? Number(hwm[1]) : 0 };
	}

	async close() {
		this.proc.stdin.end();
		if (!this.ended)
			await new Promise((r) => this.proc.once('close', r));
		return this.code;
	}
}

// The closing range's fingerprint is the one place the C codec differs
// from the reference on purpose: hide it when comparing messages.
function maskClosing(hex) {
	const tail = 2 * 19;
	if (hex.length >= 2 + tail && hex.slice(-tail, -32) === '000001')
		return hex.slice(0, -32) + '*'.repeat(32);
	return hex;
}

// Read one initiator's answer to a message: its have/need and next line.
async function answer(h, out) {
	for (;;) {
		const line = await h.next();
		const [kind, hex] = line.split(',');
		if (kind === 'have' || kind === 'need')
			out[kind].push(hex);
		else if (kind === 'msg' || kind === 'done')
			return { kind, hex: hex ?? '' };
		else
			throw new Error(`${h.name}: unexpected line '${line.slice(0, 80)}'`);
	}
}

async function compareShadow(sh, got, reply, round) {
	await sh.write(`msg,${reply}\n`);
	const mine = { have: [], need: [] };
	const a = await answer(sh, mine);
	const same = (x, y) => x.length === y.length && [...x].sort().join() === [...y].sort().join();
	if (a.kind !== got.step.kind || maskClosing(a.hex) !== maskClosing(got.step.hex))
		throw new Error(`round ${round}: shadow initiator's message differs`);
	if (!same(mine.have, got.ids.have) || !same(mine.need, got.ids.need))
		throw new Error(`round ${round}: shadow initiator's have/need differ`);
}

async function run(o, sets) {
	const h1 = new Harness(`initiator (${o.init})`, o.init, o.limit1);
	const h2 = new Harness(`responder (${o.resp})`, o.resp, o.limit2);
	const sh = o.shadow ? new Harness(`shadow (${o.shadow})`, o.shadow, o.limit1) : null;
	const r = { have: [], need: [], rounds: 0, up: 0, down: 0, stats: null };
	try {
		await Promise.all([h1.feed(sets.lines1), h2.feed(sets.lines2),
		    sh?.feed(sets.lines1)]);
		await h1.write('initiate\n');
		let step = await answer(h1, r);
		if (sh) {
			await sh.write('initiate\n');
			const first = await answer(sh, { have: [], need: [] });
			if (maskClosing(first.hex) !== maskClosing(step.hex))
				throw new Error('shadow initiator\'s first message differs');
		}
		while (step.kind === 'msg') {
			r.up += step.hex.length / 2;
			await h2.write(`msg,${step.hex}\n`);
			const line = await h2.next();
			if (!line.startsWith('msg,'))
				throw new Error(`responder: unexpected line '${line.slice(0, 80)}'`);
			const reply = line.slice(4);
			r.down += reply.length / 2;
			r.rounds++;
			await h1.write(`msg,${reply}\n`);
			const ids = { have: [], need: [] };
			step = await answer(h1, ids);
			if (sh)
				await compareShadow(sh, { step, ids }, reply, r.rounds);
			r.have.push(...ids.have);
			r.need.push(...ids.need);
		}
		if (o.stats)
			r.stats = [h1.stats(), h2.stats()];
		for (const h of [h1, h2, sh].filter(Boolean))
			if (await h.close() !== 0)
				throw new Error(`${h.name} exited ${h.code}: ${h.stderr.trim()}`);
	} finally {
		for (const h of [h1, h2, sh].filter(Boolean))
			if (!h.ended)
				h.proc.kill('SIGKILL');
	}
	return r;
}

// have must be exactly ids1 - ids2, need exactly ids2 - ids1. Repeats are
// allowed only under a frame-size limit (see negentropy.h).
function verdict(o, sets, r) {
	const errs = [];
	const check = (name, got, mine, theirs) => {
		const seen = new Set(got);
		if (seen.size !== got.length && !o.limit1 && !o.limit2)
			errs.push(`${name}: ${got.length - seen.size} ids reported twice`);
		for (const id of seen)
			if (!mine.has(id) || theirs.has(id))
				errs.push(`${name}: ${id} is not in the difference`);
		for (const id of mine)
			if (!theirs.has(id) && !seen.has(id))
				errs.push(`${name}: ${id} missing`);
		return seen.size;
	};
	const have = check('have', r.have, sets.ids1, sets.ids2);
	const need = check('need', r.need, sets.ids2, sets.ids1);
	return { errs, have, need };
}

async function main() {
	const o = parseArgs(process.argv.slice(2));
	const sets = makeSets(o);
	if (o.dump) {
		mkdirSync(o.dump, { recursive: true });
		writeFileSync(join(o.dump, 'set1'), sets.lines1.join('\n') + '\n');
		writeFileSync(join(o.dump, 'set2'), sets.lines2.join('\n') + '\n');
	}
	const timer = setTimeout(() => {
		console.log(`FAIL timed out after ${o.timeout} s`);
		process.exit(1);
	}, o.timeout * 1000);
	const what = `${o.init}->${o.resp}${o.shadow ? `(+${o.shadow})` : ''} ` +
	    `${o.clustered ? `clustered segs<=${o.segs}` : `recs=${o.recs}`} ` +
	    `sets=${sets.ids1.size}/${sets.ids2.size} limits=${o.limit1}/${o.limit2} seed=${o.seed}`;
	let r;
	try {
		r = await run(o, sets);
	} catch (err) {
		console.log(`FAIL ${what}: ${err.message}`);
		process.exit(1);
	}
	clearTimeout(timer);
	const v = verdict(o, sets, r);
	const figures = `have=${v.have} need=${v.need} rounds=${r.rounds} up=${r.up} down=${r.down}`;
	const stats = r.stats ? ` init_cpu=${r.stats[0].cpu}s init_hwm=${r.stats[0].hwmKiB}KiB ` +
	    `resp_cpu=${r.stats[1].cpu}s resp_hwm=${r.stats[1].hwmKiB}KiB` : '';
	if (v.errs.length) {
		console.log(`FAIL ${what}: ${v.errs.slice(0, 5).join('; ')}`);
		process.exit(1);
	}
	console.log(`ok ${what}: ${figures}${stats}`);
}

await main();
