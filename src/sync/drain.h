/*
 * drain.h — the author drain (ARCHITECTURE.md §6): every followed author's
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
#include "sync/drain_page.h"

struct loop;
struct pool;
struct ingest;
struct store;
struct config;
struct follow;
struct drain;

struct sync_ctx;

/*
 * A drain over the parts of cx (sync/ctx.h). cx->follow may be NULL;
 * else it is told of every event so relay lists found while draining are
 * used. Nothing is asked before drain_sync(). NULL on allocation failure.
 */
struct drain	*drain_new(const struct sync_ctx *cx);
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
