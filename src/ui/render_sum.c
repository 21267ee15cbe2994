/*
 * render_sum.c — the answers a person reads at a glance instead of as a
 * dump of every member: `status` (one line per part: what the box is
 * doing or waiting for, backfill, store, relays, uplink, jobs, recovery,
 * its own relay, memory, key), `jobs list` (a line per job), `jobs show`
 * (the job in a few lines, its unfinished batches grouped by state, relay
 * and reason, at most RENDER_JOB_GROUPS groups) and `recovery` (a line per
 * relay). It reads the JSON a command answered and only formats it:
 * what an answer holds is the command's, and --json never comes here.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/limits.h"
#include "ui/render.h"
#include "ui/render_int.h"

#define LABEL_W		10	/* the status lines' label column, chars */

static int
label(struct buf *out, const char *name)
{
	return buf_printf(out, "%-*s", LABEL_W, name);
}

/* ", " before every part of a list but the first (*n counts them). */
static int
sep(struct buf *out, int *n, const char *first, const char *next)
{
	return buf_puts(out, (*n)++ == 0 ? first : next);
}

/* "N word" with its plural, N with thousands separated, after sep(). */
static int
part(struct buf *out, int *n, long long count, const char *word)
{
	char	c[48];

	if (sep(out, n, "", ", ") == -1)
		return -1;
	return buf_printf(out, "%s %s", render_count_text(count, c,
	    sizeof(c)), word);
}

/* ---- status ------------------------------------------------------------ */

/* Whether something besides recovery's wait keeps the box from idle. */
static bool
status_working(const cJSON *st)
{
	const cJSON	*in = cJSON_GetObjectItem(st, "inbox");

	return render_num(cJSON_GetObjectItem(st, "backfill"),
	    "authors_draining") > 0 || cJSON_IsObject(cJSON_GetObjectItem(
	    cJSON_GetObjectItem(st, "jobs"), "current")) ||
	    (*render_str(cJSON_GetObjectItem(st, "uplink"), "url") != '\0' &&
	    render_num(in, "pending") > 0);
}

/* What keeps the box from idle, in words (nothing when idle). */
static int
status_busy(struct buf *out, const cJSON *st)
{
	const cJSON	*b = cJSON_GetObjectItem(st, "backfill");
	const cJSON	*j = cJSON_GetObjectItem(st, "jobs");
	const cJSON	*cur = cJSON_GetObjectItem(j, "current");
	const cJSON	*in = cJSON_GetObjectItem(st, "inbox");
	const char	*waiting = render_str(st, "waiting");
	char		 c[48];
	int		 n = 0;

	if (buf_puts(out, "working") == -1)
		return -1;
	if (render_num(b, "authors_draining") > 0 && (sep(out, &n, " (", "; ")
	    == -1 || buf_printf(out, "backfill: %s author%s draining",
	    render_count_text(render_num(b, "authors_draining"), c, sizeof(c)),
	    render_s(render_num(b, "authors_draining"))) == -1))
		return -1;
	if (cJSON_IsObject(cur) && (sep(out, &n, " (", "; ") == -1 ||
	    buf_printf(out, "job %lld running", render_num(cur, "job")) == -1))
		return -1;
	if (*render_str(cJSON_GetObjectItem(st, "uplink"), "url") != '\0' &&
	    render_num(in, "pending") > 0 && (sep(out, &n, " (", "; ") == -1 ||
	    buf_printf(out, "uplink: %s to forward", render_count_text(
	    render_num(in, "pending"), c, sizeof(c))) == -1))
		return -1;
	if (*waiting != '\0' && (sep(out, &n, " (", "; ") == -1 ||
	    buf_puts(out, waiting) == -1))
		return -1;
	return n > 0 ? buf_putc(out, ')') : 0;
}

/*
 * "cachebox 0.1.0, up 3h 12m: idle", or what it does, or only what it
 * waits for ("waiting for 17 ids from relay X until 12:34 UTC").
 */
