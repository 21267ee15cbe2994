// relay_auth.mjs — NIP-42 against cacheboxd's relay with relay.auth =
// owners, signed by nostr-tools (an independent signer): an AUTH for
// another relay's URL is refused, whatever else is right in it; an AUTH
// naming one of the URLs the box answers as lets the key read.
//
//   node relay_auth.mjs PORT SECRET_HEX BOX_NAME
//
// SECRET_HEX is a key of relay.readers; BOX_NAME a name of box.names.
// Prints one JSON object: for each case the OK's [accepted, message] and
// what a REQ got afterwards (the first word of its answer).
import WebSocket from 'ws';
import { finalizeEvent } from 'nostr-tools/pure';
import { makeAuthEvent } from 'nostr-tools/nip42';

const [port, secHex, boxName] = process.argv.slice(2);
const sec = Uint8Array.from(Buffer.from(secHex, 'hex'));
const url = `ws://127.0.0.1:${port}`;

// Open a connection, wait for the challenge, AUTH for relayTag, then REQ.
function attempt(relayTag, challengeOf = (c) => c) {
	return new Promise((resolve, reject) => {
		const ws = new WebSocket(url);
		const out = { relay: relayTag };
		const timer = setTimeout(() => { ws.terminate(); reject(new Error('timeout ' + relayTag)); }, 30000);
		ws.on('message', (data) => {
			const m = JSON.parse(data.toString());
			if (m[0] === 'AUTH') {
				const ev = finalizeEvent(makeAuthEvent(relayTag, challengeOf(m[1])), sec);
				ws.send(JSON.stringify(['AUTH', ev]));
			} else if (m[0] === 'OK') {
				out.ok = [m[2], m[3]];
				ws.send(JSON.stringify(['REQ', 'r', { kinds: [0], limit: 1 }]));
			} else if ((m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === 'r') {
				out.req = m[0] === 'CLOSED' ? m[2].split(':')[0] : 'EOSE';
				clearTimeout(timer);
				ws.close();
				resolve(out);
			}
		});
		ws.on('error', (e) => { clearTimeout(timer); reject(e); });
	});
}

const cases = [
	'wss://evil.example/',
	'ws://evil.example:' + port,
	'ws://evil-cachebox.local/',
	'ws://cachebox.local.evil.example/',
	'wss://cachebox.local/relay',
	'http://127.0.0.1:' + port,
	'ws://user@127.0.0.1:' + port,
	'ws://198.51.100.7:' + port,
	url,
	url + '/',
	'wss://CACHEBOX.local/',
	'ws://cachebox.local:' + port,
	'wss://' + boxName,
	'ws://[::1]:' + port + '/',
];
const result = { cases: [] };
for (const c of cases)
	result.cases.push(await attempt(c));
// The right URL with a wrong challenge is still refused.
result.wrong_challenge = await attempt(url, (c) => c + '0');
console.log(JSON.stringify(result));
