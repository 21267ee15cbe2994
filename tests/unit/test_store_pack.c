/*
 * test_store_pack.c — packed events rows (store/rowjson.c, migration 015)
 * on a real store: a store written at schema 14 (rows as text) opens,
 * serves every event byte for byte before, during and after the
 * background conversion, through store_event_get, local queries and the
 * uplink's inbox take; a conversion killed in the middle of a step (a
 * child process that exits with the step's transaction open) resumes
 * where the last committed step left it; event_totals keeps counting the
 * served bytes through conversion and deletes of every form.
 */
#define _XOPEN_SOURCE 700	/* nftw */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

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
#include "store/inbox.h"
#include "store/rowjson.h"
#include "store/rules.h"
#include "store/store.h"
#include "store/store_sql.h"

#include "store_fixture.h"

#define NROWS		12
#define OLD_VERSION	14	/* the schema before packed rows */

/* The rows of the old store: ids and the JSON each must serve. */
struct old_rows {
	uint8_t	 id[NROWS][32];
	uint8_t	 pk[NROWS][32];
	char	*json[NROWS];
	int64_t	 bytes;
};

static void
old_rows_free(struct old_rows *o)
{
	int	i;

	for (i = 0; i < NROWS; i++)
		free(o->json[i]);
}

/*
 * Row i's JSON: signed events in the store's own layout, the same with
 * the keys in another order and spacing, and a few that no form but
 * verbatim holds (upper-case hex, not an event at all).
 */
static void
make_row(struct old_rows *o, int i, const struct nostr_key *k)
{
	struct event	 ev;
	struct buf	 b;
	char		 content[64], escaped[64], idhex[65], pkhex[65];
	char		 sighex[129];

	snprintf(content, sizeof(content), "note %d \\ \"q\" \xc3\xa9 \x01", i);
	/* The same content as another writer may escape it. */
	snprintf(escaped, sizeof(escaped), "note %d \\\\ \\\"q\\\" "
	    "\\u00e9 \\u0001\\/", i);
	assert_int_equal(event_create(&ev, k, 1, 1700000000 + i, NULL,
	    content), EVENT_OK);
	memcpy(o->id[i], ev.id, 32);
	memcpy(o->pk[i], ev.pubkey, 32);
	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	if (i % 3 == 0)
		assert_int_equal(event_to_json(&ev, &b), 0);
	else {
		hex_encode(ev.id, 32, idhex, sizeof(idhex));
		hex_encode(ev.pubkey, 32, pkhex, sizeof(pkhex));
		hex_encode(ev.sig, 64, sighex, sizeof(sighex));
		if (i % 3 == 2)
			idhex[10] = 'X';	/* not the id's hex: verbatim */
		assert_int_equal(buf_printf(&b, "{ \"sig\": \"%s\", \"kind\":1,"
		    "\"content\":\"%s\", \"tags\":[[\"e\",\"%s\"]], \"pubkey\":"
		    "\"%s\",\"created_at\":%lld, \"id\":\"%s\" }", sighex,
		    escaped, pkhex, pkhex, (long long)ev.created_at, idhex),
		    0);
	}
	o->json[i] = strdup(buf_cstr(&b));
	assert_non_null(o->json[i]);
	o->bytes += (int64_t)b.len;
	buf_free(&b);
	event_free(&ev);
}

/* Bind and insert row i the way schema 14 stored it (text in json). */
static void
old_insert(sqlite3 *db, const struct old_rows *o, int i)
{
	sqlite3_stmt	*q;

	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO events (id, "
	    "pubkey, kind, created_at, source, first_relay, received_at, json) "
	    "VALUES (?1, ?2, 1, ?3, 'live', 'wss://r.example', 1, ?4)", -1, &q,
	    NULL), SQLITE_OK);
	sqlite3_bind_blob(q, 1, o->id[i], 32, SQLITE_STATIC);
	sqlite3_bind_blob(q, 2, o->pk[i], 32, SQLITE_STATIC);
	sqlite3_bind_int64(q, 3, 1700000000 + i);
	sqlite3_bind_text(q, 4, o->json[i], -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(q), SQLITE_DONE);
	sqlite3_finalize(q);
}

static void
raw_exec(sqlite3 *db, const char *sql)
{
	char	*msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg != NULL ? msg : "?");
}

