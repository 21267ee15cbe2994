/*
 * send.c — what goes out to the relay endpoint's clients: one frame to a
 * client, its NOTICE and CLOSED, the per-client mark past which a send
 * cuts the client off, the relay's send budget over all clients, and the
 * cutting off itself, which takes the client's subscriptions off the
 * scheduler's queues. Every other file of src/serve sends through here;
 * nothing here calls back into them.
 */
#include <stdio.h>

#include "core/buf.h"
#include "core/log.h"
#include "net/ws.h"
#include "net/ws_serve.h"
#include "serve/serve_int.h"
#include "serve/wire.h"

static const char *
client_state_name(enum client_state s)
{
	static const char *const names[] = { "open", "closing", "dead" };

	return names[s];
}

void
client_set_state(struct client *c, enum client_state s)
{
	if (c->state == s)
		return;
	log_debug("relay client %s: %s -> %s", c->addr,
	    client_state_name(c->state), client_state_name(s));
	c->state = s;
}

size_t
client_queued(const struct client *c)
{
	return c->peer != NULL ? ws_peer_queued(c->peer) : 0;
}

void
client_cut(struct client *c, int code, const char *reason)
{
	if (c->state != CLIENT_OPEN)
		return;
	log_info_rl("relay: client %s cut off: %s", c->addr, reason);
	client_set_state(c, CLIENT_CLOSING);
	sub_unschedule_all(c);	/* freed at the reap: this may run in a slice */
	ws_peer_abort(c->peer, code, reason);
}

void
client_close(struct client *c, int code, const char *reason)
{
	if (c->state != CLIENT_OPEN)
		return;
	client_set_state(c, CLIENT_CLOSING);
	sub_unschedule_all(c);
	ws_peer_close(c->peer, code, reason);
}

int
client_send_frame(struct client *c)
{
	struct serve	*srv = c->srv;
	char		 why[96];
	int		 rc;

	if (c->state != CLIENT_OPEN)
		return -1;
	rc = ws_peer_send_text(c->peer, (const char *)srv->frame.data,
	    srv->frame.len);
	if (rc == -1) {
		snprintf(why, sizeof(why), "slow reader: %zu bytes waiting",
		    client_queued(c));
		srv->stats.cut_slow++;
		client_cut(c, WS_CODE_POLICY, why);
		return -1;
	}
	if (rc == 1)
		c->paused = true;
	return rc;
}

int
client_notice(struct client *c, const char *msg)
{
	buf_reset(&c->srv->frame);
	if (wire_notice(&c->srv->frame, msg) == -1)
		return -1;
	return client_send_frame(c);
}

int
client_closed(struct client *c, const char *subid, const char *msg)
{
	buf_reset(&c->srv->frame);
	if (wire_closed(&c->srv->frame, subid, msg) == -1)
		return -1;
	return client_send_frame(c);
}

/* ---- the send budget ------------------------------------------------------- */

void
serve_enforce_budget(struct serve *srv)
{
	struct client	*c, *big;
	size_t		 total;
	char		 why[96];

	for (;;) {
		total = 0;
		big = NULL;
		TAILQ_FOREACH(c, &srv->clients, entry) {
			if (c->state != CLIENT_OPEN)
				continue;
			total += client_queued(c);
			if (big == NULL || client_queued(c) > client_queued(big))
				big = c;
		}
		if (total <= RELAYD_SEND_BUDGET || big == NULL)
			return;
		snprintf(why, sizeof(why), "slow reader: %zu bytes waiting "
		    "while the relay's send budget is spent",
		    client_queued(big));
		srv->stats.cut_slow++;
		client_cut(big, WS_CODE_POLICY, why);
	}
}

/* ---- the queues ---------------------------------------------------------- */

/* Off whichever queue s is on. */
void
sub_unschedule(struct sub *s)
{
	struct serve	*srv = s->c->srv;

	if (!s->queued)
		return;
	if (s->phase == SUB_WAITING && !s->holds_slot) {
		struct sub *w;

		TAILQ_FOREACH(w, &srv->waitq, runq)
			if (w == s) {
				TAILQ_REMOVE(&srv->waitq, s, runq);
				s->queued = false;
				return;
			}
	}
	TAILQ_REMOVE(&srv->runq, s, runq);
	s->queued = false;
}

void
sub_unschedule_all(struct client *c)
{
	struct sub	*s;

	TAILQ_FOREACH(s, &c->subs, entry)
		sub_unschedule(s);
	TAILQ_FOREACH(s, &c->negs, entry)
		sub_unschedule(s);
}
