/*
 * recovery.h — the missing-event recovery index (ARCHITECTURE.md §6):
 * event ids a relay said it has (NIP-77 reconciliation) that
 * an exact-id fetch did not bring, fetched again later, per relay,
 * within a budget.
 * The index is rows in the store (store/recovery.h), so a restart loses
 * nothing. It does no network work: the sync layer fetches and reports
 * back here, and it asks here when and what to fetch.
 *
 * The policy:
 *  - Per relay, one attempt at a time. An attempt is due once the relay's
 *    deadline has passed; recovery_begin then hands out the first
 *    RECOVERY_MAX_IDS_PER_ATTEMPT ids of the relay's queue and puts them
 *    behind every other pending id, so in a set larger than one attempt
 *    every id has had a turn before any has a second.
 *  - A relay's first registration makes its first attempt due one base
 *    delay (recovery.backoff_base_ms) later: the events may still come by
 *    another path first.
 *  - Completing an attempt removes the ids that arrived. Each id of that
 *    attempt still missing has failed once more; every id has its own
 *    budget of RECOVERY_MAX_FAILURES_PER_ID failed fetches, after which it
 *    expires. Ids registered while the attempt was in flight are not
 *    charged for it.
 *  - The wait before the next attempt is the base delay doubled once per
 *    failure of the most-failed id still pending, capped at
 *    recovery.backoff_max_ms. Because it follows the oldest unresolved id,
 *    newer ids that arrive never shorten the wait of older ones, nor renew
 *    their budget.
 *  - An expired id is given up, loudly (a warning), and stays listed; the
 *    relay's other ids go on. Once an id has expired, recovering the rest
 *    can no longer make the relay's history whole, so its health cannot be
 *    restored by recovery. The same holds when the relay was already
 *    degraded at registration, or when a batch that registered none of its
 *    ids failed on it (recovery_note_failure).
 *  - Deferring (the relay is not connected, say) pushes the deadline one
 *    base delay out and spends no budget; an attempt in flight is given
 *    back. So is one in flight when the daemon stopped: at start-up it is
 *    cleared, its ids keep their failures.
 *  - An event stored by any path clears its id on every relay at once,
 *    without spending an attempt, except the ids of an attempt in flight:
 *    that attempt's completion settles them, and counts one whose event is
 *    stored by then as recovered even if it came another way.
 *  - A relay that has a row here is "connected, historic sync failures";
 *    one without is "connected" as far as recovery knows. The row goes
 *    when every pending id has been recovered and health can be restored;
 *    otherwise it stays, with its expired ids, until recovery_reset.
 *
 * How the sync layer drives it:
 *  - an exact-id fetch came back short: recovery_register() with the ids
 *    still missing, the batch they came from and whether the relay's
 *    historic sync had already failed otherwise;
 *  - on a timer at recovery_next()'s deadline, for each due relay: not
 *    connected, recovery_defer(); else recovery_begin(), one exact-id REQ
 *    for the ids, and at its EOSE (or timeout) recovery_complete() with the
 *    ids that came back (a disconnection mid-way: recovery_defer());
 *  - ingest, for the events a batch stored: recovery_satisfied();
 *  - a batch of historic sync failed on a relay: recovery_note_failure();
 *  - the daily re-sync of a relay, or the relay removed: recovery_reset();
 *  - surfaces: recovery_each() / recovery_summary().
 * A FULLY_RECOVERED outcome with can_restore_health lets the caller
 * promote the relay back to connected.
 *
 * Time: every call takes now_ms, Unix milliseconds from the caller. The
 * deadlines are stored, so they must mean the same after a reboot; the
 * monotonic clock does not. If the wall clock steps back, a deadline may
 * lie further ahead than any delay this policy sets; such a deadline is
 * treated as due, so a clock step never stalls recovery.
 *
 * Cost: each call touches a bounded number of rows, whatever a relay
 * holds: one relay row, at most one attempt's ids through an index range,
 * or the ids passed in. recovery_register and recovery_satisfied cost in
 * proportion to the ids passed; recovery_expire and recovery_reset (rare
 * actions) in proportion to the relay's ids. recovery_register, _begin,
 * _complete, _satisfied and _expire write several statements that must
 * land whole, so each runs them in one transaction of its own (a savepoint
 * inside the caller's, such as ingest's open batch); the other calls write
 * one statement.
 */
