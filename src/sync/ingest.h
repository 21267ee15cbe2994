/*
 * ingest.h — the one path every event from every relay takes into the
 * store: size limit → parse → dedup by id against the store (a duplicate
 * costs no signature check) → id + signature check → policy (the event
 * must match a filter of the subscription that asked for it) → insert,
 * and into the inbox when an uplink is configured.
 *
 * Batching: ingest opens a write transaction at the first insert and
 * commits it at the top of a later loop round (a loop hook) once the batch
 * is INGEST_COMMIT_MIN_MS old or holds INGEST_COMMIT_EVENTS events, and a
 * deadline armed at the open commits it when the loop has nothing else to
 * do: a stream of events costs a few transactions a second, never one per
 * event or per round (each commit rewrites the index pages it touched,
 * which wears an SD card). A planner
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
struct event;
struct filter;
struct relay_msg;

enum ingest_source {
	INGEST_LIVE = 0,
	INGEST_BACKFILL,
	INGEST_JOB,
	INGEST_RECOVERY,
	INGEST_CLIENT,		/* sent to the box's own relay by a client */
	INGEST_IMPORT,		/* read from a file by cacheboxctl import */
};

enum ingest_result {
	INGEST_NEW = 0,		/* stored (and queued for the uplink) */
	INGEST_DUPLICATE,	/* already stored (no signature check spent),
				 * or kept out by a rule: info's not_kept
				 * says which */
	INGEST_INVALID,		/* malformed, bad id, bad signature, future,
				 * or a copy of a stored id claiming another
				 * author, time or kind */
	INGEST_TOO_LARGE,	/* over limits.max_event_bytes, or (text only)
				 * over EVENT_MAX_JSON_VALUES / _DEPTH */
	INGEST_UNREQUESTED,	/* matches no filter of its subscription */
	INGEST_ERROR,		/* the store failed; the event was not kept */
};

/*
 * What ingest learnt of an event it accepted or recognised; for
 * INGEST_INVALID, why says what was wrong (EVENT_OK when the copy of a
 * stored id claimed another author, time or kind).
 */
struct ingest_info {
	uint8_t		id[32];
	uint8_t		pubkey[32];
	int64_t		created_at;
	uint32_t	kind;
	int		why;		/* enum event_result */
	bool		off_time;	/* INGEST_UNREQUESTED: a filter matches
					   but for its since or until */
	int		not_kept;	/* INGEST_DUPLICATE: 0 a copy of a
					   stored id, else the enum
					   store_insert that kept it out
					   (STORE_INSERT_OLDER, _EXPIRED,
					   _DELETED, _VANISHED) */
};

/*
 * Running totals, for the status and the benchmarks. received counts
 * every call; each call lands in exactly one of stored .. errors, or in
 * one of the rules' counts (superseded, expired, ephemeral, deleted,
 * vanished, withdrawn). sig_checks
 * counts BIP-340 verifications run (a duplicate runs none), bytes_stored
 * the canonical JSON bytes inserted, transactions the batch commits.
 */
struct ingest_stats {
	uint64_t	received, stored, duplicates, invalid, too_large,
			unrequested, errors;
	uint64_t	sig_checks, bytes_stored, transactions;
	uint64_t	lost_batches;	/* batches whose COMMIT failed or rolled back */
	uint64_t	ephemeral;	/* kinds 20000-29999: told, never stored */
	uint64_t	superseded;	/* not stored: a newer version of its
					   key is held (answered as a duplicate) */
	uint64_t	expired;	/* not stored: expired on arrival
					   (NIP-40; answered as a duplicate) */
	uint64_t	replaced;	/* of stored: an older version of its
					   key held was removed */
	uint64_t	deleted;	/* not stored: its author deleted it
					   (NIP-09; answered as a duplicate) */
	uint64_t	vanished;	/* not stored: its author asked to
					   vanish (NIP-62; as a duplicate) */
	uint64_t	withdrawn;	/* not stored: withdrawn before (a
					   later copy of one counted in
					   superseded .. vanished), refused by
					   its tombstone without a signature
					   check; as a duplicate */
};

struct ingest;

/*
 * An ingest path writing into store, batching per round of loop (loop may
 * be NULL: then only ingest_flush commits). It starts with
 * EVENT_MAX_BYTES_CEILING and no uplink until ingest_configure(). NULL on
 * allocation failure or when its statements do not compile.
 */
struct ingest	*ingest_new(struct loop *, struct store *);
/*
 * Commit what is pending, write the running bucket of the stored-events
 * history (one transaction of its own), and free.
 */
