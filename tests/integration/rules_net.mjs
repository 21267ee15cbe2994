// rules_net.mjs — the authors' rules across every path, for
// test_event_rules.sh: the cases (rule x order x path) signed with the
// dataset's keys, a brute-force model of NIP-01/09/40/62 written here from
// the NIPs (independently of the C code), and the clients that talk to the
// box's own relay.
//
//   node rules_net.mjs cases META NOW OUTDIR   sign the cases: OUTDIR/first.jsonl
//                                              (the first arrivals, imported), and
//                                              per path the second arrivals:
//                                              OUTDIR/<path>.jsonl; OUTDIR/cases.json
//   node rules_net.mjs dump URL                every event a relay holds, JSONL
//   node rules_net.mjs publish URL FILE        EVENT each line to URL; prints
//                                              {"accepted": n, "refused": [..]}
//   node rules_net.mjs served URL              the ids a REQ {} gets, one a line,
//                                              then a COUNT's answer on stderr
//   node rules_net.mjs model NOW FILE...       the ids the NIPs keep of the union
//                                              of FILEs, one a line
//
// A case is one author of the dataset (its own key, so cases never touch
// each other) and one rule: a target and what withdraws it (a newer
// version, a kind 5 by id or by address, a kind 62), arriving in either
// order, the second of them by one path; or one event that is withdrawn on
// its own (already expired, ephemeral). The first arrival of every case is
// imported before the second, so the order is fixed by construction.
import fs from 'node:fs';
import WebSocket from 'ws';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';

const PATHS = ['drain', 'nip77', 'recovery', 'live', 'job', 'import', 'publish'];
const key = (h) => Uint8Array.from(Buffer.from(h, 'hex'));
const hex = (b) => Buffer.from(b).toString('hex');

function sign(sk, kind, at, tags, content) {
	return finalizeEvent({ kind, created_at: at, tags, content }, key(sk));
}

// The events of one case: [target, withdrawal] or [single].
function caseEvents(rule, a, t) {
	const pk = a.pubkey;
	switch (rule) {
	case 'replace': {
		const older = sign(a.seckey, 10030, t, [], 'older');
		return [older, sign(a.seckey, 10030, t + 10, [], 'newer')];
	}
	case 'address': {
		const art = sign(a.seckey, 30023, t, [['d', 'post']], 'article');
		return [art, sign(a.seckey, 5, t + 10, [['a', `30023:${pk}:post`]], '')];
	}
	case 'delete': {
		const note = sign(a.seckey, 1, t, [], 'to be deleted');
		return [note, sign(a.seckey, 5, t + 10, [['e', note.id]], '')];
	}
	case 'vanish': {
		const note = sign(a.seckey, 1, t, [], 'before vanishing');
		return [note, sign(a.seckey, 62, t + 10, [['relay', 'ALL_RELAYS']], 'bye')];
	}
	case 'wrap': {
		const w = hex(generateSecretKey());
		const wrap = sign(w, 1059, t, [['p', pk]], 'sealed');
		return [wrap, sign(a.seckey, 5, t + 10, [['e', wrap.id]], '')];
	}
	case 'expired':
		return [sign(a.seckey, 1, t, [['expiration', String(t + 5)]], 'gone')];
	case 'ephemeral':
		return [sign(a.seckey, 20001, t, [], 'now only')];
	default:
		throw new Error(`unknown rule ${rule}`);
	}
}

// Which paths can carry each rule's second arrival: relays keep no
// ephemeral event, a gift wrap's signer is nobody the box follows.
function paths(rule) {
	if (rule === 'ephemeral')
		return ['live', 'import', 'publish'];
	if (rule === 'wrap')
		return ['job', 'import'];
	return PATHS;
}

