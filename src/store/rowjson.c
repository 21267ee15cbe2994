/*
 * rowjson.c — an events row's JSON (rowjson.h): the one reader every
 * path that serves an event goes through, the packing of a new row, and
 * the background conversion of rows an older store wrote as text.
 *
 * It never changes what a row serves: a row is rewritten only by the
 * conversion, from its own text to a form that gives back the same bytes
 * (nostr/event_pack.c keeps what it cannot cut exactly verbatim), and
 * the conversion skips a row already packed, so a step repeated after a
 * crash does nothing twice. event_totals counts served bytes, so the
 * conversion leaves it alone.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "core/log.h"
#include "nostr/event_pack.h"
#include "store/events.h"
#include "store/rowjson.h"
#include "store/store.h"
#include "store/store_sql.h"

int
store_row_json(sqlite3_stmt *stmt, int col, struct buf *out)
{
	const void	*id, *pk, *text;
	int64_t		 jl;
	int		 n, form;

	if (sqlite3_column_type(stmt, col + 1) == SQLITE_NULL) {
		/* A row written before migration 015: the text as stored. */
		text = sqlite3_column_text(stmt, col);
		n = sqlite3_column_bytes(stmt, col);
		return text == NULL ? -1 : buf_append(out, text, (size_t)n);
	}
	text = sqlite3_column_blob(stmt, col + 1);
	n = sqlite3_column_bytes(stmt, col + 1);
	id = sqlite3_column_blob(stmt, col + 2);
	pk = sqlite3_column_blob(stmt, col + 3);
	if (text == NULL || id == NULL || pk == NULL ||
	    sqlite3_column_bytes(stmt, col + 2) != 32 ||
	    sqlite3_column_bytes(stmt, col + 3) != 32) {
		log_warnx_rl("store: an events row without its id or pubkey");
		return -1;
	}
	if (event_pack_decode(text, (size_t)n, id, pk, out) == 0)
		return 0;
	/* Out of room is the caller's limit; anything else is damage. */
	form = event_pack_form(text, (size_t)n);
	jl = event_pack_json_len(form, (size_t)n);
	if (jl < 0 || out->len + (size_t)jl <= out->max)
		log_warnx_rl("store: a packed events row does not unpack "
		    "(form %d, %d bytes)", form, n);
	return -1;
}

static void
scratch_free(void *p)
{
	struct buf	*b = p;

	buf_free(b);
	free(b);
}

/* The store's packing buffer, made at first use. NULL when out of memory. */
static struct buf *
scratch(struct store *st)
{
	struct store_cache	*slot = store_cache_slot(st, STORE_CACHE_ROWJSON);
	struct buf		*b;

	if (slot->data != NULL)
		return slot->data;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	/* A packed form is never larger than its JSON and a form byte. */
	buf_init(b, EVENT_SERIAL_MAX_BYTES + 1);
	slot->data = b;
	slot->free = scratch_free;
	return b;
}

const struct buf *
store_row_pack(struct store *st, const uint8_t id[32],
    const uint8_t pubkey[32], const char *json, size_t len)
{
	struct buf	*b;

	if ((b = scratch(st)) == NULL) {
		log_warn("store: pack");
		return NULL;
	}
	buf_reset(b);
	if (event_pack_encode(json, len, id, pubkey, b) == -1) {
		log_warnx("store: pack: %zu bytes of JSON do not fit", len);
		return NULL;
	}
	return b;
}

/* ---- the conversion of an older store ------------------------------- */

/* Rowids of a step, read before any row is rewritten. */
struct pack_rows {
	int64_t	*rowid;
	size_t	 n, max;
	int64_t	 last;		/* the last rowid looked at */
};

/* Up to r->max rowids still unpacked in [next, end] into r. 0 or -1. */
static int
pack_collect(struct store *st, int64_t next, int64_t end, struct pack_rows *r,
    size_t *looked)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	stmt = store_stmt(st, "SELECT rowid, packed IS NULL FROM events "
	    "WHERE rowid >= ?1 AND rowid <= ?2 ORDER BY rowid LIMIT ?3");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, next) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, end) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, (int64_t)r->max) != SQLITE_OK) {
		store_bind_fail(st, stmt, "pack rows");
		return -1;
	}
	*looked = 0;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		(*looked)++;
		r->last = sqlite3_column_int64(stmt, 0);
		if (sqlite3_column_int(stmt, 1) != 0)
			r->rowid[r->n++] = r->last;
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: pack rows: %s", sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

