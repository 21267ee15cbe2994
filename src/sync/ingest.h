/*
 * ingest.h — the one path every event from every relay takes into the
 * store: size limit → parse → dedup by id against the store (a duplicate
 * costs no signature check) → id + signature check → policy (the event
 * must match a filter of the subscription that asked for it) → insert,
 * and into the inbox when an uplink is configured.
 *
 * Batching: ingest opens a write transaction at the first insert and
 * commits it at the end of the loop round (a loop hook), so a burst of
 * events costs one transaction per round, never one per event. A planner
 * that moves a cursor because of a page (the drain at EOSE) writes the
 * cursor through the store while that same transaction is open
 * (ingest_tx() returns it), so the cursor and the events of its page
 * commit together: after a crash a cursor never points past events that
 * were not committed.
 */
#ifndef CACHEBOX_SYNC_INGEST_H
#define CACHEBOX_SYNC_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loop;
struct store;
struct filter;
struct relay_msg;

enum ingest_source {
	INGEST_LIVE = 0,
	INGEST_BACKFILL,
	INGEST_JOB,
	INGEST_RECOVERY,
};

enum ingest_result {
	INGEST_NEW = 0,		/* stored (and queued for the uplink) */
	INGEST_DUPLICATE,	/* already stored; no signature check spent */
	INGEST_INVALID,		/* malformed, bad id, bad signature, future */
	INGEST_TOO_LARGE,	/* over limits.max_event_bytes */
	INGEST_UNREQUESTED,	/* matches no filter of its subscription */
	INGEST_ERROR,		/* the store failed; the event was not kept */
};

/* What ingest learnt of an event it accepted or recognised. */
struct ingest_info {
	uint8_t		id[32];
	uint8_t		pubkey[32];
	int64_t		created_at;
	uint32_t	kind;
};

/* Running totals, for the status and the benchmarks. */
struct ingest_stats {
	uint64_t	received, stored, duplicates, invalid, too_large,
			unrequested, errors, transactions;
};

struct ingest;

/*
 * An ingest path writing into store, batching per round of loop. The
 * limits (limits.max_event_bytes) and whether to queue for the uplink are
 * read through ingest_configure(). NULL on allocation failure.
 */
struct ingest	*ingest_new(struct loop *, struct store *);
/* Commit what is pending and free. */
void		 ingest_free(struct ingest *);
/* Apply limits.max_event_bytes and whether an uplink is configured. */
void		 ingest_configure(struct ingest *, size_t max_event_bytes,
		    bool queue_for_uplink);

/*
 * Take one EVENT message that arrived on relay_url for a subscription
 * with filters[0..nfilters). On INGEST_NEW and INGEST_DUPLICATE, info (if
 * not NULL) describes the event. The message stays the caller's.
 */
enum ingest_result ingest_event(struct ingest *, struct relay_msg *msg,
		    const struct filter *filters, size_t nfilters,
		    enum ingest_source, const char *relay_url,
		    struct ingest_info *info);

/*
 * Make sure the batch transaction is open and return 0 (so a planner can
 * write a cursor into it), or -1 if the store failed.
 */
int		 ingest_tx(struct ingest *);
/* Commit the open batch now (also done by the loop hook). 0 or -1. */
int		 ingest_flush(struct ingest *);

const struct ingest_stats *ingest_stats(const struct ingest *);
const char	*ingest_result_name(enum ingest_result);

#endif
