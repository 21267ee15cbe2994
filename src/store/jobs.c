/*
 * jobs.c — rows of `jobs`, `job_items` and `job_batches` (migration 008):
 * custom backfill jobs, their resolved lists and their batches.
 *
 * Each function is one prepared statement, or a few over one job's rows;
 * none opens a transaction: the planner groups them (a job's plan in one,
 * a batch's page inside ingest's batch with its events). A job's list is
 * never read whole: a step reads its batch's range through the primary
 * key. A list resolved from the events table is written by one INSERT ...
 * SELECT that stops one row past the limit, so a source that names a
 * million authors costs a bounded write, not a million-row array.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/jobs.h"
#include "store/store.h"
#include "store/store_sql.h"

/* ---- names --------------------------------------------------------------- */

static const char *const status_names[STORE_JOB_NSTATUS] = {
	[STORE_JOB_PENDING] = "pending",
	[STORE_JOB_RUNNING] = "running",
	[STORE_JOB_COMPLETE] = "complete",
	[STORE_JOB_INCOMPLETE] = "incomplete",
	[STORE_JOB_FAILED] = "failed",
	[STORE_JOB_CANCELLED] = "cancelled",
};

static const char *const source_names[] = {
	[STORE_JOB_SRC_NONE] = "none",
	[STORE_JOB_SRC_MANUAL] = "manual",
	[STORE_JOB_SRC_ALL] = "all",
	[STORE_JOB_SRC_KIND1] = "kind1",
	[STORE_JOB_SRC_FOLLOWED] = "followed",
};

static const char *const mode_names[] = {
	[STORE_JOB_MODE_NONE] = "none",
	[STORE_JOB_MODE_AUTHORS] = "authors",
	[STORE_JOB_MODE_IDS] = "ids",
};

static const char *const relays_names[] = {
	[STORE_JOB_RELAYS_BOOTSTRAP] = "bootstrap",
	[STORE_JOB_RELAYS_OUTBOX] = "outbox",
	[STORE_JOB_RELAYS_CUSTOM] = "custom",
};

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static const char *
name_of(const char *const *names, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? names[v] : "?";
}

