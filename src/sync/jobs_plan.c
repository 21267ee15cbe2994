/*
 * jobs_plan.c — planning a custom backfill job into batches (jobs_plan.h):
 * the list resolved or typed into the job's rows, cut into batches per
 * relay (every relay, or in outbox mode the write relays of each chunk's
 * authors), the plan's figures, and a scheduled job's next run cut anew.
 * Store and configuration only: no loop, no pool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/errf.h"
#include "core/limits.h"
#include "core/log.h"
#include "nostr/filter.h"
#include "store/events.h"
#include "store/follows.h"
#include "store/jobs.h"
#include "store/store.h"
#include "sync/job_spec.h"
#include "sync/jobs_plan.h"
#include "sync/subs.h"

/* The relays a plan asks, by URL. */
struct urls {
	char	**v;
	size_t	  n;
};

static void
urls_free(struct urls *u)
{
	sync_urls_free(u->v, u->n);
	memset(u, 0, sizeof(*u));
}

static int
urls_add(struct urls *u, const char *url)
{
	char	**grown;
	size_t	  i;

	for (i = 0; i < u->n; i++)
		if (strcmp(u->v[i], url) == 0)
			return 0;
	if ((grown = realloc(u->v, (u->n + 1) * sizeof(*u->v))) == NULL)
		return -1;
	u->v = grown;
	if ((u->v[u->n] = strdup(url)) == NULL)
		return -1;
	u->n++;
	return 0;
}

/* The bootstrap relays, at most JOBS_MAX_RELAYS. */
static void
boot_urls(const struct jobs_planner *j, struct urls *u)
{
	u->n = sync_urls_parse(config_get(j->cfg, "relays.bootstrap"), &u->v);
	while (u->n > JOBS_MAX_RELAYS)
		free(u->v[--u->n]);
}

/* What cutting a job into batches needs, from a spec or a job row. */
struct cut {
	const struct jobs_planner *j;
	int64_t			 job;
	enum store_job_mode	 mode;
	enum store_job_relays	 relay_mode;
	int64_t			 batch_size;
	int64_t			 items;
	struct urls		 relays;	/* asked (outbox: the bootstrap) */
	int64_t			 index;		/* next batch index */
	int64_t			*per_relay;	/* batches per relays.v / plan */
};

/* The write relays of a job's authors, most shared first. */
struct oplan {
	struct urls	 urls;		/* planned outbox, then bootstrap */
	size_t		 nout;		/* of which outbox */
	int64_t		*per_relay;
};

static int
oplan_add(const char *url, int64_t authors, void *arg)
{
	struct oplan	*op = arg;

	(void)authors;
	return urls_add(&op->urls, url) == -1 ? 1 : 0;
}

struct author_pick {
	const struct oplan	*op;
	size_t			 idx[STORE_AUTHOR_RELAYS_MAX];
	size_t			 n;
};

static int
pick_relay(const uint8_t pk[32], const struct store_author_relay *ar,
    void *arg)
{
	struct author_pick	*ap = arg;
	size_t			 i;

	(void)pk;
	if (!ar->write || ap->n >= STORE_AUTHOR_RELAYS_MAX)
		return 0;
	for (i = 0; i < ap->op->nout; i++)
		if (strcmp(ap->op->urls.v[i], ar->url) == 0) {
			ap->idx[ap->n++] = i;
			break;
		}
	return 0;
}