#ifndef CACHEBOX_SYNC_RECOVERY_H
#define CACHEBOX_SYNC_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

struct store;
struct recovery;

/*
 * The index on st with base and max delays in ms (recovery.backoff_base_ms
 * and recovery.backoff_max_ms). Attempts left in flight by the last run
 * are released (no budget spent). st is borrowed and must outlive it.
 * NULL (logged) on allocation or store failure.
 */
struct recovery	*recovery_new(struct store *st, int64_t base_ms,
		    int64_t max_ms);
/* NULL is a no-op. */
void		 recovery_free(struct recovery *);

/* New delays from now on (values below 1 ms are taken as 1). */
void		 recovery_set_backoff(struct recovery *, int64_t base_ms,
		    int64_t max_ms);
/*
 * The wait after an attempt when the most-failed pending id has failed
 * `failures` times: base doubled that many times (at most
 * RECOVERY_BACKOFF_MAX_DOUBLINGS), capped at max.
 */
int64_t		 recovery_backoff_ms(const struct recovery *, int64_t failures);

/* What a registration did. */
struct recovery_registered {
	int64_t	added;		/* ids newly pending (new, or expired before) */
	int64_t	already_pending;
	int64_t	already_stored;	/* the event is in the store: not added */
	int64_t	pending_total;	/* pending on the relay afterwards */
};

/*
 * Note ids[0..n) as missing on relay, reported by batch `batch`. Repeats
 * (in the call or with what is pending) merge. relay_degraded: the relay's
 * historic sync already failed otherwise, so full recovery cannot restore
 * its health. Cost in proportion to n. 0 with *out filled (may be NULL),
 * or -1 (logged; nothing changed).
 */
int		 recovery_register(struct recovery *, const char *relay,
		    uint64_t batch, const uint8_t (*ids)[32], size_t n,
		    bool relay_degraded, int64_t now_ms,
		    struct recovery_registered *out);

enum recovery_begin {
	RECOVERY_BEGUN = 0,	/* an attempt was handed out */
	RECOVERY_NOT_DUE,	/* pending ids, deadline at due_ms */
	RECOVERY_BUSY,		/* an attempt is in flight */
	RECOVERY_IDLE,		/* nothing pending on the relay */
};

/* An attempt, filled by recovery_begin; owned by the caller. */
struct recovery_attempt {
	uint8_t	ids[RECOVERY_MAX_IDS_PER_ATTEMPT][32];
	size_t	n;
	int64_t	number;		/* 1-based, counted per relay */
	int64_t	due_ms;		/* NOT_DUE: when it will be due */
};

/*
 * Begin an attempt on relay if one is due: up to
 * RECOVERY_MAX_IDS_PER_ATTEMPT ids in out->ids, in queue order, which the
 * caller fetches with one exact-id REQ and then reports with
 * recovery_complete (or gives back with recovery_defer). An enum
 * recovery_begin, or -1 (logged).
 */
int		 recovery_begin(struct recovery *, const char *relay,
		    int64_t now_ms, struct recovery_attempt *out);

enum recovery_result {
	RECOVERY_NONE = 0,		/* nothing settled: no attempt in flight
					 * (never begun, given back, reset) */
	RECOVERY_FULLY_RECOVERED,	/* nothing pending any more */
	RECOVERY_PARTIALLY_RECOVERED,	/* some arrived, the rest wait */
	RECOVERY_RETRY_SCHEDULED,	/* none arrived, the rest wait */
	RECOVERY_SOME_EXPIRED,		/* some expired, the rest wait */
	RECOVERY_EXPIRED,		/* the last pending ids expired */
};

struct recovery_outcome {
	enum recovery_result	result;
	int64_t	recovered;		/* ids settled as arrived by this call */
	int64_t	recovered_total;	/* ... since the relay's row was made */
	int64_t	expired;		/* ids expired by this call */
	int64_t	remaining;		/* ids pending afterwards */
	int64_t	attempts;		/* attempts begun on the relay */
	int64_t	next_attempt_in_ms;	/* wait set by this call (PARTIALLY,
					 * RETRY, SOME_EXPIRED), else 0 */
	bool	can_restore_health;	/* full recovery may promote the relay */
};

/*
 * Settle the attempt in flight on relay: arrived[0..n) are the ids that
 * came back (ids not in the attempt but pending count too). RECOVERY_NONE
 * when no attempt is in flight, changing nothing. 0 with *out filled, or
 * -1 (logged; the attempt stays in flight).
 */
