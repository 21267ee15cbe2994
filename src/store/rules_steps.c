/*
 * rules_steps.c — the authors' rules' bounded steps (store/rules.h): the
 * events whose expiration came, a vanished author's history, and the
 * conversion of a store written before the rules, each at most a given
 * number of rows a call, inside the caller's transaction when one is open.
 * Which event goes and why is the rules' (store/rules.c, through
 * rules_int.h); this file only finds the rows and calls them.
 */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/limits.h"
#include "core/log.h"
#include "nostr/event.h"
#include "store/dedup.h"
#include "store/events.h"
#include "store/names.h"
#include "store/rules.h"
#include "store/rules_int.h"
#include "store/store.h"
#include "store/store_sql.h"
#include "store/withdrawn.h"

/* ---- steps -------------------------------------------------------------- */

/* Run fn in the caller's transaction, or in one of its own. */
static int
in_tx(struct store *st, int (*fn)(struct store *, void *), void *arg)
{
	bool	nested = store_tx_depth(st) > 0;
	int	rc;

	if (!nested && store_begin(st) == -1)
		return -1;
	rc = fn(st, arg);
	if (nested)
		return rc;
	if (rc == -1) {
		store_rollback(st);
		return -1;
	}
	return store_commit(st) == -1 ? -1 : rc;
}

/* Rows of a step, read before any is removed. */
struct step_rows {
	struct store_dedup	*d;
	uint8_t			(*ids)[32];
	size_t			 n, max;
	int64_t			 a, b;		/* the step's arguments */
	int64_t			 out;		/* what it reports */
};

static int
rows_alloc(struct step_rows *r, size_t max)
{
	r->max = max;
	r->n = 0;
	r->d = calloc(max, sizeof(*r->d));
	r->ids = calloc(max, 32);
	if (r->d == NULL || r->ids == NULL) {
		free(r->d);
		free(r->ids);
		log_warn("store: rules step");
		return -1;
	}
	return 0;
}

static void
rows_free(struct step_rows *r)
{
	free(r->d);
	free(r->ids);
}

/* Read id, pubkey, created_at, kind rows of a bound stmt into r. */
static int
rows_read(struct store *st, sqlite3_stmt *stmt, struct step_rows *r,
    const char *what)
{
	int	rc = SQLITE_DONE;

	while (r->n < r->max && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(stmt, 0) != 32 ||
		    sqlite3_column_bytes(stmt, 1) != 32)
			continue;
		memcpy(r->ids[r->n], sqlite3_column_blob(stmt, 0), 32);
		memcpy(r->d[r->n].pubkey, sqlite3_column_blob(stmt, 1), 32);
		r->d[r->n].created_at = sqlite3_column_int64(stmt, 2);
		r->d[r->n].kind = (uint32_t)sqlite3_column_int64(stmt, 3);
		r->n++;
	}
	if (r->n < r->max && rc != SQLITE_DONE) {
		log_warnx("store: %s: %s", what, sqlite3_errmsg(store_db(st)));
		store_stmt_done(stmt);
		return -1;
	}
	store_stmt_done(stmt);
	return 0;
}

static int
expire_run(struct store *st, void *arg)
{
	struct step_rows	*r = arg;
	sqlite3_stmt		*stmt;
	size_t			 i;

	stmt = store_stmt(st, "SELECT id, pubkey, created_at, kind FROM events "
	    "WHERE expires_at IS NOT NULL AND expires_at <= ?1 ORDER BY "
	    "expires_at LIMIT ?2");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, r->a) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, (int64_t)r->max) != SQLITE_OK) {
		store_bind_fail(st, stmt, "rules expire");
		return -1;
	}
	if (rows_read(st, stmt, r, "rules expire") == -1)
		return -1;
	for (i = 0; i < r->n; i++)
		if (rules_remove_withdraw(st, r->ids[i], r->d[i].pubkey, r->d[i].kind,
		    r->d[i].created_at, STORE_WITHDRAWN_EXPIRED, r->a,
		    &rules_stats_of(st)->expired) == -1)
			return -1;
	stmt = store_stmt(st, "SELECT min(expires_at) FROM events WHERE "
	    "expires_at IS NOT NULL");
	if (stmt == NULL)
		return -1;
	r->out = -1;
	if (sqlite3_step(stmt) == SQLITE_ROW &&
	    sqlite3_column_type(stmt, 0) == SQLITE_INTEGER)
		r->out = sqlite3_column_int64(stmt, 0);
	store_stmt_done(stmt);
	return 0;
}

