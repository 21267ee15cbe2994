/*
 * rules.c — the store's one door for events and the rules applied there
 * (rules.h): versions of replaceable and addressable keys, NIP-09
 * deletions, NIP-40 expiry, NIP-62 requests to vanish, with a tombstone
 * (store/withdrawn.h) for everything withdrawn, and the bounded steps that
 * remove what one insert cannot: expired events, a vanished author's
 * history, and what a store made before the rules still holds.
 *
 * It writes inside the caller's transaction and never opens one while
 * another is open. It never removes a deletion (kind 5) or a request to
 * vanish (kind 62) because a deletion names it, never acts on another
 * author's deletion, and never trusts a stored row's JSON more than its
 * columns: the author, time and kind come from the columns the id vouched
 * for when the row was verified.
 */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "nostr/event.h"
#include "store/dedup.h"
#include "store/events.h"
#include "store/follows.h"
#include "store/names.h"
#include "store/rules.h"
#include "store/rowjson.h"
#include "store/rules_int.h"
#include "store/store.h"
#include "store/store_sql.h"
#include "store/withdrawn.h"

struct rules_cache {
	struct store_rules_stats	stats;
};

static void
cache_free(void *p)
{
	free(p);
}

struct store_rules_stats *
rules_stats_of(struct store *st)
{
	static struct store_rules_stats	 none;
	struct store_cache		*slot = store_cache_slot(st,
					    STORE_CACHE_RULES);
	struct rules_cache		*c = slot->data;

	if (c == NULL) {
		if ((c = calloc(1, sizeof(*c))) == NULL) {
			memset(&none, 0, sizeof(none));
			return &none;
		}
		slot->data = c;
		slot->free = cache_free;
	}
	return &c->stats;
}

const struct store_rules_stats *
store_rules_stats(struct store *st)
{
	return rules_stats_of(st);
}

/* Fill e from an event's fields and tags (borrowed). */
void
rules_rev_init(struct rev *e, const uint8_t *id, const uint8_t *pubkey,
    uint32_t kind, int64_t created_at, const cJSON *tags, const char *json,
    size_t len)
{
	const cJSON	*t, *k, *v;

	memset(e, 0, sizeof(*e));
	e->id = id;
	e->pubkey = pubkey;
	e->kind = kind;
	e->created_at = created_at;
	e->tags = tags;
	e->json = json;
	e->len = len;
	if (!event_expiration(tags, &e->expires_at))
		e->expires_at = -1;
	if (kind != 1059 || !cJSON_IsArray(tags))
		return;
	cJSON_ArrayForEach(t, tags) {
		if ((k = t->child) == NULL || !cJSON_IsString(k) ||
		    strcmp(k->valuestring, "p") != 0 || (v = k->next) == NULL ||
		    !cJSON_IsString(v) || strlen(v->valuestring) != 64 ||
		    e->nrcpt == RULES_MAX_RECIPIENTS)
			continue;
		if (hex_decode(v->valuestring, 64, e->rcpt[e->nrcpt], 32) == 0)
			e->nrcpt++;
	}
}

/* Remember e as withdrawn for why (its fields verified). 0 or -1. */
static int
withdraw(struct store *st, const struct rev *e, int why, int64_t now)
{
	struct store_withdrawn	w;

	memcpy(w.id, e->id, 32);
	memcpy(w.pubkey, e->pubkey, 32);
	w.created_at = e->created_at;
	w.kind = e->kind;
	w.why = why;
	return store_withdrawn_add(st, &w, now);
}

/* Whether pubkey is a root of the follow set. */
static bool
is_root(struct store *st, const uint8_t pubkey[32])
{
	struct store_follow	f;

	return store_follow_get(st, pubkey, &f) == 1 && f.is_root && !f.stale;
}

/*
 * A superseded version of a root's kind 0, 3 or 10002 is kept aside
 * (json NULL: read it from the stored row id). 0 or -1.
 */
