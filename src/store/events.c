/*
 * events.c — rows of the `events` table, their inbox rows, the totals in
 * `event_totals` (inserts counted here through store_totals_add, deletes
 * by the trigger of migration 015), `relay_newest`, and retention. Every
 * statement is prepared once through store_stmt(). A row is written
 * packed (store/rowjson.c) and its JSON read back only through
 * store_row_json.
 *
 * It never rewrites an event row (only rowjson.c's conversion does, to
 * the same bytes), never deletes an event that the inbox still holds (the inbox's foreign key would refuse it anyway) or a
 * follow list or profile (kinds 0, 3, 10002), and never runs a query
 * whose cost grows with the table without a LIMIT on the hot path.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/limits.h"
#include "core/log.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "store/dedup.h"
#include "store/events.h"
#include "store/names.h"
#include "store/rowjson.h"
#include "store/store.h"
#include "store/store_sql.h"
#include "store/tags.h"

static int
events_enqueue(struct store *st, const uint8_t id[32], int64_t now_s)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "INSERT INTO inbox (event_id, enqueued_at) "
	    "VALUES (?1, ?2) ON CONFLICT (event_id) DO NOTHING");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, id, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, now_s) != SQLITE_OK) {
		store_bind_fail(st, stmt, "events enqueue");
		return -1;
	}
	return store_step_done(st, stmt, "events enqueue");
}

static int	evict_tags(struct store *, const uint8_t [32]);

int
store_event_remove(struct store *st, const uint8_t id[32])
{
	static const char *const sql[] = {
		"DELETE FROM inbox WHERE event_id = ?1",
		"DELETE FROM events WHERE id = ?1",
	};
	sqlite3_stmt	*stmt;
	size_t		 i;

	if (evict_tags(st, id) == -1)
		return -1;
	for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		if ((stmt = store_stmt(st, sql[i])) == NULL)
			return -1;
		if (sqlite3_bind_blob(stmt, 1, id, 32, SQLITE_STATIC) !=
		    SQLITE_OK) {
			store_bind_fail(st, stmt, "events remove");
			return -1;
		}
		if (store_step_done(st, stmt, "events remove") == -1)
			return -1;
	}
	if (sqlite3_changes(store_db(st)) == 0)
		return 0;
	store_removed(st, id);
	return 1;
}

int
store_event_row_insert(struct store *st, const struct store_event_row *row,
    int64_t expires_at, bool enqueue)
{
	const struct buf	*packed;
	sqlite3_stmt		*stmt;
	int			 rc;

	if (row->json_len > INT_MAX || (packed = store_row_pack(st, row->id,
	    row->pubkey, row->json, row->json_len)) == NULL)
		return -1;
	stmt = store_stmt(st, "INSERT INTO events (id, pubkey, kind, "
	    "created_at, source, first_relay, received_at, json, expires_at, "
	    "packed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, '', ?9, ?8) "
	    "ON CONFLICT (id) DO NOTHING");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_bind_blob(stmt, 1, row->id, 32, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_blob(stmt, 2, row->pubkey, 32, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 3, row->kind);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 4, row->created_at);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(stmt, 5, row->source, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = row->first_relay == NULL ? sqlite3_bind_null(stmt, 6) :
		    sqlite3_bind_text(stmt, 6, row->first_relay, -1,
		    SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 7, row->received_at);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_blob(stmt, 8, packed->data, (int)packed->len,
		    SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = expires_at < 0 ? sqlite3_bind_null(stmt, 9) :
		    sqlite3_bind_int64(stmt, 9, expires_at);
	if (rc != SQLITE_OK) {
		store_bind_fail(st, stmt, "events insert");
		return -1;
	}
	if (store_step_done(st, stmt, "events insert") == -1)
		return -1;
	if (sqlite3_changes(store_db(st)) == 0)
		return STORE_INSERT_EXISTS;
	if (store_tags_insert(st, sqlite3_last_insert_rowid(store_db(st)),
	    row->created_at, row->tags) == -1 ||
	    store_totals_add(st, 1, (int64_t)row->json_len) == -1 ||
	    (enqueue && events_enqueue(st, row->id, row->received_at) == -1))
		return -1;
	if (row->kind == 0)
		store_names_forget(st, row->pubkey);
	return STORE_INSERT_NEW;
}

int
store_event_exists(struct store *st, const uint8_t id[32])
{
	struct store_dedup	d;

	return store_dedup_probe(st, id, &d);
}

int
store_events_totals(struct store *st, int64_t *count, int64_t *bytes)
{
	int64_t	c, b;

	if (store_row_two(st, "SELECT count, bytes FROM event_totals "
	    "WHERE id = 1", &c, &b, "events totals") == -1)
		return -1;
	/* What this connection's open transaction added, then the row. */
	store_totals_pending(st, count, bytes);
	*count += c;
	*bytes += b;
	return 0;
}

