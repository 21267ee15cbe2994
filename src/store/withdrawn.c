/*
 * withdrawn.c — the tables of what authors withdrew (withdrawn.h):
 * `withdrawn`, `withdrawn_key`, `vanished` and `roots_history`, and a
 * small cache beside the connection (store_cache_slot) holding their row
 * counts, so the rules cost no query while a table is empty, and the
 * relay judge the sync layer lends.
 *
 * The counts are read once at first use and kept by this file's own
 * writes; only the daemon's connection writes these tables. A count that
 * a rolled-back batch leaves too high only costs a query that finds
 * nothing; nothing here ever skips a lookup that could find a row.
 * It never deletes an event: the rules (store/rules.c) do.
 */
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "core/log.h"
#include "store/store.h"
#include "store/store_sql.h"
#include "store/withdrawn.h"

struct withdrawn_cache {
	bool			 loaded;
	int64_t			 rows;		/* withdrawn */
	int64_t			 keys;		/* withdrawn_key */
	int64_t			 vanished;	/* vanished */
	int64_t			 pending;	/* vanished, not purged */
	store_relay_judge_fn	 judge;
	void			*judge_arg;
};

static const char *const why_names[] = {
	[STORE_WITHDRAWN_SUPERSEDED] = "superseded",
	[STORE_WITHDRAWN_DELETED] = "deleted",
	[STORE_WITHDRAWN_EXPIRED] = "expired",
	[STORE_WITHDRAWN_VANISHED] = "vanished",
};

const char *
store_withdrawn_why_name(int why)
{
	if (why <= 0 || (size_t)why >= sizeof(why_names) / sizeof(why_names[0]))
		return "?";
	return why_names[why];
}

static void
cache_free(void *p)
{
	free(p);
}

/* The cache, its counts read at first use; NULL on failure (logged). */
static struct withdrawn_cache *
wcache(struct store *st)
{
	struct store_cache	*slot = store_cache_slot(st, STORE_CACHE_WITHDRAWN);
	struct withdrawn_cache	*c = slot->data;
	int64_t			 a, b;

	if (c == NULL) {
		if ((c = calloc(1, sizeof(*c))) == NULL) {
			log_warn("store: withdrawn cache");
			return NULL;
		}
		slot->data = c;
		slot->free = cache_free;
	}
	if (c->loaded)
		return c;
	if (store_row_two(st, "SELECT (SELECT count(*) FROM withdrawn), "
	    "(SELECT count(*) FROM withdrawn_key)", &a, &b,
	    "withdrawn counts") == -1)
		return NULL;
	c->rows = a;
	c->keys = b;
	if (store_row_two(st, "SELECT count(*), coalesce(sum(purged = 0), 0) "
	    "FROM vanished", &a, &b, "vanished counts") == -1)
		return NULL;
	c->vanished = a;
	c->pending = b;
	c->loaded = true;
	return c;
}

/* Bind the blobs and integers of a statement in order; 0 or -1. */
static int
bind_blob(sqlite3_stmt *stmt, int i, const uint8_t *v)
{
	return sqlite3_bind_blob(stmt, i, v, 32, SQLITE_STATIC) == SQLITE_OK ?
	    0 : -1;
}

static int
bind_known(sqlite3_stmt *stmt, int i, int64_t v)
{
	return (v < 0 ? sqlite3_bind_null(stmt, i) :
	    sqlite3_bind_int64(stmt, i, v)) == SQLITE_OK ? 0 : -1;
}

/* Drop the oldest tombstones past STORE_WITHDRAWN_MAX. 0 or -1. */
static int
withdrawn_trim(struct store *st, struct withdrawn_cache *c)
{
	sqlite3_stmt	*stmt;
	int64_t		 over = c->rows - STORE_WITHDRAWN_MAX;

	if (over <= 0)
		return 0;
	stmt = store_stmt(st, "DELETE FROM withdrawn WHERE (id, pubkey) IN "
	    "(SELECT id, pubkey FROM withdrawn ORDER BY at, id LIMIT ?1)");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, over) != SQLITE_OK) {
		store_bind_fail(st, stmt, "withdrawn trim");
		return -1;
	}
	if (store_step_done(st, stmt, "withdrawn trim") == -1)
		return -1;
	c->rows -= sqlite3_changes(store_db(st));
	return 0;
}

