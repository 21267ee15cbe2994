/*
 * drain_step.c — the author drain's steps (drain_int.h): per relay a
 * round-robin of steps over the authors whose cursor on that relay is
 * still draining, each step one REQ {"authors":[pk],"until":cursor,
 * "limit":L} whose events stream into ingest and whose EOSE moves the
 * cursor, or a NIP-77 reconciliation of the author's row where the relay
 * speaks it; and the pump that starts them within the pool's caps.
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
 * older than the cursor came" ends a relay. This file never writes a
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
#include "sync/drain_int.h"
#include "sync/follow.h"
#include "sync/ingest.h"
#include "sync/negsync.h"
#include "sync/outbox.h"
#include "sync/pager.h"
#include "sync/subs.h"
#include "sync/sweep.h"

static void	step_unlink(struct step *);

bool
drain_enabled(const struct drain *d)
{
	return config_get_bool(d->cfg, "backfill.enabled");
}

/*
 * Whether backpressure holds new steps back; each change is logged at
 * debug (retention logs the budget itself).
 */
bool
drain_is_held(struct drain *d)
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

/* backfill.pace_ms may change at run time: hand it to the pool. */
void
drain_apply_pace(struct drain *d)
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
void
drain_step_finish(struct step *s)
{
	struct drelay	*dr = s->dr;

	struct drelay	*o;
	bool		 neg = s->is_neg;

	if (s->neg != NULL)
		negsync_cancel(s->neg);
	pager_free(&s->pg);
	step_unlink(s);
	free(s);
	drain_relay_kick(dr, 0);
	/* A NIP-77 slot freed: other relays may have waited for one. */
	if (neg)
		TAILQ_FOREACH(o, &dr->d->relays, entry)
			drain_relay_kick(o, 0);
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
	drain_relay_kick(dr, 0);
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
	drain_step_finish(s);
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
	drain_step_finish(s);
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
	drain_step_finish(s);
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
		drain_step_finish(TAILQ_LAST(&dr->steps, step_list));
	if (!drain_enabled(d) || dr->nsteps >= cap || drain_is_held(d))
		return;
	drain_apply_pace(d);
	if (now < dr->paused_until_ms) {
		drain_relay_kick(dr, dr->paused_until_ms - now);
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
void
drain_relay_kick(struct drelay *dr, uint64_t delay_ms)
{
	pager_kick(&dr->pump, delay_ms);
}

struct drelay *
drain_relay_get(struct drain *d, const char *url, enum relay_role role)
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

void
drain_relay_free(struct drelay *dr)
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
