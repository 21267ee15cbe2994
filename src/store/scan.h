/*
 * scan.h — NIP-01 queries over the store, newest first and resumable: the
 * engine behind the relay endpoint's REQ, COUNT and NEG-OPEN and behind
 * `cacheboxctl export`.
 *
 * A scan answers several filters at once, as one REQ does: every stored
 * event that matches at least one filter, within that filter's limit,
 * once, ordered by created_at descending and id ascending on ties (the
 * union of what each filter alone would give, in the order NIP-01 sorts).
 * It runs in steps: each step examines at most a given number of rows and
 * hands the matches to a callback, and the next step resumes exactly
 * where the last one stopped, so a query over a million events never
 * holds the loop (or a read transaction, which would pin the WAL) for
 * more than one step.
 *
 * How a filter is read (its plan), chosen once per filter:
 *   ids      one primary-key probe per id;
 *   tags     one stream per value of its "#x" condition with the fewest
 *            values, on the tag index (store/tags.h), once that is filled;
 *   authors  per author, one stream in time order on (pubkey,
 *            created_at, kind) for every kind that is not replaceable,
 *            and one per replaceable kind of the filter on the partial
 *            index of those kinds (a profile is one probe however long
 *            the author's history);
 *   time     the (created_at, id) index, for anything else or when the
 *            streams would be too many (STORE_SCAN_MAX_STREAMS).
 * Streams are merged in C (a heap per filter, then across filters) and
 * each remembers the last row it examined as a keyset cursor
 * (created_at, id). Conditions a plan does not cover are checked on every
 * row examined, from its columns or, for "#x" conditions, from its JSON.
 *
 * A scan sees rows up to a snapshot (the newest rowid when it began):
 * events stored while it runs are left to the caller's live path
 * (store_scan_after), never half-shown by the scan.
 */
#ifndef CACHEBOX_STORE_SCAN_H
#define CACHEBOX_STORE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct filter;
struct store;
struct store_scan;

/* One row a scan hands out. */
struct store_scan_row {
	int64_t		rowid;
	int64_t		created_at;
	uint8_t		id[32];
};

struct store_scan_opts {
	uint64_t	default_limit;	/* a filter without "limit" gives at most this (0: no cap) */
	uint64_t	max_limit;	/* no filter gives more than this (0: no cap) */
	bool		no_limit;	/* every limit ignored (COUNT, NEG-OPEN, export) */
	bool		with_json;	/* hand each row's JSON to the callback */
	int64_t		snapshot;	/* rows with a larger rowid are left out; 0: the newest now */
};

/*
 * Called for each row, in order. json is the stored event (valid during
 * the call) when the scan was made with_json, else NULL. Return 0 to go
 * on, 1 to end the step after this row (the scan resumes after it).
 */
typedef int	(*store_scan_cb)(void *arg, const struct store_scan_row *row,
		    const char *json, size_t len);

/*
 * A scan of filters[0..n) (borrowed: they must outlive the scan and stay
 * unchanged; filter_sort()ed ones are matched faster). NULL on allocation
 * failure or a SQLite error (logged). Nothing is read before the first
 * step but the snapshot.
 */
struct store_scan *store_scan_new(struct store *, const struct filter *filters,
		    size_t n, const struct store_scan_opts *);
void		 store_scan_free(struct store_scan *);

/*
 * Examine at most max_rows more rows (index entries, probes and the JSON
 * a condition needed), handing matches to cb. 1 when the scan has more,
 * 0 when it is complete, -1 on a SQLite error (logged; the scan is then
 * unusable).
 */
int		 store_scan_step(struct store_scan *, size_t max_rows,
		    store_scan_cb cb, void *arg);

/* The snapshot rowid the scan reads up to. */
int64_t		 store_scan_snapshot(const struct store_scan *);
/* Rows examined so far. */
uint64_t	 store_scan_examined(const struct store_scan *);

/*
 * The live path's catch-up: rows stored after *after (rowid order, not
 * time order) that match any of filters[0..n), no limit, at most max_rows
 * examined. *after moves to the last rowid examined. 1 when more may
 * follow, 0 when *after reached the newest row, -1 on error (logged).
 */
int		 store_scan_after(struct store *, const struct filter *filters,
		    size_t n, int64_t *after, size_t max_rows, bool with_json,
		    store_scan_cb cb, void *arg);

/* The newest rowid of events (0 when empty). 0 or -1 (logged). */
int		 store_events_last_rowid(struct store *, int64_t *rowid);

#endif
