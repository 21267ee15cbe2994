/*
 * drain.c — the author drain: per relay a round-robin of steps over the
 * authors whose cursor on that relay is still draining, each step one
 * REQ {"authors":[pk],"until":cursor,"limit":L} whose events stream into
 * ingest and whose EOSE moves the cursor (see drain.h for the rules).
 *
 * What a step keeps of its page is counters only: events received, new
 * ids, events older than the cursor, events newer than `until`, the oldest
 * and newest second. A connection lost mid-page makes the pool send the
 * same REQ again; the step notices (pool_sub_resent) and starts counting
 * the page afresh, so the cursor moves only on a whole page.
 *
 * Hazards: a relay that lies about `until` would make a naive drain loop
 * on its newest page, or stop with "no new ids" and call the author
 * complete; a relay that caps below the asked limit would make "fewer
 * than asked" look like the end. Neither rule is used here: only "nothing
 * older than the cursor came" ends a relay. This module never writes a
 * cursor outside ingest's batch transaction when a page moved it, and
 * never frees a step inside a pool callback except after closing its
 * subscription (the pool calls nothing on a closed one).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/backoff.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/queue.h"
#include "nostr/filter.h"
#include "relay/pool.h"
#include "store/cursors.h"
#include "store/follows.h"
#include "store/store.h"
#include "sync/ctx.h"
#include "sync/drain.h"
#include "sync/follow.h"
#include "sync/ingest.h"
#include "sync/negsync.h"
#include "sync/outbox.h"
#include "sync/pager.h"
#include "sync/subs.h"
#include "sync/sweep.h"

struct drelay;

struct step {
	TAILQ_ENTRY(step)	 entry;
	struct drelay		*dr;
	struct pager		 pg;		/* the request and its page */
	uint8_t			 pk[32];
	char			 pkhex[65];
	int64_t			 stalls;
	struct negsync_step	*neg;		/* a NIP-77 step instead of a REQ */
	bool			 is_neg;	/* a NIP-77 step (neg may be gone) */
};
TAILQ_HEAD(step_list, step);

struct drelay {
	TAILQ_ENTRY(drelay)	 entry;
	struct drain		*d;
	char			*url;
	struct step_list	 steps;
	size_t			 nsteps;
	uint8_t			 after[32];	/* round-robin position */
	bool			 has_after;
	int64_t			 largest_page;	/* cap seen on this relay */
	size_t			 cap_limit;	/* after drops; 0: none */
	unsigned		 ok_pages;	/* EOSEs since the last drop */
	struct pager_pump	 pump;
	uint64_t		 paused_until_ms;
};
TAILQ_HEAD(drelay_list, drelay);

struct drain {
	struct loop		*loop;
	struct pool		*pool;
	struct ingest		*ing;
	struct store		*st;
	const struct config	*cfg;
	struct follow		*follow;
	struct negsync		*ns;		/* NIP-77 steps, or NULL */
	struct drelay_list	 relays;
	size_t			 nsteps;
	int64_t			 pace_ms;	/* last given to the pool */
	uint64_t		 tick_timer;
	uint64_t		 retry_sweep_ms; /* next look for rows due a retry */
	bool			 synced;	/* drain_sync ran at least once */
	size_t			 norelay;	/* authors without rows, logged */
	drain_held_fn		 held;		/* backpressure, or NULL */
	void			*held_arg;
	bool			 was_held;	/* logged */
};

/* What a pump keeps of a cursor row it may start. */
struct pick {
	uint8_t		pk[32];
	bool		started;
	int64_t		until;
	bool		has_gap;
	int64_t		gap_since;
	int64_t		largest;
	int64_t		stalls;
};

struct picks {
	struct drelay	*dr;
	struct pick	*v;
	size_t		 n, max;
};

static void	drelay_kick(struct drelay *, uint64_t delay_ms);
static void	step_unlink(struct step *);

static bool
enabled(const struct drain *d)
{
	return config_get_bool(d->cfg, "backfill.enabled");
}

/*
 * Whether backpressure holds new steps back; each change is logged at
 * debug (retention logs the budget itself).
 */
