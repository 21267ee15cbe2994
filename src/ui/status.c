/*
 * status.c — builds the status document from the store and the running
 * parts. It only reads. (The event count is a count(*) over the smallest
 * index; a maintained counter replaces it when ingest lands.)
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "core/clock.h"
#include "store/store.h"
#include "ui/status.h"

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

/* The single integer a query answers, or 0 (logged by the store) on error. */
static long long
query_int(struct store *st, const char *sql)
{
	sqlite3_stmt	*s = store_stmt(st, sql);
	long long	 v = 0;

	if (s != NULL && sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	store_stmt_done(s);
	return v;
}

static void
add_backfill(cJSON *root, struct store *st)
{
	cJSON	*b = cJSON_AddObjectToObject(root, "backfill");

	cJSON_AddNumberToObject(b, "authors_total", (double)query_int(st,
	    "SELECT count(*) FROM follows WHERE stale = 0"));
	cJSON_AddNumberToObject(b, "authors_complete", (double)query_int(st,
	    "SELECT count(*) FROM follows f WHERE f.stale = 0 AND EXISTS "
	    "(SELECT 1 FROM cursors c WHERE c.pubkey = f.pubkey) AND NOT EXISTS "
	    "(SELECT 1 FROM cursors c WHERE c.pubkey = f.pubkey AND "
	    "c.complete = 0)"));
	cJSON_AddNumberToObject(b, "authors_incomplete", (double)query_int(st,
	    "SELECT count(*) FROM follows f WHERE f.stale = 0 AND EXISTS "
	    "(SELECT 1 FROM cursors c WHERE c.pubkey = f.pubkey AND "
	    "c.complete = 0 AND c.incomplete_reason IS NOT NULL)"));
}

static void
add_store_inbox(cJSON *root, struct store *st)
{
	cJSON	*s = cJSON_AddObjectToObject(root, "store");
	cJSON	*i = cJSON_AddObjectToObject(root, "inbox");

	cJSON_AddNumberToObject(s, "events", (double)query_int(st,
	    "SELECT count(*) FROM events"));
	cJSON_AddNumberToObject(i, "pending", (double)query_int(st,
	    "SELECT count(*) FROM inbox WHERE state = 'pending'"));
	cJSON_AddNumberToObject(i, "forwarded", (double)query_int(st,
	    "SELECT coalesce((SELECT value FROM meta WHERE key = "
	    "'inbox_forwarded'), 0)"));
	cJSON_AddNumberToObject(i, "rejected", (double)query_int(st,
	    "SELECT count(*) FROM inbox WHERE state = 'dead'"));
}

static void
add_relays(cJSON *root, struct store *st)
{
	cJSON		*list = cJSON_AddArrayToObject(root, "relays");
	sqlite3_stmt	*s;

	s = store_stmt(st, "SELECT url, role, state, events, last_error "
	    "FROM relays ORDER BY url");
	while (s != NULL && sqlite3_step(s) == SQLITE_ROW) {
		cJSON		*r = cJSON_CreateObject();
		const char	*err = (const char *)sqlite3_column_text(s, 4);

		cJSON_AddStringToObject(r, "url",
		    (const char *)sqlite3_column_text(s, 0));
		cJSON_AddStringToObject(r, "role",
		    (const char *)sqlite3_column_text(s, 1));
		cJSON_AddStringToObject(r, "state",
		    (const char *)sqlite3_column_text(s, 2));
		cJSON_AddNumberToObject(r, "events",
		    (double)sqlite3_column_int64(s, 3));
		if (err != NULL)
			cJSON_AddStringToObject(r, "last_error", err);
		else
			cJSON_AddNullToObject(r, "last_error");
		cJSON_AddItemToArray(list, r);
	}
	store_stmt_done(s);
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
	add_store_inbox(root, app->store);
	add_relays(root, app->store);
	return root;
}

/*
 * No planner exists yet that could have work pending, so a box is idle
 * once it has started. Each planner adds its own test here as it lands.
 */
bool
app_idle(const struct app *app)
{
	return true;
}
