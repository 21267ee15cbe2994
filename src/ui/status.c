/*
 * status.c — builds the status document from the store and the running
 * parts. It only reads. Event totals and backfill progress come from the
 * store's families (maintained counters, no count(*) over events).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/limits.h"
#include "core/loop.h"
#include "core/minring.h"
#include "core/procio.h"
#include "relay/pool.h"
#include "store/checkpoint.h"
#include "store/cursors.h"
#include "store/events.h"
#include "store/history.h"
#include "store/jobs.h"
#include "store/relays.h"
#include "store/rules.h"
#include "store/store.h"
#include "store/withdrawn.h"
#include "sync/drain.h"
#include "sync/follow.h"
#include "sync/jobs.h"
#include "sync/negsync.h"
#include "sync/recovery.h"
#include "sync/ingest.h"
#include "sync/retention.h"
#include "sync/sweep.h"
#include "ui/status.h"
#include "uplink/uplink.h"

long
status_rss_bytes(void)
{
	FILE	*f;
	long	 pages = 0, rss = 0;

	if ((f = fopen("/proc/self/statm", "r")) == NULL)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = 0;
	fclose(f);
	return rss * sysconf(_SC_PAGESIZE);
}

/*
 * The write budget: bytes written since start, from the kernel's count
 * when there is one ("proc", the checkpoint processes' own included), else the pages the store wrote ("sqlite",
 * a floor: it leaves out WAL checkpoints and every file but the store),
 * and per event stored since start (null before the first).
 */
static void
add_writes(cJSON *root, const struct app *app)
{
	cJSON		*w = cJSON_AddObjectToObject(root, "writes");
	int64_t		 bytes = procio_write_bytes("/proc/self/io");
	const char	*source = "proc";
	uint64_t	 stored = 0;

	if (w == NULL)
		return;
	if (bytes < 0) {
		bytes = store_pages_written_bytes(app->store);
		source = "sqlite";
	} else if (app->ckpt != NULL)
		bytes += store_ckpt_stats(app->ckpt)->proc_write_bytes;
	if (app->ingest != NULL)
		stored = ingest_stats(app->ingest)->stored;
	cJSON_AddNumberToObject(w, "bytes", (double)bytes);
	cJSON_AddStringToObject(w, "source", source);
	if (stored > 0)
		cJSON_AddNumberToObject(w, "bytes_per_stored_event",
		    (double)(int64_t)((double)bytes / (double)stored + 0.5));
	else
		cJSON_AddNullToObject(w, "bytes_per_stored_event");
}

static void
add_backfill(cJSON *root, struct store *st)
{
	cJSON				*b = cJSON_AddObjectToObject(root,
					    "backfill");
	struct store_cursor_summary	 sum;

	if (store_cursors_summary(st, &sum) == -1)
		memset(&sum, 0, sizeof(sum));
	cJSON_AddNumberToObject(b, "authors_total", (double)sum.authors_total);
	cJSON_AddNumberToObject(b, "authors_complete",
	    (double)sum.authors_complete);
	cJSON_AddNumberToObject(b, "authors_incomplete",
	    (double)sum.authors_incomplete);
	cJSON_AddNumberToObject(b, "authors_draining",
	    (double)sum.authors_draining);
}

/* The store's totals; the inbox object is the uplink's (uplink_status_json). */
static void
add_store(cJSON *root, struct store *st)
{
	cJSON	*s = cJSON_AddObjectToObject(root, "store");
	int64_t	 count, bytes, left;

	if (store_events_totals(st, &count, &bytes) == -1)
		count = bytes = 0;
	cJSON_AddNumberToObject(s, "events", (double)count);
	cJSON_AddNumberToObject(s, "bytes", (double)bytes);
	cJSON_AddStringToObject(s, "state", store_damaged(st) ? "damaged" :
	    "ok");
	/* Rows an older store wrote as text, not yet packed (migration 015). */
	if ((left = store_pack_left(st)) < 0)
		left = 0;
	cJSON_AddNumberToObject(s, "pack_left", (double)left);
}

/* Retention's state and what it evicted since start, under "store". */
static void
add_retention(cJSON *root, const struct app *app)
{
	cJSON	*s = cJSON_GetObjectItem(root, "store");

	if (s == NULL || app->retention == NULL)
		return;
	cJSON_AddStringToObject(s, "retention", retention_state_name(
	    retention_state(app->retention)));
	cJSON_AddNumberToObject(s, "evicted",
	    (double)retention_evicted(app->retention));
}

