/*
 * scan.c — resumable, merged NIP-01 queries over `events` (see scan.h).
 *
 * Owns each filter's plan, its index streams with their keyset cursors
 * and small row buffers, and the merge. It never keeps a statement
 * stepping across a step (a lone one-stream filter's statement runs while
 * its rows are handed out, direct_step; every other statement is reset
 * before rows are handed out), so no read transaction outlives a step and
 * the WAL can be checkpointed between steps; it never examines more rows in a
 * step than it was given (plus the one probe that found the budget
 * spent; an ids filter's primary-key probes, at most FILTER_MAX_IDS, are
 * made in its first step whatever the budget), and never buffers more
 * than STORE_SCAN_ROWS rows per filter (or one row per stream when a
 * filter has more streams than that).
 *
 * Hazard: the rowid of an evicted event may be given to a later one. A
 * tag index row is deleted with its event (store/events.c) and the join
 * also compares created_at, and the snapshot leaves out rows newer than
 * the scan, so a reused rowid never shows another event in a scan.
 */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/limits.h"
#include "core/log.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "store/events.h"
#include "store/rowjson.h"
#include "store/rules.h"
#include "store/scan.h"
#include "store/store.h"
#include "store/store_sql.h"
#include "store/tags.h"

#define STREAM_ANY_KIND		(-1)	/* an author's stream in time order */

enum plan {
	PLAN_NONE,	/* matches nothing */
	PLAN_IDS,
	PLAN_TAGS,
	PLAN_AUTHORS,
	PLAN_REPLACEABLE,	/* every kind replaceable: the partial index */
	PLAN_TIME,
};

/* One ordered index range of a filter, read in pages after its cursor. */
struct stream {
	const uint8_t		*author;	/* PLAN_AUTHORS */
	int32_t			 kind;		/* PLAN_AUTHORS: a replaceable
						 * kind, or STREAM_ANY_KIND */
	const char		*value;		/* PLAN_TAGS */
	int64_t			 cur_at;	/* the last row examined... */
	uint8_t			 cur_id[32];
	bool			 started;	/* ...once there is one */
	bool			 exhausted;	/* nothing is left after it */
	struct store_scan_row	*rows;		/* buffered matches */
	uint32_t		 head, count;
};

struct fscan {
	const struct filter	*f;
	enum plan		 plan;
	size_t			 tag;		/* PLAN_TAGS: f->tags[tag] */
	bool			 json_check;	/* "#x" checked on the JSON */
	bool			 direct;	/* one stream, handed out as read */
	bool			 ready;		/* streams made, buffers given */
	bool			 done;
	uint64_t		 left;		/* rows it may still give */
	struct stream		*streams;
	size_t			 nstreams, capstreams;
	struct store_scan_row	*pool;
	uint32_t		 per;		/* buffered rows per stream */
	size_t			*heap;		/* streams with rows, by head */
	size_t			 nheap;
	size_t			*pending;	/* streams to refill */
	size_t			 npending;
};

struct store_scan {
	struct store		*st;
	struct fscan		*fs;
	size_t			 n;
	struct store_scan_opts	 o;
	int64_t			 snapshot;
	uint64_t		 examined;
	size_t			 budget;	/* rows left in this step */
	int64_t			 now;		/* wall seconds of this step */
	uint64_t		 began_ms;	/* monotonic start of this step */
	int			 tags_ready;
	struct buf		 json;
};

/* ---- order ------------------------------------------------------------- */

/* Whether a comes before b: created_at descending, then id ascending. */
static bool
row_before(const struct store_scan_row *a, const struct store_scan_row *b)
{
	if (a->created_at != b->created_at)
		return a->created_at > b->created_at;
	return memcmp(a->id, b->id, 32) < 0;
}

static bool
row_same(const struct store_scan_row *a, const struct store_scan_row *b)
{
	return a->created_at == b->created_at && memcmp(a->id, b->id, 32) == 0;
}

static const struct store_scan_row *
stream_head(const struct stream *sm)
{
	return &sm->rows[sm->head];
}

/* ---- the heap of a filter's streams ----------------------------------- */

static bool
heap_less(const struct fscan *fs, size_t a, size_t b)
{
	return row_before(stream_head(&fs->streams[fs->heap[a]]),
	    stream_head(&fs->streams[fs->heap[b]]));
}

static void
heap_swap(struct fscan *fs, size_t a, size_t b)
{
	size_t	t = fs->heap[a];

	fs->heap[a] = fs->heap[b];
	fs->heap[b] = t;
}