void		 ingest_free(struct ingest *);
/*
 * Apply limits.max_event_bytes (capped at EVENT_MAX_BYTES_CEILING) and
 * whether an uplink is configured (new events then also go to the inbox).
 */
void		 ingest_configure(struct ingest *, size_t max_event_bytes,
		    bool queue_for_uplink);

/*
 * When the loop commits a batch: at the top of a round once it is min_ms
 * old or holds events events; min_ms is also the deadline that ends it on
 * an idle loop. Starts as INGEST_COMMIT_MIN_MS and INGEST_COMMIT_EVENTS
 * (tests and benchmarks change it). The rounds' checks use it at once; a
 * batch already open keeps the deadline it was given.
 */
void		 ingest_commit_policy(struct ingest *, uint64_t min_ms,
		    size_t events);

/*
 * Take one EVENT message that arrived on relay_url (may be NULL) for a
 * subscription with filters[0..nfilters) (nfilters 0: no policy check,
 * for events the box asked for by other means). On INGEST_NEW and
 * INGEST_DUPLICATE, info (if not NULL) describes the event; a duplicate's
 * pubkey, created_at and kind are the stored event's, never the relay's
 * unverified claims: a copy of a stored id claiming other ones is
 * INGEST_INVALID (neither runs a signature check). The
 * message stays the caller's (its event object may have been taken).
 * The event's write joins the open batch; it is committed by the loop as
 * described above, by ingest_flush, or at once when the batch reaches
 * INGEST_MAX_BATCH_EVENTS events.
 */
enum ingest_result ingest_event(struct ingest *, struct relay_msg *msg,
		    const struct filter *filters, size_t nfilters,
		    enum ingest_source, const char *relay_url,
		    struct ingest_info *info);

/*
 * Make sure the batch transaction is open and return 0 (so a planner can
 * write a cursor into it, e.g. at EOSE: ingest_tx(), then
 * store_cursor_page()), or -1 if the store failed. If that batch later
 * fails to commit, the events and the cursor are lost together, so the
 * page is simply asked again.
 */
int		 ingest_tx(struct ingest *);
/* Commit the open batch now (also done by the loop hook). 0 or -1. */
int		 ingest_flush(struct ingest *);
/* Whether a batch transaction is open. */
bool		 ingest_tx_open(const struct ingest *);

/*
 * Same path for event JSON text[0..len) that did not come in a relay
 * message (tests, a local import). Same results and counters.
 */
enum ingest_result ingest_event_json(struct ingest *, const char *text,
		    size_t len, const struct filter *filters, size_t nfilters,
		    enum ingest_source, const char *relay_url,
		    struct ingest_info *info);

/*
 * A new event ingest stored, as its listeners see it: the parsed and
 * verified event and the canonical JSON written, both valid during the
 * call only.
 */
struct ingest_stored {
	const struct event	*ev;
	const char		*json;
	size_t			 len;
	enum ingest_source	 source;
};

/*
 * Be told of every new event ingest stores, from inside ingest_event while
 * the event's batch is open (so a reader on the store's connection sees
 * it). A listener must not call ingest. At most INGEST_MAX_LISTENERS;
 * they are called in the order they were added. 0, or -1 when full.
 */
typedef void	(*ingest_stored_fn)(void *arg, const struct ingest_stored *);
int		 ingest_listen(struct ingest *, ingest_stored_fn fn, void *arg);
/* Remove the listener fn/arg added before (nothing if it is not there). */
void		 ingest_unlisten(struct ingest *, ingest_stored_fn fn,
		    void *arg);

/* The running totals, owned by ingest. */
const struct ingest_stats *ingest_stats(const struct ingest *);
/*
 * Events stored per minute over the last INGEST_MINUTES minutes, on the
 * monotonic clock (core/minring.h); the ingest's, valid until
 * ingest_free. A batch that fails to commit is not taken back out.
 */
struct minring;
const struct minring *ingest_minutes(const struct ingest *);
/*
 * Events stored and not yet written to the history (store/history.h):
 * the committed count of the latest bucket (written when the next bucket
 * begins or at ingest_free) and the open batch, counted in the bucket of
 * now. Up to two (bucket start, events) into start[] and count[]; returns
 * how many. A reader adds them to the rows it reads.
 */
size_t	ingest_history_pending(const struct ingest *, int64_t start[2],
	    int64_t count[2]);
/* "new", "duplicate", "invalid", "too large", "unrequested", "error". */
const char	*ingest_result_name(enum ingest_result);
/* "live", "backfill", "job", "recovery", "client", "import": events.source. */
const char	*ingest_source_name(enum ingest_source);

#endif