/* A row of (id, pubkey) that lacked the event learns it. 0 or -1. */
static int
withdrawn_learn(struct store *st, const struct store_withdrawn *w)
{
	sqlite3_stmt	*stmt;

	if (w->created_at < 0)
		return 0;
	stmt = store_stmt(st, "UPDATE withdrawn SET created_at = ?3, kind = ?4, "
	    "why = ?5 WHERE id = ?1 AND pubkey = ?2 AND created_at IS NULL");
	if (stmt == NULL)
		return -1;
	if (bind_blob(stmt, 1, w->id) == -1 || bind_blob(stmt, 2, w->pubkey) ==
	    -1 || bind_known(stmt, 3, w->created_at) == -1 ||
	    bind_known(stmt, 4, w->kind) == -1 ||
	    sqlite3_bind_int(stmt, 5, w->why) != SQLITE_OK) {
		store_bind_fail(st, stmt, "withdrawn learn");
		return -1;
	}
	return store_step_done(st, stmt, "withdrawn learn");
}

int
store_withdrawn_add(struct store *st, const struct store_withdrawn *w,
    int64_t now)
{
	struct withdrawn_cache	*c = wcache(st);
	sqlite3_stmt		*stmt;

	if (c == NULL)
		return -1;
	stmt = store_stmt(st, "INSERT INTO withdrawn (id, pubkey, created_at, "
	    "kind, why, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id, "
	    "pubkey) DO NOTHING");
	if (stmt == NULL)
		return -1;
	if (bind_blob(stmt, 1, w->id) == -1 || bind_blob(stmt, 2, w->pubkey) ==
	    -1 || bind_known(stmt, 3, w->created_at) == -1 ||
	    bind_known(stmt, 4, w->kind) == -1 ||
	    sqlite3_bind_int(stmt, 5, w->why) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 6, now) != SQLITE_OK) {
		store_bind_fail(st, stmt, "withdrawn add");
		return -1;
	}
	if (store_step_done(st, stmt, "withdrawn add") == -1)
		return -1;
	if (sqlite3_changes(store_db(st)) == 0)
		return withdrawn_learn(st, w);
	c->rows++;
	return withdrawn_trim(st, c);
}

/* The fields of a withdrawn row read by the statements below. */
static void
row_read(sqlite3_stmt *stmt, struct store_withdrawn *w)
{
	memcpy(w->id, sqlite3_column_blob(stmt, 0), 32);
	memcpy(w->pubkey, sqlite3_column_blob(stmt, 1), 32);
	w->created_at = sqlite3_column_type(stmt, 2) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(stmt, 2);
	w->kind = sqlite3_column_type(stmt, 3) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(stmt, 3);
	w->why = sqlite3_column_int(stmt, 4);
}

static bool
row_sane(sqlite3_stmt *stmt)
{
	return sqlite3_column_bytes(stmt, 0) == 32 &&
	    sqlite3_column_bytes(stmt, 1) == 32;
}

int
store_withdrawn_known(struct store *st, const uint8_t id[32],
    struct store_withdrawn *out)
{
	struct withdrawn_cache	*c = wcache(st);
	sqlite3_stmt		*stmt;
	int			 rc, ret = 0;

	if (c == NULL)
		return -1;
	if (c->rows == 0)
		return 0;
	stmt = store_stmt(st, "SELECT id, pubkey, created_at, kind, why FROM "
	    "withdrawn WHERE id = ?1 AND created_at IS NOT NULL LIMIT 1");
	if (stmt == NULL)
		return -1;
	if (bind_blob(stmt, 1, id) == -1) {
		store_bind_fail(st, stmt, "withdrawn known");
		return -1;
	}
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW && row_sane(stmt)) {
		if (out != NULL)
			row_read(stmt, out);
		ret = 1;
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		log_warnx("store: withdrawn known: %s",
		    sqlite3_errmsg(store_db(st)));
		ret = -1;
	}
	store_stmt_done(stmt);
	return ret;
}

/* Whether pk is one of recipients[0..n). */
static bool
among(const uint8_t *pk, const uint8_t (*recipients)[32], size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (memcmp(recipients[i], pk, 32) == 0)
			return true;
	return false;
}

