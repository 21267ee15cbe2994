/*
 * sweep.c — the rules' steps on the loop (sweep.h): two timers, one for
 * expirations (armed at the next one the store holds) and one for the
 * bounded work that comes in rounds (a vanished author's purge, the
 * conversion of an older store to the rules, then of its rows to the
 * packed form, store/rowjson.c). Which events go is the store's rules'
 * (store/rules.c); nothing here decides it.
 *
 * A step runs inside ingest's batch (opened for it when none is), never
 * inside another transaction: with another level open it waits
 * SWEEP_BUSY_MS. A store error is logged at a bounded rate and the step
 * is tried again after SWEEP_RETRY_MS; the daemon never stops for it.
 */
#include <stdlib.h>

#include "core/clock.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "nostr/event.h"
#include "store/events.h"
#include "store/rules.h"
#include "store/store.h"
#include "store/withdrawn.h"
#include "sync/ingest.h"
#include "sync/sweep.h"

struct sweep {
	struct loop		*loop;
	struct store		*st;
	struct ingest		*ing;
	uint64_t		 expire_timer;
	int64_t			 expire_at;	/* wall s the timer is for; -1 none */
	uint64_t		 work_timer;
	struct sweep_stats	 stats;
	struct log_rl		 rl;
};

static void	expire_tick(struct loop *, void *);
static void	work_tick(struct loop *, void *);

/* Ingest's batch is open for a step (or no ingest). 0, or -1 to wait. */
static int
tx_ready(struct sweep *sw)
{
	if (sw->ing != NULL && store_tx_depth(sw->st) == 0 &&
	    ingest_tx(sw->ing) == -1)
		return -1;
	if (store_tx_depth(sw->st) == 0 || (store_tx_depth(sw->st) == 1 &&
	    sw->ing != NULL && ingest_tx_open(sw->ing)))
		return 0;
	return -1;
}

/* Arm the expiry timer for wall second at (< 0: none). */
static void
expire_arm(struct sweep *sw, int64_t at)
{
	int64_t		now = clock_wall_s();
	uint64_t	delay;

	loop_timer_clear(sw->loop, &sw->expire_timer);
	sw->expire_at = at;
	if (at < 0)
		return;
	delay = at <= now ? 0 : (uint64_t)(at - now) * 1000;
	if (delay > SWEEP_EXPIRE_MAX_WAIT_MS)
		delay = SWEEP_EXPIRE_MAX_WAIT_MS;
	sw->expire_timer = loop_timer_add(sw->loop, delay, expire_tick, sw);
}

static void
expire_tick(struct loop *loop, void *arg)
{
	struct sweep	*sw = arg;
	int64_t		 n, next;

	(void)loop;
	sw->expire_timer = 0;
	if (tx_ready(sw) == -1) {
		sw->expire_timer = loop_timer_add(sw->loop, SWEEP_BUSY_MS,
		    expire_tick, sw);
		return;
	}
	n = store_rules_expire_step(sw->st, clock_wall_s(), SWEEP_STEP_ROWS,
	    &next);
	if (n == -1) {
		log_rl(&sw->rl, LOG_LEVEL_WARN, "sweep: removing expired events "
		    "failed; trying again in %d ms", SWEEP_RETRY_MS);
		sw->expire_at = -1;
		sw->expire_timer = loop_timer_add(sw->loop, SWEEP_RETRY_MS,
		    expire_tick, sw);
		return;
	}
	sw->stats.expired += (uint64_t)n;
	if (n > 0)
		log_debug("sweep: %lld expired events removed", (long long)n);
	/* A full step may have left more that are due: go on at once. */
	expire_arm(sw, n == SWEEP_STEP_ROWS ? clock_wall_s() : next);
}

static void
work_schedule(struct sweep *sw, uint64_t delay_ms)
{
	loop_timer_clear(sw->loop, &sw->work_timer);
	sw->work_timer = loop_timer_add(sw->loop, delay_ms, work_tick, sw);
}