/*
 * Step stmt (bound, one row expected at most, STORE_ROW_JSON_COLS first)
 * and append the row's JSON to out, *at from the column after them when
 * at is not NULL. 1, 0 or -1.
 */
static int
events_fetch_json(struct store *st, sqlite3_stmt *stmt, struct buf *out,
    int64_t *at, const char *what)
{
	int	rc, ret = 1;

	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE) {
		store_stmt_done(stmt);
		return 0;
	}
	if (rc != SQLITE_ROW) {
		log_warnx("store: events %s: %s", what,
		    sqlite3_errmsg(store_db(st)));
		store_stmt_done(stmt);
		return -1;
	}
	if (at != NULL)
		*at = sqlite3_column_int64(stmt, STORE_ROW_JSON_NCOLS);
	if (out != NULL && store_row_json(stmt, 0, out) == -1)
		ret = -1;
	store_stmt_done(stmt);
	return ret;
}

int
store_event_get(struct store *st, const uint8_t id[32], struct buf *out)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "SELECT " STORE_ROW_JSON_COLS("") " FROM events "
	    "WHERE id = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, id, 32, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "events get");
		return -1;
	}
	return events_fetch_json(st, stmt, out, NULL, "get");
}

bool
store_kind_replaceable(uint32_t kind)
{
	return kind == 0 || kind == 3 || (kind >= 10000 && kind < 20000) ||
	    (kind >= 30000 && kind < 40000);
}

int
store_event_newest(struct store *st, const uint8_t pubkey[32], uint32_t kind,
    struct buf *out, int64_t *created_at)
{
	sqlite3_stmt	*stmt;

	/* Other kinds are right too, by a scan of the author's events. */
	if (store_kind_replaceable(kind))
		stmt = store_stmt(st, EVENTS_SQL_NEWEST_REPLACEABLE);
	else
		stmt = store_stmt(st, "SELECT " STORE_ROW_JSON_COLS("") ", "
		    "created_at FROM events WHERE pubkey = ?1 AND kind = ?2 ORDER BY created_at DESC, "
		    "id ASC LIMIT 1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) !=
	    SQLITE_OK || sqlite3_bind_int64(stmt, 2, kind) != SQLITE_OK) {
		store_bind_fail(st, stmt, "events newest");
		return -1;
	}
	return events_fetch_json(st, stmt, out, created_at, "newest");
}

int
store_event_newest_parsed(struct store *st, const uint8_t pubkey[32],
    uint32_t kind, struct event *ev)
{
	struct buf		 b;
	enum event_result	 er;
	int			 rc;

	buf_init(&b, EVENT_MAX_BYTES_CEILING);
	rc = store_event_newest(st, pubkey, kind, &b, NULL);
	if (rc == 1) {
		er = event_parse(ev, (const char *)b.data, b.len,
		    EVENT_MAX_BYTES_CEILING);
		if (er != EVENT_OK) {
			log_warnx("store: stored event of kind %u does not "
			    "parse: %s", kind, event_result_str(er));
			rc = -1;
		}
	}
	buf_free(&b);
	return rc;
}