static int
parse_of(const char *const *names, size_t n, const char *s)
{
	size_t	i;

	for (i = 0; s != NULL && i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

const char *
store_job_status_name(enum store_job_status s)
{
	return name_of(status_names, NELEM(status_names), (int)s);
}

int
store_job_status_parse(const char *s)
{
	return parse_of(status_names, NELEM(status_names), s);
}

const char *
store_job_source_name(enum store_job_source s)
{
	return name_of(source_names, NELEM(source_names), (int)s);
}

int
store_job_source_parse(const char *s)
{
	return parse_of(source_names, NELEM(source_names), s);
}

const char *
store_job_mode_name(enum store_job_mode m)
{
	return name_of(mode_names, NELEM(mode_names), (int)m);
}

const char *
store_job_relays_name(enum store_job_relays r)
{
	return name_of(relays_names, NELEM(relays_names), (int)r);
}

int
store_job_relays_parse(const char *s)
{
	return parse_of(relays_names, NELEM(relays_names), s);
}

/* ---- small helpers -------------------------------------------------------- */

static int
bind_i64(sqlite3_stmt *q, int i, int64_t v)
{
	return sqlite3_bind_int64(q, i, v) == SQLITE_OK ? 0 : -1;
}

/* Bind v, or NULL when v < 0. */
static int
bind_opt(sqlite3_stmt *q, int i, int64_t v)
{
	return (v < 0 ? sqlite3_bind_null(q, i) : sqlite3_bind_int64(q, i,
	    v)) == SQLITE_OK ? 0 : -1;
}

/* Bind text, or NULL when text is NULL or empty. */
static int
bind_text_opt(sqlite3_stmt *q, int i, const char *text)
{
	if (text == NULL || *text == '\0')
		return sqlite3_bind_null(q, i) == SQLITE_OK ? 0 : -1;
	return sqlite3_bind_text(q, i, text, -1, SQLITE_TRANSIENT) ==
	    SQLITE_OK ? 0 : -1;
}

static int64_t
col_opt(sqlite3_stmt *q, int i, int64_t none)
{
	return sqlite3_column_type(q, i) == SQLITE_NULL ? none :
	    sqlite3_column_int64(q, i);
}

static void
col_text(sqlite3_stmt *q, int i, char *out, size_t len)
{
	const char	*t = (const char *)sqlite3_column_text(q, i);

	snprintf(out, len, "%s", t != NULL ? t : "");
}

static char *
col_dup(sqlite3_stmt *q, int i)
{
	const char	*t = (const char *)sqlite3_column_text(q, i);

	return strdup(t != NULL ? t : "");
}

/*
 * Step a write whose bindings failed or succeeded (bad != 0: they
 * failed). 0, or -1 logged with what.
 */
static int
write_done(struct store *st, sqlite3_stmt *q, int bad, const char *what)
{
	if (bad) {
		store_bind_fail(st, q, what);
		return -1;
	}
	return store_step_done(st, q, what);
}

/* Same, and the write must have changed exactly one row. */
static int
write_one(struct store *st, sqlite3_stmt *q, int bad, const char *what)
{
	if (write_done(st, q, bad, what) == -1)
		return -1;
	if (sqlite3_changes(store_db(st)) != 1) {
		log_warnx("store: %s: no such row", what);
		return -1;
	}
	return 0;
}

/* Run a one-id statement (?1 = id) that writes; 0 or -1. */
static int
exec_id(struct store *st, const char *sql, int64_t id, const char *what)
{
	sqlite3_stmt	*q = store_stmt(st, sql);

	if (q == NULL)
		return -1;
	return write_done(st, q, bind_i64(q, 1, id), what);
}

/* ---- jobs ---------------------------------------------------------------- */

#define JOB_COLS	"id, label, filter_json, authors_source, " \
	"authors_missing_kind0, preset, items, batch_mode, batch_size, " \
	"relay_mode, relay_list, status, total_batches, done_batches, " \
	"events_fetched, events_new, requests, error_message, created_at, " \
	"started_at, completed_at, created_by, run_since, run_until, every_s, " \
	"next_run_at, prev_run_at, runs"

void
store_job_clear(struct store_job *j)
{
	free(j->filter_json);
	free(j->relay_list);
	memset(j, 0, sizeof(*j));
}

static int
enum_col(sqlite3_stmt *q, int i, int (*parse)(const char *))
{
	int	v = parse((const char *)sqlite3_column_text(q, i));

	return v < 0 ? 0 : v;
}

static int
mode_parse(const char *s)
{
	return parse_of(mode_names, NELEM(mode_names), s);
}

/* Read a row of JOB_COLS into j (cleared first). 0, or -1 out of memory. */
static int
job_row(sqlite3_stmt *q, struct store_job *j)
{
	memset(j, 0, sizeof(*j));
	j->id = sqlite3_column_int64(q, 0);
	col_text(q, 1, j->label, sizeof(j->label));
	j->filter_json = col_dup(q, 2);
	j->source = (enum store_job_source)enum_col(q, 3,
	    store_job_source_parse);
	j->missing_kind0 = sqlite3_column_int(q, 4) != 0;
	col_text(q, 5, j->preset, sizeof(j->preset));
	j->items = sqlite3_column_int64(q, 6);
	j->mode = (enum store_job_mode)enum_col(q, 7, mode_parse);
	j->batch_size = sqlite3_column_int64(q, 8);
	j->relay_mode = (enum store_job_relays)enum_col(q, 9,
	    store_job_relays_parse);
	j->relay_list = col_dup(q, 10);
	j->status = (enum store_job_status)enum_col(q, 11,
	    store_job_status_parse);
	j->total_batches = sqlite3_column_int64(q, 12);
	j->done_batches = sqlite3_column_int64(q, 13);
	j->events_fetched = sqlite3_column_int64(q, 14);
	j->events_new = sqlite3_column_int64(q, 15);
	j->requests = sqlite3_column_int64(q, 16);
	col_text(q, 17, j->error, sizeof(j->error));
	j->created_at = sqlite3_column_int64(q, 18);
	j->started_at = col_opt(q, 19, 0);
	j->completed_at = col_opt(q, 20, 0);
	col_text(q, 21, j->created_by, sizeof(j->created_by));
	j->run_since = col_opt(q, 22, -1);
	j->run_until = col_opt(q, 23, -1);
	j->every_s = col_opt(q, 24, 0);
	j->next_run_at = col_opt(q, 25, 0);
	j->prev_run_at = col_opt(q, 26, 0);
	j->runs = sqlite3_column_int64(q, 27);
	if (j->filter_json == NULL || j->relay_list == NULL) {
		store_job_clear(j);
		return -1;
	}
	return 0;
}

int64_t
store_job_insert(struct store *st, const struct store_job *j)
{
	sqlite3_stmt	*q;
	int		 bad;

	q = store_stmt(st, "INSERT INTO jobs (label, filter_json, "
	    "authors_source, authors_missing_kind0, preset, batch_mode, "
	    "batch_size, relay_mode, relay_list, created_at, created_by, "
	    "every_s, run_since) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
	    "?10, ?11, ?12, ?13)");
	if (q == NULL)
		return -1;
	bad = sqlite3_bind_text(q, 1, j->label, -1, SQLITE_TRANSIENT) ||
	    sqlite3_bind_text(q, 2, j->filter_json ? j->filter_json : "{}", -1,
	    SQLITE_TRANSIENT) ||
	    sqlite3_bind_text(q, 3, store_job_source_name(j->source), -1,
	    SQLITE_STATIC) ||
	    bind_i64(q, 4, j->missing_kind0 ? 1 : 0) ||
	    sqlite3_bind_text(q, 5, j->preset, -1, SQLITE_TRANSIENT) ||
	    sqlite3_bind_text(q, 6, store_job_mode_name(j->mode), -1,
	    SQLITE_STATIC) ||
	    bind_i64(q, 7, j->batch_size) ||
	    sqlite3_bind_text(q, 8, store_job_relays_name(j->relay_mode), -1,
	    SQLITE_STATIC) ||
	    sqlite3_bind_text(q, 9, j->relay_list ? j->relay_list : "", -1,
	    SQLITE_TRANSIENT) ||
	    bind_i64(q, 10, j->created_at) ||
	    sqlite3_bind_text(q, 11, j->created_by[0] ? j->created_by :
	    "admin", -1, SQLITE_TRANSIENT) ||
	    (j->every_s > 0 ? bind_i64(q, 12, j->every_s) :
	    sqlite3_bind_null(q, 12)) ||
	    bind_opt(q, 13, j->run_since);
	if (write_done(st, q, bad, "job insert") == -1)
		return -1;
	return sqlite3_last_insert_rowid(store_db(st));
}

int
store_job_get(struct store *st, int64_t id, struct store_job *out)
{
	sqlite3_stmt	*q;
	int		 rc;

	memset(out, 0, sizeof(*out));
	q = store_stmt(st, "SELECT " JOB_COLS " FROM jobs WHERE id = ?1");
	if (q == NULL)
		return -1;
	if (bind_i64(q, 1, id) == -1) {
		store_bind_fail(st, q, "job get");
		return -1;
	}
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW && job_row(q, out) == -1)
		rc = SQLITE_NOMEM;
	store_stmt_done(q);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	log_warnx("store: job get: %s", sqlite3_errstr(rc));
	return -1;
}

int64_t
store_jobs_each(struct store *st, size_t max, store_job_cb cb, void *arg)
{
	sqlite3_stmt	*q;
	struct store_job j;
	int64_t		 n = 0;
	int		 rc;

	q = store_stmt(st, "SELECT " JOB_COLS " FROM jobs ORDER BY id DESC "
	    "LIMIT ?1");
	if (q == NULL)
		return -1;
	if (bind_i64(q, 1, (int64_t)max) == -1) {
		store_bind_fail(st, q, "jobs each");
		return -1;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (job_row(q, &j) == -1) {
			rc = SQLITE_NOMEM;
			break;
		}
		n++;
		rc = cb(&j, arg);
		store_job_clear(&j);
		if (rc != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(q);
	if (rc != SQLITE_DONE) {
		log_warnx("store: jobs each: %s", sqlite3_errstr(rc));
		return -1;
	}
	return n;
}

int
store_job_delete(struct store *st, int64_t id)
{
	if (exec_id(st, "DELETE FROM jobs WHERE id = ?1", id,
	    "job delete") == -1)
		return -1;
	return sqlite3_changes(store_db(st)) > 0 ? 1 : 0;
}

/* ---- the resolved list ---------------------------------------------------- */

int
store_job_items_clear(struct store *st, int64_t job)
{
	return exec_id(st, "DELETE FROM job_items WHERE job_id = ?1", job,
	    "job items clear");
}

int
store_job_item_add(struct store *st, int64_t job, int64_t seq,
    const uint8_t item[32])
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "INSERT INTO job_items (job_id, seq, item) "
	    "VALUES (?1, ?2, ?3)");
	if (q == NULL)
		return -1;
	return write_done(st, q, bind_i64(q, 1, job) || bind_i64(q, 2, seq) ||
	    sqlite3_bind_blob(q, 3, item, 32, SQLITE_STATIC), "job item add");
}

/*
 * The sources, each one INSERT ... SELECT in pubkey order, row_number()
 * giving seq, LIMIT ?3 (max + 1). ?2 is 1 to keep only authors without a
 * kind 0. The events index (pubkey, created_at, kind) serves DISTINCT
 * pubkey and the kind 1 test from the index alone; the kind 0 check names
 * the condition of the partial index of replaceable kinds, so it is one
 * probe of that index (test_store_jobs checks the plans).
 */
#define KIND0_INDEXED	EVENTS_SQL_REPLACEABLE("k.kind")
static const char *const resolve_sql[] = {
	[STORE_JOB_SRC_ALL] = "INSERT INTO job_items (job_id, seq, item) "
	    "SELECT ?1, row_number() OVER (ORDER BY pubkey) - 1, pubkey FROM "
	    "(SELECT DISTINCT pubkey FROM events e WHERE ?2 = 0 OR NOT EXISTS "
	    "(SELECT 1 FROM events k WHERE k.pubkey = e.pubkey AND "
	    "k.kind = 0 AND " KIND0_INDEXED ") ORDER BY pubkey LIMIT ?3)",
	[STORE_JOB_SRC_KIND1] = "INSERT INTO job_items (job_id, seq, item) "
	    "SELECT ?1, row_number() OVER (ORDER BY pubkey) - 1, pubkey FROM "
	    "(SELECT DISTINCT pubkey FROM events e WHERE e.kind = 1 AND "
	    "(?2 = 0 OR NOT EXISTS (SELECT 1 FROM events k WHERE "
	    "k.pubkey = e.pubkey AND k.kind = 0 AND " KIND0_INDEXED ")) "
	    "ORDER BY pubkey LIMIT ?3)",
	[STORE_JOB_SRC_FOLLOWED] = "INSERT INTO job_items (job_id, seq, item) "
	    "SELECT ?1, row_number() OVER (ORDER BY pubkey) - 1, pubkey FROM "
	    "(SELECT pubkey FROM follows f WHERE f.stale = 0 AND (?2 = 0 OR "
	    "NOT EXISTS (SELECT 1 FROM events k WHERE k.pubkey = f.pubkey "
	    "AND k.kind = 0 AND " KIND0_INDEXED ")) ORDER BY pubkey LIMIT ?3)",
};

const char *
store_job_resolve_sql(enum store_job_source src)
{
	return (size_t)src < NELEM(resolve_sql) ? resolve_sql[src] : NULL;
}

int64_t
store_job_items_resolve(struct store *st, int64_t job,
    enum store_job_source src, bool missing_kind0, int64_t max)
{
	sqlite3_stmt	*q;

	if (store_job_resolve_sql(src) == NULL) {
		log_warnx("store: job resolve: source %s is not resolved here",
		    store_job_source_name(src));
		return -1;
	}
	if (store_job_items_clear(st, job) == -1 ||
	    (q = store_stmt(st, store_job_resolve_sql(src))) == NULL)
		return -1;
	if (write_done(st, q, bind_i64(q, 1, job) ||
	    bind_i64(q, 2, missing_kind0 ? 1 : 0) || bind_i64(q, 3, max + 1),
	    "job resolve") == -1)
		return -1;
	return sqlite3_changes(store_db(st));
}

int64_t
store_job_items_read(struct store *st, int64_t job, int64_t lo, int64_t hi,
    uint8_t (*out)[32])
{
	sqlite3_stmt	*q;
	int64_t		 n = 0;
	int		 rc;

	q = store_stmt(st, "SELECT seq, item FROM job_items WHERE job_id = ?1 "
	    "AND seq >= ?2 AND seq < ?3 ORDER BY seq");
	if (q == NULL)
		return -1;
	if (bind_i64(q, 1, job) || bind_i64(q, 2, lo) || bind_i64(q, 3, hi)) {
		store_bind_fail(st, q, "job items read");
		return -1;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && n < hi - lo) {
		if (sqlite3_column_bytes(q, 1) != 32)
			continue;
		memcpy(out[n++], sqlite3_column_blob(q, 1), 32);
	}
	store_stmt_done(q);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		log_warnx("store: job items read: %s", sqlite3_errstr(rc));
		return -1;
	}
	return n;
}

