/*
 * retention.c — enforces store.max_bytes on the loop. It owns one timer,
 * the retention state and the eviction counters; which events may go and
 * in what order is store_events_evict()'s (src/store/events.c), never
 * decided here.
 *
 * It must never hold the loop for long (one bounded step per tick), never
 * evict inside a transaction it did not open (ingest's batch is committed
 * first; anything else open makes the step wait), and never spin when
 * only protected events are left over budget: a whole pass that frees
 * nothing ends in the protected state, logged once, with the next pass a
 * long wait away.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "store/events.h"
#include "store/store.h"
#include "sync/ingest.h"
#include "sync/retention.h"

struct retention {
	struct loop		*loop;
	struct store		*st;
	struct ingest		*ing;		/* NULL: no batch to commit */
	const struct config	*cfg;
	uint64_t		 timer;		/* 0: none armed */
	enum retention_state	 state;
	bool			 checked;	/* the first check ran */
	int64_t			 max_bytes;	/* store.max_bytes at the last check */
	uint64_t		 evicted;	/* since start */
	uint64_t		 round_evicted;	/* since the state left WITHIN */
	uint64_t		 zero_steps;	/* steps in a row that freed nothing */
	uint64_t		 retry_ms;	/* PROTECTED: next pass (monotonic) */
	uint64_t		 quiet_start_ms, quiet_stop_ms;	/* info lines again after */
	struct log_rl		 rl_error;
};

static const char *const state_names[] = {
	[RETENTION_WITHIN] = "within",
	[RETENTION_EVICTING] = "evicting",
	[RETENTION_PROTECTED] = "protected",
};

/*
 * A start or stop line: at info when the last one of its kind is older
 * than RETENTION_LOG_QUIET_MS, else at debug (a box that keeps touching
 * its budget would otherwise log two lines per check).
 */