/* A store in fx->dir at schema 14 holding the rows of o, all queued. */
static void
old_store(struct fixture *fx, struct old_rows *o)
{
	struct nostr_key	 k;
	uint8_t			 sk[32] = { 0 };
	char			 path[128], sql[256];
	sqlite3			*db;
	int			 i;

	memset(o, 0, sizeof(*o));
	sk[31] = 5;
	assert_int_equal(key_from_secret(&k, sk), 0);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_store_pack.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(path, sizeof(path), "%s/" STORE_DB_NAME, fx->dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	for (i = 0; i < OLD_VERSION; i++)
		raw_exec(db, (const char *)store_migration_files[i].data);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d; PRAGMA "
	    "application_id = %d", OLD_VERSION, STORE_APPLICATION_ID);
	raw_exec(db, sql);
	for (i = 0; i < NROWS; i++) {
		make_row(o, i, &k);
		old_insert(db, o, i);
	}
	raw_exec(db, "INSERT INTO inbox (event_id, enqueued_at) SELECT id, 1 "
	    "FROM events ORDER BY rowid");
	snprintf(sql, sizeof(sql), "UPDATE event_totals SET count = %d, "
	    "bytes = %lld", NROWS, (long long)o->bytes);
	raw_exec(db, sql);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	key_clear(&k);
}

static int
query_cb(const char *json, size_t len, void *arg)
{
	int	*seen = arg;

	(void)json;
	(void)len;
	(*seen)++;
	return 0;
}

/* Every row serves its JSON exactly, by every reader. */
static void
served_identical(struct fixture *fx, const struct old_rows *o)
{
	struct inbox_batch	 b = { 0 };
	struct filter		 f;
	struct buf		 out;
	int64_t			 count, bytes;
	int			 i, j, seen = 0;

	buf_init(&out, EVENT_SERIAL_MAX_BYTES);
	for (i = 0; i < NROWS; i++) {
		buf_reset(&out);
		assert_int_equal(store_event_get(fx->st, o->id[i], &out), 1);
		assert_int_equal(out.len, strlen(o->json[i]));
		assert_memory_equal(out.data, o->json[i], out.len);
	}
	buf_free(&out);
	assert_int_equal(store_inbox_take(fx->st, 0, NROWS, SIZE_MAX, NULL,
	    &b), NROWS);
	for (i = 0; i < NROWS; i++) {
		for (j = 0; j < NROWS; j++)
			if (memcmp(b.rows[i].id, o->id[j], 32) == 0)
				break;
		assert_true(j < NROWS);
		assert_int_equal(b.rows[i].json_len, strlen(o->json[j]));
		assert_memory_equal(b.rows[i].json, o->json[j],
		    b.rows[i].json_len);
	}
	store_inbox_batch_clear(&b);
	free(b.rows);
	filter_init(&f);
	assert_int_equal(store_events_query(fx->st, &f, 100, query_cb, &seen),
	    NROWS);
	filter_free(&f);
	assert_int_equal(seen, NROWS);
	/* The totals and the served sizes the trigger will subtract agree. */
	assert_int_equal(store_events_totals(fx->st, &count, &bytes), 0);
	assert_int_equal(count, NROWS);
	assert_int_equal(bytes, o->bytes);
	assert_int_equal(fixture_int(fx, "SELECT sum(" STORE_ROW_JSON_BYTES("")
	    ") FROM events"), o->bytes);
}

/* Rows in each state: text (not yet converted), and each packed form. */
static int64_t
count_form(struct fixture *fx, int form)
{
	char	sql[160];

	if (form < 0)
		return fixture_int(fx, "SELECT count(*) FROM events WHERE "
		    "packed IS NULL");
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE "
	    "packed IS NOT NULL AND json = '' AND substr(packed, 1, 1) = "
	    "x'%02x'", form);
	return fixture_int(fx, sql);
}