int
store_job_write_relays(struct store *st, int64_t job, size_t max,
    store_job_relay_cb cb, void *arg)
{
	sqlite3_stmt	*q;
	int		 rc;

	q = store_stmt(st, "SELECT r.relay, count(*) AS n FROM job_items i "
	    "JOIN author_relays r ON r.pubkey = i.item AND r.write = 1 "
	    "WHERE i.job_id = ?1 GROUP BY r.relay ORDER BY n DESC, r.relay "
	    "LIMIT ?2");
	if (q == NULL)
		return -1;
	if (bind_i64(q, 1, job) || bind_i64(q, 2, (int64_t)max)) {
		store_bind_fail(st, q, "job write relays");
		return -1;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		if (cb((const char *)sqlite3_column_text(q, 0),
		    sqlite3_column_int64(q, 1), arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	store_stmt_done(q);
	if (rc != SQLITE_DONE) {
		log_warnx("store: job write relays: %s", sqlite3_errstr(rc));
		return -1;
	}
	return 0;
}

/* ---- batches -------------------------------------------------------------- */

#define BATCH_COLS	"id, job_id, batch_index, item_lo, item_hi, " \
	"item_mask, items, relay, status, until_cursor, pages, " \
	"events_fetched, events_new, largest_page, gap_since, why, " \
	"error_message, attempts, next_attempt_ms, started_at, completed_at, way"

static void
batch_row(sqlite3_stmt *q, struct store_job_batch *b)
{
	int	masklen = sqlite3_column_bytes(q, 5);

	memset(b, 0, sizeof(*b));
	b->id = sqlite3_column_int64(q, 0);
	b->job_id = sqlite3_column_int64(q, 1);
	b->index = sqlite3_column_int64(q, 2);
	b->item_lo = sqlite3_column_int64(q, 3);
	b->item_hi = sqlite3_column_int64(q, 4);
	if (sqlite3_column_type(q, 5) != SQLITE_NULL && masklen > 0 &&
	    (size_t)masklen <= sizeof(b->mask)) {
		memcpy(b->mask, sqlite3_column_blob(q, 5), (size_t)masklen);
		b->has_mask = true;
	}
	b->items = sqlite3_column_int64(q, 6);
	col_text(q, 7, b->relay, sizeof(b->relay));
	b->status = (enum store_job_status)enum_col(q, 8,
	    store_job_status_parse);
	b->started = sqlite3_column_type(q, 9) != SQLITE_NULL;
	b->until_cursor = sqlite3_column_int64(q, 9);
	b->pages = sqlite3_column_int64(q, 10);
	b->events_fetched = sqlite3_column_int64(q, 11);
	b->events_new = sqlite3_column_int64(q, 12);
	b->largest_page = sqlite3_column_int64(q, 13);
	b->has_gap = sqlite3_column_type(q, 14) != SQLITE_NULL;
	b->gap_since = sqlite3_column_int64(q, 14);
	b->why = (enum store_cursor_why)sqlite3_column_int(q, 15);
	col_text(q, 16, b->error, sizeof(b->error));
	b->attempts = sqlite3_column_int64(q, 17);
	b->next_attempt_ms = sqlite3_column_int64(q, 18);
	b->started_at = col_opt(q, 19, 0);
	b->completed_at = col_opt(q, 20, 0);
	b->way = sqlite3_column_type(q, 21) == SQLITE_NULL ?
	    STORE_JOB_WAY_UNDECIDED : strcmp((const char *)
	    sqlite3_column_text(q, 21), "nip77") == 0 ? STORE_JOB_WAY_NIP77 :
	    STORE_JOB_WAY_PAGING;
}

int
store_job_batch_add(struct store *st, const struct store_job_batch_spec *b)
{
	sqlite3_stmt	*q;
	int		 bad;

	q = store_stmt(st, "INSERT INTO job_batches (job_id, batch_index, "
	    "item_lo, item_hi, item_mask, items, relay) VALUES (?1, ?2, ?3, "
	    "?4, ?5, ?6, ?7)");
	if (q == NULL)
		return -1;
	bad = bind_i64(q, 1, b->job) || bind_i64(q, 2, b->index) ||
	    bind_i64(q, 3, b->item_lo) || bind_i64(q, 4, b->item_hi) ||
	    (b->mask != NULL ? sqlite3_bind_blob(q, 5, b->mask,
	    (int)b->masklen, SQLITE_TRANSIENT) : sqlite3_bind_null(q, 5)) ||
	    bind_i64(q, 6, b->items) ||
	    sqlite3_bind_text(q, 7, b->relay, -1, SQLITE_TRANSIENT);
	return write_done(st, q, bad, "job batch add");
}

int
store_job_batches_clear(struct store *st, int64_t job)
{
	return exec_id(st, "DELETE FROM job_batches WHERE job_id = ?1", job,
	    "job batches clear");
}

int
store_job_planned(struct store *st, int64_t job, int64_t items,
    int64_t batches)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE jobs SET items = ?2, total_batches = ?3, "
	    "done_batches = 0, events_fetched = 0, events_new = 0, "
	    "requests = 0, status = 'pending', error_message = NULL, "
	    "completed_at = NULL WHERE id = ?1");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, job) || bind_i64(q, 2, items) ||
	    bind_i64(q, 3, batches), "job planned");
}