static int
status_head(struct buf *out, const cJSON *st, const char *nl)
{
	const char	*waiting = render_str(st, "waiting");
	int		 rc;

	if (buf_printf(out, "cachebox %s, up ", render_str(st, "version")) ==
	    -1 || render_duration(out, render_num(st, "uptime_s")) == -1 ||
	    buf_puts(out, ": ") == -1)
		return -1;
	if (cJSON_IsTrue(cJSON_GetObjectItem(st, "idle")))
		rc = buf_puts(out, "idle");
	else if (!status_working(st) && *waiting != '\0')
		rc = buf_puts(out, waiting);
	else
		rc = status_busy(out, st);
	return rc == -1 ? -1 : buf_puts(out, nl);
}

static int
status_backfill(struct buf *out, const cJSON *st, const char *nl)
{
	const cJSON	*b = cJSON_GetObjectItem(st, "backfill");
	long long	 total = render_num(b, "authors_total");
	int		 n = 1;

	if (label(out, "backfill") == -1)
		return -1;
	if (total == 0)
		return buf_printf(out, "nobody followed yet (roots add KEY)%s",
		    nl);
	if (render_count(out, render_num(b, "authors_complete")) == -1 ||
	    buf_puts(out, " of ") == -1 || render_count(out, total) == -1 ||
	    buf_printf(out, " author%s complete", render_s(total)) == -1)
		return -1;
	if (render_num(b, "authors_incomplete") > 0 && part(out, &n,
	    render_num(b, "authors_incomplete"), "incomplete") == -1)
		return -1;
	if (render_num(b, "authors_draining") > 0 && part(out, &n,
	    render_num(b, "authors_draining"), "draining") == -1)
		return -1;
	return buf_puts(out, nl);
}

static int
status_store(struct buf *out, const cJSON *st, const char *nl)
{
	const cJSON	*s = cJSON_GetObjectItem(st, "store");
	const char	*ret = render_str(s, "retention");

	if (label(out, "store") == -1 ||
	    render_count(out, render_num(s, "events")) == -1 ||
	    buf_puts(out, " events, ") == -1 ||
	    render_bytes(out, render_num(s, "bytes")) == -1 ||
	    buf_puts(out, " of ") == -1 ||
	    render_bytes(out, render_num(s, "max_bytes")) == -1)
		return -1;
	if (strcmp(render_str(s, "state"), "damaged") == 0 &&
	    buf_puts(out, "; DAMAGED: nothing more is written (see the log)")
	    == -1)
		return -1;
	if (*ret != '\0' && strcmp(ret, "within") != 0 &&
	    buf_printf(out, "; retention %s", ret) == -1)
		return -1;
	if (render_num(s, "evicted") > 0 && (buf_puts(out, "; ") == -1 ||
	    render_count(out, render_num(s, "evicted")) == -1 ||
	    buf_puts(out, " evicted since start") == -1))
		return -1;
	return buf_puts(out, nl);
}

/* Events stored lately: the last day and week, the rate now. */
static int
status_stored(struct buf *out, const cJSON *st, const char *nl)
{
	const cJSON	*in = cJSON_GetObjectItem(st, "ingest");
	const cJSON	*rate = cJSON_GetObjectItem(in, "rate_per_s");

	if (!cJSON_IsNumber(cJSON_GetObjectItem(in, "stored_24h")))
		return 0;
	if (label(out, "stored") == -1 ||
	    render_count(out, render_num(in, "stored_24h")) == -1 ||
	    buf_puts(out, " events in 24 h, ") == -1 ||
	    render_count(out, render_num(in, "stored_7d")) == -1 ||
	    buf_puts(out, " in 7 days") == -1)
		return -1;
	if (cJSON_IsNumber(rate) && buf_printf(out, "; %.1f events/s now",
	    rate->valuedouble) == -1)
		return -1;
	return buf_puts(out, nl);
}