static bool
drain_held(struct drain *d)
{
	bool	held = d->held != NULL && d->held(d->held_arg);

	if (held != d->was_held) {
		d->was_held = held;
		if (held)
			log_debug("drain: paused while the store is over "
			    "store.max_bytes");
		else
			log_debug("drain: resumed: the store is within "
			    "store.max_bytes");
	}
	return held;
}

void
drain_set_hold(struct drain *d, drain_held_fn held, void *arg)
{
	d->held = held;
	d->held_arg = arg;
}

/* backfill.pace_ms may change at run time: hand it to the pool. */
static void
apply_pace(struct drain *d)
{
	int64_t	pace = config_get_int(d->cfg, "backfill.pace_ms");

	if (pace != d->pace_ms) {
		d->pace_ms = pace;
		pool_set_pace(d->pool, (uint32_t)pace);
	}
}

static struct step *
step_find(struct drelay *dr, const uint8_t pk[32])
{
	struct step	*s;

	TAILQ_FOREACH(s, &dr->steps, entry)
		if (memcmp(s->pk, pk, 32) == 0)
			return s;
	return NULL;
}

/* Close the request (if still open) and forget the step. */
static void
step_finish(struct step *s)
{
	struct drelay	*dr = s->dr;

	struct drelay	*o;
	bool		 neg = s->is_neg;

	if (s->neg != NULL)
		negsync_cancel(s->neg);
	pager_free(&s->pg);
	step_unlink(s);
	free(s);
	drelay_kick(dr, 0);
	/* A NIP-77 slot freed: other relays may have waited for one. */
	if (neg)
		TAILQ_FOREACH(o, &dr->d->relays, entry)
			drelay_kick(o, 0);
}

/*
 * The connection dropped mid-page: every open step of the relay is sent
 * again at once, and a relay that drops under load would drop them all
 * again. Go down to one step at a time; DRAIN_RECOVER_PAGES clean pages
 * in a row double the allowance back.
 */
static void
drelay_shed(struct drelay *dr)
{
	dr->ok_pages = 0;
	if (dr->cap_limit == 1)
		return;
	dr->cap_limit = 1;
	log_info("drain: %s lost pages in flight; one request at a time for "
	    "now", dr->url);
	drelay_kick(dr, 0);
}

static void
drelay_page_ok(struct drelay *dr)
{
	int64_t	cap = config_get_int(dr->d->cfg, "backfill.max_subs_per_relay");

	if (dr->cap_limit == 0 || ++dr->ok_pages < DRAIN_RECOVER_PAGES)
		return;
	dr->ok_pages = 0;
	dr->cap_limit *= 2;
	if ((int64_t)dr->cap_limit >= cap)
		dr->cap_limit = 0;
}

/* The pool sent the REQ again (reconnect, rate limit): shed load. */
static void
step_resent(void *arg)
{
	struct step	*s = arg;

	drelay_shed(s->dr);
}

static bool
step_match(void *arg, const struct ingest_info *info)
{
	const struct step	*s = arg;

	return memcmp(info->pubkey, s->pk, 32) == 0;
}

/*
 * An event ingest refused as unrequested: if it is the asked author's and
 * newer than until, the relay did not honour until. Read from the raw
 * object before ingest may take it.
 */
static bool
step_newer(void *arg, const struct relay_msg *msg)
{
	const struct step	*s = arg;
	const cJSON		*pk, *ca;

	if (msg->event == NULL)
		return false;
	pk = cJSON_GetObjectItemCaseSensitive(msg->event, "pubkey");
	ca = cJSON_GetObjectItemCaseSensitive(msg->event, "created_at");
	return cJSON_IsString(pk) && strcmp(pk->valuestring, s->pkhex) == 0 &&
	    cJSON_IsNumber(ca) && ca->valuedouble > (double)s->pg.page.until;
}

