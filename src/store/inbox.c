/*
 * inbox.c — rows of the `inbox` table and the uplink's keys in `meta`.
 * Each function is a few prepared statements over the (state, seq) index
 * or the events primary key; none scans the events table except the
 * queue-everything step, which reads at most one chunk of the
 * (created_at, id) index per call.
 *
 * It never deletes a row that was not confirmed or skipped as another
 * author's protected event, never hands out such an event, and never
 * changes the forwarded or skipped totals outside the transaction that
 * deleted the rows.
 */
#define _GNU_SOURCE	/* memmem */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/limits.h"
#include "core/log.h"
#include "store/inbox.h"
#include "store/rowjson.h"
#include "store/store.h"
#include "store/store_sql.h"

#define META_FORWARDED		"inbox_forwarded"
#define META_TARGET		"uplink_target"
#define META_ENQ_AT		"uplink_enqueue_at"
#define META_ENQ_ID		"uplink_enqueue_id"
#define META_SKIPPED		"inbox_skipped_protected"
#define META_WD_AT		"uplink_withdrawn_at"
#define META_WD_ID		"uplink_withdrawn_id"

/* store_step_done, for a statement that may not have compiled. */
static int
inbox_step(struct store *st, sqlite3_stmt *s, const char *what)
{
	return s == NULL ? -1 : store_step_done(st, s, what);
}

/* store_bind_fail, answering -1. */
static int
inbox_fail(struct store *st, sqlite3_stmt *s, const char *what)
{
	store_bind_fail(st, s, what);
	return -1;
}

static char *
inbox_strdup(const unsigned char *s, int len)
{
	char	*d;

	if ((d = malloc((size_t)len + 1)) == NULL)
		return NULL;
	memcpy(d, s, (size_t)len);
	d[len] = '\0';
	return d;
}

static int
inbox_batch_grow(struct inbox_batch *b)
{
	struct inbox_row	*r;
	size_t			 cap;

	if (b->n < b->cap)
		return 0;
	cap = b->cap ? b->cap * 2 : 64;
	if ((r = reallocarray(b->rows, cap, sizeof(*r))) == NULL)
		return -1;
	b->rows = r;
	b->cap = cap;
	return 0;
}

/* The take query's first column of STORE_ROW_JSON_COLS. */
#define INBOX_TAKE_JSON_COL	8

/*
 * Copy the current result row of the take query, its JSON rebuilt in
 * json, into a new batch row.
 */
static int
inbox_row_fill(sqlite3_stmt *s, const struct buf *json, struct inbox_row *r)
{
	const unsigned char	*relay = sqlite3_column_text(s, 7);
	const unsigned char	*src = sqlite3_column_text(s, 6);

	memset(r, 0, sizeof(*r));
	if (sqlite3_column_bytes(s, 1) != 32 || sqlite3_column_bytes(s, 2) != 32 ||
	    json->data == NULL || src == NULL)
		return -1;
	r->seq = sqlite3_column_int64(s, 0);
	memcpy(r->id, sqlite3_column_blob(s, 1), 32);
	memcpy(r->pubkey, sqlite3_column_blob(s, 2), 32);
	r->kind = (uint32_t)sqlite3_column_int64(s, 3);
	r->created_at = sqlite3_column_int64(s, 4);
	r->received_at = sqlite3_column_int64(s, 5);
	r->json_len = json->len;
	snprintf(r->source, sizeof(r->source), "%s", (const char *)src);
	if ((r->json = inbox_strdup(json->data, (int)json->len)) == NULL)
		return -1;
	if (relay != NULL && (r->relay = inbox_strdup(relay,
	    sqlite3_column_bytes(s, 7))) == NULL) {
		free(r->json);
		r->json = NULL;
		return -1;
	}
	return 0;
}

/* Add delta to the integer meta key (created at delta when absent). */
static int
inbox_meta_add(struct store *st, const char *key, int64_t delta)
{
	sqlite3_stmt	*s;

	s = store_stmt(st, "INSERT INTO meta (key, value) VALUES (?1, ?2) "
	    "ON CONFLICT (key) DO UPDATE SET value = value + excluded.value");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 2, delta) != SQLITE_OK)
		return inbox_fail(st, s, "meta add");
	return inbox_step(st, s, "meta add");
}

