/*
 * cmd_jobs.c — `jobs new`, `jobs dry-run`, `jobs list`, `jobs show`,
 * `jobs cancel`, `jobs retry`, `jobs delete` and `jobs presets`. The
 * arguments are checked by sync/job_spec.c (every message names its
 * field); planning, cancelling and retrying go through the planner
 * (sync/jobs.h), so a running job's requests are closed before its rows
 * change; listings read the store's jobs family. These handlers never
 * write SQL themselves, and a listing is bounded (JOBS_LIST_MAX jobs,
 * JOBS_SHOW_MAX_BATCHES batches) so an answer fits CTL_MAX_REPLY.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/hex.h"
#include "core/limits.h"
#include "nostr/nip19.h"
#include "store/jobs.h"
#include "sync/job_spec.h"
#include "sync/jobs.h"
#include "ui/cmd_jobs.h"
#include "ui/commands.h"
#include "ui/reply.h"

static const char *
arg(const cJSON *args, const char *name)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(args, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *
origin_name(enum cmd_origin from)
{
	return from == CMD_FROM_CONSOLE ? "console" : from == CMD_FROM_CTL ?
	    "ctl" : "web";
}

/* args["job"] as a job number into *id; NULL, or an error object. */
static cJSON *
arg_job(const char *cmd, const cJSON *args, int64_t *id)
{
	const char	*s = arg(args, "job");
	char		*end;
	long long	 v;

	*id = 0;	/* no job: the error object may be NULL (out of memory) */
	if (s == NULL || *s == '\0')
		return commands_error("%s: job: missing (a job number)", cmd);
	v = strtoll(s, &end, 10);
	if (*end != '\0' || v <= 0)
		return commands_error("%s: job: '%.40s' is not a job number",
		    cmd, s);
	*id = v;
	return NULL;
}

/* Unix seconds, or null when 0 (not set). */
static void
add_time(cJSON *o, const char *name, int64_t t)
{
	if (t > 0)
		cJSON_AddNumberToObject(o, name, (double)t);
	else
		cJSON_AddNullToObject(o, name);
}

static void
add_text_or_null(cJSON *o, const char *name, const char *text)
{
	if (text != NULL && *text != '\0')
		cJSON_AddStringToObject(o, name, text);
	else
		cJSON_AddNullToObject(o, name);
}

/*
 * "kinds:0 authors:9178 since 2023-11-14 22:13:20 UTC": the filter column,
 * times as UTC dates.
 */
static void
add_summary(cJSON *o, const struct store_job *j, const cJSON *filter)
{
	char		 s[256], when[40];
	size_t		 n = 0;
	const cJSON	*m, *v;

	s[0] = '\0';
	cJSON_ArrayForEach(m, filter) {
		if (n >= sizeof(s) - 32)
			break;
		if (cJSON_IsNumber(m) && (strcmp(m->string, "since") == 0 ||
		    strcmp(m->string, "until") == 0))
			n += (size_t)snprintf(s + n, sizeof(s) - n, "%s%s %s",
			    n ? " " : "", m->string, clock_utc_text(
			    (int64_t)m->valuedouble, when, sizeof(when)));
		else if (cJSON_IsNumber(m))
			n += (size_t)snprintf(s + n, sizeof(s) - n, "%s%s:%lld",
			    n ? " " : "", m->string, (long long)m->valuedouble);
		else if (cJSON_IsArray(m)) {
			n += (size_t)snprintf(s + n, sizeof(s) - n, "%s%s:", n ?
			    " " : "", m->string);
			cJSON_ArrayForEach(v, m) {
				if (n >= sizeof(s) - 32)
					break;
				if (cJSON_IsNumber(v))
					n += (size_t)snprintf(s + n, sizeof(s) -
					    n, "%s%lld", v == m->child ? "" :
					    ",", (long long)v->valuedouble);
				else if (cJSON_IsString(v))
					n += (size_t)snprintf(s + n, sizeof(s) -
					    n, "%s%.24s", v == m->child ? "" :
					    ",", v->valuestring);
			}
		}
	}
	if (j->mode != STORE_JOB_MODE_NONE && n < sizeof(s) - 32)
		snprintf(s + n, sizeof(s) - n, "%s%s:%lld", n ? " " : "",
		    store_job_mode_name(j->mode), (long long)j->items);
	cJSON_AddStringToObject(o, "summary", s);
}