/* Log what a verdict says about the relay's behaviour. */
static void
verdict_log(const struct step *s, const struct drain_verdict *v)
{
	const struct drain_page	*p = &s->pg.page;

	if (v->ignores_until)
		log_info("drain: %s ignores until (author %.16s, %lld newer "
		    "than %lld of %lld): %s", s->dr->url, s->pkhex,
		    (long long)p->newer, (long long)p->until,
		    (long long)(p->received + p->newer),
		    v->next == DRAIN_NEXT_COMPLETE ? "all sent, below the "
		    "relay's proven cap" : "recorded incomplete");
	else if (v->gap)
		log_info("drain: %s: %lld events of author %.16s in second "
		    "%lld fill a page: stepping past it", s->dr->url,
		    (long long)p->received, s->pkhex, (long long)p->oldest);
}

/*
 * EOSE of a whole page (inside ingest's open batch, with the page's
 * events): the cursor row goes where the verdict says. 0 or -1.
 */
static int
step_commit(void *arg, struct drain_verdict *v)
{
	struct step		*s = arg;
	struct drelay		*dr = s->dr;
	struct store		*st = dr->d->st;
	const struct drain_page	*p = &s->pg.page;
	int64_t			 now = clock_wall_s();

	verdict_log(s, v);
	if (store_cursor_page(st, s->pk, dr->url, v->until, p->received,
	    p->fresh, now) == -1)
		return -1;
	switch (v->next) {
	case DRAIN_NEXT_COMPLETE:
		return store_cursor_complete(st, s->pk, dr->url, now);
	case DRAIN_NEXT_INCOMPLETE:
		return store_cursor_incomplete(st, s->pk, dr->url, v->why,
		    NULL, v->gap_since, now);
	default:
		return v->gap ? store_cursor_gap(st, s->pk, dr->url,
		    v->gap_since, now) : 0;
	}
}

/* One page a step: whether it was recorded or not, the step ends. */
static void
step_eose(void *arg, int committed)
{
	struct step	*s = arg;

	if (committed == -1) {
		log_warnx("drain: %s: page of author %.16s not recorded; it "
		    "will be asked again", s->dr->url, s->pkhex);
		s->dr->paused_until_ms = loop_now_ms(s->dr->d->loop) +
		    DRAIN_RETRY_MS;
	} else {
		drelay_page_ok(s->dr);
		/* A counter for the status only; a failed add is logged. */
		if (s->pg.page.fresh > 0)
			(void)store_follow_add_fetched(s->dr->d->st, s->pk,
			    s->pg.page.fresh);
	}
	step_finish(s);
}

/*
 * The request ended without EOSE: count a stall; after DRAIN_MAX_STALLS
 * in a row the relay is recorded incomplete for this author with why.
 */
static void
step_stall(struct step *s, const char *why)
{
	struct drelay	*dr = s->dr;
	struct store	*st = dr->d->st;
	int64_t		 now = clock_wall_s();

	/* A stall the store missed (logged) only delays the record below. */
	(void)store_cursor_stall(st, s->pk, dr->url, now);
	dr->paused_until_ms = loop_now_ms(dr->d->loop) + DRAIN_RETRY_MS;
	if (s->stalls + 1 < DRAIN_MAX_STALLS)
		return;
	log_info("drain: %s: author %.16s recorded incomplete: %s: %s",
	    dr->url, s->pkhex, store_cursor_why_text(STORE_CURSOR_WHY_NOANSWER),
	    why);
	/*
	 * A gap found earlier stays recorded for when the row is retried. A
	 * failed write (logged) leaves the row draining: it is asked again.
	 */
	(void)store_cursor_incomplete(st, s->pk, dr->url,
	    STORE_CURSOR_WHY_NOANSWER, why,
	    s->pg.page.has_gap ? s->pg.page.gap_since : -1, now);
}

/* Closed, silent, or its relay down past the grace: a stall. */
static void
step_fail(void *arg, enum pager_fail how, const char *why)
{
	struct step	*s = arg;

	step_stall(s, how == PAGER_UNREACHABLE ? "no EOSE in time" : why);
	step_finish(s);
}

static const struct pager_hooks step_hooks = {
	.match = step_match,
	.newer = step_newer,
	.commit = step_commit,
	.eose = step_eose,
	.fail = step_fail,
	.resent = step_resent,
};