static void
heap_up(struct fscan *fs, size_t i)
{
	while (i > 0 && heap_less(fs, i, (i - 1) / 2)) {
		heap_swap(fs, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void
heap_down(struct fscan *fs, size_t i)
{
	size_t	l, m;

	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < fs->nheap && heap_less(fs, l, m))
			m = l;
		if (l + 1 < fs->nheap && heap_less(fs, l + 1, m))
			m = l + 1;
		if (m == i)
			return;
		heap_swap(fs, i, m);
		i = m;
	}
}

static void
heap_push(struct fscan *fs, size_t stream)
{
	fs->heap[fs->nheap++] = stream;
	heap_up(fs, fs->nheap - 1);
}

/*
 * The top stream gave its head row: move on in its buffer, or take it off
 * the heap (to refill when not exhausted).
 */
static void
heap_pop_row(struct fscan *fs)
{
	size_t		 i = fs->heap[0];
	struct stream	*sm = &fs->streams[i];

	sm->head++;
	if (sm->head < sm->count) {
		heap_down(fs, 0);
		return;
	}
	sm->head = sm->count = 0;
	fs->heap[0] = fs->heap[--fs->nheap];
	heap_down(fs, 0);
	if (!sm->exhausted)
		fs->pending[fs->npending++] = i;
}

/* ---- rows ---------------------------------------------------------------- */

/*
 * The JSON of the row at rowid into out: 1, 0 when the row is gone
 * (evicted since it was seen), -1 on error.
 */
static int
load_json(struct store *st, int64_t rowid, struct buf *out)
{
	sqlite3_stmt	*stmt;
	int		 rc, ret = 0;

	stmt = store_stmt(st, "SELECT " STORE_ROW_JSON_COLS("") " FROM events "
	    "WHERE rowid = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, rowid) != SQLITE_OK) {
		store_bind_fail(st, stmt, "scan json");
		return -1;
	}
	buf_reset(out);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		ret = store_row_json(stmt, 0, out) == 0 ? 1 : -1;
	else if (rc != SQLITE_DONE) {
		log_warnx("store: scan json: %s", sqlite3_errmsg(store_db(st)));
		ret = -1;
	}
	store_stmt_done(stmt);
	return ret;
}

/* Whether the event in json passes f's "#x" conditions: 1 or 0. */
static int
tags_match(const struct buf *json, const struct filter *f)
{
	struct event	ev;
	int		rc;

	event_init(&ev);
	if (event_parse(&ev, (const char *)json->data, json->len,
	    EVENT_MAX_BYTES_CEILING) != EVENT_OK) {
		log_warnx_rl("store: scan: a stored event does not parse");
		return 0;
	}
	rc = filter_match_tags(f, &ev);
	event_free(&ev);
	return rc;
}

/* Whether the stored event at rowid passes f's "#x" conditions. */
static int
json_tags_match(struct store *st, struct buf *json, int64_t rowid,
    const struct filter *f)
{
	int	rc;

	if ((rc = load_json(st, rowid, json)) != 1)
		return rc;
	return tags_match(json, f);
}

/*
 * What a statement's current row says: rowid, created_at, id, pubkey,
 * kind, expires_at (-1: none).
 */
#define SCAN_COL_JSON	6	/* after them: the JSON, when asked for */

/* The JSON columns of stmt's current row into out, replacing it: 0 or -1. */
static int
cols_json(sqlite3_stmt *stmt, struct buf *out)
{
	buf_reset(out);
	return store_row_json(stmt, SCAN_COL_JSON, out);
}

struct cols {
	struct store_scan_row	 row;
	uint8_t			 pubkey[32];
	uint32_t		 kind;
	int64_t			 expires_at;
};

static int
cols_read(sqlite3_stmt *stmt, struct cols *c)
{
	if (sqlite3_column_bytes(stmt, 2) != 32 ||
	    sqlite3_column_bytes(stmt, 3) != 32)
		return -1;
	c->row.rowid = sqlite3_column_int64(stmt, 0);
	c->row.created_at = sqlite3_column_int64(stmt, 1);
	memcpy(c->row.id, sqlite3_column_blob(stmt, 2), 32);
	memcpy(c->pubkey, sqlite3_column_blob(stmt, 3), 32);
	c->kind = (uint32_t)sqlite3_column_int64(stmt, 4);
	c->expires_at = sqlite3_column_type(stmt, 5) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(stmt, 5);
	return 0;
}

/*
 * Whether the authors' rules let the row be served now (store/rules.h):
 * not expired, not of an author who vanished while the purge is on. 1,
 * 0, or -1.
 */
static int
cols_servable(struct store *st, const struct cols *c, int64_t now)
{
	return store_rules_servable(st, c->pubkey, c->row.created_at, c->kind,
	    c->row.id, c->expires_at, now);
}

/*
 * Whether a row read by fs's plan matches its filter: the conditions the
 * plan did not cover, from the columns, then "#x" from the JSON (left in
 * s->json): the JSON columns of stmt's row (SCAN_COL_JSON) when stmt is
 * not NULL, else read by rowid. 1, 0, or -1 on error.
 */
static int
row_accept(struct store_scan *s, const struct fscan *fs,
    const struct cols *c, sqlite3_stmt *stmt)
{
	const struct filter	*f = fs->f;

	int			 rc;

	if (c->row.rowid > s->snapshot ||
	    !filter_match_time(f, c->row.created_at) ||
	    !filter_match_id(f, c->row.id) ||
	    !filter_match_author(f, c->pubkey) ||
	    !filter_match_kind(f, c->kind))
		return 0;
	if ((rc = cols_servable(s->st, c, s->now)) != 1)
		return rc;
	if (!fs->json_check)
		return 1;
	if (stmt == NULL)
		return json_tags_match(s->st, &s->json, c->row.rowid, f);
	if (cols_json(stmt, &s->json) == -1)
		return -1;
	return tags_match(&s->json, f);
}

/* ---- plans --------------------------------------------------------------- */

/* Whether f can match anything at all. */
static bool
filter_empty(const struct filter *f)
{
	size_t	i;

	if (((f->has & FILTER_HAS_IDS) && f->nids == 0) ||
	    ((f->has & FILTER_HAS_AUTHORS) && f->nauthors == 0) ||
	    ((f->has & FILTER_HAS_KINDS) && f->nkinds == 0))
		return true;
	for (i = 0; i < f->ntags; i++)
		if (f->tags[i].nvalues == 0)
			return true;
	return (f->has & FILTER_HAS_SINCE) && (f->has & FILTER_HAS_UNTIL) &&
	    f->since > f->until;
}

/* The rows f may give: its limit, within the scan's caps. */
static uint64_t
filter_left(const struct store_scan_opts *o, const struct filter *f)
{
	uint64_t	l;

	if (o->no_limit)
		return UINT64_MAX;
	if (f->has & FILTER_HAS_LIMIT)
		l = f->limit;
	else
		l = o->default_limit != 0 ? o->default_limit : UINT64_MAX;
	if (o->max_limit != 0 && l > o->max_limit)
		l = o->max_limit;
	return l;
}

static int
streams_reserve(struct fscan *fs, size_t n)
{
	struct stream	*p;
	size_t		 cap;

	if (n <= fs->capstreams)
		return 0;
	cap = fs->capstreams == 0 ? 16 : fs->capstreams;
	while (cap < n)
		cap *= 2;
	if ((p = realloc(fs->streams, cap * sizeof(*p))) == NULL)
		return -1;
	fs->streams = p;
	fs->capstreams = cap;
	return 0;
}

static struct stream *
stream_add(struct fscan *fs)
{
	struct stream	*sm;

	if (streams_reserve(fs, fs->nstreams + 1) == -1)
		return NULL;
	sm = &fs->streams[fs->nstreams++];
	memset(sm, 0, sizeof(*sm));
	return sm;
}

static void
fscan_release(struct fscan *fs)
{
	if (fs->plan == PLAN_IDS && fs->nstreams > 0)
		free(fs->streams[0].rows);
	free(fs->streams);
	free(fs->pool);
	free(fs->heap);
	free(fs->pending);
	fs->streams = NULL;
	fs->pool = NULL;
	fs->heap = fs->pending = NULL;
	fs->nstreams = fs->capstreams = fs->nheap = fs->npending = 0;
}

/*
 * Streams PLAN_AUTHORS makes per author: one for each replaceable kind of
 * the filter (the partial index events_replaceable holds only those, so a
 * profile or follow list is one probe however long the author's history),
 * and one reading the author's events in time order for every other kind
 * (events_pubkey_time).
 */
static size_t
author_streams(const struct filter *f)
{
	size_t	i, n = 0;
	bool	other = !(f->has & FILTER_HAS_KINDS);

	for (i = 0; (f->has & FILTER_HAS_KINDS) && i < f->nkinds; i++) {
		if (store_kind_replaceable(f->kinds[i]))
			n++;
		else
			other = true;
	}
	return n + (other ? 1 : 0);
}

/*
 * True when f asks only for replaceable kinds (profiles, follow lists,
 * relay lists): the partial index events_replaceable holds a few rows per
 * author, where reading the store in time order for {"kinds":[0]} went
 * through a million events to find 5,000 profiles.
 */
static bool
kinds_replaceable(const struct filter *f)
{
	size_t	i;

	if (!(f->has & FILTER_HAS_KINDS) || f->nkinds == 0)
		return false;
	for (i = 0; i < f->nkinds; i++)
		if (!store_kind_replaceable(f->kinds[i]))
			return false;
	return true;
}

/* Read f in time order (the fallback every filter can take). */
static void
plan_time(struct fscan *fs)
{
	fs->plan = PLAN_TIME;
	fs->nstreams = 0;
	fs->json_check = fs->f->ntags > 0;
}

/*
 * Whether fs's plan reads one stream: a lone filter's rows can then be
 * handed out as they are read (direct_step).
 */
static bool
plan_one_stream(const struct fscan *fs)
{
	switch (fs->plan) {
	case PLAN_TIME:
	case PLAN_REPLACEABLE:
		return true;
	case PLAN_AUTHORS:
		return fs->f->nauthors * author_streams(fs->f) == 1;
	case PLAN_TAGS:
		return fs->f->tags[fs->tag].nvalues == 1;
	case PLAN_IDS:
	case PLAN_NONE:
		break;
	}
	return false;
}

static void
plan_choose(struct store_scan *s, struct fscan *fs)
{
	const struct filter	*f = fs->f;
	size_t			 i;

	fs->left = filter_left(&s->o, f);
	if (filter_empty(f) || fs->left == 0) {
		fs->plan = PLAN_NONE;
		fs->done = true;
		return;
	}
	if (f->has & FILTER_HAS_IDS) {
		fs->plan = PLAN_IDS;
		fs->json_check = f->ntags > 0;
	} else if (f->ntags > 0 && s->tags_ready == 1) {
		fs->plan = PLAN_TAGS;
		for (i = 1; i < f->ntags; i++)
			if (f->tags[i].nvalues < f->tags[fs->tag].nvalues)
				fs->tag = i;
		fs->json_check = f->ntags > 1;
	} else if ((f->has & FILTER_HAS_AUTHORS) && f->nauthors *
	    author_streams(f) <= STORE_SCAN_MAX_STREAMS) {
		fs->plan = PLAN_AUTHORS;
		fs->json_check = f->ntags > 0;
	} else if (kinds_replaceable(f)) {
		fs->plan = PLAN_REPLACEABLE;
		fs->json_check = f->ntags > 0;
	} else
		plan_time(fs);
	fs->direct = s->n == 1 && plan_one_stream(fs);
}

/* ---- setting a filter up (resumable: it spends the step's budget) ----- */

/* Spend one row of the budget; false when none was left. */
static bool
spend(struct store_scan *s)
{
	if (s->budget == 0)
		return false;
	s->budget--;
	s->examined++;
	return true;
}

/* PLAN_IDS: probe every id now (at most FILTER_MAX_IDS), sort the rows. */
static int
setup_ids(struct store_scan *s, struct fscan *fs)
{
	const struct filter	*f = fs->f;
	struct stream		*sm;
	sqlite3_stmt		*stmt;
	struct cols		 c;
	size_t			 i, j;
	int			 rc, ok;

	if ((sm = stream_add(fs)) == NULL ||
	    (sm->rows = calloc(f->nids, sizeof(*sm->rows))) == NULL)
		return -1;
	sm->exhausted = true;
	for (i = 0; i < f->nids; i++) {
		s->examined++;
		if (s->budget > 0)
			s->budget--;
		stmt = store_stmt(s->st, "SELECT rowid, created_at, id, pubkey, "
		    "kind, expires_at FROM events WHERE id = ?1");
		if (stmt == NULL)
			return -1;
		if (sqlite3_bind_blob(stmt, 1, f->ids[i], 32, SQLITE_STATIC) !=
		    SQLITE_OK) {
			store_bind_fail(s->st, stmt, "scan ids");
			return -1;
		}
		rc = sqlite3_step(stmt);
		ok = rc == SQLITE_ROW && cols_read(stmt, &c) == 0;
		store_stmt_done(stmt);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			log_warnx("store: scan ids: %s",
			    sqlite3_errmsg(store_db(s->st)));
			return -1;
		}
		if (!ok)
			continue;
		if ((rc = row_accept(s, fs, &c, NULL)) == -1)
			return -1;
		if (rc == 0)
			continue;
		/* Insertion in order: at most FILTER_MAX_IDS rows. */
		for (j = sm->count; j > 0 && row_before(&c.row,
		    &sm->rows[j - 1]); j--)
			sm->rows[j] = sm->rows[j - 1];
		sm->rows[j] = c.row;
		sm->count++;
	}
	return 0;
}