bool
store_inbox_protected(const char *json, size_t len)
{
	/*
	 * In the canonical form only a tag whose first value is "-" holds
	 * the bytes ["-" : the tags array holds arrays, not strings, and a
	 * quote inside a string is escaped.
	 */
	return json != NULL && memmem(json, len, "[\"-\"", 4) != NULL;
}

/* Whether the take's current row is someone else's protected event. */
static bool
inbox_row_foreign_protected(sqlite3_stmt *s, const struct buf *json,
    const uint8_t *self)
{
	const void	*pk = sqlite3_column_blob(s, 2);

	if (!store_inbox_protected((const char *)json->data, json->len))
		return false;
	return self == NULL || pk == NULL || sqlite3_column_bytes(s, 2) != 32 ||
	    memcmp(pk, self, 32) != 0;
}

/* Note the current row as skipped: its seq into skip, logged. */
static void
inbox_row_skip(sqlite3_stmt *s, int64_t *skip, size_t *nskip)
{
	const uint8_t	*id = sqlite3_column_blob(s, 1);

	skip[(*nskip)++] = sqlite3_column_int64(s, 0);
	if (id != NULL && sqlite3_column_bytes(s, 1) == 32)
		log_info_rl("uplink: not forwarding event %02x%02x%02x%02x...: "
		    "protected (NIP-70) and not the box's own", id[0], id[1],
		    id[2], id[3]);
}

/* Delete skipped rows skip[0..n) and count them, in one transaction. */
static int
inbox_skip_rows(struct store *st, const int64_t *skip, size_t n)
{
	sqlite3_stmt	*s;
	size_t		 i;

	if (n == 0)
		return 0;
	if (store_begin(st) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if ((s = store_stmt(st, "DELETE FROM inbox WHERE seq = ?1 "
		    "AND state = 'pending'")) == NULL)
			goto fail;
		if (sqlite3_bind_int64(s, 1, skip[i]) != SQLITE_OK) {
			store_bind_fail(st, s, "skip");
			goto fail;
		}
		if (inbox_step(st, s, "skip") == -1)
			goto fail;
	}
	if (inbox_meta_add(st, META_SKIPPED, (int64_t)n) == -1)
		goto fail;
	return store_commit(st);
fail:
	store_rollback(st);
	return -1;
}

/*
 * One pass of the take: rows into b, someone else's protected events'
 * seqs into skip (room for max_rows). Rows taken, or -1.
 */
/*
 * One row of the take, its JSON rebuilt in json: 1 taken, 0 skipped
 * (someone else's protected event), 2 over max_bytes (the batch ends
 * before it), -1 out of memory or a damaged row.
 */
static int
inbox_take_row(sqlite3_stmt *s, struct buf *json, size_t max_bytes,
    const uint8_t *self, struct inbox_batch *b, int64_t *skip, size_t *nskip)
{
	buf_reset(json);
	if (store_row_json(s, INBOX_TAKE_JSON_COL, json) == -1)
		return -1;
	if (inbox_row_foreign_protected(s, json, self)) {
		inbox_row_skip(s, skip, nskip);
		return 0;
	}
	if (b->n > 0 && b->json_bytes + json->len > max_bytes)
		return 2;
	if (inbox_batch_grow(b) == -1 ||
	    inbox_row_fill(s, json, &b->rows[b->n]) == -1)
		return -1;
	b->json_bytes += b->rows[b->n++].json_len;
	return 1;
}

