/*
 * jobs.c — the custom backfill planner (jobs.h): running the one job
 * whose turn it is, batch by batch on all its relays at once, each batch
 * a paged drain (pager.h) inside the run's window; planning is in
 * jobs_plan.c.
 *
 * A step is one batch on its relay; it keeps its filter (the batch's
 * authors or ids, read from the job's list when it starts, and the
 * shared conditions) and the counters of the page in flight, nothing of
 * the events themselves. At EOSE the page's verdict (drain_page_verdict)
 * is written with the page's events, in ingest's open batch. A request
 * the relay drops mid-page is sent again by the pool; the step notices
 * (pool_sub_resent) and counts that page afresh.
 *
 * Hazards: a relay that lies about until would loop a naive pager on its
 * newest page, and one that caps silently below the limit would make
 * "fewer than asked" look like the end; only "nothing older came" ends a
 * batch. This module never writes a cursor outside ingest's batch when a
 * page moved it, never frees a step inside a pool callback except after
 * closing its subscription (the pool then calls nothing on it), and never
 * removes a relay from the pool (the other planners may hold requests on
 * it).
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/backoff.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/errf.h"
#include "core/hex.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "nostr/filter.h"
#include "relay/pool.h"
#include "store/jobs.h"
#include "store/store.h"
#include "sync/drain_page.h"
#include "sync/follow.h"
#include "sync/ingest.h"
#include "sync/job_spec.h"
#include "sync/ctx.h"
#include "sync/jobs.h"
#include "sync/negsync.h"
#include "sync/pager.h"

struct jrelay;

struct jstep {
	TAILQ_ENTRY(jstep)	 entry;
	struct jrelay		*jr;
	struct store_job_batch	 b;
	struct pager		 pg;		/* the request and its page */
	int64_t			 fetched;	/* the batch's events so far */
	enum drain_next		 next;		/* the last committed verdict */
	struct negsync_step	*neg;		/* reconciling instead, or NULL */
};
TAILQ_HEAD(jstep_list, jstep);

struct jrelay {
	TAILQ_ENTRY(jrelay)	 entry;
	struct jobs		*j;
	char			*url;
	struct jstep_list	 steps;
	size_t			 nsteps;
	int64_t			 largest_page;	/* cap seen on this relay */
	struct pager_pump	 pump;
};
TAILQ_HEAD(jrelay_list, jrelay);

struct jobs {
	struct loop		*loop;
	struct pool		*pool;
	struct ingest		*ing;
	struct store		*st;
	const struct config	*cfg;
	struct follow		*follow;
	struct jrelay_list	 relays;	/* of the running job */
	size_t			 nsteps;
	int64_t			 active;	/* the running job, 0: none */
	bool			 relays_unread;	/* its relays to be read again */
	char			*filter_json;	/* its shared filter */
	enum store_job_mode	 mode;
	int64_t			 since;		/* its run's window; -1: none */
	int64_t			 until;
	int64_t			 user_limit;	/* newest events per batch; 0 */
	uint64_t		 tick_timer;
	uint64_t		 check_timer;
	bool			 (*held)(void *);
	void			*held_arg;
	struct negsync		*ns;		/* NIP-77 steps, or NULL */
};

static void	jrelay_kick(struct jrelay *, uint64_t delay_ms);
static void	check_soon(struct jobs *);

static int64_t
wall_ms(void)
{
	return clock_wall_s() * 1000;
}

/* ---- steps --------------------------------------------------------------- */

/* Close the request (if open) and forget the step; its row is as left. */
static void
step_free(struct jstep *s)
{
	struct jrelay	*jr = s->jr;

	if (s->neg != NULL)
		negsync_cancel(s->neg);
	s->neg = NULL;
	pager_free(&s->pg);
	TAILQ_REMOVE(&jr->steps, s, entry);
	jr->nsteps--;
	jr->j->nsteps--;
	free(s);
}

/* The step is done: free it and look for the next batch and the end. */
static void
step_finish(struct jstep *s)
{
	struct jrelay	*jr = s->jr;

	step_free(s);
	jrelay_kick(jr, 0);
	check_soon(jr->j);
}

/*
 * An attempt of the batch failed: ask again from its cursor after the
 * backoff, or after JOBS_MAX_ATTEMPTS record it failed with reason.
 */
