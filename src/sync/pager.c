/*
 * pager.c — one paged request on one relay (pager.h): the event
 * accounting, the resent check, EOSE to verdict to the owner's commit,
 * the timeout with its relay-down grace, and the relay pump timer.
 *
 * Hazards: a cursor written outside ingest's batch would survive a crash
 * that loses the page's events, so commit runs only after ingest_tx(); a
 * pager never frees its owner, so after a hook that may end the step
 * nothing of pg is touched again.
 */

#include <stdio.h>
#include <string.h>

#include "core/limits.h"
#include "core/loop.h"
#include "relay/pool.h"
#include "sync/follow.h"
#include "sync/ingest.h"
#include "sync/pager.h"

static const struct pool_sub_cbs pager_cbs;

void
pager_init(struct pager *pg, const struct pager_deps *d, const char *url,
    int64_t *relay_largest, const struct pager_hooks *hooks, void *arg)
{
	memset(pg, 0, sizeof(*pg));
	pg->d = *d;
	pg->url = url;
	pg->relay_largest = relay_largest;
	pg->hooks = hooks;
	pg->arg = arg;
	filter_init(&pg->f);
}

static int64_t
relay_max_limit(const struct pager *pg)
{
	struct pool_relay_info	info;

	return pool_relay_info_url(pg->d.pool, pg->url, &info) == 0 ?
	    info.max_limit : 0;
}

int64_t
pager_limit(const struct pager *pg, int64_t page_size)
{
	return drain_page_limit(page_size, relay_max_limit(pg));
}

size_t
pager_relay_cap(struct pool *pool, const char *url, int64_t cap, size_t own)
{
	struct pool_relay_info	info;
	int64_t			pcap, others;

	if (pool_relay_info_url(pool, url, &info) == 0) {
		pcap = info.max_subscriptions > 0 ? info.max_subscriptions :
		    RELAY_MAX_SUBS_DEFAULT;
		if (pcap > RELAY_MAX_SUBS_CEILING)
			pcap = RELAY_MAX_SUBS_CEILING;
		others = (int64_t)(info.subs_open + info.subs_queued) -
		    (int64_t)own;
		if (others > 0 && pcap - others < cap)
			cap = pcap - others;
	}
	return cap < 1 ? 1 : (size_t)cap;
}

static void	pager_timeout(struct loop *, void *);

int
pager_open(struct pager *pg)
{
	pg->f.until = pg->page.until;
	pg->f.limit = (uint64_t)pg->page.limit;
	pg->f.has |= FILTER_HAS_UNTIL | FILTER_HAS_LIMIT;
	drain_page_reset(&pg->page);
	pg->failed = false;
	pg->resent = 0;
	pg->lost_at_start = ingest_stats(pg->d.ing)->lost_batches;
	if ((pg->sub = pool_sub_open(pg->d.pool, pg->url, &pg->f, 1,
	    &pager_cbs, pg)) == NULL)
		return -1;
	pg->last_ms = loop_now_ms(pg->d.loop);
	pg->timer = loop_timer_add(pg->d.loop, pg->d.timeout_ms,
	    pager_timeout, pg);
	return 0;
}

void
pager_close(struct pager *pg)
{
	if (pg->sub != NULL)
		pool_sub_close(pg->sub);
	pg->sub = NULL;
	loop_timer_clear(pg->d.loop, &pg->timer);
}

void
pager_free(struct pager *pg)
{
	pager_close(pg);
	filter_free(&pg->f);
}

static void
pager_next_page(struct loop *l, void *arg)
{
	struct pager	*pg = arg;

	(void)l;
	pg->timer = 0;
	if (pager_open(pg) == -1)
		pg->hooks->fail(pg->arg, PAGER_NOT_OPENED,
		    "cannot open a request");
}

void
pager_next(struct pager *pg)
{
	pager_close(pg);
	pg->timer = loop_timer_add(pg->d.loop, 0, pager_next_page, pg);
}

/* The pool sent the REQ again (reconnect, rate limit): count afresh. */
static void
check_resent(struct pager *pg)
{
	unsigned	r = pool_sub_resent(pg->sub);

	if (r != pg->resent) {
		pg->resent = r;
		drain_page_reset(&pg->page);
		if (pg->hooks->resent != NULL)
			pg->hooks->resent(pg->arg);
	}
}