/* One job as every listing shows it. */
static cJSON *
job_json(const struct store_job *j)
{
	cJSON	*o = cJSON_CreateObject(), *f, *since;
	char	 every[32];

	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "job", (double)j->id);
	cJSON_AddStringToObject(o, "label", j->label);
	cJSON_AddStringToObject(o, "status", store_job_status_name(j->status));
	if ((f = cJSON_Parse(j->filter_json)) == NULL)
		f = cJSON_CreateObject();
	add_summary(o, j, f);
	cJSON_AddItemToObject(o, "filter", f);
	cJSON_AddStringToObject(o, "preset", j->preset);
	cJSON_AddStringToObject(o, "authors_source",
	    store_job_source_name(j->source));
	cJSON_AddBoolToObject(o, "only_missing_kind0", j->missing_kind0);
	cJSON_AddStringToObject(o, "batch_mode", store_job_mode_name(j->mode));
	cJSON_AddNumberToObject(o, "batch_size", (double)j->batch_size);
	if (j->mode != STORE_JOB_MODE_NONE)
		cJSON_AddNumberToObject(o, j->mode == STORE_JOB_MODE_IDS ?
		    "ids" : "authors", (double)j->items);
	cJSON_AddStringToObject(o, "relay_mode",
	    store_job_relays_name(j->relay_mode));
	cJSON_AddStringToObject(o, "relay_list", j->relay_list);
	cJSON_AddNumberToObject(o, "batches_total", (double)j->total_batches);
	cJSON_AddNumberToObject(o, "batches_done", (double)j->done_batches);
	cJSON_AddNumberToObject(o, "events_fetched", (double)j->events_fetched);
	cJSON_AddNumberToObject(o, "events_new", (double)j->events_new);
	cJSON_AddNumberToObject(o, "requests", (double)j->requests);
	add_text_or_null(o, "error", j->error);
	add_time(o, "created_at", j->created_at);
	add_time(o, "started_at", j->started_at);
	add_time(o, "completed_at", j->completed_at);
	cJSON_AddStringToObject(o, "created_by", j->created_by);
	/* The window of this run: a schedule's since moves, until is fixed
	 * when the run starts. */
	since = cJSON_GetObjectItemCaseSensitive(f, "since");
	if (j->run_since >= 0 && (!cJSON_IsNumber(since) ||
	    since->valuedouble < (double)j->run_since))
		cJSON_AddNumberToObject(o, "since", (double)j->run_since);
	else if (cJSON_IsNumber(since))
		cJSON_AddNumberToObject(o, "since", since->valuedouble);
	else
		cJSON_AddNullToObject(o, "since");
	if (j->run_until >= 0)
		cJSON_AddNumberToObject(o, "until", (double)j->run_until);
	else
		cJSON_AddNullToObject(o, "until");
	if (j->every_s > 0) {
		job_every_format(j->every_s, every, sizeof(every));
		cJSON_AddStringToObject(o, "every", every);
	} else
		cJSON_AddNullToObject(o, "every");
	add_time(o, "next_run_at", j->next_run_at);
	add_time(o, "prev_run_at", j->prev_run_at);
	cJSON_AddNumberToObject(o, "runs", (double)j->runs);
	return o;
}

/* ---- new and dry-run ------------------------------------------------- */

