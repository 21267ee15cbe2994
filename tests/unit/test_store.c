/*
 * test_store.c — the local SQLite store on real files in a temporary
 * directory: a fresh open creates the schema, a re-open changes nothing,
 * files that are not ours (newer, garbage, another program's) are refused
 * and left byte for byte as they were, bad directories give a message,
 * the connection runs WAL with the documented pragmas, transactions nest,
 * statements are cached, stored configuration loads below --set, and a
 * transaction SQLite rolled back by itself (disk full) runs nothing more
 * until its owner ends it.
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

#include <sqlite3.h>

#include "app.h"
#include "core/config.h"
#include "core/limits.h"
#include "core/secret.h"
#include "store/config_store.h"
#include "store/store.h"
#include "store/store_sql.h"

static const char *const tables[] = {
	"events", "inbox", "follows", "author_relays", "cursors", "jobs",
	"job_batches", "missing_ids", "recovery_relays", "relays", "config",
	"meta", NULL
};

struct fixture {
	char	dir[64];
	char	db[128];
};

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

static int
setup(void **state)
{
	struct fixture	*fx;

	fx = calloc(1, sizeof(*fx));
	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_store.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->db, sizeof(fx->db), "%s/cachebox.db", fx->dir);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	nftw(fx->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* The whole file; *len set. Caller frees. */
static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE		*f;
	unsigned char	*buf;
	long		 n;

	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void
spew(const char *path, const void *data, size_t len)
{
	FILE	*f;

	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int64_t
query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*stmt;
	int64_t		 v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	v = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return v;
}

/* Run sql on the file with a plain connection, as another program would. */
static void
raw_exec(const char *path, const char *sql)
{
	sqlite3	*db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* store_open must fail with exactly want and leave the file unchanged. */
static void
assert_refused(struct fixture *fx, const char *want)
{
	struct store	*st = (void *)1;
	unsigned char	*before, *after;
	size_t		 nbefore, nafter;
	char		 err[512] = "";

	before = slurp(fx->db, &nbefore);
	assert_int_equal(store_open(&st, fx->dir, err, sizeof(err)), -1);
	assert_null(st);
	assert_string_equal(err, want);
	after = slurp(fx->db, &nafter);
	assert_int_equal(nafter, nbefore);
	assert_memory_equal(after, before, nbefore);
	free(before);
	free(after);
}

/* No -wal, -shm or -journal beside the file: nothing tried to write. */
static void
assert_no_sidecars(struct fixture *fx)
{
	static const char *const ext[] = { "-wal", "-shm", "-journal", NULL };
	char	path[160];
	int	i;

	for (i = 0; ext[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s%s", fx->db, ext[i]);
		if (access(path, F_OK) == 0)
			fail_msg("%s exists", path);
	}
}

static struct store *
open_ok(struct fixture *fx)
{
	struct store	*st = NULL;
	char		 err[512] = "";

	if (store_open(&st, fx->dir, err, sizeof(err)) == -1)
		fail_msg("store_open: %s", err);
	assert_non_null(st);
	return st;
}

static void
test_fresh_open(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	sqlite3		*db;
	char		 sql[128];
	int		 i;

	assert_true(store_schema_latest() >= 1);
	st = open_ok(fx);
	db = store_db(st);
	assert_string_equal(store_path(st), fx->db);
	for (i = 0; tables[i] != NULL; i++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM sqlite_master "
		    "WHERE type = 'table' AND name = '%s'", tables[i]);
		if (query_int(db, sql) != 1)
			fail_msg("table %s missing", tables[i]);
	}
	assert_int_equal(store_schema_version(st), store_schema_latest());
	assert_int_equal(query_int(db, "PRAGMA user_version"),
	    store_schema_latest());
	assert_int_equal(query_int(db, "PRAGMA application_id"),
	    STORE_APPLICATION_ID);
	assert_int_equal(query_int(db, "SELECT count(*) FROM sqlite_master "
	    "WHERE type = 'index' AND name IN ('events_pubkey_time', "
	    "'events_replaceable', 'events_time_id')"), 3);
	assert_int_equal(query_int(db, "SELECT count(*) FROM sqlite_master "
	    "WHERE name = 'events_pubkey_kind_time'"), 0);
	store_close(st);
}

/* A zero-length file (a crash right after creation) is a new database. */
static void
test_empty_file_is_new(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;

	spew(fx->db, "", 0);
	st = open_ok(fx);
	assert_int_equal(store_schema_version(st), store_schema_latest());
	store_close(st);
}

static void
test_pragmas(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	sqlite3		*db;
	sqlite3_stmt	*stmt;
	char		 wal[160];

	st = open_ok(fx);
	db = store_db(st);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1,
	    &stmt, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(stmt, 0), "wal");
	sqlite3_finalize(stmt);
	assert_int_equal(query_int(db, "PRAGMA synchronous"), 1);  /* NORMAL */
	assert_int_equal(query_int(db, "PRAGMA foreign_keys"), 1);
	assert_int_equal(query_int(db, "PRAGMA temp_store"), 2);   /* MEMORY */
	assert_int_equal(query_int(db, "PRAGMA cache_size"), -STORE_CACHE_KIB);
	assert_int_equal(query_int(db, "PRAGMA busy_timeout"),
	    STORE_BUSY_TIMEOUT_MS);
	assert_true(store_random_reads(st));
	assert_int_equal(store_set_cache_kib(st, 512), 0);
	assert_int_equal(query_int(db, "PRAGMA cache_size"), -512);
	assert_int_equal(store_set_cache_kib(st, 0), -1);
	/* A write goes to the -wal file, not the database. */
	assert_int_equal(store_exec(st, "INSERT INTO meta VALUES ('k', 1)"), 0);
	snprintf(wal, sizeof(wal), "%s-wal", fx->db);
	assert_int_equal(access(wal, F_OK), 0);
	/* Foreign keys are enforced: an inbox row needs its event. */
	assert_int_equal(sqlite3_exec(db, "INSERT INTO inbox (event_id, "
	    "enqueued_at) VALUES (zeroblob(32), 1)", NULL, NULL, NULL),
	    SQLITE_CONSTRAINT_FOREIGNKEY);
	store_close(st);
}