static int
inbox_take_pass(struct store *st, int64_t after_seq, size_t max_rows,
    size_t max_bytes, const uint8_t *self, struct inbox_batch *b,
    int64_t *skip, size_t *nskip)
{
	sqlite3_stmt	*s;
	struct buf	 json;
	int		 rc = SQLITE_DONE, taken = 0;

	s = store_stmt(st, "SELECT i.seq, e.id, e.pubkey, e.kind, "
	    "e.created_at, e.received_at, e.source, e.first_relay, "
	    STORE_ROW_JSON_COLS("e.") " FROM inbox i JOIN events e ON "
	    "e.id = i.event_id WHERE i.state = 'pending' AND i.seq > ?1 AND "
	    "i.seq <= ?4 AND "
	    "(e.expires_at IS NULL OR e.expires_at > ?3) ORDER BY i.seq "
	    "LIMIT ?2");
	if (s == NULL)
		return -1;
	/*
	 * An expired event is not forwarded (NIP-40); the sweep removes it.
	 * Nor is a row the open batch queued: it commits with the batch.
	 */
	if (sqlite3_bind_int64(s, 1, after_seq) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 2, (int64_t)max_rows) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 3, clock_wall_s()) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 4, store_inbox_committed(st)) != SQLITE_OK)
		return inbox_fail(st, s, "take");
	buf_init(&json, EVENT_SERIAL_MAX_BYTES);
	while (taken != 2 && (rc = sqlite3_step(s)) == SQLITE_ROW)
		if ((taken = inbox_take_row(s, &json, max_bytes, self, b, skip,
		    nskip)) == -1)
			break;
	buf_free(&json);
	if (taken == -1) {
		log_warnx("store: inbox take: out of memory or a bad row");
		store_stmt_done(s);
		return -1;
	}
	if (taken != 2 && rc != SQLITE_DONE)
		return inbox_fail(st, s, "take");
	store_stmt_done(s);
	return (int)b->n;
}

int
store_inbox_take(struct store *st, int64_t after_seq, size_t max_rows,
    size_t max_bytes, const uint8_t *self, struct inbox_batch *b)
{
	int64_t	*skip;
	size_t	 nskip;
	int	 n;

	store_inbox_batch_clear(b);
	if (max_rows == 0)
		return 0;
	if ((skip = calloc(max_rows, sizeof(*skip))) == NULL)
		return -1;
	/*
	 * NIP-70: the box authenticates as itself, so it may republish only
	 * its own protected events. Every way out of the inbox passes here,
	 * so none of someone else's leaves it for the peer: such a row is
	 * deleted and counted. A pass that found nothing but skipped rows
	 * looks again, so "nothing taken" still means nothing pending.
	 */
	do {
		nskip = 0;
		n = inbox_take_pass(st, after_seq, max_rows, max_bytes, self, b,
		    skip, &nskip);
		if (n == -1 || inbox_skip_rows(st, skip, nskip) == -1) {
			store_inbox_batch_clear(b);
			n = -1;
		}
	} while (n == 0 && nskip > 0);
	free(skip);
	return n;
}

void
store_inbox_batch_clear(struct inbox_batch *b)
{
	size_t	i;

	for (i = 0; i < b->n; i++) {
		free(b->rows[i].json);
		free(b->rows[i].relay);
	}
	b->n = 0;
	b->json_bytes = 0;
}

void
store_inbox_batch_free(struct inbox_batch *b)
{
	store_inbox_batch_clear(b);
	free(b->rows);
	memset(b, 0, sizeof(*b));
}

/* Delete the pending row seq. 1 deleted, 0 not pending, -1. */
static int
inbox_delete_one(struct store *st, int64_t seq)
{
	sqlite3_stmt	*s;

	s = store_stmt(st, "DELETE FROM inbox WHERE seq = ?1 AND "
	    "state = 'pending'");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_int64(s, 1, seq) != SQLITE_OK)
		return inbox_fail(st, s, "confirm");
	if (inbox_step(st, s, "confirm") == -1)
		return -1;
	return sqlite3_changes(store_db(st)) > 0;
}

int64_t
store_inbox_confirm(struct store *st, const int64_t *seqs, size_t n)
{
	int64_t	deleted = 0;
	size_t	i;
	int	rc;

	if (n == 0)
		return 0;
	if (store_begin(st) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if ((rc = inbox_delete_one(st, seqs[i])) == -1)
			goto fail;
		deleted += rc;
	}
	if (deleted > 0 && inbox_meta_add(st, META_FORWARDED, deleted) == -1)
		goto fail;
	if (store_commit(st) == -1)
		return -1;
	return deleted;
fail:
	store_rollback(st);
	return -1;
}