static void
step_fail(struct jstep *s, const char *reason)
{
	struct jobs	*j = s->jr->j;
	int64_t		 attempts = s->b.attempts + 1;
	uint64_t	 delay;

	if (attempts < JOBS_MAX_ATTEMPTS) {
		delay = backoff_ms((uint64_t)config_get_int(j->cfg,
		    "jobs.retry_base_ms"), (uint32_t)(attempts - 1),
		    JOBS_RETRY_MAX_MS);
		log_info("jobs: job %lld batch %lld on %s: %s; asked again in "
		    "%llu ms (attempt %lld of %d)", (long long)s->b.job_id,
		    (long long)s->b.index, s->jr->url, reason,
		    (unsigned long long)delay, (long long)attempts + 1,
		    JOBS_MAX_ATTEMPTS);
		/* Not taken (logged): job_check puts the row back. */
		(void)store_job_batch_later(j->st, s->b.id, attempts,
		    wall_ms() + (int64_t)delay, reason);
		jrelay_kick(s->jr, delay);
	} else {
		log_info("jobs: job %lld batch %lld on %s failed after %d "
		    "attempts: %s", (long long)s->b.job_id,
		    (long long)s->b.index, s->jr->url, JOBS_MAX_ATTEMPTS,
		    reason);
		/*
		 * A row the store did not take (logged) is left pending or
		 * running; job_check puts a running one back, and the next
		 * attempt ends it again.
		 */
		(void)store_job_batch_later(j->st, s->b.id, attempts, 0,
		    reason);
		(void)store_job_batch_end(j->st, &(struct
		    store_job_batch_outcome){ .id = s->b.id, .job =
		    s->b.job_id, .status = STORE_JOB_FAILED, .reason = reason,
		    .gap_since = -1, .now_s = clock_wall_s() });
	}
	step_finish(s);
}

/* Whether v (sorted, n entries) holds key. */
static bool
sorted_has(const uint8_t (*v)[32], size_t n, const uint8_t key[32])
{
	size_t	lo = 0, hi = n, mid;
	int	c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = memcmp(v[mid], key, 32)) == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static bool
kind_asked(const struct filter *f, int64_t kind)
{
	size_t	i;

	if (!(f->has & FILTER_HAS_KINDS))
		return true;
	for (i = 0; i < f->nkinds; i++)
		if (f->kinds[i] == kind)
			return true;
	return false;
}

/*
 * Whether an event ingest recognised is the batch's: its kind, author or
 * id, and since (ingest checked the rest for a new event; a duplicate is
 * known by id and not checked against the filter at all).
 */
static bool
batch_match(const struct jstep *s, const struct ingest_info *info)
{
	const struct filter	*f = &s->pg.f;

	if (!kind_asked(f, info->kind))
		return false;
	if ((f->has & FILTER_HAS_SINCE) && info->created_at < f->since)
		return false;
	if ((f->has & FILTER_HAS_AUTHORS) && !sorted_has(
	    (const uint8_t (*)[32])f->authors, f->nauthors, info->pubkey))
		return false;
	return !(f->has & FILTER_HAS_IDS) || sorted_has(
	    (const uint8_t (*)[32])f->ids, f->nids, info->id);
}

static bool
step_match(void *arg, const struct ingest_info *info)
{
	return batch_match(arg, info);
}

/* A 64-hex member of the raw event into out; false if absent or bad. */
static bool
raw_key(const cJSON *ev, const char *name, uint8_t out[32])
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(ev, name);

	return cJSON_IsString(v) && strlen(v->valuestring) == 64 &&
	    hex_decode(v->valuestring, 64, out, 32) == 0;
}

/*
 * An event ingest will refuse as unrequested: is it the batch's except
 * for being newer than until? Then the relay does not honour until. Read
 * from the raw object before ingest may take it; tags are not looked at.
 */
static bool
step_newer(void *arg, const struct relay_msg *msg)
{
	const struct jstep	*s = arg;
	struct ingest_info	 info;
	int64_t			 ca, kind;

	if (msg->event == NULL ||
	    json_int(cJSON_GetObjectItemCaseSensitive(msg->event, "created_at"),
	    0, INT64_MAX / 2, &ca) == -1 || ca <= s->pg.page.until ||
	    json_int(cJSON_GetObjectItemCaseSensitive(msg->event, "kind"), 0,
	    65535, &kind) == -1 || !raw_key(msg->event, "pubkey", info.pubkey) ||
	    !raw_key(msg->event, "id", info.id))
		return false;
	info.created_at = ca;
	info.kind = (uint32_t)kind;
	return batch_match(s, &info);
}

/* The words of an incomplete verdict, with the second of its gap. */
static void
verdict_reason(const struct drain_verdict *v, char *out, size_t len)
{
	if (v->gap_since >= 0)
		snprintf(out, len, "%s (from second %lld)",
		    store_cursor_why_text(v->why), (long long)v->gap_since);
	else
		snprintf(out, len, "%s", store_cursor_why_text(v->why));
}

/*
 * The limit of the next page: backfill.page_size under the relay's
 * max_limit, and no more than the events a user limit still wants.
 */
