/*
 * sub.c — subscriptions of the relay endpoint's clients: REQ (stored
 * events newest first, EOSE, what was stored meanwhile, then live),
 * COUNT, and the scheduler that runs every query in slices.
 *
 * The scheduler: a subscription with work is on the server's run queue;
 * a zero-delay loop timer runs one slice of the queue's head (at most
 * RELAYD_SLICE_ROWS rows examined, RELAYD_SLICE_EVENTS events sent) and
 * puts it back at the tail, so the loop turns between slices and every
 * client gets its turn. At most RELAYD_ACTIVE_SCANS queries hold a scan
 * at once, and at most RELAYD_CLIENT_SCANS of one client (the others wait
 * on waitq, first come first served among those whose client is under its
 * share), so one client's pile of queries cannot keep another's waiting
 * until they are all done. A slice
 * stops as soon as its client's queue passes the high-water mark; the
 * subscription then leaves the run queue until the client drains
 * (sub_resume_client). Live events are pushed from ingest's listener; a
 * client whose queue cannot take one more is cut off (send.c).
 *
 * It never frees a subscription inside a callback of its scan (a client
 * cut off there only leaves the queues; sub_free_all at the reap frees
 * it), and never runs a slice for a client that is not open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/loop.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "serve/serve_int.h"
#include "serve/wire.h"
#include "store/scan.h"
#include "sync/ingest.h"

static void	work(struct loop *, void *);

/* ---- the queues ---------------------------------------------------------- */

static void
work_arm(struct serve *srv)
{
	if (srv->work_timer == 0 && !TAILQ_EMPTY(&srv->runq))
		srv->work_timer = loop_timer_add(srv->loop, 0, work, srv);
}

static bool
runnable(const struct sub *s)
{
	return s->c->state == CLIENT_OPEN && !s->c->paused &&
	    (s->phase == SUB_WAITING || s->phase == SUB_QUERY ||
	    s->phase == SUB_CATCHUP);
}

/* Whether s waits for a scan slot it cannot have now. */
static bool
must_wait(const struct sub *s)
{
	return s->phase == SUB_WAITING && !s->holds_slot &&
	    (s->c->srv->active_scans >= RELAYD_ACTIVE_SCANS ||
	    s->c->scans >= RELAYD_CLIENT_SCANS);
}

void
sub_schedule(struct sub *s)
{
	struct serve	*srv = s->c->srv;

	if (s->queued || !runnable(s))
		return;
	if (must_wait(s)) {
		TAILQ_INSERT_TAIL(&srv->waitq, s, runq);
		s->queued = true;
		return;
	}
	TAILQ_INSERT_TAIL(&srv->runq, s, runq);
	s->queued = true;
	work_arm(srv);
}

static void
slot_give(struct sub *s)
{
	struct serve	*srv = s->c->srv;
	struct sub	*w;

	if (!s->holds_slot)
		return;
	s->holds_slot = false;
	srv->active_scans--;
	s->c->scans--;
	TAILQ_FOREACH(w, &srv->waitq, runq)
		if (!must_wait(w))
			break;
	if (w != NULL) {
		TAILQ_REMOVE(&srv->waitq, w, runq);
		w->queued = false;
		sub_schedule(w);
	}
}

void
sub_resume_client(struct client *c)
{
	struct sub	*s;

	TAILQ_FOREACH(s, &c->subs, entry)
		sub_schedule(s);
	TAILQ_FOREACH(s, &c->negs, entry)
		sub_schedule(s);
}

/* ---- life ---------------------------------------------------------------- */

