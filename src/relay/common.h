/*
 * common.h — what the pool (pool.c) and each relay connection (relay.c)
 * share: roles, a relay's connection settings, the callbacks a
 * subscription, a negentropy session and a publish are given, and the
 * traffic counters. Both
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

/* NIP-42 on the current connection (a new connection starts at NONE). */
enum relay_auth {
	RELAY_AUTH_NONE = 0,	/* no AUTH sent on this connection */
	RELAY_AUTH_SENT,	/* AUTH sent, waiting for its OK */
	RELAY_AUTH_OK,		/* the relay accepted our AUTH */
	RELAY_AUTH_REFUSED,	/* the relay refused it */
};

/* Where a relay's connection is; relay_state_name() gives its word. */
enum relay_state {
	RELAY_NEW = 0,
	RELAY_RESOLVING,
	RELAY_CONNECTING,
	RELAY_TLS,
	RELAY_UPGRADING,
	RELAY_OPEN,
	RELAY_CLOSING,
	RELAY_BACKOFF,
	RELAY_FAILED,		/* terminal: the URL cannot work */
	RELAY_DISABLED,		/* terminal: removed from the pool */
};

/* "new", "open", "backoff", ...: the word status and the store show. */
const char	*relay_state_name(enum relay_state);

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
 * Why a negentropy session (pool_neg_open) ended without a NEG-CLOSE of
 * ours. The text given with it says more (pool.h).
 */
enum pool_neg_end {
	POOL_NEG_END_ERR = 0,	/* NEG-ERR: the relay's reason, as given */
	POOL_NEG_END_CLOSED,	/* CLOSED for its id: the relay's message; or,
				   after an auth-required: refusal, AUTH refused:
				   the OK's message */
	POOL_NEG_END_NOTICE,	/* a NOTICE refusing NEG-OPEN: "notice: <text>" */
	POOL_NEG_END_BAD_MSG,	/* a NEG-MSG not hex or too long: "bad NEG-MSG: ..." */
	POOL_NEG_END_LOST,	/* the connection was lost: "connection lost" */
	POOL_NEG_END_VIOLATION,	/* the connection was closed for the relay's
				   protocol violation (a message too big, a
				   bad frame): the close, as in last_error */
};

/*
 * Negentropy session callbacks. on_msg gets the relay's NEG-MSG decoded
 * from hex (msg valid during the call only). on_err ends the session
 * (why and text say how; text valid during the call): the handle is
 * invalid once it returns. Either may be NULL.
 */
struct pool_neg_cbs {
	void	(*on_msg)(struct pool_sub *, const uint8_t *msg, size_t len,
		    void *arg);
	void	(*on_err)(struct pool_sub *, enum pool_neg_end why,
		    const char *text, void *arg);
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
	uint64_t	unrequested;	/* events no filter of their subscription asked for */
	uint64_t	neg_opens;	/* NEG-OPENs sent */
	uint64_t	neg_msgs_in;	/* NEG-MSGs received */
	uint64_t	neg_msgs_out;	/* NEG-MSGs sent */
	uint64_t	neg_errs;	/* NEG-ERRs received */
};

#endif
