// relay_protected.mjs — NIP-70 against cacheboxd's relay (relay.auth =
// none, relay.accept = roots), signed by nostr-tools: a protected event
// (tag ["-"]) of the root, sent
//   - without AUTH: refused "auth-required:", with an AUTH challenge;
//   - after an AUTH as another key: refused "restricted:" (and that key
//     still reads);
//   - after an AUTH as the root: accepted, and served by id;
// and the root's unprotected note, without AUTH: accepted as before.
//
//   node relay_protected.mjs PORT ROOT_SECRET_HEX OTHER_SECRET_HEX
//
// Prints one JSON object: per case the OK's [accepted, message], whether
// a challenge came, and what a REQ by id got (the events' ids, or the
// first word of CLOSED).
import WebSocket from 'ws';
import { finalizeEvent } from 'nostr-tools/pure';
import { makeAuthEvent } from 'nostr-tools/nip42';

const [port, rootHex, otherHex] = process.argv.slice(2);
const key = (h) => Uint8Array.from(Buffer.from(h, 'hex'));
const url = `ws://127.0.0.1:${port}`;
const now = Math.floor(Date.now() / 1000);

function note(sk, content, protect) {
	return finalizeEvent({ kind: 1, created_at: now, content,
	    tags: protect ? [['-']] : [] }, key(sk));
}

// One connection: send ev; on an AUTH challenge and an OK false, AUTH as
// authAs (if given) and send ev again; then REQ ev's id.
function attempt(ev, authAs) {
	return new Promise((resolve, reject) => {
		const ws = new WebSocket(url);
		const out = { challenge: false, ok: [] };
		let challenge = null, authed = false, got = [];
		const timer = setTimeout(() => { ws.terminate(); reject(new Error('timeout')); }, 30000);
		const req = () => ws.send(JSON.stringify(['REQ', 'r', { ids: [ev.id] }]));
		ws.on('open', () => ws.send(JSON.stringify(['EVENT', ev])));
		ws.on('message', (data) => {
			const m = JSON.parse(data.toString());
			if (m[0] === 'AUTH') {
				out.challenge = true;
				challenge = m[1];
			} else if (m[0] === 'OK' && m[1] === ev.id) {
				out.ok.push([m[2], m[3]]);
				if (m[2] === false && authAs && !authed && challenge) {
					const a = finalizeEvent(makeAuthEvent(url, challenge), key(authAs));
					authed = true;
					ws.send(JSON.stringify(['AUTH', a]));
				} else
					req();
			} else if (m[0] === 'OK') {
				out.auth = [m[2], m[3]];
				ws.send(JSON.stringify(['EVENT', ev]));
			} else if (m[0] === 'EVENT' && m[1] === 'r') {
				got.push(m[2].id);
			} else if ((m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === 'r') {
				out.req = m[0] === 'CLOSED' ? m[2].split(':')[0] : got;
				clearTimeout(timer);
				ws.close();
				resolve(out);
			}
		});
		ws.on('error', (e) => { clearTimeout(timer); reject(e); });
	});
}

const prot = note(rootHex, 'protected note', true);
const result = {
	id: prot.id,
	no_auth: await attempt(prot, null),
	other: await attempt(prot, otherHex),
	author: await attempt(prot, rootHex),
	plain: await attempt(note(rootHex, 'plain note', false), null),
};
console.log(JSON.stringify(result));