/* Append " AND col IN (?,?,...)" for n values. 0 or -1. */
static int
query_in(struct buf *sql, const char *col, size_t n)
{
	size_t	i;

	if (buf_printf(sql, " AND %s IN (", col) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if (buf_puts(sql, i ? ",?" : "?") == -1)
			return -1;
	return buf_putc(sql, ')');
}

/* The SQL of a local query for f; its parameters in query_bind order. */
static int
query_sql(const struct filter *f, struct buf *sql)
{
	if (buf_puts(sql, "SELECT " STORE_ROW_JSON_COLS("") " FROM events "
	    "WHERE 1") == -1)
		return -1;
	if ((f->has & FILTER_HAS_IDS) && query_in(sql, "id", f->nids) == -1)
		return -1;
	if ((f->has & FILTER_HAS_AUTHORS) &&
	    query_in(sql, "pubkey", f->nauthors) == -1)
		return -1;
	if ((f->has & FILTER_HAS_KINDS) &&
	    query_in(sql, "kind", f->nkinds) == -1)
		return -1;
	if ((f->has & FILTER_HAS_SINCE) &&
	    buf_puts(sql, " AND created_at >= ?") == -1)
		return -1;
	if ((f->has & FILTER_HAS_UNTIL) &&
	    buf_puts(sql, " AND created_at <= ?") == -1)
		return -1;
	return buf_puts(sql, " ORDER BY created_at DESC, id DESC LIMIT ?");
}

static int
query_bind(sqlite3_stmt *stmt, const struct filter *f)
{
	int	i = 1, rc = SQLITE_OK;
	size_t	j;

	if (f->has & FILTER_HAS_IDS)
		for (j = 0; j < f->nids && rc == SQLITE_OK; j++)
			rc = sqlite3_bind_blob(stmt, i++, f->ids[j], 32,
			    SQLITE_STATIC);
	if (f->has & FILTER_HAS_AUTHORS)
		for (j = 0; j < f->nauthors && rc == SQLITE_OK; j++)
			rc = sqlite3_bind_blob(stmt, i++, f->authors[j], 32,
			    SQLITE_STATIC);
	if (f->has & FILTER_HAS_KINDS)
		for (j = 0; j < f->nkinds && rc == SQLITE_OK; j++)
			rc = sqlite3_bind_int64(stmt, i++, f->kinds[j]);
	if ((f->has & FILTER_HAS_SINCE) && rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, i++, f->since);
	if ((f->has & FILTER_HAS_UNTIL) && rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, i++, f->until);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, i, STORE_QUERY_MAX_ROWS);
	return rc == SQLITE_OK ? 0 : -1;
}

/* Whether a row's event passes the tag conditions (the SQL did the rest). */
static int
query_tags_match(const struct filter *f, const char *json, size_t len)
{
	struct event	ev;
	int		m;

	if (f->ntags == 0)
		return 1;
	event_init(&ev);
	if (event_parse(&ev, json, len, EVENT_MAX_BYTES_CEILING) != EVENT_OK)
		return 0;
	m = filter_match(f, &ev);
	event_free(&ev);
	return m;
}