/* Relays by health ("3: 2 connected, 1 never opened"). */
static int
relays_tally(struct buf *out, const cJSON *list)
{
	const cJSON	*r, *q;
	int		 n = 0;

	cJSON_ArrayForEach(r, list) {
		const char	*h = render_str(r, "health");
		long long	 same = 0;

		for (q = list->child; q != r; q = q->next)
			if (strcmp(render_str(q, "health"), h) == 0)
				break;
		if (q != r)
			continue;	/* counted with the first of its health */
		for (q = r; q != NULL; q = q->next)
			same += strcmp(render_str(q, "health"), h) == 0;
		if (part(out, &n, same, *h ? h : "-") == -1)
			return -1;
	}
	return 0;
}

/* The relays: a tally, then those not open one by one (a few). */
static int
status_relays(struct buf *out, const cJSON *st, const char *nl)
{
	const cJSON	*list = cJSON_GetObjectItem(st, "relays"), *r;
	int		 n = cJSON_GetArraySize(list), shown = 0, more = 0;

	if (label(out, "relays") == -1)
		return -1;
	if (n == 0)
		return buf_printf(out, "none yet%s", nl);
	if (buf_printf(out, "%d: ", n) == -1 || relays_tally(out, list) == -1 ||
	    buf_puts(out, nl) == -1)
		return -1;
	cJSON_ArrayForEach(r, list) {
		const char	*err = render_str(r, "last_error");

		if (strcmp(render_str(r, "state"), "open") == 0)
			continue;
		if (shown++ >= RENDER_STATUS_RELAYS) {
			more++;
			continue;
		}
		if (label(out, "") == -1 || buf_printf(out, "%s  %s  %s%s%s%s",
		    render_str(r, "url"), render_str(r, "role"),
		    render_str(r, "health"), *err ? "  last error: " : "", err,
		    nl) == -1)
			return -1;
	}
	if (more > 0 && (label(out, "") == -1 || buf_printf(out, "and %d "
	    "more not open (relays list)%s", more, nl) == -1))
		return -1;
	return 0;
}

static int
status_uplink(struct buf *out, const cJSON *st, const char *nl)
{
	const cJSON	*u = cJSON_GetObjectItem(st, "uplink");
	const cJSON	*in = cJSON_GetObjectItem(st, "inbox");
	const char	*err = render_str(u, "last_error");
	int		 n = 0;

	if (label(out, "uplink") == -1)
		return -1;
	if (*render_str(u, "url") == '\0')
		return buf_printf(out, "none configured: events stay in this "
		    "box%s", nl);
	if (buf_printf(out, "%s  %s; ", render_str(u, "url"),
	    render_str(u, "state")) == -1 ||
	    part(out, &n, render_num(in, "pending"), "pending") == -1 ||
	    part(out, &n, render_num(in, "forwarded"), "forwarded") == -1 ||
	    part(out, &n, render_num(in, "rejected"), render_num(in,
	    "rejected") == 1 ? "dead letter" : "dead letters") == -1)
		return -1;
	if (*err != '\0' && buf_printf(out, "; last error: %s", err) == -1)
		return -1;
	return buf_puts(out, nl);
}

/* The jobs: the running one first, then how many are in each state. */
static int
status_jobs(struct buf *out, const cJSON *st, const char *nl)
{
	static const char *const states[] = { "pending", "complete",
	    "incomplete", "failed", "cancelled", "scheduled" };
	const cJSON	*j = cJSON_GetObjectItem(st, "jobs");
	const cJSON	*cur = cJSON_GetObjectItem(j, "current");
	size_t		 i;
	int		 n = 0;

	if (label(out, "jobs") == -1)
		return -1;
	if (cJSON_IsObject(cur)) {
		if (buf_printf(out, "job %lld \"%s\" running: %lld of %lld "
		    "batches, ", render_num(cur, "job"), render_str(cur,
		    "label"), render_num(cur, "batches_done"), render_num(cur,
		    "batches_total")) == -1 || render_count(out,
		    render_num(cur, "events_fetched")) == -1 ||
		    buf_puts(out, " events") == -1)
			return -1;
	}
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (render_num(j, states[i]) > 0 && (sep(out, &n,
		    cJSON_IsObject(cur) ? "; " : "", ", ") == -1 ||
		    render_count(out, render_num(j, states[i])) == -1 ||
		    buf_printf(out, " %s", states[i]) == -1))
			return -1;
	if (n == 0 && !cJSON_IsObject(cur) && buf_puts(out, "none") == -1)
		return -1;
	return buf_puts(out, nl);
}