static struct step *
step_new(struct drelay *dr, const struct pick *p)
{
	struct drain		*d = dr->d;
	struct step		*s;
	struct pager_deps	 deps = {
		.loop = d->loop, .pool = d->pool, .ing = d->ing,
		.follow = d->follow, .source = INGEST_BACKFILL,
		.timeout_ms = DRAIN_STEP_TIMEOUT_MS,
	};

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->dr = dr;
	memcpy(s->pk, p->pk, 32);
	hex_encode(s->pk, 32, s->pkhex, sizeof(s->pkhex));
	s->stalls = p->stalls;
	pager_init(&s->pg, &deps, dr->url, &dr->largest_page, &step_hooks, s);
	return s;
}

static void
step_link(struct step *s)
{
	TAILQ_INSERT_TAIL(&s->dr->steps, s, entry);
	s->dr->nsteps++;
	s->dr->d->nsteps++;
}

static void
step_unlink(struct step *s)
{
	TAILQ_REMOVE(&s->dr->steps, s, entry);
	s->dr->nsteps--;
	s->dr->d->nsteps--;
}

/*
 * A NIP-77 step ended (negsync.h): record what it means for the row, in
 * ingest's batch with the events it fetched.
 */
static void
step_neg_done(void *arg, enum negsync_end end, const char *why)
{
	struct step	*s = arg;
	struct drelay	*dr = s->dr;
	struct store	*st = dr->d->st;
	int64_t		 now = clock_wall_s();

	s->neg = NULL;		/* gone with this call */
	/* A row the store did not take (logged) stays draining: asked again. */
	switch (end) {
	case NEGSYNC_COMPLETE:
		if (ingest_tx(dr->d->ing) == 0)
			(void)store_cursor_complete(st, s->pk, dr->url, now);
		break;
	case NEGSYNC_RECOVERING:
	case NEGSYNC_DENSE:
		if (ingest_tx(dr->d->ing) == 0)
			(void)store_cursor_incomplete(st, s->pk, dr->url,
			    end == NEGSYNC_DENSE ? STORE_CURSOR_WHY_DENSE :
			    STORE_CURSOR_WHY_RECOVERY, NULL, -1, now);
		break;
	case NEGSYNC_FAILED:
		step_stall(s, why != NULL ? why : "negentropy failed");
		break;
	case NEGSYNC_REFUSED:
		break;		/* the row is paged from now on */
	}
	step_finish(s);
}

/* A NIP-77 step for p's row. 0 started, 1 not now (slots or author busy). */
static int
step_start_neg(struct drelay *dr, const struct pick *p)
{
	struct drain	*d = dr->d;
	struct step	*s;

	if (!negsync_can_start(d->ns, p->pk, dr->url) ||
	    (s = step_new(dr, p)) == NULL)
		return 1;
	s->is_neg = true;
	step_link(s);
	if ((s->neg = negsync_start(d->ns, p->pk, dr->url, step_neg_done,
	    s)) == NULL) {
		step_unlink(s);
		pager_free(&s->pg);
		free(s);
		return 1;
	}
	log_debug("drain: %s: reconciling %.16s (NIP-77)", dr->url, s->pkhex);
	return 0;
}

/* Start the row of p: reconciled where the relay speaks NIP-77, else paged. */
static int
step_start(struct drelay *dr, const struct pick *p)
{
	struct drain		*d = dr->d;
	struct step		*s;
	struct drain_page	*pg;

	if (d->ns != NULL && negsync_wanted(d->ns, dr->url))
		return step_start_neg(dr, p);
	if ((s = step_new(dr, p)) == NULL)
		return -1;
	pg = &s->pg.page;
	pg->started = p->started;
	pg->until = p->started ? p->until : clock_wall_s();
	pg->has_gap = p->has_gap;
	pg->gap_since = p->gap_since;
	pg->limit = pager_limit(&s->pg, config_get_int(d->cfg,
	    "backfill.page_size"));
	s->pg.row_largest = p->largest;
	if (sync_filter_authors(&s->pg.f, (const uint8_t (*)[32])s->pk, 1,
	    NULL, 0, sweep_author_floor(d->st, s->pk)) == -1 ||
	    pager_open(&s->pg) == -1) {
		pager_free(&s->pg);
		free(s);
		return -1;
	}
	log_debug("drain: %s: step %s for %.16s until %lld", dr->url,
	    pool_sub_id(s->pg.sub), s->pkhex, (long long)pg->until);
	step_link(s);
	return 0;
}

