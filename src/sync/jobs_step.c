/*
 * jobs_step.c — one batch of the running custom job on one relay
 * (jobs_int.h): its filter (the batch's authors or ids, read from the
 * job's list when it starts, and the shared conditions), paged inside the
 * run's window by the pager (pager.h) or reconciled window by window by
 * negsync where the relay speaks NIP-77, and its row written with the
 * events that justify it, in ingest's open batch.
 *
 * It keeps the counters of the page in flight, nothing of the events
 * themselves. A request the relay drops mid-page is sent again by the
 * pool; the step notices (pool_sub_resent) and counts that page afresh.
 * Hazards: a relay that lies about until would loop a naive pager on its
 * newest page, and one that caps silently below the limit would make
 * "fewer than asked" look like the end; only "nothing older came" ends a
 * batch. It never writes a cursor outside ingest's batch when a page
 * moved it and never frees a step inside a pool callback except after
 * closing its subscription.
 */
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
#include "sync/jobs_int.h"
#include "sync/negsync.h"
#include "sync/pager.h"

int64_t
jobs_wall_ms(void)
{
	return clock_wall_s() * 1000;
}

/* Close the request (if open) and forget the step; its row is as left. */
void
jobs_step_free(struct jstep *s)
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

	jobs_step_free(s);
	jr->j->kick(jr, 0);
	jr->j->check(jr->j);
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
		    jobs_wall_ms() + (int64_t)delay, reason);
		s->jr->j->kick(s->jr, delay);
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
int
jobs_step_start(struct jrelay *jr, const struct store_job_batch *b)
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
