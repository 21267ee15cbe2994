/*
 * cursors.c — rows of the `cursors` table, one author drain per
 * (author, relay), and the backfill progress every surface shows.
 *
 * Each write is one prepared statement and opens no transaction: the
 * drain writes a cursor inside ingest's open batch so it commits with the
 * events of its page. It never marks a row complete and incomplete at
 * once (the table's CHECK would refuse it), and a reset keeps the traffic
 * counters so the history of a relay's behaviour survives it.
 */
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "store/cursors.h"
#include "store/store.h"
#include "store/store_sql.h"

#define CURSOR_COLS	"pubkey, relay, until_cursor, complete, " \
	"incomplete_reason, gap_since, pages, events, new_events, " \
	"largest_page, stalls, stalls_total, updated_at, incomplete_why"

static const char *const cursor_state_names[] = {
	[STORE_CURSOR_DRAINING] = "draining",
	[STORE_CURSOR_COMPLETE] = "complete",
	[STORE_CURSOR_INCOMPLETE] = "incomplete",
};

static const char *const cursor_why_texts[] = {
	[STORE_CURSOR_WHY_NONE] = "incomplete",
	[STORE_CURSOR_WHY_BURST] = "same-second burst over the relay cap",
	[STORE_CURSOR_WHY_UNTIL] = "relay ignores until",
	[STORE_CURSOR_WHY_NOANSWER] = "no answer from relay",
	[STORE_CURSOR_WHY_UNUSED] = "relay not dialled (outbox relay limits)",
	[STORE_CURSOR_WHY_RECOVERY] = "events the relay reported are being "
	    "fetched again",
	[STORE_CURSOR_WHY_DENSE] = "more events in one second than one "
	    "negentropy session holds",
};

const char *
store_cursor_why_text(enum store_cursor_why w)
{
	if ((unsigned)w >= sizeof(cursor_why_texts) /
	    sizeof(cursor_why_texts[0]))
		w = STORE_CURSOR_WHY_NONE;
	return cursor_why_texts[w];
}

const char *
store_cursor_state_name(enum store_cursor_state s)
{
	if ((unsigned)s >= sizeof(cursor_state_names) /
	    sizeof(cursor_state_names[0]))
		return "?";
	return cursor_state_names[s];
}

static void
cursor_row(sqlite3_stmt *stmt, struct store_cursor *c)
{
	const char	*relay = (const char *)sqlite3_column_text(stmt, 1);
	const char	*reason = (const char *)sqlite3_column_text(stmt, 4);

	memset(c, 0, sizeof(*c));
	if (sqlite3_column_bytes(stmt, 0) == 32)
		memcpy(c->pubkey, sqlite3_column_blob(stmt, 0), 32);
	snprintf(c->relay, sizeof(c->relay), "%s", relay ? relay : "");
	c->started = sqlite3_column_type(stmt, 2) != SQLITE_NULL;
	c->until_cursor = sqlite3_column_int64(stmt, 2);
	if (sqlite3_column_int(stmt, 3) != 0)
		c->state = STORE_CURSOR_COMPLETE;
	else if (reason != NULL)
		c->state = STORE_CURSOR_INCOMPLETE;
	snprintf(c->reason, sizeof(c->reason), "%s", reason ? reason : "");
	c->has_gap = sqlite3_column_type(stmt, 5) != SQLITE_NULL;
	c->gap_since = sqlite3_column_int64(stmt, 5);
	c->pages = sqlite3_column_int64(stmt, 6);
	c->events = sqlite3_column_int64(stmt, 7);
	c->new_events = sqlite3_column_int64(stmt, 8);
	c->largest_page = sqlite3_column_int64(stmt, 9);
	c->stalls = sqlite3_column_int64(stmt, 10);
	c->stalls_total = sqlite3_column_int64(stmt, 11);
	c->updated_at = sqlite3_column_int64(stmt, 12);
	c->why = c->state == STORE_CURSOR_INCOMPLETE ?
	    (enum store_cursor_why)sqlite3_column_int(stmt, 13) :
	    STORE_CURSOR_WHY_NONE;
}

/* Bind ?1 pubkey and ?2 relay. 0, or -1 (statement released). */
static int
cursor_bind_key(struct store *st, sqlite3_stmt *stmt,
    const uint8_t pubkey[32], const char *relay)
{
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_bind_text(stmt, 2, relay, -1, SQLITE_STATIC) == SQLITE_OK)
		return 0;
	store_bind_fail(st, stmt, "cursors");
	return -1;
}

/*
 * Step an UPDATE of one cursor row and release it. 0, or -1 on an error
 * or when no row matched (the caller forgot store_cursor_ensure).
 */