static void
step_limit(struct jstep *s)
{
	struct jobs	*j = s->jr->j;
	int64_t		 limit, left;

	limit = pager_limit(&s->pg, config_get_int(j->cfg,
	    "backfill.page_size"));
	left = j->user_limit - s->fetched;
	if (j->user_limit > 0 && left < limit)
		limit = left > 0 ? left : 1;
	s->pg.page.limit = limit;
}

/*
 * EOSE of a whole page, inside ingest's open batch with the page's
 * events: the batch row gets the verdict. 0 or -1.
 */
static int
step_commit(void *arg, struct drain_verdict *v)
{
	struct jstep		*s = arg;
	struct jobs		*j = s->jr->j;
	struct drain_page	*p = &s->pg.page;
	char			 reason[JOBS_REASON_MAX + 1];

	if (v->ignores_until || v->gap)
		log_info("jobs: job %lld batch %lld on %s: %s", (long long)
		    s->b.job_id, (long long)s->b.index, s->jr->url,
		    v->ignores_until ? "the relay ignores until" :
		    "a second fills a page: stepping past it");
	if (store_job_batch_page(j->st, s->b.id, s->b.job_id, v->until,
	    p->received, p->fresh) == -1)
		return -1;
	s->fetched += p->received;
	if (j->user_limit > 0 && s->fetched >= j->user_limit &&
	    v->next == DRAIN_NEXT_PAGE)
		v->next = DRAIN_NEXT_COMPLETE;	/* the newest `limit` came */
	/* Every id asked came in this one page (ids are unique): whatever
	 * the relay does with until, it has nothing more for the batch. */
	if ((s->pg.f.has & FILTER_HAS_IDS) && !p->has_gap &&
	    p->received + p->newer >= (int64_t)s->pg.f.nids)
		v->next = DRAIN_NEXT_COMPLETE;
	s->next = v->next;
	switch (v->next) {
	case DRAIN_NEXT_COMPLETE:
		return store_job_batch_end(j->st, &(struct
		    store_job_batch_outcome){ .id = s->b.id, .job =
		    s->b.job_id, .status = STORE_JOB_COMPLETE, .gap_since = -1,
		    .now_s = clock_wall_s() });
	case DRAIN_NEXT_INCOMPLETE:
		verdict_reason(v, reason, sizeof(reason));
		log_info("jobs: job %lld batch %lld on %s incomplete: %s",
		    (long long)s->b.job_id, (long long)s->b.index, s->jr->url,
		    reason);
		return store_job_batch_end(j->st, &(struct
		    store_job_batch_outcome){ .id = s->b.id, .job =
		    s->b.job_id, .status = STORE_JOB_INCOMPLETE, .why = v->why,
		    .reason = reason, .gap_since = v->gap_since, .now_s =
		    clock_wall_s() });
	default:
		if (v->gap) {
			p->has_gap = true;
			p->gap_since = v->gap_since;
			if (store_job_batch_gap(j->st, s->b.id,
			    v->gap_since) == -1)
				return -1;
		}
		p->until = v->until;
		step_limit(s);
		return 0;
	}
}

/* A page was committed (or not): the batch ends, or its next page. */
static void
step_eose(void *arg, int committed)
{
	struct jstep	*s = arg;

	if (committed == -1)
		step_fail(s, "a page was not recorded (the store failed)");
	else if (s->next != DRAIN_NEXT_PAGE)
		step_finish(s);
	else
		pager_next(&s->pg);
}

/* Closed, silent, unreachable, or not asked: an attempt failed. */
static void
step_on_fail(void *arg, enum pager_fail how, const char *why)
{
	(void)how;
	step_fail(arg, why);
}

static const struct pager_hooks step_hooks = {
	.match = step_match,
	.newer = step_newer,
	.commit = step_commit,
	.eose = step_eose,
	.fail = step_on_fail,
};

/*
 * The batch's filter: the job's shared one (since moved to the run's),
 * and its authors or ids read from the job's list through its mask.
 * 1 ready, 0 the batch asks nothing, -1 failure.
 */