static void
test_reopen_keeps_data(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;

	st = open_ok(fx);
	assert_int_equal(store_exec(st, "INSERT INTO meta VALUES ('kept', 42)"),
	    0);
	store_close(st);
	st = open_ok(fx);
	assert_int_equal(store_schema_version(st), store_schema_latest());
	assert_int_equal(query_int(store_db(st),
	    "SELECT value FROM meta WHERE key = 'kept'"), 42);
	assert_int_equal(query_int(store_db(st),
	    "SELECT count(*) FROM meta"), 1);
	store_close(st);
}

static void
test_newer_refused(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	char		 sql[64], want[256];
	int		 latest = store_schema_latest();

	st = open_ok(fx);
	store_close(st);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", latest + 1);
	raw_exec(fx->db, sql);
	snprintf(want, sizeof(want), "database version %d is newer than this "
	    "cacheboxd supports (%d); refusing to touch it", latest + 1, latest);
	assert_refused(fx, want);
	/* Still refused the second time: nothing was migrated or reset. */
	assert_refused(fx, want);
}

static void
test_garbage_refused(void **state)
{
	struct fixture	*fx = *state;
	unsigned char	 junk[8192];
	char		 want[256];
	size_t		 i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 7 + 3);
	snprintf(want, sizeof(want), "%s is not a cachebox database (file is "
	    "not a SQLite database)", fx->db);
	spew(fx->db, junk, sizeof(junk));
	assert_refused(fx, want);
	assert_no_sidecars(fx);
	/* Shorter than a SQLite header. */
	spew(fx->db, "hello\n", 6);
	assert_refused(fx, want);
	assert_no_sidecars(fx);
}

static void
test_foreign_refused(void **state)
{
	struct fixture	*fx = *state;
	char		 want[256];

	/* Someone else's tables, user_version 0, no application_id. */
	raw_exec(fx->db, "CREATE TABLE accounts (id INTEGER PRIMARY KEY);"
	    "INSERT INTO accounts VALUES (1)");
	snprintf(want, sizeof(want), "%s is not a cachebox database (it holds "
	    "another program's tables); refusing to touch it", fx->db);
	assert_refused(fx, want);
	assert_no_sidecars(fx);

	/* Another program's application_id. */
	assert_int_equal(unlink(fx->db), 0);
	raw_exec(fx->db, "PRAGMA application_id = 1234");
	snprintf(want, sizeof(want), "%s is not a cachebox database "
	    "(application_id 0x000004d2 belongs to another program); refusing "
	    "to touch it", fx->db);
	assert_refused(fx, want);
	assert_no_sidecars(fx);
}