cJSON *
status_relay_row(const struct store_relay_row *row)
{
	cJSON	*r = cJSON_CreateObject();

	if (r == NULL)
		return NULL;
	cJSON_AddStringToObject(r, "url", row->url);
	cJSON_AddStringToObject(r, "role", row->role);
	cJSON_AddStringToObject(r, "state", row->state);
	cJSON_AddNumberToObject(r, "events", (double)row->events);
	return r;
}

/* One row of the relays table, when no pool runs. */
static void
add_relay_row(const struct store_relay_row *row, void *arg)
{
	cJSON	*r = status_relay_row(row);

	if (r == NULL)
		return;
	if (row->last_error != NULL)
		cJSON_AddStringToObject(r, "last_error", row->last_error);
	else
		cJSON_AddNullToObject(r, "last_error");
	cJSON_AddItemToArray(arg, r);
}

/* Unix seconds t as name, or null when 0 (never). */
static void
add_wall_time(cJSON *o, const char *name, int64_t t)
{
	if (t > 0)
		cJSON_AddNumberToObject(o, name, (double)t);
	else
		cJSON_AddNullToObject(o, name);
}

cJSON *
status_relay_info(const struct pool_relay_info *info)
{
	cJSON	*r = cJSON_CreateObject();

	if (r == NULL)
		return NULL;
	cJSON_AddStringToObject(r, "url", info->url);
	cJSON_AddStringToObject(r, "role", info->role);
	cJSON_AddStringToObject(r, "state", info->state_name);
	cJSON_AddNumberToObject(r, "events", (double)info->events);
	cJSON_AddNumberToObject(r, "reqs", (double)info->reqs);
	cJSON_AddNumberToObject(r, "invalid", (double)info->invalid);
	cJSON_AddNumberToObject(r, "cut_invalid", (double)info->cut_invalid);
	cJSON_AddNumberToObject(r, "unrequested", (double)info->unrequested);
	cJSON_AddNumberToObject(r, "dropped", (double)info->dropped);
	cJSON_AddNumberToObject(r, "subs_open", (double)info->subs_open);
	cJSON_AddNumberToObject(r, "subs_queued", (double)info->subs_queued);
	if (info->last_error[0] != '\0')
		cJSON_AddStringToObject(r, "last_error", info->last_error);
	else
		cJSON_AddNullToObject(r, "last_error");
	add_wall_time(r, "last_error_at", info->last_error[0] != '\0' ?
	    info->last_error_at : 0);
	add_wall_time(r, "last_open_at", info->last_open_at);
	return r;
}

/*
 * What is true of a relay's connection in a word or two: a relay that is
 * not open is never "connected", whatever its recovery says.
 */
static const char *
relay_health(const struct pool_relay_info *info, const char *recovery)
{
	if (info->state == RELAY_OPEN)
		return recovery != NULL ? recovery : "connected";
	if (info->last_open_at == 0)
		return "never opened";
	if (info->state == RELAY_BACKOFF)
		return "backing off";
	if (info->state == RELAY_FAILED || info->state == RELAY_DISABLED)
		return "not connected";
	return "reconnecting";
}

void
status_relay_sync(const struct app *app, const struct pool_relay_info *info,
    cJSON *r)
{
	struct recovery_summary	 sum;
	const char		*rec = NULL;

	if (app->negsync != NULL) {
		cJSON_AddStringToObject(r, "negentropy", negsync_support_name(
		    negsync_support(app->negsync, info->url)));
		if (negsync_support_why(app->negsync, info->url)[0] != '\0')
			cJSON_AddStringToObject(r, "negentropy_why",
			    negsync_support_why(app->negsync, info->url));
		if (recovery_summary(negsync_recovery(app->negsync), info->url,
		    &sum) == 0) {
			rec = recovery_health_name(sum.health);
			cJSON_AddNumberToObject(r, "recovery_pending",
			    (double)sum.pending);
		}
	}
	cJSON_AddStringToObject(r, "health", relay_health(info, rec));
}

