/*
 * retention.h — keeps the JSON bytes of the stored events within
 * store.max_bytes (ARCHITECTURE.md §5) by running store_events_evict() on
 * the loop: the oldest events that are neither queued for the uplink nor a
 * profile, follow list or relay list (kinds 0, 3, 10002) go first.
 *
 * A loop timer compares the maintained totals with store.max_bytes every
 * RETENTION_CHECK_MS (one row read, whatever the store holds). Once over,
 * it evicts one bounded step per tick, RETENTION_CHUNK_GAP_MS apart, down
 * to RETENTION_LOW_WATER_PCT of the budget (so a store sitting at its
 * budget is not trimmed by a few events on every tick). A step never runs
 * inside someone else's transaction: ingest's open batch is committed
 * first (ingest_flush), any other open level makes the step wait.
 * When a whole pass over the table frees nothing while still over budget,
 * everything left is protected: that is logged once, and the next pass
 * waits RETENTION_PROTECTED_RETRY_MS (forwarded events become evictable)
 * or a change of store.max_bytes.
 */
#ifndef CACHEBOX_SYNC_RETENTION_H
#define CACHEBOX_SYNC_RETENTION_H

#include <stdbool.h>
#include <stdint.h>

struct config;
struct ingest;
struct loop;
struct store;

enum retention_state {
	RETENTION_WITHIN = 0,	/* within store.max_bytes */
	RETENTION_EVICTING,	/* over it, evicting step by step */
	RETENTION_PROTECTED,	/* over it, and every event left is protected */
};

struct retention;

/*
 * Retention for store on loop, reading store.max_bytes from cfg at every
 * check (so a run-time change takes effect by the next check; see
 * retention_kick). ingest (may be NULL) is the batch committed before a
 * step. The first check runs at once. NULL on allocation failure.
 * Everything passed is borrowed and must outlive the retention.
 */
struct retention	*retention_new(struct loop *, struct store *,
			    struct ingest *, const struct config *);
/* Cancel the timer and free. NULL is a no-op. */
void			 retention_free(struct retention *);

/*
 * Check now instead of at the next tick (store.max_bytes changed); a
 * changed budget also ends the wait of the protected state.
 */
void			 retention_kick(struct retention *);

/* Events evicted since the daemon started. */
uint64_t		 retention_evicted(const struct retention *);
/* The current state, and its name ("within", "evicting", "protected"). */
enum retention_state	 retention_state(const struct retention *);
const char		*retention_state_name(enum retention_state);
/*
 * True once the first check ran and no eviction is under way (within the
 * budget, or over it with only protected events left): --exit-when-idle
 * waits for this.
 */
bool			 retention_settled(const struct retention *);

#endif