int
store_withdrawn_match(struct store *st, const uint8_t id[32],
    const uint8_t pubkey[32], uint32_t kind,
    const uint8_t (*recipients)[32], size_t nrec)
{
	struct withdrawn_cache	*c = wcache(st);
	struct store_withdrawn	 w;
	sqlite3_stmt		*stmt;
	int			 rc, why = 0;
	bool			 undeletable = kind == 5 || kind == 62;

	if (c == NULL)
		return -1;
	if (c->rows == 0)
		return 0;
	stmt = store_stmt(st, "SELECT id, pubkey, created_at, kind, why FROM "
	    "withdrawn WHERE id = ?1");
	if (stmt == NULL)
		return -1;
	if (bind_blob(stmt, 1, id) == -1) {
		store_bind_fail(st, stmt, "withdrawn match");
		return -1;
	}
	while (why == 0 && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (!row_sane(stmt))
			continue;
		row_read(stmt, &w);
		if (w.why == STORE_WITHDRAWN_DELETED && undeletable)
			continue;
		if (memcmp(w.pubkey, pubkey, 32) == 0 || (kind == 1059 &&
		    w.why == STORE_WITHDRAWN_DELETED &&
		    among(w.pubkey, recipients, nrec)))
			why = w.why;
	}
	if (why == 0 && rc != SQLITE_DONE) {
		log_warnx("store: withdrawn match: %s",
		    sqlite3_errmsg(store_db(st)));
		why = -1;
	}
	store_stmt_done(stmt);
	return why;
}

int64_t
store_withdrawn_count(struct store *st)
{
	struct withdrawn_cache	*c = wcache(st);

	return c == NULL ? -1 : c->rows;
}

/* Whether version (a_at, a_id) is newer than (b_at, b_id) under NIP-01. */
static bool
version_newer(int64_t a_at, const uint8_t *a_id, int64_t b_at,
    const uint8_t *b_id)
{
	return a_at > b_at || (a_at == b_at && memcmp(a_id, b_id, 32) < 0);
}

/* The floor of a key: 1 with *at, id, *why set, 0 none, -1 error. */
static int
key_floor(struct store *st, const uint8_t pubkey[32], uint32_t kind,
    const char *d, int64_t *at, uint8_t id[32], int *why)
{
	sqlite3_stmt	*stmt;
	int		 rc, ret = 0;

	stmt = store_stmt(st, "SELECT until, until_id, why FROM withdrawn_key "
	    "WHERE pubkey = ?1 AND kind = ?2 AND d = ?3");
	if (stmt == NULL)
		return -1;
	if (bind_blob(stmt, 1, pubkey) == -1 ||
	    sqlite3_bind_int64(stmt, 2, kind) != SQLITE_OK ||
	    sqlite3_bind_text(stmt, 3, d, -1, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "withdrawn key");
		return -1;
	}
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW &&
	    sqlite3_column_bytes(stmt, 1) == 32) {
		*at = sqlite3_column_int64(stmt, 0);
		memcpy(id, sqlite3_column_blob(stmt, 1), 32);
		*why = sqlite3_column_int(stmt, 2);
		ret = 1;
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		log_warnx("store: withdrawn key: %s",
		    sqlite3_errmsg(store_db(st)));
		ret = -1;
	}
	store_stmt_done(stmt);
	return ret;
}

int
store_withdrawn_key_raise(struct store *st, const uint8_t pubkey[32],
    uint32_t kind, const char *d, int64_t at, const uint8_t id[32], int why)
{
	struct withdrawn_cache	*c = wcache(st);
	sqlite3_stmt		*stmt;
	uint8_t			 fid[32];
	int64_t			 fat;
	int			 fwhy, rc;

	if (c == NULL || (rc = key_floor(st, pubkey, kind, d, &fat, fid,
	    &fwhy)) == -1)
		return -1;
	if (rc == 1 && !version_newer(at, id, fat, fid))
		return 0;
	stmt = store_stmt(st, "INSERT INTO withdrawn_key (pubkey, kind, d, "
	    "until, until_id, why) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT "
	    "(pubkey, kind, d) DO UPDATE SET until = excluded.until, until_id = "
	    "excluded.until_id, why = excluded.why");
	if (stmt == NULL)
		return -1;
	if (bind_blob(stmt, 1, pubkey) == -1 ||
	    sqlite3_bind_int64(stmt, 2, kind) != SQLITE_OK ||
	    sqlite3_bind_text(stmt, 3, d, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 4, at) != SQLITE_OK ||
	    bind_blob(stmt, 5, id) == -1 ||
	    sqlite3_bind_int(stmt, 6, why) != SQLITE_OK) {
		store_bind_fail(st, stmt, "withdrawn key raise");
		return -1;
	}
	if (store_step_done(st, stmt, "withdrawn key raise") == -1)
		return -1;
	c->keys += rc == 0;
	return 0;
}

