/*
 * common.h — what the pool (pool.c) and each relay connection (relay.c)
 * share: roles, a relay's connection settings, the callbacks a
 * subscription and a publish are given, and the traffic counters. Both
 * headers include this one; neither includes the other's internals.
 */
#ifndef CACHEBOX_RELAY_COMMON_H
#define CACHEBOX_RELAY_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "relay/msg.h"

struct dns;
struct nostr_key;
struct pool_sub;

enum relay_role {
	RELAY_ROLE_BOOTSTRAP = 0,
	RELAY_ROLE_OUTBOX,
	RELAY_ROLE_CUSTOM,
	RELAY_ROLE_UPLINK,
};

/* "bootstrap", "outbox", "custom", "uplink". */
const char	*relay_role_name(enum relay_role);

/*
 * How every relay of a pool connects and behaves; the pool owns it and
 * may change pace_ms and backoff_cap_ms while relays use it. Zero values
 * mean the defaults named in limits.h.
 */
struct relay_conf {
	struct dns		*dns;		/* NULL: IP literals only */
	const char		*ca_file;	/* NULL: the system bundle */
	const struct nostr_key	*key;		/* NULL: AUTH not answered */
	uint32_t		 pace_ms;	/* least gap between REQs */
	uint32_t		 backoff_base_ms;
	uint32_t		 backoff_cap_ms;
	uint32_t		 ping_ms;	/* keepalive ping after this idle time */
	uint32_t		 dead_ms;	/* nothing heard this long: reconnect */
	uint32_t		 ratelimit_base_ms;
	size_t			 max_msg_bytes;	/* largest frame accepted */
};

/*
 * Subscription callbacks, each optional. on_event gets the parsed message:
 * msg->event_raw/event_raw_len is the event's JSON inside the frame, and
 * relay_msg_take_event(msg) detaches the cJSON object (the callee then
 * owns it); both are valid only during the call. on_closed ends the
 * subscription (the relay refused or closed it and the pool will not
 * retry): the handle is invalid once it returns.
 */
struct pool_sub_cbs {
	void	(*on_event)(struct pool_sub *, struct relay_msg *msg, void *arg);
	void	(*on_eose)(struct pool_sub *, void *arg);
	void	(*on_closed)(struct pool_sub *, enum relay_reason reason,
		    const char *message, void *arg);
};

/*
 * The relay's answer to a published event: accepted, the OK prefix and
 * message (reason ERROR and "error: ..." text when the connection was lost
 * or the pool gave up before an OK came).
 */
typedef void	(*pool_ok_cb)(const uint8_t id[32], bool accepted,
		    enum relay_reason reason, const char *message, void *arg);

/* A relay's traffic since it was added (or a difference of two such). */
struct relay_counters {
	uint64_t	events;		/* EVENTs for a known subscription */
	uint64_t	bytes_in;	/* text received */
	uint64_t	reqs;		/* REQs sent */
	uint64_t	eose;
	uint64_t	notices;
	uint64_t	closed;		/* CLOSED received */
	uint64_t	auth;		/* AUTH sent */
	uint64_t	invalid;	/* bad frames and events ingest refused */
	uint64_t	dropped;	/* EVENTs for no known subscription */
};

#endif
