// NIP-77 (negentropy) on one simulated relay: the responder sessions of its
// connections and the ways a relay refuses or ignores them (the `negentropy`
// knob, README.md). Reconciliation itself is @nostr-dev-kit/sync's
// Negentropy and NegentropyStorage, an implementation independent of the C
// code under test, loaded only when a relay serves NIP-77. relay.mjs hands
// this module every NEG-OPEN, NEG-MSG and NEG-CLOSE; it answers through the
// relay's send functions, counts in the relay's counters and reads only the
// relay's own store.

import { randomBytes } from 'node:crypto';

import { validateFilter } from './filter.mjs';

const HEX = /^(?:[0-9a-f]{2})+$/;
const REFUSAL_NOTICE = 'ERROR: unknown cmd';	// strfry's words for a command it does not know
const DISABLED = 'blocked: negentropy disabled';
const ENDLESS_RANGES = 16;		// fingerprint ranges of each endless answer
const HUGE_HEX = 16 * 1024 * 1024;	// hex digits of the one huge answer

// A base-128 varint, most significant digit first (NIP-77).
function varint(n) {
	const out = [n % 128];
	for (n = Math.floor(n / 128); n > 0; n = Math.floor(n / 128))
		out.unshift(128 | (n % 128));
	return out;
}

// A protocol v1 message of ENDLESS_RANGES Fingerprint ranges with random
// fingerprints over random bounds, the last one up to infinity: whatever
// the client holds, every range mismatches and it must answer again.
export function endlessMessage() {
	const bytes = [0x61];
	let t = 0;
	for (let i = 0; i < ENDLESS_RANGES; i++) {
		if (i === ENDLESS_RANGES - 1)
			bytes.push(0, 0);		// infinity, no id prefix
		else {
			const d = 1 + Math.floor(Math.random() * 2 ** 27);
			t += d;
			bytes.push(...varint(d + 1), 0);	// delta + 1, no id prefix
		}
		bytes.push(1, ...randomBytes(16));	// mode Fingerprint
	}
	return Buffer.from(bytes).toString('hex');
}

let lib = null;

// Loads the implementation once (it pulls in NDK, so only when needed).
export async function negLoad() {
	if (lib === null)
		lib = await import('@nostr-dev-kit/sync');
	return lib;
}

export class NegServer {
	// relay: the Relay it serves for (store, faults, stats, send, notice).
	constructor(relay) {
		this.relay = relay;
		this.mode = relay.faults.neg;
	}

	get stats() {
		return this.relay.stats;
	}

	// The handlers relay.mjs adds to its table, or none when the relay does
	// not know NIP-77 (the commands then get its unknown-type NOTICE).
	handlers() {
		if (this.mode === null)
			return {};
		return { 'NEG-OPEN': (c, m) => this.onOpen(c, m), 'NEG-MSG': (c, m) => this.onMsg(c, m),
		    'NEG-CLOSE': (c, m) => this.onClose(c, m) };
	}

	sendErr(conn, id, reason) {
		this.stats.neg_errs_sent++;
		this.relay.send(conn, ['NEG-ERR', id, reason]);
	}

	// The modes other than "yes": true when the message was dealt with so.
	refuse(conn, msg) {
		if ((this.mode === 'endless' || this.mode === 'huge') &&
		    msg[0] !== 'NEG-CLOSE' && typeof msg[1] === 'string') {
			const out = this.mode === 'huge' ? '61' + '0'.repeat(HUGE_HEX - 2) :
			    endlessMessage();
			this.stats.neg_msgs_out++;
			this.stats.neg_bytes_out += out.length / 2;
			this.relay.send(conn, ['NEG-MSG', msg[1], out]);
			return true;
		}
		if (this.mode === 'silent') {
			this.stats.neg_ignored++;
			return true;
		}
		if (this.mode === 'notice') {
			this.stats.neg_refusals++;
			this.relay.notice(conn, REFUSAL_NOTICE);
			return true;
		}
		if (this.mode === 'err') {
			if (msg[0] !== 'NEG-CLOSE' && typeof msg[1] === 'string') {
				this.stats.neg_refusals++;
				this.sendErr(conn, msg[1], msg[0] === 'NEG-OPEN' ? DISABLED :
				    'closed: no such session');
			}
			return true;
		}
		return false;
	}

