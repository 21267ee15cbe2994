// fake_dns.mjs — a tiny DNS responder for tests, on 127.0.0.1 only.
//
//   node fake_dns.mjs [--port N] NAME=ADDR@DELAY_MS ...
//   e.g. node fake_dns.mjs fast.test=127.0.0.1@0 slow.test=127.0.0.1@8000
//
// Answers A (an IPv4 ADDR) or AAAA (an IPv6 ADDR) for each NAME after
// DELAY_MS, counted from the moment that query arrived; DELAY_MS "hold"
// holds the answers until SIGUSR1 (then every held query is answered and
// later ones at once; {"released":true} is logged first); the other type of
// a known name gets an empty NOERROR answer after the same delay; any other
// name gets NXDOMAIN at once. UDP and TCP (2-byte length prefix) on the same
// port. Prints {"ready":true,"port":N} once both listen, then one JSON line
// per query ("q") and per answer ("a") with the milliseconds since start,
// so a test can tell whether a name has been answered yet.
// It parses only what a stub resolver sends: one question, no compression.
import dgram from 'node:dgram';
import net from 'node:net';
import { isIPv4, isIPv6 } from 'node:net';

const T_A = 1, T_AAAA = 28, C_IN = 1, NXDOMAIN = 3;
const started = Date.now();
const names = new Map();
let port = 0;

function usage(msg) {
	process.stderr.write(`fake_dns: ${msg}\n` +
	    'usage: fake_dns.mjs [--port N] NAME=ADDR@DELAY_MS ...\n');
	process.exit(2);
}

const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
	if (args[i] === '--port') {
		port = Number(args[++i]);
		continue;
	}
	const m = /^([^=]+)=([^@]+)@(\d+|hold)$/.exec(args[i]);
	if (!m || !(isIPv4(m[2]) || isIPv6(m[2])))
		usage(`bad entry '${args[i]}'`);
	names.set(m[1].toLowerCase(), { addr: m[2],
	    delay: m[3] === 'hold' ? null : Number(m[3]) });
}
if (names.size === 0)
	usage('no names');

function log(obj) {
	process.stdout.write(JSON.stringify({ ...obj, ms: Date.now() - started }) + '\n');
}

// The question of a query: name (dotted, as sent), type, class, and the
// offset just past it. null when the message is not one plain question.
function parseQuestion(msg) {
	if (msg.length < 12 || (msg[2] & 0x80) || msg.readUInt16BE(4) !== 1)
		return null;
	const labels = [];
	let off = 12;
	for (;;) {
		if (off >= msg.length)
			return null;
		const len = msg[off++];
		if (len === 0)
			break;
		if (len > 63 || off + len > msg.length)
			return null;
		labels.push(msg.toString('latin1', off, off + len));
		off += len;
	}
	if (off + 4 > msg.length)
		return null;
	return { name: labels.join('.'), type: msg.readUInt16BE(off),
	    klass: msg.readUInt16BE(off + 2), end: off + 4 };
}

function addrBytes(addr) {
	if (isIPv4(addr))
		return Buffer.from(addr.split('.').map(Number));
	// Expand "::" and write eight 16-bit groups.
	const [head, tail] = addr.includes('::') ? addr.split('::') : [addr, null];
	const h = head ? head.split(':') : [];
	const t = tail ? tail.split(':') : [];
	const groups = tail === null ? h :
	    [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
	const b = Buffer.alloc(16);
	groups.forEach((g, i) => b.writeUInt16BE(parseInt(g, 16), i * 2));
	return b;
}

// The response to query msg: header, the question copied, maybe one answer.
function respond(msg, q, entry) {
	const flags = 0x8000 | (msg.readUInt16BE(2) & 0x7900) | 0x0080 |
	    (entry ? 0 : NXDOMAIN);
	let answer = Buffer.alloc(0);
	const want = entry && q.klass === C_IN &&
	    ((q.type === T_A && isIPv4(entry.addr)) ||
	     (q.type === T_AAAA && isIPv6(entry.addr)));
	if (want) {
		const rdata = addrBytes(entry.addr);
		answer = Buffer.alloc(12 + rdata.length);
		answer.writeUInt16BE(0xc00c, 0);	// the name of the question
		answer.writeUInt16BE(q.type, 2);
		answer.writeUInt16BE(C_IN, 4);
		answer.writeUInt32BE(5, 6);		// TTL, s
		answer.writeUInt16BE(rdata.length, 10);
		rdata.copy(answer, 12);
	}
	const head = Buffer.alloc(12);
	head.writeUInt16BE(msg.readUInt16BE(0), 0);
	head.writeUInt16BE(flags, 2);
	head.writeUInt16BE(1, 4);
	head.writeUInt16BE(want ? 1 : 0, 6);
	return Buffer.concat([head, msg.subarray(12, q.end), answer]);
}

// Answer msg through send(buf) after the name's delay.
function handle(msg, proto, send) {
	const q = parseQuestion(msg);
	if (q === null)
		return;
	const type = q.type === T_A ? 'A' : q.type === T_AAAA ? 'AAAA' : String(q.type);
	const entry = names.get(q.name.toLowerCase());
	log({ q: q.name, type, proto });
	const answer = () => {
		log({ a: q.name, type, proto, rcode: entry ? 0 : NXDOMAIN });
		send(respond(msg, q, entry));
	};
	if (entry && entry.delay === null)
		held.push(answer);
	else
		setTimeout(answer, entry ? entry.delay : 0);
}

// Answers of "hold" names, sent on SIGUSR1.
let held = [];
process.on('SIGUSR1', () => {
	log({ released: true });
	for (const e of names.values())
		if (e.delay === null)
			e.delay = 0;
	const now = held;
	held = [];
	now.forEach((answer) => answer());
});

function makeUdp() {
	const s = dgram.createSocket('udp4');
	s.on('message', (msg, rinfo) => handle(msg, 'udp',
	    (buf) => s.send(buf, rinfo.port, rinfo.address)));
	s.on('error', (e) => {
		process.stderr.write(`fake_dns: udp: ${e.message}\n`);
		process.exit(1);
	});
	return s;
}
let udp = makeUdp();

const tcp = net.createServer((sock) => {
	let acc = Buffer.alloc(0);
	sock.on('data', (d) => {
		acc = Buffer.concat([acc, d]);
		while (acc.length >= 2 && acc.length >= 2 + acc.readUInt16BE(0)) {
			const msg = acc.subarray(2, 2 + acc.readUInt16BE(0));
			acc = acc.subarray(2 + msg.length);
			handle(msg, 'tcp', (buf) => {
				const len = Buffer.alloc(2);
				len.writeUInt16BE(buf.length);
				if (!sock.destroyed)
					sock.write(Buffer.concat([len, buf]));
			});
		}
	});
	sock.on('error', () => {});
});

// An ephemeral UDP port may be taken on TCP: then try another one.
function listen(tries) {
	udp.bind(port, '127.0.0.1', () => {
		const p = udp.address().port;
		tcp.once('error', (e) => {
			if (e.code !== 'EADDRINUSE' || port !== 0 || tries === 0)
				throw e;
			udp.close();
			udp = makeUdp();
			listen(tries - 1);
		});
		tcp.listen(p, '127.0.0.1', () => process.stdout.write(
		    JSON.stringify({ ready: true, port: p }) + '\n'));
	});
}
listen(10);
for (const sig of ['SIGTERM', 'SIGINT'])
	process.on(sig, () => process.exit(0));
