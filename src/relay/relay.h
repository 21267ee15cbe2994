/*
 * relay.h — one upstream relay connection and the subscriptions and
 * publishes riding on it (relay.c: the connection state machine, message
 * handling, NIP-42, pacing). The pool (pool.c) owns every relay: it makes
 * them, calls them and frees them; a relay calls nothing of the pool and
 * tells it what happened through the hooks it was made with. Planners
 * include pool.h, never this header.
 *
 * State machine (relay_set_state is the one place it changes, logging the
 * transition and telling the hooks):
 *
 *   new -> resolving -> connecting -> tls -> upgrading -> open -> backoff
 *               \____________\__________\________\_______/      |
 *   backoff -> resolving ... (again, after the delay) <-----------'
 *   any -> disabled (removed), failed (a URL that can never work)
 *
 * open -> backoff also when the relay's input is mostly invalid
 * (relay_note_invalid): the connection is cut with close code 1008 and
 * the next attempt waits at least RELAY_INVALID_BACKOFF_MS, doubling with
 * each cut; last_error says why.
 *
 * resolving is skipped for an IP literal and tls for ws://. Each opening
 * step is reported by the WebSocket layer's on_stage callback, so every
 * state a connection passes through is logged and stored.
 */
#ifndef CACHEBOX_RELAY_RELAY_H
#define CACHEBOX_RELAY_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"
#include "core/queue.h"
#include "relay/common.h"
#include "relay/msg.h"

struct loop;
struct ws_conn;
struct http_req;
struct nip11_info;
struct relay;


/* A negentropy session passes the same states: SENT is NEG-OPEN out, no
 * NEG-MSG back yet; LIVE is after the relay's first NEG-MSG. */
enum sub_state {
	SUB_QUEUED = 0,		/* waiting for open relay, slot and pacing */
	SUB_SENT,		/* REQ out, before EOSE */
	SUB_LIVE,		/* after EOSE, still open on the relay */
	SUB_AUTH_WAIT,		/* refused auth-required:, resent after AUTH */
	SUB_DEAD,		/* closed; reaped by the hook */
};

struct pool_sub {
	TAILQ_ENTRY(pool_sub)	 entry;
	struct relay		*relay;
	char			 id[RELAY_SUBID_MAX + 1];
	/*
	 * A NEG-OPEN's frame, owned; a REQ keeps no frame but its owner's
	 * filters (borrowed: the owner keeps them until it closes the sub)
	 * and builds it again at each send, so a live subscription of 5,000
	 * authors on 20 relays is not held as text besides (6.7 MB).
	 */
	char			*req;
	const struct filter	*filters;
	size_t			 nfilters;
	size_t			 req_len;	/* bytes of the frame */
	enum sub_state		 state;
	bool			 auth_retried;
	bool			 neg;		/* a NIP-77 session, not a REQ */
	bool			 ending;	/* session: to be told it ended */
	unsigned		 resent;
	struct pool_sub_cbs	 cbs;		/* a REQ's */
	struct pool_neg_cbs	 neg_cbs;	/* a session's */
	void			*arg;
};
TAILQ_HEAD(pool_sub_list, pool_sub);

struct relay_pub {
	TAILQ_ENTRY(relay_pub)	 entry;
	uint8_t			 id[32];
	char			*frame;		/* ["EVENT", ...], owned */
	size_t			 frame_len;
	bool			 auth_wait;
	bool			 auth_retried;
	uint64_t		 deadline_ms;
	pool_ok_cb		 cb;
	void			*arg;
};
TAILQ_HEAD(relay_pub_list, relay_pub);

/*
 * What a relay tells its owner. state runs on every change of state
 * (from, to), after the relay logged it; error is what caused it, or NULL.
 */
struct relay_hooks {
	void	(*state)(struct relay *, enum relay_state from,
		    enum relay_state to, const char *error, void *arg);
	void	*arg;
};

