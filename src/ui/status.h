/*
 * status.h — the status document: what GET /api/status, `cacheboxctl
 * status --json` and the console's `status` all print (ARCHITECTURE.md §9).
 */
#ifndef CACHEBOX_UI_STATUS_H
#define CACHEBOX_UI_STATUS_H

#include <stdint.h>

#include <cjson/cJSON.h>

struct app;
struct store_relay_row;
struct pool_relay_info;

/* A new status object owned by the caller; NULL on allocation failure. */
cJSON	*status_json(struct app *);

/*
 * A relays-table row as a status entry (url, role, state, events); the
 * caller adds what else it shows and owns the object. NULL on allocation
 * failure.
 */
cJSON	*status_relay_row(const struct store_relay_row *);
/*
 * One relay of a running pool as the status shows it (url, role, state,
 * traffic, subscriptions, last_error or null): a new object the caller
 * owns, NULL when out of memory.
 */
cJSON	*status_relay_info(const struct pool_relay_info *);
/*
 * Add what the sync planners know of info's relay to its row r: its NIP-77
 * support ("yes", "no", "unknown"), the ids pending recovery on it, and
 * its health: "never opened", "backing off", "reconnecting" or "not
 * connected" while it is not open, else "connected" or the recovery's
 * "connected, historic sync failures".
 */
void	 status_relay_sync(const struct app *, const struct pool_relay_info *,
	    cJSON *r);

/*
 * Events stored per second over the last full minute and the running one
 * (from ingest_minutes), rounded to a tenth; 0 when no ingest runs.
 */
double	 status_ingest_rate(const struct app *);

/*
 * Events stored in the last nb buckets of INGEST_HISTORY_BUCKET_S (the
 * running one last): the rows of ingest_history with what ingest has not
 * written yet, into counts[0..nb) (nb at most INGEST_HISTORY_S /
 * INGEST_HISTORY_BUCKET_S), the start of the first bucket into *first and
 * of the oldest bucket kept into *since (0: none). 0, or -1 (no store, a
 * wall clock not set, or a store error).
 */
int	 status_history(const struct app *, int64_t *counts, size_t nb,
	    int64_t *first, int64_t *since);

/* Resident set size of this process in bytes, 0 if unknown. */
long	 status_rss_bytes(void);

#endif
