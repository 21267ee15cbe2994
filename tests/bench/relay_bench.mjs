// relay_bench.mjs — the client side of relay_serve.sh, the same for both
// relays it compares. It prints one JSON line per workload; it never
// judges.
//
//   node relay_bench.mjs stream URL
//	REQ {"kinds":[1],"limit":5000}, then again with until = the oldest
//	created_at received, until a page brings nothing new: events and
//	events/s over the whole store (ids deduplicated across pages).
//   node relay_bench.mjs latency URL EVENTS.jsonl N
//	N typical REQs one after another on one connection, round trip from
//	REQ to EOSE: a third {"authors":[a],"kinds":[1],"limit":100}, a third
//	{"#e":[id]} (a thread), a third {"#p":[pk],"limit":100} (mentions);
//	p50, p99, and a digest of the answers to compare relays by.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createHash } from 'node:crypto';
import WebSocket from 'ws';

const [mode, url, file, count] = process.argv.slice(2);

function open() {
	return new Promise((resolve, reject) => {
		const ws = new WebSocket(url, { maxPayload: 64 * 1024 * 1024 });
		ws.on('open', () => resolve(ws));
		ws.on('error', reject);
	});
}

// The fields a page needs, without parsing the whole event.
function fields(s) {
	const i = s.indexOf('"id":"');
	const c = s.indexOf('"created_at":');
	return { id: s.slice(i + 6, i + 70),
	    at: parseInt(s.slice(c + 13, c + 30), 10) };
}

// One REQ: the events (id, created_at) up to EOSE or CLOSED.
function req(ws, sub, filter) {
	return new Promise((resolve) => {
		const got = [];
		const onmsg = (d) => {
			const s = d.toString();
			if (s.startsWith('["EVENT"')) {
				got.push(fields(s));
			} else if (s.startsWith('["EOSE"') || s.startsWith('["CLOSED"')) {
				ws.off('message', onmsg);
				resolve(got);
			}
		};
		ws.on('message', onmsg);
		ws.send(JSON.stringify(['REQ', sub, filter]));
	});
}

async function stream() {
	const ws = await open();
	const seen = new Set();
	let until, pages = 0, received = 0;
	const t0 = process.hrtime.bigint();
	for (;;) {
		const f = { kinds: [1], limit: 5000 };
		if (until !== undefined)
			f.until = until;
		const got = await req(ws, `p${pages}`, f);
		ws.send(JSON.stringify(['CLOSE', `p${pages}`]));
		pages++;
		received += got.length;
		let fresh = 0;
		for (const e of got) {
			if (!seen.has(e.id)) {
				seen.add(e.id);
				fresh++;
			}
			if (until === undefined || e.at < until)
				until = e.at;
		}
		if (fresh === 0)
			break;
	}
	const s = Number(process.hrtime.bigint() - t0) / 1e9;
	ws.close();
	console.log(JSON.stringify({ events: seen.size, received, pages,
	    seconds: s, events_per_s: Math.round(seen.size / s) }));
}

async function targets() {
	const authors = [], es = [], ps = [];
	const lines = createInterface({ input: createReadStream(file) });
	let n = 0;
	for await (const line of lines) {
		if (!line)
			continue;
		const e = JSON.parse(line);
		if (e.kind === 0)
			authors.push(e.pubkey);
		else if (n++ % 50 === 0)
			for (const t of e.tags) {
				if (t[0] === 'e' && es.length < 2000)
					es.push(t[1]);
				if (t[0] === 'p' && ps.length < 2000)
					ps.push(t[1]);
			}
		if (n > 200000)
			break;
	}
	lines.close();
	return { authors, es, ps };
}

async function latency() {
	const { authors, es, ps } = await targets();
	const ws = await open();
	const times = [];
	const digest = createHash('sha256');
	let results = 0;
	for (let i = 0; i < Number(count); i++) {
		const f = i % 3 === 0 ? { authors: [authors[i % authors.length]],
		    kinds: [1], limit: 100 } : i % 3 === 1 ?
		    { '#e': [es[i % es.length]] } :
		    { '#p': [ps[i % ps.length]], limit: 100 };
		const t0 = process.hrtime.bigint();
		const got = await req(ws, `l${i}`, f);
		times.push(Number(process.hrtime.bigint() - t0) / 1e6);
		ws.send(JSON.stringify(['CLOSE', `l${i}`]));
		results += got.length;
		if (i % 3 === 1)	/* whole threads: comparable across relays */
			digest.update(got.map((e) => e.id).sort().join(','));
	}
	ws.close();
	times.sort((a, b) => a - b);
	const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
	console.log(JSON.stringify({ reqs: times.length, results,
	    p50_ms: +q(0.5).toFixed(2), p99_ms: +q(0.99).toFixed(2),
	    max_ms: +times[times.length - 1].toFixed(2),
	    threads_digest: digest.digest('hex').slice(0, 16) }));
}

if (mode === 'stream')
	await stream();
else
	await latency();
process.exit(0);