function cases(metaFile, now, outdir) {
	const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
	const authors = meta.authors.filter((a) => a.index !== 0);
	const used = new Set();
	// The next author not used yet; for the live path one who writes to
	// the relay in slot 1 (the box subscribes each author where it writes).
	const take = (path) => {
		const a = authors.find((x) => !used.has(x.index) &&
		    (path !== 'live' || x.write_relays.includes('1')));
		if (a === undefined)
			throw new Error(`the dataset has too few authors (for ${path})`);
		used.add(a.index);
		return a;
	};
	const out = { first: [] };
	const list = [];
	let n = 0;
	for (const rule of ['replace', 'address', 'delete', 'vanish', 'wrap', 'expired', 'ephemeral']) {
		const orders = ['expired', 'ephemeral'].includes(rule) ? ['single'] :
		    ['target-first', 'withdrawal-first'];
		for (const order of orders) {
			for (const path of paths(rule)) {
				const a = take(path);
				// Live events are newer than live's since (now less
				// live.overlap_s); the others older, so only their
				// own path brings them.
				n++;
				const t = rule === 'ephemeral' ? now : path === 'live' ?
				    now - 200 + n : now - 5000 + n;
				const evs = caseEvents(rule, a, t);
				let first = [], second = evs;
				if (order === 'target-first')
					[first, second] = [[evs[0]], [evs[1]]];
				else if (order === 'withdrawal-first')
					[first, second] = [[evs[1]], [evs[0]]];
				out.first.push(...first);
				(out[path] ??= []).push(...second);
				list.push({ rule, order, path, author: a.pubkey,
				    ids: evs.map((e) => e.id) });
			}
		}
	}
	fs.mkdirSync(outdir, { recursive: true });
	for (const [name, evs] of Object.entries(out))
		fs.writeFileSync(`${outdir}/${name}.jsonl`,
		    evs.map((e) => JSON.stringify(e)).join('\n') + (evs.length ? '\n' : ''));
	fs.writeFileSync(`${outdir}/cases.json`, JSON.stringify(list));
	// What the jobs ask: the job path's authors (a recipient's deletion of a
	// gift wrap too), and the gift wraps' recipients (the wraps themselves).
	const job = list.filter((c) => c.path === 'job');
	fs.writeFileSync(`${outdir}/job_authors.txt`, job.map((c) => c.author).join(',') + '\n');
	fs.writeFileSync(`${outdir}/job_recipients.txt`, job.filter((c) => c.rule === 'wrap')
	    .map((c) => c.author).join(',') + '\n');
	process.stdout.write(`${list.length} cases, ${used.size} authors\n`);
}

// ---- the model --------------------------------------------------------------

const replaceable = (k) => k === 0 || k === 3 || (k >= 10000 && k < 20000) ||
    (k >= 30000 && k < 40000);
const tagv = (e, n) => e.tags.find((t) => t[0] === n)?.[1];
const hasTag = (e, n, v) => e.tags.some((t) => t[0] === n && t[1] === v);
const dOf = (e) => e.kind >= 30000 && e.kind < 40000 ? (tagv(e, 'd') ?? '') : '';
const newer = (x, y) => x.created_at > y.created_at ||
    (x.created_at === y.created_at && x.id < y.id);

// A kind 62 meant for every relay covering e of pubkey pk.
function vanishes(w, pk, e) {
	return w.kind === 62 && w.pubkey === pk && hasTag(w, 'relay', 'ALL_RELAYS') &&
	    w.created_at >= e.created_at && w.id !== e.id;
}

function kept(e, all, now) {
	if (e.kind >= 20000 && e.kind < 30000)
		return false;
	const exp = tagv(e, 'expiration');
	if (exp !== undefined && /^[0-9]+$/.test(exp) && Number(exp) <= now)
		return false;
	const rcpt = e.kind === 1059 ? e.tags.filter((t) => t[0] === 'p').map((t) => t[1]) : [];
	for (const w of all) {
		if (vanishes(w, e.pubkey, e) || rcpt.some((p) => vanishes(w, p, e)))
			return false;
		if (w.kind === 5 && e.kind !== 5 && e.kind !== 62 && hasTag(w, 'e', e.id) &&
		    (w.pubkey === e.pubkey || rcpt.includes(w.pubkey)))
			return false;
		if (!replaceable(e.kind) || w.id === e.id)
			continue;
		if (w.pubkey === e.pubkey && w.kind === e.kind && dOf(w) === dOf(e) &&
		    newer(w, e))
			return false;
		if (w.kind === 5 && w.pubkey === e.pubkey && w.created_at >= e.created_at &&
		    hasTag(w, 'a', `${e.kind}:${e.pubkey}:${dOf(e)}`))
			return false;
	}
	return true;
}

