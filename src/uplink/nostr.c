/*
 * nostr.c — the NIP-01 uplink driver: each inbox row goes to the owner's
 * relay as ["EVENT", ...] through the relay pool (role uplink), oldest
 * first, with at most UPLINK_WS_WINDOW events waiting for their OK. The
 * pool owns the connection, reconnects and NIP-42 (it answers AUTH with
 * the box key and resends an event refused with "auth-required:" once).
 * The inbox never hands it someone else's protected event (NIP-70).
 *
 * What an OK means here:
 *   true, or "duplicate:"                     delivered: the row is deleted
 *   "blocked:" "invalid:" "pow:" "restricted:"  dead letter with the reason
 *   "mute:" or an unknown prefix, and
 *   "auth-required:" after the relay accepted
 *   our AUTH and the pool's one resend
 *   "rate-limited:", "auth-required:" while     pause (growing), then resend
 *   our AUTH is refused or was never asked      from the oldest pending row
 *   for, "error:", lost link
 *   no OK within UPLINK_WS_OK_TIMEOUT_MS        reconnect, then resend
 * Confirmations are collected during a round and deleted in one
 * transaction by the loop hook; sending happens there too, never inside
 * a pool callback. A resent event the relay already stored comes back as
 * "duplicate:", so a resend never stores anything twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backoff.h"
#include "core/clock.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "nostr/key.h"
#include "relay/pool.h"
#include "store/inbox.h"
#include "uplink/driver.h"

struct nostr_out {
	int64_t		seq;
	uint8_t		id[32];
	uint64_t	sent_ms;
};

struct nostr {
	struct uplink		*up;
	struct loop		*loop;
	struct store		*store;
	struct pool		*pool;
	char			*url;
	struct nostr_out	 win[UPLINK_WS_WINDOW];
	size_t			 nout;
	int64_t			 after;		/* highest seq sent since the last rewind */
	bool			 rewind;	/* resend from the oldest pending row */
	bool			 wanted;	/* rows may be waiting to be sent */
	uint64_t		 pause_until;	/* monotonic ms */
	unsigned		 pauses;	/* consecutive, sizes the pause */
	int64_t			 done[UPLINK_WS_WINDOW];
	size_t			 ndone;
	struct inbox_batch	 batch;
	const uint8_t		*self;		/* the box's pubkey, or NULL */
	char			 state[32];
};

static void
nostr_state(struct nostr *ns, const char *s)
{
	if (strcmp(ns->state, s) != 0)
		snprintf(ns->state, sizeof(ns->state), "%s", s);
	uplink_set_state(ns->up, ns->state);
}

static uint64_t
nostr_pause_ms(unsigned pauses)
{
	return backoff_ms(UPLINK_WS_PAUSE_BASE_MS, pauses > 0 ? pauses - 1 : 0,
	    UPLINK_WS_PAUSE_CAP_MS);
}

/* Stop sending for a while and resend from the oldest pending row. */
static void
nostr_pause(struct nostr *ns, const char *what, const char *msg)
{
	uint64_t	now = loop_now_ms(ns->loop), d;

	ns->rewind = true;
	if (now < ns->pause_until)
		return;		/* one pause per burst of refusals */
	d = nostr_pause_ms(++ns->pauses);
	ns->pause_until = now + d;
	uplink_set_error(ns->up, "%s: %s; resending in %llu ms", what,
	    msg != NULL && msg[0] != '\0' ? msg : "(no message)",
	    (unsigned long long)d);
}

/* The window slot of id, or -1 (an answer to something no longer ours). */
static int
nostr_slot(const struct nostr *ns, const uint8_t id[32])
{
	size_t	i;

	for (i = 0; i < ns->nout; i++)
		if (memcmp(ns->win[i].id, id, 32) == 0)
			return (int)i;
	return -1;
}

static void
nostr_dead(struct nostr *ns, int64_t seq, const char *msg)
{
	char	reason[UPLINK_ERROR_MAX + 1];

	snprintf(reason, sizeof(reason), "%s", msg != NULL && msg[0] != '\0' ?
	    msg : "refused without a reason");
	if (store_inbox_dead(ns->store, seq, reason, clock_wall_s()) == 1) {
		uplink_rejected(ns->up, 1);
		log_info_rl("uplink: relay refused inbox row %lld: %s",
		    (long long)seq, reason);
	}
}

