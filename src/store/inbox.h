/*
 * inbox.h — the `inbox` table: events waiting for the uplink, first in
 * first out by seq, and the uplink's bookkeeping in `meta` (the forwarded
 * total, the target everything was last queued for, the position of a
 * queue-everything pass in progress).
 *
 * A pending row leaves only through store_inbox_confirm (the uplink was
 * told the event is stored: OK true, "duplicate:", a committed Postgres
 * transaction), and that delete bumps meta 'inbox_forwarded' in the same
 * transaction, so the total never disagrees with what left; or through
 * store_inbox_take, which never hands out a protected event (NIP-70) of
 * another author than the box and deletes its row, counted in meta
 * 'inbox_skipped_protected' in the same transaction. A refused row
 * becomes 'dead' with the peer's reason and stays until retried. (Rows of
 * events the store's rules remove go with them, store/events.h.)
 *
 * Every function runs synchronously on the loop and touches a bounded
 * number of rows. Functions that write open their own (nested)
 * transaction, so they also join a batch the caller has open.
 */
#ifndef CACHEBOX_STORE_INBOX_H
#define CACHEBOX_STORE_INBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

struct store;

/* One pending row with its event, as the uplink sends it. */
struct inbox_row {
	int64_t		 seq;
	uint8_t		 id[32];
	uint8_t		 pubkey[32];
	uint32_t	 kind;
	int64_t		 created_at;
	int64_t		 received_at;
	char		*json;		/* owned by the batch, NUL-terminated */
	size_t		 json_len;
	char		 source[12];	/* live, backfill, job, recovery */
	char		*relay;		/* owned by the batch; NULL when none */
};

/* Rows taken by store_inbox_take; zero-initialise before first use. */
struct inbox_batch {
	struct inbox_row *rows;
	size_t		  n;
	size_t		  cap;
	size_t		  json_bytes;	/* sum of json_len */
};

/* A dead letter, for listings. Strings are valid during the callback. */
struct inbox_dead {
	int64_t		 seq;
	const uint8_t	*id;		/* 32 bytes */
	uint32_t	 kind;
	const char	*reason;
	int64_t		 attempts;
	int64_t		 last_attempt_at;	/* wall seconds, 0 if never */
	int64_t		 enqueued_at;
};

/* Totals for the status. */
struct inbox_counts {
	int64_t		 pending;
	int64_t		 dead;
	int64_t		 forwarded;	/* meta inbox_forwarded, since the store began */
	int64_t		 skipped_protected;	/* meta inbox_skipped_protected: others'
						   protected events left out */
	int64_t		 oldest_enqueued_at;	/* wall seconds; 0 when none pending */
};

/*
 * Replace batch's rows with pending rows whose seq is above after_seq, in
 * seq order: at most max_rows, and no more JSON bytes than max_bytes
 * (the first row is always taken, whatever its size). An event that has
 * expired is left out; a protected event (NIP-70) whose pubkey is not
 * self (the box's key, 32 bytes; NULL: any protected event) is skipped
 * for good: its row is deleted and counted (the uplink authenticates as
 * the box, so it could republish no one else's). Number of rows taken
 * (0: nothing pending above after_seq), or -1 (logged).
 */
int	store_inbox_take(struct store *, int64_t after_seq, size_t max_rows,
	    size_t max_bytes, const uint8_t *self, struct inbox_batch *batch);
/*
 * Whether the canonical event JSON json (len bytes) carries a tag named
 * "-" (NIP-70 protected), the test store_inbox_take makes.
 */
bool	store_inbox_protected(const char *json, size_t len);
/* Free the rows' strings and forget them (the array is kept for reuse). */
void	store_inbox_batch_clear(struct inbox_batch *);
/* Clear and release everything the batch holds. */
void	store_inbox_batch_free(struct inbox_batch *);

/*
 * Delivered: delete the pending rows seqs[0..n) and add the number deleted
 * to meta 'inbox_forwarded', in one transaction. Returns the number of
 * rows deleted (a seq no longer pending is skipped), or -1 (logged; the
 * rows stay and will be sent again).
 */