static int
status_recovery(struct buf *out, const cJSON *st, const char *nl)
{
	const cJSON	*r = cJSON_GetObjectItem(st, "recovery");
	long long	 pending = render_num(r, "pending");
	int		 n = 1;

	if (!cJSON_IsObject(r))
		return 0;
	if (label(out, "recovery") == -1)
		return -1;
	if (pending == 0 && buf_puts(out, "nothing pending") == -1)
		return -1;
	if (pending > 0 && (render_count(out, pending) == -1 ||
	    buf_printf(out, " id%s pending on %lld relay%s", render_s(pending),
	    render_num(r, "relays"), render_s(render_num(r, "relays"))) == -1))
		return -1;
	if (render_num(r, "expired") > 0 && part(out, &n,
	    render_num(r, "expired"), "given up") == -1)
		return -1;
	if (render_num(r, "recovered") > 0 && (buf_puts(out, "; ") == -1 ||
	    render_count(out, render_num(r, "recovered")) == -1 ||
	    buf_puts(out, " recovered since start") == -1))
		return -1;
	return buf_puts(out, nl);
}

/* The box's own relay on the LAN, when it runs. */
static int
status_serve(struct buf *out, const cJSON *st, const char *nl)
{
	const cJSON	*s = cJSON_GetObjectItem(st, "relay_endpoint");

	if (!cJSON_IsObject(s) || *render_str(s, "listen") == '\0')
		return 0;
	return label(out, "relay") == -1 ? -1 : buf_printf(out, "%s: %lld of "
	    "%lld clients%s%s", render_str(s, "listen"), render_num(s,
	    "clients"), render_num(s, "max_clients"), strcmp(render_str(s,
	    "accept"), "none") == 0 ? ", read-only" : "", nl);
}

static int
status_tail(struct buf *out, const cJSON *st, const char *nl)
{
	if (label(out, "memory") == -1 ||
	    render_bytes(out, render_num(st, "rss_bytes")) == -1 ||
	    buf_puts(out, " of ") == -1 ||
	    render_bytes(out, render_num(st, "rss_budget_bytes")) == -1 ||
	    buf_puts(out, nl) == -1 || label(out, "key") == -1)
		return -1;
	return buf_printf(out, "%s%s(status --json: every field)%s",
	    render_str(st, "npub"), nl, nl);
}

int
render_status(struct buf *out, const cJSON *st, const char *nl)
{
	static int (*const lines[])(struct buf *, const cJSON *,
	    const char *) = {
		status_head, status_backfill, status_store, status_stored,
		status_relays, status_uplink, status_jobs, status_recovery,
		status_serve, status_tail,
	};
	size_t	i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		if (lines[i](out, st, nl) == -1)
			return -1;
	return 0;
}

/* ---- jobs ---------------------------------------------------------------- */

/* How many jobs of each status a listing holds: "3 jobs: 2 complete, ...". */
static int
jobs_tally(struct buf *out, const cJSON *list)
{
	const cJSON	*j, *q;
	int		 n = 0, total = cJSON_GetArraySize(list);

	if (total == 0)
		return buf_puts(out, "no jobs yet (jobs new)");
	if (buf_printf(out, "%d job%s", total, render_s(total)) == -1)
		return -1;
	cJSON_ArrayForEach(j, list) {
		const char	*s = render_str(j, "status");
		long long	 same = 0;

		for (q = list->child; q != j; q = q->next)
			if (strcmp(render_str(q, "status"), s) == 0)
				break;
		if (q != j)
			continue;
		for (q = j; q != NULL; q = q->next)
			same += strcmp(render_str(q, "status"), s) == 0;
		if (sep(out, &n, ": ", ", ") == -1 ||
		    buf_printf(out, "%lld %s", same, s) == -1)
			return -1;
	}
	return 0;
}