/*
 * "auth-required:" for the row seq, after the pool's handling (pool.h):
 * with our AUTH accepted on this connection the relay will not take this
 * event from the box whatever it does, so it becomes a dead letter with
 * the relay's words; otherwise the uplink waits, saying why.
 */
static void
nostr_auth_required(struct nostr *ns, int64_t seq, const char *msg)
{
	struct pool_relay_info	info;

	if (pool_relay_info_url(ns->pool, ns->url, &info) == -1)
		info.auth_state = RELAY_AUTH_NONE;
	switch (info.auth_state) {
	case RELAY_AUTH_OK:
		nostr_dead(ns, seq, msg);
		break;
	case RELAY_AUTH_REFUSED:
		nostr_pause(ns, "relay wants AUTH and refused ours", msg);
		break;
	case RELAY_AUTH_SENT:
		nostr_pause(ns, "relay wants AUTH and has not answered ours",
		    msg);
		break;
	default:
		nostr_pause(ns, "relay wants AUTH and sent no challenge", msg);
		break;
	}
}

static void
nostr_ok(const uint8_t id[32], bool accepted, enum relay_reason reason,
    const char *msg, void *arg)
{
	struct nostr	*ns = arg;
	int		 i = nostr_slot(ns, id);
	int64_t		 seq;

	if (i < 0)
		return;
	seq = ns->win[i].seq;
	ns->win[i] = ns->win[--ns->nout];
	ns->wanted = true;
	if (accepted || reason == RELAY_REASON_DUPLICATE) {
		if (ns->ndone < UPLINK_WS_WINDOW)
			ns->done[ns->ndone++] = seq;
		ns->pauses = 0;
		return;
	}
	switch (reason) {
	case RELAY_REASON_RATE_LIMITED:
		nostr_pause(ns, "relay rate-limited the uplink", msg);
		break;
	case RELAY_REASON_AUTH_REQUIRED:
		nostr_auth_required(ns, seq, msg);
		break;
	case RELAY_REASON_ERROR:
		nostr_pause(ns, "no OK", msg);
		break;
	default:
		nostr_dead(ns, seq, msg);
		break;
	}
}

/* Delete what was confirmed this round, in one transaction. */
static void
nostr_flush(struct nostr *ns)
{
	int64_t	n;

	if (ns->ndone == 0)
		return;
	n = store_inbox_confirm(ns->store, ns->done, ns->ndone);
	ns->ndone = 0;
	if (n > 0) {
		uplink_delivered(ns->up, (uint64_t)n);
		uplink_clear_error(ns->up);
	} else if (n == -1)
		ns->rewind = true;	/* sent again; the relay says duplicate */
}

/* Drop the connection and everything awaiting OK; resend after it. */
static void
nostr_reconnect(struct nostr *ns)
{
	pool_relay_remove(ns->pool, ns->url);
	ns->nout = 0;
	ns->rewind = true;
	ns->wanted = true;
	if (pool_relay_add(ns->pool, ns->url, RELAY_ROLE_UPLINK) == NULL)
		uplink_set_error(ns->up, "the relay pool refused the URL");
}

/* An event waiting longer than UPLINK_WS_OK_TIMEOUT_MS: reconnect. */
static void
nostr_check_timeouts(struct nostr *ns)
{
	uint64_t	now = loop_now_ms(ns->loop);
	char		hex[65];
	size_t		i;

	for (i = 0; i < ns->nout; i++)
		if (now - ns->win[i].sent_ms >= UPLINK_WS_OK_TIMEOUT_MS)
			break;
	if (i == ns->nout)
		return;
	(void)hex_encode(ns->win[i].id, 32, hex, sizeof(hex));
	uplink_set_error(ns->up, "relay sent no OK for event %.16s within "
	    "%d s; reconnecting and resending", hex,
	    UPLINK_WS_OK_TIMEOUT_MS / 1000);
	nostr_reconnect(ns);
}

/* Whether the relay is open; otherwise show its state and error. */
static bool
nostr_relay_open(struct nostr *ns)
{
	struct pool_relay_info	info;

	if (pool_relay_info_url(ns->pool, ns->url, &info) == -1) {
		nostr_reconnect(ns);
		nostr_state(ns, "connecting");
		return false;
	}
	if (info.state == RELAY_OPEN)
		return true;
	nostr_state(ns, info.state_name);
	if (info.last_error != NULL && info.last_error[0] != '\0')
		uplink_set_error(ns->up, "relay %s: %s", info.state_name,
		    info.last_error);
	return false;
}

