/*
 * test_store_events.c — the events family on a real store in a temporary
 * directory: insert and dedup, the maintained totals (rows and JSON bytes,
 * also after deletes), inbox rows only when asked, the newest replaceable
 * event with NIP-01's tie rule, the plans of the queries an index exists
 * for, local queries, the per-relay newest live
 * mark, and retention: oldest evictable first, never a queued event, never
 * kinds 0, 3 or 10002, bounded steps that resume and wrap.
 */
#define _XOPEN_SOURCE 700	/* nftw */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/embed.h"
#include "core/hex.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "nostr/key.h"
#include "store/events.h"
#include "store/rowjson.h"
#include "store/rules.h"
#include "store/store.h"
#include "store/store_sql.h"

#include "store_fixture.h"

/* A row with id n (first byte), author a, the given kind/time and JSON. */
static int
put(struct fixture *fx, uint8_t n, uint8_t a, uint32_t kind, int64_t at,
    const char *json, bool enqueue)
{
	uint8_t			id[32], pk[32];
	struct store_event_row	row = { 0 };

	memset(id, 0, sizeof(id));
	id[0] = n;
	memset(pk, a, sizeof(pk));
	row.id = id;
	row.pubkey = pk;
	row.kind = kind;
	row.created_at = at;
	row.json = json;
	row.json_len = strlen(json);
	row.source = "backfill";
	row.first_relay = "wss://r.example";
	row.received_at = 1700000000;
	return store_event_insert(fx->st, &row, enqueue);
}

static bool
has(struct fixture *fx, uint8_t n)
{
	uint8_t	id[32];
	int	rc;

	memset(id, 0, sizeof(id));
	id[0] = n;
	rc = store_event_exists(fx->st, id);
	assert_true(rc == 0 || rc == 1);
	return rc == 1;
}

static void
assert_totals(struct fixture *fx, int64_t count, int64_t bytes)
{
	int64_t	c, b;

	assert_int_equal(store_events_totals(fx->st, &c, &b), 0);
	assert_int_equal(c, count);
	assert_int_equal(b, bytes);
}

static void
test_insert_dedup_totals(void **state)
{
	struct fixture	*fx = *state;
	uint8_t		 id[32] = { 1 };
	struct buf	 b;

	assert_totals(fx, 0, 0);
	assert_int_equal(put(fx, 1, 0xaa, 1, 100, "{\"a\":\"caf\xc3\xa9\"}",
	    false), 1);
	assert_int_equal(put(fx, 1, 0xaa, 1, 100, "{\"other\":1}", false), 0);
	assert_int_equal(put(fx, 2, 0xaa, 1, 101, "{}", true), 1);
	/* 13 bytes (the é is two), not 12 characters. */
	assert_totals(fx, 2, 13 + 2);
	assert_true(has(fx, 1));
	assert_false(has(fx, 3));
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM inbox"), 1);
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM inbox WHERE "
	    "substr(event_id, 1, 1) = x'02' AND state = 'pending'"), 1);

	buf_init(&b, 1024);
	assert_int_equal(store_event_get(fx->st, id, &b), 1);
	assert_string_equal(buf_cstr(&b), "{\"a\":\"caf\xc3\xa9\"}");
	id[0] = 9;
	buf_reset(&b);
	assert_int_equal(store_event_get(fx->st, id, &b), 0);
	assert_int_equal(b.len, 0);
	buf_free(&b);

	assert_int_equal(store_exec(fx->st, "DELETE FROM inbox"), 0);
	assert_int_equal(store_exec(fx->st, "DELETE FROM events WHERE "
	    "kind = 1 AND created_at = 100"), 0);
	assert_totals(fx, 1, 2);
}