int
store_withdrawn_key_refuses(struct store *st, const uint8_t pubkey[32],
    uint32_t kind, const char *d, int64_t at, const uint8_t id[32])
{
	struct withdrawn_cache	*c = wcache(st);
	uint8_t			 fid[32];
	int64_t			 fat;
	int			 fwhy, rc;

	if (c == NULL)
		return -1;
	if (c->keys == 0)
		return 0;
	if ((rc = key_floor(st, pubkey, kind, d, &fat, fid, &fwhy)) != 1)
		return rc;
	return version_newer(at, id, fat, fid) ? 0 : fwhy;
}

int
store_vanished_get(struct store *st, const uint8_t pubkey[32],
    int64_t *until, uint8_t id[32])
{
	struct withdrawn_cache	*c = wcache(st);
	sqlite3_stmt		*stmt;
	int			 rc, ret = 0;

	if (c == NULL)
		return -1;
	if (c->vanished == 0)
		return 0;
	stmt = store_stmt(st, "SELECT until, id FROM vanished WHERE "
	    "pubkey = ?1");
	if (stmt == NULL)
		return -1;
	if (bind_blob(stmt, 1, pubkey) == -1) {
		store_bind_fail(st, stmt, "vanished get");
		return -1;
	}
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW &&
	    sqlite3_column_bytes(stmt, 1) == 32) {
		*until = sqlite3_column_int64(stmt, 0);
		if (id != NULL)
			memcpy(id, sqlite3_column_blob(stmt, 1), 32);
		ret = 1;
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		log_warnx("store: vanished get: %s",
		    sqlite3_errmsg(store_db(st)));
		ret = -1;
	}
	store_stmt_done(stmt);
	return ret;
}

int
store_vanished_add(struct store *st, const uint8_t pubkey[32], int64_t until,
    const uint8_t id[32])
{
	struct withdrawn_cache	*c = wcache(st);
	sqlite3_stmt		*stmt;
	int64_t			 held;
	int			 rc;

	if (c == NULL || (rc = store_vanished_get(st, pubkey, &held,
	    NULL)) == -1)
		return -1;
	if (rc == 1 && held >= until)
		return 0;
	stmt = store_stmt(st, "INSERT INTO vanished (pubkey, until, id, "
	    "purged) VALUES (?1, ?2, ?3, 0) ON CONFLICT (pubkey) DO UPDATE "
	    "SET until = excluded.until, id = excluded.id, purged = 0");
	if (stmt == NULL)
		return -1;
	if (bind_blob(stmt, 1, pubkey) == -1 ||
	    sqlite3_bind_int64(stmt, 2, until) != SQLITE_OK ||
	    bind_blob(stmt, 3, id) == -1) {
		store_bind_fail(st, stmt, "vanished add");
		return -1;
	}
	if (store_step_done(st, stmt, "vanished add") == -1)
		return -1;
	c->vanished += rc == 0;
	c->pending++;		/* a second request over-counts: a hint */
	return 1;
}

int
store_vanished_next_purge(struct store *st, uint8_t pubkey[32],
    int64_t *until, uint8_t id[32])
{
	struct withdrawn_cache	*c = wcache(st);
	sqlite3_stmt		*stmt;
	int			 rc, ret = 0;

	if (c == NULL)
		return -1;
	if (c->pending == 0)
		return 0;
	stmt = store_stmt(st, "SELECT pubkey, until, id FROM vanished WHERE "
	    "purged = 0 LIMIT 1");
	if (stmt == NULL)
		return -1;
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW &&
	    sqlite3_column_bytes(stmt, 0) == 32 &&
	    sqlite3_column_bytes(stmt, 2) == 32) {
		memcpy(pubkey, sqlite3_column_blob(stmt, 0), 32);
		*until = sqlite3_column_int64(stmt, 1);
		memcpy(id, sqlite3_column_blob(stmt, 2), 32);
		ret = 1;
	} else if (rc == SQLITE_DONE)
		c->pending = 0;		/* the hint was high */
	else if (rc != SQLITE_ROW) {
		log_warnx("store: vanished next: %s",
		    sqlite3_errmsg(store_db(st)));
		ret = -1;
	}
	store_stmt_done(stmt);
	return ret;
}

