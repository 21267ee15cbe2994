/*
 * relays_obs.h — the record of what relay pools report (relay/pool.h,
 * struct pool_observer) in the `relays` table: a relay's row when it is
 * added (or its role changes), its state, last error and backoff, the
 * NIP-11 facts learnt, and its traffic counters added up.
 *
 * Each report is written in a transaction of its own, never inside
 * another part's: ingest's open batch is committed first (as retention
 * does), so a batch that is later lost cannot take relay counters with it.
 * The pools call it at most every second while something is new and
 * every few seconds for traffic; one observer serves every pool (the
 * planners' and the uplink's).
 */
#ifndef CACHEBOX_SYNC_RELAYS_OBS_H
#define CACHEBOX_SYNC_RELAYS_OBS_H

#include "relay/pool.h"

struct store;
struct ingest;
struct relays_obs;

/*
 * An observer writing into store; ingest (may be NULL) is committed
 * before each record. Both are borrowed and must outlive it. NULL on
 * allocation failure.
 */
struct relays_obs	*relays_obs_new(struct store *, struct ingest *);
void			 relays_obs_free(struct relays_obs *);
/* The pool_observer to put in pool_opts.observer. */
struct pool_observer	 relays_obs_observer(struct relays_obs *);

#endif
