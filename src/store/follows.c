/*
 * follows.c — rows of `follows` and `author_relays`. A sync of the
 * followed set and the replacement of an author's relay list each run in
 * one (nested) transaction, so a reader never sees half a follow set or
 * half a relay list.
 *
 * It never deletes a follows row (unfollowed authors become stale and keep
 * their history), and never keeps more than STORE_AUTHOR_RELAYS_MAX relays
 * of one author: the list is whatever a peer signed, of any length.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "core/log.h"
#include "net/url.h"
#include "nostr/event.h"
#include "store/follows.h"
#include "store/store.h"
#include "store/store_sql.h"

/* 1 if pk is among list[0..n). */
static int
pk_in(const uint8_t pk[32], const uint8_t (*list)[32], size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (memcmp(list[i], pk, 32) == 0)
			return 1;
	return 0;
}

/* The state of pk before this sync: -1 absent, 0 followed, 1 stale, -2 error. */
static int
follow_state(struct store *st, const uint8_t pk[32])
{
	sqlite3_stmt	*stmt;
	int		 rc, v = -1;

	stmt = store_stmt(st, "SELECT stale FROM follows WHERE pubkey = ?1");
	if (stmt == NULL)
		return -2;
	if (sqlite3_bind_blob(stmt, 1, pk, 32, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "follows state");
		return -2;
	}
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		v = sqlite3_column_int(stmt, 0);
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -2;
	return v;
}

static int
follow_upsert(struct store *st, const uint8_t pk[32], int is_root,
    int64_t now_s)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "INSERT INTO follows (pubkey, is_root, "
	    "first_seen, last_seen, stale) VALUES (?1, ?2, ?3, ?3, 0) "
	    "ON CONFLICT (pubkey) DO UPDATE SET is_root = excluded.is_root, "
	    "last_seen = excluded.last_seen, stale = 0");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pk, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(stmt, 2, is_root) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, now_s) != SQLITE_OK) {
		store_bind_fail(st, stmt, "follows upsert");
		return -1;
	}
	return store_step_done(st, stmt, "follows upsert");
}

/* Count pk by its state before the sync (before), then upsert it. */
static int
sync_one(struct store *st, const uint8_t pk[32], int is_root, int64_t now_s,
    int before, struct store_follows_change *chg)
{
	if (before == -1)
		chg->added++;
	else if (before == 1)
		chg->returned++;
	return follow_upsert(st, pk, is_root, now_s);
}

static int
pk_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

/*
 * Put the distinct roots first, then the distinct other follows, into set
 * (room for nroots + n). *uroots gets the number of distinct roots;
 * returns the total.
 */
static size_t
follows_build(uint8_t (*set)[32], const uint8_t (*roots)[32], size_t nroots,
    const uint8_t (*follows)[32], size_t n, size_t *uroots)
{
	size_t	i, m = 0, r;

	for (i = 0; i < nroots; i++)
		if (!pk_in(roots[i], (const uint8_t (*)[32])set, m))
			memcpy(set[m++], roots[i], 32);
	r = *uroots = m;
	if (n > 0)
		memcpy(set[r], follows, n * 32);
	qsort(set[r], n, 32, pk_cmp);
	for (i = 0; i < n; i++) {
		const uint8_t *pk = set[r + i];

		if ((m > r && memcmp(set[m - 1], pk, 32) == 0) ||
		    pk_in(pk, (const uint8_t (*)[32])set, r))
			continue;
		memmove(set[m++], pk, 32);
	}
	return m;
}

static int
sync_apply(struct store *st, uint8_t (*set)[32], size_t n, size_t nroots,
    int64_t now_s, struct store_follows_change *chg)
{
	signed char	*before;
	int64_t		 active_before = 0, stale;
	size_t		 i, kept_active = 0;
	int		 rc = 0;

	if ((before = malloc(n + 1)) == NULL) {
		log_warn("store: follows sync");
		return -1;
	}
	if (store_follows_count(st, &active_before, &stale) == -1)
		rc = -1;
	for (i = 0; i < n && rc == 0; i++) {
		int s = follow_state(st, set[i]);

		if (s == -2)
			rc = -1;
		before[i] = (signed char)s;
		if (s == 0)
			kept_active++;
	}
	if (rc == 0 && store_exec(st, "UPDATE follows SET stale = 1 WHERE "
	    "stale = 0") == -1)
		rc = -1;
	for (i = 0; i < n && rc == 0; i++)
		rc = sync_one(st, set[i], i < nroots, now_s, before[i], chg);
	free(before);
	chg->dropped = (size_t)active_before - kept_active;
	chg->active = n;
	return rc;
}