int
store_job_batch_get(struct store *st, int64_t id, struct store_job_batch *out)
{
	sqlite3_stmt	*q;
	int		 rc;

	q = store_stmt(st, "SELECT " BATCH_COLS " FROM job_batches "
	    "WHERE id = ?1");
	if (q == NULL)
		return -1;
	if (bind_i64(q, 1, id) == -1) {
		store_bind_fail(st, q, "job batch get");
		return -1;
	}
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW)
		batch_row(q, out);
	store_stmt_done(q);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	log_warnx("store: job batch get: %s", sqlite3_errstr(rc));
	return -1;
}

/* Step a bound batch query, handing rows to cb. Handed, or -1. */
static int64_t
batches_run(sqlite3_stmt *q, store_job_batch_cb cb, void *arg,
    const char *what)
{
	struct store_job_batch	 b;
	int64_t			 n = 0;
	int			 rc;

	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		batch_row(q, &b);
		n++;
		if (cb(&b, arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(q);
	if (rc != SQLITE_DONE) {
		log_warnx("store: %s: %s", what, sqlite3_errstr(rc));
		return -1;
	}
	return n;
}

int64_t
store_job_batches_due(struct store *st, int64_t job, const char *relay,
    int64_t now_ms, size_t max, store_job_batch_cb cb, void *arg)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "SELECT " BATCH_COLS " FROM job_batches WHERE "
	    "job_id = ?1 AND status = 'pending' AND relay = ?2 AND "
	    "next_attempt_ms <= ?3 ORDER BY batch_index LIMIT ?4");
	if (q == NULL)
		return -1;
	if (bind_i64(q, 1, job) ||
	    sqlite3_bind_text(q, 2, relay, -1, SQLITE_TRANSIENT) ||
	    bind_i64(q, 3, now_ms) || bind_i64(q, 4, (int64_t)max)) {
		store_bind_fail(st, q, "job batches due");
		return -1;
	}
	return batches_run(q, cb, arg, "job batches due");
}

