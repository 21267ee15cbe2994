/*
 * drain.h — the author drain (DESIGN.md §4): every followed author's
 * history paged backwards from every relay it may be on (its NIP-65 write
 * relays and the bootstrap relays), one until-cursor per (author, relay)
 * in the `cursors` table.
 *
 * A step asks {"authors":[pk],"until":cursor,"limit":L} and streams each
 * event into ingest as it arrives; nothing of a page is held in memory
 * beyond a few counters. At EOSE the cursor moves to the oldest
 * created_at of the page, inclusive, written inside ingest's open batch so
 * the cursor and its page commit together. A page that brought nothing
 * older than the cursor ends that relay; page size never does. A full page
 * within one second steps to T - 1 and records a possible gap at T; a page
 * within one second that is not full brought that second whole and steps
 * to T - 1 without one (asked again, the same events would look like a
 * page at the relay's cap); events
 * newer than `until` mean the relay ignores it; both end as "incomplete"
 * with the reason, never as complete, except that a relay ignoring until
 * which answers with fewer of the author's events than it has proven it
 * returns in one page has sent the author's whole history there. A step
 * without EOSE never moves a cursor: it is asked again from the same
 * place.
 *
 * A relay that gave no answer (DRAIN_MAX_STALLS requests in a row without
 * EOSE) is recorded incomplete with that reason and asked again from the
 * same cursor DRAIN_NOANSWER_RETRY_S later (doubled for each earlier
 * record of the row, up to DRAIN_NOANSWER_RETRY_MAX_S), so a relay that
 * was down during the first drain gets its turn; meanwhile the row counts as
 * finished, so idle is reached. Which outbox relays are used at all is
 * decided by sync/outbox.h; a row on a relay no longer dialled is set
 * aside (STORE_CURSOR_WHY_UNUSED) and resumes if the relay is dialled again.
 *
 * Fairness: round-robin over the authors of each relay, at most
 * backfill.max_subs_per_relay steps open per relay (less when the pool's
 * cap is taken by other subscriptions); relays work in parallel, each paced
 * by the pool (backfill.pace_ms).
 */
#ifndef CACHEBOX_SYNC_DRAIN_H
#define CACHEBOX_SYNC_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/cursors.h"

struct loop;
struct pool;
struct ingest;
struct store;
struct config;
struct follow;
struct drain;

/*
 * What a step knows of one whole page at its EOSE (counters only; the
 * events went to ingest as they came). "The author's events" are the
 * asked author's events ingest accepted (new or duplicate), plus, for
 * newer, the author's events ingest refused as unrequested because they
 * were newer than until.
 */
struct drain_page {
	bool	started;	/* until was sent (else: first page, until = now) */
	int64_t	until;		/* asked, seconds */
	int64_t	limit;		/* asked */
	int64_t	received;	/* the author's events at or before until */
	int64_t	fresh;		/* of those, new ids */
	int64_t	older;		/* of those, strictly before until (all when
				 * not started) */
	int64_t	newer;		/* the author's events after until */
	int64_t	oldest;		/* oldest created_at of received (if any) */
	int64_t	newest;		/* newest created_at of received (if any) */
	bool	has_gap;	/* an earlier page stepped past a burst */
	int64_t	gap_since;	/* its second, valid when has_gap */
	int64_t	cap_seen;	/* largest whole page this relay has returned
				 * for one author before this one; 0: none */
	int64_t	max_limit;	/* NIP-11 limitation.max_limit; 0: none */
};

enum drain_next {
	DRAIN_NEXT_PAGE = 0,	/* ask again from until (gap: also record it) */
	DRAIN_NEXT_COMPLETE,	/* the relay has nothing more of the author */
	DRAIN_NEXT_INCOMPLETE,	/* finished, not all: reason, gap_since */
};

struct drain_verdict {
	enum drain_next	 next;
	int64_t		 until;		/* cursor to record (inclusive) */
	bool		 gap;		/* record a possible gap at gap_since */
	int64_t		 gap_since;	/* -1: none */
	enum store_cursor_why why;	/* DRAIN_NEXT_INCOMPLETE only */
	bool		 ignores_until;	/* the page proved it */
};

/*
 * The end-of-page decision of DESIGN.md section 4 as a pure function:
 * where the cursor goes and whether the relay is finished for the author.
 * A relay seen ignoring until still completes an author when the page
 * held fewer of the author's events than the relay has proven it returns
 * (cap_seen, bounded by the limit asked): it then sent all it has.
 */
void		 drain_page_verdict(const struct drain_page *,
		    struct drain_verdict *out);

/*
 * Count one event of the asked filter at or before until into the page
 * (fresh: a new id), and forget a page's counts (what was asked stays):
 * the bookkeeping every paged request shares (the author drain, jobs).
 */
void		 drain_page_add(struct drain_page *, int64_t created_at,
		    bool fresh);
void		 drain_page_reset(struct drain_page *);

/*
 * The limit to ask of a relay: backfill.page_size, lowered to the relay's
 * NIP-11 max_limit when it advertises a smaller one (max_limit <= 0:
 * none). The cap seen never lowers it: a limit sized to the largest page
 * seen would keep that page from ever growing, and the "fewer than the
 * proven cap" rule above would lose its proof.
 */
int64_t		 drain_page_limit(int64_t page_size, int64_t max_limit);

/*
 * A drain over the given parts (borrowed; they outlive it). follow may be
 * NULL; it is told of every event so relay lists found while draining are
 * used. Nothing is asked before drain_sync(). NULL on allocation failure.
 */
struct drain	*drain_new(struct loop *, struct pool *, struct ingest *,
		    struct store *, const struct config *, struct follow *);
/* Close every step (cursors stay where the last EOSE put them) and free. */
void		 drain_free(struct drain *);

/*
 * The followed set or a relay list changed: make sure every (author,
 * relay) has a cursor row, every relay is in the pool, and start work.
 * Suits follow_listen().
 */
void		 drain_sync(void *drain);

/*
 * Set the cursors of pubkey (NULL: every author) back to the start and
 * drain again; steps in flight for them are dropped first. Returns the
 * number of cursor rows reset, or -1.
 */
int64_t		 drain_reset(struct drain *, const uint8_t *pubkey);

/*
 * Backpressure: while held(arg) is true (e.g. the store over its budget
 * with nothing left to evict), no new step starts; steps in flight end
 * normally and the drain goes on by itself once it turns false (the
 * periodic tick looks again). held NULL removes the hook.
 */
typedef bool	(*drain_held_fn)(void *arg);
void		 drain_set_hold(struct drain *, drain_held_fn held, void *arg);

/*
 * Reconcile rows through ns (NIP-77) on the relays that speak it instead
 * of paging them; NULL pages everything. Rows recorded as a burst over
 * the cap or a relay ignoring until are looked at again through it, and
 * complete rows every negentropy.resync_s.
 */
struct negsync;
void		 drain_set_negsync(struct drain *, struct negsync *);

/* Steps open now (requests sent or queued in the pool). */
size_t		 drain_in_flight(const struct drain *);

/*
 * True when nothing is in flight, drain_sync() has run, and no cursor of
 * a followed author is still draining (or backfill.enabled is off). An
 * author without any cursor row (no relay known for it) is finished:
 * incomplete, STORE_CURSOR_REASON_NORELAY.
 */
bool		 drain_idle(struct drain *);

#endif
