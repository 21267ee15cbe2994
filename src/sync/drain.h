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
 * within one second steps to T - 1 and records a possible gap at T; events
 * newer than `until` mean the relay ignores it; both end as "incomplete"
 * with the reason, never as complete. A step without EOSE never moves a
 * cursor: it is asked again from the same place.
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

struct loop;
struct pool;
struct ingest;
struct store;
struct config;
struct follow;
struct drain;

/* The reasons recorded on an incomplete cursor (stable strings). */
#define DRAIN_REASON_BURST	"same-second burst over the relay cap"
#define DRAIN_REASON_UNTIL	"relay ignores until"

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

/* Steps open now (requests sent or queued in the pool). */
size_t		 drain_in_flight(const struct drain *);

/*
 * True when nothing is in flight and no cursor of a followed author is
 * still draining (or backfill.enabled is off).
 */
bool		 drain_idle(struct drain *);

#endif