int64_t
store_events_query(struct store *st, const struct filter *f,
    size_t max_results, store_event_cb cb, void *arg)
{
	struct buf	 sql, json;
	sqlite3_stmt	*stmt = NULL;
	int64_t		 n = 0;
	int		 rc = SQLITE_DONE;

	if ((f->has & FILTER_HAS_LIMIT) && f->limit < max_results)
		max_results = (size_t)f->limit;
	if (((f->has & FILTER_HAS_IDS) && f->nids == 0) ||
	    ((f->has & FILTER_HAS_AUTHORS) && f->nauthors == 0) ||
	    ((f->has & FILTER_HAS_KINDS) && f->nkinds == 0) ||
	    max_results == 0)
		return 0;
	if (f->nids > STORE_QUERY_MAX_LIST || f->nauthors > STORE_QUERY_MAX_LIST
	    || f->nkinds > STORE_QUERY_MAX_LIST) {
		log_warnx("store: local query: a list is over %d entries",
		    STORE_QUERY_MAX_LIST);
		return -1;
	}
	buf_init(&sql, 64 * 1024);
	if (query_sql(f, &sql) == -1 ||
	    sqlite3_prepare_v2(store_db(st), buf_cstr(&sql), -1, &stmt,
	    NULL) != SQLITE_OK || query_bind(stmt, f) == -1) {
		log_warnx("store: local query: %s", sqlite3_errmsg(store_db(st)));
		sqlite3_finalize(stmt);
		buf_free(&sql);
		return -1;
	}
	buf_free(&sql);
	buf_init(&json, EVENT_SERIAL_MAX_BYTES);
	while ((size_t)n < max_results &&
	    (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		buf_reset(&json);
		if (store_row_json(stmt, 0, &json) == -1 ||
		    !query_tags_match(f, (const char *)json.data, json.len))
			continue;
		n++;
		if (cb((const char *)json.data, json.len, arg) != 0)
			break;
	}
	buf_free(&json);
	if ((size_t)n < max_results && rc != SQLITE_DONE && rc != SQLITE_ROW) {
		log_warnx("store: local query: %s", sqlite3_errmsg(store_db(st)));
		n = -1;
	}
	sqlite3_finalize(stmt);
	return n;
}

int64_t
store_events_author_items(struct store *st, const uint8_t pubkey[32],
    int64_t since, int64_t until, size_t max, store_item_cb cb, void *arg)
{
	sqlite3_stmt	*stmt;
	int64_t		 n = 0;
	int		 rc;

	stmt = store_stmt(st, EVENTS_SQL_AUTHOR_ITEMS);
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, since < 0 ? 0 : since) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, until) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 4, (int64_t)max) != SQLITE_OK) {
		store_bind_fail(st, stmt, "author items");
		return -1;
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(stmt, 1) != 32)
			continue;
		n++;
		if (cb(sqlite3_column_int64(stmt, 0),
		    sqlite3_column_blob(stmt, 1), arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: author items: %s", sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return n;
}

/*
 * Retention walks the table in (created_at, id) order from a resume
 * position kept in meta (evict_at, evict_id), so rows it may not evict
 * (queued, follow lists) are stepped over once per sweep instead of being
 * scanned again by every call. At the end of the table it wraps to the
 * oldest: rows that became evictable since (the uplink confirmed them) or
 * older events that arrived later are found on the next sweep.
 */
struct evict_pos {
	int64_t	at;
	uint8_t	id[32];
	int	idlen;		/* 0: from the oldest */
};

static int
evict_pos_load(struct store *st, struct evict_pos *pos)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	memset(pos, 0, sizeof(*pos));
	pos->at = INT64_MIN;
	stmt = store_stmt(st, "SELECT (SELECT value FROM meta WHERE key = "
	    "'evict_at'), (SELECT value FROM meta WHERE key = 'evict_id')");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) == SQLITE_INTEGER &&
	    sqlite3_column_bytes(stmt, 1) == 32) {
		pos->at = sqlite3_column_int64(stmt, 0);
		memcpy(pos->id, sqlite3_column_blob(stmt, 1), 32);
		pos->idlen = 32;
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW) {
		log_warnx("store: evict position: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

static int
evict_pos_save(struct store *st, const struct evict_pos *pos)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	stmt = store_stmt(st, "INSERT OR REPLACE INTO meta (key, value) "
	    "VALUES ('evict_at', ?1), ('evict_id', ?2)");
	if (stmt == NULL)
		return -1;
	rc = pos->idlen == 0 ? sqlite3_bind_null(stmt, 1) :
	    sqlite3_bind_int64(stmt, 1, pos->at);
	if (rc == SQLITE_OK)
		rc = pos->idlen == 0 ? sqlite3_bind_null(stmt, 2) :
		    sqlite3_bind_blob(stmt, 2, pos->id, 32, SQLITE_STATIC);
	if (rc != SQLITE_OK) {
		store_bind_fail(st, stmt, "events evict position");
		return -1;
	}
	return store_step_done(st, stmt, "events evict position");
}

/* What one scan found: ids to delete and the bytes they free. */
struct evict_scan {
	uint8_t	(*ids)[32];
	size_t	  nids;
	int64_t	  bytes;	/* total after deleting ids */
	int	  wrapped;	/* reached the newest row */
};

/*
 * Walk up to STORE_EVICT_SCAN_ROWS rows after pos, collecting evictable
 * ids until enough bytes are freed or STORE_EVICT_CHUNK_ROWS are held.
 * pos moves to the last row looked at. 0 or -1.
 */
static int
evict_scan(struct store *st, struct evict_pos *pos, int64_t max_bytes,
    struct evict_scan *sc)
{
	sqlite3_stmt	*stmt;
	int		 rc = SQLITE_ROW, rows = 0;

	stmt = store_stmt(st, "SELECT e.id, e.created_at, e.kind, "
	    STORE_ROW_JSON_BYTES("e.") ", EXISTS (SELECT 1 FROM inbox i "
	    "WHERE i.event_id = e.id) FROM events e WHERE (e.created_at, e.id) "
	    "> (?1, ?2) ORDER BY e.created_at, e.id LIMIT ?3");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, pos->at) != SQLITE_OK ||
	    sqlite3_bind_blob(stmt, 2, pos->id, pos->idlen, SQLITE_STATIC) !=
	    SQLITE_OK || sqlite3_bind_int(stmt, 3, STORE_EVICT_SCAN_ROWS) !=
	    SQLITE_OK) {
		store_bind_fail(st, stmt, "events evict scan");
		return -1;
	}
	while (sc->bytes > max_bytes && sc->nids < STORE_EVICT_CHUNK_ROWS &&
	    (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		int64_t	kind = sqlite3_column_int64(stmt, 2);

		rows++;
		pos->at = sqlite3_column_int64(stmt, 1);
		memcpy(pos->id, sqlite3_column_blob(stmt, 0), 32);
		pos->idlen = 32;
		if (kind == 0 || kind == 3 || kind == 10002 ||
		    sqlite3_column_int(stmt, 4) != 0)
			continue;
		memcpy(sc->ids[sc->nids++], pos->id, 32);
		sc->bytes -= sqlite3_column_int64(stmt, 3);
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		log_warnx("store: evict scan: %s", sqlite3_errmsg(store_db(st)));
		return -1;
	}
	if (rc == SQLITE_DONE && rows < STORE_EVICT_SCAN_ROWS)
		sc->wrapped = 1;
	return 0;
}