int
render_jobs_list(struct buf *out, const cJSON *v, const char *nl)
{
	const cJSON	*list = cJSON_GetObjectItem(v, "jobs"), *j;
	char		 prog[48], ev[48];

	if (jobs_tally(out, list) == -1 || buf_puts(out, nl) == -1)
		return -1;
	cJSON_ArrayForEach(j, list) {
		const char	*every = render_str(j, "every");
		const char	*err = render_str(j, "error");

		snprintf(prog, sizeof(prog), "%lld/%lld", render_num(j,
		    "batches_done"), render_num(j, "batches_total"));
		render_count_text(render_num(j, "events_fetched"), ev,
		    sizeof(ev));
		if (buf_printf(out, "%4lld  %-10s  %7s batches  %9s events  "
		    "%s: %s%s%s%s%s%s", render_num(j, "job"), render_str(j,
		    "status"), prog, ev, render_str(j, "label"), render_str(j,
		    "summary"), *every ? "  every " : "", every, *err ?
		    "  error: " : "", err, nl) == -1)
			return -1;
	}
	return 0;
}

/* Where a job's authors came from, in words. */
static const char *
source_words(const char *source)
{
	static const char *const words[][2] = {
		{ "all", "every author in the store" },
		{ "kind1", "the authors of kind-1 notes" },
		{ "followed", "the followed set" },
		{ "manual", "a typed list" },
	};
	size_t	i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(source, words[i][0]) == 0)
			return words[i][1];
	return source;
}

/* What the job's batches are made of: authors or ids, or a time window. */
static int
show_items(struct buf *out, const cJSON *j, const char *nl)
{
	const char	*mode = render_str(j, "batch_mode");
	const char	*rl = render_str(j, "relay_list");

	if (strcmp(mode, "none") == 0) {
		if (label(out, "batches") == -1 || buf_puts(out, "a time window, "
		    "one batch per relay") == -1)
			return -1;
	} else if (label(out, mode) == -1 ||
	    render_count(out, render_num(j, mode)) == -1 ||
	    (strcmp(mode, "authors") == 0 && buf_printf(out, " (%s%s)",
	    source_words(render_str(j, "authors_source")), cJSON_IsTrue(
	    cJSON_GetObjectItem(j, "only_missing_kind0")) ? ", only those "
	    "without a kind 0" : "") == -1) ||
	    buf_printf(out, ", batches of %lld", render_num(j, "batch_size")) ==
	    -1)
		return -1;
	return buf_printf(out, ", %s relays%s%s%s", render_str(j, "relay_mode"),
	    *rl ? ": " : "", rl, nl);
}

/* since and until of the run, and a schedule. */
static int
show_window(struct buf *out, const cJSON *j, const char *nl)
{
	if (label(out, "window") == -1 || buf_puts(out, "since ") == -1 ||
	    render_time(out, render_num(j, "since")) == -1 ||
	    buf_puts(out, ", until ") == -1 ||
	    render_time(out, render_num(j, "until")) == -1 ||
	    buf_puts(out, nl) == -1)
		return -1;
	if (*render_str(j, "every") != '\0' && (label(out, "schedule") == -1 ||
	    buf_printf(out, "every %s; %lld run%s; next ", render_str(j,
	    "every"), render_num(j, "runs"), render_s(render_num(j, "runs")))
	    == -1 || render_time(out, render_num(j, "next_run_at")) == -1 ||
	    buf_puts(out, nl) == -1))
		return -1;
	return 0;
}