/* The pool's live view of every relay it runs. */
static void
add_relays_pool(cJSON *list, const struct app *app)
{
	struct pool_relay_info	 info;
	size_t			 i, n = pool_relay_count(app->pool);
	cJSON			*r;

	for (i = 0; i < n; i++) {
		if (pool_relay_info(app->pool, i, &info) == -1 ||
		    (r = status_relay_info(&info)) == NULL)
			continue;
		status_relay_sync(app, &info, r);
		cJSON_AddItemToArray(list, r);
	}
}

static int
sum_recovery(const struct recovery_summary *s, void *arg)
{
	int64_t	*t = arg;

	t[0] += s->pending;
	t[1] += s->expired;
	t[2] += s->in_flight;
	t[3]++;
	return 0;
}

/*
 * What idle waits for in recovery (app_recovery_wait): recovery.waiting
 * {relay, ids, until} and a sentence, "waiting", at the top; nothing when
 * recovery holds idle back for nothing.
 */
static void
add_recovery_wait(cJSON *root, cJSON *r, const struct app *app)
{
	char		 url[URL_MAX_BYTES + 1], hm[16], line[URL_MAX_BYTES + 96];
	int64_t		 n, until;
	time_t		 t;
	struct tm	 tm;
	cJSON		*w;

	if (!app_recovery_wait(app, url, sizeof(url), &n, &until))
		return;
	t = (time_t)(until / 1000);
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(hm, sizeof(hm), "%H:%M", &tm) == 0)
		snprintf(hm, sizeof(hm), "?");
	if ((w = cJSON_AddObjectToObject(r, "waiting")) != NULL) {
		cJSON_AddStringToObject(w, "relay", url);
		cJSON_AddNumberToObject(w, "ids", (double)n);
		cJSON_AddNumberToObject(w, "until", (double)(until / 1000));
	}
	snprintf(line, sizeof(line), "waiting for %lld ids from relay %s "
	    "until %s UTC", (long long)n, url, hm);
	cJSON_AddStringToObject(root, "waiting", line);
}

/*
 * NIP-77 sync and the recovery index: what was reconciled, fetched and
 * handed to recovery since start; ids pending and expired now.
 */
static void
add_negentropy(cJSON *root, const struct app *app)
{
	const struct negsync_stats	*ns;
	int64_t				 t[4] = { 0 };
	cJSON				*o, *r;

	if (app->negsync == NULL)
		return;
	ns = negsync_stats(app->negsync);
	if ((o = cJSON_AddObjectToObject(root, "negentropy")) == NULL)
		return;
	cJSON_AddNumberToObject(o, "steps", (double)ns->steps);
	cJSON_AddNumberToObject(o, "complete", (double)ns->complete);
	cJSON_AddNumberToObject(o, "recovering", (double)ns->recovering);
	cJSON_AddNumberToObject(o, "refused", (double)ns->refused);
	cJSON_AddNumberToObject(o, "failed", (double)ns->failed);
	cJSON_AddNumberToObject(o, "sessions", (double)ns->sessions);
	cJSON_AddNumberToObject(o, "bytes_out", (double)ns->bytes_out);
	cJSON_AddNumberToObject(o, "bytes_in", (double)ns->bytes_in);
	cJSON_AddNumberToObject(o, "need", (double)ns->need);
	cJSON_AddNumberToObject(o, "fetched", (double)ns->fetched);
	cJSON_AddNumberToObject(o, "withdrawn", (double)ns->withdrawn);
	cJSON_AddNumberToObject(o, "over_budget", (double)ns->over_budget);
	(void)recovery_each(negsync_recovery(app->negsync), sum_recovery, t);
	if ((r = cJSON_AddObjectToObject(root, "recovery")) == NULL)
		return;
	cJSON_AddNumberToObject(r, "pending", (double)t[0]);
	cJSON_AddNumberToObject(r, "expired", (double)t[1]);
	cJSON_AddNumberToObject(r, "in_flight", (double)t[2]);
	cJSON_AddNumberToObject(r, "relays", (double)t[3]);
	cJSON_AddNumberToObject(r, "attempts", (double)ns->recovery_attempts);
	cJSON_AddNumberToObject(r, "recovered", (double)ns->recovered);
	cJSON_AddNumberToObject(r, "registered", (double)ns->registered);
	add_recovery_wait(root, r, app);
}

/*
 * Custom jobs: how many are in each status, the events they fetched (this
 * run of each), and the running one with its progress.
 */