int
store_inbox_dead(struct store *st, int64_t seq, const char *reason,
    int64_t now_s)
{
	sqlite3_stmt	*s;
	char		 why[UPLINK_ERROR_MAX + 1];

	snprintf(why, sizeof(why), "%s", reason != NULL && reason[0] != '\0' ?
	    reason : "refused");
	s = store_stmt(st, "UPDATE inbox SET state = 'dead', reason = ?2, "
	    "attempts = attempts + 1, last_attempt_at = ?3 "
	    "WHERE seq = ?1 AND state = 'pending'");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_int64(s, 1, seq) != SQLITE_OK ||
	    sqlite3_bind_text(s, 2, why, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 3, now_s) != SQLITE_OK)
		return inbox_fail(st, s, "dead");
	if (inbox_step(st, s, "dead") == -1)
		return -1;
	return sqlite3_changes(store_db(st)) > 0;
}

int
store_inbox_attempted(struct store *st, int64_t first, int64_t last,
    int64_t now_s)
{
	sqlite3_stmt	*s;

	s = store_stmt(st, "UPDATE inbox SET attempts = attempts + 1, "
	    "last_attempt_at = ?3 WHERE state = 'pending' AND "
	    "seq BETWEEN ?1 AND ?2");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_int64(s, 1, first) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 2, last) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 3, now_s) != SQLITE_OK)
		return inbox_fail(st, s, "attempted");
	return inbox_step(st, s, "attempted");
}

int64_t
store_inbox_retry(struct store *st, int64_t seq)
{
	sqlite3_stmt	*s;

	s = store_stmt(st, "UPDATE inbox SET state = 'pending', reason = NULL "
	    "WHERE state = 'dead' AND (?1 = 0 OR seq = ?1)");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_int64(s, 1, seq) != SQLITE_OK)
		return inbox_fail(st, s, "retry");
	if (inbox_step(st, s, "retry") == -1)
		return -1;
	return sqlite3_changes(store_db(st));
}

int
store_inbox_dead_list(struct store *st, size_t max, store_inbox_dead_cb cb,
    void *arg)
{
	sqlite3_stmt		*s;
	struct inbox_dead	 d;
	int			 rc, n = 0;

	s = store_stmt(st, "SELECT i.seq, i.event_id, e.kind, i.reason, "
	    "i.attempts, coalesce(i.last_attempt_at, 0), i.enqueued_at "
	    "FROM inbox i JOIN events e ON e.id = i.event_id "
	    "WHERE i.state = 'dead' ORDER BY i.seq LIMIT ?1");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_int64(s, 1, (int64_t)max) != SQLITE_OK)
		return inbox_fail(st, s, "dead list");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(s, 1) != 32)
			continue;
		d.seq = sqlite3_column_int64(s, 0);
		d.id = sqlite3_column_blob(s, 1);
		d.kind = (uint32_t)sqlite3_column_int64(s, 2);
		d.reason = (const char *)sqlite3_column_text(s, 3);
		d.attempts = sqlite3_column_int64(s, 4);
		d.last_attempt_at = sqlite3_column_int64(s, 5);
		d.enqueued_at = sqlite3_column_int64(s, 6);
		if (d.reason == NULL)
			d.reason = "";
		n++;
		if (cb(&d, arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return inbox_fail(st, s, "dead list");
	store_stmt_done(s);
	return n;
}

/* The single integer sql answers into *v (0 when no row). 0 or -1. */
static int
inbox_query_int(struct store *st, const char *sql, int64_t *v)
{
	sqlite3_stmt	*s = store_stmt(st, sql);
	int		 rc;

	*v = 0;
	if (s == NULL)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(s, 0);
	else if (rc != SQLITE_DONE)
		return inbox_fail(st, s, "count");
	store_stmt_done(s);
	return 0;
}

int
store_inbox_counts(struct store *st, struct inbox_counts *c)
{
	memset(c, 0, sizeof(*c));
	if (inbox_query_int(st, "SELECT count(*) FROM inbox "
	    "WHERE state = 'pending'", &c->pending) == -1 ||
	    inbox_query_int(st, "SELECT count(*) FROM inbox "
	    "WHERE state = 'dead'", &c->dead) == -1 ||
	    inbox_query_int(st, "SELECT coalesce((SELECT value FROM meta "
	    "WHERE key = '" META_FORWARDED "'), 0)", &c->forwarded) == -1 ||
	    inbox_query_int(st, "SELECT coalesce((SELECT value FROM meta "
	    "WHERE key = '" META_SKIPPED "'), 0)", &c->skipped_protected) ==
	    -1 ||
	    inbox_query_int(st, "SELECT enqueued_at FROM inbox "
	    "WHERE state = 'pending' ORDER BY seq LIMIT 1",
	    &c->oldest_enqueued_at) == -1) {
		memset(c, 0, sizeof(*c));
		return -1;
	}
	return 0;
}

int
store_inbox_has_pending(struct store *st)
{
	int64_t	v;

	if (inbox_query_int(st, "SELECT EXISTS (SELECT 1 FROM inbox "
	    "WHERE state = 'pending')", &v) == -1)
		return -1;
	return v != 0;
}

/* Set meta key to a text value. */
static int
inbox_meta_set_text(struct store *st, const char *key, const char *value)
{
	sqlite3_stmt	*s;

	s = store_stmt(st, "INSERT OR REPLACE INTO meta (key, value) "
	    "VALUES (?1, ?2)");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(s, 2, value, -1, SQLITE_TRANSIENT) != SQLITE_OK)
		return inbox_fail(st, s, "meta set");
	return inbox_step(st, s, "meta set");
}