int
store_vanished_purged(struct store *st, const uint8_t pubkey[32])
{
	struct withdrawn_cache	*c = wcache(st);
	sqlite3_stmt		*stmt;

	if (c == NULL)
		return -1;
	stmt = store_stmt(st, "UPDATE vanished SET purged = 1 WHERE "
	    "pubkey = ?1 AND purged = 0");
	if (stmt == NULL)
		return -1;
	if (bind_blob(stmt, 1, pubkey) == -1) {
		store_bind_fail(st, stmt, "vanished purged");
		return -1;
	}
	if (store_step_done(st, stmt, "vanished purged") == -1)
		return -1;
	if (sqlite3_changes(store_db(st)) > 0 && c->pending > 0)
		c->pending--;
	return 0;
}

int64_t
store_vanished_pending(struct store *st)
{
	struct withdrawn_cache	*c = wcache(st);

	return c == NULL ? -1 : c->pending;
}

int64_t
store_vanished_count(struct store *st)
{
	struct withdrawn_cache	*c = wcache(st);

	return c == NULL ? -1 : c->vanished;
}

int
store_roots_history_add(struct store *st, const uint8_t pubkey[32],
    uint32_t kind, int64_t created_at, const uint8_t id[32],
    const char *json, size_t len)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "INSERT INTO roots_history (pubkey, kind, "
	    "created_at, id, json) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO "
	    "NOTHING");
	if (stmt == NULL)
		return -1;
	if (bind_blob(stmt, 1, pubkey) == -1 ||
	    sqlite3_bind_int64(stmt, 2, kind) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, created_at) != SQLITE_OK ||
	    bind_blob(stmt, 4, id) == -1 ||
	    sqlite3_bind_text(stmt, 5, json, (int)len, SQLITE_STATIC) !=
	    SQLITE_OK) {
		store_bind_fail(st, stmt, "roots history add");
		return -1;
	}
	if (store_step_done(st, stmt, "roots history add") == -1)
		return -1;
	/* Keep the newest ROOTS_HISTORY_KEEP of (pubkey, kind). */
	stmt = store_stmt(st, "DELETE FROM roots_history WHERE pubkey = ?1 "
	    "AND kind = ?2 AND (created_at, id) NOT IN (SELECT created_at, id "
	    "FROM roots_history WHERE pubkey = ?1 AND kind = ?2 ORDER BY "
	    "created_at DESC, id LIMIT ?3)");
	if (stmt == NULL)
		return -1;
	if (bind_blob(stmt, 1, pubkey) == -1 ||
	    sqlite3_bind_int64(stmt, 2, kind) != SQLITE_OK ||
	    sqlite3_bind_int(stmt, 3, ROOTS_HISTORY_KEEP) != SQLITE_OK) {
		store_bind_fail(st, stmt, "roots history trim");
		return -1;
	}
	return store_step_done(st, stmt, "roots history trim");
}

int64_t
store_roots_history_list(struct store *st, const uint8_t *pubkey,
    int64_t kind, size_t max, store_history_cb cb, void *arg)
{
	sqlite3_stmt	*stmt;
	int64_t		 n = 0;
	int		 rc;

	stmt = store_stmt(st, "SELECT pubkey, kind, created_at, json FROM "
	    "roots_history WHERE (?1 IS NULL OR pubkey = ?1) AND (?2 < 0 OR "
	    "kind = ?2) ORDER BY created_at DESC, id LIMIT ?3");
	if (stmt == NULL)
		return -1;
	if ((pubkey == NULL ? sqlite3_bind_null(stmt, 1) :
	    sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC)) !=
	    SQLITE_OK || sqlite3_bind_int64(stmt, 2, kind) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, (int64_t)max) != SQLITE_OK) {
		store_bind_fail(st, stmt, "roots history list");
		return -1;
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(stmt, 0) != 32)
			continue;
		n++;
		if (cb(arg, sqlite3_column_blob(stmt, 0),
		    (uint32_t)sqlite3_column_int64(stmt, 1),
		    sqlite3_column_int64(stmt, 2), (const char *)
		    sqlite3_column_text(stmt, 3), (size_t)sqlite3_column_bytes(
		    stmt, 3)) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		log_warnx("store: roots history list: %s",
		    sqlite3_errmsg(store_db(st)));
		n = -1;
	}
	store_stmt_done(stmt);
	return n;
}

void
store_set_relay_judge(struct store *st, store_relay_judge_fn fn, void *arg)
{
	struct withdrawn_cache	*c = wcache(st);

	if (c == NULL)
		return;
	c->judge = fn;
	c->judge_arg = arg;
}

bool
store_relay_is_ours(struct store *st, const char *url)
{
	struct withdrawn_cache	*c = wcache(st);

	return c != NULL && c->judge != NULL && c->judge(c->judge_arg, url);
}