static void
test_failed_migration_rolls_back(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	sqlite3		*db;
	char		 err[512];

	/* Ours (application_id) at version 0, but a table is in the way. */
	raw_exec(fx->db, "PRAGMA application_id = 1128419160;"
	    "CREATE TABLE events (x)");
	assert_int_equal(store_open(&st, fx->dir, err, sizeof(err)), -1);
	assert_null(st);
	assert_string_equal(err, "migration 001_init.sql: table events already "
	    "exists");
	assert_int_equal(sqlite3_open(fx->db, &db), SQLITE_OK);
	assert_int_equal(query_int(db, "PRAGMA user_version"), 0);
	assert_int_equal(query_int(db, "SELECT count(*) FROM sqlite_master"), 1);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void
test_bad_directories(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	char		 path[256], want[320], err[512];

	/* A path through a regular file (root ignores chmod, not this). */
	snprintf(path, sizeof(path), "%s/afile", fx->dir);
	spew(path, "x", 1);
	snprintf(path, sizeof(path), "%s/afile/sub", fx->dir);
	assert_int_equal(store_open(&st, path, err, sizeof(err)), -1);
	assert_null(st);
	snprintf(want, sizeof(want), "state directory %s: Not a directory",
	    path);
	assert_string_equal(err, want);

	snprintf(path, sizeof(path), "%s/afile", fx->dir);
	assert_int_equal(store_open(&st, path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "state directory %s: not a directory",
	    path);
	assert_string_equal(err, want);

	snprintf(path, sizeof(path), "%s/absent", fx->dir);
	assert_int_equal(store_open(&st, path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "state directory %s: No such file or "
	    "directory", path);
	assert_string_equal(err, want);
	assert_int_equal(access(path, F_OK), -1);

	/* The database path is a directory. */
	assert_int_equal(mkdir(fx->db, 0700), 0);
	assert_int_equal(store_open(&st, fx->dir, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s is not a regular file", fx->db);
	assert_string_equal(err, want);
}

static void
test_transactions(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	sqlite3		*db;

	st = open_ok(fx);
	db = store_db(st);
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_exec(st, "INSERT INTO meta VALUES ('a', 1)"), 0);
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_tx_depth(st), 2);
	assert_int_equal(store_exec(st, "INSERT INTO meta VALUES ('b', 2)"), 0);
	assert_int_equal(store_rollback(st), 0);	/* undoes only 'b' */
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_exec(st, "INSERT INTO meta VALUES ('c', 3)"), 0);
	assert_int_equal(store_commit(st), 0);
	assert_int_equal(store_commit(st), 0);
	assert_int_equal(store_tx_depth(st), 0);
	assert_int_equal(sqlite3_get_autocommit(db), 1);
	assert_int_equal(query_int(db, "SELECT count(*) FROM meta "
	    "WHERE key IN ('a', 'c')"), 2);
	assert_int_equal(query_int(db, "SELECT count(*) FROM meta"), 2);
	assert_int_equal(query_int(db, "SELECT sum(value) FROM meta"), 4);

	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_exec(st, "INSERT INTO meta VALUES ('d', 4)"), 0);
	assert_int_equal(store_rollback(st), 0);
	assert_int_equal(query_int(db, "SELECT count(*) FROM meta"), 2);
	assert_int_equal(store_commit(st), -1);	/* none open */
	assert_int_equal(store_rollback(st), -1);
	store_close(st);
}

/*
 * A full disk (here: max_page_count) makes SQLite roll the open batch back
 * by itself. Nothing may then run as if the batch were still open (it
 * would autocommit alone): store_stmt refuses until the level ends, the
 * COMMIT fails, and afterwards the store works as before.
 */
static void
test_rolled_back_under_us(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	sqlite3		*db;
	sqlite3_stmt	*ins;
	char		 sql[64];
	int		 i, rc = SQLITE_DONE;

	st = open_ok(fx);
	db = store_db(st);
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld",
	    (long long)query_int(db, "PRAGMA page_count") + 8);
	assert_int_equal(store_exec(st, sql), 0);
	assert_int_equal(store_begin(st), 0);
	for (i = 0; i < 1000 && rc == SQLITE_DONE; i++) {
		ins = store_stmt(st, "INSERT INTO meta VALUES "
		    "(hex(randomblob(16)), randomblob(3000))");
		assert_non_null(ins);
		rc = sqlite3_step(ins);
		store_stmt_done(ins);
	}
	assert_int_equal(rc, SQLITE_FULL);
	assert_int_equal(sqlite3_get_autocommit(db), 1);	/* rolled back */
	assert_int_equal(store_tx_depth(st), 1);
	assert_null(store_stmt(st, "INSERT INTO meta VALUES ('x', 1)"));
	assert_null(store_stmt(st, "SELECT count(*) FROM meta"));
	assert_int_equal(store_commit(st), -1);
	assert_int_equal(store_tx_depth(st), 0);
	assert_int_equal(query_int(db, "SELECT count(*) FROM meta"), 0);
	assert_int_equal(store_exec(st, "PRAGMA max_page_count = 1000000"), 0);
	assert_non_null(store_stmt(st, "SELECT count(*) FROM meta"));
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_exec(st, "INSERT INTO meta VALUES ('y', 2)"), 0);
	assert_int_equal(store_commit(st), 0);
	assert_int_equal(query_int(db, "SELECT count(*) FROM meta"), 1);
	store_close(st);
}