int64_t
store_job_batches_unfinished(struct store *st, int64_t job, size_t max,
    store_job_batch_cb cb, void *arg)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "SELECT " BATCH_COLS " FROM job_batches WHERE "
	    "job_id = ?1 AND status <> 'complete' ORDER BY batch_index "
	    "LIMIT ?2");
	if (q == NULL)
		return -1;
	if (bind_i64(q, 1, job) || bind_i64(q, 2, (int64_t)max)) {
		store_bind_fail(st, q, "job batches unfinished");
		return -1;
	}
	return batches_run(q, cb, arg, "job batches unfinished");
}

int64_t
store_job_relay_largest(struct store *st, const char *relay)
{
	sqlite3_stmt	*q;
	int64_t		 v = -1;
	int		 rc;

	q = store_stmt(st, "SELECT max(coalesce((SELECT max(largest_page) "
	    "FROM job_batches WHERE relay = ?1), 0), coalesce((SELECT "
	    "max(largest_page) FROM cursors WHERE relay = ?1), 0))");
	if (q == NULL)
		return -1;
	if (sqlite3_bind_text(q, 1, relay, -1, SQLITE_TRANSIENT) != SQLITE_OK) {
		store_bind_fail(st, q, "job relay largest");
		return -1;
	}
	if ((rc = sqlite3_step(q)) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	store_stmt_done(q);
	if (rc != SQLITE_ROW)
		log_warnx("store: job relay largest: %s", sqlite3_errstr(rc));
	return v;
}

int
store_job_batch_relays(struct store *st, int64_t job, store_job_url_cb cb,
    void *arg)
{
	sqlite3_stmt	*q;
	int		 rc;

	q = store_stmt(st, "SELECT DISTINCT relay FROM job_batches WHERE "
	    "job_id = ?1 AND (status = 'pending' OR status = 'running') "
	    "ORDER BY relay");
	if (q == NULL)
		return -1;
	if (bind_i64(q, 1, job) == -1) {
		store_bind_fail(st, q, "job batch relays");
		return -1;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		if (cb((const char *)sqlite3_column_text(q, 0), arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	store_stmt_done(q);
	if (rc != SQLITE_DONE) {
		log_warnx("store: job batch relays: %s", sqlite3_errstr(rc));
		return -1;
	}
	return 0;
}

int
store_job_batch_counts(struct store *st, int64_t job,
    int64_t counts[STORE_JOB_NSTATUS], int64_t *next_ms)
{
	sqlite3_stmt	*q;
	int		 rc, s;

	memset(counts, 0, STORE_JOB_NSTATUS * sizeof(counts[0]));
	*next_ms = 0;
	q = store_stmt(st, "SELECT status, count(*), min(next_attempt_ms) "
	    "FROM job_batches WHERE job_id = ?1 GROUP BY status");
	if (q == NULL)
		return -1;
	if (bind_i64(q, 1, job) == -1) {
		store_bind_fail(st, q, "job batch counts");
		return -1;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if ((s = store_job_status_parse((const char *)
		    sqlite3_column_text(q, 0))) < 0)
			continue;
		counts[s] = sqlite3_column_int64(q, 1);
		if (s == STORE_JOB_PENDING)
			*next_ms = sqlite3_column_int64(q, 2);
	}
	store_stmt_done(q);
	if (rc != SQLITE_DONE) {
		log_warnx("store: job batch counts: %s", sqlite3_errstr(rc));
		return -1;
	}
	return 0;
}

int
store_job_batch_start(struct store *st, int64_t id, int64_t now_s)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE job_batches SET status = 'running', "
	    "started_at = coalesce(started_at, ?2) WHERE id = ?1");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, id) || bind_i64(q, 2, now_s),
	    "job batch start");
}