/* PLAN_AUTHORS: author_streams(f) streams for every author. 0 or -1. */
static int
setup_authors(struct fscan *fs)
{
	const struct filter	*f = fs->f;
	struct stream		*sm;
	size_t			 i, j;
	bool			 other;

	for (i = 0; i < f->nauthors; i++) {
		other = !(f->has & FILTER_HAS_KINDS);
		for (j = 0; (f->has & FILTER_HAS_KINDS) && j < f->nkinds; j++) {
			if (!store_kind_replaceable(f->kinds[j])) {
				other = true;
				continue;
			}
			if ((sm = stream_add(fs)) == NULL)
				return -1;
			sm->author = f->authors[i];
			sm->kind = (int32_t)f->kinds[j];
		}
		if (!other)
			continue;
		if ((sm = stream_add(fs)) == NULL)
			return -1;
		sm->author = f->authors[i];
		sm->kind = STREAM_ANY_KIND;
	}
	return 0;
}

static int
setup_tags(struct fscan *fs)
{
	const struct filter_tag	*t = &fs->f->tags[fs->tag];
	struct stream		*sm;
	size_t			 i;

	for (i = 0; i < t->nvalues; i++) {
		if ((sm = stream_add(fs)) == NULL)
			return -1;
		sm->value = t->values[i];
	}
	return 0;
}

