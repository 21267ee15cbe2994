/*
 * relays_obs.h — the record of what relay pools report (relay/pool.h,
 * struct pool_observer) in the `relays` table: a relay's row when it is
 * added (or its role changes), its state, last error and backoff, the
 * NIP-11 facts learnt, and its traffic counters added up.
 *
 * Reports are written into ingest's open batch (they commit with its
 * events), else in a transaction of their own, never inside another
 * part's transaction: a batch that is lost takes the counters of its time
 * with it, as it takes its events. The pools call it at most
 * every second while something is new and every few seconds for traffic;
 * one observer serves every pool (the planners' and the uplink's).
 */
#ifndef CACHEBOX_SYNC_RELAYS_OBS_H
#define CACHEBOX_SYNC_RELAYS_OBS_H

#include "relay/pool.h"

struct store;
struct ingest;
struct relays_obs;

/*
 * An observer writing into store, inside ingest's open batch (none open,
 * or ingest NULL: a transaction of its own per flush). Both are borrowed and must outlive
 * it. NULL on allocation failure.
 */
struct relays_obs	*relays_obs_new(struct store *, struct ingest *);
void			 relays_obs_free(struct relays_obs *);
/* The pool_observer to put in pool_opts.observer. */
struct pool_observer	 relays_obs_observer(struct relays_obs *);

#endif