/* Rewrite the row at rowid packed, read through store_row_json. 0 or -1. */
static int
pack_row(struct store *st, int64_t rowid, struct buf *json)
{
	sqlite3_stmt		*stmt;
	const struct buf	*p = NULL;
	uint8_t			 id[32], pk[32];
	int			 rc;

	stmt = store_stmt(st, "SELECT " STORE_ROW_JSON_COLS("") " FROM events "
	    "WHERE rowid = ?1 AND packed IS NULL");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, rowid) != SQLITE_OK) {
		store_bind_fail(st, stmt, "pack read");
		return -1;
	}
	buf_reset(json);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW &&
	    store_row_json(stmt, 0, json) == 0) {
		memcpy(id, sqlite3_column_blob(stmt, 2), 32);
		memcpy(pk, sqlite3_column_blob(stmt, 3), 32);
		p = store_row_pack(st, id, pk, (const char *)json->data,
		    json->len);
	}
	store_stmt_done(stmt);
	if (rc == SQLITE_DONE)
		return 0;	/* gone, or packed since it was looked at */
	if (rc != SQLITE_ROW) {
		log_warnx("store: pack read: %s", sqlite3_errmsg(store_db(st)));
		return -1;
	}
	if (p == NULL) {
		/* Left as it is (still served): the pass must not stop here. */
		log_warnx_rl("store: pack: row %lld kept as text",
		    (long long)rowid);
		return 0;
	}
	stmt = store_stmt(st, "UPDATE events SET json = '', packed = ?2 "
	    "WHERE rowid = ?1 AND packed IS NULL");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, rowid) != SQLITE_OK ||
	    sqlite3_bind_blob(stmt, 2, p->data, (int)p->len, SQLITE_STATIC) !=
	    SQLITE_OK) {
		store_bind_fail(st, stmt, "pack write");
		return -1;
	}
	return store_step_done(st, stmt, "pack write");
}

/* One step at [next, end]: the rows, then the position. 1, 0 or -1. */
static int
pack_run(struct store *st, int64_t next, int64_t end, struct pack_rows *r,
    int64_t *left)
{
	struct buf	json;
	size_t		looked, i;
	int		rc = 0;

	if (pack_collect(st, next, end, r, &looked) == -1)
		return -1;
	buf_init(&json, EVENT_SERIAL_MAX_BYTES);
	for (i = 0; i < r->n && rc == 0; i++)
		rc = pack_row(st, r->rowid[i], &json);
	buf_free(&json);
	if (rc == -1)
		return -1;
	next = looked < r->max ? end + 1 : r->last + 1;
	if (store_fill_save(st, "pack", next, end) == -1)
		return -1;
	*left = next > end ? 0 : end - next + 1;
	return next > end ? 0 : 1;
}

int
store_pack_step(struct store *st, size_t max, int64_t *left)
{
	struct pack_rows	r = { NULL, 0, max, 0 };
	int64_t			next, end, l = 0;
	bool			nested = store_tx_depth(st) > 0;
	int			rc;

	if (left != NULL)
		*left = 0;
	if (max == 0 || (rc = store_fill_pos(st, "pack", &next, &end)) != 1)
		return max == 0 ? 0 : rc;
	if ((r.rowid = calloc(max, sizeof(*r.rowid))) == NULL) {
		log_warn("store: pack step");
		return -1;
	}
	if (!nested && store_begin(st) == -1) {
		free(r.rowid);
		return -1;
	}
	rc = pack_run(st, next, end, &r, &l);
	free(r.rowid);
	if (!nested && rc == -1)
		store_rollback(st);
	else if (!nested && store_commit(st) == -1)
		rc = -1;
	if (rc >= 0 && left != NULL)
		*left = l;
	return rc;
}

int64_t
store_pack_left(struct store *st)
{
	int64_t	next, end;
	int	rc;

	if ((rc = store_fill_pos(st, "pack", &next, &end)) == -1)
		return -1;
	return rc == 0 || next > end ? 0 : end - next + 1;
}
