/*
 * pool.h — the relay pool: the only way planners talk to upstream relays.
 * A planner adds relays by URL, opens subscriptions with callbacks and
 * publishes events with an OK callback; the pool owns every connection,
 * every subscription id, the per-relay cap on open subscriptions (NIP-11
 * max_subscriptions or RELAY_MAX_SUBS_DEFAULT, excess ones wait in FIFO
 * order; until the first document arrives, at most RELAY_NIP11_WAIT_MS,
 * no REQ goes out, so an advertised cap is never overshot), the per-relay
 * pacing of REQs, NIP-42 authentication, reconnects
 * with backoff, NIP-11 facts and the per-relay counters, which it reports
 * to an observer (struct pool_observer) instead of writing them anywhere.
 *
 * Reconnects: a subscription the relay had not finished with when the
 * connection dropped is sent again, with the same filters, once the relay
 * is back (in its FIFO place, paced). A planner that wants a different
 * `since` after a gap (live) closes the subscription in on_eose or on
 * seeing pool_sub_resent() and opens a new one; a drain step is naturally
 * idempotent because its `until` does not move until EOSE.
 *
 * Negentropy (NIP-77): pool_neg_open starts a reconciliation session on a
 * relay; the planner runs the protocol (nostr/negentropy.h) and the pool
 * carries its messages. The rules:
 *   - Queueing and cap: a session is a subscription for the relay's cap
 *     and pacing. Its NEG-OPEN waits in the same FIFO as REQs, counts
 *     against max_subs from NEG-OPEN until it ends or is closed, and is
 *     paced like a REQ. Its id ("n18") never equals a REQ's ("s17").
 *   - No resend: a session whose NEG-OPEN went out is never sent again
 *     after a reconnect (the relay forgot its state; it cannot resume):
 *     losing the connection ends it with POOL_NEG_END_LOST, "connection
 *     lost", once the relay is in backoff. A session still queued, or
 *     refused and waiting for AUTH, was never open on the relay and
 *     simply waits for the next connection.
 *   - Passing refusals: before the relay's first NEG-MSG, a CLOSED or
 *     NEG-ERR "rate-limited:" pauses and requeues the session, and
 *     "auth-required:" requeues it once after AUTH (as for a REQ; sending
 *     NEG-OPEN again starts it afresh). After its first NEG-MSG any
 *     NEG-ERR or CLOSED ends it.
 *   - NOTICE rule: a relay without NIP-77 usually answers NEG-OPEN with a
 *     NOTICE, worded in many ways ("ERROR: unknown cmd", "bad msg: unknown
 *     message type NEG-OPEN", "could not parse command"). So any NOTICE,
 *     whatever its text, counts as a refusal of every session that has
 *     sent NEG-OPEN and not yet had a NEG-MSG back: they end with
 *     POOL_NEG_END_NOTICE, "notice: <text>". A relay answers in order, so
 *     a session still queued, or already answered, is never refused so.
 *     An unrelated NOTICE falling in that one round trip ends a session
 *     that would have worked; a planner tells it from a real refusal by
 *     trying again later before it concludes that the relay lacks NIP-77.
 *     No NEG-CLOSE follows (the relay never opened the session, and a
 *     relay that does not know NEG-OPEN would only NOTICE again).
 *   - Hex: the relay's NEG-MSG is decoded before on_msg; its length is
 *     checked before the buffer is allocated: at most half of the largest
 *     frame accepted (relay_conf.max_msg_bytes) and at most
 *     NEG_MAX_MSG_BYTES bytes, an even number of lowercase hex digits. A
 *     message that fails ends the session (NEG-CLOSE, then
 *     POOL_NEG_END_BAD_MSG "bad NEG-MSG: not hex" / "...: too long") and
 *     counts as invalid input. What we send is hex of at most
 *     NEG_MAX_MSG_BYTES, in a frame no longer than the relay's NIP-11
 *     max_message_length (else WS_MAX_MSG_BYTES_DEFAULT): a planner keeps
 *     its messages well under that with a frame-size limit.
 *   - No deadline: the pool never times a session out. A relay that says
 *     nothing keeps it open (and its slot taken) until the planner closes
 *     it; planners keep their own timeout, as for drain steps.
 *   - Counters: NEG-OPENs sent, NEG-MSGs in and out, NEG-ERRs received
 *     (struct relay_counters, pool_relay_info); NEG-OPENs are not REQs.
 *
 * The pool never decides what an event is worth: it hands the raw event
 * to on_event and counts; ingest verifies and the planner reports failures
 * back with pool_sub_note_invalid(). What to do about a relay whose input
 * is mostly invalid is the pool's: it cuts the connection and backs off
 * (relay.h, RELAY_INVALID_* in limits.h). It never frees a subscription or a relay
 * inside one of its callbacks: both are marked and reaped by a loop hook.
 */