static int
step_filter(struct jstep *s)
{
	struct jobs	*j = s->jr->j;
	uint8_t		(*v)[32];
	int64_t		 n = s->b.item_hi - s->b.item_lo, i, k = 0;
	char		 err[256];

	if (filter_parse_text(&s->pg.f, j->filter_json, strlen(j->filter_json),
	    err, sizeof(err)) == -1)
		return -1;
	s->pg.f.has &= ~(unsigned)(FILTER_HAS_LIMIT | FILTER_HAS_UNTIL);
	if (j->since >= 0) {
		s->pg.f.since = j->since;
		s->pg.f.has |= FILTER_HAS_SINCE;
	}
	if (j->mode == STORE_JOB_MODE_NONE)
		return 1;
	if (n <= 0 || n > JOBS_BATCH_SIZE_MAX || (v = calloc((size_t)n,
	    32)) == NULL)
		return n <= 0 ? 0 : -1;
	if (store_job_items_read(j->st, s->b.job_id, s->b.item_lo,
	    s->b.item_hi, v) != n) {
		free(v);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!s->b.has_mask || (s->b.mask[i / 8] & (1u << (i % 8))))
			memmove(v[k++], v[i], 32);
	if (k == 0) {
		free(v);
		return 0;
	}
	if (j->mode == STORE_JOB_MODE_AUTHORS) {
		s->pg.f.authors = v;
		s->pg.f.nauthors = (size_t)k;
		s->pg.f.has |= FILTER_HAS_AUTHORS;
	} else {
		s->pg.f.ids = v;
		s->pg.f.nids = (size_t)k;
		s->pg.f.has |= FILTER_HAS_IDS;
	}
	return 1;
}

/*
 * A reconciled window of the batch is fetched (negsync_window_fn, in
 * ingest's batch): the cursor goes below it.
 */
static int
step_window(void *arg, int64_t next_until, int64_t came, int64_t fresh)
{
	struct jstep	*s = arg;

	s->fetched += came;
	return store_job_batch_window(s->jr->j->st, s->b.id, s->b.job_id,
	    next_until < 0 ? 0 : next_until, came, fresh);
}

/*
 * The batch's reconciliation ended (negsync.h). Refused (or a second too
 * dense for a session): the batch is paged from where it stopped, from
 * the loop.
 */
static void
step_neg_done(void *arg, enum negsync_end end, const char *why)
{
	struct jstep	*s = arg;
	struct jobs	*j = s->jr->j;

	s->neg = NULL;		/* gone with this call */
	switch (end) {
	case NEGSYNC_COMPLETE:
	case NEGSYNC_RECOVERING:
		if (ingest_tx(j->ing) == -1 || store_job_batch_end(j->st,
		    &(struct store_job_batch_outcome){ .id = s->b.id, .job =
		    s->b.job_id, .status = end == NEGSYNC_COMPLETE ?
		    STORE_JOB_COMPLETE : STORE_JOB_INCOMPLETE, .why =
		    STORE_CURSOR_WHY_RECOVERY, .reason = "ids the relay named "
		    "did not come; under recovery", .gap_since = -1, .now_s =
		    clock_wall_s() }) == -1) {
			step_fail(s, "the batch's end was not recorded");
			return;
		}
		break;
	case NEGSYNC_REFUSED:
	case NEGSYNC_DENSE:
		log_info("jobs: job %lld batch %lld on %s: %s; paging it",
		    (long long)s->b.job_id, (long long)s->b.index, s->jr->url,
		    why != NULL ? why : "not reconciled");
		/* Not taken (logged): job_check puts the row back. */
		(void)store_job_batch_way(j->st, s->b.id,
		    STORE_JOB_WAY_PAGING);
		(void)store_job_batch_release(j->st, s->b.id);
		break;
	default:
		step_fail(s, why != NULL ? why : "reconciliation failed");
		return;
	}
	step_finish(s);
}

/* Whether batch b reconciles on jr rather than being paged. */
static bool
step_reconciles(const struct jrelay *jr, const struct store_job_batch *b)
{
	struct jobs	*j = jr->j;

	return j->ns != NULL && j->user_limit == 0 &&
	    b->way != STORE_JOB_WAY_PAGING && negsync_wanted(j->ns, jr->url);
}

/* Reconcile s from its cursor. 0, or -1 (page it instead). */
static int
step_start_neg(struct jstep *s)
{
	struct jobs		*j = s->jr->j;
	char			 label[64];
	struct negsync_scope	 sc = {
		.f = &s->pg.f, .since = j->since, .source = INGEST_JOB,
		.window = step_window, .label = label,
	};

	sc.until = s->b.started ? s->b.until_cursor : j->until;
	snprintf(label, sizeof(label), "job %lld batch %lld",
	    (long long)s->b.job_id, (long long)s->b.index);
	if ((s->neg = negsync_start_scope(j->ns, &sc, s->jr->url,
	    step_neg_done, s)) == NULL) {
		log_info("jobs: job %lld batch %lld on %s: cannot reconcile "
		    "it; paging it", (long long)s->b.job_id,
		    (long long)s->b.index, s->jr->url);
		return -1;
	}
	/* A label for the status; the cursor is what resumes the batch. */
	(void)store_job_batch_way(j->st, s->b.id, STORE_JOB_WAY_NIP77);
	log_debug("jobs: job %lld batch %lld on %s: reconciling from %lld",
	    (long long)s->b.job_id, (long long)s->b.index, s->jr->url,
	    (long long)sc.until);
	return 0;
}