/*
 * Give every stream its buffer (STORE_SCAN_ROWS shared by the scan's
 * nf filters) and put it up for its first refill.
 */
static int
setup_buffers(struct fscan *fs, size_t nf)
{
	size_t	i, per;

	if ((fs->plan == PLAN_TIME || fs->plan == PLAN_REPLACEABLE) &&
	    fs->nstreams == 0 && stream_add(fs) == NULL)
		return -1;
	if (fs->direct)
		return 0;	/* its rows go out as they are read */
	fs->heap = calloc(fs->nstreams ? fs->nstreams : 1, sizeof(size_t));
	fs->pending = calloc(fs->nstreams ? fs->nstreams : 1, sizeof(size_t));
	if (fs->heap == NULL || fs->pending == NULL)
		return -1;
	if (fs->plan == PLAN_IDS) {
		if (fs->streams[0].count > 0)
			heap_push(fs, 0);
		return 0;
	}
	per = STORE_SCAN_ROWS / ((fs->nstreams ? fs->nstreams : 1) * nf);
	if (per > SCAN_STREAM_ROWS_MAX)
		per = SCAN_STREAM_ROWS_MAX;
	if (per > fs->left)
		per = (size_t)fs->left;
	if (per == 0)
		per = 1;
	fs->per = (uint32_t)per;
	if ((fs->pool = calloc(fs->nstreams * per, sizeof(*fs->pool))) == NULL)
		return -1;
	for (i = 0; i < fs->nstreams; i++) {
		fs->streams[i].rows = &fs->pool[i * per];
		fs->pending[fs->npending++] = i;
	}
	return 0;
}