/* One step of packing an older store's rows. 1 more to do, 0, -1. */
static int
pack_step(struct sweep *sw)
{
	int64_t	left;
	int	rc;

	if ((rc = store_pack_step(sw->st, SWEEP_PACK_ROWS, &left)) == 1 &&
	    left % (SWEEP_PACK_ROWS * 100) < SWEEP_PACK_ROWS)
		log_info("sweep: packing the store's older rows: %lld left",
		    (long long)left);
	if (rc == 0 && sw->stats.pack_left != 0)
		log_info("sweep: every stored row is packed");
	if (rc >= 0)
		sw->stats.pack_left = left;
	return rc;
}

/*
 * One step of the conversion to the rules, else of packing rows, else
 * of a purge. 1 more to do, 0, -1.
 */
static int
work_step(struct sweep *sw)
{
	int64_t	left, removed;
	int	rc;

	if ((rc = store_rules_fill_step(sw->st, SWEEP_STEP_ROWS, &left)) != 0) {
		sw->stats.fill_left = rc == 1 ? left : sw->stats.fill_left;
		if (rc == 1 && left % (SWEEP_STEP_ROWS * 100) < SWEEP_STEP_ROWS)
			log_info("sweep: bringing the store to the authors' "
			    "rules: %lld events left", (long long)left);
		return rc;
	}
	if (sw->stats.fill_left != 0)
		log_info("sweep: the store follows the authors' rules");
	sw->stats.fill_left = 0;
	if ((rc = pack_step(sw)) != 0)
		return rc;
	rc = store_rules_vanish_step(sw->st, SWEEP_STEP_ROWS, &removed);
	if (rc >= 0)
		sw->stats.vanished += (uint64_t)removed;
	sw->stats.vanish_pending = store_vanished_pending(sw->st);
	return rc;
}

static void
work_tick(struct loop *loop, void *arg)
{
	struct sweep	*sw = arg;
	int		 rc;

	(void)loop;
	sw->work_timer = 0;
	if (tx_ready(sw) == -1) {
		work_schedule(sw, SWEEP_BUSY_MS);
		return;
	}
	if ((rc = work_step(sw)) == -1) {
		log_rl(&sw->rl, LOG_LEVEL_WARN, "sweep: a step failed; trying "
		    "again in %d ms", SWEEP_RETRY_MS);
		work_schedule(sw, SWEEP_RETRY_MS);
	} else if (rc == 1)
		work_schedule(sw, SWEEP_GAP_MS);
	else {
		/* The conversion may have noted expirations. */
		if (sw->expire_at < 0 && sw->expire_timer == 0)
			expire_arm(sw, clock_wall_s());
		work_schedule(sw, SWEEP_IDLE_MS);
	}
}

/* Ingest's listener: an event that expires sooner than the timer. */
static void
on_stored(void *arg, const struct ingest_stored *s)
{
	struct sweep	*sw = arg;
	int64_t		 at;

	if (event_expiration(s->ev->tags, &at) &&
	    (sw->expire_at < 0 || at < sw->expire_at))
		expire_arm(sw, at);
	if (s->ev->kind == 62)
		sweep_kick(sw);
}

struct sweep *
sweep_new(struct loop *loop, struct store *st, struct ingest *ing)
{
	struct sweep	*sw;

	if ((sw = calloc(1, sizeof(*sw))) == NULL)
		return NULL;
	sw->loop = loop;
	sw->st = st;
	sw->ing = ing;
	sw->expire_at = -1;
	if (ing != NULL && ingest_listen(ing, on_stored, sw) == -1) {
		free(sw);
		return NULL;
	}
	expire_arm(sw, clock_wall_s());
	work_schedule(sw, 0);
	return sw;
}

void
sweep_free(struct sweep *sw)
{
	if (sw == NULL)
		return;
	if (sw->ing != NULL)
		ingest_unlisten(sw->ing, on_stored, sw);
	loop_timer_clear(sw->loop, &sw->expire_timer);
	loop_timer_clear(sw->loop, &sw->work_timer);
	free(sw);
}

void
sweep_kick(struct sweep *sw)
{
	work_schedule(sw, 0);
}

int64_t
sweep_author_floor(struct store *st, const uint8_t pubkey[32])
{
	int64_t	until;

	return store_vanished_get(st, pubkey, &until, NULL) == 1 ?
	    until + 1 : -1;
}

const struct sweep_stats *
sweep_stats(const struct sweep *sw)
{
	return &sw->stats;
}
