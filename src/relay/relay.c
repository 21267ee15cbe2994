/*
 * relay.c — one upstream relay: the connection state machine (connect,
 * open, lose, back off with jitter, reconnect), keepalive and dead-peer
 * detection, the relay -> client message handlers, NIP-42, the rate-limit
 * pause, the pump that sends queued REQs and NEG-OPENs under the
 * per-relay cap and pacing, and the end of negentropy sessions (NIP-77),
 * which unlike REQs are never sent again: see pool.h for the rules.
 *
 * It never frees a relay, a subscription or a WebSocket connection inside
 * a callback that belongs to them: subscriptions are marked SUB_DEAD,
 * relays `dead` and a connection let go of is muted and parked in
 * ws_spent; relay_tick / the pool hook reap them, and relay_free releases
 * whatever is still held, synchronously. It never verifies events (ingest
 * does, and says so through pool_sub_note_invalid) and never blocks; it
 * owns the consequence: a relay whose input is mostly invalid is cut off.
 * It calls nothing of the pool and writes nothing anywhere: what happened
 * goes to the hooks it was made with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backoff.h"
#include "core/clock.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/tls.h"
#include "net/ws.h"
#include "relay/relay.h"

static const char *const state_names[] = {
	[RELAY_NEW] = "new",
	[RELAY_RESOLVING] = "resolving",
	[RELAY_CONNECTING] = "connecting",
	[RELAY_TLS] = "tls",
	[RELAY_UPGRADING] = "upgrading",
	[RELAY_OPEN] = "open",
	[RELAY_CLOSING] = "closing",
	[RELAY_BACKOFF] = "backoff",
	[RELAY_FAILED] = "failed",
	[RELAY_DISABLED] = "disabled",
};

const char *
relay_state_name(enum relay_state s)
{
	if ((unsigned)s >= sizeof(state_names) / sizeof(state_names[0]))
		return "?";
	return state_names[s];
}

static uint64_t
relay_now(const struct relay *r)
{
	return loop_now_ms(r->loop);
}

/* Remember "what: detail" as the relay's last error. */
static void
relay_error(struct relay *r, const char *what, const char *detail)
{
	snprintf(r->last_error, sizeof(r->last_error), "%s: %s", what, detail);
	r->last_error_at = clock_wall_s();
}

void
relay_note_error(struct relay *r, const char *why)
{
	snprintf(r->last_error, sizeof(r->last_error), "%s", why);
	r->last_error_at = clock_wall_s();
}

void
relay_set_state(struct relay *r, enum relay_state s, const char *error)
{
	enum relay_state	from;

	if (error != NULL) {
		snprintf(r->last_error, sizeof(r->last_error), "%s", error);
		r->last_error_at = clock_wall_s();
	}
	if (r->state == s && error == NULL)
		return;
	if (s == RELAY_OPEN)
		r->last_open_at = clock_wall_s();
	if (error != NULL && s != RELAY_OPEN)
		log_info("relay %s: %s -> %s (%s)", r->url,
		    relay_state_name(r->state), relay_state_name(s), error);
	else
		log_info("relay %s: %s -> %s", r->url,
		    relay_state_name(r->state), relay_state_name(s));
	from = r->state;
	r->state = s;
	if (r->hooks.state != NULL)
		r->hooks.state(r, from, s, error, r->hooks.arg);
}

