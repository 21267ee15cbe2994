// Seeded randomness for the relay simulator. Everything the simulator generates
// or decides "at random" (keys, note text, fault timing) comes from here so
// that a seed reproduces the same run. Never use Math.random() elsewhere in
// the simulator: a test that fails must fail again with the same seed.

import { createHash } from 'node:crypto';

// sha256 of a string, as a Buffer.
export function sha256(s) {
	return createHash('sha256').update(s).digest();
}

// A value in [0, 1) fixed by the string s alone (used for per-id subsets).
export function unitHash(s) {
	return sha256(s).readUInt32BE(0) / 4294967296;
}

// A small generator (sfc32) seeded by hashing any string or number.
export class Rng {
	constructor(seed) {
		const h = sha256('relaysim-rng:' + String(seed));
		this.a = h.readUInt32LE(0);
		this.b = h.readUInt32LE(4);
		this.c = h.readUInt32LE(8);
		this.d = h.readUInt32LE(12);
		for (let i = 0; i < 12; i++)
			this.u32();
	}

	u32() {
		const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
		this.d = (this.d + 1) >>> 0;
		this.a = this.b ^ (this.b >>> 9);
		this.b = (this.c + (this.c << 3)) >>> 0;
		this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
		this.c = (this.c + t) >>> 0;
		return t;
	}

	// Uniform float in [0, 1).
	next() {
		return this.u32() / 4294967296;
	}

	// Uniform integer in [lo, hi], both inclusive.
	int(lo, hi) {
		return lo + Math.floor(this.next() * (hi - lo + 1));
	}

	pick(arr) {
		return arr[Math.floor(this.next() * arr.length)];
	}

	chance(p) {
		return this.next() < p;
	}
}