static void
test_old_store_converts(void **state)
{
	struct fixture	fx;
	struct old_rows	o;
	char		err[256];
	int64_t		left;
	int		rc, steps = 0;

	(void)state;
	old_store(&fx, &o);
	assert_int_equal(store_open(&fx.st, fx.dir, err, sizeof(err)), 0);
	assert_int_equal(store_pack_left(fx.st), NROWS);
	assert_int_equal(count_form(&fx, -1), NROWS);
	served_identical(&fx, &o);
	/* One step of 5: old and new rows side by side, served the same. */
	assert_int_equal(store_pack_step(fx.st, 5, &left), 1);
	assert_int_equal(left, NROWS - 5);
	assert_int_equal(count_form(&fx, -1), NROWS - 5);
	served_identical(&fx, &o);
	while ((rc = store_pack_step(fx.st, 5, &left)) == 1)
		steps++;
	assert_int_equal(rc, 0);
	assert_int_equal(steps, 1);
	assert_int_equal(store_pack_left(fx.st), 0);
	assert_int_equal(count_form(&fx, -1), 0);
	/* Rows 0, 3, ... canonical; 1, 4, ... placed; 2, 5, ... verbatim. */
	assert_int_equal(count_form(&fx, 1), NROWS / 3);
	assert_int_equal(count_form(&fx, 2), NROWS / 3);
	assert_int_equal(count_form(&fx, 0), NROWS / 3);
	assert_int_equal(fixture_int(&fx, "SELECT count(*) FROM meta WHERE "
	    "key IN ('pack_next', 'pack_end')"), 0);
	served_identical(&fx, &o);
	/* Nothing more to do; deleting every row brings the bytes to 0. */
	assert_int_equal(store_pack_step(fx.st, 5, &left), 0);
	assert_int_equal(store_exec(fx.st, "DELETE FROM inbox"), 0);
	assert_int_equal(store_exec(fx.st, "DELETE FROM events"), 0);
	assert_int_equal(fixture_int(&fx, "SELECT count FROM event_totals"), 0);
	assert_int_equal(fixture_int(&fx, "SELECT bytes FROM event_totals"), 0);
	store_close(fx.st);
	nftw(fx.dir, fixture_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	old_rows_free(&o);
}

/*
 * A child converts one step (committed), starts another inside an open
 * transaction and dies: the parent finds the first step's rows packed,
 * the second's not, and finishes from there.
 */
static void
test_conversion_crash_resumes(void **state)
{
	struct fixture	fx;
	struct old_rows	o;
	char		err[256];
	int64_t		left;
	pid_t		pid;
	int		status;

	(void)state;
	old_store(&fx, &o);
	if ((pid = fork()) == 0) {
		if (store_open(&fx.st, fx.dir, err, sizeof(err)) != 0 ||
		    store_pack_step(fx.st, 4, &left) != 1 ||
		    store_begin(fx.st) != 0 ||
		    store_pack_step(fx.st, 4, &left) != 1)
			_exit(1);
		_exit(0);	/* no commit, no close: as a crash */
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(store_open(&fx.st, fx.dir, err, sizeof(err)), 0);
	assert_int_equal(store_pack_left(fx.st), NROWS - 4);
	assert_int_equal(count_form(&fx, -1), NROWS - 4);
	served_identical(&fx, &o);
	while (store_pack_step(fx.st, 4, &left) == 1)
		;
	assert_int_equal(count_form(&fx, -1), 0);
	served_identical(&fx, &o);
	store_close(fx.st);
	nftw(fx.dir, fixture_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	old_rows_free(&o);
}

/* A new row is written packed, json empty, and served as given. */
static void
test_new_rows_packed(void **state)
{
	struct fixture		*fx = *state;
	struct store_event_row	 row = { 0 };
	struct old_rows		 o;
	struct nostr_key	 k;
	uint8_t			 sk[32] = { 0 };
	int			 i;

	memset(&o, 0, sizeof(o));
	sk[31] = 9;
	assert_int_equal(key_from_secret(&k, sk), 0);
	assert_int_equal(store_pack_left(fx->st), 0);
	for (i = 0; i < NROWS; i++) {
		make_row(&o, i, &k);
		row.id = o.id[i];
		row.pubkey = o.pk[i];
		row.kind = 1;
		row.created_at = 1700000000 + i;
		row.json = o.json[i];
		row.json_len = strlen(o.json[i]);
		row.source = "live";
		row.received_at = 1;
		assert_int_equal(store_event_insert(fx->st, &row, true), 1);
	}
	assert_int_equal(count_form(fx, -1), 0);
	assert_int_equal(count_form(fx, 1), NROWS / 3);
	served_identical(fx, &o);
	/* The row is smaller than its JSON by the three hex values' worth. */
	assert_true(fixture_int(fx, "SELECT sum(length(packed)) FROM events")
	    < o.bytes - (NROWS * 2 / 3) * 170);
	key_clear(&k);
	old_rows_free(&o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_old_store_converts),
		cmocka_unit_test(test_conversion_crash_resumes),
		cmocka_unit_test_setup_teardown(test_new_rows_packed, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