/* Make fs's streams. 0 when ready, 1 out of budget, -1 on error. */
static int
fscan_setup(struct store_scan *s, struct fscan *fs)
{
	int	rc = 0;

	switch (fs->plan) {
	case PLAN_IDS:
		rc = setup_ids(s, fs);
		break;
	case PLAN_AUTHORS:
		rc = setup_authors(fs);
		break;
	case PLAN_TAGS:
		rc = setup_tags(fs);
		break;
	case PLAN_REPLACEABLE:
	case PLAN_TIME:
	case PLAN_NONE:
		break;
	}
	if (rc != 0)
		return rc;
	if (setup_buffers(fs, s->n) == -1)
		return -1;
	fs->ready = true;
	return 0;
}

/* ---- refilling a stream --------------------------------------------------- */

/*
 * Each plan's page after a keyset cursor, its columns those of struct
 * cols and x after them: "" for a buffered page, the JSON for a direct
 * read.
 */
#define SCAN_SQL_TAGS(x)						\
	"SELECT e.rowid, e.created_at, e.id, e.pubkey, e.kind, "	\
	"e.expires_at" x " FROM event_tags t JOIN events e ON e.rowid = "	\
	"t.ev AND e.created_at = t.created_at WHERE t.name = ?1 AND "	\
	"t.value = ?2 AND t.created_at <= ?3 AND t.created_at >= ?4 AND "	\
	"(t.created_at < ?3 OR e.id > ?5) ORDER BY t.created_at DESC, "	\
	"e.id ASC LIMIT ?6"
/* Every replaceable row, sorted: a few per author. */
#define SCAN_SQL_REPLACEABLE(x)						\
	"SELECT rowid, created_at, id, pubkey, kind, expires_at" x " FROM "	\
	"events INDEXED BY events_replaceable WHERE "			\
	EVENTS_SQL_REPLACEABLE("kind") " AND created_at <= ?3 AND "	\
	"created_at >= ?4 AND (created_at < ?3 OR id > ?5) ORDER BY "	\
	"created_at DESC, id ASC LIMIT ?6"
#define SCAN_X_JSON	", " STORE_ROW_JSON_COLS("")

static const char *const refill_sql[] = {
	[PLAN_AUTHORS] = SCAN_SQL_AUTHOR,
	[PLAN_TAGS] = SCAN_SQL_TAGS(""),
	[PLAN_REPLACEABLE] = SCAN_SQL_REPLACEABLE(""),
	[PLAN_TIME] = SCAN_SQL_TIME,
};

static const char *const direct_sql[] = {
	[PLAN_AUTHORS] = SCAN_SQL_AUTHOR_X(SCAN_X_JSON),
	[PLAN_TAGS] = SCAN_SQL_TAGS(", " STORE_ROW_JSON_COLS("e.")),
	[PLAN_REPLACEABLE] = SCAN_SQL_REPLACEABLE(SCAN_X_JSON),
	[PLAN_TIME] = SCAN_SQL_TIME_X(SCAN_X_JSON),
};

/* The statement of sm's pages, with the JSON columns when json. */
static sqlite3_stmt *
stream_stmt(struct store_scan *s, const struct fscan *fs,
    const struct stream *sm, bool json)
{
	if (fs->plan == PLAN_AUTHORS && sm->kind != STREAM_ANY_KIND)
		return store_stmt(s->st, json ? SCAN_SQL_AUTHOR_REPLACEABLE_X(
		    SCAN_X_JSON) : SCAN_SQL_AUTHOR_REPLACEABLE);
	return store_stmt(s->st, json ? direct_sql[fs->plan] :
	    refill_sql[fs->plan]);
}

static int
refill_bind(struct fscan *fs, struct stream *sm, sqlite3_stmt *stmt,
    int64_t limit)
{
	const struct filter	*f = fs->f;
	static const uint8_t	 none[1];
	int			 rc = SQLITE_OK;

	if (fs->plan == PLAN_AUTHORS) {
		rc = sqlite3_bind_blob(stmt, 1, sm->author, 32, SQLITE_STATIC);
		if (rc == SQLITE_OK && sm->kind != STREAM_ANY_KIND)
			rc = sqlite3_bind_int(stmt, 2, sm->kind);
	} else if (fs->plan == PLAN_TAGS) {
		rc = sqlite3_bind_int(stmt, 1, (unsigned char)
		    f->tags[fs->tag].letter);
		if (rc == SQLITE_OK)
			rc = store_tag_value_bind(stmt, 2, sm->value,
			    strlen(sm->value));
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 3, sm->started ? sm->cur_at :
		    (f->has & FILTER_HAS_UNTIL) ? f->until : INT64_MAX);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 4, (f->has & FILTER_HAS_SINCE) ?
		    f->since : INT64_MIN);
	if (rc == SQLITE_OK)
		rc = sm->started ? sqlite3_bind_blob(stmt, 5, sm->cur_id, 32,
		    SQLITE_STATIC) : sqlite3_bind_blob(stmt, 5, none, 0,
		    SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 6, limit);
	return rc == SQLITE_OK ? 0 : -1;
}

