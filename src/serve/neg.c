/*
 * neg.c — NIP-77 sessions of the relay endpoint, as responder: NEG-OPEN's
 * filter is answered from the store (a scan, in slices like any query,
 * collecting (created_at, id) items), the set is sealed, and the same
 * negentropy code the sync uses as initiator (nostr/negentropy.c) answers
 * the initial message and every NEG-MSG after it.
 *
 * Bounds: a set of more than NEG_MAX_ITEMS items is refused with NEG-ERR
 * "blocked:" as soon as the scan passes the cap (nothing more is read),
 * at most RELAYD_MAX_NEG_SESSIONS sessions are open over every client
 * (40 bytes an item: 2 MB each at the cap) and RELAYD_CLIENT_NEG_SESSIONS
 * of them on one connection, a session lives at most RELAYD_NEG_MAX_MS
 * (or RELAYD_NEG_IDLE_MS after our last answer), and our answers keep to
 * RELAYD_NEG_FRAME_BYTES. A NEG-OPEN with an id in use replaces that
 * session, as NIP-77 says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/loop.h"
#include "nostr/negentropy.h"
#include "relay/msg.h"
#include "serve/serve_int.h"
#include "serve/wire.h"
#include "store/scan.h"

static void
neg_err(struct client *c, const char *subid, const char *reason)
{
	buf_reset(&c->srv->frame);
	if (wire_neg_err(&c->srv->frame, subid, reason) == 0)
		client_send_frame(c);
}

static struct sub *
neg_find(struct client *c, const char *id)
{
	struct sub	*s;

	TAILQ_FOREACH(s, &c->negs, entry)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

static void
neg_release(struct sub *s)
{
	if (s->sess_open)
		neg_session_free(&s->sess);
	s->sess_open = false;
	neg_storage_free(&s->items);
	buf_free(&s->first);
	s->c->srv->neg_sessions--;
}

static int
neg_collect(void *arg, const struct store_scan_row *row, const char *json,
    size_t len)
{
	struct sub	*s = arg;

	if (row->created_at < 0)
		return 0;	/* before 1970: no negentropy item has it */
	if (neg_storage_add(&s->items, (uint64_t)row->created_at,
	    row->id) == -1) {
		s->over_cap = true;
		return 1;
	}
	return 0;
}

/* Reconcile msg[0..len) and send the answer. false when the session ended. */
static bool
neg_answer(struct sub *s, const uint8_t *msg, size_t len)
{
	struct serve	*srv = s->c->srv;
	struct buf	 out;
	char		 why[RELAYD_NOTICE_MAX];
	bool		 ok = false;

	buf_init(&out, RELAYD_NEG_FRAME_BYTES);
	if (neg_reconcile(&s->sess, msg, len, &out, NULL) == NEG_ERROR) {
		snprintf(why, sizeof(why), "invalid: %s",
		    neg_session_reason(&s->sess));
		neg_err(s->c, s->id, why);
	} else {
		buf_reset(&srv->frame);
		if (wire_neg_msg(&srv->frame, s->id, out.data, out.len) == 0)
			ok = client_send_frame(s->c) != -1;
		s->answered_ms = loop_now_ms(srv->loop);
	}
	buf_free(&out);
	return ok;
}

static void
neg_begin(struct sub *s)
{
	char	why[RELAYD_NOTICE_MAX];

	if (s->over_cap) {
		snprintf(why, sizeof(why), "blocked: the filter matches more "
		    "than %d events; narrow it with since and until",
		    NEG_MAX_ITEMS);
		neg_err(s->c, s->id, why);
		s->phase = SUB_DONE;
		return;
	}
	neg_storage_seal(&s->items);
	if (neg_session_init(&s->sess, &s->items, NEG_RESPONDER,
	    RELAYD_NEG_FRAME_BYTES) == -1) {
		neg_err(s->c, s->id, "error: cannot start the session");
		s->phase = SUB_DONE;
		return;
	}
	s->sess_open = true;
	s->phase = SUB_NEG_OPEN;
	if (!neg_answer(s, s->first.data, s->first.len))
		s->phase = SUB_DONE;
	buf_free(&s->first);
}

