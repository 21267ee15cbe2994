/*
 * jobs.c — the custom backfill planner (jobs.h): running the one job
 * whose turn it is, batch by batch on all its relays at once, within the
 * pool's share for jobs; each batch on a relay is a step (jobs_step.c:
 * paged or reconciled inside the run's window); planning is in
 * jobs_plan.c. It decides which batch runs where and when the job ends,
 * never how a batch is fetched, and never removes a relay from the pool
 * (the other planners may hold requests on it).
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
#include "sync/jobs_int.h"
#include "sync/negsync.h"
#include "sync/pager.h"

static void	jrelay_kick(struct jrelay *, uint64_t delay_ms);
static void	check_soon(struct jobs *);


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
	(void)store_job_batches_due(j->st, j->active, jr->url, jobs_wall_ms(),
	    d.max, due_cb, &d);
	for (i = 0; i < d.n && j->active != 0; i++) {
		if ((rc = jobs_step_start(jr, &d.v[i])) == 1) {
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
			jobs_step_free(s);
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
	j->kick = jrelay_kick;
	j->check = check_soon;
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