static int
pick_cb(const struct store_cursor *c, void *arg)
{
	struct picks	*pk = arg;
	struct pick	*p;
	size_t		 i;

	if (step_find(pk->dr, c->pubkey) != NULL)
		return 0;
	for (i = 0; i < pk->n; i++)
		if (memcmp(pk->v[i].pk, c->pubkey, 32) == 0)
			return 0;
	p = &pk->v[pk->n++];
	memcpy(p->pk, c->pubkey, 32);
	p->started = c->started;
	p->until = c->until_cursor;
	p->has_gap = c->has_gap;
	p->gap_since = c->gap_since;
	p->largest = c->largest_page;
	p->stalls = c->stalls;
	if (c->largest_page > pk->dr->largest_page)
		pk->dr->largest_page = c->largest_page;
	return pk->n >= pk->max ? 1 : 0;
}

/*
 * How many steps this relay may have open: backfill.max_subs_per_relay,
 * less when the pool's cap is taken by other subscriptions; at least 1.
 */
static size_t
drelay_cap(const struct drelay *dr)
{
	int64_t	cap;

	cap = config_get_int(dr->d->cfg, "backfill.max_subs_per_relay");
	if (dr->cap_limit > 0 && (int64_t)dr->cap_limit < cap)
		cap = (int64_t)dr->cap_limit;
	return pager_relay_cap(dr->d->pool, dr->url, cap, dr->nsteps);
}

/* Start steps for the next authors of this relay, round-robin. */
static void
drelay_pump(struct drelay *dr)
{
	struct drain	*d = dr->d;
	struct picks	 pk = { .dr = dr };
	size_t		 cap = drelay_cap(dr), want, i;
	int		 rc;
	uint64_t	 now = loop_now_ms(d->loop);

	/* Over the allowance after a drop: the newest steps go (no EOSE, so
	 * their cursors did not move) and are picked again later. */
	while (dr->nsteps > cap)
		step_finish(TAILQ_LAST(&dr->steps, step_list));
	if (!enabled(d) || dr->nsteps >= cap || drain_held(d))
		return;
	apply_pace(d);
	if (now < dr->paused_until_ms) {
		drelay_kick(dr, dr->paused_until_ms - now);
		return;
	}
	want = cap - dr->nsteps;
	if ((pk.v = calloc(want, sizeof(*pk.v))) == NULL)
		return;
	pk.max = want;
	/* A failed read (logged) picks fewer; drain_tick looks again. */
	(void)store_cursors_draining(d->st, dr->url, dr->has_after ?
	    dr->after : NULL, want + dr->nsteps, pick_cb, &pk);
	if (pk.n < want && dr->has_after)
		(void)store_cursors_draining(d->st, dr->url, NULL,
		    want + dr->nsteps, pick_cb, &pk);
	for (i = 0; i < pk.n; i++) {
		if ((rc = step_start(dr, &pk.v[i])) == -1) {
			log_warnx("drain: %s: cannot open a request",
			    dr->url);
			break;
		}
		if (rc == 1)
			break;		/* no NIP-77 slot: wait for one */
		memcpy(dr->after, pk.v[i].pk, 32);
		dr->has_after = true;
	}
	free(pk.v);
}

static void
drelay_pump_run(void *arg)
{
	drelay_pump(arg);
}

/* Pump from the loop (never inside a pool callback). */
static void
drelay_kick(struct drelay *dr, uint64_t delay_ms)
{
	pager_kick(&dr->pump, delay_ms);
}

static struct drelay *
drelay_get(struct drain *d, const char *url, enum relay_role role)
{
	struct drelay	*dr;

	TAILQ_FOREACH(dr, &d->relays, entry)
		if (strcmp(dr->url, url) == 0)
			return dr;
	if (pool_relay_find(d->pool, url) == NULL &&
	    pool_relay_add(d->pool, url, role) == NULL)
		return NULL;
	if ((dr = calloc(1, sizeof(*dr))) == NULL ||
	    (dr->url = strdup(url)) == NULL) {
		free(dr);
		return NULL;
	}
	dr->d = d;
	TAILQ_INIT(&dr->steps);
	pager_pump_init(&dr->pump, d->loop, drelay_pump_run, dr);
	TAILQ_INSERT_TAIL(&d->relays, dr, entry);
	return dr;
}