static const struct sub_hooks neg_hooks = {
	.collect = neg_collect,
	.queried = neg_begin,
	.release = neg_release,
};

void
neg_open(struct client *c, struct wire_msg *m)
{
	struct serve	*srv = c->srv;
	struct sub	*s, *old;
	struct buf	 first;
	const char	*why;
	char		 msg[RELAYD_NOTICE_MAX];

	if ((old = neg_find(c, m->subid)) != NULL)
		sub_free(old);
	if (c->nnegs >= RELAYD_CLIENT_NEG_SESSIONS) {
		snprintf(msg, sizeof(msg), "blocked: at most %d reconciliation "
		    "per connection at a time; close the open one first",
		    RELAYD_CLIENT_NEG_SESSIONS);
		neg_err(c, m->subid, msg);
		return;
	}
	if (srv->neg_sessions >= RELAYD_MAX_NEG_SESSIONS) {
		snprintf(msg, sizeof(msg), "blocked: %d reconciliations are "
		    "open already; try again later", RELAYD_MAX_NEG_SESSIONS);
		neg_err(c, m->subid, msg);
		return;
	}
	if (sub_mem_refusal(c, m, msg, sizeof(msg)) != NULL) {
		neg_err(c, m->subid, msg);
		return;
	}
	buf_init(&first, NEG_MAX_MSG_BYTES);
	if (relay_msg_neg_decode(m->hex, m->hex_len, NEG_MAX_MSG_BYTES, &first,
	    &why) == -1) {
		snprintf(msg, sizeof(msg), "invalid: the message is %s", why);
		neg_err(c, m->subid, msg);
		buf_free(&first);
		return;
	}
	srv->neg_sessions++;
	srv->stats.negs++;
	if ((s = sub_new(c, SUB_NEG, m)) == NULL) {
		srv->neg_sessions--;
		buf_free(&first);
		neg_err(c, m->subid, "error: out of memory");
		return;
	}
	s->hooks = &neg_hooks;
	s->first = first;
	s->opened_ms = loop_now_ms(srv->loop);
	neg_storage_init(&s->items, NEG_MAX_ITEMS);
	sub_schedule(s);
}

void
neg_msg(struct client *c, struct wire_msg *m)
{
	struct sub	*s = neg_find(c, m->subid);
	struct buf	 msg;
	const char	*why;
	char		 text[RELAYD_NOTICE_MAX];

	if (s == NULL) {
		neg_err(c, m->subid, "closed: no such reconciliation");
		return;
	}
	if (s->phase != SUB_NEG_OPEN) {
		neg_err(c, m->subid, "invalid: NEG-MSG before the answer to "
		    "NEG-OPEN");
		sub_free(s);
		return;
	}
	buf_init(&msg, NEG_MAX_MSG_BYTES);
	if (relay_msg_neg_decode(m->hex, m->hex_len, NEG_MAX_MSG_BYTES, &msg,
	    &why) == -1) {
		snprintf(text, sizeof(text), "invalid: the message is %s", why);
		neg_err(c, m->subid, text);
		sub_free(s);
	} else if (!neg_answer(s, msg.data, msg.len))
		sub_free(s);
	buf_free(&msg);
}

void
neg_sweep(struct client *c, uint64_t now_ms)
{
	struct sub	*s, *next;
	char		 why[RELAYD_NOTICE_MAX];

	for (s = TAILQ_FIRST(&c->negs); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (s->phase != SUB_NEG_OPEN)
			continue;
		if (now_ms - s->opened_ms >= RELAYD_NEG_MAX_MS)
			snprintf(why, sizeof(why), "closed: open for %d s, the "
			    "most a reconciliation may take here",
			    RELAYD_NEG_MAX_MS / 1000);
		else if (now_ms - s->answered_ms >= RELAYD_NEG_IDLE_MS)
			snprintf(why, sizeof(why), "closed: no NEG-MSG for %d s",
			    RELAYD_NEG_IDLE_MS / 1000);
		else
			continue;
		neg_err(c, s->id, why);
		sub_free(s);
	}
}

void
neg_close(struct client *c, const char *subid)
{
	struct sub	*s = neg_find(c, subid);

	if (s != NULL)
		sub_free(s);
}