int
store_follows_sync(struct store *st, const uint8_t (*follows)[32], size_t n,
    const uint8_t (*roots)[32], size_t nroots, int64_t now_s,
    struct store_follows_change *chg)
{
	struct store_follows_change	 local;
	uint8_t				(*set)[32];
	size_t				 total, uroots;

	if (chg == NULL)
		chg = &local;
	memset(chg, 0, sizeof(*chg));
	if ((set = calloc(n + nroots + 1, 32)) == NULL) {
		log_warn("store: follows sync");
		return -1;
	}
	total = follows_build(set, roots, nroots, follows, n, &uroots);
	if (store_begin(st) == -1) {
		free(set);
		return -1;
	}
	if (sync_apply(st, set, total, uroots, now_s, chg) == -1) {
		free(set);
		store_rollback(st);
		memset(chg, 0, sizeof(*chg));
		return -1;
	}
	free(set);
	return store_commit(st);
}

static void
follow_row(sqlite3_stmt *stmt, struct store_follow *f)
{
	memset(f, 0, sizeof(*f));
	if (sqlite3_column_bytes(stmt, 0) == 32)
		memcpy(f->pubkey, sqlite3_column_blob(stmt, 0), 32);
	f->is_root = sqlite3_column_int(stmt, 1) != 0;
	f->stale = sqlite3_column_int(stmt, 2) != 0;
	f->first_seen = sqlite3_column_int64(stmt, 3);
	f->last_seen = sqlite3_column_int64(stmt, 4);
	f->events_fetched = sqlite3_column_int64(stmt, 5);
}

int
store_follow_get(struct store *st, const uint8_t pubkey[32],
    struct store_follow *out)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	stmt = store_stmt(st, "SELECT pubkey, is_root, stale, first_seen, "
	    "last_seen, events_fetched FROM follows WHERE pubkey = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "follows get");
		return -1;
	}
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		follow_row(stmt, out);
	store_stmt_done(stmt);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	log_warnx("store: follows get: %s", sqlite3_errmsg(store_db(st)));
	return -1;
}

/* Call cb for each row stmt (bound) gives, then release it. 0, or -1. */
static int
follows_rows(struct store *st, sqlite3_stmt *stmt, store_follow_cb cb,
    void *arg, const char *what)
{
	struct store_follow	 f;
	int			 rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		follow_row(stmt, &f);
		if (cb(&f, arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: %s: %s", what, sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

int
store_follows_each(struct store *st, bool include_stale, store_follow_cb cb,
    void *arg)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "SELECT pubkey, is_root, stale, first_seen, "
	    "last_seen, events_fetched FROM follows WHERE stale = 0 OR ?1 "
	    "ORDER BY pubkey");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int(stmt, 1, include_stale ? 1 : 0) != SQLITE_OK) {
		store_bind_fail(st, stmt, "follows each");
		return -1;
	}
	return follows_rows(st, stmt, cb, arg, "follows each");
}

int
store_follows_page(struct store *st, int64_t offset, int64_t limit,
    store_follow_cb cb, void *arg)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "SELECT pubkey, is_root, stale, first_seen, "
	    "last_seen, events_fetched FROM follows WHERE stale = 0 "
	    "ORDER BY pubkey LIMIT ?2 OFFSET ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, offset) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, limit) != SQLITE_OK) {
		store_bind_fail(st, stmt, "follows page");
		return -1;
	}
	return follows_rows(st, stmt, cb, arg, "follows page");
}

struct active_list {
	uint8_t	(*pks)[32];
	size_t	  n, cap;
};

static int
active_add(const struct store_follow *f, void *arg)
{
	struct active_list	*l = arg;
	uint8_t			(*np)[32];

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;

		if ((np = reallocarray(l->pks, cap, 32)) == NULL)
			return 1;
		l->pks = np;
		l->cap = cap;
	}
	memcpy(l->pks[l->n++], f->pubkey, 32);
	return 0;
}

int
store_follows_active(struct store *st, uint8_t (**out)[32], size_t *n)
{
	struct active_list	l = { NULL, 0, 0 };
	int64_t			active, stale;

	*out = NULL;
	*n = 0;
	if (store_follows_count(st, &active, &stale) == -1)
		return -1;
	if (store_follows_each(st, false, active_add, &l) == -1 ||
	    l.n != (size_t)active) {
		if (l.n != (size_t)active)
			log_warn("store: follows list");
		free(l.pks);
		return -1;
	}
	*out = l.pks;
	*n = l.n;
	return 0;
}