static void
ret_log(struct retention *r, uint64_t *quiet_until, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
ret_log(struct retention *r, uint64_t *quiet_until, const char *fmt, ...)
{
	char		line[LOG_MAX_LINE];
	va_list		ap;
	uint64_t	now = loop_now_ms(r->loop);

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (*quiet_until != 0 && now < *quiet_until) {
		log_debug("%s", line);
		return;
	}
	*quiet_until = now + RETENTION_LOG_QUIET_MS;
	log_info("%s", line);
}

/* The one place the state changes; bytes is the events' JSON total now. */
static void
ret_set_state(struct retention *r, enum retention_state to, int64_t bytes)
{
	if (to == r->state)
		return;
	if (to == RETENTION_EVICTING && r->state == RETENTION_WITHIN) {
		r->round_evicted = 0;
		ret_log(r, &r->quiet_start_ms, "retention: %lld bytes of events "
		    "over store.max_bytes %lld: evicting the oldest events not "
		    "queued for the uplink", (long long)bytes,
		    (long long)r->max_bytes);
	} else if (to == RETENTION_EVICTING)
		log_info("retention: events became evictable again (%lld bytes, "
		    "store.max_bytes %lld): evicting", (long long)bytes,
		    (long long)r->max_bytes);
	else if (to == RETENTION_WITHIN)
		ret_log(r, &r->quiet_stop_ms, "retention: within budget: %lld "
		    "bytes of events, store.max_bytes %lld; %llu events evicted "
		    "this round, %llu since start", (long long)bytes,
		    (long long)r->max_bytes, (unsigned long long)r->round_evicted,
		    (unsigned long long)r->evicted);
	else
		log_warnx("retention: %lld bytes of events, over store.max_bytes "
		    "%lld, and every event left is protected (queued for the "
		    "uplink, or a kind 0, 3 or 10002): nothing more can be "
		    "evicted; %llu evicted this round", (long long)bytes,
		    (long long)r->max_bytes,
		    (unsigned long long)r->round_evicted);
	r->state = to;
}

static void	ret_tick(struct loop *, void *);

static void
ret_schedule(struct retention *r, uint64_t delay_ms)
{
	loop_timer_clear(r->loop, &r->timer);
	r->timer = loop_timer_add(r->loop, delay_ms, ret_tick, r);
	if (r->timer == 0)
		log_rl(&r->rl_error, LOG_LEVEL_WARN, "retention: no timer: "
		    "out of memory; store.max_bytes is not enforced");
}

/*
 * Steps run inside ingest's batch (opened here when none is): a step
 * deletes 500 events, each from three indexes whose pages are spread
 * over the store, and a page a commit dirties is written twice (WAL,
 * then checkpoint). Committing with the batch (every 5 s) writes a page
 * once for every step that touched it since: on a store of 1,000,000
 * events a round of 50,000 evictions wrote 26 KB an event committed per
 * step. Without ingest (tests of the store alone) a step is its own
 * transaction. 0, or -1 when another transaction is open.
 */
static int
ret_tx_ready(struct retention *r)
{
	if (r->ing != NULL && store_tx_depth(r->st) == 0 &&
	    ingest_tx(r->ing) == -1)
		return -1;
	if (store_tx_depth(r->st) == 0 || (store_tx_depth(r->st) == 1 &&
	    r->ing != NULL && ingest_tx_open(r->ing)))
		return 0;
	log_debug("retention: a transaction is open; step deferred");
	return -1;
}

/*
 * The end of a step that freed nothing: once a whole pass did so
 * (store_events_evict looks at STORE_EVICT_SCAN_ROWS rows a step and
 * wraps at the newest, so count / SCAN_ROWS + 2 steps cover every row),
 * the state settles. Returns the delay to the next tick.
 */
static uint64_t
ret_nothing_freed(struct retention *r, int64_t count, int64_t bytes)
{
	if (++r->zero_steps < (uint64_t)(count / STORE_EVICT_SCAN_ROWS) + 2)
		return RETENTION_CHUNK_GAP_MS;
	r->zero_steps = 0;
	if (bytes <= r->max_bytes) {
		ret_set_state(r, RETENTION_WITHIN, bytes);
		return RETENTION_CHECK_MS;
	}
	ret_set_state(r, RETENTION_PROTECTED, bytes);
	r->retry_ms = loop_now_ms(r->loop) + RETENTION_PROTECTED_RETRY_MS;
	return RETENTION_CHECK_MS;
}

/* One eviction step; returns the delay to the next tick. */
static uint64_t
ret_step(struct retention *r)
{
	int64_t	target, n, count, bytes;
	int	rc;

	if (ret_tx_ready(r) == -1)
		return RETENTION_BUSY_MS;
	target = r->max_bytes / 100 * RETENTION_LOW_WATER_PCT;
	rc = store_events_evict(r->st, target, &n);
	if (rc == -1 || store_events_totals(r->st, &count, &bytes) == -1) {
		log_rl(&r->rl_error, LOG_LEVEL_WARN, "retention: eviction "
		    "failed; trying again in %d ms", RETENTION_CHECK_MS);
		return RETENTION_CHECK_MS;
	}
	r->evicted += (uint64_t)n;
	r->round_evicted += (uint64_t)n;
	if (rc == 0) {
		r->zero_steps = 0;
		ret_set_state(r, RETENTION_WITHIN, bytes);
		return RETENTION_CHECK_MS;
	}
	if (n == 0)
		return ret_nothing_freed(r, count, bytes);
	r->zero_steps = 0;
	ret_set_state(r, RETENTION_EVICTING, bytes);
	return RETENTION_CHUNK_GAP_MS;
}

/* Compare the totals with the budget; step when over. Next delay. */
static uint64_t
ret_check(struct retention *r, int64_t bytes)
{
	if (bytes <= r->max_bytes && r->state != RETENTION_EVICTING) {
		ret_set_state(r, RETENTION_WITHIN, bytes);
		return RETENTION_CHECK_MS;
	}
	if (r->state == RETENTION_PROTECTED &&
	    loop_now_ms(r->loop) < r->retry_ms)
		return RETENTION_CHECK_MS;
	if (r->state == RETENTION_WITHIN)
		ret_set_state(r, RETENTION_EVICTING, bytes);
	return ret_step(r);
}

static void
ret_tick(struct loop *loop, void *arg)
{
	struct retention	*r = arg;
	int64_t			 max, count, bytes;

	(void)loop;
	r->timer = 0;
	max = config_get_int(r->cfg, "store.max_bytes");
	if (max != r->max_bytes) {
		r->max_bytes = max;
		r->zero_steps = 0;
		r->retry_ms = 0;
	}
	if (store_events_totals(r->st, &count, &bytes) == -1) {
		ret_schedule(r, RETENTION_CHECK_MS);
		return;
	}
	r->checked = true;
	ret_schedule(r, ret_check(r, bytes));
}

struct retention *
retention_new(struct loop *loop, struct store *st, struct ingest *ing,
    const struct config *cfg)
{
	struct retention	*r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->loop = loop;
	r->st = st;
	r->ing = ing;
	r->cfg = cfg;
	r->state = RETENTION_WITHIN;
	r->max_bytes = config_get_int(cfg, "store.max_bytes");
	if ((r->timer = loop_timer_add(loop, 0, ret_tick, r)) == 0) {
		free(r);
		return NULL;
	}
	return r;
}

void
retention_free(struct retention *r)
{
	if (r == NULL)
		return;
	loop_timer_clear(r->loop, &r->timer);
	free(r);
}

void
retention_kick(struct retention *r)
{
	ret_schedule(r, 0);
}

uint64_t
retention_evicted(const struct retention *r)
{
	return r->evicted;
}

enum retention_state
retention_state(const struct retention *r)
{
	return r->state;
}

const char *
retention_state_name(enum retention_state s)
{
	if ((size_t)s >= sizeof(state_names) / sizeof(state_names[0]))
		return "?";
	return state_names[s];
}

bool
retention_settled(const struct retention *r)
{
	return r->checked && r->state != RETENTION_EVICTING;
}