static struct sub *
sub_find(struct sub_list *l, const char *id)
{
	struct sub	*s;

	TAILQ_FOREACH(s, l, entry)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

/* What a subscription for m's filters holds. */
static size_t
sub_mem(const struct filter *f, size_t n)
{
	size_t	mem = sizeof(struct sub) + n * sizeof(*f), i;

	for (i = 0; i < n; i++)
		mem += filter_mem(&f[i]);
	return mem;
}

const char *
sub_mem_refusal(struct client *c, const struct wire_msg *m, char *why,
    size_t whylen)
{
	struct serve	*srv = c->srv;
	size_t		 mem = sub_mem(m->filters, m->nfilters);

	if (c->mem + mem > RELAYD_CLIENT_MEM) {
		snprintf(why, whylen, "blocked: this connection's filters would "
		    "hold %zu KiB, over its %d KiB; close a subscription or "
		    "ask for fewer values", (c->mem + mem + 1023) / 1024,
		    RELAYD_CLIENT_MEM / 1024);
	} else if (srv->mem + mem > RELAYD_MEM_BUDGET) {
		snprintf(why, whylen, "error: the relay's memory for filters is "
		    "spent (%zu KiB held by every connection together, at most "
		    "%d KiB); try again later", (srv->mem + 1023) / 1024,
		    RELAYD_MEM_BUDGET / 1024);
	} else
		return NULL;
	srv->stats.refused_mem++;
	c->refused++;
	return why;
}

void
sub_free(struct sub *s)
{
	struct client	*c = s->c;
	size_t		 i;

	c->mem -= s->mem;
	c->srv->mem -= s->mem;
	sub_unschedule(s);
	slot_give(s);
	store_scan_free(s->scan);
	for (i = 0; i < s->nfilters; i++)
		filter_free(&s->filters[i]);
	free(s->filters);
	if (s->kind == SUB_NEG) {
		if (s->hooks != NULL)
			s->hooks->release(s);
		TAILQ_REMOVE(&c->negs, s, entry);
		c->nnegs--;
	} else {
		TAILQ_REMOVE(&c->subs, s, entry);
		c->nsubs--;
	}
	free(s);
}

void
sub_free_all(struct client *c)
{
	struct sub	*s;

	while ((s = TAILQ_FIRST(&c->subs)) != NULL)
		sub_free(s);
	while ((s = TAILQ_FIRST(&c->negs)) != NULL)
		sub_free(s);
}

struct sub *
sub_new(struct client *c, enum sub_kind kind, struct wire_msg *m)
{
	struct sub	*s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->c = c;
	s->kind = kind;
	s->phase = SUB_WAITING;
	snprintf(s->id, sizeof(s->id), "%s", m->subid);
	s->mem = sub_mem(m->filters, m->nfilters);
	c->mem += s->mem;
	c->srv->mem += s->mem;
	if (c->srv->mem > c->srv->mem_peak)
		c->srv->mem_peak = c->srv->mem;
	s->filters = m->filters;
	s->nfilters = m->nfilters;
	m->filters = NULL;
	m->nfilters = 0;
	if (kind == SUB_NEG) {
		TAILQ_INSERT_TAIL(&c->negs, s, entry);
		c->nnegs++;
	} else {
		TAILQ_INSERT_TAIL(&c->subs, s, entry);
		c->nsubs++;
	}
	return s;
}

/* A REQ or COUNT: replace one of the same id, within the limit. */
static struct sub *
sub_open(struct client *c, enum sub_kind kind, struct wire_msg *m)
{
	struct sub	*s;
	char		 why[RELAYD_NOTICE_MAX];

	if ((s = sub_find(&c->subs, m->subid)) != NULL)
		sub_free(s);
	if (c->nsubs >= RELAYD_MAX_SUBS) {
		snprintf(why, sizeof(why), "blocked: at most %d open "
		    "subscriptions per connection (NIP-11 max_subscriptions)",
		    RELAYD_MAX_SUBS);
		c->srv->stats.bad_messages++;
		client_closed(c, m->subid, why);
		return NULL;
	}
	if (sub_mem_refusal(c, m, why, sizeof(why)) != NULL) {
		client_closed(c, m->subid, why);
		return NULL;
	}
	if ((s = sub_new(c, kind, m)) == NULL) {
		client_closed(c, m->subid, "error: out of memory");
		return NULL;
	}
	sub_schedule(s);
	return s;
}

void
sub_req(struct client *c, struct wire_msg *m)
{
	if (sub_open(c, SUB_REQ, m) == NULL)
		return;
	c->reqs++;
	c->srv->stats.reqs++;
}

void
sub_count(struct client *c, struct wire_msg *m)
{
	if (sub_open(c, SUB_COUNT, m) != NULL)
		c->srv->stats.counts++;
}

void
sub_close_msg(struct client *c, const char *subid)
{
	struct sub	*s;

	if ((s = sub_find(&c->subs, subid)) != NULL)
		sub_free(s);
}

/* ---- sending events ---------------------------------------------------- */

/*
 * The start of s's EVENT messages, written once: every event of a REQ
 * then costs two copies into the frame, not a formatted id. 0 or -1.
 */
static int
event_head(struct sub *s)
{
	struct buf	*f = &s->c->srv->frame;

	buf_reset(f);
	if (wire_event_head(f, s->id) == -1 || f->len > sizeof(s->head))
		return -1;
	memcpy(s->head, f->data, f->len);
	s->headlen = f->len;
	return 0;
}

/* Send json as an EVENT of s. 0 to go on, 1 when the client is full. */
static int
send_event(struct sub *s, const char *json, size_t len, bool live)
{
	struct serve	*srv = s->c->srv;
	int		 rc;

	if (s->headlen == 0 && event_head(s) == -1)
		return 0;
	buf_reset(&srv->frame);
	if (wire_event_tail(&srv->frame, s->head, s->headlen, json, len) == -1)
		return 0;	/* larger than any frame: skipped */
	if ((rc = client_send_frame(s->c)) == -1)
		return 1;
	srv->stats.events_sent++;
	srv->stats.live_sent += live;
	s->c->events_sent++;
	return rc;
}

/* store_scan_cb of a REQ's stored events. */
static int
on_row(void *arg, const struct store_scan_row *row, const char *json,
    size_t len)
{
	struct sub	*s = arg;

	if (send_event(s, json, len, false) != 0)
		return 1;
	return ++s->sent_in_slice >= RELAYD_SLICE_EVENTS;
}

/* store_scan_cb of the catch-up: these are live events. */
static int
on_caught(void *arg, const struct store_scan_row *row, const char *json,
    size_t len)
{
	struct sub	*s = arg;

	if (send_event(s, json, len, true) != 0)
		return 1;
	return ++s->sent_in_slice >= RELAYD_SLICE_EVENTS;
}

/* store_scan_cb of a COUNT. */
static int
on_count(void *arg, const struct store_scan_row *row, const char *json,
    size_t len)
{
	((struct sub *)arg)->count++;
	return 0;
}

/* ---- slices ---------------------------------------------------------------- */

/* WAITING -> QUERY: a scan over the subscription's filters. 0 or -1. */
static int
query_start(struct sub *s)
{
	struct serve		*srv = s->c->srv;
	struct store_scan_opts	 o = { 0 };

	if (s->kind == SUB_REQ) {
		o.default_limit = RELAYD_MAX_LIMIT;
		o.max_limit = RELAYD_MAX_LIMIT;
		o.with_json = true;
	} else
		o.no_limit = true;
	if (!s->holds_slot) {
		s->holds_slot = true;
		srv->active_scans++;
		s->c->scans++;
	}
	if ((s->scan = store_scan_new(srv->st, s->filters, s->nfilters,
	    &o)) == NULL)
		return -1;
	s->phase = SUB_QUERY;
	return 0;
}

/* The query is done: EOSE and catch-up, the COUNT, or the NIP-77 set. */
static void
query_done(struct sub *s)
{
	struct serve	*srv = s->c->srv;

	s->after = store_scan_snapshot(s->scan);
	store_scan_free(s->scan);
	s->scan = NULL;
	slot_give(s);
	switch (s->kind) {
	case SUB_REQ:
		buf_reset(&srv->frame);
		if (wire_eose(&srv->frame, s->id) == 0)
			client_send_frame(s->c);
		s->phase = SUB_CATCHUP;
		break;
	case SUB_COUNT:
		buf_reset(&srv->frame);
		if (wire_count(&srv->frame, s->id, s->count) == 0)
			client_send_frame(s->c);
		s->phase = SUB_DONE;
		break;
	case SUB_NEG:
		s->hooks->queried(s);
		break;
	}
}

/* One slice of s. */
static void
slice(struct sub *s)
{
	struct serve	*srv = s->c->srv;
	store_scan_cb	 cb = s->kind == SUB_REQ ? on_row : s->kind ==
			    SUB_COUNT ? on_count : s->hooks->collect;
	int		 rc;

	s->sent_in_slice = 0;
	if (s->phase == SUB_WAITING && query_start(s) == -1)
		rc = -1;
	else if (s->phase == SUB_QUERY)
		rc = store_scan_step(s->scan, RELAYD_SLICE_ROWS, cb, s);
	else
		rc = store_scan_after(srv->st, s->filters, s->nfilters,
		    &s->after, RELAYD_SLICE_ROWS, true, on_caught, s);
	if (rc == -1) {
		if (s->kind == SUB_NEG) {
			buf_reset(&srv->frame);
			if (wire_neg_err(&srv->frame, s->id, "error: the query "
			    "failed") == 0)
				client_send_frame(s->c);
		} else
			client_closed(s->c, s->id, "error: the query failed");
		s->phase = SUB_DONE;
		return;
	}
	if (rc == 0 && s->phase == SUB_QUERY)
		query_done(s);
	else if (rc == 0 && s->phase == SUB_CATCHUP)
		s->phase = SUB_LIVE;
	else if (s->kind == SUB_NEG && s->over_cap)
		query_done(s);
}

/* The run queue's head gets one slice, then goes to the tail. */
static void
work(struct loop *l, void *arg)
{
	struct serve	*srv = arg;
	struct sub	*s;

	srv->work_timer = 0;
	if ((s = TAILQ_FIRST(&srv->runq)) == NULL)
		return;
	TAILQ_REMOVE(&srv->runq, s, runq);
	s->queued = false;
	if (must_wait(s)) {
		/* Queued while a slot was free; others took them since. */
		TAILQ_INSERT_TAIL(&srv->waitq, s, runq);
		s->queued = true;
	} else if (s->c->state == CLIENT_OPEN) {
		slice(s);
		if (s->phase == SUB_DONE)
			sub_free(s);
		else
			sub_schedule(s);
		/* A slice may leave its client one large event over its mark. */
		serve_enforce_budget(srv);
	}
	work_arm(srv);
}

/* ---- live -------------------------------------------------------------------- */

static bool
sub_matches(const struct sub *s, const struct event *ev)
{
	size_t	i;

	for (i = 0; i < s->nfilters; i++)
		if (filter_match(&s->filters[i], ev))
			return true;
	return false;
}

void
sub_on_stored(void *arg, const struct ingest_stored *st)
{
	struct serve	*srv = arg;
	struct client	*c, *next;
	struct sub	*s;

	for (c = TAILQ_FIRST(&srv->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		TAILQ_FOREACH(s, &c->subs, entry) {
			if (c->state != CLIENT_OPEN)
				break;
			if (s->phase == SUB_LIVE && sub_matches(s, st->ev))
				(void)send_event(s, st->json, st->len, true);
		}
	}
	serve_enforce_budget(srv);
}