/*
 * Start batch b on jr. 0, 1 not now (no NIP-77 session slot free: the
 * batch stays pending), or -1 (the batch is left pending).
 */
static int
step_start(struct jrelay *jr, const struct store_job_batch *b)
{
	struct jobs		*j = jr->j;
	struct jstep		*s;
	struct drain_page	*p;
	int			 rc;
	bool			 neg = step_reconciles(jr, b);
	struct pager_deps	 deps = {
		.loop = j->loop, .pool = j->pool, .ing = j->ing,
		.follow = j->follow, .source = INGEST_JOB,
		.timeout_ms = JOBS_STEP_TIMEOUT_MS,
	};

	if (neg && !negsync_can_start_scope(j->ns, jr->url))
		return 1;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	s->jr = jr;
	s->b = *b;
	pager_init(&s->pg, &deps, jr->url, &jr->largest_page, &step_hooks, s);
	if ((rc = step_filter(s)) == -1 ||
	    store_job_batch_start(j->st, b->id, clock_wall_s()) == -1) {
		pager_free(&s->pg);
		free(s);
		return -1;
	}
	TAILQ_INSERT_TAIL(&jr->steps, s, entry);
	jr->nsteps++;
	j->nsteps++;
	/* An end not taken (logged): job_check puts the row back. */
	if (rc == 0) {		/* nothing to ask: complete */
		(void)store_job_batch_end(j->st, &(struct
		    store_job_batch_outcome){ .id = b->id, .job = b->job_id,
		    .status = STORE_JOB_COMPLETE, .gap_since = -1, .now_s =
		    clock_wall_s() });
		step_finish(s);
		return 0;
	}
	s->fetched = b->events_fetched;
	if (neg && (j->since < 0 || (b->started ? b->until_cursor :
	    j->until) >= j->since) && step_start_neg(s) == 0)
		return 0;
	if (neg && j->since >= 0 && (b->started ? b->until_cursor :
	    j->until) < j->since) {	/* reconciled down to since */
		/* Not taken (logged): job_check puts the row back. */
		(void)store_job_batch_end(j->st, &(struct
		    store_job_batch_outcome){ .id = b->id, .job = b->job_id,
		    .status = STORE_JOB_COMPLETE, .gap_since = -1, .now_s =
		    clock_wall_s() });
		step_finish(s);
		return 0;
	}
	if (b->way != STORE_JOB_WAY_PAGING)	/* a label, as above */
		(void)store_job_batch_way(j->st, b->id, STORE_JOB_WAY_PAGING);
	s->pg.row_largest = b->largest_page;
	p = &s->pg.page;
	p->started = true;
	p->until = b->started ? b->until_cursor : j->until;
	p->has_gap = b->has_gap;
	p->gap_since = b->gap_since;
	log_debug("jobs: job %lld batch %lld on %s from %lld",
	    (long long)b->job_id, (long long)b->index, jr->url,
	    (long long)p->until);
	step_limit(s);
	if (pager_open(&s->pg) == -1)
		step_fail(s, "cannot open a request");
	return 0;
}


/* ---- relays of the running job ------------------------------------------ */

/*
 * How many batches this relay may page at once: jobs.max_subs_per_relay,
 * less when the pool's cap is taken by other subscriptions (the author
 * drain, live); at least 1, so neither side starves.
 */
static size_t
jrelay_cap(const struct jrelay *jr)
{
	return pager_relay_cap(jr->j->pool, jr->url, config_get_int(jr->j->cfg,
	    "jobs.max_subs_per_relay"), jr->nsteps);
}

struct due {
	struct store_job_batch	*v;
	size_t			 n, max;
};

static int
due_cb(const struct store_job_batch *b, void *arg)
{
	struct due	*d = arg;

	d->v[d->n++] = *b;
	return d->n >= d->max ? 1 : 0;
}

/* Start the relay's next due batches, up to its cap. */
static void
jrelay_pump(struct jrelay *jr)
{
	struct jobs	*j = jr->j;
	struct due	 d = { 0 };
	size_t		 cap = jrelay_cap(jr), i;
	int		 rc;

	if (j->active == 0 || jr->nsteps >= cap ||
	    (j->held != NULL && j->held(j->held_arg)))
		return;
	d.max = cap - jr->nsteps;
	if ((d.v = calloc(d.max, sizeof(*d.v))) == NULL)
		return;
	/* A failed read (logged) starts fewer; the next tick looks again. */
	(void)store_job_batches_due(j->st, j->active, jr->url, wall_ms(),
	    d.max, due_cb, &d);
	for (i = 0; i < d.n && j->active != 0; i++) {
		if ((rc = step_start(jr, &d.v[i])) == 1) {
			jrelay_kick(jr, JOBS_NEG_WAIT_MS);	/* a slot frees */
			break;
		}
		if (rc == -1) {
			log_warnx("jobs: %s: cannot start a batch", jr->url);
			break;
		}
	}
	free(d.v);
}