int64_t	store_inbox_confirm(struct store *, const int64_t *seqs, size_t n);

/*
 * Refused by the peer: the pending row seq becomes dead with reason
 * (truncated to UPLINK_ERROR_MAX bytes; NULL or "" is stored as
 * "refused"). 1 when changed, 0 when seq was not pending, -1 (logged).
 */
int	store_inbox_dead(struct store *, int64_t seq, const char *reason,
	    int64_t now_s);

/*
 * Note a failed attempt (the peer was unreachable or failed) on every
 * pending row with seq in [first, last]: attempts + 1, last_attempt_at.
 * 0 or -1 (logged).
 */
int	store_inbox_attempted(struct store *, int64_t first, int64_t last,
	    int64_t now_s);

/*
 * Dead letters back to pending, keeping their seq (so they go out in
 * their old place): seq > 0 for one row, seq == 0 for all. Number of rows
 * moved, or -1 (logged).
 */
int64_t	store_inbox_retry(struct store *, int64_t seq);

/*
 * Hand at most max dead letters to cb in seq order (cb returns 0 to go
 * on, non-zero to stop). Number handed, or -1 (logged).
 */
typedef int	(*store_inbox_dead_cb)(const struct inbox_dead *, void *arg);
int	store_inbox_dead_list(struct store *, size_t max,
	    store_inbox_dead_cb cb, void *arg);

/* Fill *c. 0, or -1 (logged; *c zeroed). */
int	store_inbox_counts(struct store *, struct inbox_counts *c);
/* 1 when at least one row is pending, 0 when none, -1 (logged). */
int	store_inbox_has_pending(struct store *);

/*
 * The uplink is about to forward to target (a URL as shown to people,
 * password masked). When meta 'uplink_target' differs (or is absent),
 * remember target, move dead letters back to pending (their reasons were
 * another peer's) and start queueing every stored event: returns 1. When
 * it is the same target: 0. -1 (logged) on error.
 */
int	store_inbox_target(struct store *, const char *target);
/*
 * No uplink is configured: forget the target (so the next one queues the
 * whole store again, including what arrived meanwhile and was never
 * queued) and any queue-everything pass in progress. 0 or -1 (logged).
 */
int	store_inbox_target_clear(struct store *);

/*
 * One step of the queue-everything pass: queue at most chunk stored
 * events not already in the inbox, oldest (created_at, id) first, with
 * enqueued_at = now_s, and move the saved position in the same
 * transaction (a restart resumes there). Returns 1 when more is left,
 * 0 when the pass is finished or none is in progress, -1 (logged). The
 * number of rows queued goes to *queued (may be NULL).
 */
int	store_inbox_enqueue_step(struct store *, size_t chunk, int64_t now_s,
	    int64_t *queued);
/* 1 while a queue-everything pass is unfinished, 0 if not, -1 (logged). */
int	store_inbox_enqueue_active(struct store *);

/*
 * Ids the store's rules withdrew (the `withdrawn` table, store/withdrawn.h)
 * after the uplink's cursor, for a peer that can still drop what it was
 * sent and has not used yet (the Postgres driver's caching_event_inbox).
 */
struct inbox_withdrawn {
	uint8_t		 ids[UPLINK_WITHDRAWN_IDS][32];
	size_t		 n;
	int64_t		 last_at;	/* the cursor after ids */
	uint8_t		 last_id[32];
};
/*
 * Fill w with at most UPLINK_WITHDRAWN_IDS ids withdrawn after the cursor
 * (meta 'uplink_withdrawn_at', '_id'; none: from the oldest), in (at, id)
 * order, withdrawn before before_at (wall seconds: a second still running
 * may get rows that sort before the last one read). Number of ids, or -1
 * (logged). The cursor moves only with store_inbox_withdrawn_done.
 */
int	store_inbox_withdrawn_next(struct store *, int64_t before_at,
	    struct inbox_withdrawn *w);
/* The peer dropped w's ids: move the cursor past them. 0 or -1 (logged). */
int	store_inbox_withdrawn_done(struct store *,
	    const struct inbox_withdrawn *w);

#endif
