/*
 * recovery.h — the `recovery_relays` and `missing_ids` tables (migration
 * 004): the rows behind the missing-event recovery index
 * (ARCHITECTURE.md §6).
 * One row per relay with recovery work, one per event id that relay
 * reported and did not deliver. When to fetch, and what an outcome means,
 * is sync/recovery.h's; this file only reads and writes rows.
 *
 * Every function here is one statement (two for store_recovery_id_add)
 * that touches a bounded number of rows: a relay row by its key, or ids by
 * an index range of at most one attempt. None opens a transaction: the
 * policy groups them in its own. The exceptions, which cost in proportion
 * to the ids of one relay, are store_recovery_expire over the whole queue
 * and store_recovery_relay_delete: operator actions, never on a timer.
 *
 * The pending and expired counts of a relay row are kept by triggers in
 * the same statement as the id rows they count; store_recovery_relay_put
 * never writes them. The id rows reference their relay row, so a relay
 * row is written before its first id and deleting it drops its ids.
 */
#ifndef CACHEBOX_STORE_RECOVERY_H
#define CACHEBOX_STORE_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

struct store;

struct store_recovery_relay {
	char		relay[URL_MAX_BYTES + 1];
	int64_t		pending;	/* ids waiting (kept by triggers) */
	int64_t		expired;	/* ids given up (kept by triggers) */
	bool		in_flight;	/* an attempt was handed out */
	int64_t		attempt_lo;	/* its queue_seq range, valid while */
	int64_t		attempt_hi;	/* in_flight */
	int64_t		queue_next;	/* next queue_seq to hand out */
	int64_t		next_attempt_ms; /* wall ms: no attempt before */
	int64_t		attempts_total;
	int64_t		recovered_total;
	int64_t		expired_total;
	bool		can_restore_health;
	uint64_t	batches[RECOVERY_MAX_SOURCE_BATCHES];
	size_t		nbatches;	/* batch ids that registered ids here */
	int64_t		updated_at;	/* wall seconds */
};

/* The row of relay into *out. 1 found, 0 none, -1 (logged). */
int	store_recovery_relay_get(struct store *, const char *relay,
	    struct store_recovery_relay *out);

/*
 * Insert or update the row of r->relay with every field of r but pending
 * and expired (the triggers' own), updated_at = now_ms / 1000. Batches
 * past RECOVERY_MAX_SOURCE_BATCHES are not kept. 0, or -1 (logged).
 */
int	store_recovery_relay_put(struct store *,
	    const struct store_recovery_relay *r, int64_t now_ms);

/*
 * Delete the row of relay and, by the foreign key, all its ids (pending
 * and expired). Costs in proportion to them. 1 deleted, 0 none, -1.
 */
int	store_recovery_relay_delete(struct store *, const char *relay);

/*
 * Call cb for every relay row, in relay order (one row per relay with
 * recovery work: a handful). cb returns 0 to go on, 1 to stop. 0, or -1.
 */
typedef int	(*store_recovery_relay_cb)(const struct store_recovery_relay *,
		    void *arg);
int	store_recovery_relays_each(struct store *, store_recovery_relay_cb cb,
	    void *arg);

/*
 * Start-up: every attempt marked in flight never completed; clear the
 * mark. The ids keep their failures (no budget spent) and their place in
 * the queue. Number of relays released, or -1 (logged).
 */
int64_t	store_recovery_release(struct store *);

/* 1 when any id row exists at all (pending or expired), 0 not, -1. */
int	store_recovery_any(struct store *);

enum store_recovery_add {
	STORE_RECOVERY_ADDED = 0,	/* new pending row at queue_seq seq */
	STORE_RECOVERY_REVIVED,		/* was expired: pending again, failures 0 */
	STORE_RECOVERY_PENDING,		/* already pending: nothing changed */
	STORE_RECOVERY_STORED,		/* the event is stored: nothing added */
};

/*
 * Note id as missing on relay (whose row must exist) at position seq of
 * its queue, registered_at = now_s. An id whose event is already in
 * `events` is not added. Two statements: call inside the caller's
 * transaction. An enum store_recovery_add, or -1 (logged).
 */
int	store_recovery_id_add(struct store *, const char *relay,
	    const uint8_t id[32], int64_t seq, int64_t now_s);

/*
 * The head of relay's queue: up to max pending ids in queue order into
 * ids[0..max), with the queue_seq of the first and the last one in *first
 * and *last. Number read, or -1.
 */
int64_t	store_recovery_page(struct store *, const char *relay, size_t max,
	    uint8_t (*ids)[32], int64_t *first, int64_t *last);

/*
 * Move relay's pending ids whose queue_seq is within [first, last] to
 * [to, to + last - first], keeping their order (to is past every
 * queue_seq handed out, so the block goes behind every other pending id).
 * Rows moved, or -1.
 */
int64_t	store_recovery_requeue(struct store *, const char *relay,
	    int64_t first, int64_t last, int64_t to);

/* Delete relay's pending id (it arrived). 1 deleted, 0 none, -1. */
int	store_recovery_drop(struct store *, const char *relay,
	    const uint8_t id[32]);

/*
 * Delete relay's pending ids within [lo, hi] whose event is now in
 * `events`, whatever path stored it. Rows deleted, or -1.
 */
int64_t	store_recovery_drop_stored(struct store *, const char *relay,
	    int64_t lo, int64_t hi);

/* failures + 1 on relay's pending ids within [lo, hi]. Rows, or -1. */
int64_t	store_recovery_fail(struct store *, const char *relay, int64_t lo,
	    int64_t hi);

/*
 * Mark relay's pending ids within [lo, hi] with at least min_failures
 * failures expired (INT64_MIN, INT64_MAX, 0: the whole queue, costing in
 * proportion to it). Rows expired, or -1.
 */
int64_t	store_recovery_expire(struct store *, const char *relay, int64_t lo,
	    int64_t hi, int64_t min_failures);

/*
 * The largest failures count among relay's pending ids into *out (one
 * index probe). 1, 0 when none is pending (*out = 0), -1.
 */
int	store_recovery_max_failures(struct store *, const char *relay,
	    int64_t *out);

/*
 * The event id is stored: delete its rows on every relay, except a
 * pending row inside the attempt its relay has in flight (that attempt's
 * completion settles it). cb(relay, was_pending, arg) is called for each
 * row deleted; relay is valid during the call only. Rows deleted, or -1.
 */
typedef void	(*store_recovery_gone_cb)(const char *relay, bool was_pending,
		    void *arg);
int64_t	store_recovery_satisfy(struct store *, const uint8_t id[32],
	    store_recovery_gone_cb cb, void *arg);

/* One id row, as store_recovery_ids_each hands it out. */
struct store_recovery_id {
	uint8_t		id[32];
	int64_t		failures;
	int64_t		queue_seq;
	bool		expired;
	int64_t		registered_at;	/* wall seconds */
};

/*
 * Call cb for up to max of relay's ids of one state (pending or expired)
 * with queue_seq > after, in queue order (INT64_MIN: from the head); a
 * surface pages on with the last queue_seq. cb returns 0 to go on, 1 to
 * stop. Number handed to cb, or -1.
 */
typedef int	(*store_recovery_id_cb)(const struct store_recovery_id *,
		    void *arg);
int64_t	store_recovery_ids_each(struct store *, const char *relay,
	    bool expired, int64_t after, size_t max, store_recovery_id_cb cb,
	    void *arg);

#endif