#ifndef CACHEBOX_RELAY_POOL_H
#define CACHEBOX_RELAY_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "relay/common.h"

struct loop;
struct filter;
struct nip11_info;
struct pool;
struct pool_sub;
struct relay;

/*
 * What a relay has to record since the pool last reported it (see
 * pool_observer). Strings and nip11 are the pool's, valid during the call.
 */
struct pool_report {
	const char		*url;
	enum relay_role		 role;
	bool			 added;		/* new in the pool: make its row */
	bool			 state_changed;
	const char		*state;		/* relay_state_name(), now */
	const char		*last_error;	/* "" when none */
	uint32_t		 failures;	/* consecutive */
	int64_t			 backoff_until_ms; /* Unix ms; 0: not backing off */
	const struct nip11_info	*nip11;		/* learnt since; NULL: nothing */
	struct relay_counters	 delta;		/* traffic since */
};

/*
 * The pool writes no database: what should outlive the process goes to an
 * observer, which belongs to a layer that owns persistence. flush() gets
 * the reports of every relay with something new (n > 0) and answers 0
 * when it recorded them (the pool forgets them), or -1 to be asked again
 * later (then nothing is lost: deltas keep adding up). The pool calls it
 * from its loop hook, at most every RELAY_RECORD_MS while something is
 * new and every RELAY_STATS_FLUSH_MS for traffic, and once more from
 * pool_free(). Never from inside a relay's callbacks.
 */
struct pool_observer {
	int	(*flush)(void *arg, const struct pool_report *reports,
		    size_t n);
	void	*arg;
};

/*
 * The relays' connection settings (conf), an observer (flush NULL: none),
 * and whether NIP-11 documents are fetched.
 */
struct pool_opts {
	struct relay_conf	 conf;
	struct pool_observer	 observer;
	bool			 no_nip11;	/* do not fetch NIP-11 documents */
};

/* What a status surface shows of one relay; strings owned by the pool. */
struct pool_relay_info {
	const char	*url;
	enum relay_state state;
	const char	*state_name;	/* relay_state_name(state) */
	const char	*role;
	const char	*last_error;	/* "" when none */
	int64_t		 last_error_at;	/* wall s of last_error, 0 when none */
	int64_t		 last_open_at;	/* wall s of the last open, 0 when never */
	uint32_t	 failures;
	size_t		 subs_open;
	size_t		 subs_queued;
	uint64_t	 events, bytes_in, reqs, eose, notices, closed, auth,
			 invalid, dropped, unrequested;
	uint64_t	 neg_opens, neg_msgs_in, neg_msgs_out, neg_errs;
	uint64_t	 cut_invalid;	/* connections cut for invalid input */
	int64_t		 max_limit;	/* NIP-11, 0 when unknown */
	int64_t		 max_subscriptions;
	bool		 authenticated;	/* auth_state == RELAY_AUTH_OK */
	enum relay_auth	 auth_state;
};

/* A pool on loop; opts is copied. NULL on allocation failure. */
struct pool	*pool_new(struct loop *, const struct pool_opts *);
/* Close every connection (best effort) and free everything. No callbacks. */
void		 pool_free(struct pool *);

/*
 * Add url (ws:// or wss://) with role and start connecting from the loop.
 * Adding a known URL updates its role and returns the same relay. Returns
 * the relay (owned by the pool), or NULL for a URL that does not parse.
 */
struct relay	*pool_relay_add(struct pool *, const char *url, enum relay_role);
/* The relay for url, or NULL. */
struct relay	*pool_relay_find(struct pool *, const char *url);
/*
 * Drop url: its subscriptions end without callbacks, its pending
 * publishes are abandoned without callbacks. Safe inside callbacks.
 */
void		 pool_relay_remove(struct pool *, const char *url);
/*
 * Close url and stop dialling it, telling every subscription's, session's
 * and publish's owner that it ended (why is the message they get), so a
 * planner forgets its handles; a planner may add the URL again later.
 * Not from inside a callback of that relay.
 */
void		 pool_relay_retire(struct pool *, const char *url,
		    const char *why);
/*
 * Record why as url's last_error (a planner's verdict on what the relay
 * sent, e.g. a NIP-77 session past its budget); the state is unchanged.
 */
void		 pool_relay_note_error(struct pool *, const char *url,
		    const char *why);