int64_t
store_rules_expire_step(struct store *st, int64_t now, size_t max,
    int64_t *next_at)
{
	struct step_rows	r = { 0 };
	int64_t			n;

	*next_at = -1;
	if (rows_alloc(&r, max) == -1)
		return -1;
	r.a = now;
	if (in_tx(st, expire_run, &r) == -1)
		n = -1;
	else {
		n = (int64_t)r.n;
		*next_at = r.out;
	}
	rows_free(&r);
	return n;
}

/* A vanished author's events (or wraps to it) up to until, but the request. */
static int
vanish_rows(struct store *st, const uint8_t pk[32], int64_t until,
    const uint8_t vid[32], bool wraps, struct step_rows *r)
{
	sqlite3_stmt	*stmt;

	if (!wraps)
		stmt = store_stmt(st, "SELECT id, pubkey, created_at, kind FROM "
		    "events WHERE pubkey = ?1 AND created_at <= ?2 AND id != ?3 "
		    "LIMIT ?4");
	else
		stmt = store_stmt(st, "SELECT e.id, e.pubkey, e.created_at, "
		    "e.kind FROM event_tags t JOIN events e ON e.rowid = t.ev AND "
		    "e.created_at = t.created_at WHERE t.name = 112 AND "
		    "t.value = ?1 AND t.created_at <= ?2 AND e.kind = 1059 AND "
		    "e.id != ?3 LIMIT ?4");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pk, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, until) != SQLITE_OK ||
	    sqlite3_bind_blob(stmt, 3, vid, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 4, (int64_t)(r->max - r->n)) !=
	    SQLITE_OK) {
		store_bind_fail(st, stmt, "rules vanish");
		return -1;
	}
	return rows_read(st, stmt, r, "rules vanish");
}

static int
vanish_run(struct store *st, void *arg)
{
	struct step_rows	*r = arg;
	uint8_t			 pk[32], vid[32];
	int64_t			 until;
	size_t			 i;
	int			 rc;

	if ((rc = store_vanished_next_purge(st, pk, &until, vid)) != 1)
		return rc;
	if (vanish_rows(st, pk, until, vid, false, r) == -1 ||
	    (r->n < r->max && vanish_rows(st, pk, until, vid, true, r) == -1))
		return -1;
	for (i = 0; i < r->n; i++) {
		if (store_event_remove(st, r->ids[i]) == -1)
			return -1;
		if (r->d[i].kind == 0)
			store_names_forget(st, r->d[i].pubkey);
		rules_stats_of(st)->vanished++;
	}
	if (r->n < r->max && store_vanished_purged(st, pk) == -1)
		return -1;
	return 1;
}

int
store_rules_vanish_step(struct store *st, size_t max, int64_t *removed)
{
	struct step_rows	r = { 0 };
	int			rc;

	if (removed != NULL)
		*removed = 0;
	if (store_vanished_pending(st) == 0)
		return 0;
	if (rows_alloc(&r, max) == -1)
		return -1;
	rc = in_tx(st, vanish_run, &r);
	if (rc == 1 && removed != NULL)
		*removed = (int64_t)r.n;
	if (rc == 1 && store_vanished_pending(st) == 0)
		rc = 0;
	rows_free(&r);
	return rc;
}

/* ---- the conversion of an older store ----------------------------------- */

static int
set_expiry(struct store *st, const uint8_t id[32], int64_t at)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "UPDATE events SET expires_at = ?2 WHERE id = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, id, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, at) != SQLITE_OK) {
		store_bind_fail(st, stmt, "rules expiry");
		return -1;
	}
	return store_step_done(st, stmt, "rules expiry");
}