/*
 * Take stmt's current row into c and move sm's cursor past it: whether it
 * is one fs gives (1, 0, or -1). stmt has the JSON columns when json (a
 * "#x" check then reads them instead of the row again).
 */
static int
stream_row(struct store_scan *s, struct fscan *fs, struct stream *sm,
    sqlite3_stmt *stmt, bool json, struct cols *c)
{
	if (cols_read(stmt, c) == -1)
		return 0;
	sm->cur_at = c->row.created_at;
	memcpy(sm->cur_id, c->row.id, 32);
	sm->started = true;
	/* A replaceable kind of the filter has a stream of its own. */
	if (fs->plan == PLAN_AUTHORS && sm->kind == STREAM_ANY_KIND &&
	    (fs->f->has & FILTER_HAS_KINDS) && store_kind_replaceable(c->kind))
		return 0;
	return row_accept(s, fs, c, json ? stmt : NULL);
}

/* Count got rows read against the step; -1 with the error logged. */
static int
stream_read_end(struct store_scan *s, sqlite3_stmt *stmt, int64_t got,
    int rc, int acc)
{
	store_stmt_done(stmt);
	s->examined += (uint64_t)got;
	s->budget -= (size_t)got < s->budget ? (size_t)got : s->budget;
	if (acc == -1 || (rc != SQLITE_DONE && rc != SQLITE_ROW)) {
		if (acc != -1)
			log_warnx("store: scan: %s", sqlite3_errmsg(store_db(s->st)));
		return -1;
	}
	return 0;
}

/*
 * Read the next page of stream i after its cursor: at most its buffer's
 * rows and the step's budget. Every row read moves the cursor; the ones
 * that match are buffered. 0 or -1.
 */
static int
refill(struct store_scan *s, struct fscan *fs, struct stream *sm)
{
	sqlite3_stmt	*stmt;
	struct cols	 c;
	int64_t		 limit = fs->per, got = 0;
	int		 rc, acc = 1;

	if (limit > (int64_t)s->budget)
		limit = s->budget > 0 ? (int64_t)s->budget : 1;
	if ((stmt = stream_stmt(s, fs, sm, false)) == NULL)
		return -1;
	if (refill_bind(fs, sm, stmt, limit) == -1) {
		store_bind_fail(s->st, stmt, "scan");
		return -1;
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		got++;
		if ((acc = stream_row(s, fs, sm, stmt, false, &c)) == -1)
			break;
		if (acc == 1)
			sm->rows[sm->count++] = c.row;
	}
	if (stream_read_end(s, stmt, got, rc, acc) == -1)
		return -1;
	if (got < limit)
		sm->exhausted = true;
	return 0;
}

/*
 * Whether the step has run STORE_SCAN_STEP_MS, looked at every
 * SCAN_CLOCK_ROWS rows examined.
 */
static bool
step_late(const struct store_scan *s, int64_t rows)
{
	return rows % SCAN_CLOCK_ROWS == 0 &&
	    clock_mono_ms() - s->began_ms >= STORE_SCAN_STEP_MS;
}

/*
 * A direct filter's step: its one stream read and handed out row by row
 * from one statement, each event's JSON from the row the index walk
 * reached, where the buffered path keeps rows and looks each one up again
 * by rowid to hand it out (a second b-tree descent per event). The
 * statement is reset before the step returns, so nothing outlives the
 * step's read transaction. 0 complete, 1 more, -1.
 */