static void
args_read(const cJSON *args, struct job_args *a)
{
	a->label = arg(args, "label");
	a->kinds = arg(args, "kinds");
	a->authors_source = arg(args, "authors_source");
	a->authors = arg(args, "authors");
	a->only_missing_kind0 = arg(args, "only_missing_kind0");
	a->ids = arg(args, "ids");
	a->since = arg(args, "since");
	a->until = arg(args, "until");
	a->limit = arg(args, "limit");
	a->tags = arg(args, "tags");
	a->batch_size = arg(args, "batch_size");
	a->relay_mode = arg(args, "relay_mode");
	a->relays = arg(args, "relays");
	a->preset = arg(args, "preset");
	a->every = arg(args, "every");
}

/* The plan as an answer; dry adds what only a dry run shows. */
static cJSON *
plan_json(const struct job_spec *spec, const struct jobs_plan *p, bool dry)
{
	cJSON	*o = cJSON_CreateObject(), *l, *r;
	char	 text[96], every[32];
	size_t	 i;

	if (o == NULL)
		return NULL;
	if (dry)
		cJSON_AddBoolToObject(o, "dry_run", true);
	else
		cJSON_AddNumberToObject(o, "job", (double)p->job);
	cJSON_AddNumberToObject(o, "batches", (double)p->batches);
	cJSON_AddStringToObject(o, "label", spec->label);
	if ((l = cJSON_Parse(p->filter_json)) != NULL)
		cJSON_AddItemToObject(o, "filter", l);
	cJSON_AddStringToObject(o, "authors_source",
	    store_job_source_name(spec->source));
	cJSON_AddStringToObject(o, "batch_mode", store_job_mode_name(p->mode));
	cJSON_AddNumberToObject(o, "batch_size", (double)spec->batch_size);
	if (p->mode != STORE_JOB_MODE_NONE)
		cJSON_AddNumberToObject(o, p->mode == STORE_JOB_MODE_IDS ?
		    "ids" : "authors", (double)p->items);
	if (dry && p->mode != STORE_JOB_MODE_NONE && (l =
	    cJSON_AddArrayToObject(o, p->mode == STORE_JOB_MODE_IDS ?
	    "ids_first" : "authors_first")) != NULL)
		for (i = 0; i < p->npreview; i++) {
			if (p->mode == STORE_JOB_MODE_IDS)
				hex_encode(p->preview[i], 32, text,
				    sizeof(text));
			else
				nip19_encode32(NIP19_NPUB, p->preview[i], text,
				    sizeof(text));
			cJSON_AddItemToArray(l, cJSON_CreateString(text));
		}
	cJSON_AddStringToObject(o, "relay_mode",
	    store_job_relays_name(spec->relay_mode));
	if ((l = cJSON_AddArrayToObject(o, "relays")) != NULL)
		for (i = 0; i < p->nrelays; i++)
			if ((r = cJSON_CreateObject()) != NULL) {
				cJSON_AddStringToObject(r, "url",
				    p->relays[i].url);
				cJSON_AddNumberToObject(r, "batches",
				    (double)p->relays[i].batches);
				cJSON_AddStringToObject(r, "way",
				    p->relays[i].way);
				cJSON_AddStringToObject(r, "way_why",
				    p->relays[i].way_why);
				cJSON_AddItemToArray(l, r);
			}
	cJSON_AddNumberToObject(o, "requests", (double)p->requests);
	if (dry) {
		cJSON_AddNumberToObject(o, "pace_ms", (double)p->pace_ms);
		cJSON_AddNumberToObject(o, "estimated_s",
		    (double)p->estimated_s);
	}
	if (spec->every_s > 0) {
		job_every_format(spec->every_s, every, sizeof(every));
		cJSON_AddStringToObject(o, "every", every);
	}
	if ((l = cJSON_AddArrayToObject(o, "warnings")) != NULL)
		for (i = 0; i < spec->nwarnings; i++)
			cJSON_AddItemToArray(l,
			    cJSON_CreateString(spec->warnings[i]));
	return o;
}

