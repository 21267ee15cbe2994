/*
 * cursors.h — the `cursors` table: one author drain per (author, relay),
 * ARCHITECTURE.md §6. until_cursor is inclusive; a row not started has
 * none and the drain begins at "now". A relay is draining, complete, or
 * recorded incomplete with a reason (and the second a gap starts at).
 *
 * A cursor moved by a page must commit in the same transaction as that
 * page's events: the drain writes it while ingest's batch is open
 * (ingest_tx()). None of these opens a transaction of its own except
 * where said (they nest).
 */
#ifndef CACHEBOX_STORE_CURSORS_H
#define CACHEBOX_STORE_CURSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

struct store;

/*
 * Why a row is incomplete: code acts on the code, people read the text
 * (store_cursor_why_text(), then any detail).
 */
enum store_cursor_why {
	STORE_CURSOR_WHY_NONE = 0,
	STORE_CURSOR_WHY_BURST,		/* more events in one second than the relay returns */
	STORE_CURSOR_WHY_UNTIL,		/* the relay ignores until */
	STORE_CURSOR_WHY_NOANSWER,	/* no answer from the relay; asked again later */
	STORE_CURSOR_WHY_UNUSED,	/* relay not dialled (outbox limits); resumes when it is */
	STORE_CURSOR_WHY_RECOVERY,	/* ids the relay reported are under recovery */
	STORE_CURSOR_WHY_DENSE,		/* one second holds more than a session may */
};

enum store_cursor_state {
	STORE_CURSOR_DRAINING = 0,	/* not started or mid-drain */
	STORE_CURSOR_COMPLETE,
	STORE_CURSOR_INCOMPLETE,	/* finished, reason says why not all */
};

struct store_cursor {
	uint8_t			pubkey[32];
	char			relay[URL_MAX_BYTES + 1];
	bool			started;	/* until_cursor is set */
	int64_t			until_cursor;	/* valid when started */
	enum store_cursor_state	state;
	enum store_cursor_why	why;		/* NONE unless incomplete */
	char			reason[STORE_CURSOR_REASON_MAX + 1]; /* "" */
	bool			has_gap;
	int64_t			gap_since;	/* valid when has_gap */
	int64_t			pages, events, new_events, largest_page;
	int64_t			stalls, stalls_total;
	int64_t			updated_at;	/* wall seconds */
};

/* The row of (pubkey, relay) into *out. 1 found, 0 none, -1 (logged). */
int	store_cursor_get(struct store *, const uint8_t pubkey[32],
	    const char *relay, struct store_cursor *out);

/*
 * Make sure a row exists for (pubkey, relay); an existing row is left
 * alone. 1 created, 0 was there, -1 (logged).
 */
int	store_cursor_ensure(struct store *, const uint8_t pubkey[32],
	    const char *relay, int64_t now_s);

/*
 * Record a page that ended with EOSE: until_cursor = until (inclusive),
 * pages + 1, events + received, new_events + fresh, largest_page =
 * max(largest_page, received), stalls = 0. 0, or -1 (logged; also when
 * the row does not exist).
 */
int	store_cursor_page(struct store *, const uint8_t pubkey[32],
	    const char *relay, int64_t until, int64_t received, int64_t fresh,
	    int64_t now_s);

/* A request that ended without EOSE: stalls + 1, stalls_total + 1. */
int	store_cursor_stall(struct store *, const uint8_t pubkey[32],
	    const char *relay, int64_t now_s);

/* The relay has no more history for the author: complete. 0 or -1. */
int	store_cursor_complete(struct store *, const uint8_t pubkey[32],
	    const char *relay, int64_t now_s);

/*
 * The relay cannot be paged to the end: record why, the reason text (the
 * words of why, then ": detail" when detail is not NULL; cut at
 * STORE_CURSOR_REASON_MAX bytes) and the second a gap starts at
 * (gap_since < 0: none). Clears complete. 0 or -1.
 */