static void
jrelay_pump_run(void *arg)
{
	jrelay_pump(arg);
}

/* Pump from the loop (never inside a pool callback). */
static void
jrelay_kick(struct jrelay *jr, uint64_t delay_ms)
{
	pager_kick(&jr->pump, delay_ms);
}

static int
jrelay_get(const char *url, void *arg)
{
	struct jobs	*j = arg;
	struct jrelay	*jr;

	TAILQ_FOREACH(jr, &j->relays, entry)
		if (strcmp(jr->url, url) == 0)
			return 0;
	/* A relay the pool knows keeps its role (pool_relay_add would
	 * change it); one it does not is the job's. */
	if (pool_relay_find(j->pool, url) == NULL &&
	    pool_relay_add(j->pool, url, RELAY_ROLE_CUSTOM) == NULL) {
		log_warnx("jobs: %s is not a relay the pool can dial", url);
		return 0;
	}
	if ((jr = calloc(1, sizeof(*jr))) == NULL ||
	    (jr->url = strdup(url)) == NULL) {
		free(jr);
		return 0;
	}
	jr->j = j;
	TAILQ_INIT(&jr->steps);
	pager_pump_init(&jr->pump, j->loop, jrelay_pump_run, jr);
	/* The cap this relay has proven to earlier jobs and the drain: a
	 * relay ignoring until that sends less has sent all it holds. */
	if ((jr->largest_page = store_job_relay_largest(j->st, url)) < 0)
		jr->largest_page = 0;
	TAILQ_INSERT_TAIL(&j->relays, jr, entry);
	jrelay_kick(jr, 0);
	return 0;
}

/*
 * The relays of the active job's open batches, each given its steps. A
 * failed read (logged) would leave the job with no relay to run on: the
 * next look reads them again.
 */
static void
relays_read(struct jobs *j)
{
	j->relays_unread = store_job_batch_relays(j->st, j->active,
	    jrelay_get, j) == -1;
}

/*
 * Stop running the active job: every step's request is closed; with
 * release its batch goes back to pending (it resumes from its cursor),
 * else it is left as the caller recorded it (cancelled).
 */
static void
deactivate(struct jobs *j, bool release)
{
	struct jrelay	*jr;
	struct jstep	*s;

	while ((jr = TAILQ_FIRST(&j->relays)) != NULL) {
		while ((s = TAILQ_FIRST(&jr->steps)) != NULL) {
			/* Left running (logged): store_jobs_recover. */
			if (release)
				(void)store_job_batch_release(j->st, s->b.id);
			step_free(s);
		}
		pager_pump_clear(&jr->pump);
		TAILQ_REMOVE(&j->relays, jr, entry);
		free(jr->url);
		free(jr);
	}
	free(j->filter_json);
	j->filter_json = NULL;
	j->active = 0;
}

/*
 * Make job id the running one. 0, -1 when it was recorded failed instead
 * (look for the next), -2 when the store failed (look again later).
 */
static int
activate(struct jobs *j, int64_t id)
{
	struct store_job	 row;
	struct filter		 f;
	char			 err[256];
	int64_t			 now = clock_wall_s(), until;

	if (store_job_get(j->st, id, &row) != 1)
		return -2;
	if (filter_parse_text(&f, row.filter_json, strlen(row.filter_json),
	    err, sizeof(err)) == -1) {
		log_warnx("jobs: job %lld: its filter does not parse: %s",
		    (long long)id, err);
		store_job_clear(&row);
		return store_job_finish(j->st, id, STORE_JOB_FAILED,
		    "its filter does not parse", now) == 0 ? -1 : -2;
	}
	until = (f.has & FILTER_HAS_UNTIL) ? f.until : now;
	j->since = (f.has & FILTER_HAS_SINCE) ? f.since : -1;
	if (row.run_since > j->since)
		j->since = row.run_since;
	j->user_limit = (f.has & FILTER_HAS_LIMIT) ? (int64_t)f.limit : 0;
	filter_free(&f);
	j->until = row.run_until >= 0 ? row.run_until : until;
	j->mode = row.mode;
	if (store_job_run(j->st, id, until, now) == -1 ||
	    (j->filter_json = strdup(row.filter_json)) == NULL) {
		store_job_clear(&row);
		return -2;
	}
	j->active = id;
	log_info("jobs: job %lld (%s) %s: %lld of %lld batches left, window "
	    "%lld .. %lld", (long long)id, row.label, row.status ==
	    STORE_JOB_RUNNING ? "resumes" : "starts", (long long)
	    (row.total_batches - row.done_batches), (long long)
	    row.total_batches, (long long)j->since, (long long)j->until);
	store_job_clear(&row);
	relays_read(j);
	check_soon(j);
	return 0;
}