/*
 * Open a subscription on url (added before) with n (1..RELAY_MSG_MAX_FILTERS)
 * filters, serialized now (the filters stay the caller's). The REQ is sent
 * when the relay is open, a slot is free under its cap and its pacing
 * allows. Returns the handle, valid until pool_sub_close() or on_closed,
 * or NULL when url is unknown or the filters do not serialize.
 */
struct pool_sub	*pool_sub_open(struct pool *, const char *url,
		    const struct filter *filters, size_t n,
		    const struct pool_sub_cbs *, void *arg);
/*
 * Close a subscription or a session: CLOSE (NEG-CLOSE for a session) is
 * sent if the REQ (NEG-OPEN) went out, no callback runs for it any more
 * and its slot goes to the next queued one. Safe inside its own
 * callbacks and inside another's (a session about to be told it ended is
 * not told).
 */
void		 pool_sub_close(struct pool_sub *);
/*
 * Open a NIP-77 session on url (added before) over one filter (serialized
 * now; it stays the caller's) with the initiator's first message
 * msg[0..len) (neg_initiate), sent as NEG-OPEN when the relay is open, a
 * slot is free under its cap and its pacing allows (rules above). The
 * relay's answers go to cbs->on_msg (feed them to neg_reconcile); the end
 * of the session without a NEG-CLOSE of ours goes to cbs->on_err.
 * Returns the handle, valid until pool_sub_close() or on_err, or NULL
 * when url is unknown, len is 0 or the NEG-OPEN frame would be longer
 * than the relay's frames.
 */
struct pool_sub	*pool_neg_open(struct pool *, const char *url,
		    const struct filter *filter, const uint8_t *msg,
		    size_t len, const struct pool_neg_cbs *, void *arg);
/*
 * Send the next message msg[0..len) of a session as NEG-MSG, now. 0, or
 * -1 when it was not sent: the session is not open on an open relay
 * (still queued, ended), the frame would be too long, or the connection's
 * send queue is full. After -1 the planner closes the session.
 */
int		 pool_neg_send(struct pool_sub *, const uint8_t *msg,
		    size_t len);
/* The subscription id on the wire ("s17", "n18"), owned by the sub. */
const char	*pool_sub_id(const struct pool_sub *);
/* The relay URL of the subscription, owned by the pool. */
const char	*pool_sub_url(const struct pool_sub *);
/*
 * How many times the REQ was sent again (reconnect, auth, rate limit); a
 * session's NEG-OPEN (auth, rate limit before its first answer).
 */
unsigned	 pool_sub_resent(const struct pool_sub *);

/*
 * Send ["EVENT", event_json] to url (must be open; no queueing while
 * down) and call cb once with the relay's OK, or with accepted false and
 * reason ERROR if the connection drops or RELAY_OK_TIMEOUT_MS passes
 * first. An "auth-required:" OK is retried once after authenticating
 * (not when this connection's AUTH was refused); cb gets the answer that
 * follows, or "auth-required:" with the relay's words for the refused
 * AUTH; pool_relay_info's auth_state, read inside cb, says which case it
 * is. 0 when sent (cb will run from the loop), -1 when refused now (not
 * open, bad JSON id, queue full, too many awaiting OK; cb never runs).
 */
int		 pool_publish(struct pool *, const char *url,
		    const char *event_json, size_t len, pool_ok_cb cb, void *arg);

/* Change pacing for every relay (backfill.pace_ms at run time). */
void		 pool_set_pace(struct pool *, uint32_t pace_ms);
/* Longest reconnect delay from now on (relay.backoff_max_ms); 0 = default. */
void		 pool_set_backoff_cap(struct pool *, uint32_t cap_ms);
/*
 * Ingest found an event from sub's relay invalid (bad id or sig, malformed):
 * count it; a relay whose input is mostly invalid is cut off and backed
 * off (the sub is queued again, as after any lost connection). Safe inside
 * the sub's callbacks.
 */
void		 pool_sub_note_invalid(struct pool_sub *);
/*
 * The same for an event no filter of s asked for (INGEST_UNREQUESTED, not
 * merely outside its since/until): counted as unrequested, and toward the
 * cut like invalid input.
 */
void		 pool_sub_note_unrequested(struct pool_sub *);
/*
 * Hand the observer every relay's news now (as the hook would). 0 when
 * recorded or nothing was new, -1 when the observer asked to wait.
 */
int		 pool_flush(struct pool *);

/* Number of relays, and the i-th one's status (0 <= i < count). */
size_t		 pool_relay_count(const struct pool *);
int		 pool_relay_info(const struct pool *, size_t i,
		    struct pool_relay_info *);
/* Status of the relay for url. 0, or -1 if unknown. */
int		 pool_relay_info_url(const struct pool *, const char *url,
		    struct pool_relay_info *);

#endif