static void
drelay_free(struct drelay *dr)
{
	struct step	*s;

	while ((s = TAILQ_FIRST(&dr->steps)) != NULL) {
		if (s->neg != NULL)
			negsync_cancel(s->neg);
		pager_free(&s->pg);
		TAILQ_REMOVE(&dr->steps, s, entry);
		free(s);
	}
	pager_pump_clear(&dr->pump);
	free(dr->url);
	free(dr);
}

/*
 * Every DRAIN_TICK_MS each relay is looked at again, so work that appears
 * without a kick (backfill.enabled turned on, a pause that ended while
 * nothing else happened) is taken up; every DRAIN_RETRY_SWEEP_MS the
 * cursor rows are synced again, which reopens rows due a retry.
 */
static void
drain_tick(struct loop *l, void *arg)
{
	struct drain	*d = arg;
	struct drelay	*dr;

	d->tick_timer = loop_timer_add(l, DRAIN_TICK_MS, drain_tick, d);
	if (!enabled(d))
		return;
	if (loop_now_ms(l) >= d->retry_sweep_ms) {
		drain_sync(d);	/* takes up rows due a retry; kicks all */
		return;
	}
	TAILQ_FOREACH(dr, &d->relays, entry)
		drelay_kick(dr, 0);
}

struct drain *
drain_new(const struct sync_ctx *cx)
{
	struct drain	*d;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->loop = cx->loop;
	d->pool = cx->pool;
	d->ing = cx->ing;
	d->st = cx->st;
	d->cfg = cx->cfg;
	d->follow = cx->follow;
	d->pace_ms = -1;
	d->retry_sweep_ms = loop_now_ms(cx->loop) + DRAIN_RETRY_SWEEP_MS;
	TAILQ_INIT(&d->relays);
	d->tick_timer = loop_timer_add(cx->loop, DRAIN_TICK_MS, drain_tick, d);
	return d;
}

void
drain_free(struct drain *d)
{
	struct drelay	*dr;

	if (d == NULL)
		return;
	loop_timer_clear(d->loop, &d->tick_timer);
	while ((dr = TAILQ_FIRST(&d->relays)) != NULL) {
		TAILQ_REMOVE(&d->relays, dr, entry);
		drelay_free(dr);
	}
	free(d);
}

struct sync_walk {
	struct drain			*d;
	const struct outbox_plan	*plan;
	int64_t				 now;
	size_t				 rows;		/* of the author at hand */
};

static int
sync_write_relay(const uint8_t pubkey[32], const struct store_author_relay *ar,
    void *arg)
{
	struct sync_walk	*c = arg;
	enum relay_role	 role = outbox_is_bootstrap(c->plan, ar->url) ?
			    RELAY_ROLE_BOOTSTRAP : RELAY_ROLE_OUTBOX;

	/* A row not made (logged) is made by the next drain_sync. */
	if (drelay_get(c->d, ar->url, role) != NULL)
		(void)store_cursor_ensure(c->d->st, pubkey, ar->url, c->now);
	return 0;
}

static struct drelay *
drelay_find(struct drain *d, const char *url)
{
	struct drelay	*dr;

	TAILQ_FOREACH(dr, &d->relays, entry)
		if (strcmp(dr->url, url) == 0)
			return dr;
	return NULL;
}

/*
 * Seconds a row recorded "no answer" waits before its relay is asked
 * again: DRAIN_NOANSWER_RETRY_S after the first record, doubled for each
 * one before it (every record took DRAIN_MAX_STALLS stalls, and the row's
 * lifetime stall count survives restarts), at most
 * DRAIN_NOANSWER_RETRY_MAX_S. A relay that is gone for good is then asked
 * once a day, not every hour.
 */