static void
test_totals_follow_transactions(void **state)
{
	struct fixture	*fx = *state;

	/* Inside a transaction the totals include what it added. */
	assert_int_equal(store_begin(fx->st), 0);
	assert_int_equal(put(fx, 1, 0xaa, 1, 100, "{\"n\":1}", false), 1);
	assert_totals(fx, 1, 7);
	/* A savepoint that rolls back takes its rows and its share. */
	assert_int_equal(store_begin(fx->st), 0);
	assert_int_equal(put(fx, 2, 0xaa, 1, 101, "{\"n\":22}", false), 1);
	assert_totals(fx, 2, 15);
	assert_int_equal(store_rollback(fx->st), 0);
	assert_totals(fx, 1, 7);
	/* One that is released hands its share to the level around it. */
	assert_int_equal(store_begin(fx->st), 0);
	assert_int_equal(put(fx, 3, 0xaa, 1, 102, "{\"n\":333}", false), 1);
	assert_int_equal(store_commit(fx->st), 0);
	assert_int_equal(store_commit(fx->st), 0);
	assert_totals(fx, 2, 16);
	assert_int_equal(fixture_int(fx, "SELECT count FROM event_totals"), 2);
	assert_int_equal(fixture_int(fx, "SELECT bytes FROM event_totals"), 16);
	/* A rolled-back transaction leaves the row as it was. */
	assert_int_equal(store_begin(fx->st), 0);
	assert_int_equal(put(fx, 4, 0xaa, 1, 103, "{}", false), 1);
	assert_int_equal(store_rollback(fx->st), 0);
	assert_totals(fx, 2, 16);
	assert_false(has(fx, 4));
	/* Outside a transaction an insert commits its own. */
	assert_int_equal(put(fx, 5, 0xaa, 1, 104, "{}", false), 1);
	assert_int_equal(fixture_int(fx, "SELECT count FROM event_totals"), 3);
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM events"), 3);
	assert_int_equal(fixture_int(fx, "SELECT sum(" STORE_ROW_JSON_BYTES("")
	    ") FROM events"), 18);
	assert_int_equal(store_totals_add(fx->st, 1, 1), -1);
}

/* A signed kind 3 of key at time at with content c; its id out. */
static void
put_signed(struct fixture *fx, const struct nostr_key *key, uint32_t kind,
    int64_t at, const char *c, uint8_t id[32])
{
	struct event		ev;
	struct buf		b;
	struct store_event_row	row = { 0 };
	int			rc;

	assert_int_equal(event_create(&ev, key, kind, at, NULL, c), EVENT_OK);
	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(event_to_json(&ev, &b), 0);
	row.id = ev.id;
	row.pubkey = ev.pubkey;
	row.kind = kind;
	row.created_at = at;
	row.json = buf_cstr(&b);
	row.json_len = b.len;
	row.source = "live";
	row.first_relay = NULL;
	row.received_at = at;
	rc = store_event_insert(fx->st, &row, false);
	assert_true(rc == STORE_INSERT_NEW || rc == STORE_INSERT_REPLACED);
	memcpy(id, ev.id, 32);
	buf_free(&b);
	event_free(&ev);
}