/* Save the queue-everything position (created_at, id); id may be empty. */
static int
inbox_enqueue_pos_set(struct store *st, int64_t at, const void *id,
    int idlen)
{
	sqlite3_stmt	*s;

	s = store_stmt(st, "INSERT OR REPLACE INTO meta (key, value) VALUES "
	    "('" META_ENQ_AT "', ?1), ('" META_ENQ_ID "', ?2)");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_int64(s, 1, at) != SQLITE_OK ||
	    sqlite3_bind_blob(s, 2, idlen > 0 ? id : "", idlen,
	    SQLITE_TRANSIENT) != SQLITE_OK)
		return inbox_fail(st, s, "enqueue position");
	return inbox_step(st, s, "enqueue position");
}

static int
inbox_enqueue_pos_clear(struct store *st)
{
	return inbox_step(st, store_stmt(st, "DELETE FROM meta WHERE key IN "
	    "('" META_ENQ_AT "', '" META_ENQ_ID "')"), "enqueue clear");
}

int
store_inbox_target(struct store *st, const char *target)
{
	sqlite3_stmt	*s;
	int		 rc, same;

	s = store_stmt(st, "SELECT value = ?1 FROM meta WHERE key = '"
	    META_TARGET "'");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_text(s, 1, target, -1, SQLITE_TRANSIENT) != SQLITE_OK)
		return inbox_fail(st, s, "target");
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return inbox_fail(st, s, "target");
	same = rc == SQLITE_ROW && sqlite3_column_int(s, 0) == 1;
	store_stmt_done(s);
	if (same)
		return 0;
	if (store_begin(st) == -1)
		return -1;
	if (inbox_meta_set_text(st, META_TARGET, target) == -1 ||
	    inbox_enqueue_pos_set(st, INT64_MIN, NULL, 0) == -1 ||
	    store_inbox_retry(st, 0) == -1) {
		store_rollback(st);
		return -1;
	}
	return store_commit(st) == 0 ? 1 : -1;
}

int
store_inbox_target_clear(struct store *st)
{
	if (store_begin(st) == -1)
		return -1;
	if (inbox_step(st, store_stmt(st, "DELETE FROM meta WHERE key = '"
	    META_TARGET "'"), "target clear") == -1 ||
	    inbox_enqueue_pos_clear(st) == -1) {
		store_rollback(st);
		return -1;
	}
	return store_commit(st);
}

int
store_inbox_enqueue_active(struct store *st)
{
	int64_t	v;

	if (inbox_query_int(st, "SELECT count(*) FROM meta WHERE key = '"
	    META_ENQ_AT "'", &v) == -1)
		return -1;
	return v != 0;
}