static int
direct_step(struct store_scan *s, struct fscan *fs, store_scan_cb cb,
    void *arg)
{
	struct stream	*sm = &fs->streams[0];
	bool		 json = s->o.with_json || fs->json_check;
	sqlite3_stmt	*stmt;
	struct cols	 c;
	int64_t		 limit = (int64_t)s->budget, got = 0;
	int		 rc = SQLITE_ROW, acc = 0, stop = 0;

	if (limit == 0)
		return 1;
	if ((stmt = stream_stmt(s, fs, sm, json)) == NULL)
		return -1;
	if (refill_bind(fs, sm, stmt, limit) == -1) {
		store_bind_fail(s->st, stmt, "scan");
		return -1;
	}
	while (!stop && fs->left > 0 && !(got > 0 && step_late(s, got)) &&
	    (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		got++;
		if ((acc = stream_row(s, fs, sm, stmt, json, &c)) == -1)
			break;
		if (acc == 0)
			continue;
		if (s->o.with_json && !fs->json_check &&
		    (acc = cols_json(stmt, &s->json)) == -1)
			break;
		fs->left--;
		stop = cb(arg, &c.row, s->o.with_json ? (const char *)
		    s->json.data : NULL, s->o.with_json ? s->json.len : 0);
	}
	if (stream_read_end(s, stmt, got, rc, acc) == -1)
		return -1;
	/* LIMIT ends the statement too: only fewer rows say it is all. */
	if ((rc == SQLITE_DONE && got < limit) || fs->left == 0) {
		fs->done = true;
		fscan_release(fs);
		return 0;
	}
	return 1;
}

/*
 * Refill fs's pending streams until each has a row or is exhausted. 0
 * when its heap is complete, 1 when the budget ran out first, -1.
 */
static int
fscan_prime(struct store_scan *s, struct fscan *fs)
{
	struct stream	*sm;
	size_t		 i;
	int		 rc;

	if (!fs->ready && (rc = fscan_setup(s, fs)) != 0)
		return rc;
	while (fs->npending > 0) {
		if (s->budget == 0)
			return 1;
		i = fs->pending[fs->npending - 1];
		sm = &fs->streams[i];
		if (refill(s, fs, sm) == -1)
			return -1;
		if (sm->count == 0 && !sm->exhausted)
			continue;	/* all it read was refused: again */
		fs->npending--;
		if (sm->count > 0)
			heap_push(fs, i);
	}
	return 0;
}

/* ---- the merge --------------------------------------------------------- */

/* Prime every filter still giving rows. 0 ready, 1 out of budget, -1. */
static int
prime_all(struct store_scan *s)
{
	struct fscan	*fs;
	size_t		 i;
	int		 rc;

	for (i = 0; i < s->n; i++) {
		fs = &s->fs[i];
		if (fs->done)
			continue;
		if ((rc = fscan_prime(s, fs)) != 0)
			return rc;
		if (fs->nheap == 0) {
			fs->done = true;
			fscan_release(fs);
		}
	}
	return 0;
}

/* The first row of all filters' next rows, or NULL when all are done. */
static const struct store_scan_row *
best_row(const struct store_scan *s)
{
	const struct store_scan_row	*best = NULL, *r;
	const struct fscan		*fs;
	size_t				 i;

	for (i = 0; i < s->n; i++) {
		fs = &s->fs[i];
		if (fs->done || fs->nheap == 0)
			continue;
		r = stream_head(&fs->streams[fs->heap[0]]);
		if (best == NULL || row_before(r, best))
			best = r;
	}
	return best;
}

/*
 * Every filter whose next row is row gives it up (each of its streams
 * holding it: a tag filter may find one event under two values); given
 * says it counts against the filters' limits.
 */
static void
advance_all(struct store_scan *s, const struct store_scan_row *row,
    bool given)
{
	struct fscan	*fs;
	size_t		 i;
	bool		 had;

	for (i = 0; i < s->n; i++) {
		fs = &s->fs[i];
		had = false;
		while (!fs->done && fs->nheap > 0 && row_same(stream_head(
		    &fs->streams[fs->heap[0]]), row)) {
			heap_pop_row(fs);
			had = true;
		}
		if (had && given && --fs->left == 0) {
			fs->done = true;
			fscan_release(fs);
		}
	}
}

/* One step's merge and callbacks (store_scan_step reads it in one section). */
static int
scan_step(struct store_scan *s, size_t max_rows, store_scan_cb cb,
    void *arg)
{
	const struct store_scan_row	*best;
	struct store_scan_row		 row;
	int64_t				 handed = 0;
	int				 rc, stop = 0, found = 1;

	s->budget = max_rows;
	if (s->n == 1 && s->fs[0].direct && !s->fs[0].done) {
		if (!s->fs[0].ready && fscan_setup(s, &s->fs[0]) == -1)
			return -1;
		return direct_step(s, &s->fs[0], cb, arg);
	}
	for (;;) {
		if ((rc = prime_all(s)) != 0)
			return rc;
		if ((best = best_row(s)) == NULL)
			return 0;
		row = *best;
		if (s->o.with_json && (found = load_json(s->st, row.rowid,
		    &s->json)) == -1)
			return -1;
		(void)spend(s);
		if (found)
			stop = cb(arg, &row, s->o.with_json ? (const char *)
			    s->json.data : NULL, s->o.with_json ? s->json.len : 0);
		advance_all(s, &row, found == 1);
		if (stop || s->budget == 0 || step_late(s, ++handed))
			return 1;
	}
}

/*
 * A step's page reads and its events' JSON share one read transaction: a
 * statement run outside one opens and ends its own (a WAL lock and a look
 * at the WAL index each), which for the JSON of every event cost more than
 * the read itself (tests/bench/relay_serve.sh). The transaction ends with
 * the step, and a step is bounded by the rows its caller gives it and by
 * STORE_SCAN_STEP_MS: while it is open no checkpoint can copy the WAL
 * past its snapshot nor restart the WAL (a `cacheboxctl export` runs in
 * another process, beside the daemon's checkpoints), and on a cold SD
 * card the rows alone, each a random read, would not bound the time.
 */
int
store_scan_step(struct store_scan *s, size_t max_rows, store_scan_cb cb,
    void *arg)
{
	bool	opened = store_read_begin(s->st);
	int	rc;

	s->now = clock_wall_s();
	s->began_ms = clock_mono_ms();
	rc = scan_step(s, max_rows, cb, arg);
	store_read_end(s->st, opened);
	return rc;
}

/* ---- life ---------------------------------------------------------------- */

int
store_events_last_rowid(struct store *st, int64_t *rowid)
{
	int64_t	dummy;

	return store_row_two(st, "SELECT coalesce(max(rowid), 0), 0 FROM events",
	    rowid, &dummy, "last rowid");
}

struct store_scan *
store_scan_new(struct store *st, const struct filter *filters, size_t n,
    const struct store_scan_opts *o)
{
	struct store_scan	*s;
	size_t			 i;

	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->fs = calloc(n ? n : 1, sizeof(*s->fs))) == NULL) {
		free(s);
		return NULL;
	}
	s->st = st;
	s->n = n;
	s->o = *o;
	buf_init(&s->json, EVENT_SERIAL_MAX_BYTES);
	s->snapshot = o->snapshot;
	if ((s->snapshot == 0 && store_events_last_rowid(st, &s->snapshot) ==
	    -1) || (s->tags_ready = store_tags_ready(st)) == -1) {
		store_scan_free(s);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		s->fs[i].f = &filters[i];
		plan_choose(s, &s->fs[i]);
	}
	return s;
}