static void
test_newest_replaceable(void **state)
{
	struct fixture		*fx = *state;
	struct nostr_key	 key;
	uint8_t			 sk[32], a[32], b[32], c[32], d[32];
	const uint8_t		*low;
	struct event		 ev;
	struct buf		 out;
	int64_t			 at = 0;

	memset(sk, 0x33, sizeof(sk));
	assert_int_equal(key_from_secret(&key, sk), 0);
	assert_int_equal(store_event_newest(fx->st, key.pubkey, 3, NULL, &at),
	    0);
	put_signed(fx, &key, 3, 1000, "old", a);
	put_signed(fx, &key, 3, 2000, "tie one", b);
	put_signed(fx, &key, 3, 2000, "tie two", c);
	put_signed(fx, &key, 10002, 3000, "relays", d);
	low = memcmp(b, c, 32) < 0 ? b : c;

	buf_init(&out, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(store_event_newest(fx->st, key.pubkey, 3, &out, &at),
	    1);
	assert_int_equal(at, 2000);
	event_init(&ev);
	assert_int_equal(store_event_newest_parsed(fx->st, key.pubkey, 3, &ev),
	    1);
	assert_memory_equal(ev.id, low, 32);
	assert_int_equal(ev.created_at, 2000);
	event_free(&ev);
	assert_int_equal(store_event_newest_parsed(fx->st, key.pubkey, 10002,
	    &ev), 1);
	assert_memory_equal(ev.id, d, 32);
	event_free(&ev);
	assert_int_equal(store_event_newest_parsed(fx->st, key.pubkey, 0, &ev),
	    0);
	buf_free(&out);
}

/*
 * The queries an index exists for: the newest replaceable event and a
 * relay query's replaceable kind of an author are found in the partial
 * index (its condition written word for word), and an author's items in
 * (created_at, id) order, either way, come from a range of
 * events_pubkey_time, sorted only within a second (the right part of the
 * ORDER BY), never as a whole; a scan by time reads events_time_id in
 * NIP-01's order and sorts nothing.
 */
static void
test_query_plans(void **state)
{
	struct fixture	*fx = *state;
	char		 plan[512];

	fixture_plan(fx, EVENTS_SQL_NEWEST_REPLACEABLE, plan, sizeof(plan));
	if (strstr(plan, "events_replaceable") == NULL)
		fail_msg("newest replaceable: %s", plan);
	fixture_plan(fx, EVENTS_SQL_AUTHOR_ITEMS, plan, sizeof(plan));
	if (strstr(plan, "events_pubkey_time ") == NULL ||
	    strstr(plan, "TEMP B-TREE FOR ORDER BY") != NULL)
		fail_msg("author items: %s", plan);
	fixture_plan(fx, SCAN_SQL_AUTHOR_REPLACEABLE, plan, sizeof(plan));
	if (strstr(plan, "events_replaceable") == NULL)
		fail_msg("scan, a replaceable kind of an author: %s", plan);
	fixture_plan(fx, SCAN_SQL_AUTHOR, plan, sizeof(plan));
	if (strstr(plan, "events_pubkey_time ") == NULL ||
	    strstr(plan, "TEMP B-TREE FOR ORDER BY") != NULL)
		fail_msg("scan, an author: %s", plan);
	fixture_plan(fx, SCAN_SQL_TIME, plan, sizeof(plan));
	if (strstr(plan, "events_time_id ") == NULL ||
	    strstr(plan, "TEMP B-TREE") != NULL)
		fail_msg("scan by time: %s", plan);
	fixture_plan(fx, SCAN_SQL_TIME_X(", " STORE_ROW_JSON_COLS("")), plan,
	    sizeof(plan));
	if (strstr(plan, "events_time_id ") == NULL ||
	    strstr(plan, "TEMP B-TREE") != NULL)
		fail_msg("scan by time with the JSON: %s", plan);
	assert_true(store_kind_replaceable(0) && store_kind_replaceable(3) &&
	    store_kind_replaceable(10002) && store_kind_replaceable(30023));
	assert_false(store_kind_replaceable(1) || store_kind_replaceable(7) ||
	    store_kind_replaceable(20000) || store_kind_replaceable(40000));
}

struct collect {
	char	seen[16][64];
	size_t	n;
};

static int
collect_cb(const char *json, size_t len, void *arg)
{
	struct collect	*c = arg;

	assert_true(len < 64 && c->n < 16);
	memcpy(c->seen[c->n], json, len);
	c->seen[c->n++][len] = '\0';
	return 0;
}

static void
run_query(struct fixture *fx, const char *ftext, size_t max,
    struct collect *c, int64_t want)
{
	struct filter	f;
	char		err[128];

	memset(c, 0, sizeof(*c));
	assert_int_equal(filter_parse_text(&f, ftext, strlen(ftext), err,
	    sizeof(err)), 0);
	assert_int_equal(store_events_query(fx->st, &f, max, collect_cb, c),
	    want);
	assert_int_equal(c->n, (size_t)want);
	filter_free(&f);
}

static void
test_query(void **state)
{
	struct fixture	*fx = *state;
	struct collect	 c;
	char		 f[256], hex[65];
	uint8_t		 pk[32];

	assert_int_equal(put(fx, 1, 0xaa, 1, 100, "{\"n\":1}", false), 1);
	assert_int_equal(put(fx, 2, 0xaa, 7, 200, "{\"n\":2}", false), 1);
	assert_int_equal(put(fx, 3, 0xbb, 1, 300, "{\"n\":3}", false), 1);
	assert_int_equal(put(fx, 4, 0xaa, 1, 400, "{\"n\":4}", false), 1);

	memset(pk, 0xaa, sizeof(pk));
	hex_encode(pk, 32, hex, sizeof(hex));
	snprintf(f, sizeof(f), "{\"authors\":[\"%s\"],\"kinds\":[1]}", hex);
	run_query(fx, f, 10, &c, 2);
	assert_string_equal(c.seen[0], "{\"n\":4}");	/* newest first */
	assert_string_equal(c.seen[1], "{\"n\":1}");
	run_query(fx, "{\"since\":200,\"until\":300}", 10, &c, 2);
	assert_string_equal(c.seen[0], "{\"n\":3}");
	run_query(fx, "{\"limit\":3}", 10, &c, 3);
	run_query(fx, "{}", 1, &c, 1);
	assert_string_equal(c.seen[0], "{\"n\":4}");
	run_query(fx, "{\"kinds\":[]}", 10, &c, 0);
	run_query(fx, "{\"ids\":[\"03000000000000000000000000000000"
	    "00000000000000000000000000000000\"]}", 10, &c, 1);
	assert_string_equal(c.seen[0], "{\"n\":3}");
}

static void
test_relay_newest(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 at = -1;

	assert_int_equal(store_relay_newest_get(fx->st, "wss://a", &at), 0);
	assert_int_equal(at, 0);
	assert_int_equal(store_relay_newest_note(fx->st, "wss://a", 500), 0);
	assert_int_equal(store_relay_newest_note(fx->st, "wss://a", 400), 0);
	assert_int_equal(store_relay_newest_note(fx->st, "wss://b", 100), 0);
	assert_int_equal(store_relay_newest_get(fx->st, "wss://a", &at), 0);
	assert_int_equal(at, 500);
	assert_int_equal(store_relay_newest_get(fx->st, "wss://b", &at), 0);
	assert_int_equal(at, 100);
}

/*
 * Ten 10-byte events at times 1..10: 1 is kind 0, 2 kind 3, 3 kind 10002,
 * 4 is queued for the uplink, 5..10 plain kind 1. Budget 70 bytes: the
 * oldest evictable ones (5, 6, 7) go, nothing else.
 */
static void
fill_ten(struct fixture *fx)
{
	static const uint32_t	kinds[] = { 0, 3, 10002, 1, 1, 1, 1, 1, 1, 1 };
	uint8_t			i;

	for (i = 1; i <= 10; i++)
		assert_int_equal(put(fx, i, 0xcc, kinds[i - 1], i,
		    "0123456789", i == 4), 1);
	assert_totals(fx, 10, 100);
}

static void
test_evict_order_and_protection(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 evicted = -1;
	uint8_t		 i;

	fill_ten(fx);
	assert_int_equal(store_events_evict(fx->st, 100, &evicted), 0);
	assert_int_equal(evicted, 0);
	assert_int_equal(store_events_evict(fx->st, 70, &evicted), 0);
	assert_int_equal(evicted, 3);
	assert_totals(fx, 7, 70);
	for (i = 1; i <= 10; i++)
		assert_int_equal(has(fx, i), i < 5 || i > 7);

	/* Far under: everything evictable goes, protected rows stay. */
	assert_int_equal(store_events_evict(fx->st, 0, &evicted), 1);
	assert_int_equal(evicted, 3);
	assert_totals(fx, 4, 40);
	for (i = 1; i <= 4; i++)
		assert_true(has(fx, i));
	assert_int_equal(store_events_evict(fx->st, 0, &evicted), 1);
	assert_int_equal(evicted, 0);
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM inbox"), 1);

	/* Once the uplink confirmed it, the queued one may go. */
	assert_int_equal(store_exec(fx->st, "DELETE FROM inbox"), 0);
	assert_int_equal(store_events_evict(fx->st, 0, &evicted), 1);
	assert_int_equal(evicted, 1);
	assert_false(has(fx, 4));
	assert_totals(fx, 3, 30);
}

/*
 * One step looks at no more than STORE_EVICT_SCAN_ROWS rows: behind a
 * long run of protected rows it frees nothing, then resumes where it
 * stopped on the next call instead of scanning the same rows again.
 */
static void
test_evict_bounded_resume(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 evicted = -1, i, n = STORE_EVICT_SCAN_ROWS + 10;
	uint8_t		 id[32], pk[32];
	struct store_event_row row = { 0 };

	memset(id, 0, sizeof(id));
	memset(pk, 1, sizeof(pk));
	row.id = id;
	row.pubkey = pk;
	row.json = "x";
	row.json_len = 1;
	row.source = "backfill";
	row.first_relay = NULL;
	row.received_at = 1;
	assert_int_equal(store_begin(fx->st), 0);
	for (i = 0; i < n; i++) {
		id[0] = (uint8_t)(i >> 8);
		id[1] = (uint8_t)i;
		pk[0] = id[0];	/* one kind 3 per author: none replaces another */
		pk[1] = id[1];
		row.kind = i < STORE_EVICT_SCAN_ROWS ? 3 : 1;
		row.created_at = i;
		assert_int_equal(store_event_insert(fx->st, &row, false), 1);
	}
	assert_int_equal(store_commit(fx->st), 0);
	assert_totals(fx, n, n);
	assert_int_equal(store_events_evict(fx->st, n - 5, &evicted), 1);
	assert_int_equal(evicted, 0);
	assert_int_equal(store_events_evict(fx->st, n - 5, &evicted), 0);
	assert_int_equal(evicted, 5);
	assert_totals(fx, n - 5, n - 5);
	/* The five oldest kind 1 rows went. */
	assert_int_equal(fixture_int(fx, "SELECT min(created_at) FROM events "
	    "WHERE kind = 1"), STORE_EVICT_SCAN_ROWS + 5);
	/* Over budget with nothing left to take: the sweep wraps. */
	assert_int_equal(store_events_evict(fx->st, 0, &evicted), 1);
	assert_int_equal(evicted, 5);
	assert_int_equal(store_events_evict(fx->st, 0, &evicted), 1);
	assert_int_equal(evicted, 0);
	assert_totals(fx, STORE_EVICT_SCAN_ROWS, STORE_EVICT_SCAN_ROWS);
}

/* 62 hex zeros: an id blob is x'NN' Z62. */
#define Z62	"00000000000000000000000000000000000000000000000000000000000000"

/* Run sql on a raw connection; it must succeed. */
static void
raw_exec(sqlite3 *db, const char *sql)
{
	char	*msg = NULL;
	int	 rc = sqlite3_exec(db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK)
		fail_msg("%s: %s", sql, msg != NULL ? msg : "?");
}

/*
 * A store written by a binary that stopped at migration 002 (events,
 * totals kept by triggers, a queued event) is rebuilt by 003 with every
 * row, rowid, total and inbox reference intact, and keeps working.
 */
static void
test_migration_003_keeps_rows(void **state)
{
	struct fixture	 fx;
	char		 path[128], err[256], sql[128];
	sqlite3		*db;

	(void)state;
	snprintf(fx.dir, sizeof(fx.dir), "/tmp/test_store_events.XXXXXX");
	assert_non_null(mkdtemp(fx.dir));
	snprintf(path, sizeof(path), "%s/" STORE_DB_NAME, fx.dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	raw_exec(db, "PRAGMA foreign_keys = ON");
	raw_exec(db, (const char *)store_migration_files[0].data);
	raw_exec(db, (const char *)store_migration_files[1].data);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = 2; "
	    "PRAGMA application_id = %d", STORE_APPLICATION_ID);
	raw_exec(db, sql);
	raw_exec(db, "INSERT INTO events (rowid, id, pubkey, kind, created_at, "
	    "json, source, first_relay, received_at) VALUES "
	    "(7, zeroblob(32), zeroblob(32), 3, 100, '{\"a\":\"\xc3\xa9\"}', "
	    "'live', 'wss://a.example', 1), (9, x'01" Z62 "', "
	    "zeroblob(32), 1, 101, '{}', 'job', NULL, 2)");
	raw_exec(db, "INSERT INTO inbox (event_id, enqueued_at) VALUES "
	    "(zeroblob(32), 5)");
	assert_int_equal(sqlite3_close(db), SQLITE_OK);

	assert_int_equal(store_open(&fx.st, fx.dir, err, sizeof(err)), 0);
	assert_int_equal(store_schema_version(fx.st), store_schema_latest());
	assert_totals(&fx, 2, 10 + 2);
	assert_int_equal(fixture_int(&fx, "SELECT group_concat(rowid || ':' || "
	    "kind || ':' || source, ',') = '7:3:live,9:1:job' FROM events"), 1);
	assert_int_equal(fixture_int(&fx, "SELECT count(*) FROM inbox i JOIN "
	    "events e ON e.id = i.event_id WHERE e.first_relay = "
	    "'wss://a.example'"), 1);
	/* json is the last column; the insert trigger is gone. */
	assert_int_equal(fixture_int(&fx, "SELECT cid FROM pragma_table_info("
	    "'events') WHERE name = 'json'"), 7);
	assert_int_equal(fixture_int(&fx, "SELECT count(*) FROM sqlite_schema "
	    "WHERE type = 'trigger' AND tbl_name = 'events'"), 1);
	assert_int_equal(fixture_int(&fx, "PRAGMA foreign_keys"), 1);
	/* The inbox still refuses an id that is not stored... */
	assert_int_equal(store_exec(fx.st, "INSERT INTO inbox (event_id, "
	    "enqueued_at) VALUES (x'02" Z62 "', 5)"), -1);
	/* ... and the rules on source survived the new spelling. */
	assert_int_equal(store_exec(fx.st, "INSERT INTO events (id, pubkey, "
	    "kind, created_at, source, received_at, json) VALUES "
	    "(x'03" Z62 "', zeroblob(32), 1, 1, 'elsewhere', 1, "
	    "'{}')"), -1);
	assert_int_equal(put(&fx, 4, 0xaa, 1, 102, "{\"b\":1}", true), 1);
	assert_totals(&fx, 3, 12 + 7);
	assert_int_equal(store_exec(fx.st, "DELETE FROM events WHERE "
	    "rowid = 9"), 0);
	assert_totals(&fx, 2, 10 + 7);
	store_close(fx.st);
	nftw(fx.dir, fixture_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/*
 * One version per (author, kind) or (author, kind, d), in either arrival
 * order: the newest, on a tie the lowest id; an older late arrival is not
 * stored. Expired on arrival (NIP-40) and ephemeral kinds are not stored.
 */
static int
put_tagged(struct fixture *fx, uint8_t n, uint8_t a, uint32_t kind,
    int64_t at, const char *tags)
{
	uint8_t			id[32], pk[32];
	struct store_event_row	row = { 0 };
	cJSON			*t = cJSON_Parse(tags);
	char			 json[256];
	int			rc;

	assert_non_null(t);
	memset(id, 0, sizeof(id));
	id[0] = n;
	memset(pk, a, sizeof(pk));
	row.id = id;
	row.pubkey = pk;
	row.kind = kind;
	row.created_at = at;
	/* The store reads an addressable version's "d" from its JSON. */
	snprintf(json, sizeof(json), "{\"tags\":%s}", tags);
	row.json = json;
	row.json_len = strlen(json);
	row.source = "live";
	row.received_at = 1700000000;
	row.tags = t;
	rc = store_event_insert(fx->st, &row, true);
	cJSON_Delete(t);
	return rc;
}

static bool
held(struct fixture *fx, uint8_t n)
{
	uint8_t	id[32];

	memset(id, 0, sizeof(id));
	id[0] = n;
	return store_event_exists(fx->st, id) == 1;
}

static void
test_replace_rules(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 c, b, pending;

	/* Replaceable: newer after older, then an older late arrival. */
	assert_int_equal(put_tagged(fx, 1, 1, 0, 100, "[]"), 1);
	assert_int_equal(put_tagged(fx, 2, 1, 0, 200, "[]"),
	    STORE_INSERT_REPLACED);
	assert_false(held(fx, 1));
	assert_int_equal(put_tagged(fx, 3, 1, 0, 150, "[]"),
	    STORE_INSERT_OLDER);
	assert_false(held(fx, 3));
	/* Equal time: the lowest id stays, whichever came first. */
	assert_int_equal(put_tagged(fx, 9, 1, 10002, 300, "[]"), 1);
	assert_int_equal(put_tagged(fx, 8, 1, 10002, 300, "[]"),
	    STORE_INSERT_REPLACED);
	assert_false(held(fx, 9));
	assert_int_equal(put_tagged(fx, 10, 1, 10002, 300, "[]"),
	    STORE_INSERT_OLDER);
	/* Another author's or another kind's versions are untouched. */
	assert_int_equal(put_tagged(fx, 11, 2, 0, 50, "[]"), 1);
	assert_int_equal(put_tagged(fx, 12, 1, 3, 50, "[]"), 1);
	assert_true(held(fx, 2) && held(fx, 8) && held(fx, 11) &&
	    held(fx, 12));
	/* Addressable: per d ("" without one). */
	assert_int_equal(put_tagged(fx, 20, 1, 30023, 100,
	    "[[\"d\",\"a\"]]"), 1);
	assert_int_equal(put_tagged(fx, 21, 1, 30023, 100,
	    "[[\"d\",\"b\"]]"), 1);
	assert_int_equal(put_tagged(fx, 22, 1, 30023, 100, "[]"), 1);
	assert_int_equal(put_tagged(fx, 23, 1, 30023, 90,
	    "[[\"d\",\"a\"]]"), STORE_INSERT_OLDER);
	assert_int_equal(put_tagged(fx, 24, 1, 30023, 110,
	    "[[\"d\",\"a\"]]"), STORE_INSERT_REPLACED);
	assert_true(!held(fx, 20) && held(fx, 21) && held(fx, 22) &&
	    held(fx, 24));
	/* Kind 1 is not replaceable. */
	assert_int_equal(put_tagged(fx, 30, 1, 1, 100, "[]"), 1);
	assert_int_equal(put_tagged(fx, 31, 1, 1, 200, "[]"), 1);
	assert_true(held(fx, 30) && held(fx, 31));
	/* NIP-40: expired at arrival (received_at 1700000000) or not. */
	assert_int_equal(put_tagged(fx, 40, 1, 1, 100,
	    "[[\"expiration\",\"1700000000\"]]"), STORE_INSERT_EXPIRED);
	assert_int_equal(put_tagged(fx, 41, 1, 1, 100,
	    "[[\"expiration\",\"1700000001\"]]"), 1);
	/* Ephemeral. */
	assert_int_equal(put_tagged(fx, 50, 1, 20001, 100, "[]"),
	    STORE_INSERT_EPHEMERAL);
	assert_int_equal(put_tagged(fx, 51, 1, 29999, 100, "[]"),
	    STORE_INSERT_EPHEMERAL);
	assert_false(held(fx, 40) || held(fx, 50) || held(fx, 51));
	/* A copy of a held version is a duplicate, not an older one. */
	assert_int_equal(put_tagged(fx, 2, 1, 0, 200, "[]"),
	    STORE_INSERT_EXISTS);
	/* What was replaced left the totals and the inbox with its row. */
	assert_int_equal(store_events_totals(fx->st, &c, &b), 0);
	assert_int_equal(c, 10);
	assert_int_equal(store_row_two(fx->st, "SELECT count(*), 0 FROM inbox",
	    &pending, &b, "test"), 0);
	assert_int_equal(pending, 10);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_totals_follow_transactions,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_insert_dedup_totals, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_newest_replaceable, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_query, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_plans, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_relay_newest, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_evict_order_and_protection,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_evict_bounded_resume, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_replace_rules, setup,
		    teardown),
		cmocka_unit_test(test_migration_003_keeps_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
