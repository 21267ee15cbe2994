/*
 * rules.h — the store's one door for events, where what each event's
 * author asked is applied, whatever brought the event (drain, live,
 * NIP-77, recovery, jobs, import, a client of the box's relay):
 *
 *   NIP-01   one version per replaceable (pubkey, kind) or addressable
 *            (pubkey, kind, d) key: the newest, on a tie the lowest id;
 *            ephemeral kinds are never stored;
 *   NIP-09   a kind 5 removes the events its "e" tags name and every
 *            version of its "a" addresses up to its created_at, when they
 *            are its author's (a gift wrap's: when its "p" names the
 *            deleter), and they are refused when they come later; the
 *            kind 5 is kept; a deletion or a request to vanish is never
 *            deleted;
 *   NIP-40   an event that has expired is not stored, and one that
 *            expires is removed at its time (the sweep below);
 *   NIP-62   a kind 62 naming ALL_RELAYS or this box removes every event
 *            of its author up to its created_at (and gift wraps to it),
 *            keeps the request, and refuses such events from then on.
 *
 * Everything withdrawn leaves a tombstone (store/withdrawn.h), so no
 * planner fetches it again. The removals a rule makes that are too many
 * for one insert (a vanished author's history, events reaching their
 * expiry, the conversion of a store made before these rules) run in
 * bounded steps that the sync layer calls on the loop.
 */
#ifndef CACHEBOX_STORE_RULES_H
#define CACHEBOX_STORE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct store_event_row;

/*
 * Insert row under the rules; with enqueue also an inbox row for the
 * uplink. An enum store_insert (store/events.h): STORE_INSERT_NEW or
 * _REPLACED when stored, _EXISTS when the id was there already, _OLDER,
 * _EXPIRED, _EPHEMERAL, _DELETED or _VANISHED when a rule kept it out
 * (its tombstone written, but for an ephemeral one), -1 (logged) on a
 * SQLite error. Call inside the caller's transaction (outside one it opens
 * and commits its own).
 */
int	store_event_insert(struct store *, const struct store_event_row *,
	    bool enqueue);

/* The refusal (an enum store_insert) a tombstone's why stands for. */
int	store_withdrawn_result(int why);

/* Events the rules removed since the store was opened, per rule. */
struct store_rules_stats {
	uint64_t	superseded;	/* older versions a newer one replaced */
	uint64_t	deleted;	/* by their authors' kind 5 */
	uint64_t	expired;	/* at their expiration */
	uint64_t	vanished;	/* of authors who asked to vanish */
	uint64_t	ephemeral;	/* ephemeral ones an older store held */
	uint64_t	kept_aside;	/* roots' versions put in roots_history */
};
/* The counts (zero when none); the store owns them. */
const struct store_rules_stats *store_rules_stats(struct store *);

/*
 * Remove at most max events whose expiration is at or before now (wall
 * seconds), each leaving a tombstone. *next_at gets the next expiration
 * still stored (-1: none). Inside the caller's transaction if one is
 * open, else in one of its own. Events removed, or -1.
 */
int64_t	store_rules_expire_step(struct store *, int64_t now, size_t max,
	    int64_t *next_at);

/*
 * Remove at most max stored events of the oldest request to vanish not
 * yet purged (then its gift wraps), marking it purged once none is left.
 * Inside the caller's transaction if one is open, else its own. 1 when
 * more is left, 0 when no purge is pending, -1 on error; *removed (may be
 * NULL) gets the events removed.
 */
int	store_rules_vanish_step(struct store *, size_t max, int64_t *removed);

/*
 * The conversion of a store made before these rules (migration 014): the
 * next at most max rows are brought to them — an ephemeral or superseded
 * row removed, an expiration noted (the sweep removes the expired), a
 * stored kind 5 or 62 applied. Inside the caller's transaction if one is
 * open, else its own. 1 when rows are left (*left, may be NULL, how
 * many), 0 when done or none was pending, -1 on error.
 */
int	store_rules_fill_step(struct store *, size_t max, int64_t *left);

/*
 * Whether the row a scan or the uplink is about to hand out may be
 * served at now: not expired (expires_at < 0: none), not of an author who
 * vanished up to its created_at while the purge is still on. 1 yes, 0
 * no, -1 on error. Costs no query while no purge is pending.
 */
int	store_rules_servable(struct store *, const uint8_t pubkey[32],
	    int64_t created_at, uint32_t kind, const uint8_t id[32],
	    int64_t expires_at, int64_t now);

#endif