struct relay {
	TAILQ_ENTRY(relay)	 entry;		/* the pool's list */
	struct loop		*loop;
	const struct relay_conf	*conf;		/* the pool's, may change */
	struct relay_hooks	 hooks;
	char			 url[URL_MAX_BYTES + 1];
	enum relay_role		 role;
	enum relay_state	 state;
	bool			 dead;		/* removed; freed by the hook */
	struct ws_conn		*ws;
	struct ws_conn		*ws_spent;	/* muted; released by relay_tick */
	uint32_t		 failures;	/* consecutive, sizes backoff */
	uint64_t		 backoff_until_ms;
	uint64_t		 retry_timer;
	uint64_t		 keepalive_timer;
	uint64_t		 pump_timer;
	uint64_t		 pump_at_ms;
	uint64_t		 last_rx_ms;
	uint64_t		 pongs_seen;
	uint64_t		 last_req_ms;	/* 0: none yet */
	uint64_t		 ratelimit_until_ms;
	uint32_t		 ratelimit_strikes;
	char			 last_error[RELAY_REASON_MAX + 1];
	int64_t			 last_error_at;	/* wall s of last_error; 0: none */
	int64_t			 last_open_at;	/* wall s of the last open; 0: never */
	/* invalid input: the window counted now and the cuts it caused */
	uint64_t		 inv_window_ms;	/* start of the window; 0: none */
	uint32_t		 inv_count;	/* invalid events and frames in it */
	uint32_t		 unreq_count;	/* ...of which events nobody asked for */
	uint32_t		 inv_msgs;	/* messages in it */
	uint32_t		 cut_strikes;	/* cuts since last forgiven */
	uint64_t		 last_cut_ms;	/* monotonic, the last cut */
	uint64_t		 cut_invalid;	/* cuts since start */
	/* NIP-42 */
	enum relay_auth		 auth;
	char			 challenge[RELAY_CHALLENGE_MAX + 1];
	uint8_t			 auth_id[32];
	/* limits (NIP-11, applied by the pool with relay_apply_limits) */
	bool			 limits_pending; /* a first document is on its way */
	uint64_t		 nip11_hold_ms;	/* REQs wait for it until */
	int64_t			 max_limit;
	int64_t			 max_subscriptions;
	int64_t			 max_message_length;
	size_t			 max_subs;	/* cap in force */
	struct relay_counters	 stats;		/* totals since added */
	struct pool_sub_list	 subs;
	struct relay_pub_list	 pubs;
	size_t			 npubs;
	/* kept by the pool; relay.c never touches these */
	struct http_req		*nip11_req;	/* fetch in flight */
	uint64_t		 nip11_at_ms;	/* 0: never read */
	struct nip11_info	*nip11_new;	/* learnt, not yet reported */
	struct relay_counters	 reported;	/* stats at the last report */
	bool			 rec_added;	/* not yet reported at all */
	bool			 rec_state;	/* state changed since */
};
TAILQ_HEAD(relay_list, relay);

/* "new", "connecting", "open", "backoff", ... */

/*
 * A relay for url (not yet connecting) on loop, connecting as conf says
 * (borrowed: it must outlive the relay) and telling hooks (copied). NULL
 * on failure.
 */
struct relay	*relay_new(struct loop *, const char *url, enum relay_role,
		    const struct relay_conf *conf,
		    const struct relay_hooks *hooks);
/* Tear down at once: no callbacks; not from inside the relay's own. */
void		 relay_free(struct relay *);
/* Change state: log, tell the hooks, remember the error (may be NULL). */
void		 relay_set_state(struct relay *, enum relay_state,
		    const char *error);
/* Start a connection attempt now (from new or backoff). */
void		 relay_connect(struct relay *);
/* Mark removed: drop the connection and every sub; the hook frees it. */
void		 relay_disable(struct relay *);
/*
 * Mark removed like relay_disable, but first tell the owner of every
 * subscription (on_closed with why), session (on_err, connection lost)
 * and publish (its callback, refused) that it ended. Safe outside the
 * relay's own callbacks only.
 */
void		 relay_retire(struct relay *, const char *why);
/* Loop hook work: reap dead subs, expire publishes. */
void		 relay_tick(struct relay *);
/* Send whatever queued REQs the cap, pacing and rate limit allow. */
void		 relay_pump(struct relay *);
/*
 * Count one invalid event or frame from r; when the window holds
 * RELAY_INVALID_CUT of them and they are RELAY_INVALID_CUT_SHARE_PCT of
 * its messages, the connection is cut and backed off longer. Safe inside
 * the relay's own callbacks (the connection is muted, reaped later).
 */
void		 relay_note_invalid(struct relay *);
/*
 * An event its subscription did not ask for (ingest checks the filter
 * before the signature): counted, and toward a cut like invalid input.
 */
void		 relay_note_unrequested(struct relay *);
/* Record why as last_error, state unchanged. */
void		 relay_note_error(struct relay *, const char *why);
/*
 * Close a sub (CLOSE, or NEG-CLOSE for a session, on the wire if it was
 * sent) and mark it dead.
 */
void		 relay_sub_close(struct pool_sub *);
/*
 * Send a session's NEG-MSG of msg[0..len) now. 0, or -1 (not an open
 * session on an open connection, too long for the relay's frames, or
 * the send queue refused it).
 */
int		 relay_neg_send(struct pool_sub *, const uint8_t *msg,
		    size_t len);
/* Largest frame r takes from us: NIP-11 max_message_length or the default. */
size_t		 relay_frame_max(const struct relay *);
/* Send a publish frame now. 0, or -1 (nothing queued). */
int		 relay_publish(struct relay *, struct relay_pub *);
/*
 * A first NIP-11 document is on its way (pending) or not: while it is,
 * REQs wait for it at most RELAY_NIP11_WAIT_MS after the connection opens.
 */
void		 relay_limits_pending(struct relay *, bool pending);
/*
 * Apply max_subscriptions (and the other limits set in the relay) to the
 * cap in force, end any wait for them, and send what the cap now allows.
 */
void		 relay_apply_limits(struct relay *);

#endif