static int
cursor_update_done(struct store *st, sqlite3_stmt *stmt, const char *what)
{
	if (store_step_done(st, stmt, what) == -1)
		return -1;
	if (sqlite3_changes(store_db(st)) != 1) {
		log_warnx("store: cursor %s: no such cursor", what);
		return -1;
	}
	return 0;
}

/*
 * Prepare sql (?1 pubkey, ?2 relay, ?3 now_s, nothing else), run it as an
 * UPDATE of that one row (cursor_update_done). 0 or -1.
 */
static int
cursor_update_at(struct store *st, const char *sql, const uint8_t pubkey[32],
    const char *relay, int64_t now_s, const char *what)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, sql);
	if (stmt == NULL || cursor_bind_key(st, stmt, pubkey, relay) == -1)
		return -1;
	if (sqlite3_bind_int64(stmt, 3, now_s) != SQLITE_OK) {
		store_stmt_done(stmt);
		return -1;
	}
	return cursor_update_done(st, stmt, what);
}

int
store_cursor_get(struct store *st, const uint8_t pubkey[32],
    const char *relay, struct store_cursor *out)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	stmt = store_stmt(st, "SELECT " CURSOR_COLS " FROM cursors WHERE "
	    "pubkey = ?1 AND relay = ?2");
	if (stmt == NULL || cursor_bind_key(st, stmt, pubkey, relay) == -1)
		return -1;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		cursor_row(stmt, out);
	store_stmt_done(stmt);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	log_warnx("store: cursor get: %s", sqlite3_errmsg(store_db(st)));
	return -1;
}

int
store_cursor_ensure(struct store *st, const uint8_t pubkey[32],
    const char *relay, int64_t now_s)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	stmt = store_stmt(st, "INSERT INTO cursors (pubkey, relay, updated_at) "
	    "VALUES (?1, ?2, ?3) ON CONFLICT (pubkey, relay) DO NOTHING");
	if (stmt == NULL || cursor_bind_key(st, stmt, pubkey, relay) == -1)
		return -1;
	if (sqlite3_bind_int64(stmt, 3, now_s) != SQLITE_OK) {
		store_stmt_done(stmt);
		return -1;
	}
	rc = sqlite3_step(stmt);
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: cursor ensure: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return sqlite3_changes(store_db(st)) == 1 ? 1 : 0;
}

int
store_cursor_page(struct store *st, const uint8_t pubkey[32],
    const char *relay, int64_t until, int64_t received, int64_t fresh,
    int64_t now_s)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "UPDATE cursors SET until_cursor = ?3, "
	    "pages = pages + 1, events = events + ?4, new_events = new_events "
	    "+ ?5, largest_page = max(largest_page, ?4), stalls = 0, "
	    "updated_at = ?6 WHERE pubkey = ?1 AND relay = ?2");
	if (stmt == NULL || cursor_bind_key(st, stmt, pubkey, relay) == -1)
		return -1;
	if (sqlite3_bind_int64(stmt, 3, until) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 4, received) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 5, fresh) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 6, now_s) != SQLITE_OK) {
		store_stmt_done(stmt);
		return -1;
	}
	return cursor_update_done(st, stmt, "page");
}

int
store_cursor_stall(struct store *st, const uint8_t pubkey[32],
    const char *relay, int64_t now_s)
{
	return cursor_update_at(st, "UPDATE cursors SET stalls = stalls + 1, "
	    "stalls_total = stalls_total + 1, updated_at = ?3 WHERE "
	    "pubkey = ?1 AND relay = ?2",
	    pubkey, relay, now_s, "stall");
}

int
store_cursor_complete(struct store *st, const uint8_t pubkey[32],
    const char *relay, int64_t now_s)
{
	return cursor_update_at(st, "UPDATE cursors SET complete = 1, "
	    "incomplete_reason = NULL, incomplete_why = 0, gap_since = NULL, "
	    "updated_at = ?3 "
	    "WHERE pubkey = ?1 AND relay = ?2",
	    pubkey, relay, now_s, "complete");
}

int
store_cursor_incomplete(struct store *st, const uint8_t pubkey[32],
    const char *relay, enum store_cursor_why why, const char *detail,
    int64_t gap_since, int64_t now_s)
{
	sqlite3_stmt	*stmt;
	char		 r[STORE_CURSOR_REASON_MAX + 1];
	int		 rc;

	snprintf(r, sizeof(r), "%s%s%s", store_cursor_why_text(why),
	    detail != NULL ? ": " : "", detail != NULL ? detail : "");
	stmt = store_stmt(st, "UPDATE cursors SET complete = 0, "
	    "incomplete_reason = ?3, gap_since = ?4, updated_at = ?5, "
	    "incomplete_why = ?6 WHERE pubkey = ?1 AND relay = ?2");
	if (stmt == NULL || cursor_bind_key(st, stmt, pubkey, relay) == -1)
		return -1;
	rc = sqlite3_bind_text(stmt, 3, r, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = gap_since < 0 ? sqlite3_bind_null(stmt, 4) :
		    sqlite3_bind_int64(stmt, 4, gap_since);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 5, now_s);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(stmt, 6, (int)why);
	if (rc != SQLITE_OK) {
		store_bind_fail(st, stmt, "cursor incomplete");
		return -1;
	}
	return cursor_update_done(st, stmt, "incomplete");
}

