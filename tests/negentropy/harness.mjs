// harness.mjs — the negentropy conformance line protocol (the one
// `cacheboxctl negentropy harness` speaks, see src/nostr/neg_harness.h)
// over one of the independent JavaScript implementations pinned in
// tests/package.json, so the drivers can pair them with the C codec:
//
//   node harness.mjs sync          @nostr-dev-kit/sync: initiator or responder
//   node harness.mjs nostr-tools   nostr-tools' nip77: initiator only
//
// FRAMESIZELIMIT (bytes, unset or 0 = none) is read from the environment.
// Lines are handled strictly one after another; every msg and done line is
// written at once (a pipe write on Linux is synchronous). The first error
// is printed on stderr and the process exits 1.

import readline from 'node:readline';
import { nip77 } from 'nostr-tools';
import {
	Negentropy as SyncNegentropy,
	NegentropyStorage as SyncStorage,
	hexToUint8Array,
	uint8ArrayToHex,
} from '@nostr-dev-kit/sync';

const frameLimit = Number.parseInt(process.env.FRAMESIZELIMIT || '0', 10);

// Each implementation behind the same four calls; ids and messages are hex.
const impls = {
	sync: {
		storage: () => new SyncStorage(),
		session: (storage) => new SyncNegentropy(storage, frameLimit),
		initiate: async (ne) => uint8ArrayToHex(await ne.initiate()),
		reconcile: async (ne, hex) => {
			const r = await ne.reconcile(hexToUint8Array(hex));
			return {
				next: r.nextMessage === undefined ? null :
				    uint8ArrayToHex(r.nextMessage),
				have: r.have.map(uint8ArrayToHex),
				need: r.need.map(uint8ArrayToHex),
			};
		},
		responder: true,
	},
	'nostr-tools': {
		storage: () => new nip77.NegentropyStorageVector(),
		// This one has no "none": a limit nothing reaches stands for it.
		session: (storage) => new nip77.Negentropy(storage,
		    frameLimit || Number.MAX_SAFE_INTEGER),
		initiate: async (ne) => ne.initiate(),
		reconcile: async (ne, hex) => {
			const have = [], need = [];
			const next = ne.reconcile(hex, (id) => have.push(id),
			    (id) => need.push(id));
			return { next, have, need };
		},
		responder: false,
	},
};

const impl = impls[process.argv[2]];
if (!impl) {
	console.error(`usage: harness.mjs ${Object.keys(impls).join('|')}`);
	process.exit(2);
}

const storage = impl.storage();
let ne = null;
let initiator = false;

function send(hex) {
	if (frameLimit && hex.length / 2 > frameLimit)
		throw new Error(`frame-size limit exceeded: ${hex.length / 2} > ${frameLimit}`);
	return `msg,${hex}\n`;
}

async function handle(line) {
	const [cmd, a, b] = line.split(',');
	if (cmd === 'item') {
		if (b === undefined)
			throw new Error('item needs created_at and id');
		storage.insert(Number.parseInt(a, 10), b.trim());
		return '';
	}
	if (cmd === 'seal') {
		storage.seal();
		ne = impl.session(storage);
		return '';
	}
	if (cmd === 'initiate') {
		initiator = true;
		return send(await impl.initiate(ne));
	}
	if (cmd === 'msg') {
		if (!initiator && !impl.responder)
			throw new Error(`${process.argv[2]} cannot be the responder`);
		const r = await impl.reconcile(ne, a ?? '');
		let out = '';
		for (const id of r.have)
			out += `have,${id}\n`;
		for (const id of r.need)
			out += `need,${id}\n`;
		if (initiator && r.next === null)
			return out + 'done\n';
		return out + send(r.next);
	}
	throw new Error(`unknown command: ${cmd}`);
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
try {
	for await (const line of rl) {
		if (line === '')
			continue;
		const out = await handle(line);
		if (out !== '')
			process.stdout.write(out);
	}
} catch (err) {
	console.error(`harness.mjs ${process.argv[2]}: ${err.message}`);
	process.exit(1);
}