int		 recovery_complete(struct recovery *, const char *relay,
		    const uint8_t (*arrived)[32], size_t n, int64_t now_ms,
		    struct recovery_outcome *out);

/*
 * No attempt can be made on relay now: the next is due one base delay
 * after now_ms, no budget is spent, and an attempt in flight is given back
 * (a completion for it is then RECOVERY_NONE). 1 deferred, 0 the relay
 * has no row, -1 (logged).
 */
int		 recovery_defer(struct recovery *, const char *relay,
		    int64_t now_ms);

/*
 * The events ids[0..n) are stored (by any path): clear them on every
 * relay, no attempt spent (ids of an attempt in flight excepted, see
 * above). cb (may be NULL) is called, after the changes are written
 * (into the caller's transaction when one is open: its rollback undoes
 * them), once for each relay whose last pending id this cleared, with a
 * RECOVERY_FULLY_RECOVERED outcome; relay is valid during the call only.
 * One probe when nothing is missing anywhere. Pending ids cleared, or -1.
 */
typedef void	(*recovery_outcome_cb)(const char *relay,
		    const struct recovery_outcome *, void *arg);
int64_t		 recovery_satisfied(struct recovery *,
		    const uint8_t (*ids)[32], size_t n, int64_t now_ms,
		    recovery_outcome_cb cb, void *arg);

/*
 * A batch of historic sync failed on relay. If that batch registered none
 * of the relay's ids (among the last RECOVERY_MAX_SOURCE_BATCHES that
 * did), the failure is unrelated: full recovery can no longer restore the
 * relay's health. 1 when that changed now, 0 not (or no row), -1.
 */
int		 recovery_note_failure(struct recovery *, const char *relay,
		    uint64_t batch, int64_t now_ms);

/*
 * Give up every pending id of relay now (an operator's decision): they
 * expire, an attempt in flight is dropped, health cannot be restored.
 * RECOVERY_EXPIRED with the count, or RECOVERY_NONE when nothing was
 * pending. Costs in proportion to the relay's ids. 0 or -1.
 */
int		 recovery_expire(struct recovery *, const char *relay,
		    int64_t now_ms, struct recovery_outcome *out);

/*
 * Forget relay: every id, pending or expired, and its row (the daily
 * re-sync rediscovers what is still missing). Costs in proportion to the
 * relay's ids. Pending ids dropped, or -1.
 */
int64_t		 recovery_reset(struct recovery *, const char *relay);

/*
 * The relay with the earliest deadline among those with pending ids and
 * nothing in flight, into relay (len bytes) and *due_ms (now_ms or
 * earlier when due; a deadline past what a clock step allows counts as
 * now_ms). The caller begins or defers each due relay before asking again.
 * 1 found, 0 none, -1.
 */
int		 recovery_next(struct recovery *, int64_t now_ms, char *relay,
		    size_t len, int64_t *due_ms);

enum recovery_health {
	RECOVERY_HEALTH_CONNECTED = 0,		/* nothing recovery knows of */
	RECOVERY_HEALTH_SYNC_FAILURES,		/* missing or given-up ids, or
						 * a failure recovery cannot
						 * repair */
};
/* "connected" or "connected, historic sync failures". */
const char	*recovery_health_name(enum recovery_health);

/* One relay, for the surfaces. */
struct recovery_summary {
	char			relay[URL_MAX_BYTES + 1];
	int64_t			pending;
	bool			in_flight;
	int64_t			next_attempt_ms;	/* wall ms */
	int64_t			expired;		/* given up, listed */
	int64_t			attempts;
	int64_t			recovered;
	bool			can_restore_health;
	enum recovery_health	health;
};

/*
 * Relay's summary into *out. 1 when it has a row, 0 when not (out is then
 * the relay with zeros, health CONNECTED), -1.
 */
int		 recovery_summary(struct recovery *, const char *relay,
		    struct recovery_summary *out);
/*
 * cb for every relay with a row, in relay order; cb returns 0 to go on,
 * 1 to stop, and must not call into the recovery index. 0, or -1.
 */
typedef int	(*recovery_summary_cb)(const struct recovery_summary *,
		    void *arg);
int		 recovery_each(struct recovery *, recovery_summary_cb cb,
		    void *arg);

#endif