static void
test_stmt_cache(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	sqlite3_stmt	*a, *b;
	char		 copy[64];

	st = open_ok(fx);
	a = store_stmt(st, "SELECT count(*) FROM meta WHERE key = ?1");
	assert_non_null(a);
	assert_int_equal(sqlite3_bind_text(a, 1, "x", -1, SQLITE_STATIC),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(a), SQLITE_ROW);
	/* Same text from another buffer: the same statement, reset. */
	snprintf(copy, sizeof(copy), "%s", "SELECT count(*) FROM meta WHERE "
	    "key = ?1");
	b = store_stmt(st, copy);
	assert_ptr_equal(a, b);
	assert_int_equal(sqlite3_stmt_busy(b), 0);
	assert_null(sqlite3_column_text(b, 0));
	assert_null(store_stmt(st, "SELECT nonsense FROM nowhere"));
	store_stmt_done(b);
	store_close(st);
}

static void
test_config_round_trip(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	struct config	*cfg;
	char		 err[256], buf[64];

	st = open_ok(fx);
	assert_int_equal(store_config_put(st, "backfill.page_size", "250",
	    false), 0);
	assert_int_equal(store_config_put(st, "backfill.pace_ms", "10", false),
	    0);
	assert_int_equal(store_config_put(st, "backfill.pace_ms", "20", false),
	    0);
	assert_int_equal(store_config_put(st, "no.such.key", "1", false), -1);
	assert_int_equal(store_config_put(st, "backfill.page_size", "zero",
	    false), -1);
	assert_int_equal(store_config_get(st, "backfill.page_size", buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "250");
	assert_int_equal(store_config_get(st, "live.enabled", buf,
	    sizeof(buf)), 1);
	/* A key stored by another version of cacheboxd. */
	assert_int_equal(store_exec(st, "INSERT INTO config VALUES "
	    "('gone.key', 'x', 1, NULL)"), 0);
	store_close(st);

	st = open_ok(fx);
	cfg = config_new();
	assert_non_null(cfg);
	assert_int_equal(config_set_arg(cfg, "backfill.page_size=123", err,
	    sizeof(err)), 0);
	assert_int_equal(store_config_load(st, cfg, err, sizeof(err)), 0);
	assert_int_equal(config_get_int(cfg, "backfill.page_size"), 123);
	assert_int_equal(config_source(cfg, "backfill.page_size"),
	    CFG_SRC_CLI);
	assert_int_equal(config_get_int(cfg, "backfill.pace_ms"), 20);
	assert_int_equal(config_source(cfg, "backfill.pace_ms"), CFG_SRC_DB);
	assert_int_equal(config_source(cfg, "live.enabled"), CFG_SRC_DEFAULT);
	/* The unknown key is skipped, not deleted. */
	assert_int_equal(query_int(store_db(st),
	    "SELECT count(*) FROM config WHERE key = 'gone.key'"), 1);
	config_free(cfg);

	assert_int_equal(store_config_del(st, "backfill.pace_ms"), 0);
	assert_int_equal(store_config_del(st, "backfill.pace_ms"), 0);
	cfg = config_new();
	assert_non_null(cfg);
	assert_int_equal(store_config_load(st, cfg, err, sizeof(err)), 0);
	assert_int_equal(config_source(cfg, "backfill.pace_ms"),
	    CFG_SRC_DEFAULT);
	assert_int_equal(config_get_int(cfg, "backfill.page_size"), 250);
	assert_int_equal(config_source(cfg, "backfill.page_size"), CFG_SRC_DB);
	config_free(cfg);
	store_close(st);
}

/*
 * Pages overwritten under a store (a failing SD card): the first statement
 * that meets the damage marks the store damaged; from then on every write
 * is refused (a write into a broken b-tree spreads the damage) and reads
 * still run, so the status can say so.
 */
static void
test_damaged_store(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	sqlite3_stmt	*stmt;
	char		 path[512], junk[4096];
	FILE		*f;
	int		 i, rc;

	st = open_ok(fx);
	assert_int_equal(store_exec(st, "CREATE TABLE junk (x BLOB); "
	    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
	    "WHERE i < 3000) INSERT INTO junk SELECT randomblob(700) FROM n"),
	    0);
	store_close(st);
	snprintf(path, sizeof(path), "%s/cachebox.db", fx->dir);
	assert_non_null(f = fopen(path, "r+b"));
	memset(junk, 0x5a, sizeof(junk));
	for (i = 100; i < 140; i++) {
		assert_int_equal(fseek(f, (long)i * 4096, SEEK_SET), 0);
		assert_int_equal(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	}
	assert_int_equal(fclose(f), 0);

	st = open_ok(fx);
	assert_false(store_damaged(st));
	assert_non_null(stmt = store_stmt(st, "SELECT sum(length(x)) FROM junk"));
	rc = sqlite3_step(stmt);
	store_stmt_done(stmt);
	assert_int_not_equal(rc, SQLITE_ROW);
	assert_true(store_damaged(st));
	assert_int_equal(store_begin(st), -1);
	assert_null(store_stmt(st, "UPDATE event_totals SET count = 0"));
	assert_int_equal(store_config_put(st, "backfill.page_size", "250",
	    false), -1);
	/* Reads that miss the damage still answer. */
	assert_non_null(stmt = store_stmt(st, "SELECT count FROM event_totals"));
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	store_stmt_done(stmt);
	store_close(st);
}

/*
 * A key naming a path the daemon opens counts only when the console
 * stored it: rows an older version wrote (origin NULL) and rows stored
 * from the web or the control socket are ignored. A token an older
 * version stored in clear is rewritten as its hash, and a token is never
 * accepted in clear.
 */
static void
test_config_origin_and_token(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st;
	struct config	*cfg;
	char		 err[256], buf[256];

	app_config_lend_checks();	/* uplink.url's check, as main does */
	st = open_ok(fx);
	assert_int_equal(store_exec(st, "INSERT INTO config VALUES "
	    "('console.tty', '/tmp/evil', 1, NULL), "
	    "('admin.token', 'legacy-clear-token', 1, NULL)"), 0);
	assert_int_equal(store_config_put(st, "tls.ca_file", "/tmp/ca.pem",
	    false), 0);
	assert_int_equal(store_config_put(st, "admin.token", "not-a-hash-token",
	    true), -1);
	cfg = config_new();
	assert_non_null(cfg);
	assert_int_equal(store_config_load(st, cfg, err, sizeof(err)), 0);
	assert_string_equal(config_get(cfg, "console.tty"), "");
	assert_string_equal(config_get(cfg, "tls.ca_file"), "");
	assert_true(secret_verify(config_get(cfg, "admin.token"),
	    "legacy-clear-token", 18));
	assert_int_equal(store_config_get(st, "admin.token", buf, sizeof(buf)),
	    0);
	assert_true(secret_is_hash(buf));
	assert_true(secret_verify(buf, "legacy-clear-token", 18));
	config_free(cfg);

	assert_int_equal(store_config_put(st, "console.tty", "/dev/ttyGS0",
	    true), 0);
	assert_int_equal(store_config_put(st, "uplink.url", "postgres://db/c?"
	    "sslrootcert=/etc/shadow", false), 0);
	cfg = config_new();
	assert_non_null(cfg);
	assert_int_equal(store_config_load(st, cfg, err, sizeof(err)), 0);
	assert_string_equal(config_get(cfg, "uplink.url"), "");
	config_free(cfg);

	assert_int_equal(store_config_put(st, "uplink.url", "postgres://db/c?"
	    "sslrootcert=/etc/ssl/db.pem", true), 0);
	cfg = config_new();
	assert_non_null(cfg);
	assert_int_equal(store_config_load(st, cfg, err, sizeof(err)), 0);
	assert_string_equal(config_get(cfg, "console.tty"), "/dev/ttyGS0");
	assert_string_equal(config_get(cfg, "uplink.url"), "postgres://db/c?"
	    "sslrootcert=/etc/ssl/db.pem");
	config_free(cfg);
	store_close(st);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fresh_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_origin_and_token,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_store, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_empty_file_is_new, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pragmas, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_keeps_data, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_newer_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_garbage_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_foreign_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_failed_migration_rolls_back,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_directories, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_transactions, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_rolled_back_under_us, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stmt_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_round_trip, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
