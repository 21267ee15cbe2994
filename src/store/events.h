/*
 * events.h — the `events` table family: the cache itself, its maintained
 * counters (rows and bytes of JSON in `event_totals`, so the status never
 * runs count(*): inserts are counted here and written once per
 * transaction by the store, deletes by a trigger), the per-relay newest
 * live event (the live planner's `since` after a restart),
 * replaceable-event lookups for the follow graph, bounded local queries,
 * and retention.
 *
 * A row is written once and never changed (but for its expires_at, set
 * by the conversion of an older store), and enters the table only
 * through store_event_insert (store/rules.h: the door where the authors'
 * rules are applied), which calls store_event_row_insert; rows leave
 * through the rules (store_event_remove) or retention. Only what ingest
 * verified is stored, in the canonical form event_to_json writes. Nothing
 * here opens a transaction on its own except store_events_evict (which
 * nests inside one if the caller has it open): callers batch writes in
 * theirs.
 */
#ifndef CACHEBOX_STORE_EVENTS_H
#define CACHEBOX_STORE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct buf;
struct event;
struct filter;
struct store;

/* One row to insert. Everything is borrowed for the call. */
struct store_event_row {
	const uint8_t	*id;		/* 32 bytes */
	const uint8_t	*pubkey;	/* 32 bytes */
	uint32_t	 kind;
	int64_t		 created_at;
	const char	*json;		/* canonical event JSON */
	size_t		 json_len;
	const char	*source;	/* "live", "backfill", "job", "recovery", "client" */
	const char	*first_relay;	/* NULL when from no relay */
	int64_t		 received_at;	/* wall seconds */
	const cJSON	*tags;		/* the event's tags for the tag index, or NULL */
};

/*
 * What store_event_insert (store/rules.h) did with a row. Only
 * STORE_INSERT_NEW and STORE_INSERT_REPLACED wrote it; the others did not
 * store it (a refusal by a rule records its tombstone, store/withdrawn.h).
 */
enum store_insert {
	STORE_INSERT_FAILED = -1,	/* a SQLite error (logged) */
	STORE_INSERT_EXISTS = 0,	/* the id is stored already */
	STORE_INSERT_NEW = 1,		/* stored */
	STORE_INSERT_OLDER,		/* not stored: a version of its
					 * replaceable or addressable key
					 * that replaces it is held */
	STORE_INSERT_EXPIRED,		/* not stored: expired on arrival
					 * (NIP-40) */
	STORE_INSERT_EPHEMERAL,		/* not stored: kinds 20000-29999 */
	STORE_INSERT_REPLACED,		/* stored, and the older version(s)
					 * of its key were removed */
	STORE_INSERT_DELETED,		/* not stored: its author deleted it
					 * (NIP-09) */
	STORE_INSERT_VANISHED,		/* not stored: its author asked to
					 * vanish (NIP-62) */
};

/*
 * Write row as it is, with expires_at (< 0: none), and with enqueue an
 * inbox row (pending, enqueued_at = received_at) for the uplink; no rule
 * is looked at (store_event_insert does that, then calls this). Inside
 * the caller's transaction. STORE_INSERT_NEW, STORE_INSERT_EXISTS, or -1
 * (logged). The row is added to the totals the transaction writes when it
 * commits.
 */
int	store_event_row_insert(struct store *, const struct store_event_row *,
	    int64_t expires_at, bool enqueue);
/*
 * Remove the stored event id with its tag index rows and its inbox row,
 * inside the caller's transaction. 1 removed, 0 it was not stored, -1
 * (logged).
 */
int	store_event_remove(struct store *, const uint8_t id[32]);

/* 1 if an event with id is stored, 0 if not, -1 (logged) on error. */
int	store_event_exists(struct store *, const uint8_t id[32]);

/*
 * The maintained totals: rows in events and bytes of their JSON, as this
 * connection sees them (with what its open transaction added). 0, or -1
 * (logged). Constant time (one row of event_totals).
 */
int	store_events_totals(struct store *, int64_t *count, int64_t *bytes);