static int64_t
row_retry_delay(const struct store_cursor *c)
{
	int64_t	records = c->stalls_total / DRAIN_MAX_STALLS;

	return (int64_t)backoff_ms(DRAIN_NOANSWER_RETRY_S,
	    records > 1 ? (uint32_t)(records - 1) : 0,
	    DRAIN_NOANSWER_RETRY_MAX_S);
}

/*
 * Whether an incomplete row is due another try: a relay that gave no
 * answer is asked again row_retry_delay() after it was recorded (wall
 * seconds: the record must outlive a restart); a row set aside by the
 * outbox limits as soon as its relay is dialled again.
 */
static bool
row_retry_due(const struct store_cursor *c, bool allowed, int64_t now)
{
	if (c->state != STORE_CURSOR_INCOMPLETE || !allowed)
		return false;
	if (c->why == STORE_CURSOR_WHY_UNUSED)
		return true;
	return c->why == STORE_CURSOR_WHY_NOANSWER &&
	    now - c->updated_at >= row_retry_delay(c);
}

/*
 * Whether negentropy should look at a finished row again: a burst over
 * the relay's cap or a relay ignoring until (paging cannot close those,
 * NIP-77 can) on a relay not known to refuse it; or a complete row on a
 * relay that reconciles, negentropy.resync_s after it was finished (gaps
 * opened while the box was off).
 */
static bool
row_reconcile_due(const struct drain *d, const struct store_cursor *c,
    bool allowed, int64_t now)
{
	if (d->ns == NULL || !allowed || !negsync_wanted(d->ns, c->relay))
		return false;
	if (c->state == STORE_CURSOR_INCOMPLETE)
		return c->why == STORE_CURSOR_WHY_BURST ||
		    c->why == STORE_CURSOR_WHY_UNTIL;
	return c->state == STORE_CURSOR_COMPLETE &&
	    negsync_support(d->ns, c->relay) == NEGSYNC_YES &&
	    now - c->updated_at >= config_get_int(d->cfg,
	    "negentropy.resync_s");
}

/*
 * Every row of an author: one on a relay the outbox plan no longer dials
 * is set aside (incomplete, STORE_CURSOR_WHY_UNUSED, gap kept); one due a
 * retry drains again from its cursor; one still draining on a relay the
 * author no longer lists keeps going. Every row also tells its relay the
 * largest page it returned, so the cap a relay has proven survives a
 * restart (see page_all_sent).
 */
static int
sync_old_row(const struct store_cursor *c, void *arg)
{
	struct sync_walk	*sc = arg;
	struct drelay	*dr = drelay_find(sc->d, c->relay);
	bool		 allowed = outbox_allowed(sc->plan, c->relay);
	bool		 draining = c->state == STORE_CURSOR_DRAINING;

	sc->rows++;
	if (draining && !allowed) {
		log_info("drain: %s: author row set aside: %s", c->relay,
		    store_cursor_why_text(STORE_CURSOR_WHY_UNUSED));
		/* Not taken (logged): the next drain_sync sets it aside. */
		(void)store_cursor_incomplete(sc->d->st, c->pubkey, c->relay,
		    STORE_CURSOR_WHY_UNUSED, NULL,
		    c->has_gap ? c->gap_since : -1, sc->now);
		return 0;
	}
	if ((row_retry_due(c, allowed, sc->now) ||
	    row_reconcile_due(sc->d, c, allowed, sc->now)) &&
	    store_cursor_retry(sc->d->st, c->pubkey, c->relay, sc->now) == 0) {
		log_info("drain: %s: retrying an author (was: %s)", c->relay,
		    c->reason);
		draining = true;
	}
	if (dr == NULL && draining)
		dr = drelay_get(sc->d, c->relay, RELAY_ROLE_OUTBOX);
	if (dr != NULL && c->largest_page > dr->largest_page)
		dr->largest_page = c->largest_page;
	return 0;
}

/*
 * An author left without any cursor row by a sync has no relay to be
 * asked on: the store counts it incomplete (STORE_CURSOR_REASON_NORELAY).
 * Say so when their number changes.
 */