/* Read the saved position into *at and id (idlen bytes). 1, 0 none, -1. */
static int
inbox_enqueue_pos_get(struct store *st, int64_t *at, uint8_t id[32],
    int *idlen)
{
	sqlite3_stmt	*s;
	int		 rc;

	s = store_stmt(st, "SELECT a.value, b.value FROM meta a, meta b "
	    "WHERE a.key = '" META_ENQ_AT "' AND b.key = '" META_ENQ_ID "'");
	if (s == NULL)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		store_stmt_done(s);
		return 0;
	}
	if (rc != SQLITE_ROW)
		return inbox_fail(st, s, "enqueue position");
	*at = sqlite3_column_int64(s, 0);
	*idlen = sqlite3_column_bytes(s, 1);
	if (*idlen > 32)
		*idlen = 32;
	if (*idlen > 0)
		memcpy(id, sqlite3_column_blob(s, 1), (size_t)*idlen);
	store_stmt_done(s);
	return 1;
}

/*
 * The (created_at, id) of the chunk-th event after the position: the
 * inclusive end of this step. 1 found, 0 fewer are left, -1.
 */
static int
inbox_enqueue_end(struct store *st, int64_t at, const uint8_t *id, int idlen,
    size_t chunk, int64_t *end_at, uint8_t end_id[32])
{
	sqlite3_stmt	*s;
	int		 rc;

	s = store_stmt(st, "SELECT created_at, id FROM events "
	    "WHERE (created_at, id) > (?1, ?2) ORDER BY created_at, id "
	    "LIMIT 1 OFFSET ?3");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_int64(s, 1, at) != SQLITE_OK ||
	    sqlite3_bind_blob(s, 2, idlen > 0 ? (const void *)id : "", idlen,
	    SQLITE_TRANSIENT) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 3, (int64_t)chunk - 1) != SQLITE_OK)
		return inbox_fail(st, s, "enqueue scan");
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		store_stmt_done(s);
		return 0;
	}
	if (rc != SQLITE_ROW || sqlite3_column_bytes(s, 1) != 32)
		return inbox_fail(st, s, "enqueue scan");
	*end_at = sqlite3_column_int64(s, 0);
	memcpy(end_id, sqlite3_column_blob(s, 1), 32);
	store_stmt_done(s);
	return 1;
}

/* Queue the events in ((at, id), (end_at, end_id)]; no end: to the last. */
static int
inbox_enqueue_range(struct store *st, int64_t at, const uint8_t *id,
    int idlen, int has_end, int64_t end_at, const uint8_t *end_id,
    int64_t now_s)
{
	sqlite3_stmt	*s;

	/*
	 * Two statements: with "?6 = 0 OR ... <= (?3, ?4)" the index range
	 * had only its lower bound, so every chunk read every later row.
	 */
#define INBOX_RANGE "INSERT OR IGNORE INTO inbox (event_id, enqueued_at) " \
	    "SELECT id, ?5 FROM events WHERE (created_at, id) > (?1, ?2)"
	s = store_stmt(st, has_end ? INBOX_RANGE " AND (created_at, id) <= "
	    "(?3, ?4) ORDER BY created_at, id" : INBOX_RANGE " ORDER BY "
	    "created_at, id");
#undef INBOX_RANGE
	if (s == NULL)
		return -1;
	if (sqlite3_bind_int64(s, 1, at) != SQLITE_OK ||
	    sqlite3_bind_blob(s, 2, idlen > 0 ? (const void *)id : "", idlen,
	    SQLITE_TRANSIENT) != SQLITE_OK ||
	    (has_end && (sqlite3_bind_int64(s, 3, end_at) != SQLITE_OK ||
	    sqlite3_bind_blob(s, 4, end_id, 32, SQLITE_TRANSIENT) !=
	    SQLITE_OK)) || sqlite3_bind_int64(s, 5, now_s) != SQLITE_OK)
		return inbox_fail(st, s, "enqueue");
	return inbox_step(st, s, "enqueue");
}