/* When the job was made, by which surface, and when it ran. */
static int
show_times(struct buf *out, const cJSON *j, const char *nl)
{
	if (label(out, "created") == -1 ||
	    render_time(out, render_num(j, "created_at")) == -1 ||
	    buf_printf(out, " by %s; started ", render_str(j, "created_by")) ==
	    -1 || render_time(out, render_num(j, "started_at")) == -1 ||
	    buf_puts(out, "; completed ") == -1 ||
	    render_time(out, render_num(j, "completed_at")) == -1)
		return -1;
	return buf_puts(out, nl);
}

static int
show_progress(struct buf *out, const cJSON *j, const char *nl)
{
	const cJSON	*c = cJSON_GetObjectItem(j, "batch_counts"), *s;
	int		 n = 0;

	if (label(out, "progress") == -1 || buf_printf(out, "%lld of %lld "
	    "batches done", render_num(j, "batches_done"), render_num(j,
	    "batches_total")) == -1)
		return -1;
	cJSON_ArrayForEach(s, c)
		if (cJSON_IsNumber(s) && s->valuedouble > 0 && (sep(out, &n,
		    ": ", ", ") == -1 || buf_printf(out, "%.0f %s",
		    s->valuedouble, s->string) == -1))
			return -1;
	if (buf_puts(out, "; ") == -1 ||
	    render_count(out, render_num(j, "events_fetched")) == -1 ||
	    buf_puts(out, " events fetched (") == -1 ||
	    render_count(out, render_num(j, "events_new")) == -1 ||
	    buf_puts(out, " new), ") == -1 ||
	    render_count(out, render_num(j, "requests")) == -1 ||
	    buf_printf(out, " request%s%s", render_s(render_num(j,
	    "requests")), nl) == -1)
		return -1;
	return 0;
}

/* Why a batch is not complete: its reason, or the incomplete one's why. */
static const char *
batch_why(const cJSON *b)
{
	const char	*r = render_str(b, "reason");

	return *r ? r : render_str(b, "why");
}

static bool
same_group(const cJSON *a, const cJSON *b)
{
	return strcmp(render_str(a, "status"), render_str(b, "status")) == 0 &&
	    strcmp(render_str(a, "relay"), render_str(b, "relay")) == 0 &&
	    strcmp(batch_why(a), batch_why(b)) == 0;
}

/* One group: its count, state, relay, batch numbers and reason. */
static int
show_group(struct buf *out, const cJSON *first, const char *nl)
{
	const cJSON	*q;
	long long	 n = 0, lo = -1, hi = -1, i;
	const char	*why = batch_why(first);

	for (q = first; q != NULL; q = q->next) {
		if (!same_group(first, q))
			continue;
		i = render_num(q, "index");
		n++;
		lo = lo == -1 || i < lo ? i : lo;
		hi = i > hi ? i : hi;
	}
	if (buf_printf(out, "  %lld %s  %s  batch%s %lld", n, render_str(first,
	    "status"), render_str(first, "relay"), n == 1 ? "" : "es", lo) == -1)
		return -1;
	if (hi != lo && buf_printf(out, n == hi - lo + 1 ? "-%lld" :
	    "...%lld", hi) == -1)
		return -1;
	return buf_printf(out, "%s%s%s", *why ? "  " : "", why, nl);
}

/* The unfinished batches grouped, at most RENDER_JOB_GROUPS groups. */
static int
show_batches(struct buf *out, const cJSON *j, const char *nl)
{
	const cJSON	*list = cJSON_GetObjectItem(j, "batches"), *b, *q;
	int		 groups = 0, n = cJSON_GetArraySize(list);

	if (n == 0)
		return 0;
	if (buf_printf(out, "unfinished batches: %d%s%s", n, cJSON_IsTrue(
	    cJSON_GetObjectItem(j, "batches_truncated")) ? " (the first "
	    "ones; --json lists them)" : "", nl) == -1)
		return -1;
	cJSON_ArrayForEach(b, list) {
		for (q = list->child; q != b && !same_group(q, b); q = q->next)
			;
		if (q != b)
			continue;	/* shown with the first of its group */
		if (groups++ < RENDER_JOB_GROUPS && show_group(out, b, nl) ==
		    -1)
			return -1;
	}
	if (groups > RENDER_JOB_GROUPS && buf_printf(out, "  and %d more "
	    "groups (--json lists every batch)%s", groups - RENDER_JOB_GROUPS,
	    nl) == -1)
		return -1;
	return 0;
}

