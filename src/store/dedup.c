/*
 * dedup.c — the stored fields of an event, by id, for the ingest path's
 * duplicate check (see dedup.h). The columns read sit before json in the
 * row, so a row whose JSON spills onto overflow pages is read from its
 * first page only.
 *
 * It never writes and never opens a transaction.
 */
#include <string.h>

#include "core/log.h"
#include "store/dedup.h"
#include "store/store.h"
#include "store/store_sql.h"

int
store_dedup_probe(struct store *st, const uint8_t id[32],
    struct store_dedup *out)
{
	sqlite3_stmt	*stmt;
	const void	*pk;
	int		 rc;

	stmt = store_stmt(st, "SELECT pubkey, created_at, kind FROM events "
	    "WHERE id = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, id, 32, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "dedup probe");
		return -1;
	}
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		/* The schema's CHECK keeps pubkey at 32 bytes. */
		pk = sqlite3_column_blob(stmt, 0);
		if (pk == NULL || sqlite3_column_bytes(stmt, 0) != 32) {
			store_stmt_done(stmt);
			log_warnx("store: dedup probe: malformed row");
			return -1;
		}
		memcpy(out->pubkey, pk, 32);
		out->created_at = sqlite3_column_int64(stmt, 1);
		out->kind = (uint32_t)sqlite3_column_int64(stmt, 2);
		store_stmt_done(stmt);
		return 1;
	}
	store_stmt_done(stmt);
	if (rc == SQLITE_DONE)
		return 0;
	log_warnx("store: dedup probe: %s", sqlite3_errmsg(store_db(st)));
	return -1;
}