function model(now, files) {
	const all = new Map();
	for (const f of files)
		for (const l of fs.readFileSync(f, 'utf8').split('\n'))
			if (l.trim() !== '') {
				const e = JSON.parse(l);
				all.set(e.id, e);
			}
	const evs = [...all.values()];
	const ids = evs.filter((e) => kept(e, evs, now)).map((e) => e.id).sort();
	process.stdout.write(ids.join('\n') + (ids.length ? '\n' : ''));
}

// ---- clients ----------------------------------------------------------------

function connect(url) {
	return new Promise((resolve, reject) => {
		const ws = new WebSocket(url);
		ws.on('open', () => resolve(ws));
		ws.on('error', reject);
	});
}

// Send frames and collect messages until done(msg) says so (60 s at most).
function exchange(ws, frames, done) {
	return new Promise((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error('no answer in 60 s')), 60000);
		ws.on('message', (data) => {
			if (done(JSON.parse(data.toString()))) {
				clearTimeout(timer);
				resolve();
			}
		});
		for (const f of frames)
			ws.send(JSON.stringify(f));
	});
}

async function dump(url) {
	const ws = await connect(url);
	const lines = [];
	await exchange(ws, [['REQ', 'all', { limit: 1000000 }]], (m) => {
		if (m[0] === 'EVENT')
			lines.push(JSON.stringify(m[2]));
		return m[0] === 'EOSE' || m[0] === 'CLOSED';
	});
	ws.close();
	process.stdout.write(lines.join('\n') + (lines.length ? '\n' : ''));
}

async function publish(url, file) {
	const evs = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim())
	    .map((l) => JSON.parse(l));
	const ws = await connect(url);
	const res = { accepted: 0, refused: [] };
	let left = evs.length;
	if (left > 0)
		await exchange(ws, evs.map((e) => ['EVENT', e]), (m) => {
			if (m[0] !== 'OK')
				return false;
			if (m[2])
				res.accepted++;
			else
				res.refused.push([m[1], m[3]]);
			return --left === 0;
		});
	ws.close();
	process.stdout.write(JSON.stringify(res) + '\n');
}

async function served(url) {
	const ws = await connect(url);
	const ids = [];
	let count = null, eose = false;
	await exchange(ws, [['REQ', 'all', {}], ['COUNT', 'n', {}]], (m) => {
		if (m[0] === 'EVENT')
			ids.push(m[2].id);
		else if (m[0] === 'COUNT')
			count = m[2].count;
		else if (m[0] === 'EOSE')
			eose = true;
		return count !== null && eose;
	});
	ws.close();
	ids.sort();
	process.stdout.write(ids.join('\n') + (ids.length ? '\n' : ''));
	process.stderr.write(`count ${count}\n`);
}

const [cmd, ...args] = process.argv.slice(2);
const commands = {
	cases: () => cases(args[0], Number(args[1]), args[2]),
	dump: () => dump(args[0]),
	publish: () => publish(args[0], args[1]),
	served: () => served(args[0]),
	model: () => model(Number(args[0]), args.slice(1)),
};
if (!commands[cmd]) {
	process.stderr.write('usage: rules_net.mjs cases|dump|publish|served|model ...\n');
	process.exit(2);
}
Promise.resolve(commands[cmd]()).catch((e) => {
	process.stderr.write(`rules_net: ${e.message}\n`);
	process.exit(1);
});
