// net_echo_server.mjs — loopback peers for the src/net integration test.
//
// Usage: node net_echo_server.mjs CERTDIR
// CERTDIR holds good.pem/good.key (signed by ca.pem, names localhost,
// 127.0.0.1, ::1), wrong.pem/wrong.key (signed by ca.pem, names
// wrong.example only) and rogue.pem/rogue.key (localhost, signed by a CA
// the client is never told about).
//
// Prints one JSON line with the ports, then serves until killed:
//   ws      ws:// echo on 127.0.0.1 (plus /nip11 and /chunked over HTTP)
//   ws6     ws:// echo on ::1 only (0 when IPv6 loopback is missing)
//   wss     wss:// echo with the good certificate (127.0.0.1)
//   wrong   wss:// with the wrong-name certificate
//   rogue   wss:// with the untrusted certificate
//   hole    TCP that accepts and never answers
// Echo commands (text messages): "frag:A|B|C" answers with one message sent
// as three fragments; "big:N" answers with N bytes of 'x'; "cut" starts a
// 1000-byte frame, sends 10 bytes of it and drops the connection;
// "close:CODE" closes with that code; anything else is echoed back.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { WebSocketServer } from 'ws';

const dir = process.argv[2];
const read = (f) => readFileSync(`${dir}/${f}`);

const nip11 = JSON.stringify({ name: 'net test relay', supported_nips: [1, 11] });

function httpHandler(req, res) {
	const accept = req.headers.accept || '';
	if (req.url === '/nip11') {
		res.writeHead(200, {
			'Content-Type': 'application/nostr+json',
			'Content-Length': Buffer.byteLength(nip11),
			'X-Accept-Seen': accept,
		});
		res.end(nip11);
	} else if (req.url === '/chunked') {
		res.writeHead(200, { 'Content-Type': 'application/nostr+json' });
		res.write(nip11.slice(0, 10));
		setTimeout(() => { res.write(nip11.slice(10)); res.end(); }, 20);
	} else if (req.url === '/huge') {
		res.writeHead(200, { 'Content-Length': 1 << 20 });
		res.end(Buffer.alloc(1 << 20, 0x61));
	} else {
		res.writeHead(404);
		res.end('no');
	}
}

function onMessage(ws, data) {
	const s = data.toString();
	if (s.startsWith('frag:')) {
		const parts = s.slice(5).split('|');
		parts.forEach((p, i) => ws.send(p, { fin: i === parts.length - 1 }));
	} else if (s.startsWith('big:')) {
		ws.send('x'.repeat(Number(s.slice(4))));
	} else if (s === 'cut') {
		const sock = ws._socket;
		// FIN + text, 126 => 16-bit length 1000, then only 10 bytes.
		sock.write(Buffer.concat([Buffer.from([0x81, 126, 0x03, 0xe8]),
		    Buffer.alloc(10, 0x41)]));
		setTimeout(() => sock.destroy(), 20);
	} else if (s.startsWith('hold:')) {
		// Read nothing for a while: the sender's transport fills up.
		ws._socket.pause();
		ws.send('held');
		setTimeout(() => ws._socket.resume(), Number(s.slice(5)));
	} else if (s.startsWith('close:')) {
		ws.close(Number(s.slice(6)), 'asked to close');
	} else {
		ws.send(s);
	}
}

function wsOn(server) {
	const wss = new WebSocketServer({ server, perMessageDeflate: false,
	    maxPayload: 64 << 20 });
	wss.on('connection', (ws) => ws.on('message', (d) => onMessage(ws, d)));
	return wss;
}

function listen(server, host) {
	return new Promise((resolve) => {
		server.once('error', () => resolve(0));
		server.listen(0, host, () => resolve(server.address().port));
	});
}

function tlsServer(name) {
	const s = https.createServer({ cert: read(`${name}.pem`),
	    key: read(`${name}.key`) }, httpHandler);
	wsOn(s);
	return s;
}

const plain = http.createServer(httpHandler);
wsOn(plain);
const plain6 = http.createServer(httpHandler);
wsOn(plain6);
const holeConns = [];
const hole = net.createServer((c) => holeConns.push(c));

const ports = {
	ws: await listen(plain, '127.0.0.1'),
	ws6: await listen(plain6, '::1'),
	wss: await listen(tlsServer('good'), '127.0.0.1'),
	wrong: await listen(tlsServer('wrong'), '127.0.0.1'),
	rogue: await listen(tlsServer('rogue'), '127.0.0.1'),
	hole: await listen(hole, '127.0.0.1'),
};
process.stdout.write(JSON.stringify(ports) + '\n');