static void
add_jobs(cJSON *root, const struct app *app)
{
	struct store_jobs_summary	 sum;
	struct store_job		 j;
	cJSON				*o, *r;
	int				 s;

	if ((o = cJSON_AddObjectToObject(root, "jobs")) == NULL ||
	    store_jobs_summary(app->store, &sum) == -1)
		return;
	for (s = 0; s < STORE_JOB_NSTATUS; s++)
		cJSON_AddNumberToObject(o, store_job_status_name(
		    (enum store_job_status)s), (double)sum.by_status[s]);
	cJSON_AddNumberToObject(o, "scheduled", (double)sum.scheduled);
	cJSON_AddNumberToObject(o, "events_fetched",
	    (double)sum.events_fetched);
	cJSON_AddNumberToObject(o, "events_new", (double)sum.events_new);
	cJSON_AddNumberToObject(o, "in_flight", app->jobs != NULL ?
	    (double)jobs_in_flight(app->jobs) : 0);
	if (sum.running_id == 0 ||
	    store_job_get(app->store, sum.running_id, &j) != 1) {
		cJSON_AddNullToObject(o, "current");
		return;
	}
	if ((r = cJSON_AddObjectToObject(o, "current")) != NULL) {
		cJSON_AddNumberToObject(r, "job", (double)j.id);
		cJSON_AddStringToObject(r, "label", j.label);
		cJSON_AddNumberToObject(r, "batches_total",
		    (double)j.total_batches);
		cJSON_AddNumberToObject(r, "batches_done",
		    (double)j.done_batches);
		cJSON_AddNumberToObject(r, "events_fetched",
		    (double)j.events_fetched);
	}
	store_job_clear(&j);
}

static void
add_relays(cJSON *root, const struct app *app)
{
	cJSON	*list = cJSON_AddArrayToObject(root, "relays");

	/* Unread rows (logged) are left out, as other unread counts show 0. */
	if (app->pool != NULL)
		add_relays_pool(list, app);
	else
		(void)store_relays_each(app->store, add_relay_row, list);
}

double
status_ingest_rate(const struct app *app)
{
	const struct minring	*r;
	uint64_t		 now = clock_mono_ms();
	uint32_t		 last[2];
	double			 secs = (double)(now % MINRING_MINUTE_MS) / 1000;

	if (app->ingest == NULL)
		return 0;
	r = ingest_minutes(app->ingest);
	minring_read(r, now, last, 2);
	if (minring_known(r, now) >= 2)
		return (double)(int64_t)((last[0] + last[1]) / (60 + secs) *
		    10 + 0.5) / 10;
	return (double)(int64_t)(last[1] / (secs < 1 ? 1 : secs) * 10 +
	    0.5) / 10;
}

struct history_fill {
	int64_t	*counts;
	size_t	 nb;
	int64_t	 first;
};

static int
history_row(int64_t start, int64_t stored, void *arg)
{
	struct history_fill	*f = arg;
	int64_t			 i = (start - f->first) /
	    INGEST_HISTORY_BUCKET_S;

	if (start >= f->first && i < (int64_t)f->nb)
		f->counts[i] += stored;
	return 0;
}

int
status_history(const struct app *app, int64_t *counts, size_t nb,
    int64_t *first, int64_t *since)
{
	struct history_fill	 f = { .counts = counts, .nb = nb };
	int64_t			 now = clock_wall_s(), start[2], count[2];
	int64_t			 sum;
	size_t			 i, n;

	memset(counts, 0, nb * sizeof(*counts));
	*first = *since = 0;
	if (app->store == NULL || now < INGEST_HISTORY_WALL_MIN_S || nb == 0)
		return -1;
	f.first = now - now % INGEST_HISTORY_BUCKET_S -
	    (int64_t)(nb - 1) * INGEST_HISTORY_BUCKET_S;
	*first = f.first;
	if (store_history_each(app->store, f.first, history_row, &f) == -1 ||
	    store_history_sum(app->store, now, &sum, since) == -1)
		return -1;
	if (app->ingest != NULL) {
		n = ingest_history_pending(app->ingest, start, count);
		for (i = 0; i < n; i++) {
			(void)history_row(start[i], count[i], &f);
			if (*since == 0 || start[i] < *since)
				*since = start[i];
		}
	}
	return 0;
}