int
rules_keep_aside(struct store *st, const uint8_t id[32],
    const uint8_t pubkey[32], uint32_t kind, int64_t created_at,
    const char *json, size_t len)
{
	struct buf	b;
	int		rc;

	if ((kind != 0 && kind != 3 && kind != 10002) || !is_root(st, pubkey))
		return 0;
	if (json != NULL)
		rc = store_roots_history_add(st, pubkey, kind, created_at, id,
		    json, len);
	else {
		buf_init(&b, EVENT_SERIAL_MAX_BYTES);
		rc = store_event_get(st, id, &b);
		if (rc == 1)
			rc = store_roots_history_add(st, pubkey, kind,
			    created_at, id, (const char *)b.data, b.len);
		buf_free(&b);
	}
	if (rc == 0)
		rules_stats_of(st)->kept_aside++;
	return rc == -1 ? -1 : 0;
}

bool
rules_replaceable(uint32_t kind)
{
	enum event_class	c = event_kind_class(kind);

	return c == EVENT_CLASS_REPLACEABLE || c == EVENT_CLASS_ADDRESSABLE;
}

/*
 * Raise the floor of the key of the stored version id (of pubkey, kind,
 * created_at) to it: the version leaves, and no older one may take its
 * place. An addressable one's "d" is read from its row. 0 or -1.
 */
static int
floor_of_stored(struct store *st, const uint8_t id[32],
    const uint8_t pubkey[32], uint32_t kind, int64_t created_at)
{
	struct buf	 b;
	cJSON		*obj = NULL;
	const char	*d = NULL;
	int		 rc;

	if (event_kind_class(kind) != EVENT_CLASS_ADDRESSABLE)
		return store_withdrawn_key_raise(st, pubkey, kind, "",
		    created_at, id, STORE_WITHDRAWN_SUPERSEDED);
	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	if ((rc = store_event_get(st, id, &b)) == 1) {
		obj = cJSON_ParseWithLength((const char *)b.data, b.len);
		d = obj == NULL ? NULL : event_tag_first(
		    cJSON_GetObjectItemCaseSensitive(obj, "tags"), "d");
		rc = store_withdrawn_key_raise(st, pubkey, kind, d == NULL ?
		    "" : d, created_at, id, STORE_WITHDRAWN_SUPERSEDED);
	}
	cJSON_Delete(obj);
	buf_free(&b);
	return rc == -1 ? -1 : 0;
}

/*
 * Remove the stored event id (of pubkey, kind, created_at) for why,
 * leaving its tombstone; *count (may be NULL) counts it. 0 or -1.
 */
int
rules_remove_withdraw(struct store *st, const uint8_t id[32],
    const uint8_t pubkey[32], uint32_t kind, int64_t created_at, int why,
    int64_t now, uint64_t *count)
{
	struct store_withdrawn	w;
	int			rc;

	/* Older versions of its key must not take its place. */
	if (rules_replaceable(kind) && why != STORE_WITHDRAWN_SUPERSEDED &&
	    floor_of_stored(st, id, pubkey, kind, created_at) == -1)
		return -1;
	if ((rc = store_event_remove(st, id)) == -1)
		return -1;
	if (rc == 0)
		return 0;
	if (kind == 0)
		store_names_forget(st, pubkey);
	if (count != NULL)
		(*count)++;
	memcpy(w.id, id, 32);
	memcpy(w.pubkey, pubkey, 32);
	w.created_at = created_at;
	w.kind = kind;
	w.why = why;
	return store_withdrawn_add(st, &w, now);
}

/* ---- versions of a replaceable or addressable key ----------------------- */

/* Whether version (a_at, a_id) replaces (b_at, b_id) under NIP-01. */
static bool
newer(int64_t a_at, const uint8_t *a_id, int64_t b_at, const uint8_t *b_id)
{
	return a_at > b_at || (a_at == b_at && memcmp(a_id, b_id, 32) < 0);
}

static int
versions_push(struct versions *vs, const uint8_t id[32], int64_t at)
{
	struct version	*g;

	if (vs->n == vs->cap) {
		vs->cap = vs->cap == 0 ? 4 : vs->cap * 2;
		if ((g = realloc(vs->v, vs->cap * sizeof(*g))) == NULL) {
			log_warn("store: rules versions");
			return -1;
		}
		vs->v = g;
	}
	memcpy(vs->v[vs->n].id, id, 32);
	vs->v[vs->n++].created_at = at;
	return 0;
}