int
store_job_batch_page(struct store *st, int64_t id, int64_t job, int64_t until,
    int64_t received, int64_t fresh)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE job_batches SET until_cursor = ?2, "
	    "pages = pages + 1, events_fetched = events_fetched + ?3, "
	    "events_new = events_new + ?4, largest_page = max(largest_page, "
	    "?3) WHERE id = ?1");
	if (q == NULL || write_one(st, q, bind_i64(q, 1, id) ||
	    bind_i64(q, 2, until) || bind_i64(q, 3, received) ||
	    bind_i64(q, 4, fresh), "job batch page") == -1)
		return -1;
	q = store_stmt(st, "UPDATE jobs SET events_fetched = events_fetched + "
	    "?2, events_new = events_new + ?3, requests = requests + 1 "
	    "WHERE id = ?1");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, job) || bind_i64(q, 2,
	    received) || bind_i64(q, 3, fresh), "job page");
}

int
store_job_batch_way(struct store *st, int64_t id, enum store_job_way way)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE job_batches SET way = ?2 WHERE id = ?1");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, id) || bind_text_opt(q, 2,
	    way == STORE_JOB_WAY_UNDECIDED ? NULL : store_job_way_name(way)),
	    "job batch way");
}

int
store_job_batch_window(struct store *st, int64_t id, int64_t job,
    int64_t until, int64_t received, int64_t fresh)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE job_batches SET until_cursor = ?2, "
	    "way = 'nip77', pages = pages + 1, events_fetched = "
	    "events_fetched + ?3, events_new = events_new + ?4 WHERE id = ?1");
	if (q == NULL || write_one(st, q, bind_i64(q, 1, id) ||
	    bind_i64(q, 2, until) || bind_i64(q, 3, received) ||
	    bind_i64(q, 4, fresh), "job batch window") == -1)
		return -1;
	q = store_stmt(st, "UPDATE jobs SET events_fetched = events_fetched + "
	    "?2, events_new = events_new + ?3, requests = requests + 1 "
	    "WHERE id = ?1");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, job) || bind_i64(q, 2,
	    received) || bind_i64(q, 3, fresh), "job window");
}

