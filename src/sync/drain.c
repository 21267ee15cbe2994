/*
 * drain.c — the author drain (drain.h): its life, the cursor rows it
 * keeps in step with the followed set and their relays (one per author
 * and relay: bootstrap relays and the author's outbox relays, set aside
 * when no longer dialled, retried after no answer, reconciled again on
 * relays that speak NIP-77), and the tick that looks at every relay. The
 * steps that page or reconcile a row are drain_step.c's.
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


void
drain_set_hold(struct drain *d, drain_held_fn held, void *arg)
{
	d->held = held;
	d->held_arg = arg;
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
	if (!drain_enabled(d))
		return;
	if (loop_now_ms(l) >= d->retry_sweep_ms) {
		drain_sync(d);	/* takes up rows due a retry; kicks all */
		return;
	}
	TAILQ_FOREACH(dr, &d->relays, entry)
		drain_relay_kick(dr, 0);
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
		drain_relay_free(dr);
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
	if (drain_relay_get(c->d, ar->url, role) != NULL)
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
		dr = drain_relay_get(sc->d, c->relay, RELAY_ROLE_OUTBOX);
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

	drain_apply_pace(d);
	nboots = sync_urls_parse(config_get(d->cfg, "relays.bootstrap"),
	    &boots);
	outbox_plan_init(&plan, SYNC_OUTBOX_RELAYS_MAX, boots, nboots);
	c.plan = &plan;
	if (outbox_plan_load(&plan, d->st) == 0 &&
	    store_follows_active(d->st, &authors, &n) == 0 && n > 0) {
		for (j = 0; j < nboots; j++)
			(void)drain_relay_get(d, boots[j], RELAY_ROLE_BOOTSTRAP);
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
		drain_relay_kick(dr, 0);
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
				drain_step_finish(s);
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

	if (!drain_enabled(d))
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