static void
sync_log_norelay(struct drain *d, size_t norelay, const uint8_t *first)
{
	char	hex[65];

	if (norelay > 0 && norelay != d->norelay) {
		hex_encode(first, 32, hex, sizeof(hex));
		log_info("drain: %zu followed author%s (first %.16s) counted "
		    "incomplete: %s", norelay, norelay == 1 ? "" : "s", hex,
		    STORE_CURSOR_REASON_NORELAY);
	}
	d->norelay = norelay;
}

void
drain_sync(void *arg)
{
	struct drain		*d = arg;
	struct sync_walk		 c = { .d = d, .now = clock_wall_s() };
	struct outbox_plan	 plan;
	struct drelay		*dr;
	uint8_t			 (*authors)[32] = NULL;
	char			**boots;
	size_t			 n = 0, nboots, i, j, norelay = 0, first = 0;

	apply_pace(d);
	nboots = sync_urls_parse(config_get(d->cfg, "relays.bootstrap"),
	    &boots);
	outbox_plan_init(&plan, SYNC_OUTBOX_RELAYS_MAX, boots, nboots);
	c.plan = &plan;
	if (outbox_plan_load(&plan, d->st) == 0 &&
	    store_follows_active(d->st, &authors, &n) == 0 && n > 0) {
		for (j = 0; j < nboots; j++)
			(void)drelay_get(d, boots[j], RELAY_ROLE_BOOTSTRAP);
		/*
		 * A few authors a transaction: inside ingest's open batch each
		 * one is a savepoint, whose journal of the pages it touched is
		 * kept in memory until it ends (5,000 authors on 20 relays:
		 * 1.7 MB held at once).
		 */
		for (i = 0; i < n; i++) {
			if (i % DRAIN_SYNC_CHUNK == 0 && store_begin(d->st) == -1)
				break;
			/* Rows not made (logged): the next drain_sync. */
			for (j = 0; j < nboots; j++)
				(void)store_cursor_ensure(d->st, authors[i],
				    boots[j], c.now);
			(void)outbox_author_each(&plan, d->st, authors[i],
			    sync_write_relay, &c);
			c.rows = 0;
			/* Unread rows (logged) are not "without a relay". */
			if (store_cursors_each(d->st, authors[i], sync_old_row,
			    &c) == 0 && c.rows == 0 && norelay++ == 0)
				first = i;
			if ((i + 1 == n || (i + 1) % DRAIN_SYNC_CHUNK == 0) &&
			    store_commit(d->st) == -1)
				break;
		}
		if (i < n)
			log_warnx("drain: cursor rows of %zu authors not "
			    "recorded", n - i);
		else
			sync_log_norelay(d, norelay, authors[first]);
	}
	d->synced = true;
	d->retry_sweep_ms = loop_now_ms(d->loop) + DRAIN_RETRY_SWEEP_MS;
	free(authors);
	outbox_plan_free(&plan);
	sync_urls_free(boots, nboots);
	TAILQ_FOREACH(dr, &d->relays, entry)
		drelay_kick(dr, 0);
}

int64_t
drain_reset(struct drain *d, const uint8_t *pubkey)
{
	struct drelay	*dr;
	struct step	*s, *sn;
	int64_t		 n;

	TAILQ_FOREACH(dr, &d->relays, entry) {
		for (s = TAILQ_FIRST(&dr->steps); s != NULL; s = sn) {
			sn = TAILQ_NEXT(s, entry);
			if (pubkey == NULL || memcmp(s->pk, pubkey, 32) == 0)
				step_finish(s);
		}
		dr->has_after = false;
	}
	n = store_cursors_reset(d->st, pubkey, clock_wall_s());
	drain_sync(d);
	return n;
}

size_t
drain_in_flight(const struct drain *d)
{
	return d->nsteps;
}

bool
drain_idle(struct drain *d)
{
	struct drelay	*dr;

	if (!enabled(d))
		return true;
	if (d->nsteps > 0 || !d->synced)
		return false;
	TAILQ_FOREACH(dr, &d->relays, entry)
		if (pager_pump_armed(&dr->pump))
			return false;
	return store_cursors_any_draining(d->st) == 0;
}

void
drain_set_negsync(struct drain *d, struct negsync *ns)
{
	d->ns = ns;
}