const char *
store_job_way_name(enum store_job_way way)
{
	switch (way) {
	case STORE_JOB_WAY_NIP77:	return "nip77";
	case STORE_JOB_WAY_PAGING:	return "paging";
	default:			return "undecided";
	}
}

int
store_job_batch_gap(struct store *st, int64_t id, int64_t gap_since)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE job_batches SET gap_since = ?2 WHERE "
	    "id = ?1");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, id) || bind_i64(q, 2,
	    gap_since), "job batch gap");
}

int
store_job_batch_end(struct store *st, const struct store_job_batch_outcome *o)
{
	sqlite3_stmt		*q;
	enum store_job_status	 status = o->status;
	int			 bad;

	q = store_stmt(st, "UPDATE job_batches SET status = ?2, why = ?3, "
	    "error_message = ?4, gap_since = ?5, completed_at = ?6 "
	    "WHERE id = ?1");
	if (q == NULL)
		return -1;
	bad = bind_i64(q, 1, o->id) ||
	    sqlite3_bind_text(q, 2, store_job_status_name(status), -1,
	    SQLITE_STATIC) ||
	    bind_i64(q, 3, status == STORE_JOB_INCOMPLETE ? (int64_t)o->why :
	    0) ||
	    bind_text_opt(q, 4, status == STORE_JOB_COMPLETE ? NULL :
	    o->reason) ||
	    bind_opt(q, 5, status == STORE_JOB_COMPLETE ? -1 : o->gap_since) ||
	    bind_i64(q, 6, o->now_s);
	if (write_one(st, q, bad, "job batch end") == -1)
		return -1;
	q = store_stmt(st, "UPDATE jobs SET done_batches = done_batches + 1 "
	    "WHERE id = ?1");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, o->job), "job batch done");
}

int
store_job_batch_later(struct store *st, int64_t id, int64_t attempts,
    int64_t next_attempt_ms, const char *reason)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE job_batches SET status = 'pending', "
	    "attempts = ?2, next_attempt_ms = ?3, error_message = ?4 "
	    "WHERE id = ?1");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, id) || bind_i64(q, 2,
	    attempts) || bind_i64(q, 3, next_attempt_ms) ||
	    bind_text_opt(q, 4, reason), "job batch later");
}

int
store_job_batch_release(struct store *st, int64_t id)
{
	return exec_id(st, "UPDATE job_batches SET status = 'pending' WHERE "
	    "id = ?1 AND status = 'running'", id, "job batch release");
}

/* ---- the queue and a job's life -------------------------------------------- */

int64_t
store_jobs_recover(struct store *st)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE job_batches SET status = 'pending' WHERE "
	    "status = 'running'");
	if (q == NULL || store_step_done(st, q, "jobs recover") == -1)
		return -1;
	return sqlite3_changes(store_db(st));
}

int
store_job_next(struct store *st, int64_t *id)
{
	sqlite3_stmt	*q;
	int		 rc;

	q = store_stmt(st, "SELECT id FROM jobs WHERE status = 'pending' OR "
	    "status = 'running' ORDER BY status = 'pending', id LIMIT 1");
	if (q == NULL)
		return -1;
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(q, 0);
	store_stmt_done(q);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	log_warnx("store: job next: %s", sqlite3_errstr(rc));
	return -1;
}

int
store_job_run(struct store *st, int64_t id, int64_t until, int64_t now_s)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE jobs SET "
	    "started_at = CASE WHEN run_until IS NULL THEN ?3 "
	    "ELSE started_at END, runs = runs + (run_until IS NULL), "
	    "run_until = coalesce(run_until, ?2), "
	    "status = 'running', completed_at = NULL WHERE id = ?1");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, id) || bind_i64(q, 2, until) ||
	    bind_i64(q, 3, now_s), "job run");
}

int
store_job_finish(struct store *st, int64_t id, enum store_job_status status,
    const char *error, int64_t now_s)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE jobs SET status = ?2, error_message = ?3, "
	    "completed_at = ?4, next_run_at = CASE WHEN every_s IS NULL THEN "
	    "NULL ELSE max(?4, coalesce(started_at, ?4) + every_s) END "
	    "WHERE id = ?1");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, id) ||
	    sqlite3_bind_text(q, 2, store_job_status_name(status), -1,
	    SQLITE_STATIC) || bind_text_opt(q, 3, error) ||
	    bind_i64(q, 4, now_s), "job finish");
}