/* The first reason among the job's failed (else incomplete) batches. */

struct first_reason {
	char	failed[JOBS_FIRST_REASON_MAX];
	char	incomplete[JOBS_FIRST_REASON_MAX];
};

static int
first_reason_cb(const struct store_job_batch *b, void *arg)
{
	struct first_reason	*fr = arg;
	char			*dst = b->status == STORE_JOB_FAILED ?
				    fr->failed : b->status ==
				    STORE_JOB_INCOMPLETE ? fr->incomplete :
				    NULL;

	if (dst != NULL && dst[0] == '\0')
		snprintf(dst, JOBS_FIRST_REASON_MAX, "batch %lld on %.120s: "
		    "%.200s", (long long)b->index, b->relay, b->error);
	return fr->failed[0] != '\0' ? 1 : 0;
}

/*
 * Whether the running job is finished (no step, no batch pending or
 * running); if so record how it ended and let the next one run.
 */
static void
job_check(struct jobs *j)
{
	struct first_reason	fr = { "", "" };
	int64_t			counts[STORE_JOB_NSTATUS], next_ms, id = j->active;
	enum store_job_status	end = STORE_JOB_COMPLETE;
	char			msg[JOBS_FIRST_REASON_MAX + 64];

	if (id == 0 || j->nsteps > 0 ||
	    store_job_batch_counts(j->st, id, counts, &next_ms) == -1 ||
	    counts[STORE_JOB_PENDING] > 0)
		return;
	if (counts[STORE_JOB_RUNNING] > 0) {	/* no step holds them */
		(void)store_jobs_recover(j->st);  /* -1: the next check */
		return;
	}
	msg[0] = '\0';
	if (counts[STORE_JOB_FAILED] + counts[STORE_JOB_INCOMPLETE] +
	    counts[STORE_JOB_CANCELLED] > 0) {
		/* Only the message's first reason; unread, it is empty. */
		(void)store_job_batches_unfinished(j->st, id,
		    JOBS_SHOW_MAX_BATCHES, first_reason_cb, &fr);
		end = counts[STORE_JOB_FAILED] > 0 ? STORE_JOB_FAILED :
		    STORE_JOB_INCOMPLETE;
		snprintf(msg, sizeof(msg), "%lld of %lld batches %s; %s",
		    (long long)(end == STORE_JOB_FAILED ?
		    counts[STORE_JOB_FAILED] : counts[STORE_JOB_INCOMPLETE] +
		    counts[STORE_JOB_CANCELLED]), (long long)(counts[0] +
		    counts[1] + counts[2] + counts[3] + counts[4] + counts[5]),
		    end == STORE_JOB_FAILED ? "failed" : "incomplete",
		    end == STORE_JOB_FAILED ? fr.failed : fr.incomplete);
	}
	if (store_job_finish(j->st, id, end, msg, clock_wall_s()) == -1)
		return;
	/* A job's end is read from the file at once: its batch commits now. */
	(void)ingest_flush(j->ing);
	log_info("jobs: job %lld %s%s%s", (long long)id,
	    store_job_status_name(end), msg[0] ? ": " : "", msg);
	deactivate(j, false);
	check_soon(j);
}

/* ---- the loop ------------------------------------------------------------- */

/* Plan the scheduled jobs that are due, then run the next job if none. */
static void
jobs_look(struct jobs *j)
{
	struct jobs_planner	pl = { .st = j->st, .cfg = j->cfg };
	int64_t			ids[JOBS_DUE_PER_TICK], n, i, id;
	struct jrelay		*jr;

	n = store_jobs_due(j->st, clock_wall_s(), ids, JOBS_DUE_PER_TICK);
	for (i = 0; i < n; i++)
		(void)jobs_plan_rerun(&pl, ids[i]);
	if (j->active == 0) {
		for (i = 0; i < JOBS_DUE_PER_TICK &&
		    store_job_next(j->st, &id) == 1; i++)
			if (activate(j, id) != -1)
				break;
		return;
	}
	if (j->relays_unread)
		relays_read(j);
	TAILQ_FOREACH(jr, &j->relays, entry)
		jrelay_kick(jr, 0);
	job_check(j);
}

static void
check_timer(struct loop *l, void *arg)
{
	struct jobs	*j = arg;

	(void)l;
	j->check_timer = 0;
	jobs_look(j);
}

/* Look again from the loop (never inside a pool callback). */
static void
check_soon(struct jobs *j)
{
	if (j->check_timer == 0)
		j->check_timer = loop_timer_add(j->loop, 0, check_timer, j);
}

