/*
 * negsync.h — NIP-77 reconciliation of followed authors' histories, and
 * the recovery of ids a relay reported but did not deliver (persisted in
 * SQLite: sync/recovery.h; ARCHITECTURE.md §6).
 *
 * The drain hands an (author, relay) row to negsync instead of paging it
 * when the relay is not known to refuse NIP-77. A step reconciles the
 * author's events (all kinds) held by the box with the relay's, as one
 * session per time window of at most NEGSYNC_WINDOW_ITEMS of the box's own
 * items (neg_window_next: a 1,000,000-event history never becomes a
 * 40 MB set). The ids the relay has and the box lacks are fetched with
 * exact-id REQs of at most RECOVERY_MAX_IDS_PER_ATTEMPT ids (and at most
 * the relay's cap, learnt from a short answer: sync/idfetch.h; the ids
 * past it are asked again at once), two at a time per step, while the
 * session goes on; when the queue of ids to fetch is
 * full the session's next message waits (the protocol is request and
 * answer, so nothing else has to). An id that did not come goes to the
 * recovery index, which fetches it again later with backoff.
 *
 * At most one step per author runs at a time, over every relay: the next
 * relay reconciles against what the first one brought, so relays holding
 * the same events send each of them once between them (paging would send
 * it once per relay).
 *
 * A relay that answers NEG-OPEN with NEG-ERR, a refusing NOTICE, CLOSED,
 * or nothing within NEGSYNC_FIRST_REPLY_MS is recorded as not speaking
 * NIP-77 (relays.negentropy = 0) and paged as before; the refusal is tried
 * again a day later. A relay that answered once is recorded as speaking
 * it. So is, with its reason, one that breaks the protocol: a session
 * past its budget (more round trips, bytes or time than an honest
 * reconciliation of the items in play takes: neg_rounds_bound), or a
 * connection closed for a message too big during a session; its steps
 * end at once and its rows are paged. Nothing waits forever: a step that makes no progress for
 * NEGSYNC_IDLE_MS ends, and so does every fetch after
 * NEGSYNC_FETCH_TIMEOUT_MS.
 */
#ifndef CACHEBOX_SYNC_NEGSYNC_H
#define CACHEBOX_SYNC_NEGSYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loop;
struct pool;
struct ingest;
struct store;
struct config;
struct follow;
struct recovery;
struct negsync;
struct negsync_step;

enum negsync_support {
	NEGSYNC_UNKNOWN = 0,	/* never tried, or refused more than a day ago */
	NEGSYNC_YES,		/* reconciled */
	NEGSYNC_NO,		/* refused within the last day */
};

/* How a step ended. */
enum negsync_end {
	NEGSYNC_COMPLETE,	/* every id the relay has is stored */
	NEGSYNC_RECOVERING,	/* some did not come: under recovery */
	NEGSYNC_REFUSED,	/* the relay does not reconcile: page it */
	NEGSYNC_FAILED,		/* cut short (connection, timeout): again later */
	NEGSYNC_DENSE,		/* one second holds more than a session may */
};

typedef void	(*negsync_done_fn)(void *arg, enum negsync_end,
		    const char *why);

/* Running totals for the status. */
struct negsync_stats {
	uint64_t	steps, complete, recovering, refused, failed;
	uint64_t	sessions;		/* NEG-OPENs sent (one per window) */
	uint64_t	msgs_out, msgs_in, bytes_out, bytes_in;
	uint64_t	need;			/* ids the relays had and the box lacked */
	uint64_t	withdrawn;		/* of those, withdrawn here: not fetched */
	uint64_t	fetched;		/* of those, arrived by exact-id fetch */
	uint64_t	registered;		/* of those, handed to recovery */
	uint64_t	recovery_attempts, recovered, expired;
	uint64_t	over_budget;		/* sessions ended past their budget */
};

struct sync_ctx;