int
store_follows_count(struct store *st, int64_t *active, int64_t *stale)
{
	*active = *stale = 0;
	return store_row_two(st, "SELECT coalesce(sum(stale = 0), 0), "
	    "coalesce(sum(stale = 1), 0) FROM follows", active, stale,
	    "follows count");
}

int
store_follow_add_fetched(struct store *st, const uint8_t pubkey[32],
    int64_t n)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "UPDATE follows SET events_fetched = "
	    "events_fetched + ?2 WHERE pubkey = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, n) != SQLITE_OK) {
		store_bind_fail(st, stmt, "follows add fetched");
		return -1;
	}
	return store_step_done(st, stmt, "follows add fetched");
}

int
store_relay_url_normalise(const char *in, char *out, size_t outlen)
{
	struct url	 u;
	const char	*why;
	char		 port[8] = "";
	int		 n;

	if (url_parse(in, &u, &why) == -1 ||
	    (u.scheme != URL_WS && u.scheme != URL_WSS))
		return -1;
	if (u.port_explicit && u.port != (u.tls ? 443 : 80))
		snprintf(port, sizeof(port), ":%u", (unsigned)u.port);
	n = snprintf(out, outlen, "%s://%s%s%s%s%s", u.tls ? "wss" : "ws",
	    u.host_kind == URL_HOST_IPV6 ? "[" : "", u.host,
	    u.host_kind == URL_HOST_IPV6 ? "]" : "", port,
	    strcmp(u.path, "/") == 0 ? "" : u.path);
	if (n < 0 || (size_t)n >= outlen)
		return -1;
	return 0;
}

/* list_created_at of pubkey's stored list, -1 when none, -2 on error. */
static int64_t
author_relays_at(struct store *st, const uint8_t pubkey[32])
{
	sqlite3_stmt	*stmt;
	int64_t		 at = -1;
	int		 rc;

	stmt = store_stmt(st, "SELECT max(list_created_at) FROM author_relays "
	    "WHERE pubkey = ?1");
	if (stmt == NULL)
		return -2;
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "follows relay list age");
		return -2;
	}
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) != SQLITE_NULL)
		at = sqlite3_column_int64(stmt, 0);
	store_stmt_done(stmt);
	return rc == SQLITE_ROW ? at : -2;
}

/* Add or merge one relay (read/write ORed into a repeat). 0 or -1. */
static int
author_relay_put(struct store *st, const uint8_t pubkey[32], const char *url,
    bool r, bool w, int64_t at)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "INSERT INTO author_relays (pubkey, relay, read, "
	    "write, list_created_at) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT "
	    "(pubkey, relay) DO UPDATE SET read = max(read, excluded.read), "
	    "write = max(write, excluded.write)");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(stmt, 2, url, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(stmt, 3, r ? 1 : 0) != SQLITE_OK ||
	    sqlite3_bind_int(stmt, 4, w ? 1 : 0) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 5, at) != SQLITE_OK) {
		store_bind_fail(st, stmt, "follows relay put");
		return -1;
	}
	return store_step_done(st, stmt, "follows relay put");
}