/* Whether the stored JSON of a version carries d as its "d" tag. */
static bool
same_d(const unsigned char *json, int len, const char *d)
{
	cJSON		*obj;
	const char	*od;
	bool		 same;

	obj = cJSON_ParseWithLength((const char *)json, (size_t)len);
	od = obj == NULL ? NULL : event_tag_first(
	    cJSON_GetObjectItemCaseSensitive(obj, "tags"), "d");
	same = strcmp(od == NULL ? "" : od, d) == 0;
	cJSON_Delete(obj);
	return same;
}

/*
 * The stored versions of key (pubkey, kind, d; d NULL for a replaceable
 * kind) created at or before until (< 0: any), into vs. 0 or -1.
 */
static int
key_versions(struct store *st, const uint8_t pubkey[32], uint32_t kind,
    const char *d, int64_t until, struct versions *vs)
{
	sqlite3_stmt	*stmt;
	struct buf	 json;
	int		 rc;

	stmt = store_stmt(st, "SELECT id, created_at, " STORE_ROW_JSON_COLS("")
	    " FROM events WHERE pubkey = ?1 AND kind = ?2 AND "
	    EVENTS_SQL_REPLACEABLE("kind"));
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pubkey, 32, SQLITE_STATIC) !=
	    SQLITE_OK || sqlite3_bind_int64(stmt, 2, kind) != SQLITE_OK) {
		store_bind_fail(st, stmt, "rules versions");
		return -1;
	}
	buf_init(&json, EVENT_SERIAL_MAX_BYTES);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(stmt, 0) != 32 ||
		    (until >= 0 && sqlite3_column_int64(stmt, 1) > until))
			continue;
		buf_reset(&json);
		if (d != NULL && (store_row_json(stmt, 2, &json) == -1 ||
		    !same_d(json.data, (int)json.len, d)))
			continue;
		if (versions_push(vs, sqlite3_column_blob(stmt, 0),
		    sqlite3_column_int64(stmt, 1)) == -1)
			break;
	}
	buf_free(&json);
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		if (rc != SQLITE_ROW)
			log_warnx("store: rules versions: %s",
			    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

/* e's "d": the tag's value, "" without one, NULL if not addressable. */
static const char *
rev_d(const struct rev *e)
{
	const char	*d;

	if (event_kind_class(e->kind) != EVENT_CLASS_ADDRESSABLE)
		return NULL;
	return (d = event_tag_first(e->tags, "d")) == NULL ? "" : d;
}

/* The d of e's key as the floors keep it ("" for a replaceable kind). */
static const char *
key_d(const struct rev *e)
{
	const char	*d = rev_d(e);

	return d == NULL ? "" : d;
}

/*
 * Where e stands among the other stored versions of its key: 1 it is the
 * newest (the versions it replaces into olds), 0 a stored one replaces
 * it, -1 on error.
 */
int
rules_key_standing(struct store *st, const struct rev *e, struct versions *olds)
{
	struct versions	all = { 0 };
	size_t		i;
	int		ret = 1;

	if (key_versions(st, e->pubkey, e->kind, rev_d(e), -1, &all) == -1) {
		free(all.v);
		return -1;
	}
	for (i = 0; i < all.n && ret == 1; i++) {
		if (memcmp(all.v[i].id, e->id, 32) == 0)
			continue;
		if (!newer(e->created_at, e->id, all.v[i].created_at,
		    all.v[i].id))
			ret = 0;
		else if (versions_push(olds, all.v[i].id,
		    all.v[i].created_at) == -1)
			ret = -1;
	}
	free(all.v);
	return ret;
}

/* Remove the versions e replaced, each kept aside first when a root's. */
static int
remove_olds(struct store *st, const struct rev *e, const struct versions *o,
    int64_t now)
{
	size_t	i;

	for (i = 0; i < o->n; i++)
		if (rules_keep_aside(st, o->v[i].id, e->pubkey, e->kind,
		    o->v[i].created_at, NULL, 0) == -1 ||
		    rules_remove_withdraw(st, o->v[i].id, e->pubkey, e->kind,
		    o->v[i].created_at, STORE_WITHDRAWN_SUPERSEDED, now,
		    &rules_stats_of(st)->superseded) == -1)
			return -1;
	return 0;
}

/* ---- NIP-09 ------------------------------------------------------------- */

/* The p tags of the stored gift wrap id include who. 1, 0, -1. */
static int
wrap_names(struct store *st, const uint8_t id[32], const uint8_t who[32])
{
	struct buf	 b;
	struct event	 ev;
	struct rev	 w;
	size_t		 i;
	int		 rc;

	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	event_init(&ev);
	if ((rc = store_event_get(st, id, &b)) == 1) {
		rc = 0;
		if (event_parse(&ev, (const char *)b.data, b.len,
		    EVENT_MAX_BYTES_CEILING) == EVENT_OK) {
			rules_rev_init(&w, ev.id, ev.pubkey, ev.kind, ev.created_at,
			    ev.tags, NULL, 0);
			for (i = 0; i < w.nrcpt && rc == 0; i++)
				rc = memcmp(w.rcpt[i], who, 32) == 0;
		}
		event_free(&ev);
	}
	buf_free(&b);
	return rc;
}

/* The deletion del names id ("e"): remove it if del's author may. */
static int
delete_id(struct store *st, const struct rev *del, const uint8_t id[32],
    int64_t now)
{
	struct store_dedup	d;
	struct store_withdrawn	w;
	int			rc;

	if ((rc = store_dedup_probe(st, id, &d)) == -1)
		return -1;
	if (rc == 0) {
		/* Not seen: remembered, so it is refused when it comes. */
		memcpy(w.id, id, 32);
		memcpy(w.pubkey, del->pubkey, 32);
		w.created_at = w.kind = -1;
		w.why = STORE_WITHDRAWN_DELETED;
		return store_withdrawn_add(st, &w, now);
	}
	if (d.kind == 5 || d.kind == 62)
		return 0;		/* a deletion of a deletion does nothing */
	if (memcmp(d.pubkey, del->pubkey, 32) != 0 && (d.kind != 1059 ||
	    (rc = wrap_names(st, id, del->pubkey)) != 1))
		return rc == -1 ? -1 : 0;
	return rules_remove_withdraw(st, id, d.pubkey, d.kind, d.created_at,
	    STORE_WITHDRAWN_DELETED, now, &rules_stats_of(st)->deleted);
}

/* The deletion del names an address ("a") of its own author. */
static int
delete_addr(struct store *st, const struct rev *del, uint32_t kind,
    const char *d, size_t dlen, int64_t now)
{
	struct versions	 vs = { 0 };
	char		*dz;
	size_t		 i;
	int		 rc = 0;

	if (!rules_replaceable(kind))
		return 0;
	if ((dz = strndup(d, dlen)) == NULL) {
		log_warn("store: rules delete address");
		return -1;
	}
	static const uint8_t	 lowest[32];

	if (store_withdrawn_key_raise(st, del->pubkey, kind, dz,
	    del->created_at, lowest, STORE_WITHDRAWN_DELETED) == -1 ||
	    key_versions(st, del->pubkey, kind,
	    event_kind_class(kind) == EVENT_CLASS_ADDRESSABLE ? dz : NULL,
	    del->created_at, &vs) == -1)
		rc = -1;
	for (i = 0; rc == 0 && i < vs.n; i++)
		rc = rules_remove_withdraw(st, vs.v[i].id, del->pubkey, kind,
		    vs.v[i].created_at, STORE_WITHDRAWN_DELETED, now,
		    &rules_stats_of(st)->deleted);
	free(vs.v);
	free(dz);
	return rc;
}

/* A stored kind 5: what its "e" and "a" tags name goes. 0 or -1. */
static int
apply_deletion(struct store *st, const struct rev *del, int64_t now)
{
	const cJSON	*t, *k, *v;
	uint8_t		 id[32], pk[32];
	uint32_t	 kind;
	const char	*d;
	size_t		 dlen;
	int		 rc = 0;

	if (!cJSON_IsArray(del->tags))
		return 0;
	cJSON_ArrayForEach(t, del->tags) {
		if ((k = t->child) == NULL || !cJSON_IsString(k) ||
		    (v = k->next) == NULL || !cJSON_IsString(v))
			continue;
		if (strcmp(k->valuestring, "e") == 0 &&
		    strlen(v->valuestring) == 64 &&
		    hex_decode(v->valuestring, 64, id, 32) == 0)
			rc = delete_id(st, del, id, now);
		else if (strcmp(k->valuestring, "a") == 0 &&
		    event_addr_parse(v->valuestring, &kind, pk, &d, &dlen) ==
		    0 && memcmp(pk, del->pubkey, 32) == 0)
			rc = delete_addr(st, del, kind, d, dlen, now);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* ---- NIP-62 ------------------------------------------------------------- */

/* Whether a kind 62 names ALL_RELAYS or this box in a "relay" tag. */
static bool
vanish_meant_here(struct store *st, const cJSON *tags)
{
	const cJSON	*t, *k, *v;

	if (!cJSON_IsArray(tags))
		return false;
	cJSON_ArrayForEach(t, tags) {
		if ((k = t->child) == NULL || !cJSON_IsString(k) ||
		    strcmp(k->valuestring, "relay") != 0 ||
		    (v = k->next) == NULL || !cJSON_IsString(v))
			continue;
		if (strcmp(v->valuestring, "ALL_RELAYS") == 0 ||
		    store_relay_is_ours(st, v->valuestring))
			return true;
	}
	return false;
}

/*
 * A stored kind 62 meant here: held as the author's request, and what of
 * the author waits for the uplink leaves the inbox at once (the events
 * themselves go in steps, store_rules_vanish_step). 0 or -1.
 */
static int
apply_vanish(struct store *st, const struct rev *req)
{
	sqlite3_stmt	*stmt;
	char		 hex[65];
	int		 rc;

	if (!vanish_meant_here(st, req->tags))
		return 0;
	if ((rc = store_vanished_add(st, req->pubkey, req->created_at,
	    req->id)) != 1)
		return rc;
	hex_encode(req->pubkey, 32, hex, sizeof(hex));
	log_info("store: %s asked to vanish: its events up to %lld go", hex,
	    (long long)req->created_at);
	stmt = store_stmt(st, "DELETE FROM inbox WHERE event_id IN (SELECT id "
	    "FROM events WHERE pubkey = ?1 AND created_at <= ?2 AND id != ?3)");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, req->pubkey, 32, SQLITE_STATIC) !=
	    SQLITE_OK || sqlite3_bind_int64(stmt, 2, req->created_at) !=
	    SQLITE_OK || sqlite3_bind_blob(stmt, 3, req->id, 32,
	    SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "rules vanish inbox");
		return -1;
	}
	return store_step_done(st, stmt, "rules vanish inbox");
}

/* ---- the door ----------------------------------------------------------- */

/* Whether a request to vanish covers e (its own author's, or a wrap's p). */
static int
vanished_covers(struct store *st, const struct rev *e)
{
	uint8_t	vid[32];
	int64_t	until;
	size_t	i;
	int	rc;

	if ((rc = store_vanished_get(st, e->pubkey, &until, vid)) == -1)
		return -1;
	if (rc == 1 && e->created_at <= until && memcmp(e->id, vid, 32) != 0)
		return 1;
	for (i = 0; i < e->nrcpt; i++) {
		if ((rc = store_vanished_get(st, e->rcpt[i], &until,
		    NULL)) == -1)
			return -1;
		if (rc == 1 && e->created_at <= until)
			return 1;
	}
	return 0;
}

int
store_withdrawn_result(int why)
{
	switch (why) {
	case STORE_WITHDRAWN_SUPERSEDED:
		return STORE_INSERT_OLDER;
	case STORE_WITHDRAWN_EXPIRED:
		return STORE_INSERT_EXPIRED;
	case STORE_WITHDRAWN_VANISHED:
		return STORE_INSERT_VANISHED;
	default:
		return STORE_INSERT_DELETED;
	}
}

/*
 * A version of a replaceable key that a rule kept out is still its
 * author's newest word on the key: the floor rises to it and the stored
 * versions it is newer than go (superseded), so the outcome does not
 * depend on which came first. 0 or -1.
 */
static int
refused_version(struct store *st, const struct rev *e, int64_t now)
{
	struct versions	olds = { 0 };
	int		rc;

	if (!rules_replaceable(e->kind))
		return 0;
	if (store_withdrawn_key_raise(st, e->pubkey, e->kind, key_d(e),
	    e->created_at, e->id, STORE_WITHDRAWN_SUPERSEDED) == -1)
		return -1;
	if ((rc = rules_key_standing(st, e, &olds)) == 1)
		rc = remove_olds(st, e, &olds, now);
	free(olds.v);
	return rc == -1 ? -1 : 0;
}

/*
 * The rule that keeps e out, its tombstone written: an enum store_insert,
 * 0 when none does, -1 on error.
 */
static int
rules_refused(struct store *st, const struct rev *e, int64_t now)
{
	int		 rc, why = 0;

	if (event_kind_class(e->kind) == EVENT_CLASS_EPHEMERAL)
		return STORE_INSERT_EPHEMERAL;
	if (e->expires_at >= 0 && e->expires_at <= now)
		why = STORE_WITHDRAWN_EXPIRED;
	else if ((rc = vanished_covers(st, e)) != 0)
		why = rc == 1 ? STORE_WITHDRAWN_VANISHED : -1;
	else
		why = store_withdrawn_match(st, e->id, e->pubkey, e->kind,
		    (const uint8_t (*)[32])e->rcpt, e->nrcpt);
	if (why == 0 && rules_replaceable(e->kind))
		why = store_withdrawn_key_refuses(st, e->pubkey, e->kind,
		    key_d(e), e->created_at, e->id);
	if (why <= 0)
		return why;
	if (withdraw(st, e, why, now) == -1 || refused_version(st, e, now) ==
	    -1)
		return -1;
	return store_withdrawn_result(why);
}

/* The effects of a stored e on what was stored before. 0 or -1. */
int
rules_apply_effects(struct store *st, const struct rev *e, int64_t now)
{
	if (e->kind == 5)
		return apply_deletion(st, e, now);
	if (e->kind == 62)
		return apply_vanish(st, e);
	return 0;
}

static int
rules_insert(struct store *st, const struct store_event_row *row,
    bool enqueue)
{
	struct versions	 olds = { 0 };
	struct rev	 e;
	int64_t		 now = row->received_at;
	int		 rc;

	rules_rev_init(&e, row->id, row->pubkey, row->kind, row->created_at,
	    row->tags, row->json, row->json_len);
	if ((rc = rules_refused(st, &e, now)) != 0)
		return rc;
	if (rules_replaceable(e.kind) &&
	    (rc = rules_key_standing(st, &e, &olds)) != 1) {
		free(olds.v);
		if (rc == 0 && (withdraw(st, &e, STORE_WITHDRAWN_SUPERSEDED,
		    now) == -1 || rules_keep_aside(st, e.id, e.pubkey, e.kind,
		    e.created_at, e.json, e.len) == -1))
			return -1;
		return rc == 0 ? STORE_INSERT_OLDER : -1;
	}
	rc = store_event_row_insert(st, row, e.expires_at, enqueue);
	if (rc == STORE_INSERT_NEW && (remove_olds(st, &e, &olds, now) == -1 ||
	    rules_apply_effects(st, &e, now) == -1))
		rc = -1;
	if (rc == STORE_INSERT_NEW && olds.n > 0)
		rc = STORE_INSERT_REPLACED;
	free(olds.v);
	return rc;
}

int
store_event_insert(struct store *st, const struct store_event_row *row,
    bool enqueue)
{
	int	rc;

	if (store_tx_depth(st) > 0)
		return rules_insert(st, row, enqueue);
	/* The totals are written at a commit: give the row one. */
	if (store_begin(st) == -1)
		return -1;
	if ((rc = rules_insert(st, row, enqueue)) == -1) {
		store_rollback(st);
		return -1;
	}
	return store_commit(st) == -1 ? -1 : rc;
}

int
store_rules_servable(struct store *st, const uint8_t pubkey[32],
    int64_t created_at, uint32_t kind, const uint8_t id[32],
    int64_t expires_at, int64_t now)
{
	uint8_t	vid[32];
	int64_t	until;
	int	rc;

	(void)kind;
	if (expires_at >= 0 && expires_at <= now)
		return 0;
	if (store_vanished_pending(st) <= 0)
		return 1;
	if ((rc = store_vanished_get(st, pubkey, &until, vid)) != 1)
		return rc == -1 ? -1 : 1;
	return created_at > until || memcmp(id, vid, 32) == 0;
}