int
store_cursor_retry(struct store *st, const uint8_t pubkey[32],
    const char *relay, int64_t now_s)
{
	return cursor_update_at(st, "UPDATE cursors SET complete = 0, "
	    "incomplete_reason = NULL, incomplete_why = 0, stalls = 0, "
	    "updated_at = ?3 "
	    "WHERE pubkey = ?1 AND relay = ?2",
	    pubkey, relay, now_s, "retry");
}

int
store_cursor_gap(struct store *st, const uint8_t pubkey[32],
    const char *relay, int64_t gap_since, int64_t now_s)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "UPDATE cursors SET gap_since = ?3, "
	    "updated_at = ?4 WHERE pubkey = ?1 AND relay = ?2");
	if (stmt == NULL || cursor_bind_key(st, stmt, pubkey, relay) == -1)
		return -1;
	if (sqlite3_bind_int64(stmt, 3, gap_since) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 4, now_s) != SQLITE_OK) {
		store_stmt_done(stmt);
		return -1;
	}
	return cursor_update_done(st, stmt, "gap");
}

int64_t
store_cursors_reset(struct store *st, const uint8_t *pubkey, int64_t now_s)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	/*
	 * Two statements: "?1 IS NULL OR pubkey = ?1" cannot use the
	 * primary key, so one author's reset would read every row.
	 */
#define CURSORS_RESET "UPDATE cursors SET until_cursor = NULL, " \
	    "complete = 0, incomplete_reason = NULL, incomplete_why = 0, " \
	    "gap_since = NULL, stalls = 0, updated_at = ?2"
	stmt = store_stmt(st, pubkey == NULL ? CURSORS_RESET :
	    CURSORS_RESET " WHERE pubkey = ?1");
#undef CURSORS_RESET
	if (stmt == NULL)
		return -1;
	rc = pubkey == NULL ? SQLITE_OK :
	    sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 2, now_s);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(stmt);
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: cursors reset: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return sqlite3_changes(store_db(st));
}

/* Hand each row of a cursor query to cb. Number handed, or -1. */
static int64_t
cursors_walk(struct store *st, sqlite3_stmt *stmt, store_cursor_cb cb,
    void *arg)
{
	struct store_cursor	c;
	int64_t			n = 0;
	int			rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cursor_row(stmt, &c);
		n++;
		if (cb(&c, arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: cursors: %s", sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return n;
}

int
store_cursors_each(struct store *st, const uint8_t *pubkey,
    store_cursor_cb cb, void *arg)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	/* One author's rows by the primary key, or every row. */
	stmt = store_stmt(st, pubkey == NULL ? "SELECT " CURSOR_COLS " FROM "
	    "cursors ORDER BY pubkey, relay" : "SELECT " CURSOR_COLS " FROM "
	    "cursors WHERE pubkey = ?1 ORDER BY relay");
	if (stmt == NULL)
		return -1;
	rc = pubkey == NULL ? SQLITE_OK :
	    sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC);
	if (rc != SQLITE_OK) {
		store_stmt_done(stmt);
		return -1;
	}
	return cursors_walk(st, stmt, cb, arg) < 0 ? -1 : 0;
}

int64_t
store_cursors_draining(struct store *st, const char *relay,
    const uint8_t *after, size_t max, store_cursor_cb cb, void *arg)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	stmt = store_stmt(st, "SELECT c.pubkey, c.relay, c.until_cursor, "
	    "c.complete, c.incomplete_reason, c.gap_since, c.pages, c.events, "
	    "c.new_events, c.largest_page, c.stalls, c.stalls_total, "
	    "c.updated_at, c.incomplete_why FROM cursors c INDEXED BY "
	    "cursors_todo JOIN follows f ON f.pubkey = c.pubkey "
	    "WHERE c.relay = ?1 AND c.complete = 0 AND c.incomplete_reason IS "
	    "NULL AND f.stale = 0 AND c.pubkey > ?2 ORDER BY c.pubkey "
	    "LIMIT ?3");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_bind_text(stmt, 1, relay, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = after == NULL ? sqlite3_bind_zeroblob(stmt, 2, 0) :
		    sqlite3_bind_blob(stmt, 2, after, 32, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 3, (int64_t)max);
	if (rc != SQLITE_OK) {
		store_stmt_done(stmt);
		return -1;
	}
	return cursors_walk(st, stmt, cb, arg);
}

