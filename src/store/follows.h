/*
 * follows.h — the `follows` and `author_relays` tables: the followed set
 * (roots and the authors they follow) and every author's NIP-65 relay
 * list. The follow graph planner is the writer; surfaces and the other
 * planners read.
 *
 * An unfollowed author is never deleted: it is marked stale, keeping its
 * cursors and counters, and following it again clears the mark. A relay
 * list is replaced as a whole from the newest kind 10002, never merged.
 * None of these opens a transaction except where said (they nest).
 */
#ifndef CACHEBOX_STORE_FOLLOWS_H
#define CACHEBOX_STORE_FOLLOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event;
struct store;

struct store_follow {
	uint8_t		pubkey[32];
	bool		is_root;
	bool		stale;
	int64_t		first_seen;	/* wall seconds */
	int64_t		last_seen;
	int64_t		events_fetched;
};

/* What a sync changed. */
struct store_follows_change {
	size_t		added;		/* never seen before */
	size_t		returned;	/* were stale, followed again */
	size_t		dropped;	/* were followed, now stale */
	size_t		active;		/* followed after the sync */
};

/*
 * Make the followed set exactly follows[0..n) plus roots[0..nroots) (the
 * roots are followed too, with is_root set; is_root is cleared on any
 * other row). Rows are upserted with last_seen = now_s (first_seen = now_s
 * when new), stale cleared; rows not in the set become stale. Duplicates
 * in the input are fine. One (nested) transaction. chg may be NULL.
 * 0, or -1 (logged; nothing changed).
 */
int	store_follows_sync(struct store *, const uint8_t (*follows)[32],
	    size_t n, const uint8_t (*roots)[32], size_t nroots, int64_t now_s,
	    struct store_follows_change *chg);

/* The row of pubkey into *out. 1 found, 0 not, -1 (logged). */
int	store_follow_get(struct store *, const uint8_t pubkey[32],
	    struct store_follow *out);

/*
 * Call cb for every followed (not stale) author in pubkey order, or for
 * every row with include_stale. cb returns 0 to go on, 1 to stop.
 * 0, or -1 (logged).
 */
typedef int	(*store_follow_cb)(const struct store_follow *, void *arg);
int	store_follows_each(struct store *, bool include_stale,
	    store_follow_cb cb, void *arg);

/*
 * Call cb for the followed (not stale) authors offset .. offset + limit - 1
 * in pubkey order (the primary key's order: SQLite steps over the first
 * offset rows in the index, no sort). 0, or -1 (logged).
 */
int	store_follows_page(struct store *, int64_t offset, int64_t limit,
	    store_follow_cb cb, void *arg);

/*
 * The followed (not stale) pubkeys as one malloc'd array in pubkey order,
 * *n entries (*out NULL when none); the caller frees it. 0, or -1.
 */
int	store_follows_active(struct store *, uint8_t (**out)[32], size_t *n);

/* Rows that are followed and stale. 0, or -1 (logged). */
int	store_follows_count(struct store *, int64_t *active, int64_t *stale);

/*
 * How many events of pubkey the store holds, however they came (its own
 * drain, another author's, a job, the uplink, an import): a count over
 * the (pubkey, created_at, kind) index, in time linear in that count:
 * 20 ms for an author of 100,000 events on a 2-core x86 host
 * (tests/bench/author_count.py), well under 1 ms for the hundreds most
 * authors have. -1 (logged) on error.
 */
int64_t	store_author_events(struct store *, const uint8_t pubkey[32]);

/* Add n to events_fetched of pubkey (no row: nothing). 0, or -1. */
int	store_follow_add_fetched(struct store *, const uint8_t pubkey[32],
	    int64_t n);

/* One relay of an author's NIP-65 list. */
struct store_author_relay {
	const char	*url;		/* normalised ws:// or wss:// URL */
	bool		 read;
	bool		 write;
};

/*
 * Replace pubkey's relay list by list[0..n) (at most
 * STORE_AUTHOR_RELAYS_MAX are kept) taken from a kind 10002 created at
 * list_created_at, unless the stored list is as new or newer. URLs are
 * normalised (store_relay_url_normalise); ones that are not ws/wss are
 * skipped, repeats merged. One (nested) transaction. 1 replaced, 0 kept
 * the stored one, -1 (logged).
 */
int	store_author_relays_set(struct store *, const uint8_t pubkey[32],
	    const struct store_author_relay *list, size_t n,
	    int64_t list_created_at);

/*
 * The same from a parsed, verified kind 10002 event: its "r" tags
 * ["r", url] (read and write), ["r", url, "read"], ["r", url, "write"].
 * 1 replaced, 0 older than the stored list or not kind 10002, -1.
 */
int	store_author_relays_from_event(struct store *, const struct event *);

/*
 * Call cb for each relay of pubkey's list (url order); the url is valid
 * during the call only. cb returns 0 to go on, 1 to stop. 0, or -1.
 */
typedef int	(*store_author_relay_cb)(const uint8_t pubkey[32],
		    const struct store_author_relay *, void *arg);
int	store_author_relays_each(struct store *, const uint8_t pubkey[32],
	    store_author_relay_cb cb, void *arg);

/*
 * Call cb for each followed (not stale) author that lists relay as a
 * write relay, in pubkey order. 0, or -1.
 */
int	store_relay_writers_each(struct store *, const char *relay,
	    store_author_relay_cb cb, void *arg);

/*
 * Call cb(url, authors, arg) for every distinct write relay of followed
 * (not stale) authors with the number of them that write there, most
 * authors first. cb returns 0 to go on, 1 to stop. 0, or -1.
 */
typedef int	(*store_write_relay_cb)(const char *url, int64_t authors,
		    void *arg);
int	store_write_relays_each(struct store *, store_write_relay_cb cb,
	    void *arg);

/*
 * Normalise a relay URL into out: scheme and host lower-cased, default
 * port dropped, a lone "/" path dropped ("wss://Relay.Example.com:443/"
 * becomes "wss://relay.example.com"). 0, or -1 when in is not a ws/wss
 * URL or out is too small.
 */
int	store_relay_url_normalise(const char *in, char *out, size_t outlen);

#endif
