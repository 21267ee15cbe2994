// Ground truth over the simulated relays: which ids match a filter, and which
// ids a correct until-cursor drain can obtain from each relay given its
// faults ("pageable", defined in README.md). Pure functions of the relays'
// stores and fault settings; nothing here opens a socket.

import { matchFilter } from './filter.mjs';
import { partialIds } from './faults.mjs';

function unlimited(f) {
	const g = { ...f };
	delete g.limit;
	return g;
}

// Ids matching any filter on any of the relays, NIP-01 limits applied per
// relay and filter, faults ignored. Returns a sorted array.
export function truthMatch(relays, filters) {
	const ids = new Set();
	for (const r of relays)
		for (const f of filters)
			for (const ev of r.store.query(f, f.limit ?? Infinity))
				ids.add(ev.id);
	return [...ids].sort();
}

// Ids of M (sorted in NIP-01 order) that survive same-second cuts at eff:
// a second holding more than eff matching events yields only its first eff.
function secondsCut(m, eff) {
	const out = [];
	for (let i = 0; i < m.length;) {
		let j = i;
		while (j < m.length && m[j].created_at === m[i].created_at)
			j++;
		const n = Math.min(j - i, eff);
		for (let k = i; k < i + n; k++)
			out.push(m[k]);
		i = j;
	}
	return out;
}

// Pageable events of one drain unit (one filter, no limit) on one relay.
// partial_ids on a unit with ids: {count: n} acts as a cap of n (each page
// holds the newest n, and the next page starts below them); {fraction: f}
// withholds the same ids from every page, so they are left out of what the
// pages would have brought (exact unless a page loses every id it had).
// Withheld only from some REQs ("reqs" not permanent): a transient fault,
// which changes nothing.
function pageableUnit(r, u, pageLimit) {
	const fl = r.faults;
	const partial = u.ids !== undefined && fl.partial_ids !== null &&
	    (fl.partial_ids.reqs === null || fl.partial_ids.reqs.trigger.permanent) ?
	    fl.partial_ids : null;
	const withhold = (evs) => partial?.fraction !== undefined ? partialIds(partial, evs) : evs;
	const eff = Math.min(pageLimit > 0 ? pageLimit : r.defaultLimit, r.maxLimit, fl.cap,
	    partial?.count ?? Infinity);
	const all = r.store.query(u);
	const first = () => {
		const g = { ...u };
		if (fl.ignore_until)
			delete g.until;
		return withhold(r.store.query(g, eff).filter((ev) => matchFilter(u, ev)));
	};
	if (fl.drop && fl.drop.trigger.permanent)
		return first().slice(0, fl.drop.after);
	if ((fl.no_eose && fl.no_eose.trigger.permanent) || fl.ignore_until)
		return first();
	return withhold(secondsCut(all, eff));
}

// Ids a correct until-cursor drain obtains from the relays (union), see
// README.md. opts: {pageLimit (0 = none asked), whole (do not split authors)}.
// Returns a sorted array.
export function truthPageable(relays, filters, opts = {}) {
	const pageLimit = opts.pageLimit ?? 500;
	const ids = new Set();
	for (const r of relays) {
		const rate = r.faults.rate;
		if (rate && !rate.interval_only && rate.trigger.permanent)
			continue;
		if (r.faults.silent && r.faults.silent.trigger.permanent)
			continue;
		for (const f of filters) {
			const units = !opts.whole && f.authors ?
			    [...new Set(f.authors)].map((a) => ({ ...f, authors: [a] })) : [f];
			for (const u of units)
				for (const ev of pageableUnit(r, unlimited(u), f.limit ?? pageLimit))
					ids.add(ev.id);
		}
	}
	return [...ids].sort();
}

// Parses a filter argument: a JSON object or an array of them.
export function parseFilters(text) {
	const v = JSON.parse(text);
	const list = Array.isArray(v) ? v : [v];
	if (list.length === 0 || list.some((f) => f === null || typeof f !== 'object'))
		throw new Error('filter must be a JSON object or a non-empty array of objects');
	return list;
}