/*
 * One pass over the followed authors, each with its cursor rows folded
 * into (rows, complete rows, incomplete rows) by the cursors primary key.
 * An author without rows is incomplete (STORE_CURSOR_REASON_NORELAY).
 */
static int
cursors_summary_read(struct store *st, struct store_cursor_summary *out)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	memset(out, 0, sizeof(*out));
	stmt = store_stmt(st, "SELECT count(*), "
	    "coalesce(sum(n > 0 AND done = n), 0), "
	    "coalesce(sum(n = 0 OR (done + inc = n AND inc > 0)), 0), "
	    "coalesce(sum(n), 0), coalesce(sum(done), 0), coalesce(sum(inc), 0), "
	    "coalesce(sum(n = 0), 0) "
	    "FROM (SELECT coalesce(c.n, 0) AS n, coalesce(c.done, 0) AS done, "
	    "coalesce(c.inc, 0) AS inc FROM follows f LEFT JOIN (SELECT pubkey, "
	    "count(*) AS n, sum(complete = 1) AS done, sum(complete = 0 AND "
	    "incomplete_reason IS NOT NULL) AS inc FROM cursors GROUP BY "
	    "pubkey) c ON c.pubkey = f.pubkey WHERE f.stale = 0)");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->authors_total = sqlite3_column_int64(stmt, 0);
		out->authors_complete = sqlite3_column_int64(stmt, 1);
		out->authors_incomplete = sqlite3_column_int64(stmt, 2);
		out->cursors_total = sqlite3_column_int64(stmt, 3);
		out->cursors_complete = sqlite3_column_int64(stmt, 4);
		out->cursors_incomplete = sqlite3_column_int64(stmt, 5);
		out->authors_norelay = sqlite3_column_int64(stmt, 6);
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW) {
		log_warnx("store: cursors summary: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	out->authors_draining = out->authors_total - out->authors_complete -
	    out->authors_incomplete;
	return 0;
}

/*
 * The database's state as the summary cache sees it: this connection's
 * change count and the data version. -1 (logged) when it cannot be read.
 */
static int
cursor_cache_key(struct store *st, int64_t *changes, int64_t *version)
{
	int64_t	zero;

	*changes = sqlite3_total_changes64(store_db(st));
	return store_row_two(st, "SELECT data_version, 0 FROM "
	    "pragma_data_version", version, &zero, "data version");
}

/*
 * The summary is a pass over every followed author and cursor row (20 ms
 * with 5,000 authors on 20 relays); the status page and the service
 * manager's status line ask every few seconds. Asked again with nothing
 * written since, the last answer is the answer.
 */
int
store_cursors_summary(struct store *st, struct store_cursor_summary *out)
{
	struct store_cursor_cache	*c = store_cursor_cache(st);
	int64_t				 changes, version;
	int				 keyed;

	keyed = cursor_cache_key(st, &changes, &version) == 0;
	if (keyed && c->valid && c->changes == changes &&
	    c->data_version == version) {
		*out = c->sum;
		return 0;
	}
	c->valid = 0;
	if (cursors_summary_read(st, out) == -1)
		return -1;
	if (keyed) {
		c->sum = *out;
		c->changes = changes;
		c->data_version = version;
		c->valid = 1;
	}
	return 0;
}

int
store_cursors_any_draining(struct store *st)
{
	int64_t	any, zero;

	/* The partial index cursors_todo holds exactly the rows asked for. */
	if (store_row_two(st, "SELECT EXISTS (SELECT 1 FROM cursors c JOIN "
	    "follows f ON f.pubkey = c.pubkey WHERE c.complete = 0 AND "
	    "c.incomplete_reason IS NULL AND f.stale = 0), 0", &any, &zero,
	    "cursors draining") == -1)
		return -1;
	return any != 0;
}

int64_t
store_cursors_recovered(struct store *st, const char *relay, int64_t now_s)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "UPDATE cursors SET complete = 1, "
	    "incomplete_reason = NULL, incomplete_why = 0, updated_at = ?2 "
	    "WHERE relay = ?1 AND incomplete_why = 5");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 1, relay, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, now_s) != SQLITE_OK) {
		store_bind_fail(st, stmt, "cursors recovered");
		return -1;
	}
	if (store_step_done(st, stmt, "cursors recovered") == -1)
		return -1;
	return sqlite3_changes(store_db(st));
}