/* Bring one stored event (parsed ev) to the rules. 0 or -1. */
static int
fill_event(struct store *st, const struct event *ev, const char *json,
    size_t len, int64_t now)
{
	struct versions	 olds = { 0 };
	struct rev	 e;
	int		 rc;

	rules_rev_init(&e, ev->id, ev->pubkey, ev->kind, ev->created_at, ev->tags,
	    json, len);
	if (event_kind_class(e.kind) == EVENT_CLASS_EPHEMERAL) {
		rc = store_event_remove(st, e.id);
		rules_stats_of(st)->ephemeral += rc == 1;
		return rc == -1 ? -1 : 0;
	}
	if (e.expires_at >= 0 && set_expiry(st, e.id, e.expires_at) == -1)
		return -1;
	if (rules_replaceable(e.kind)) {
		rc = rules_key_standing(st, &e, &olds);
		free(olds.v);
		if (rc == -1)
			return -1;
		if (rc == 0)
			return rules_keep_aside(st, e.id, e.pubkey, e.kind,
			    e.created_at, json, len) == -1 ? -1 :
			    rules_remove_withdraw(st, e.id, e.pubkey, e.kind,
			    e.created_at, STORE_WITHDRAWN_SUPERSEDED, now,
			    &rules_stats_of(st)->superseded);
	}
	return rules_apply_effects(st, &e, now);
}

/* One stored row by id, if it is still there, brought to the rules. */
static int
fill_one(struct store *st, const uint8_t id[32], int64_t now)
{
	struct buf	 b;
	struct event	 ev;
	int		 rc;

	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	event_init(&ev);
	if ((rc = store_event_get(st, id, &b)) == 1) {
		if (event_parse(&ev, (const char *)b.data, b.len,
		    EVENT_MAX_BYTES_CEILING) == EVENT_OK &&
		    memcmp(ev.id, id, 32) == 0)
			rc = fill_event(st, &ev, (const char *)b.data, b.len,
			    now);
		else
			rc = 0;		/* a row that no longer parses stays */
		event_free(&ev);
	}
	buf_free(&b);
	return rc == -1 ? -1 : 0;
}

static int
fill_run(struct store *st, void *arg)
{
	struct step_rows	*r = arg;
	sqlite3_stmt		*stmt;
	int64_t			 next, end, last = 0;
	size_t			 i;
	int			 rc = SQLITE_DONE;

	if ((rc = store_fill_pos(st, "rules_fill", &next, &end)) != 1)
		return rc;
	stmt = store_stmt(st, "SELECT id, pubkey, created_at, kind, rowid FROM "
	    "events WHERE rowid >= ?1 AND rowid <= ?2 ORDER BY rowid LIMIT ?3");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, next) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, end) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, (int64_t)r->max) != SQLITE_OK) {
		store_bind_fail(st, stmt, "rules fill");
		return -1;
	}
	while (r->n < r->max && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		last = sqlite3_column_int64(stmt, 4);
		if (sqlite3_column_bytes(stmt, 0) == 32)
			memcpy(r->ids[r->n++], sqlite3_column_blob(stmt, 0), 32);
	}
	store_stmt_done(stmt);
	if (r->n < r->max && rc != SQLITE_DONE)
		return -1;
	for (i = 0; i < r->n; i++)
		if (fill_one(st, r->ids[i], r->a) == -1)
			return -1;
	next = r->n < r->max ? end + 1 : last + 1;
	r->out = next > end ? 0 : end - next + 1;
	if (store_fill_save(st, "rules_fill", next, end) == -1)
		return -1;
	return next > end ? 0 : 1;
}

int
store_rules_fill_step(struct store *st, size_t max, int64_t *left)
{
	struct step_rows	r = { 0 };
	int			rc;

	if (left != NULL)
		*left = 0;
	if (rows_alloc(&r, max) == -1)
		return -1;
	r.a = clock_wall_s();
	rc = in_tx(st, fill_run, &r);
	if (rc >= 0 && left != NULL)
		*left = r.out;
	rows_free(&r);
	return rc;
}
