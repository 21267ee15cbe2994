/*
 * relays.h — the `relays` table: every relay the box knows, its NIP-11
 * facts, its health (state, last error, backoff) and its traffic counters.
 * The relay pool is the only writer. Counters arrive as deltas added in
 * one statement per relay per flush, never one write per frame.
 */
#ifndef CACHEBOX_STORE_RELAYS_H
#define CACHEBOX_STORE_RELAYS_H

#include <stdint.h>

struct store;
struct nip11_info;

/* Counter deltas, named as the table's columns. */
struct store_relay_counters {
	uint64_t	events;
	uint64_t	bytes_in;
	uint64_t	reqs;
	uint64_t	eose;
	uint64_t	notices;
	uint64_t	closed;
	uint64_t	auth;
	uint64_t	invalid;
	uint64_t	dropped;
};

/*
 * Insert url with role ("bootstrap", "outbox", "custom", "uplink") if it
 * is not there; an existing row keeps its counters and facts, and its
 * role is updated. now_s is wall time. 0, or -1 (logged).
 */
int	store_relay_upsert(struct store *, const char *url, const char *role,
	    int64_t now_s);
/*
 * Record the health of url: state name, last error (NULL keeps the stored
 * one), consecutive failures and the backoff deadline (monotonic ms, 0 for
 * none, stored as NULL). 0, or -1 (logged).
 */
int	store_relay_set_state(struct store *, const char *url,
	    const char *state, const char *last_error, uint32_t failures,
	    uint64_t backoff_until_ms, int64_t now_s);
/* Add counter deltas to url's row. 0, or -1 (logged). */
int	store_relay_add_counters(struct store *, const char *url,
	    const struct store_relay_counters *, int64_t now_s);
/*
 * Store the facts of a NIP-11 document read at now_s: max_limit,
 * max_subscriptions, max_message_length (NULL when not advertised),
 * supported_nips as "1,11,42" and auth_required. 0, or -1 (logged).
 */
int	store_relay_set_nip11(struct store *, const char *url,
	    const struct nip11_info *, int64_t now_s);

/* One row as the surfaces show it; the strings live until cb returns. */
/*
 * What is known of url's NIP-77 support: *value 1 (it reconciled), 0 (it
 * refused) or -1 (unknown, or no row), *at when that was learnt (Unix
 * seconds; 0 when unknown). 0, or -1 (logged).
 */
int	store_relay_negentropy_get(struct store *, const char *url, int *value,
	    int64_t *at);
/*
 * Record that url reconciled (value 1) or refused (0) at now_s, making
 * its row if the pool has not reported it yet (its role comes later).
 * NIP-11's supported_nips is an advertisement, not this record: only a
 * session decides. 0 or -1.
 */
int	store_relay_negentropy_set(struct store *, const char *url, int value,
	    int64_t now_s);

struct store_relay_row {
	const char	*url, *role, *state;
	int64_t		 events;
	const char	*last_error;	/* NULL when none */
};
typedef void	(*store_relay_row_cb)(const struct store_relay_row *, void *);
/* Hand every row to cb in URL order. 0, or -1 (logged). */
int	store_relays_each(struct store *, store_relay_row_cb cb, void *arg);

#endif