/* The stored-events history: the last day, the last week, kept since. */
static void
add_history(cJSON *o, const struct app *app)
{
	int64_t	counts[INGEST_HISTORY_S / INGEST_HISTORY_BUCKET_S];
	int64_t	first, since, day = 0, week = 0;
	size_t	i, nb = sizeof(counts) / sizeof(counts[0]);

	if (status_history(app, counts, nb, &first, &since) == -1) {
		cJSON_AddNullToObject(o, "stored_24h");
		cJSON_AddNullToObject(o, "stored_7d");
		cJSON_AddNullToObject(o, "history_since");
		return;
	}
	for (i = 0; i < nb; i++) {
		week += counts[i];
		if (i >= nb - 86400 / INGEST_HISTORY_BUCKET_S)
			day += counts[i];
	}
	cJSON_AddNumberToObject(o, "stored_24h", (double)day);
	cJSON_AddNumberToObject(o, "stored_7d", (double)week);
	if (since != 0)
		cJSON_AddNumberToObject(o, "history_since", (double)since);
	else
		cJSON_AddNullToObject(o, "history_since");
}

/*
 * What ingest did with every event relays sent since start: stored, or
 * why not (ARCHITECTURE.md §11: a bad event is counted and dropped).
 */
static void
add_ingest(cJSON *root, const struct app *app)
{
	const struct ingest_stats	*st;
	cJSON				*o;

	if (app->ingest == NULL ||
	    (o = cJSON_AddObjectToObject(root, "ingest")) == NULL)
		return;
	st = ingest_stats(app->ingest);
	cJSON_AddNumberToObject(o, "received", (double)st->received);
	cJSON_AddNumberToObject(o, "stored", (double)st->stored);
	cJSON_AddNumberToObject(o, "duplicates", (double)st->duplicates);
	cJSON_AddNumberToObject(o, "invalid", (double)st->invalid);
	cJSON_AddNumberToObject(o, "too_large", (double)st->too_large);
	cJSON_AddNumberToObject(o, "unrequested", (double)st->unrequested);
	cJSON_AddNumberToObject(o, "errors", (double)st->errors);
	cJSON_AddNumberToObject(o, "superseded", (double)st->superseded);
	cJSON_AddNumberToObject(o, "replaced", (double)st->replaced);
	cJSON_AddNumberToObject(o, "expired", (double)st->expired);
	cJSON_AddNumberToObject(o, "ephemeral", (double)st->ephemeral);
	cJSON_AddNumberToObject(o, "deleted", (double)st->deleted);
	cJSON_AddNumberToObject(o, "vanished", (double)st->vanished);
	cJSON_AddNumberToObject(o, "withdrawn", (double)st->withdrawn);
	cJSON_AddNumberToObject(o, "sig_checks", (double)st->sig_checks);
	cJSON_AddNumberToObject(o, "transactions", (double)st->transactions);
	cJSON_AddNumberToObject(o, "lost_batches", (double)st->lost_batches);
	cJSON_AddNumberToObject(o, "rate_per_s", status_ingest_rate(app));
	add_history(o, app);
}

/*
 * The authors' rules (ARCHITECTURE.md §5a): what they removed from the
 * store since start, per rule, the tombstones held and the work still
 * going (purges of vanished authors, the conversion of an older store).
 */
static void
add_rules(cJSON *root, const struct app *app)
{
	const struct store_rules_stats	*rs = store_rules_stats(app->store);
	const struct sweep_stats	*ss;
	cJSON				*o, *r;

	if ((o = cJSON_AddObjectToObject(root, "rules")) == NULL ||
	    (r = cJSON_AddObjectToObject(o, "removed")) == NULL)
		return;
	cJSON_AddNumberToObject(r, "superseded", (double)rs->superseded);
	cJSON_AddNumberToObject(r, "deleted", (double)rs->deleted);
	cJSON_AddNumberToObject(r, "expired", (double)rs->expired);
	cJSON_AddNumberToObject(r, "vanished", (double)rs->vanished);
	cJSON_AddNumberToObject(r, "ephemeral", (double)rs->ephemeral);
	cJSON_AddNumberToObject(o, "kept_aside", (double)rs->kept_aside);
	cJSON_AddNumberToObject(o, "tombstones",
	    (double)store_withdrawn_count(app->store));
	cJSON_AddNumberToObject(o, "vanished_authors",
	    (double)store_vanished_count(app->store));
	cJSON_AddNumberToObject(o, "vanish_pending",
	    (double)store_vanished_pending(app->store));
	ss = app->sweep != NULL ? sweep_stats(app->sweep) : NULL;
	cJSON_AddNumberToObject(o, "conversion_left",
	    ss != NULL ? (double)ss->fill_left : 0);
}