/*
 * Remove the tag index rows of the event id before it is deleted: they
 * name its rowid, which a later event may be given again.
 */
static int
evict_tags(struct store *st, const uint8_t id[32])
{
	sqlite3_stmt	*stmt;
	struct buf	 json;
	int		 rc, ret = 0;

	stmt = store_stmt(st, "SELECT rowid, created_at, "
	    STORE_ROW_JSON_COLS("") " FROM events WHERE id = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, id, 32, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "events evict tags");
		return -1;
	}
	buf_init(&json, EVENT_SERIAL_MAX_BYTES);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		ret = store_row_json(stmt, 2, &json) == -1 ? -1 :
		    store_tags_delete(st, sqlite3_column_int64(stmt, 0),
		    sqlite3_column_int64(stmt, 1), (const char *)json.data,
		    json.len);
	else if (rc != SQLITE_DONE) {
		log_warnx("store: evict tags: %s", sqlite3_errmsg(store_db(st)));
		ret = -1;
	}
	store_stmt_done(stmt);
	buf_free(&json);
	return ret;
}

static int
evict_delete(struct store *st, const struct evict_scan *sc)
{
	sqlite3_stmt	*stmt;
	size_t		 i;

	for (i = 0; i < sc->nids; i++) {
		if (evict_tags(st, sc->ids[i]) == -1)
			return -1;
		stmt = store_stmt(st, "DELETE FROM events WHERE id = ?1");
		if (stmt == NULL)
			return -1;
		if (sqlite3_bind_blob(stmt, 1, sc->ids[i], 32, SQLITE_STATIC) !=
		    SQLITE_OK) {
			store_bind_fail(st, stmt, "events evict");
			return -1;
		}
		if (store_step_done(st, stmt, "events evict") == -1)
			return -1;
		store_removed(st, sc->ids[i]);
	}
	return 0;
}