struct relay *
relay_new(struct loop *loop, const char *url, enum relay_role role,
    const struct relay_conf *conf, const struct relay_hooks *hooks)
{
	struct relay	*r;

	if (strlen(url) > URL_MAX_BYTES || (r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->loop = loop;
	r->conf = conf;
	if (hooks != NULL)
		r->hooks = *hooks;
	snprintf(r->url, sizeof(r->url), "%s", url);
	r->role = role;
	r->max_subs = RELAY_MAX_SUBS_DEFAULT;
	TAILQ_INIT(&r->subs);
	TAILQ_INIT(&r->pubs);
	return r;
}

static void
relay_cancel_timers(struct relay *r)
{
	struct loop	*l = r->loop;

	loop_timer_clear(l, &r->retry_timer);
	loop_timer_clear(l, &r->keepalive_timer);
	loop_timer_clear(l, &r->pump_timer);
	r->pump_at_ms = 0;
}

/*
 * Let go of the current connection. The caller may be inside one of its
 * callbacks, so it is only muted here and parked; a connection parked
 * earlier has been silent since and is released now.
 */
static void
relay_drop_ws(struct relay *r)
{
	if (r->ws == NULL)
		return;
	ws_mute(r->ws);
	ws_destroy(r->ws_spent);
	r->ws_spent = r->ws;
	r->ws = NULL;
}

static void
relay_sub_free(struct pool_sub *s)
{
	free(s->req);
	free(s);
}

static void
pub_free(struct relay_pub *p)
{
	free(p->frame);
	free(p);
}

void
relay_free(struct relay *r)
{
	struct pool_sub		*s;
	struct relay_pub	*p;

	relay_cancel_timers(r);
	/* Outside every callback of theirs: released before returning. */
	ws_destroy(r->ws);
	ws_destroy(r->ws_spent);
	while ((s = TAILQ_FIRST(&r->subs)) != NULL) {
		TAILQ_REMOVE(&r->subs, s, entry);
		relay_sub_free(s);
	}
	while ((p = TAILQ_FIRST(&r->pubs)) != NULL) {
		TAILQ_REMOVE(&r->pubs, p, entry);
		pub_free(p);
	}
	free(r);
}

/* Open slots in use: REQs sent and not closed. */
static size_t
relay_open_subs(const struct relay *r)
{
	const struct pool_sub	*s;
	size_t			 n = 0;

	TAILQ_FOREACH(s, &r->subs, entry)
		if (s->state == SUB_SENT || s->state == SUB_LIVE)
			n++;
	return n;
}

static void
relay_pump_timer(struct loop *l, void *arg)
{
	struct relay	*r = arg;

	(void)l;
	r->pump_timer = 0;
	r->pump_at_ms = 0;
	relay_pump(r);
}

/* Run the pump at at_ms unless it is already due sooner. */
static void
relay_pump_later(struct relay *r, uint64_t at_ms)
{
	uint64_t	now = relay_now(r);

	if (r->pump_timer != 0 && r->pump_at_ms <= at_ms)
		return;
	loop_timer_cancel(r->loop, r->pump_timer);
	r->pump_at_ms = at_ms;
	r->pump_timer = loop_timer_add(r->loop,
	    at_ms > now ? at_ms - now : 0, relay_pump_timer, r);
}

/*
 * Send s's REQ (or NEG-OPEN). 0; 1 when sent and the send queue is now
 * over its high water (send no more before on_drain); -1 when the send
 * queue refused it.
 */
static int
relay_send_req(struct relay *r, struct pool_sub *s)
{
	struct buf	b;
	int		rc;

	if (s->req != NULL)
		rc = ws_send_text(r->ws, s->req, s->req_len);
	else {
		/* The same filters give the same frame: it fits req_len. */
		buf_init(&b, s->req_len + 16);
		rc = relay_msg_build_req(&b, s->id, s->filters, s->nfilters);
		if (rc == 0)
			rc = ws_send_text(r->ws, buf_cstr(&b), b.len);
		else
			log_warnx("relay %s: REQ %s could not be built again",
			    r->url, s->id);
		buf_free(&b);
	}
	if (rc == -1)
		return -1;
	rc = rc == 1 ? 1 : 0;
	s->state = SUB_SENT;
	if (s->neg)
		r->stats.neg_opens++;
	else
		r->stats.reqs++;
	r->last_req_ms = relay_now(r);
	log_debug("relay %s: %s %s sent", r->url, s->neg ? "NEG-OPEN" : "REQ",
	    s->id);
	return rc;
}

void
relay_pump(struct relay *r)
{
	struct pool_sub	*s;
	uint64_t	 now = relay_now(r), pace = r->conf->pace_ms;
	size_t		 open;
	int		 rc;

	if (r->state != RELAY_OPEN || r->dead)
		return;
	/* The first document may lower the cap: do not overshoot it. */
	if (r->limits_pending && now < r->nip11_hold_ms) {
		relay_pump_later(r, r->nip11_hold_ms);
		return;
	}
	open = relay_open_subs(r);
	TAILQ_FOREACH(s, &r->subs, entry) {
		if (s->state != SUB_QUEUED)
			continue;
		if (open >= r->max_subs)
			return;
		if (now < r->ratelimit_until_ms) {
			relay_pump_later(r, r->ratelimit_until_ms);
			return;
		}
		if (r->last_req_ms != 0 && pace > 0 &&
		    now < r->last_req_ms + pace) {
			relay_pump_later(r, r->last_req_ms + pace);
			return;
		}
		/*
		 * At most one frame over the high water is queued, so 20
		 * relays each opening subscriptions of 1,600 authors do not
		 * hold every REQ in memory at once.
		 */
		if ((rc = relay_send_req(r, s)) == -1)
			return;		/* on_drain pumps again */
		open++;
		if (rc == 1)
			return;		/* so does this */
	}
}

void
relay_sub_close(struct pool_sub *s)
{
	struct relay	*r = s->relay;
	struct buf	 b;

	if ((s->state == SUB_SENT || s->state == SUB_LIVE) &&
	    r->state == RELAY_OPEN && r->ws != NULL) {
		buf_init(&b, RELAY_SUBID_MAX * 2 + 32);
		if ((s->neg ? relay_msg_build_neg_close(&b, s->id) :
		    relay_msg_build_close(&b, s->id)) == 0)
			(void)ws_send_text(r->ws, buf_cstr(&b), b.len);
		buf_free(&b);
	}
	s->state = SUB_DEAD;
	relay_pump(r);
}

/* Session s ended without a NEG-CLOSE of ours: mark it dead, tell its owner. */
static void
relay_neg_end(struct pool_sub *s, enum pool_neg_end why, const char *text)
{
	s->state = SUB_DEAD;
	s->ending = false;
	if (s->neg_cbs.on_err != NULL)
		s->neg_cbs.on_err(s, why, text, s->arg);
}

/*
 * Tell every session marked `ending` (and already dead) that it ended.
 * Marking all first and telling after keeps a callback that opens or
 * closes subscriptions from changing what is being marked; subs are only
 * marked dead in callbacks, never freed, so the walk stays valid.
 */
static void
relay_neg_tell(struct relay *r, enum pool_neg_end why, const char *text)
{
	struct pool_sub	*s;

	TAILQ_FOREACH(s, &r->subs, entry)
		if (s->ending)
			relay_neg_end(s, why, text);
}

/* The relay refused or ended s for good: tell the planner, mark it dead. */
static void
relay_sub_end(struct pool_sub *s, enum relay_reason reason, const char *text)
{
	if (s->neg) {
		relay_neg_end(s, POOL_NEG_END_CLOSED, text);
		return;
	}
	s->state = SUB_DEAD;
	if (s->cbs.on_closed != NULL)
		s->cbs.on_closed(s, reason, text, s->arg);
}

static void
relay_pub_end(struct relay *r, struct relay_pub *p, bool ok,
    enum relay_reason reason, const char *text)
{
	TAILQ_REMOVE(&r->pubs, p, entry);
	r->npubs--;
	if (p->cb != NULL)
		p->cb(p->id, ok, reason, text, p->arg);
	pub_free(p);
}

size_t
relay_frame_max(const struct relay *r)
{
	return r->max_message_length > 0 ? (size_t)r->max_message_length :
	    WS_MAX_MSG_BYTES_DEFAULT;
}

int
relay_neg_send(struct pool_sub *s, const uint8_t *msg, size_t len)
{
	struct relay	*r = s->relay;
	struct buf	 b;
	int		 rc = -1;

	if (!s->neg || (s->state != SUB_SENT && s->state != SUB_LIVE) ||
	    r->state != RELAY_OPEN || r->ws == NULL)
		return -1;
	buf_init(&b, relay_frame_max(r));
	if (relay_msg_build_neg_msg(&b, s->id, msg, len) == 0 &&
	    ws_send_text(r->ws, buf_cstr(&b), b.len) != -1) {
		r->stats.neg_msgs_out++;
		rc = 0;
	}
	buf_free(&b);
	return rc;
}

int
relay_publish(struct relay *r, struct relay_pub *p)
{
	if (r->state != RELAY_OPEN || r->ws == NULL ||
	    ws_send_text(r->ws, p->frame, p->frame_len) == -1)
		return -1;
	p->deadline_ms = relay_now(r) + RELAY_OK_TIMEOUT_MS;
	return 0;
}

static uint64_t
relay_backoff_cap(const struct relay *r)
{
	const struct relay_conf	*o = r->conf;

	return o->backoff_cap_ms ? o->backoff_cap_ms : RELAY_BACKOFF_CAP_MS;
}

/* The delay before the next attempt: at least floor_ms (capped too). */
static uint64_t
relay_backoff_ms(const struct relay *r, uint64_t floor_ms)
{
	const struct relay_conf	*o = r->conf;
	uint64_t		 d, cap = relay_backoff_cap(r);
	uint32_t		 rnd = 0;

	d = backoff_ms(o->backoff_base_ms ? o->backoff_base_ms :
	    RELAY_BACKOFF_BASE_MS, r->failures > 0 ? r->failures - 1 : 0,
	    cap);
	/* Spread, so relays that failed together do not retry together. */
	(void)tls_random(&rnd, sizeof(rnd));
	d = backoff_jitter(d, rnd);
	if (floor_ms > cap)
		floor_ms = cap;
	return d < floor_ms ? floor_ms : d;
}

static void
relay_retry_timer(struct loop *l, void *arg)
{
	struct relay	*r = arg;

	(void)l;
	r->retry_timer = 0;
	relay_connect(r);
}

/*
 * The connection is gone (error, close, dead peer, cut off). Sent
 * subscriptions go back to the queue in place, sessions sent end (a
 * negentropy session cannot resume; queued ones, and ones refused and
 * waiting for AUTH, are not open on the relay and stay queued), publishes
 * fail (the caller owns retrying), and a reconnect is scheduled after an
 * exponential delay with jitter, at least floor_ms. The sessions are told
 * last, once the relay is in backoff, so what their owners open queues.
 */
static void
relay_lose(struct relay *r, const char *why, uint64_t floor_ms,
    enum pool_neg_end negwhy)
{
	struct pool_sub		*s;
	struct relay_pub	*p;
	uint64_t		 delay;

	relay_drop_ws(r);
	relay_cancel_timers(r);
	TAILQ_FOREACH(s, &r->subs, entry) {
		if (s->state != SUB_SENT && s->state != SUB_LIVE &&
		    s->state != SUB_AUTH_WAIT)
			continue;
		if (s->neg && s->state != SUB_AUTH_WAIT) {
			s->state = SUB_DEAD;
			s->ending = true;
			continue;
		}
		s->state = SUB_QUEUED;
		s->resent++;
	}
	while ((p = TAILQ_FIRST(&r->pubs)) != NULL)
		relay_pub_end(r, p, false, RELAY_REASON_ERROR,
		    "error: connection lost");
	r->auth = RELAY_AUTH_NONE;
	r->challenge[0] = '\0';
	r->failures++;
	delay = relay_backoff_ms(r, floor_ms);
	r->backoff_until_ms = relay_now(r) + delay;
	relay_set_state(r, RELAY_BACKOFF, why);
	r->retry_timer = loop_timer_add(r->loop, delay,
	    relay_retry_timer, r);
	relay_neg_tell(r, negwhy, negwhy == POOL_NEG_END_LOST ?
	    "connection lost" : why);
}

static void
relay_lost(struct relay *r, const char *why)
{
	relay_lose(r, why, 0, POOL_NEG_END_LOST);
}

/*
 * Strikes of a relay cut off or closed for breaking the protocol, for the
 * least delay before it is dialled again: base_ms doubled per strike,
 * forgiven after RELAY_INVALID_FORGIVE_MS without one. A successful open
 * resets the failures, so without this a relay that misbehaves right
 * after each open would be dialled again at the first delay forever.
 */
static uint64_t
relay_strike(struct relay *r, uint64_t base_ms)
{
	uint64_t	now = relay_now(r);

	if (r->cut_strikes > 0 && now - r->last_cut_ms >=
	    RELAY_INVALID_FORGIVE_MS)
		r->cut_strikes = 0;
	r->cut_strikes++;
	r->last_cut_ms = now;
	return backoff_ms(base_ms, r->cut_strikes - 1, relay_backoff_cap(r));
}

/* Start a new invalid-input window when the current one is over. */
static void
relay_window(struct relay *r, uint64_t now)
{
	if (r->inv_window_ms == 0 ||
	    now - r->inv_window_ms >= RELAY_INVALID_WINDOW_MS) {
		r->inv_window_ms = now;
		r->inv_count = 0;
		r->unreq_count = 0;
		r->inv_msgs = 0;
	}
}

/*
 * Drop a relay whose input is mostly invalid: a close frame saying why,
 * then the usual loss (subscriptions queued again, publishes failed) with
 * a delay of at least RELAY_INVALID_BACKOFF_MS doubled per cut; a relay
 * not cut for RELAY_INVALID_FORGIVE_MS starts again at the first delay.
 */
static void
relay_cut(struct relay *r)
{
	static struct log_rl	 rl;
	uint64_t		 floor_ms = relay_strike(r,
				    RELAY_INVALID_BACKOFF_MS);
	char			 why[RELAY_REASON_MAX];

	r->cut_invalid++;
	if (r->unreq_count * 2 > r->inv_count)
		snprintf(why, sizeof(why), "cut off: %u events nobody asked "
		    "for (unrequested) and %u invalid of %u messages in %u s",
		    r->unreq_count, r->inv_count - r->unreq_count, r->inv_msgs,
		    RELAY_INVALID_WINDOW_MS / 1000);
	else
		snprintf(why, sizeof(why), "cut off: %u invalid events or "
		    "frames of %u messages in %u s", r->inv_count, r->inv_msgs,
		    RELAY_INVALID_WINDOW_MS / 1000);
	log_rl(&rl, LOG_LEVEL_WARN, "relay %s: %s (cut %u)", r->url, why,
	    r->cut_strikes);
	r->inv_window_ms = 0;
	if (r->ws != NULL)
		ws_close(r->ws, WS_CODE_POLICY, "too many invalid events");
	relay_lose(r, why, floor_ms, POOL_NEG_END_LOST);
}

/* One more bad event or frame in the window; cut when there are enough. */
static void
relay_note_bad(struct relay *r, bool unrequested)
{
	if (r->state != RELAY_OPEN || r->ws == NULL)
		return;
	relay_window(r, relay_now(r));
	r->unreq_count += unrequested;
	if (++r->inv_count >= RELAY_INVALID_CUT && (uint64_t)r->inv_count *
	    100 >= (uint64_t)r->inv_msgs * RELAY_INVALID_CUT_SHARE_PCT)
		relay_cut(r);
}

void
relay_note_invalid(struct relay *r)
{
	r->stats.invalid++;
	relay_note_bad(r, false);
}

void
relay_note_unrequested(struct relay *r)
{
	r->stats.unrequested++;
	relay_note_bad(r, true);
}

static void
relay_keepalive(struct loop *l, void *arg)
{
	struct relay		*r = arg;
	const struct relay_conf	*o = r->conf;
	uint64_t		 now = loop_now_ms(l), ping, dead;
	char			 why[64];

	r->keepalive_timer = 0;
	ping = o->ping_ms ? o->ping_ms : RELAY_PING_INTERVAL_MS;
	dead = o->dead_ms ? o->dead_ms : RELAY_DEAD_PEER_MS;
	if (r->ws == NULL)
		return;
	if (ws_pongs(r->ws) != r->pongs_seen) {
		r->pongs_seen = ws_pongs(r->ws);
		r->last_rx_ms = now;
	}
	if (now - r->last_rx_ms >= dead) {
		snprintf(why, sizeof(why), "dead peer: silent for %llu ms",
		    (unsigned long long)(now - r->last_rx_ms));
		relay_lost(r, why);
		return;
	}
	if (now - r->last_rx_ms >= ping)
		(void)ws_ping(r->ws);
	r->keepalive_timer = loop_timer_add(l, ping < dead ? ping / 2 + 1 :
	    dead / 2 + 1, relay_keepalive, r);
}

/* Answer the challenge held in r->challenge with a signed kind 22242. */
static void
relay_authenticate(struct relay *r)
{
	struct buf	b;

	if (r->conf->key == NULL || r->challenge[0] == '\0' ||
	    r->ws == NULL)
		return;
	buf_init(&b, 4096 + URL_MAX_BYTES + RELAY_CHALLENGE_MAX);
	if (relay_msg_build_auth(&b, r->conf->key, r->url, r->challenge,
	    clock_wall_s(), r->auth_id) == 0 &&
	    ws_send_text(r->ws, buf_cstr(&b), b.len) != -1) {
		r->auth = RELAY_AUTH_SENT;
		r->stats.auth++;
	} else
		log_warnx("relay %s: cannot send AUTH", r->url);
	buf_free(&b);
}

/* After AUTH was accepted: resend what was refused with auth-required. */
static void
relay_auth_done(struct relay *r, bool ok, const char *text)
{
	struct pool_sub		*s, *sn;
	struct relay_pub	*p, *pn;

	r->auth = ok ? RELAY_AUTH_OK : RELAY_AUTH_REFUSED;
	if (!ok)
		relay_error(r, "auth refused", text);
	log_info("relay %s: AUTH %s", r->url, ok ? "accepted" : "refused");
	TAILQ_FOREACH_SAFE(s, &r->subs, entry, sn) {
		if (s->state != SUB_AUTH_WAIT)
			continue;
		if (ok) {
			s->state = SUB_QUEUED;
			s->resent++;
		} else
			relay_sub_end(s, RELAY_REASON_AUTH_REQUIRED, text);
	}
	TAILQ_FOREACH_SAFE(p, &r->pubs, entry, pn) {
		if (!p->auth_wait)
			continue;
		p->auth_wait = false;
		if (!ok)
			relay_pub_end(r, p, false, RELAY_REASON_AUTH_REQUIRED,
			    text);
		else if (relay_publish(r, p) == -1)
			relay_pub_end(r, p, false, RELAY_REASON_ERROR,
			    "error: could not send again after AUTH");
	}
	relay_pump(r);
}

static struct pool_sub *
relay_sub_find(struct relay *r, const char *id)
{
	struct pool_sub	*s;

	TAILQ_FOREACH(s, &r->subs, entry)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

static void
on_event(struct relay *r, struct relay_msg *m)
{
	struct pool_sub	*s = relay_sub_find(r, m->subid);

	if (s == NULL || s->neg || (s->state != SUB_SENT &&
	    s->state != SUB_LIVE)) {
		if (s == NULL || s->neg)
			r->stats.dropped++;
		return;
	}
	r->stats.events++;
	if (s->cbs.on_event != NULL)
		s->cbs.on_event(s, m, s->arg);
}

static void
on_eose(struct relay *r, struct relay_msg *m)
{
	struct pool_sub	*s = relay_sub_find(r, m->subid);

	r->stats.eose++;
	if (s == NULL || s->neg || s->state != SUB_SENT)
		return;
	s->state = SUB_LIVE;
	if (relay_now(r) >= r->ratelimit_until_ms)
		r->ratelimit_strikes = 0;
	if (s->cbs.on_eose != NULL)
		s->cbs.on_eose(s, s->arg);
}

/* Pause new REQs for a delay that doubles with each strike, capped. */
static void
relay_ratelimit(struct relay *r)
{
	uint64_t	d;

	d = backoff_ms(r->conf->ratelimit_base_ms ?
	    r->conf->ratelimit_base_ms : RELAY_RATELIMIT_BASE_MS,
	    r->ratelimit_strikes, RELAY_RATELIMIT_CAP_MS);
	r->ratelimit_strikes++;
	r->ratelimit_until_ms = relay_now(r) + d;
	log_info("relay %s: rate-limited, new REQs paused %llu ms", r->url,
	    (unsigned long long)d);
}

/*
 * s was refused for a reason that passes: rate-limited (new REQs pause, s
 * goes back to the queue) or auth-required (s is sent again once, after
 * authenticating). True when s was requeued so; false for any other
 * reason. A session qualifies only before the relay's first NEG-MSG:
 * sending NEG-OPEN again then starts it afresh, it does not resume it.
 */
static bool
relay_retry_refused(struct relay *r, struct pool_sub *s,
    enum relay_reason reason)
{
	if (s->neg && s->state != SUB_SENT)
		return false;
	switch (reason) {
	case RELAY_REASON_RATE_LIMITED:
		relay_ratelimit(r);
		s->state = SUB_QUEUED;
		s->resent++;
		relay_pump(r);
		return true;
	case RELAY_REASON_AUTH_REQUIRED:
		if (s->auth_retried || r->conf->key == NULL)
			return false;
		s->auth_retried = true;
		s->state = SUB_AUTH_WAIT;
		if (r->auth == RELAY_AUTH_OK) {
			s->state = SUB_QUEUED;
			s->resent++;
		} else if (r->auth == RELAY_AUTH_NONE)
			relay_authenticate(r);
		relay_pump(r);
		return true;
	default:
		return false;
	}
}

static void
on_closed(struct relay *r, struct relay_msg *m)
{
	struct pool_sub	*s = relay_sub_find(r, m->subid);

	r->stats.closed++;
	if (s == NULL || (s->state != SUB_SENT && s->state != SUB_LIVE))
		return;
	if (relay_retry_refused(r, s, m->reason))
		return;
	relay_error(r, "CLOSED", m->text);
	relay_sub_end(s, m->reason, m->text);
	relay_pump(r);
}

/* The session s, or NULL when id names none still open. */
static struct pool_sub *
relay_neg_find(struct relay *r, const char *id)
{
	struct pool_sub	*s = relay_sub_find(r, id);

	if (s == NULL || !s->neg || (s->state != SUB_SENT &&
	    s->state != SUB_LIVE))
		return NULL;
	return s;
}

/*
 * Largest binary NEG-MSG taken from r: half the largest frame r may send
 * us (its hex), at most NEG_MAX_MSG_BYTES.
 */
static size_t
relay_neg_max(const struct relay *r)
{
	size_t	max = r->conf->max_msg_bytes ? r->conf->max_msg_bytes :
		    WS_MAX_MSG_BYTES_DEFAULT;

	return max / 2 < NEG_MAX_MSG_BYTES ? max / 2 : NEG_MAX_MSG_BYTES;
}

/*
 * A NEG-MSG: decoded (its length checked before the buffer is allocated)
 * and handed to the session, whose NEG-OPEN frame is no longer needed. A
 * message that does not decode ends the session: NEG-CLOSE, then on_err.
 * A NEG-MSG for a session closed meanwhile is ignored.
 */
static void
on_neg_msg(struct relay *r, struct relay_msg *m)
{
	struct pool_sub	*s;
	struct buf	 b;
	const char	*why;
	char		 text[64];

	r->stats.neg_msgs_in++;
	if ((s = relay_neg_find(r, m->subid)) == NULL)
		return;
	buf_init(&b, relay_neg_max(r));
	if (relay_msg_neg_decode(m->text, m->text_len, relay_neg_max(r), &b,
	    &why) == -1) {
		buf_free(&b);
		log_info("relay %s: NEG-MSG %s: %s (%zu hex digits)", r->url,
		    s->id, why, m->text_len);
		snprintf(text, sizeof(text), "bad NEG-MSG: %s", why);
		relay_sub_close(s);
		relay_neg_end(s, POOL_NEG_END_BAD_MSG, text);
		relay_note_invalid(r);
		return;
	}
	if (s->state == SUB_SENT) {
		s->state = SUB_LIVE;
		free(s->req);
		s->req = NULL;
		s->req_len = 0;
	}
	if (s->neg_cbs.on_msg != NULL)
		s->neg_cbs.on_msg(s, b.data, b.len, s->arg);
	buf_free(&b);
}

/*
 * A NEG-ERR ends its session with the relay's reason, except a passing
 * refusal of a session not answered yet (relay_retry_refused).
 */
static void
on_neg_err(struct relay *r, struct relay_msg *m)
{
	struct pool_sub	*s;

	r->stats.neg_errs++;
	if ((s = relay_neg_find(r, m->subid)) == NULL)
		return;
	log_info("relay %s: NEG-ERR %s: %.200s", r->url, s->id, m->text);
	if (relay_retry_refused(r, s, m->reason))
		return;
	relay_neg_end(s, POOL_NEG_END_ERR, m->text);
	relay_pump(r);
}

static void
on_ok(struct relay *r, struct relay_msg *m)
{
	struct relay_pub	*p;

	if (r->auth == RELAY_AUTH_SENT && memcmp(m->event_id, r->auth_id,
	    32) == 0) {
		relay_auth_done(r, m->accepted, m->text);
		return;
	}
	TAILQ_FOREACH(p, &r->pubs, entry)
		if (memcmp(p->id, m->event_id, 32) == 0)
			break;
	if (p == NULL)
		return;
	/*
	 * "auth-required:" is sent again once after AUTH; not when this
	 * connection's AUTH was refused already (no answer would come to
	 * wait for): then, as after the resend, the answer is the owner's.
	 */
	if (!m->accepted && m->reason == RELAY_REASON_AUTH_REQUIRED &&
	    !p->auth_retried && r->conf->key != NULL &&
	    r->auth != RELAY_AUTH_REFUSED) {
		p->auth_retried = true;
		if (r->auth == RELAY_AUTH_OK && relay_publish(r, p) == 0)
			return;
		p->auth_wait = true;
		if (r->auth == RELAY_AUTH_NONE)
			relay_authenticate(r);
		return;
	}
	relay_pub_end(r, p, m->accepted, m->reason, m->text);
}

static void
on_auth(struct relay *r, struct relay_msg *m)
{
	if (m->text_len == 0 || m->text_len > RELAY_CHALLENGE_MAX) {
		relay_note_invalid(r);
		return;
	}
	memcpy(r->challenge, m->text, m->text_len + 1);
	relay_authenticate(r);
}

/*
 * A NOTICE is logged, and refuses every session still waiting for the
 * relay's first answer to its NEG-OPEN (the rule is in pool.h).
 */
static void
on_notice(struct relay *r, struct relay_msg *m)
{
	static struct log_rl	 rl;
	struct pool_sub		*s;
	char			 text[RELAY_REASON_MAX];
	bool			 any = false;

	r->stats.notices++;
	log_rl(&rl, LOG_LEVEL_INFO, "relay %s: NOTICE %.200s", r->url,
	    m->text);
	TAILQ_FOREACH(s, &r->subs, entry)
		if (s->neg && s->state == SUB_SENT) {
			s->state = SUB_DEAD;
			s->ending = any = true;
		}
	if (!any)
		return;
	snprintf(text, sizeof(text), "notice: %s", m->text);
	relay_neg_tell(r, POOL_NEG_END_NOTICE, text);
	relay_pump(r);
}

static void
relay_on_message(struct ws_conn *ws, const char *text, size_t len, void *arg)
{
	static struct log_rl	 rl;
	struct relay		*r = arg;
	struct relay_msg	 m;
	enum relay_msg_err	 e;
	size_t			 max = r->conf->max_msg_bytes;

	(void)ws;
	r->last_rx_ms = relay_now(r);
	r->stats.bytes_in += len;
	relay_window(r, r->last_rx_ms);
	r->inv_msgs++;
	if ((e = relay_msg_parse(&m, text, len, max ? max :
	    WS_MAX_MSG_BYTES_DEFAULT)) != RELAY_MSG_PARSED) {
		log_rl(&rl, LOG_LEVEL_WARN, "relay %s: bad message: %s", r->url,
		    relay_msg_err_str(e));
		relay_note_invalid(r);
		return;
	}
	switch (m.type) {
	case RELAY_MSG_EVENT:	on_event(r, &m); break;
	case RELAY_MSG_EOSE:	on_eose(r, &m); break;
	case RELAY_MSG_CLOSED:	on_closed(r, &m); break;
	case RELAY_MSG_NOTICE:	on_notice(r, &m); break;
	case RELAY_MSG_OK:	on_ok(r, &m); break;
	case RELAY_MSG_AUTH:	on_auth(r, &m); break;
	case RELAY_MSG_NEG_MSG:	on_neg_msg(r, &m); break;
	case RELAY_MSG_NEG_ERR:	on_neg_err(r, &m); break;
	default:		break;	/* COUNT: no user yet */
	}
	relay_msg_free(&m);
}

static void
relay_on_open(struct ws_conn *ws, void *arg)
{
	struct relay	*r = arg;

	(void)ws;
	r->failures = 0;
	r->backoff_until_ms = 0;
	r->last_rx_ms = relay_now(r);
	r->pongs_seen = ws_pongs(r->ws);
	r->last_req_ms = 0;
	r->nip11_hold_ms = r->limits_pending ?
	    relay_now(r) + RELAY_NIP11_WAIT_MS : 0;
	relay_set_state(r, RELAY_OPEN, NULL);
	r->keepalive_timer = loop_timer_add(r->loop,
	    (r->conf->ping_ms ? r->conf->ping_ms :
	    RELAY_PING_INTERVAL_MS) / 2 + 1, relay_keepalive, r);
	relay_pump(r);
}

static void
relay_on_close(struct ws_conn *ws, int code, const char *reason, void *arg)
{
	struct relay	*r = arg;
	char		 why[RELAY_REASON_MAX];

	(void)ws;
	snprintf(why, sizeof(why), "connection closed (%d%s%.120s)", code,
	    reason[0] ? ": " : "", reason);
	/* A message too big, or a frame or text the WebSocket refused. */
	if (code == WS_CODE_TOO_BIG || code == WS_CODE_PROTOCOL ||
	    code == WS_CODE_BAD_DATA) {
		relay_lose(r, why, relay_strike(r, r->conf->backoff_base_ms ?
		    r->conf->backoff_base_ms : RELAY_BACKOFF_BASE_MS),
		    POOL_NEG_END_VIOLATION);
		log_warnx("relay %s: %s: a protocol violation, dialled again "
		    "in %llu s (strike %u)", r->url, why, (unsigned long long)
		    ((r->backoff_until_ms - relay_now(r)) / 1000), r->cut_strikes);
		return;
	}
	relay_lost(r, why);
}

static void
relay_on_error(struct ws_conn *ws, const char *reason, void *arg)
{
	(void)ws;
	relay_lost(arg, reason);
}

static void
relay_on_drain(struct ws_conn *ws, void *arg)
{
	(void)ws;
	relay_pump(arg);
}

/* The relay state an opening WebSocket stage corresponds to. */
static enum relay_state
relay_stage_state(enum ws_state st)
{
	switch (st) {
	case WS_RESOLVING:	return RELAY_RESOLVING;
	case WS_CONNECTING:	return RELAY_CONNECTING;
	case WS_TLS:		return RELAY_TLS;
	default:		return RELAY_UPGRADING;
	}
}

static void
relay_on_stage(struct ws_conn *ws, enum ws_state st, void *arg)
{
	(void)ws;
	relay_set_state(arg, relay_stage_state(st), NULL);
}

void
relay_connect(struct relay *r)
{
	static const struct ws_cbs	 cbs = {
		.on_open = relay_on_open,
		.on_message = relay_on_message,
		.on_close = relay_on_close,
		.on_error = relay_on_error,
		.on_drain = relay_on_drain,
		.on_stage = relay_on_stage,
	};
	const struct relay_conf		*o = r->conf;
	struct ws_opts			 wo;
	char				 err[256];

	if (r->dead || r->ws != NULL)
		return;
	memset(&wo, 0, sizeof(wo));
	wo.dns = o->dns;
	wo.ca_file = r->conf->ca_file;
	wo.max_msg_bytes = o->max_msg_bytes;
	wo.send_high_water = RELAY_SEND_HIGH_WATER;
	r->ws = ws_connect(r->loop, r->url, &wo, &cbs, r, err,
	    sizeof(err));
	if (r->ws == NULL) {
		relay_set_state(r, RELAY_FAILED, err);
		return;
	}
	relay_set_state(r, relay_stage_state(ws_state(r->ws)), NULL);
}

void
relay_disable(struct relay *r)
{
	struct pool_sub	*s;

	if (r->ws != NULL)
		ws_close(r->ws, WS_CODE_GOING_AWAY, "");
	relay_drop_ws(r);
	relay_cancel_timers(r);
	TAILQ_FOREACH(s, &r->subs, entry) {
		s->state = SUB_DEAD;
		s->ending = false;	/* removed: no callbacks at all */
	}
	r->dead = true;
	relay_set_state(r, RELAY_DISABLED, NULL);
}

void
relay_retire(struct relay *r, const char *why)
{
	struct pool_sub		*s;
	struct relay_pub	*p, *pn;

	/* Dead first: pool_relay_find skips it, so a callback below that
	 * opens a subscription again cannot open one here. */
	r->dead = true;
	TAILQ_FOREACH(s, &r->subs, entry) {
		if (s->state == SUB_DEAD)
			continue;
		if (s->neg)
			relay_neg_end(s, POOL_NEG_END_LOST, why);
		else
			relay_sub_end(s, RELAY_REASON_ERROR, why);
	}
	TAILQ_FOREACH_SAFE(p, &r->pubs, entry, pn)
		relay_pub_end(r, p, false, RELAY_REASON_ERROR, why);
	relay_disable(r);
}

void
relay_tick(struct relay *r)
{
	struct pool_sub		*s, *sn;
	struct relay_pub	*p, *pn;
	uint64_t		 now = relay_now(r);

	/* Top of the loop round: no callback of the parked one is running. */
	ws_destroy(r->ws_spent);
	r->ws_spent = NULL;
	TAILQ_FOREACH_SAFE(s, &r->subs, entry, sn) {
		if (s->state == SUB_DEAD) {
			TAILQ_REMOVE(&r->subs, s, entry);
			relay_sub_free(s);
		}
	}
	TAILQ_FOREACH_SAFE(p, &r->pubs, entry, pn)
		if (p->deadline_ms != 0 && now >= p->deadline_ms)
			relay_pub_end(r, p, false, RELAY_REASON_ERROR,
			    "error: no OK in time");
}

void
relay_limits_pending(struct relay *r, bool pending)
{
	r->limits_pending = pending;
	if (!pending)
		relay_pump(r);		/* REQs held for the limits go now */
}

void
relay_apply_limits(struct relay *r)
{
	int64_t	m = r->max_subscriptions;

	r->limits_pending = false;
	r->max_subs = RELAY_MAX_SUBS_DEFAULT;
	if (m > 0)
		r->max_subs = m > RELAY_MAX_SUBS_CEILING ?
		    RELAY_MAX_SUBS_CEILING : (size_t)m;
	relay_pump(r);
}