/*
 * The loop's turns since start: how many, the longest, and how many were
 * longer than each bound (a request waits out the turn it arrives in).
 */
static void
add_loop(cJSON *root, const struct app *app)
{
	const struct loop_turn_stats	*t = loop_turn_stats(app->loop);
	cJSON				*o, *over;
	char				 key[16];
	size_t				 i;

	if ((o = cJSON_AddObjectToObject(root, "loop")) == NULL)
		return;
	cJSON_AddNumberToObject(o, "turns", (double)t->turns);
	cJSON_AddNumberToObject(o, "turn_max_ms",
	    (double)((t->max_us + 500) / 1000));
	if ((over = cJSON_AddObjectToObject(o, "turns_over_ms")) == NULL)
		return;
	for (i = 0; i < LOOP_TURN_NBOUNDS; i++) {
		snprintf(key, sizeof(key), "%u", loop_turn_bounds_ms[i]);
		cJSON_AddNumberToObject(over, key, (double)t->over[i]);
	}
}

/*
 * The WAL's checkpoints since start: whether the checkpoint process is
 * up, how often one was started and found gone, complete copies, the
 * loop's own catch-ups, and failed calls.
 */
static void
add_checkpoint(cJSON *root, const struct app *app)
{
	const struct store_ckpt_stats	*s;
	cJSON				*o;

	if (app->ckpt == NULL ||
	    (o = cJSON_AddObjectToObject(root, "checkpoint")) == NULL)
		return;
	s = store_ckpt_stats(app->ckpt);
	cJSON_AddBoolToObject(o, "process",
	    store_ckpt_process_pid(app->ckpt) != 0);
	cJSON_AddNumberToObject(o, "process_starts", (double)s->proc_starts);
	cJSON_AddNumberToObject(o, "process_deaths", (double)s->proc_deaths);
	cJSON_AddNumberToObject(o, "completions", (double)s->completions);
	cJSON_AddNumberToObject(o, "catch_ups", (double)s->catch_ups);
	cJSON_AddNumberToObject(o, "hold_timeouts", (double)s->hold_timeouts);
	cJSON_AddNumberToObject(o, "failures", (double)s->failures);
}

/* What the store and memory are measured against (ARCHITECTURE.md §10). */
static void
add_budgets(cJSON *root, struct app *app)
{
	cJSON	*s = cJSON_GetObjectItem(root, "store");

	if (s != NULL)
		cJSON_AddNumberToObject(s, "max_bytes",
		    (double)config_get_int(app->cfg, "store.max_bytes"));
	cJSON_AddNumberToObject(root, "rss_budget_bytes",
	    (double)STATUS_RSS_BUDGET_BYTES);
}

/* The sections parts registered (struct app_section). */
static void
add_sections(cJSON *root, const struct app *app)
{
	const struct app_section	*s;
	size_t				 i;

	for (i = 0; i < APP_MAX_SECTIONS; i++) {
		s = &app->sections[i];
		if (s->add != NULL)
			s->add(s->part, cJSON_AddObjectToObject(root, s->name));
	}
}

cJSON *
status_json(struct app *app)
{
	cJSON	*root = cJSON_CreateObject();

	if (root == NULL)
		return NULL;
	cJSON_AddStringToObject(root, "version", CACHEBOX_VERSION);
	cJSON_AddNumberToObject(root, "uptime_s",
	    (double)((clock_mono_ms() - app->started_ms) / 1000));
	cJSON_AddNumberToObject(root, "rss_bytes", (double)status_rss_bytes());
	cJSON_AddBoolToObject(root, "idle", app_idle(app));
	cJSON_AddStringToObject(root, "npub", app->npub);
	add_backfill(root, app->store);
	add_store(root, app->store);
	add_relays(root, app);
	add_ingest(root, app);
	add_rules(root, app);
	add_writes(root, app);
	add_retention(root, app);
	add_budgets(root, app);
	add_loop(root, app);
	add_checkpoint(root, app);
	add_negentropy(root, app);
	add_jobs(root, app);
	add_sections(root, app);
	uplink_status_json(app->uplink, app->store, root);
	return root;
}