static int
idx_cmp(const void *a, const void *b)
{
	size_t	x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Add one batch of items [lo, hi) on relay r (mask NULL: all of them). */
static int
cut_add(struct cut *c, int64_t lo, int64_t hi, const uint8_t *mask,
    int64_t count, size_t r, const char *url, int64_t *per_relay)
{
	struct store_job_batch_spec	b = {
		.job = c->job, .index = c->index++, .item_lo = lo,
		.item_hi = hi, .mask = mask,
		.masklen = mask != NULL ? (size_t)(hi - lo + 7) / 8 : 0,
		.items = count, .relay = url,
	};

	if (store_job_batch_add(c->j->st, &b) == -1)
		return -1;
	per_relay[r]++;
	return 0;
}

/*
 * One chunk of authors in outbox mode: each author on at most
 * JOBS_OUTBOX_PER_AUTHOR of its planned write relays (most shared
 * first), or on the bootstrap relays when it has none; one batch per
 * relay with a mask of the chunk's authors it asks.
 */
static int
cut_outbox_chunk(struct cut *c, struct oplan *op, int64_t lo, int64_t hi,
    uint8_t (*items)[32], uint8_t *masks, int64_t *counts)
{
	struct author_pick	 ap = { .op = op };
	size_t			 mlen = JOBS_BATCH_SIZE_MAX / 8 + 1, r, k;
	int64_t			 i, n = hi - lo;

	memset(masks, 0, op->urls.n * mlen);
	memset(counts, 0, op->urls.n * sizeof(*counts));
	if (store_job_items_read(c->j->st, c->job, lo, hi, items) != n)
		return -1;
	for (i = 0; i < n; i++) {
		ap.n = 0;
		if (store_author_relays_each(c->j->st, items[i], pick_relay,
		    &ap) == -1)
			return -1;
		qsort(ap.idx, ap.n, sizeof(ap.idx[0]), idx_cmp);
		if (ap.n > JOBS_OUTBOX_PER_AUTHOR)
			ap.n = JOBS_OUTBOX_PER_AUTHOR;
		if (ap.n == 0)
			for (r = op->nout; r < op->urls.n; r++)
				ap.idx[ap.n++] = r;
		for (k = 0; k < ap.n; k++) {
			masks[ap.idx[k] * mlen + (size_t)i / 8] |=
			    (uint8_t)(1u << (i % 8));
			counts[ap.idx[k]]++;
		}
	}
	for (r = 0; r < op->urls.n; r++)
		if (counts[r] > 0 && cut_add(c, lo, hi, counts[r] == n ? NULL :
		    masks + r * mlen, counts[r], r, op->urls.v[r],
		    op->per_relay) == -1)
			return -1;
	return 0;
}

/* Outbox mode over the whole list. The plan's relays end up in *op. */
static int
cut_outbox(struct cut *c, struct oplan *op)
{
	uint8_t		(*items)[32] = NULL, *masks = NULL;
	int64_t		*counts = NULL, lo;
	size_t		 i;
	int		 rc = -1;

	if (store_job_write_relays(c->j->st, c->job, JOBS_MAX_RELAYS,
	    oplan_add, op) == -1)
		return -1;
	op->nout = op->urls.n;
	for (i = 0; i < c->relays.n; i++)
		if (urls_add(&op->urls, c->relays.v[i]) == -1)
			return -1;
	if (op->urls.n == 0)
		return 0;
	items = calloc((size_t)c->batch_size, 32);
	masks = calloc(op->urls.n, JOBS_BATCH_SIZE_MAX / 8 + 1);
	counts = calloc(op->urls.n, sizeof(*counts));
	op->per_relay = calloc(op->urls.n, sizeof(*op->per_relay));
	if (items == NULL || masks == NULL || counts == NULL ||
	    op->per_relay == NULL)
		goto out;
	for (lo = 0; lo < c->items; lo += c->batch_size)
		if (cut_outbox_chunk(c, op, lo, lo + c->batch_size > c->items ?
		    c->items : lo + c->batch_size, items, masks, counts) == -1)
			goto out;
	rc = 0;
out:
	free(items);
	free(masks);
	free(counts);
	return rc;
}

/*
 * Cut the job's batches: a time window is one batch per relay; a list is
 * chunks of batch_size, each on every relay (chunk by chunk, so all
 * relays work on the first chunk first), or on its authors' relays in
 * outbox mode. The relays and their batch counts go to out.
 */
static int
cut_batches(struct cut *c, struct jobs_plan *out)
{
	struct oplan	 op = { 0 };
	struct urls	*u = &c->relays;
	int64_t		*per, lo, hi;
	size_t		 r;
	int		 rc = -1;

	c->index = 0;
	if (c->mode == STORE_JOB_MODE_AUTHORS &&
	    c->relay_mode == STORE_JOB_RELAYS_OUTBOX) {
		if (cut_outbox(c, &op) == -1)
			goto out;
		u = &op.urls;
		per = op.per_relay;
	} else {
		if ((per = c->per_relay = calloc(u->n + 1, sizeof(*per))) ==
		    NULL)
			goto out;
		for (lo = 0; c->mode == STORE_JOB_MODE_NONE ? lo == 0 :
		    lo < c->items; lo += c->batch_size) {
			hi = c->mode == STORE_JOB_MODE_NONE ? 0 :
			    lo + c->batch_size > c->items ? c->items :
			    lo + c->batch_size;
			for (r = 0; r < u->n; r++)
				if (cut_add(c, lo, hi, NULL, hi - lo, r, u->v[r],
				    per) == -1)
					goto out;
			if (c->mode == STORE_JOB_MODE_NONE)
				break;
		}
	}
	if (out != NULL && (out->relays = calloc(u->n + 1,
	    sizeof(*out->relays))) != NULL)
		for (r = 0; r < u->n; r++) {
			if (per == NULL || per[r] == 0 ||
			    (out->relays[out->nrelays].url = strdup(u->v[r])) ==
			    NULL)
				continue;
			out->relays[out->nrelays++].batches = per[r];
		}
	rc = 0;
out:
	free(op.per_relay);
	urls_free(&op.urls);
	free(c->per_relay);
	c->per_relay = NULL;
	return rc;
}

/*
 * The relays a job asks outside outbox mode (and the fallback of outbox
 * mode): the bootstrap relays, or its custom list (comma-separated).
 */
static void
job_urls(const struct jobs_planner *j, enum store_job_relays mode,
    const char *custom, struct urls *u)
{
	memset(u, 0, sizeof(*u));
	if (mode == STORE_JOB_RELAYS_CUSTOM)
		u->n = sync_urls_parse(custom, &u->v);
	else
		boot_urls(j, u);
}

/* Items typed in a spec into the job's list; with missing_kind0 filtered. */
static int64_t
items_typed(const struct jobs_planner *j, int64_t job, uint8_t (*v)[32],
    size_t n, bool missing_kind0)
{
	int64_t	seq = 0;
	size_t	i;
	int	has;

	for (i = 0; i < n; i++) {
		if (missing_kind0 && (has = store_event_newest(j->st, v[i], 0,
		    NULL, NULL)) != 0) {
			if (has == -1)
				return -1;
			continue;
		}
		if (store_job_item_add(j->st, job, seq++, v[i]) == -1)
			return -1;
	}
	return seq;
}

/* Resolve a store source into the job's list; -1 with err past the limit. */
static int64_t
items_resolve(const struct jobs_planner *j, int64_t job,
    enum store_job_source src, bool missing_kind0, char *err, size_t errlen)
{
	int64_t	n;

	n = store_job_items_resolve(j->st, job, src, missing_kind0,
	    JOBS_MAX_ITEMS);
	if (n < 0)
		return errf(err, errlen, "authors_source: the store failed");
	if (n > JOBS_MAX_ITEMS)
		return errf(err, errlen, "authors_source: %s names more than "
		    "the limit of %d authors", store_job_source_name(src),
		    JOBS_MAX_ITEMS);
	return n;
}

/* The plan's figures once its batches are cut. */
static void
plan_figures(const struct jobs_planner *j, struct jobs_plan *out,
    int64_t job)
{
	int64_t	most = 0, n;
	size_t	r;

	out->requests = out->batches;
	out->pace_ms = config_get_int(j->cfg, "backfill.pace_ms");
	for (r = 0; r < out->nrelays; r++)
		if (out->relays[r].batches > most)
			most = out->relays[r].batches;
	/* Requests to one relay are paced one after the other; relays work
	 * in parallel: the busiest relay sets the time. */
	out->estimated_s = (most * out->pace_ms + 999) / 1000;
	n = out->items < JOBS_PREVIEW_ITEMS ? out->items : JOBS_PREVIEW_ITEMS;
	if (n > 0 && store_job_items_read(j->st, job, 0, n, out->preview) == n)
		out->npreview = (size_t)n;
}

void
jobs_plan_free(struct jobs_plan *p)
{
	size_t	i;

	for (i = 0; i < p->nrelays; i++)
		free(p->relays[i].url);
	free(p->relays);
	free(p->filter_json);
	memset(p, 0, sizeof(*p));
}

/* The spec's shared filter as JSON into a new string. */
static char *
shared_json(const struct job_spec *spec)
{
	struct buf	 b;
	char		*s = NULL;

	buf_init(&b, JOBS_FILTER_MAX_BYTES);
	if (filter_to_json(&spec->shared, &b) == 0)
		s = strdup(buf_cstr(&b));
	buf_free(&b);
	return s;
}

/* Everything of jobs_create inside its transaction; custom: the relays. */
static int
create_rows(const struct jobs_planner *j, const struct job_spec *spec,
    const char *by, const char *custom, struct jobs_plan *out, char *err,
    size_t errlen)
{
	struct store_job	 row = { 0 };
	struct cut		 c = { .j = j };
	snprintf(row.label, sizeof(row.label), "%s", spec->label);
	snprintf(row.preset, sizeof(row.preset), "%s", spec->preset);
	snprintf(row.created_by, sizeof(row.created_by), "%s", by);
	row.filter_json = out->filter_json;
	row.source = spec->source;
	row.missing_kind0 = spec->missing_kind0;
	row.mode = spec->mode;
	row.batch_size = spec->batch_size;
	row.relay_mode = spec->relay_mode;
	row.relay_list = (char *)custom;
	row.created_at = clock_wall_s();
	row.every_s = spec->every_s;
	row.run_since = -1;
	if ((c.job = store_job_insert(j->st, &row)) == -1)
		return errf(err, errlen, "jobs: the store failed");
	if (spec->source == STORE_JOB_SRC_MANUAL)
		c.items = items_typed(j, c.job, spec->authors, spec->nauthors,
		    spec->missing_kind0);
	else if (spec->mode == STORE_JOB_MODE_IDS)
		c.items = items_typed(j, c.job, spec->ids, spec->nids, false);
	else if (spec->source != STORE_JOB_SRC_NONE)
		c.items = items_resolve(j, c.job, spec->source,
		    spec->missing_kind0, err, errlen);
	if (c.items < 0)
		return err[0] ? -1 : errf(err, errlen, "jobs: the store failed");
	c.mode = spec->mode;
	c.relay_mode = spec->relay_mode;
	c.batch_size = spec->batch_size;
	job_urls(j, spec->relay_mode, custom, &c.relays);
	if (c.relays.n == 0) {
		urls_free(&c.relays);
		return errf(err, errlen, "relay_mode: no relay to ask (%s)",
		    spec->relay_mode == STORE_JOB_RELAYS_CUSTOM ? "relays is "
		    "empty" : "relays.bootstrap is empty");
	}
	if (cut_batches(&c, out) == -1 ||
	    store_job_planned(j->st, c.job, c.items, c.index) == -1) {
		urls_free(&c.relays);
		return errf(err, errlen, "jobs: the store failed");
	}
	urls_free(&c.relays);
	out->job = c.job;
	out->mode = spec->mode;
	out->items = c.items;
	out->batches = c.index;
	plan_figures(j, out, c.job);
	return 0;
}

static int
create_in_tx(const struct jobs_planner *j, const struct job_spec *spec,
    const char *by, struct jobs_plan *out, char *err, size_t errlen)
{
	struct buf	list;
	size_t		i;
	int		rc;

	buf_init(&list, JOBS_MAX_RELAYS * (URL_MAX_BYTES + 1));
	for (i = 0; i < spec->nrelays; i++)
		(void)buf_printf(&list, "%s%s", i ? "," : "", spec->relays[i]);
	rc = create_rows(j, spec, by, buf_cstr(&list), out, err, errlen);
	buf_free(&list);
	return rc;
}


int
jobs_plan_create(const struct jobs_planner *j, const struct job_spec *spec,
    const char *by, bool dry_run, struct jobs_plan *out, char *err,
    size_t errlen)
{
	memset(out, 0, sizeof(*out));
	err[0] = '\0';
	if ((out->filter_json = shared_json(spec)) == NULL)
		return errf(err, errlen, "tags: the filter is longer than %d "
		    "bytes", JOBS_FILTER_MAX_BYTES);
	if (store_begin(j->st) == -1) {
		jobs_plan_free(out);
		return errf(err, errlen, "jobs: the store failed");
	}
	if (create_in_tx(j, spec, by, out, err, errlen) == -1) {
		(void)store_rollback(j->st);	/* failing already */
		jobs_plan_free(out);
		return -1;
	}
	if (dry_run) {
		out->job = 0;
		if (store_rollback(j->st) == -1) {
			jobs_plan_free(out);
			return errf(err, errlen, "jobs: the store failed");
		}
		return 0;
	}
	if (store_commit(j->st) == -1) {
		jobs_plan_free(out);
		return errf(err, errlen, "jobs: the store failed");
	}
	log_info("jobs: job %lld (%s) planned by the %s: %lld %s, %lld "
	    "batches on %zu relays", (long long)out->job, spec->label, by,
	    (long long)out->items, store_job_mode_name(spec->mode),
	    (long long)out->batches, out->nrelays);
	return 0;
}

/*
 * Plan a scheduled job's next run: its window starts at the previous
 * run's start (or the filter's since, when later); a list resolved from
 * the store is resolved again; its batches are cut anew. One
 * transaction. 0, or -1 (logged).
 */
int
jobs_plan_rerun(const struct jobs_planner *j, int64_t id)
{
	struct store_job	 row;
	struct filter		 f;
	struct cut		 c = { .j = j, .job = id };
	char			 err[256] = "";
	int64_t			 since;

	if (store_job_get(j->st, id, &row) != 1)
		return -1;
	since = row.started_at > 0 ? row.started_at : row.created_at;
	if (filter_parse_text(&f, row.filter_json, strlen(row.filter_json),
	    err, sizeof(err)) == 0) {
		if ((f.has & FILTER_HAS_SINCE) && f.since > since)
			since = f.since;
		filter_free(&f);
	}
	c.mode = row.mode;
	c.relay_mode = row.relay_mode;
	c.batch_size = row.batch_size;
	c.items = row.items;
	job_urls(j, row.relay_mode, row.relay_list, &c.relays);
	if (store_begin(j->st) == -1)
		goto bad;
	if (store_job_rerun(j->st, id, since) == -1 ||
	    (row.source != STORE_JOB_SRC_NONE &&
	    row.source != STORE_JOB_SRC_MANUAL &&
	    (c.items = items_resolve(j, id, row.source, row.missing_kind0,
	    err, sizeof(err))) < 0) ||
	    store_job_batches_clear(j->st, id) == -1 ||
	    cut_batches(&c, NULL) == -1 ||
	    store_job_planned(j->st, id, c.items, c.index) == -1) {
		(void)store_rollback(j->st);	/* failing already */
		goto bad;
	}
	if (store_commit(j->st) == -1)
		goto bad;
	log_info("jobs: job %lld (%s) runs again (every %llds) from %lld: "
	    "%lld batches", (long long)id, row.label, (long long)row.every_s,
	    (long long)since, (long long)c.index);
	urls_free(&c.relays);
	store_job_clear(&row);
	return 0;
bad:
	log_warnx("jobs: job %lld: the next scheduled run could not be "
	    "planned%s%s", (long long)id, err[0] ? ": " : "", err);
	/* Not recorded (logged): the job stays due; the next tick tries. */
	(void)store_job_skip_run(j->st, id, err[0] ? err :
	    "the next run could not be planned", clock_wall_s());
	urls_free(&c.relays);
	store_job_clear(&row);
	return -1;
}