int
render_jobs_show(struct buf *out, const cJSON *j, const char *nl)
{
	const char	*err = render_str(j, "error");
	const char	*preset = render_str(j, "preset");

	if (buf_printf(out, "job %lld \"%s\": %s%s%s%s%s", render_num(j, "job"),
	    render_str(j, "label"), render_str(j, "status"), *preset ?
	    " (preset " : "", preset, *preset ? ")" : "", nl) == -1 ||
	    label(out, "filter") == -1 ||
	    buf_printf(out, "%s%s", render_str(j, "summary"), nl) == -1 ||
	    show_items(out, j, nl) == -1 || show_window(out, j, nl) == -1 ||
	    show_progress(out, j, nl) == -1 || show_times(out, j, nl) == -1)
		return -1;
	if (*err != '\0' && (label(out, "error") == -1 ||
	    buf_printf(out, "%s%s", err, nl) == -1))
		return -1;
	return show_batches(out, j, nl);
}

/* ---- recovery ------------------------------------------------------------ */

static int
recovery_line(struct buf *out, const cJSON *r, int w, const char *nl)
{
	long long	next = render_num(r, "next_attempt");

	if (buf_printf(out, "%-*s  ", w, render_str(r, "relay")) == -1 ||
	    render_count(out, render_num(r, "pending")) == -1 ||
	    buf_puts(out, " pending") == -1)
		return -1;
	if (cJSON_IsTrue(cJSON_GetObjectItem(r, "in_flight"))) {
		if (buf_puts(out, ", fetching now") == -1)
			return -1;
	} else if (next > 0 && (buf_puts(out, ", next attempt ") == -1 ||
	    render_time(out, next) == -1))
		return -1;
	if (render_num(r, "expired") > 0 && (buf_puts(out, ", ") == -1 ||
	    render_count(out, render_num(r, "expired")) == -1 ||
	    buf_puts(out, " given up") == -1))
		return -1;
	return buf_printf(out, "; %lld attempt%s, %lld recovered; %s; NIP-77 "
	    "%s%s", render_num(r, "attempts"), render_s(render_num(r,
	    "attempts")), render_num(r, "recovered"), render_str(r, "health"),
	    render_str(r, "negentropy"), nl);
}

int
render_recovery(struct buf *out, const cJSON *v, const char *nl)
{
	const cJSON	*list = cJSON_GetObjectItem(v, "recovery"), *r;
	long long	 pending = render_num(v, "pending");
	int		 w = 0, len, n = cJSON_GetArraySize(list);

	if (n == 0)
		return buf_printf(out, "nothing to recover: every id a relay "
		    "reported has arrived%s", nl);
	if (render_count(out, pending) == -1 || buf_printf(out, " id%s "
	    "pending on %d relay%s", render_s(pending), n, render_s(n)) == -1)
		return -1;
	if (render_num(v, "expired") > 0 && (buf_puts(out, ", ") == -1 ||
	    render_count(out, render_num(v, "expired")) == -1 ||
	    buf_puts(out, " given up") == -1))
		return -1;
	if (buf_puts(out, nl) == -1)
		return -1;
	cJSON_ArrayForEach(r, list)
		if ((len = (int)strlen(render_str(r, "relay"))) > w)
			w = len;
	cJSON_ArrayForEach(r, list)
		if (recovery_line(out, r, w, nl) == -1)
			return -1;
	return 0;
}