static cJSON *
plan(struct app *app, const cJSON *args, enum cmd_origin from, bool dry)
{
	const char	*name = dry ? "jobs dry-run" : "jobs new";
	struct job_args	 a = { 0 };
	struct job_spec	 spec;
	struct jobs_plan p;
	char		 err[512];
	cJSON		*r;

	if (app->jobs == NULL)
		return commands_error("%s: the planners are not running", name);
	args_read(args, &a);
	if (job_spec_parse(&a, &spec, err, sizeof(err)) == -1)
		return commands_error("%s: %s", name, err);
	if (jobs_create(app->jobs, &spec, origin_name(from), dry, &p, err,
	    sizeof(err)) == -1) {
		job_spec_free(&spec);
		return commands_error("%s: %s", name, err);
	}
	r = plan_json(&spec, &p, dry);
	jobs_plan_free(&p);
	job_spec_free(&spec);
	return r;
}

cJSON *
cmd_jobs_new(struct app *app, const cJSON *args, enum cmd_origin from)
{
	return plan(app, args, from, false);
}

cJSON *
cmd_jobs_dry_run(struct app *app, const cJSON *args, enum cmd_origin from)
{
	return plan(app, args, from, true);
}

/* ---- listings ---------------------------------------------------------- */

static int
list_cb(const struct store_job *j, void *arg)
{
	cJSON	*o = job_json(j);

	if (o != NULL)
		cJSON_AddItemToArray(arg, o);
	return 0;
}

cJSON *
cmd_jobs_list(struct app *app, const cJSON *args, enum cmd_origin from)
{
	cJSON	*r = cJSON_CreateObject(), *l;

	if (r == NULL || (l = cJSON_AddArrayToObject(r, "jobs")) == NULL ||
	    store_jobs_each(app->store, JOBS_LIST_MAX, list_cb, l) == -1) {
		cJSON_Delete(r);
		return commands_error("jobs list: the store failed");
	}
	return r;
}

static int
batch_cb(const struct store_job_batch *b, void *arg)
{
	cJSON	*o = cJSON_CreateObject();

	if (o == NULL)
		return 1;
	cJSON_AddNumberToObject(o, "index", (double)b->index);
	cJSON_AddStringToObject(o, "relay", b->relay);
	cJSON_AddStringToObject(o, "status", store_job_status_name(b->status));
	add_text_or_null(o, "reason", b->error);
	if (b->status == STORE_JOB_INCOMPLETE)
		cJSON_AddStringToObject(o, "why", store_cursor_why_text(b->why));
	cJSON_AddNumberToObject(o, "items", (double)b->items);
	cJSON_AddNumberToObject(o, "first_item", (double)b->item_lo);
	if (b->started)
		cJSON_AddNumberToObject(o, "until", (double)b->until_cursor);
	else
		cJSON_AddNullToObject(o, "until");
	if (b->has_gap)
		cJSON_AddNumberToObject(o, "gap_since", (double)b->gap_since);
	cJSON_AddNumberToObject(o, "pages", (double)b->pages);
	cJSON_AddNumberToObject(o, "events_fetched",
	    (double)b->events_fetched);
	cJSON_AddNumberToObject(o, "attempts", (double)b->attempts);
	cJSON_AddItemToArray(arg, o);
	return 0;
}

