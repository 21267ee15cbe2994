/*
 * history.c — rows of `ingest_history` (history.h). Each function is one
 * or two prepared statements over at most INGEST_HISTORY_S /
 * INGEST_HISTORY_BUCKET_S rows (the primary key bounds every range).
 */
#include <stdint.h>

#include <sqlite3.h>

#include "core/log.h"
#include "store/history.h"
#include "store/store.h"
#include "store/store_sql.h"

int
store_history_add(struct store *st, int64_t start, int64_t n,
    int64_t keep_from)
{
	sqlite3_stmt	*stmt;

	if ((stmt = store_stmt(st, "INSERT INTO ingest_history (start, "
	    "stored) VALUES (?1, ?2) ON CONFLICT (start) DO UPDATE SET "
	    "stored = stored + excluded.stored")) == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, start) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, n) != SQLITE_OK) {
		store_bind_fail(st, stmt, "history add");
		return -1;
	}
	if (store_step_done(st, stmt, "history add") == -1)
		return -1;
	if ((stmt = store_stmt(st, "DELETE FROM ingest_history WHERE "
	    "start < ?1")) == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, keep_from) != SQLITE_OK) {
		store_bind_fail(st, stmt, "history trim");
		return -1;
	}
	return store_step_done(st, stmt, "history trim");
}

int
store_history_each(struct store *st, int64_t from, store_history_fn fn,
    void *arg)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if ((stmt = store_stmt(st, "SELECT start, stored FROM ingest_history "
	    "WHERE start >= ?1 ORDER BY start")) == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, from) != SQLITE_OK) {
		store_bind_fail(st, stmt, "history read");
		return -1;
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		if (fn(sqlite3_column_int64(stmt, 0),
		    sqlite3_column_int64(stmt, 1), arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	if (rc != SQLITE_DONE) {
		log_warnx("store: history read: %s",
		    sqlite3_errmsg(store_db(st)));
		store_stmt_done(stmt);
		return -1;
	}
	store_stmt_done(stmt);
	return 0;
}

int
store_history_sum(struct store *st, int64_t from, int64_t *sum,
    int64_t *oldest)
{
	sqlite3_stmt	*stmt;

	*sum = 0;
	*oldest = 0;
	if ((stmt = store_stmt(st, "SELECT (SELECT coalesce(sum(stored), 0) "
	    "FROM ingest_history WHERE start >= ?1), (SELECT coalesce("
	    "min(start), 0) FROM ingest_history)")) == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 1, from) != SQLITE_OK) {
		store_bind_fail(st, stmt, "history sum");
		return -1;
	}
	if (sqlite3_step(stmt) != SQLITE_ROW) {
		log_warnx("store: history sum: %s",
		    sqlite3_errmsg(store_db(st)));
		store_stmt_done(stmt);
		return -1;
	}
	*sum = sqlite3_column_int64(stmt, 0);
	*oldest = sqlite3_column_int64(stmt, 1);
	store_stmt_done(stmt);
	return 0;
}