static void
tick(struct loop *l, void *arg)
{
	struct jobs	*j = arg;

	j->tick_timer = loop_timer_add(l, JOBS_TICK_MS, tick, j);
	jobs_look(j);
}

struct jobs *
jobs_new(const struct sync_ctx *cx)
{
	struct jobs	*j;
	int64_t		 n;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	j->loop = cx->loop;
	j->pool = cx->pool;
	j->ing = cx->ing;
	j->st = cx->st;
	j->cfg = cx->cfg;
	j->follow = cx->follow;
	TAILQ_INIT(&j->relays);
	if ((n = store_jobs_recover(cx->st)) > 0)
		log_info("jobs: %lld batches that were running go on from "
		    "their cursors", (long long)n);
	j->tick_timer = loop_timer_add(cx->loop, 0, tick, j);
	return j;
}

void
jobs_free(struct jobs *j)
{
	if (j == NULL)
		return;
	deactivate(j, true);
	loop_timer_clear(j->loop, &j->tick_timer);
	loop_timer_clear(j->loop, &j->check_timer);
	free(j);
}

/* Which way a relay's batches will go, and why. */
static void
plan_way(struct jobs *j, const struct job_spec *spec,
    struct jobs_plan_relay *r)
{
	enum negsync_support	 sup;
	const char		*way = "paging", *why = "";

	if (j->ns == NULL || !config_get_bool(j->cfg, "negentropy.enabled"))
		why = "negentropy.enabled is false";
	else if (spec->shared.has & FILTER_HAS_LIMIT)
		why = "its limit asks for the newest events";
	else if ((sup = negsync_support(j->ns, r->url)) == NEGSYNC_YES) {
		way = "nip77";
		why = "the relay reconciles";
	} else if (sup == NEGSYNC_UNKNOWN) {
		way = "nip77";
		why = "not tried yet: paged if the relay refuses";
	}
	snprintf(r->way, sizeof(r->way), "%s", way);
	if (why[0] == '\0')
		snprintf(r->way_why, sizeof(r->way_why), "the relay does not "
		    "reconcile: %.150s", negsync_support_why(j->ns, r->url));
	else
		snprintf(r->way_why, sizeof(r->way_why), "%s", why);
}

int
jobs_create(struct jobs *j, const struct job_spec *spec, const char *by,
    bool dry_run, struct jobs_plan *out, char *err, size_t errlen)
{
	struct jobs_planner	pl = { .st = j->st, .cfg = j->cfg };
	size_t			i;

	if (jobs_plan_create(&pl, spec, by, dry_run, out, err, errlen) == -1)
		return -1;
	for (i = 0; i < out->nrelays; i++)
		plan_way(j, spec, &out->relays[i]);
	if (!dry_run)
		check_soon(j);
	return 0;
}

int
jobs_cancel(struct jobs *j, int64_t id)
{
	int	rc = store_job_cancel(j->st, id, clock_wall_s());

	if (rc == 1) {
		log_info("jobs: job %lld cancelled", (long long)id);
		if (j->active == id)
			deactivate(j, false);
		check_soon(j);
	}
	return rc;
}

int64_t
jobs_retry(struct jobs *j, int64_t id)
{
	int64_t	n = store_job_retry(j->st, id);

	if (n > 0) {
		log_info("jobs: job %lld: %lld batches asked again",
		    (long long)id, (long long)n);
		if (j->active == id)
			relays_read(j);
		check_soon(j);
	}
	return n;
}

int
jobs_delete(struct jobs *j, int64_t id, char *err, size_t errlen)
{
	int	rc;

	if (j->active == id)
		return errf(err, errlen, "job %lld is running: cancel it first",
		    (long long)id);
	if ((rc = store_job_delete(j->st, id)) == -1)
		return errf(err, errlen, "the store failed");
	if (rc == 1)
		log_info("jobs: job %lld deleted", (long long)id);
	return rc;
}

void
jobs_set_negsync(struct jobs *j, struct negsync *ns)
{
	j->ns = ns;
}

void
jobs_set_hold(struct jobs *j, bool (*held)(void *), void *arg)
{
	j->held = held;
	j->held_arg = arg;
}

int64_t
jobs_running(const struct jobs *j)
{
	return j->active;
}

size_t
jobs_in_flight(const struct jobs *j)
{
	return j->nsteps;
}

bool
jobs_idle(struct jobs *j)
{
	int64_t	id;

	if (j->active != 0 || j->nsteps > 0 || j->check_timer != 0)
		return false;
	if (store_job_next(j->st, &id) != 0)
		return false;
	return store_jobs_due(j->st, clock_wall_s(), &id, 1) == 0;
}