cJSON *
cmd_jobs_show(struct app *app, const cJSON *args, enum cmd_origin from)
{
	struct store_job	 j;
	int64_t			 id, counts[STORE_JOB_NSTATUS], next_ms, n;
	cJSON			*r, *c, *l;
	int			 rc, s;

	if ((r = arg_job("jobs show", args, &id)) != NULL)
		return r;
	if ((rc = store_job_get(app->store, id, &j)) != 1)
		return commands_error("jobs show: %s", rc == 0 ? "no such job" :
		    "the store failed");
	r = job_json(&j);
	store_job_clear(&j);
	if (r == NULL || store_job_batch_counts(app->store, id, counts,
	    &next_ms) == -1) {
		cJSON_Delete(r);
		return commands_error("jobs show: the store failed");
	}
	c = cJSON_AddObjectToObject(r, "batch_counts");
	for (s = 0; s < STORE_JOB_NSTATUS; s++)
		cJSON_AddNumberToObject(c, store_job_status_name(
		    (enum store_job_status)s), (double)counts[s]);
	cJSON_AddNumberToObject(r, "in_flight", app->jobs != NULL &&
	    jobs_running(app->jobs) == id ? (double)jobs_in_flight(app->jobs) :
	    0);
	l = cJSON_AddArrayToObject(r, "batches");
	n = store_job_batches_unfinished(app->store, id, JOBS_SHOW_MAX_BATCHES,
	    batch_cb, l);
	cJSON_AddBoolToObject(r, "batches_truncated", n >=
	    JOBS_SHOW_MAX_BATCHES);
	return r;
}

/* ---- changes ------------------------------------------------------------ */

cJSON *
cmd_jobs_cancel(struct app *app, const cJSON *args, enum cmd_origin from)
{
	int64_t	 id;
	cJSON	*r;
	int	 rc;

	if ((r = arg_job("jobs cancel", args, &id)) != NULL)
		return r;
	if (app->jobs == NULL)
		return commands_error("jobs cancel: the planners are not "
		    "running");
	if ((rc = jobs_cancel(app->jobs, id)) == -1)
		return commands_error("jobs cancel: the store failed");
	if (rc == 0)
		return commands_error("jobs cancel: job %lld is not pending, "
		    "running or scheduled", (long long)id);
	if ((r = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(r, "job", (double)id);
		cJSON_AddStringToObject(r, "status", "cancelled");
	}
	return r;
}

cJSON *
cmd_jobs_retry(struct app *app, const cJSON *args, enum cmd_origin from)
{
	int64_t	 id, n;
	cJSON	*r;

	if ((r = arg_job("jobs retry", args, &id)) != NULL)
		return r;
	if (app->jobs == NULL)
		return commands_error("jobs retry: the planners are not "
		    "running");
	if ((n = jobs_retry(app->jobs, id)) == -1)
		return commands_error("jobs retry: the store failed");
	if ((r = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(r, "job", (double)id);
		cJSON_AddNumberToObject(r, "batches", (double)n);
	}
	return r;
}

cJSON *
cmd_jobs_delete(struct app *app, const cJSON *args, enum cmd_origin from)
{
	char	 err[256];
	int64_t	 id;
	cJSON	*r;
	int	 rc;

	if ((r = arg_job("jobs delete", args, &id)) != NULL)
		return r;
	if (app->jobs == NULL)
		return commands_error("jobs delete: the planners are not "
		    "running");
	if ((rc = jobs_delete(app->jobs, id, err, sizeof(err))) == -1)
		return commands_error("jobs delete: %s", err);
	if (rc == 0)
		return commands_error("jobs delete: no such job");
	if ((r = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(r, "job", (double)id);
		cJSON_AddBoolToObject(r, "deleted", true);
	}
	return r;
}

cJSON *
cmd_jobs_presets(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const struct job_preset	*p;
	cJSON			*r = cJSON_CreateObject(), *l, *o;

	if (r == NULL || (l = cJSON_AddArrayToObject(r, "presets")) == NULL) {
		cJSON_Delete(r);
		return NULL;
	}
	for (p = job_presets(); p->name != NULL; p++) {
		if ((o = cJSON_CreateObject()) == NULL)
			continue;
		cJSON_AddStringToObject(o, "name", p->name);
		cJSON_AddStringToObject(o, "title", p->title);
		cJSON_AddStringToObject(o, "kinds", p->kinds);
		cJSON_AddStringToObject(o, "authors_source", p->authors_source);
		cJSON_AddStringToObject(o, "only_missing_kind0",
		    p->only_missing_kind0);
		cJSON_AddStringToObject(o, "relay_mode", p->relay_mode);
		cJSON_AddItemToArray(l, o);
	}
	return r;
}