int	store_cursor_incomplete(struct store *, const uint8_t pubkey[32],
	    const char *relay, enum store_cursor_why why, const char *detail,
	    int64_t gap_since, int64_t now_s);

/*
 * Drain a finished row again from where it stopped: complete, reason and
 * stalls cleared; until_cursor, the gap and the counters stay. 0, or -1
 * (logged; also when the row does not exist).
 */
int	store_cursor_retry(struct store *, const uint8_t pubkey[32],
	    const char *relay, int64_t now_s);

/*
 * Record a possible gap at second gap_since while the drain goes on (the
 * row stays draining; the drain turns it into an incomplete reason once
 * the relay is finished). 0 or -1.
 */
int	store_cursor_gap(struct store *, const uint8_t pubkey[32],
	    const char *relay, int64_t gap_since, int64_t now_s);

/*
 * Every row of relay waiting on recovery (STORE_CURSOR_WHY_RECOVERY) is
 * complete: the relay's missing ids all arrived. Rows changed, or -1.
 */
int64_t	store_cursors_recovered(struct store *, const char *relay,
	    int64_t now_s);

/*
 * Set the cursors of pubkey (NULL: of every author) back to not started:
 * until_cursor, complete, reason, gap and stalls cleared; the traffic
 * counters (pages, events, new_events, largest_page, stalls_total) stay.
 * Number of rows reset, or -1 (logged).
 */
int64_t	store_cursors_reset(struct store *, const uint8_t *pubkey,
	    int64_t now_s);

/*
 * Call cb for every cursor of pubkey (NULL: of every author), ordered by
 * pubkey then relay. cb returns 0 to go on, 1 to stop. 0, or -1.
 */
typedef int	(*store_cursor_cb)(const struct store_cursor *, void *arg);
int	store_cursors_each(struct store *, const uint8_t *pubkey,
	    store_cursor_cb cb, void *arg);

/*
 * Up to max cursors on relay that are still draining, of followed (not
 * stale) authors, with pubkey > after (NULL: from the first), in pubkey
 * order: the drain's round-robin picks from here and passes the last
 * pubkey back as after. Number handed to cb, or -1.
 */
int64_t	store_cursors_draining(struct store *, const char *relay,
	    const uint8_t *after, size_t max, store_cursor_cb cb, void *arg);

/*
 * Why an author with no cursor row at all is incomplete: the drain makes
 * a row for every relay it knows for the author (bootstrap relays and the
 * author's write relays) whenever the followed set or a relay list
 * changes, so once that has run no row means no relay to ask.
 */
#define STORE_CURSOR_REASON_NORELAY	"no relay known for this author"

/*
 * Backfill progress over followed (not stale) authors, for every
 * surface.
 *   authors_total       followed authors
 *   authors_complete    every cursor row complete (at least one row)
 *   authors_incomplete  every row finished (complete or incomplete), at
 *                       least one incomplete; or no row at all
 *   authors_draining    the rest; once idle it is 0, so complete +
 *                       incomplete = total
 *   authors_norelay     of authors_incomplete, those with no row
 *                       (STORE_CURSOR_REASON_NORELAY)
 *   cursors_*           the same per (author, relay) row
 */
struct store_cursor_summary {
	int64_t	authors_total, authors_complete, authors_incomplete,
		authors_draining, authors_norelay;
	int64_t	cursors_total, cursors_complete, cursors_incomplete;
};
/* Fill *out. 0, or -1 (logged). */
int	store_cursors_summary(struct store *, struct store_cursor_summary *out);
/*
 * 1 when a followed (not stale) author still has a relay draining (the
 * summary's authors_draining > 0) without counting them, 0 when none,
 * -1 (logged).
 */
int	store_cursors_any_draining(struct store *);

const char *store_cursor_state_name(enum store_cursor_state);
/* The words of a reason code ("relay ignores until"), static. */
const char *store_cursor_why_text(enum store_cursor_why);

#endif