int64_t
store_author_events(struct store *st, const uint8_t pubkey[32])
{
	sqlite3_stmt	*stmt;
	int64_t		 n = -1;

	stmt = store_stmt(st, "SELECT count(*) FROM events INDEXED BY "
	    "events_pubkey_time WHERE pubkey = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(stmt) == SQLITE_ROW)
		n = sqlite3_column_int64(stmt, 0);
	else
		log_warnx("store: author events: %s",
		    sqlite3_errmsg(store_db(st)));
	store_stmt_done(stmt);
	return n;
}

/* How many distinct relays pubkey has now. -1 on error. */
static int64_t
author_relays_count(struct store *st, const uint8_t pubkey[32])
{
	sqlite3_stmt	*stmt;
	int64_t		 n = -1;

	stmt = store_stmt(st, "SELECT count(*) FROM author_relays WHERE "
	    "pubkey = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(stmt) == SQLITE_ROW)
		n = sqlite3_column_int64(stmt, 0);
	store_stmt_done(stmt);
	return n;
}

static int
author_relays_replace(struct store *st, const uint8_t pubkey[32],
    const struct store_author_relay *list, size_t n, int64_t at)
{
	sqlite3_stmt	*stmt;
	char		 url[URL_MAX_BYTES + 1];
	size_t		 i;
	int64_t		 have = 0;

	stmt = store_stmt(st, "DELETE FROM author_relays WHERE pubkey = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "follows relay delete");
		return -1;
	}
	if (store_step_done(st, stmt, "follows relay delete") == -1)
		return -1;
	for (i = 0; i < n && have < STORE_AUTHOR_RELAYS_MAX; i++) {
		if (list[i].url == NULL || (!list[i].read && !list[i].write) ||
		    store_relay_url_normalise(list[i].url, url,
		    sizeof(url)) == -1)
			continue;
		if (author_relay_put(st, pubkey, url, list[i].read,
		    list[i].write, at) == -1 ||
		    (have = author_relays_count(st, pubkey)) == -1)
			return -1;
	}
	return 0;
}

int
store_author_relays_set(struct store *st, const uint8_t pubkey[32],
    const struct store_author_relay *list, size_t n, int64_t list_created_at)
{
	int64_t	at;

	if (store_begin(st) == -1)
		return -1;
	if ((at = author_relays_at(st, pubkey)) == -2)
		goto fail;
	if (at >= list_created_at) {
		store_rollback(st);
		return 0;
	}
	if (author_relays_replace(st, pubkey, list, n, list_created_at) == -1)
		goto fail;
	return store_commit(st) == -1 ? -1 : 1;
fail:
	store_rollback(st);
	return -1;
}

/* Read an "r" tag into rel. 0 when it is one, -1 to skip it. */
static int
relay_tag(const cJSON *tag, struct store_author_relay *rel)
{
	const cJSON	*name = cJSON_GetArrayItem(tag, 0);
	const cJSON	*url = cJSON_GetArrayItem(tag, 1);
	const cJSON	*mark = cJSON_GetArrayItem(tag, 2);

	if (!cJSON_IsString(name) || strcmp(name->valuestring, "r") != 0 ||
	    !cJSON_IsString(url))
		return -1;
	rel->url = url->valuestring;
	rel->read = rel->write = true;
	if (cJSON_IsString(mark) && strcmp(mark->valuestring, "read") == 0)
		rel->write = false;
	else if (cJSON_IsString(mark) &&
	    strcmp(mark->valuestring, "write") == 0)
		rel->read = false;
	return 0;
}

int
store_author_relays_from_event(struct store *st, const struct event *ev)
{
	struct store_author_relay	 list[STORE_AUTHOR_RELAYS_MAX];
	const cJSON			*tag;
	size_t				 n = 0;

	if (ev->kind != 10002)
		return 0;
	cJSON_ArrayForEach(tag, ev->tags) {
		if (n == STORE_AUTHOR_RELAYS_MAX)
			break;
		if (relay_tag(tag, &list[n]) == 0)
			n++;
	}
	return store_author_relays_set(st, ev->pubkey, list, n, ev->created_at);
}

/* Step a (pubkey, relay, read, write) query and hand rows to cb. */
static int
author_relays_walk(struct store *st, sqlite3_stmt *stmt,
    store_author_relay_cb cb, void *arg)
{
	struct store_author_relay	 rel;
	uint8_t				 pk[32];
	int				 rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(stmt, 0) != 32)
			continue;
		memcpy(pk, sqlite3_column_blob(stmt, 0), 32);
		rel.url = (const char *)sqlite3_column_text(stmt, 1);
		rel.read = sqlite3_column_int(stmt, 2) != 0;
		rel.write = sqlite3_column_int(stmt, 3) != 0;
		if (rel.url != NULL && cb(pk, &rel, arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: author relays: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

int
store_author_relays_each(struct store *st, const uint8_t pubkey[32],
    store_author_relay_cb cb, void *arg)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "SELECT pubkey, relay, read, write FROM "
	    "author_relays WHERE pubkey = ?1 ORDER BY relay");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "follows relays each");
		return -1;
	}
	return author_relays_walk(st, stmt, cb, arg);
}

int
store_relay_writers_each(struct store *st, const char *relay,
    store_author_relay_cb cb, void *arg)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "SELECT a.pubkey, a.relay, a.read, a.write FROM "
	    "author_relays a JOIN follows f ON f.pubkey = a.pubkey WHERE "
	    "a.relay = ?1 AND a.write = 1 AND f.stale = 0 ORDER BY a.pubkey");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 1, relay, -1, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "follows writers");
		return -1;
	}
	return author_relays_walk(st, stmt, cb, arg);
}

int
store_write_relays_each(struct store *st, store_write_relay_cb cb, void *arg)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	stmt = store_stmt(st, "SELECT a.relay, count(*) AS n FROM author_relays "
	    "a JOIN follows f ON f.pubkey = a.pubkey WHERE a.write = 1 AND "
	    "f.stale = 0 GROUP BY a.relay ORDER BY n DESC, a.relay");
	if (stmt == NULL)
		return -1;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *url = (const char *)sqlite3_column_text(stmt, 0);

		if (url != NULL && cb(url, sqlite3_column_int64(stmt, 1),
		    arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: write relays: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}
