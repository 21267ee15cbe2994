/*
 * store_fixture.h — the cmocka fixture the store tests share: a real
 * cachebox store opened in a fresh temporary directory, removed again
 * after the test. Include it after <cmocka.h> and "store/store.h"; the
 * including file must define _XOPEN_SOURCE 700 (for nftw) before any
 * system header.
 */
#ifndef CACHEBOX_TESTS_STORE_FIXTURE_H
#define CACHEBOX_TESTS_STORE_FIXTURE_H

#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/store.h"
#include "store/store_sql.h"

struct fixture {
	char		 dir[64];
	struct store	*st;
};

static int
fixture_rm_entry(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

static int
setup(void **state)
{
	struct fixture	*fx = calloc(1, sizeof(*fx));
	char		 err[256];

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/cachebox-unit.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	assert_int_equal(store_open(&fx->st, fx->dir, err, sizeof(err)), 0);
	*state = fx;
	return 0;
}

/* The one integer sql answers on fx's store (a statement of the store). */
static inline int64_t
fixture_int(struct fixture *fx, const char *sql)
{
	sqlite3_stmt	*q = store_stmt(fx->st, sql);
	int64_t		 v;

	assert_non_null(q);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	v = sqlite3_column_int64(q, 0);
	store_stmt_done(q);
	return v;
}

/* SQLite's plan for sql on fx's store, its detail lines joined by "; ". */
static inline void
fixture_plan(struct fixture *fx, const char *sql, char *out, size_t outlen)
{
	sqlite3_stmt	*stmt;
	char		 q[2048];
	size_t		 n = 0;

	snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql);
	assert_int_equal(sqlite3_prepare_v2(store_db(fx->st), q, -1, &stmt,
	    NULL), SQLITE_OK);
	out[0] = '\0';
	while (sqlite3_step(stmt) == SQLITE_ROW && n + 1 < outlen)
		n += (size_t)snprintf(out + n, outlen - n, "%s; ",
		    (const char *)sqlite3_column_text(stmt, 3));
	sqlite3_finalize(stmt);
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	store_close(fx->st);
	nftw(fx->dir, fixture_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

#endif
