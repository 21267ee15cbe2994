/*
 * withdrawn.h — what authors withdrew (migration 014): tombstones of event
 * ids the box will not keep, floors under replaceable and addressable
 * keys, NIP-62 requests to vanish, and the superseded versions of the
 * roots' own profile, follow list and relay list kept aside.
 *
 * These are the tables the rules at the store's one door read and write
 * (store/rules.h); nothing here removes an event. A floor under a key
 * stands for versions withdrawn as a whole (an address deleted, the
 * newest version deleted or expired). A tombstone whose created_at is
 * known was made from an event that passed verification, so its fields
 * can be trusted like a stored row's: a fetch by id never asks for it
 * again. The table is bounded (STORE_WITHDRAWN_MAX rows, the oldest
 * withdrawn first out).
 */
#ifndef CACHEBOX_STORE_WITHDRAWN_H
#define CACHEBOX_STORE_WITHDRAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf;
struct store;

/* Why an id was withdrawn (withdrawn.why). */
enum store_withdrawn_why {
	STORE_WITHDRAWN_SUPERSEDED = 1,	/* a newer version of its key */
	STORE_WITHDRAWN_DELETED,	/* NIP-09, by its author */
	STORE_WITHDRAWN_EXPIRED,	/* NIP-40 */
	STORE_WITHDRAWN_VANISHED,	/* NIP-62 */
};

/* One tombstone. created_at and kind are -1 when not known. */
struct store_withdrawn {
	uint8_t		id[32];
	uint8_t		pubkey[32];	/* the author's, or the deleter's */
	int64_t		created_at;
	int64_t		kind;
	int		why;		/* enum store_withdrawn_why */
};

/* "superseded", "deleted", "expired", "vanished", or "?". */
const char	*store_withdrawn_why_name(int why);

/*
 * Remember w, withdrawn at now (wall seconds). A row of the same (id,
 * pubkey) learns the created_at and kind it lacked; one that knew them
 * keeps its why. Past STORE_WITHDRAWN_MAX rows the oldest go. Inside the
 * caller's transaction. 0 or -1 (logged).
 */
int	store_withdrawn_add(struct store *, const struct store_withdrawn *w,
	    int64_t now);

/*
 * The tombstone of id made from a verified event (created_at known), into
 * out (may be NULL). 1 found, 0 none, -1 on error.
 */
int	store_withdrawn_known(struct store *, const uint8_t id[32],
	    struct store_withdrawn *out);

/*
 * Whether a tombstone refuses the event id of pubkey and kind: one of its
 * author (any reason), or, for a gift wrap (kind 1059), a deletion by
 * one of recipients[0..nrec) (its "p" tags). A deletion (kind 5) and a
 * request to vanish (62) are never refused for being named by a deletion.
 * The why, 0 when nothing refuses it, -1 on error.
 */
int	store_withdrawn_match(struct store *, const uint8_t id[32],
	    const uint8_t pubkey[32], uint32_t kind,
	    const uint8_t (*recipients)[32], size_t nrec);

/* Rows now (kept in memory from the open on). */
int64_t	store_withdrawn_count(struct store *);

/*
 * Raise the floor of the key (pubkey, kind, d) to the version (at, id):
 * from now on a version of the key that is not newer than it (NIP-01's
 * order: a later second, or the same second and a lower id) is refused,
 * for why. A floor already higher stays. A deletion of the address passes
 * its own second and an id of 32 zero bytes (the whole second goes).
 * 0 or -1.
 */
int	store_withdrawn_key_raise(struct store *, const uint8_t pubkey[32],
	    uint32_t kind, const char *d, int64_t at, const uint8_t id[32],
	    int why);
/*
 * Whether the floor of (pubkey, kind, d) refuses the version (at, id):
 * the floor's why, 0 when it does not (or there is none), -1 on error.
 */
int	store_withdrawn_key_refuses(struct store *, const uint8_t pubkey[32],
	    uint32_t kind, const char *d, int64_t at, const uint8_t id[32]);

/*
 * NIP-62: pubkey asked to vanish up to until with the request id. A
 * request newer than the one held replaces it and is purged again. 1 when
 * it is new (the caller purges), 0 when an equal or newer one is held,
 * -1 on error.
 */
int	store_vanished_add(struct store *, const uint8_t pubkey[32],
	    int64_t until, const uint8_t id[32]);
/*
 * The request of pubkey: 1 with *until and id (may be NULL) set, 0 none,
 * -1 on error. Costs no query while no author ever vanished.
 */
int	store_vanished_get(struct store *, const uint8_t pubkey[32],
	    int64_t *until, uint8_t id[32]);
/*
 * The oldest request whose stored events are not all removed yet: 1 with
 * the fields set, 0 none, -1 on error.
 */
int	store_vanished_next_purge(struct store *, uint8_t pubkey[32],
	    int64_t *until, uint8_t id[32]);
/* Mark pubkey's request purged. 0 or -1. */
int	store_vanished_purged(struct store *, const uint8_t pubkey[32]);
/* Requests still being purged (kept in memory). */
int64_t	store_vanished_pending(struct store *);
/* Requests held (kept in memory). */
int64_t	store_vanished_count(struct store *);

/*
 * Keep a superseded version of a root's kind 0, 3 or 10002 aside: its
 * JSON, the newest ROOTS_HISTORY_KEEP of (pubkey, kind). 0 or -1.
 */
int	store_roots_history_add(struct store *, const uint8_t pubkey[32],
	    uint32_t kind, int64_t created_at, const uint8_t id[32],
	    const char *json, size_t len);

/*
 * The versions kept aside of pubkey (NULL: every root) and kind (< 0:
 * all), newest first, at most max, each handed to cb with its JSON
 * (valid during the call). Rows handed, or -1.
 */
typedef int	(*store_history_cb)(void *arg, const uint8_t pubkey[32],
		    uint32_t kind, int64_t created_at, const char *json,
		    size_t len);
int64_t	store_roots_history_list(struct store *, const uint8_t *pubkey,
	    int64_t kind, size_t max, store_history_cb cb, void *arg);

/*
 * Whether a kind 62's relay tag names this box (ALL_RELAYS is judged by
 * the store itself): lent by a layer that knows the box's names, so the
 * store applies a request meant for it. Without one only ALL_RELAYS
 * applies.
 */
typedef bool	(*store_relay_judge_fn)(void *arg, const char *url);
void	store_set_relay_judge(struct store *, store_relay_judge_fn, void *arg);
/* Whether the judge takes url (false without one). */
bool	store_relay_is_ours(struct store *, const char *url);

#endif
