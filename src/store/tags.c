/*
 * tags.c — rows of `event_tags` (see tags.h). It writes only event_tags and
 * the fill's two meta rows, and only inside a transaction; it never
 * indexes anything but a single ASCII letter's first value, so what it
 * writes is bounded by the event's own size (EVENT_MAX_TAGS rows at most).
 */
#include <string.h>

#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "store/rowjson.h"
#include "store/store.h"
#include "store/store_sql.h"
#include "store/tags.h"

/* The letter of a tag name that is one ASCII letter, else 0. */
static int
tag_letter(const char *name)
{
	if (name == NULL || name[0] == '\0' || name[1] != '\0')
		return 0;
	if ((name[0] >= 'a' && name[0] <= 'z') ||
	    (name[0] >= 'A' && name[0] <= 'Z'))
		return (unsigned char)name[0];
	return 0;
}

/* 1 if s[0..len) is 64 lowercase hex digits. */
static int
is_hex64(const char *s, size_t len)
{
	size_t	i;

	if (len != 64)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'f')))
			return 0;
	return 1;
}

int
store_tag_value_bind(sqlite3_stmt *stmt, int idx, const char *v, size_t len)
{
	uint8_t	b[32];

	if (is_hex64(v, len) && hex_decode(v, len, b, sizeof(b)) == 0)
		return sqlite3_bind_blob(stmt, idx, b, 32, SQLITE_TRANSIENT);
	return sqlite3_bind_text(stmt, idx, v, (int)len, SQLITE_TRANSIENT);
}

/*
 * Call fn for each indexable (letter, value) of tags, at most
 * TAGS_MAX_PER_EVENT times. 0, or -1 as soon as fn fails.
 */
static int
tags_each(const cJSON *tags, int (*fn)(void *, int, const char *), void *arg)
{
	const cJSON	*t, *k, *v;
	int		 letter, n = 0;

	if (!cJSON_IsArray(tags))
		return 0;
	for (t = tags->child; t != NULL && n < TAGS_MAX_PER_EVENT; t = t->next) {
		if ((k = t->child) == NULL || !cJSON_IsString(k) ||
		    (v = k->next) == NULL || !cJSON_IsString(v) ||
		    (letter = tag_letter(k->valuestring)) == 0)
			continue;
		n++;
		if (fn(arg, letter, v->valuestring) == -1)
			return -1;
	}
	return 0;
}

struct tag_row {
	struct store	*st;
	sqlite3_stmt	*stmt;
	int64_t		 rowid;
	int64_t		 created_at;
	const char	*what;
};

static int
tag_row_run(void *arg, int letter, const char *value)
{
	struct tag_row	*r = arg;

	if (sqlite3_bind_int(r->stmt, 1, letter) != SQLITE_OK ||
	    store_tag_value_bind(r->stmt, 2, value, strlen(value)) !=
	    SQLITE_OK || sqlite3_bind_int64(r->stmt, 3, r->created_at) !=
	    SQLITE_OK || sqlite3_bind_int64(r->stmt, 4, r->rowid) !=
	    SQLITE_OK) {
		store_bind_fail(r->st, r->stmt, r->what);
		return -1;
	}
	return store_step_done(r->st, r->stmt, r->what);
}

int
store_tags_insert(struct store *st, int64_t rowid, int64_t created_at,
    const cJSON *tags)
{
	struct tag_row	r = { st, NULL, rowid, created_at, "tags insert" };

	if (tags == NULL)
		return 0;
	r.stmt = store_stmt(st, "INSERT OR IGNORE INTO event_tags (name, "
	    "value, created_at, ev) VALUES (?1, ?2, ?3, ?4)");
	if (r.stmt == NULL)
		return -1;
	return tags_each(tags, tag_row_run, &r);
}

int
store_tags_delete(struct store *st, int64_t rowid, int64_t created_at,
    const char *json, size_t len)
{
	struct tag_row	 r = { st, NULL, rowid, created_at, "tags delete" };
	cJSON		*obj;
	int		 rc;

	/* What does not parse never had rows: the fill parses the same text. */
	if ((obj = cJSON_ParseWithLength(json, len)) == NULL)
		return 0;
	r.stmt = store_stmt(st, "DELETE FROM event_tags WHERE name = ?1 AND "
	    "value = ?2 AND created_at = ?3 AND ev = ?4");
	rc = r.stmt == NULL ? -1 : tags_each(cJSON_GetObjectItemCaseSensitive(
	    obj, "tags"), tag_row_run, &r);
	cJSON_Delete(obj);
	return rc;
}

int
store_tags_ready(struct store *st)
{
	int64_t	next, end;
	int	rc;

	if ((rc = store_fill_pos(st, "tags_fill", &next, &end)) == -1)
		return -1;
	return rc == 0 ? 1 : 0;
}

/* Index the events of rowids [next, end], at most max; *last the last read. */
static int
fill_rows(struct store *st, int64_t next, int64_t end, size_t max,
    int64_t *last, size_t *nread, struct buf *json)
{
	sqlite3_stmt	*stmt;
	cJSON		*obj;
	int		 rc;

	stmt = store_stmt(st, "SELECT rowid, created_at, "
	    STORE_ROW_JSON_COLS("") " FROM events WHERE rowid >= ?1 AND "
	    "rowid <= ?2 ORDER BY rowid LIMIT ?3");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, next) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, end) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, (int64_t)max) != SQLITE_OK) {
		store_bind_fail(st, stmt, "tags fill");
		return -1;
	}
	*nread = 0;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		*last = sqlite3_column_int64(stmt, 0);
		(*nread)++;
		buf_reset(json);
		obj = store_row_json(stmt, 2, json) == -1 ? NULL :
		    cJSON_ParseWithLength((const char *)json->data, json->len);
		rc = store_tags_insert(st, *last, sqlite3_column_int64(stmt, 1),
		    cJSON_GetObjectItemCaseSensitive(obj, "tags"));
		cJSON_Delete(obj);
		if (rc == -1)
			break;
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		if (rc != -1)
			log_warnx("store: tags fill: %s",
			    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

int
store_tags_fill_step(struct store *st, size_t max_events, int64_t *left)
{
	struct buf	json;
	int64_t		next, end, last = 0;
	size_t		nread;
	int		rc;

	if ((rc = store_fill_pos(st, "tags_fill", &next, &end)) != 1) {
		if (left != NULL)
			*left = 0;
		return rc;
	}
	if (store_begin(st) == -1)
		return -1;
	buf_init(&json, EVENT_SERIAL_MAX_BYTES);
	rc = fill_rows(st, next, end, max_events, &last, &nread, &json);
	buf_free(&json);
	if (rc == -1) {
		store_rollback(st);
		return -1;
	}
	next = nread < max_events ? end + 1 : last + 1;
	if (store_fill_save(st, "tags_fill", next, end) == -1) {
		store_rollback(st);
		return -1;
	}
	if (store_commit(st) == -1)
		return -1;
	if (left != NULL)
		*left = next > end ? 0 : end - next + 1;
	return next > end ? 0 : 1;
}

int
store_tags_size(struct store *st, int64_t *rows, int64_t *bytes)
{
	int64_t	dummy;

	if (store_row_two(st, "SELECT count(*), 0 FROM event_tags", rows,
	    &dummy, "tags size") == -1)
		return -1;
	if (store_row_two(st, "SELECT coalesce(sum(pgsize), -1), 0 FROM dbstat "
	    "WHERE name = 'event_tags'", bytes, &dummy, "tags size") == -1)
		*bytes = -1;
	return 0;
}