int
store_job_cancel(struct store *st, int64_t id, int64_t now_s)
{
	sqlite3_stmt	*q;
	int		 changed;

	q = store_stmt(st, "UPDATE jobs SET status = 'cancelled', "
	    "completed_at = ?2, next_run_at = NULL WHERE id = ?1 AND "
	    "(status = 'pending' OR status = 'running' OR "
	    "next_run_at IS NOT NULL)");
	if (q == NULL || write_done(st, q, bind_i64(q, 1, id) ||
	    bind_i64(q, 2, now_s), "job cancel") == -1)
		return -1;
	changed = sqlite3_changes(store_db(st)) > 0;
	if (changed && exec_id(st, "UPDATE job_batches SET status = "
	    "'cancelled' WHERE job_id = ?1 AND (status = 'pending' OR "
	    "status = 'running')", id, "job cancel batches") == -1)
		return -1;
	return changed ? 1 : 0;
}

int64_t
store_job_retry(struct store *st, int64_t id)
{
	int64_t	n;

	if (exec_id(st, "UPDATE job_batches SET status = 'pending', "
	    "attempts = 0, next_attempt_ms = 0, error_message = NULL, "
	    "completed_at = NULL WHERE job_id = ?1 AND (status = 'failed' OR "
	    "status = 'cancelled')", id, "job retry batches") == -1)
		return -1;
	n = sqlite3_changes(store_db(st));
	if (n > 0 && exec_id(st, "UPDATE jobs SET status = CASE WHEN "
	    "status = 'running' THEN 'running' ELSE 'pending' END, "
	    "error_message = NULL, completed_at = NULL, done_batches = "
	    "(SELECT count(*) FROM job_batches b WHERE b.job_id = jobs.id AND "
	    "b.status <> 'pending' AND b.status <> 'running') WHERE id = ?1",
	    id, "job retry") == -1)
		return -1;
	return n;
}

int64_t
store_jobs_due(struct store *st, int64_t now_s, int64_t *out, size_t max)
{
	sqlite3_stmt	*q;
	int64_t		 n = 0;
	int		 rc;

	q = store_stmt(st, "SELECT id FROM jobs WHERE next_run_at IS NOT NULL "
	    "AND next_run_at <= ?1 AND (status = 'complete' OR "
	    "status = 'incomplete' OR status = 'failed') ORDER BY next_run_at, "
	    "id LIMIT ?2");
	if (q == NULL)
		return -1;
	if (bind_i64(q, 1, now_s) || bind_i64(q, 2, (int64_t)max)) {
		store_bind_fail(st, q, "jobs due");
		return -1;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && (size_t)n < max)
		out[n++] = sqlite3_column_int64(q, 0);
	store_stmt_done(q);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		log_warnx("store: jobs due: %s", sqlite3_errstr(rc));
		return -1;
	}
	return n;
}

int
store_job_rerun(struct store *st, int64_t id, int64_t since)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE jobs SET run_since = ?2, prev_run_at = "
	    "started_at, run_until = NULL, next_run_at = NULL WHERE id = ?1");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, id) || bind_opt(q, 2, since),
	    "job rerun");
}

int
store_job_skip_run(struct store *st, int64_t id, const char *error,
    int64_t now_s)
{
	sqlite3_stmt	*q;

	q = store_stmt(st, "UPDATE jobs SET status = 'failed', error_message "
	    "= ?2, completed_at = ?3, next_run_at = ?3 + every_s WHERE "
	    "id = ?1 AND every_s IS NOT NULL");
	if (q == NULL)
		return -1;
	return write_one(st, q, bind_i64(q, 1, id) || bind_text_opt(q, 2,
	    error) || bind_i64(q, 3, now_s), "job skip run");
}

int
store_jobs_summary(struct store *st, struct store_jobs_summary *out)
{
	sqlite3_stmt	*q;
	int		 rc, s;

	memset(out, 0, sizeof(*out));
	q = store_stmt(st, "SELECT status, count(*), sum(events_fetched), "
	    "sum(events_new), max(id), count(every_s) FROM jobs "
	    "GROUP BY status");
	if (q == NULL)
		return -1;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if ((s = store_job_status_parse((const char *)
		    sqlite3_column_text(q, 0))) < 0)
			continue;
		out->by_status[s] = sqlite3_column_int64(q, 1);
		out->events_fetched += sqlite3_column_int64(q, 2);
		out->events_new += sqlite3_column_int64(q, 3);
		out->scheduled += sqlite3_column_int64(q, 5);
		if (s == STORE_JOB_RUNNING)
			out->running_id = sqlite3_column_int64(q, 4);
	}
	store_stmt_done(q);
	if (rc != SQLITE_DONE) {
		log_warnx("store: jobs summary: %s", sqlite3_errstr(rc));
		return -1;
	}
	return 0;
}