void
store_scan_free(struct store_scan *s)
{
	size_t	i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		fscan_release(&s->fs[i]);
	free(s->fs);
	buf_free(&s->json);
	free(s);
}

int64_t
store_scan_snapshot(const struct store_scan *s)
{
	return s->snapshot;
}

uint64_t
store_scan_examined(const struct store_scan *s)
{
	return s->examined;
}

/* ---- after a rowid: the live path's catch-up ------------------------------ */

/* Whether the row c matches any filter (the JSON read when "#x" needs it). */
static int
after_match(struct store *st, struct buf *json, const struct filter *f,
    size_t n, const struct cols *c)
{
	size_t	i;
	int	rc;

	if ((rc = cols_servable(st, c, clock_wall_s())) != 1)
		return rc;
	for (i = 0; i < n; i++) {
		if (filter_empty(&f[i]) || !filter_match_time(&f[i],
		    c->row.created_at) || !filter_match_id(&f[i], c->row.id) ||
		    !filter_match_author(&f[i], c->pubkey) ||
		    !filter_match_kind(&f[i], c->kind))
			continue;
		if (f[i].ntags == 0)
			return 1;
		if ((rc = json_tags_match(st, json, c->row.rowid, &f[i])) != 0)
			return rc;
	}
	return 0;
}

/*
 * Read the rows after *after into rows[0..*nrows); a row whose columns
 * are malformed has bad set. 0 or -1.
 */
static int
after_read(struct store *st, int64_t after, size_t max, struct cols *rows,
    bool *bad, size_t *nrows)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	stmt = store_stmt(st, "SELECT rowid, created_at, id, pubkey, kind, "
	    "expires_at FROM events WHERE rowid > ?1 ORDER BY rowid LIMIT ?2");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, after) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, (int64_t)max) != SQLITE_OK) {
		store_bind_fail(st, stmt, "scan after");
		return -1;
	}
	*nrows = 0;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		bad[*nrows] = cols_read(stmt, &rows[*nrows]) == -1;
		rows[*nrows].row.rowid = sqlite3_column_int64(stmt, 0);
		(*nrows)++;
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: scan after: %s", sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

int
store_scan_after(struct store *st, const struct filter *filters, size_t n,
    int64_t *after, size_t max_rows, bool with_json, store_scan_cb cb,
    void *arg)
{
	struct cols	*rows;
	bool		*bad;
	struct buf	 json;
	size_t		 nrows = 0, i;
	int		 rc = 0, m;
	bool		 opened;

	if (max_rows == 0)
		return 1;
	opened = store_read_begin(st);
	rows = calloc(max_rows, sizeof(*rows));
	bad = calloc(max_rows, sizeof(*bad));
	buf_init(&json, EVENT_SERIAL_MAX_BYTES);
	if (rows == NULL || bad == NULL ||
	    after_read(st, *after, max_rows, rows, bad, &nrows) == -1)
		rc = -1;
	for (i = 0; rc == 0 && i < nrows; i++) {
		*after = rows[i].row.rowid;
		if (bad[i])
			continue;
		if ((m = after_match(st, &json, filters, n, &rows[i])) == -1)
			rc = -1;
		else if (m == 1 && with_json && (m = load_json(st,
		    rows[i].row.rowid, &json)) == -1)
			rc = -1;
		else if (m == 1 && cb(arg, &rows[i].row, with_json ?
		    (const char *)json.data : NULL, with_json ? json.len : 0)) {
			i++;
			break;
		}
	}
	store_read_end(st, opened);
	free(rows);
	free(bad);
	buf_free(&json);
	if (rc == -1)
		return -1;
	return nrows == max_rows || i < nrows ? 1 : 0;
}
