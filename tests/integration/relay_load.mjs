// relay_load.mjs — well-behaved clients of cacheboxd's own relay for the
// backpressure test (test_relay_backpressure.sh), on the `ws` package.
//
//   node relay_load.mjs live URL FILTER N TIMEOUT_MS
//	One subscription; after EOSE count the live events until N came or
//	TIMEOUT_MS passed. Prints {"eose":bool,"stored":n,"live":n} when done.
//   node relay_load.mjs many URL CLIENTS SUBS MAX_MS
//	CLIENTS connections with SUBS subscriptions each (filters of several
//	shapes, all staying open for live events); prints {"ready":true,
//	"eose":n} once every subscription had its EOSE, and keeps them open
//	until it is killed or MAX_MS has passed.
import WebSocket from 'ws';

const [mode, url, ...rest] = process.argv.slice(2);

function open() {
	return new Promise((resolve, reject) => {
		const ws = new WebSocket(url);
		ws.on('open', () => resolve(ws));
		ws.on('error', reject);
	});
}

async function live(filter, n, timeout) {
	const ws = await open();
	const out = { eose: false, stored: 0, live: 0 };
	const done = () => {
		console.log(JSON.stringify(out));
		process.exit(0);
	};
	ws.on('message', (d) => {
		const m = JSON.parse(d.toString());
		if (m[0] === 'EOSE') {
			out.eose = true;
			console.error('eose');
		} else if (m[0] === 'EVENT' && !out.eose)
			out.stored++;
		else if (m[0] === 'EVENT' && ++out.live >= n)
			done();
	});
	ws.on('close', done);
	ws.send(JSON.stringify(['REQ', 'live', JSON.parse(filter)]));
	setTimeout(done, timeout);
}

const shapes = [
	(i) => ({ kinds: [1], limit: 20 }),
	(i) => ({ kinds: [7], limit: 10 }),
	(i) => ({ '#t': ['nostr'], limit: 5 }),
	(i) => ({ kinds: [0] }),
	(i) => ({ since: Math.floor(Date.now() / 1000) - 600, limit: 50 }),
	(i) => ({ kinds: [6], limit: 5 }),
	(i) => ({ '#t': ['relay', 'sqlite'], limit: 5 }),
	(i) => ({ kinds: [1, 7], limit: 30 }),
	(i) => ({ limit: 1 }),
	(i) => ({ kinds: [3], limit: 1 }),
];

async function many(clients, subs, hold) {
	let eose = 0;
	const want = clients * subs;
	const socks = [];
	let told = false;
	for (let c = 0; c < clients; c++) {
		const ws = await open();
		socks.push(ws);
		ws.on('message', (d) => {
			const m = JSON.parse(d.toString());
			if (m[0] === 'EOSE' && ++eose === want && !told) {
				told = true;
				console.log(JSON.stringify({ ready: true, eose }));
			}
		});
		for (let s = 0; s < subs; s++)
			ws.send(JSON.stringify(['REQ', `c${c}s${s}`,
			    shapes[(c + s) % shapes.length](s)]));
	}
	// Connected until killed, or until MAX_MS has passed.
	setTimeout(() => {
		if (!told)
			console.log(JSON.stringify({ ready: false, eose }));
		for (const ws of socks)
			ws.close();
		process.exit(0);
	}, hold);
}

if (mode === 'live')
	await live(rest[0], Number(rest[1]), Number(rest[2]));
else if (mode === 'many')
	await many(Number(rest[0]), Number(rest[1]), Number(rest[2]));