/*
 * One step of the conversion of rows stored before migration 015 into the
 * packed form (store/rowjson.c): at most max rows, inside the caller's
 * transaction or one of its own; the pass's position (meta pack_next,
 * pack_end) commits with the rows, so a crash repeats at most one step,
 * and a row already packed is passed over. *left (when not NULL) the
 * rows of the pass not yet looked at. 1 more to do, 0 done (or no pass
 * pending), -1 (logged).
 */
int	store_pack_step(struct store *, size_t max, int64_t *left);
/* Rows the conversion has not looked at yet (0: none), -1 on error. */
int64_t	store_pack_left(struct store *);

/*
 * The stored JSON of id appended to out. 1 found, 0 not stored, -1 on a
 * SQLite error or when out's max was reached.
 */
int	store_event_get(struct store *, const uint8_t id[32], struct buf *out);

/*
 * The newest event of (pubkey, kind) — for replaceable kinds 0, 3, 10002:
 * highest created_at, and on a tie the lowest id (NIP-01). Its JSON is
 * appended to out, its created_at put in *created_at (either may be
 * NULL). 1 found, 0 none, -1 on error or a full out. Replaceable and
 * addressable kinds (store_kind_replaceable) are looked up in an index of
 * their own; any other kind scans the author's events.
 */
int	store_event_newest(struct store *, const uint8_t pubkey[32],
	    uint32_t kind, struct buf *out, int64_t *created_at);
/* Kinds 0, 3, 10000-19999 and 30000-39999 (NIP-01): those indexed for it. */
bool	store_kind_replaceable(uint32_t kind);
/*
 * Same, parsed into ev (event_init'ed by the caller; on 1 the caller
 * calls event_free). 1, 0, or -1 (also for a stored row that no longer
 * parses, which is logged).
 */
int	store_event_newest_parsed(struct store *, const uint8_t pubkey[32],
	    uint32_t kind, struct event *ev);

/*
 * Events matching f, newest first (created_at desc, id asc), at most
 * max_results (and at most f->limit when the filter has one), each
 * handed to cb with its JSON (valid during the call only). cb returns 0
 * to go on, 1 to stop. The query examines at most STORE_QUERY_MAX_ROWS
 * rows whatever the filter: a broad filter over a large store returns a
 * prefix. Number of events handed to cb, or -1 (logged).
 */
typedef int	(*store_event_cb)(const char *json, size_t len, void *arg);
int64_t	store_events_query(struct store *, const struct filter *f,
	    size_t max_results, store_event_cb cb, void *arg);

/*
 * Retention. While the JSON bytes of all events exceed max_bytes, delete
 * the oldest (created_at, id) events that are evictable: not in the inbox
 * (pending or dead) and not kind 0, 3 or 10002. One call looks at no more
 * than STORE_EVICT_SCAN_ROWS rows and deletes no more than
 * STORE_EVICT_CHUNK_ROWS, resuming from where the previous call stopped
 * (kept in meta, wrapping to the oldest at the end), in its own (nested)
 * transaction. *evicted (may be NULL) gets the rows deleted. Returns 1
 * when still over budget (call again later), 0 when within it, -1
 * (logged) on error.
 */
/*
 * The (created_at, id) of pubkey's events with created_at in [since,
 * until] (until < 0: no end), ascending by created_at then id (the order
 * NIP-77 sorts by), at most max of them, each handed to cb (cb returns 0
 * to go on, 1 to stop). Events dated before 1970 are left out. Rows
 * handed, or -1 (logged).
 */
typedef int	(*store_item_cb)(int64_t created_at, const uint8_t id[32],
		    void *arg);
int64_t	store_events_author_items(struct store *, const uint8_t pubkey[32],
	    int64_t since, int64_t until, size_t max, store_item_cb cb,
	    void *arg);

int	store_events_evict(struct store *, int64_t max_bytes,
	    int64_t *evicted);

/*
 * The newest created_at among live events seen from relay, 0 when none
 * was ever recorded. 0, or -1 (logged).
 */
int	store_relay_newest_get(struct store *, const char *relay,
	    int64_t *created_at);
/*
 * Raise relay's newest live created_at to created_at (never lowers it).
 * Ingest calls this once per relay per batch, inside the batch. 0 or -1.
 */
int	store_relay_newest_note(struct store *, const char *relay,
	    int64_t created_at);

#endif