/* Send one row. 0 sent, -1 the pool cannot take it now. */
static int
nostr_send(struct nostr *ns, const struct inbox_row *r)
{
	struct nostr_out	*o;

	if (pool_publish(ns->pool, ns->url, r->json, r->json_len, nostr_ok,
	    ns) == -1) {
		/* With nothing in flight the row itself is the problem. */
		if (ns->nout == 0) {
			nostr_dead(ns, r->seq, "could not be sent: malformed "
			    "or too large");
			ns->after = r->seq;
			return 0;
		}
		return -1;
	}
	o = &ns->win[ns->nout++];
	o->seq = r->seq;
	memcpy(o->id, r->id, 32);
	o->sent_ms = loop_now_ms(ns->loop);
	ns->after = r->seq;
	return 0;
}

/* Fill the window from the inbox while the relay allows. */
static void
nostr_pump(struct nostr *ns)
{
	size_t	i, room;
	int	n;

	if (!ns->wanted || !nostr_relay_open(ns) || uplink_queueing(ns->up))
		return;
	if (loop_now_ms(ns->loop) < ns->pause_until) {
		nostr_state(ns, "paused");
		return;
	}
	if (ns->rewind) {
		if (ns->nout > 0)
			return;
		ns->after = 0;
		ns->rewind = false;
	}
	nostr_state(ns, ns->nout > 0 ? "sending" : "open");
	if ((room = UPLINK_WS_WINDOW - ns->nout) == 0)
		return;
	n = store_inbox_take(ns->store, ns->after, room, UPLINK_WS_TAKE_BYTES,
	    ns->self, &ns->batch);
	for (i = 0; n > 0 && i < (size_t)n; i++)
		if (nostr_send(ns, &ns->batch.rows[i]) == -1)
			break;
	if (n >= 0 && (size_t)n < room && i == (size_t)n)
		ns->wanted = false;
	if (ns->nout > 0)
		nostr_state(ns, "sending");
	store_inbox_batch_clear(&ns->batch);
}

static void
nostr_hook(struct loop *l, void *arg)
{
	struct nostr	*ns = arg;

	nostr_flush(ns);
	nostr_check_timeouts(ns);
	nostr_pump(ns);
}

static void *
nostr_start(struct uplink *up, const char *url)
{
	struct nostr	*ns;

	if ((ns = calloc(1, sizeof(*ns))) == NULL ||
	    (ns->url = strdup(url)) == NULL) {
		free(ns);
		uplink_set_error(up, "out of memory");
		return NULL;
	}
	ns->up = up;
	ns->loop = uplink_loop(up);
	ns->store = uplink_store(up);
	ns->self = uplink_key(up) != NULL ? uplink_key(up)->pubkey : NULL;
	ns->wanted = true;
	if ((ns->pool = uplink_pool(up)) == NULL ||
	    pool_relay_add(ns->pool, url, RELAY_ROLE_UPLINK) == NULL ||
	    loop_hook_add(ns->loop, nostr_hook, ns) == -1) {
		uplink_set_error(up, "%s", ns->pool == NULL ? "no relay pool" :
		    "the relay pool refused the URL");
		if (ns->pool != NULL)
			pool_relay_remove(ns->pool, url);
		free(ns->url);
		free(ns);
		return NULL;
	}
	nostr_state(ns, "connecting");
	return ns;
}

static void
nostr_stop(void *arg)
{
	struct nostr	*ns = arg;

	nostr_flush(ns);
	loop_hook_del(ns->loop, nostr_hook, ns);
	pool_relay_remove(ns->pool, ns->url);
	store_inbox_batch_free(&ns->batch);
	free(ns->url);
	free(ns);
}

static void
nostr_kick(void *arg)
{
	struct nostr	*ns = arg;

	ns->wanted = true;
	nostr_flush(ns);
	nostr_pump(ns);
}

static void
nostr_rewind(void *arg)
{
	struct nostr	*ns = arg;

	ns->rewind = true;
	ns->wanted = true;
}

const struct uplink_driver uplink_nostr_driver = {
	.name = "nostr",
	.start = nostr_start,
	.stop = nostr_stop,
	.kick = nostr_kick,
	.rewind = nostr_rewind,
};
