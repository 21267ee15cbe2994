/*
 * ckpt_fixture.h — what the checkpoint tests (test_store_ckpt.c,
 * test_store_ckpt_proc.c) share on top of store_fixture.h: a table of
 * large rows, transactions that grow the WAL by about a page a row, a
 * check of the file through a connection of its own, and the daemon's
 * checkpoint of it at a small limit. Include it after store_fixture.h.
 */
#ifndef CACHEBOX_TESTS_CKPT_FIXTURE_H
#define CACHEBOX_TESTS_CKPT_FIXTURE_H

#include "store/checkpoint.h"

#define PAGES		64		/* the tests' WAL limit */
#define NO_CATCH_UP	(1 << 30)	/* a catch-up mark never reached */

/* One transaction of n rows of 3,000 bytes (about n pages). */
static void
write_rows(struct fixture *fx, int n)
{
	char	sql[128];

	snprintf(sql, sizeof(sql), "WITH RECURSIVE c(i) AS (SELECT 1 UNION "
	    "ALL SELECT i + 1 FROM c WHERE i < %d) INSERT INTO ckpt_t "
	    "SELECT randomblob(3000) FROM c", n);
	assert_int_equal(store_begin(fx->st), 0);
	assert_int_equal(store_exec(fx->st, sql), 0);
	assert_int_equal(store_commit(fx->st), 0);
}

/* Rows and integrity as a fresh connection sees them. */
static void
check_file(struct fixture *fx, int64_t rows)
{
	sqlite3		*db;
	sqlite3_stmt	*q;

	assert_int_equal(sqlite3_open_v2(store_path(fx->st), &db,
	    SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM ckpt_t",
	    -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(q, 0), rows);
	sqlite3_finalize(q);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1,
	    &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(q, 0), "ok");
	sqlite3_finalize(q);
	sqlite3_close(db);
}

/*
 * The table of write_rows on fx's store and the daemon's checkpoint of
 * it at PAGES, stepped by l (NULL: by the test), its catch-up mark at
 * catch_up (0: the daemon's, twice the limit).
 */
static struct store_ckpt *
ckpt_start(struct fixture *fx, struct loop *l, int catch_up)
{
	struct store_ckpt	*ck;

	assert_int_equal(store_exec(fx->st, "CREATE TABLE ckpt_t(b BLOB)"), 0);
	assert_non_null(ck = store_ckpt_new(l, fx->st, PAGES));
	if (catch_up > 0)
		store_ckpt_set_catch_up(ck, catch_up);
	return ck;
}

#endif