/*
 * A planner over the parts of cx (sync/ctx.h); cx->follow may be NULL. It
 * opens the recovery index (recovery.backoff_*_ms), releases attempts a
 * crash left in flight, and starts the recovery timer. NULL on failure.
 */
struct negsync	*negsync_new(const struct sync_ctx *cx);
/* Stop every step and fetch (no callbacks) and free. NULL is a no-op. */
void		 negsync_free(struct negsync *);

/* What is known of url's NIP-77 support now. */
enum negsync_support negsync_support(struct negsync *, const char *url);
/* Why url is recorded as not reconciling now, or "". */
const char	*negsync_support_why(struct negsync *, const char *url);
/* "unknown", "yes", "no". */
const char	*negsync_support_name(enum negsync_support);
/*
 * Whether the drain should reconcile rows on url rather than page them:
 * negentropy.enabled and the relay not known to refuse.
 */
bool		 negsync_wanted(struct negsync *, const char *url);
/*
 * Whether a step for author may start on url now: no step of that author
 * is running on any relay, a session slot is free and url holds fewer
 * than NEGSYNC_STEPS_PER_RELAY of them (one relay never takes them all).
 */
bool		 negsync_can_start(const struct negsync *, const uint8_t pk[32],
		    const char *url);
/*
 * Reconcile author pk on url; done(arg, ...) runs once, from a callback
 * of the loop, when the step ends (after which the step is gone). NULL
 * when it cannot start (negsync_can_start false, or a store or memory
 * failure): the caller pages the row or tries later.
 */
struct negsync_step *negsync_start(struct negsync *, const uint8_t pk[32],
		    const char *url, negsync_done_fn done, void *arg);
/*
 * A scoped step reconciles one filter (a job batch's: its authors or
 * ids, kinds, tags) instead of an author, window by window from until
 * down to since (< 0: none), each window at most NEGSYNC_WINDOW_ITEMS of
 * the box's own items of the filter, whole seconds. When a window is
 * reconciled and every id it named came or is under recovery, window(arg,
 * next_until, came, fresh) runs inside ingest's open batch (so what it
 * records commits with the window's events): the window's lowest second
 * less one, the ids that came and of them the new ones. It returns 0, or
 * -1 (the step ends failed). Scoped steps share the session slots
 * (NEGSYNC_MAX_STEPS, NEGSYNC_STEPS_PER_RELAY) but hold no author.
 */
typedef int	(*negsync_window_fn)(void *arg, int64_t next_until,
		    int64_t came, int64_t fresh);

struct filter;

struct negsync_scope {
	const struct filter	*f;	/* copied; its since, until, limit unused */
	int64_t			 since;	/* lowest second, or -1 */
	int64_t			 until;	/* highest second, >= 0 */
	int			 source;	/* enum ingest_source of fetches */
	negsync_window_fn	 window;
	const char		*label;	/* for the log, or NULL */
};

/* Whether a scoped step may start on url now (a session slot is free). */
bool		 negsync_can_start_scope(const struct negsync *,
		    const char *url);
/*
 * Start a scoped step; as negsync_start (NULL when it cannot start: no
 * slot, the newest second holds more than a session may, a store or
 * memory failure).
 */
struct negsync_step *negsync_start_scope(struct negsync *,
		    const struct negsync_scope *, const char *url,
		    negsync_done_fn done, void *arg);
/* Stop a step without calling its done. */
void		 negsync_cancel(struct negsync_step *);

/* Apply recovery.backoff_*_ms after a change. */
void		 negsync_config_changed(struct negsync *);
/* The recovery index, for the surfaces. */
struct recovery	*negsync_recovery(const struct negsync *);
const struct negsync_stats *negsync_stats(const struct negsync *);
/* Steps running now (for idle). */
size_t		 negsync_steps(const struct negsync *);
/* Recovery fetches in flight now. */
size_t		 negsync_fetches(const struct negsync *);

#endif