int
store_inbox_enqueue_step(struct store *st, size_t chunk, int64_t now_s,
    int64_t *queued)
{
	uint8_t	id[32], end_id[32] = { 0 };
	int64_t	at = 0, end_at = 0;
	int	idlen = 0, rc, more;

	if (queued != NULL)
		*queued = 0;
	if (chunk == 0)
		chunk = 1;
	if ((rc = inbox_enqueue_pos_get(st, &at, id, &idlen)) <= 0)
		return rc;
	if ((more = inbox_enqueue_end(st, at, id, idlen, chunk, &end_at,
	    end_id)) == -1 || store_begin(st) == -1)
		return -1;
	if (inbox_enqueue_range(st, at, id, idlen, more, end_at, end_id,
	    now_s) == -1)
		goto fail;
	if (queued != NULL)
		*queued = sqlite3_changes(store_db(st));
	if ((more ? inbox_enqueue_pos_set(st, end_at, end_id, 32) :
	    inbox_enqueue_pos_clear(st)) == -1)
		goto fail;
	if (store_commit(st) == -1)
		return -1;
	return more;
fail:
	store_rollback(st);
	return -1;
}

/* The withdrawn cursor (at, id) into *at and id; none: before every row. */
static int
inbox_withdrawn_pos(struct store *st, int64_t *at, uint8_t id[32],
    int *idlen)
{
	sqlite3_stmt	*s;
	int		 rc;

	*at = INT64_MIN;
	*idlen = 0;
	s = store_stmt(st, "SELECT a.value, b.value FROM meta a, meta b "
	    "WHERE a.key = '" META_WD_AT "' AND b.key = '" META_WD_ID "'");
	if (s == NULL)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_bytes(s, 1) == 32) {
		*at = sqlite3_column_int64(s, 0);
		*idlen = 32;
		memcpy(id, sqlite3_column_blob(s, 1), 32);
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return inbox_fail(st, s, "withdrawn position");
	store_stmt_done(s);
	return 0;
}

int
store_inbox_withdrawn_next(struct store *st, int64_t before_at,
    struct inbox_withdrawn *w)
{
	sqlite3_stmt	*s;
	uint8_t		 id[32];
	int64_t		 at;
	int		 idlen, rc;

	w->n = 0;
	if (inbox_withdrawn_pos(st, &at, id, &idlen) == -1)
		return -1;
	s = store_stmt(st, "SELECT at, id FROM withdrawn WHERE (at, id) > "
	    "(?1, ?2) AND at < ?3 ORDER BY at, id LIMIT ?4");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_int64(s, 1, at) != SQLITE_OK ||
	    sqlite3_bind_blob(s, 2, idlen > 0 ? (const void *)id : "", idlen,
	    SQLITE_TRANSIENT) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 3, before_at) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 4, UPLINK_WITHDRAWN_IDS) != SQLITE_OK)
		return inbox_fail(st, s, "withdrawn");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(s, 1) != 32)
			continue;
		memcpy(w->ids[w->n++], sqlite3_column_blob(s, 1), 32);
		w->last_at = sqlite3_column_int64(s, 0);
		memcpy(w->last_id, sqlite3_column_blob(s, 1), 32);
	}
	if (rc != SQLITE_DONE) {
		w->n = 0;
		return inbox_fail(st, s, "withdrawn");
	}
	store_stmt_done(s);
	return (int)w->n;
}

int
store_inbox_withdrawn_done(struct store *st, const struct inbox_withdrawn *w)
{
	sqlite3_stmt	*s;

	if (w->n == 0)
		return 0;
	s = store_stmt(st, "INSERT OR REPLACE INTO meta (key, value) VALUES "
	    "('" META_WD_AT "', ?1), ('" META_WD_ID "', ?2)");
	if (s == NULL)
		return -1;
	if (sqlite3_bind_int64(s, 1, w->last_at) != SQLITE_OK ||
	    sqlite3_bind_blob(s, 2, w->last_id, 32, SQLITE_TRANSIENT) !=
	    SQLITE_OK)
		return inbox_fail(st, s, "withdrawn position");
	return inbox_step(st, s, "withdrawn position");
}