static void
on_event(struct pool_sub *sub, struct relay_msg *msg, void *arg)
{
	struct pager		*pg = arg;
	struct drain_page	*p = &pg->page;
	struct ingest_info	 info;
	enum ingest_result	 r;
	bool			 newer;

	check_resent(pg);
	pg->last_ms = loop_now_ms(pg->d.loop);
	newer = p->started && pg->hooks->newer(pg->arg, msg);
	r = ingest_event(pg->d.ing, msg, &pg->f, 1, pg->d.source, pg->url,
	    &info);
	switch (r) {
	case INGEST_NEW:
	case INGEST_DUPLICATE:
		if (pg->d.follow != NULL)
			follow_note(pg->d.follow, r, &info);
		if (!pg->hooks->match(pg->arg, &info))
			break;		/* another filter's, already stored */
		if (p->started && info.created_at > p->until)
			p->newer++;
		else
			drain_page_add(p, info.created_at, r == INGEST_NEW);
		break;
	case INGEST_INVALID:
		pool_sub_note_invalid(sub);
		break;
	case INGEST_UNREQUESTED:
		if (newer)
			p->newer++;
		else if (!info.off_time)
			pool_sub_note_unrequested(sub);
		break;
	case INGEST_ERROR:
		pg->failed = true;
		break;
	default:
		break;
	}
}

/*
 * The verdict of a whole page, then the owner's commit inside ingest's
 * open batch. Only events inside the filter prove a page size: newer ones
 * may be a hostile relay's unrequested extras (a relay ignoring until
 * shows its cap on first pages, where every event is inside).
 */
static int
page_commit(struct pager *pg)
{
	struct drain_page	*p = &pg->page;
	struct drain_verdict	 v;

	p->cap_seen = *pg->relay_largest > pg->row_largest ?
	    *pg->relay_largest : pg->row_largest;
	p->max_limit = relay_max_limit(pg);
	drain_page_verdict(p, &v);
	if (p->received > *pg->relay_largest)
		*pg->relay_largest = p->received;
	if (ingest_tx(pg->d.ing) == -1 || pg->hooks->commit(pg->arg, &v) == -1)
		return -1;
	if (p->received > pg->row_largest)
		pg->row_largest = p->received;
	return 0;
}

static void
on_eose(struct pool_sub *sub, void *arg)
{
	struct pager	*pg = arg;
	int		 rc = -1;

	(void)sub;
	check_resent(pg);
	/* A batch lost since the page began may have held its first events:
	 * the cursor must not move past them. */
	if (ingest_stats(pg->d.ing)->lost_batches != pg->lost_at_start)
		pg->failed = true;
	if (!pg->failed)
		rc = page_commit(pg);
	pg->hooks->eose(pg->arg, rc);
}

static void
on_closed(struct pool_sub *sub, enum relay_reason reason,
    const char *message, void *arg)
{
	struct pager	*pg = arg;

	(void)sub;
	(void)reason;
	pg->sub = NULL;		/* the handle dies with this callback */
	pg->hooks->fail(pg->arg, PAGER_CLOSED, message != NULL &&
	    message[0] != '\0' ? message : "request closed");
}

static void
pager_timeout(struct loop *l, void *arg)
{
	struct pager		*pg = arg;
	struct pool_relay_info	 info;
	uint64_t		 now = loop_now_ms(l), quiet = now - pg->last_ms;
	char			 why[RELAY_REASON_MAX + 32];

	pg->timer = 0;
	if (quiet < pg->d.timeout_ms) {
		pg->timer = loop_timer_add(l, pg->d.timeout_ms - quiet,
		    pager_timeout, pg);
		return;
	}
	/* A relay that is down gets the REQ again from the pool when back. */
	if (pool_relay_info_url(pg->d.pool, pg->url, &info) == 0 &&
	    info.state != RELAY_OPEN) {
		if (info.failures < DRAIN_GIVEUP_FAILURES) {
			pg->last_ms = now;
			pg->timer = loop_timer_add(l, pg->d.timeout_ms,
			    pager_timeout, pg);
			return;
		}
		snprintf(why, sizeof(why), "relay unreachable: %s",
		    info.last_error[0] ? info.last_error : info.state_name);
		pg->hooks->fail(pg->arg, PAGER_UNREACHABLE, why);
		return;
	}
	pg->hooks->fail(pg->arg, PAGER_SILENT, "no EOSE in time");
}

static const struct pool_sub_cbs pager_cbs = {
	on_event, on_eose, on_closed,
};

/* ---- the relay pump ------------------------------------------------------ */

void
pager_pump_init(struct pager_pump *pp, struct loop *loop,
    void (*run)(void *), void *arg)
{
	pp->loop = loop;
	pp->timer = 0;
	pp->run = run;
	pp->arg = arg;
}

static void
pump_timer(struct loop *l, void *arg)
{
	struct pager_pump	*pp = arg;

	(void)l;
	pp->timer = 0;
	pp->run(pp->arg);
}

void
pager_kick(struct pager_pump *pp, uint64_t delay_ms)
{
	if (pp->timer != 0)
		return;
	pp->timer = loop_timer_add(pp->loop, delay_ms, pump_timer, pp);
}

void
pager_pump_clear(struct pager_pump *pp)
{
	loop_timer_clear(pp->loop, &pp->timer);
}

bool
pager_pump_armed(const struct pager_pump *pp)
{
	return pp->timer != 0;
}