static int
evict_step(struct store *st, int64_t max_bytes, struct evict_scan *sc)
{
	struct evict_pos	pos;
	int64_t			count;

	if (store_events_totals(st, &count, &sc->bytes) == -1 ||
	    evict_pos_load(st, &pos) == -1)
		return -1;
	if (sc->bytes <= max_bytes)
		return 0;
	if (evict_scan(st, &pos, max_bytes, sc) == -1 ||
	    evict_delete(st, sc) == -1)
		return -1;
	if (sc->wrapped)
		pos.idlen = 0;
	return evict_pos_save(st, &pos);
}

int
store_events_evict(struct store *st, int64_t max_bytes, int64_t *evicted)
{
	struct evict_scan	sc;
	int			rc;
	bool			nested;

	if (evicted != NULL)
		*evicted = 0;
	memset(&sc, 0, sizeof(sc));
	sc.ids = calloc(STORE_EVICT_CHUNK_ROWS, sizeof(*sc.ids));
	if (sc.ids == NULL) {
		log_warn("store: evict");
		return -1;
	}
	/*
	 * Inside a transaction already (ingest's batch) the step runs in it
	 * without a savepoint of its own: a savepoint keeps the original of
	 * every page the step changes in memory (temp_store MEMORY), 15 MB
	 * for 500 evictions on a store of 1,000,000 events.
	 */
	nested = store_tx_depth(st) > 0;
	if (!nested && store_begin(st) == -1) {
		free(sc.ids);
		return -1;
	}
	rc = evict_step(st, max_bytes, &sc);
	free(sc.ids);
	if (rc == -1) {
		if (!nested)
			store_rollback(st);
		return -1;
	}
	if (!nested && store_commit(st) == -1)
		return -1;
	if (evicted != NULL)
		*evicted = (int64_t)sc.nids;
	if (sc.nids > 0)
		log_debug("store: retention evicted %zu events", sc.nids);
	return sc.bytes > max_bytes ? 1 : 0;
}

int
store_relay_newest_get(struct store *st, const char *relay,
    int64_t *created_at)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	*created_at = 0;
	stmt = store_stmt(st, "SELECT created_at FROM relay_newest WHERE "
	    "relay = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 1, relay, -1, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "events relay newest");
		return -1;
	}
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*created_at = sqlite3_column_int64(stmt, 0);
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		log_warnx("store: relay newest: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

int
store_relay_newest_note(struct store *st, const char *relay,
    int64_t created_at)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "INSERT INTO relay_newest (relay, created_at) "
	    "VALUES (?1, ?2) ON CONFLICT (relay) DO UPDATE SET created_at = "
	    "max(created_at, excluded.created_at)");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 1, relay, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, created_at) != SQLITE_OK) {
		store_bind_fail(st, stmt, "events relay newest");
		return -1;
	}
	return store_step_done(st, stmt, "events relay newest note");
}