	// Why a NEG-OPEN is refused, as a NEG-ERR reason, or null.
	check(conn, msg) {
		const relay = this.relay;
		if (msg.length !== 4)
			return 'invalid: NEG-OPEN needs an id, one filter and a message';
		const err = validateFilter(msg[2]);
		if (err !== null)
			return err;
		if (typeof msg[3] !== 'string' || !HEX.test(msg[3]))
			return 'invalid: the message must be lowercase hex';
		if (relay.auth === 'required' && conn.authed === null) {
			this.stats.auth_required_sent++;
			return 'auth-required: this relay only serves authenticated clients';
		}
		if (!conn.negs.has(msg[1]) && relay.openSubs(conn) >= relay.maxSubs)
			return `rate-limited: too many open subscriptions (max ${relay.maxSubs})`;
		return null;
	}

	// neg_drop: a firing message closes the connection instead of an answer.
	dropped(conn) {
		const d = this.relay.faults.neg_drop;
		if (d === null || !d.trigger.hit())
			return false;
		this.stats.neg_drops++;
		this.relay.dropMidPage(conn);
		return true;
	}

	onOpen(conn, msg) {
		this.stats.neg_opens++;
		if (typeof msg[3] === 'string')
			this.stats.neg_bytes_in += msg[3].length / 2;
		if (this.refuse(conn, msg))
			return;
		const id = msg[1];
		if (typeof id !== 'string' || id.length === 0 || id.length > 64) {
			this.relay.notice(conn, 'error: NEG-OPEN needs a subscription id of 1 to 64 characters');
			return;
		}
		conn.negs.delete(id);		// NIP-77: an open id is closed first
		const err = this.check(conn, msg);
		if (err !== null)
			return this.sendErr(conn, id, err);
		if (this.dropped(conn))
			return;
		const f = msg[2];
		const events = this.relay.store.query(f, f.limit ?? Infinity);
		if (events.length > this.relay.faults.neg_max_records)
			return this.sendErr(conn, id, `blocked: too many records (${events.length} > ${this.relay.faults.neg_max_records})`);
		const storage = new lib.NegentropyStorage();
		for (const ev of events)
			storage.insert(ev.created_at, ev.id);
		storage.seal();
		const sess = { id, ne: new lib.Negentropy(storage, this.relay.faults.neg_frame_limit),
		    chain: Promise.resolve() };
		conn.negs.set(id, sess);
		this.relay.notePeak(conn);
		this.step(conn, sess, msg[3]);
	}

	onMsg(conn, msg) {
		this.stats.neg_msgs_in++;
		if (typeof msg[2] === 'string')
			this.stats.neg_bytes_in += msg[2].length / 2;
		if (this.refuse(conn, msg))
			return;
		const sess = typeof msg[1] === 'string' ? conn.negs.get(msg[1]) : undefined;
		if (sess === undefined) {
			if (typeof msg[1] === 'string')
				this.sendErr(conn, msg[1], 'closed: no such session');
			return;
		}
		if (msg.length !== 3 || typeof msg[2] !== 'string' || !HEX.test(msg[2])) {
			conn.negs.delete(sess.id);
			return this.sendErr(conn, sess.id, 'invalid: the message must be lowercase hex');
		}
		if (this.dropped(conn))
			return;
		this.step(conn, sess, msg[2]);
	}

	onClose(conn, msg) {
		this.stats.neg_closes++;
		if (this.refuse(conn, msg))
			return;
		if (typeof msg[1] === 'string')
			conn.negs.delete(msg[1]);
	}

	// Reconciles one message of sess and answers it. The library is
	// asynchronous, so each session's messages are chained: answers leave
	// in the order the messages came, and none for a session closed,
	// replaced or dropped meanwhile.
	step(conn, sess, hex) {
		const current = () => conn.alive && conn.negs.get(sess.id) === sess;
		sess.chain = sess.chain.then(async () => {
			if (!current())
				return;
			let out;
			try {
				out = (await sess.ne.reconcile(lib.hexToUint8Array(hex))).nextMessage;
			} catch (e) {
				if (current()) {
					conn.negs.delete(sess.id);
					this.sendErr(conn, sess.id, `invalid: ${e.message}`);
				}
				return;
			}
			if (!current() || out === undefined)
				return;
			this.stats.neg_msgs_out++;
			this.stats.neg_bytes_out += out.length;
			this.stats.neg_max_msg_bytes = Math.max(this.stats.neg_max_msg_bytes, out.length);
			let answer = lib.uint8ArrayToHex(out);
			const bad = this.relay.faults.neg_bad_hex;
			if (bad !== null && bad.trigger.hit()) {
				this.stats.neg_bad_hex_sent++;
				answer = answer.slice(0, -1);	// an odd count of digits: not hex
			}
			this.relay.send(conn, ['NEG-MSG', sess.id, answer]);
		});
	}
}
