/*
 * store_sql.h — the store's SQLite-facing helpers, private to src/store/
 * (and to the store's own tests): the connection, the cache of prepared
 * statements, the step/bind helpers every table family uses, and the
 * event totals the events family notes. Nothing outside src/store/
 * includes this header, so SQLite stays an implementation detail of the
 * store.
 */
#ifndef CACHEBOX_STORE_STORE_SQL_H
#define CACHEBOX_STORE_STORE_SQL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store/cursors.h"
#include "store/jobs.h"
#include "store/store.h"

/*
 * Queries whose plan depends on an index condition, shared with the
 * store's tests so they can check the plan SQLite picks. The partial
 * index events_replaceable (migration 009) serves only a query whose
 * WHERE holds its condition word for word: EVENTS_SQL_REPLACEABLE("kind"),
 * or with the column named through a table alias ("k.kind").
 * EVENTS_SQL_NEWEST_REPLACEABLE reads STORE_ROW_JSON_COLS (store/rowjson.h)
 * then created_at.
 */
#define EVENTS_SQL_REPLACEABLE(k)					\
	"(" k " = 0 OR " k " = 3 OR (" k " >= 10000 AND " k " < 20000) "	\
	"OR (" k " >= 30000 AND " k " < 40000))"
#define EVENTS_SQL_NEWEST_REPLACEABLE					\
	"SELECT json, packed, id, pubkey, created_at FROM events "	\
	"WHERE pubkey = ?1 AND "					\
	"kind = ?2 AND " EVENTS_SQL_REPLACEABLE("kind") " "		\
	"ORDER BY created_at DESC, id ASC LIMIT 1"
/*
 * store/scan.c's author streams, newest first after a keyset cursor
 * (created_at, id): an author's events of every kind, one replaceable
 * kind of an author, and every event by time. Every scan reads the same columns
 * (struct cols in scan.c), and x adds more after them ("" for none; a
 * scan that hands the rows out as it reads them adds the event's JSON).
 */
#define SCAN_SQL_AUTHOR_X(x)						\
	"SELECT rowid, created_at, id, pubkey, kind, expires_at" x " FROM "	\
	"events WHERE "							\
	"pubkey = ?1 AND created_at <= ?3 AND created_at >= ?4 AND "	\
	"(created_at < ?3 OR id > ?5) ORDER BY created_at DESC, id ASC "	\
	"LIMIT ?6"
#define SCAN_SQL_AUTHOR_REPLACEABLE_X(x)				\
	"SELECT rowid, created_at, id, pubkey, kind, expires_at" x " FROM "	\
	"events WHERE "							\
	"pubkey = ?1 AND kind = ?2 AND " EVENTS_SQL_REPLACEABLE("kind") " "	\
	"AND created_at <= ?3 AND created_at >= ?4 AND (created_at < ?3 "	\
	"OR id > ?5) ORDER BY created_at DESC, id ASC LIMIT ?6"
/*
 * A scan by time alone, in the order of events_time_id (created_at DESC,
 * id; migration 016): read off the index with no sort at all.
 */
#define SCAN_SQL_TIME_X(x)						\
	"SELECT rowid, created_at, id, pubkey, kind, expires_at" x " FROM "	\
	"events WHERE created_at <= ?3 AND created_at >= ?4 AND "	\
	"(created_at < ?3 OR id > ?5) ORDER BY created_at DESC, id ASC "	\
	"LIMIT ?6"
#define SCAN_SQL_AUTHOR			SCAN_SQL_AUTHOR_X("")
#define SCAN_SQL_AUTHOR_REPLACEABLE	SCAN_SQL_AUTHOR_REPLACEABLE_X("")
#define SCAN_SQL_TIME			SCAN_SQL_TIME_X("")
#define EVENTS_SQL_AUTHOR_ITEMS						\
	"SELECT created_at, id FROM events WHERE pubkey = ?1 AND "	\
	"created_at >= ?2 AND (?3 < 0 OR created_at <= ?3) "		\
	"ORDER BY created_at, id LIMIT ?4"

/* The statement resolving a job's author source, or NULL (store/jobs.c). */
const char	*store_job_resolve_sql(enum store_job_source);

/*
 * A cache a file of the store keeps beside the connection. Its owner is
 * the only file that knows its type: it fills the slot at first use and
 * sets the hook store_close calls to free it, so the store itself never
 * calls up into the files that use it.
 */
enum store_cache_id {
	STORE_CACHE_NAMES,		/* store/names.c */
	STORE_CACHE_WITHDRAWN,		/* store/withdrawn.c */
	STORE_CACHE_RULES,		/* store/rules.c */
	STORE_CACHE_ROWJSON,		/* store/rowjson.c */
	STORE_CACHES
};
struct store_cache {
	void	*data;			/* NULL until first use */
	void	(*free)(void *);
};
struct store_cache	*store_cache_slot(struct store *, enum store_cache_id);

/*
 * store_cursors_summary's last answer and what the database looked like
 * then (store/cursors.c): this connection's change count and the data
 * version other connections' commits move.
 */
struct store_cursor_cache {
	struct store_cursor_summary	sum;
	int64_t				changes, data_version;
	int				valid;
};
struct store_cursor_cache	*store_cursor_cache(struct store *);

/*
 * A pass over events in rowid order kept in meta across restarts (the tag
 * index fill, the rules' conversion), its keys NAME_next and NAME_end:
 * store_fill_pos gives 1 with *next and *end, 0 when no pass is pending,
 * -1 on error; store_fill_save moves it to next, or ends it (both rows
 * deleted) when next passed end; 0 or -1.
 */
int		 store_fill_pos(struct store *, const char *name, int64_t *next,
		    int64_t *end);
int		 store_fill_save(struct store *, const char *name, int64_t next,
		    int64_t end);

/* An event row with id left: tell the listener (store_on_removed). */
void		 store_removed(struct store *, const uint8_t id[32]);

/*
 * The highest inbox seq that is committed: inside a transaction, the last
 * seq handed out before its outermost level began (rows queued by the open
 * batch are not); outside one, INT64_MAX. store/inbox.c takes no row past
 * it, so the uplink never forwards an event a crash could still take back.
 */
int64_t		 store_inbox_committed(const struct store *);

/* The connection, owned by the store; valid until store_close. */
sqlite3		*store_db(struct store *);
/*
 * The totals of the events table (rows, bytes of JSON) are kept by the
 * store rather than by triggers (a trigger per row cost as much as the
 * rest of the insert). store_totals_add notes a change made by the open
 * transaction at its current level: a released savepoint passes it to the
 * level around it, a rolled-back level drops it, and the outermost commit
 * writes the sum into event_totals with one UPDATE inside the same
 * transaction, so the totals commit or vanish with the rows. 0, or -1
 * (logged) outside a transaction. Only src/store/events.c calls it.
 */
int		 store_totals_add(struct store *, int64_t count, int64_t bytes);
/* The changes noted by every open level and not yet written. */
void		 store_totals_pending(const struct store *, int64_t *count,
		    int64_t *bytes);

/*
 * A prepared statement for sql, compiled once and kept open until
 * store_close. sql is compared by content (string literals are the normal
 * use). The statement comes back reset with its bindings cleared; the store
 * owns it: never finalize it. Call store_stmt_done() (or sqlite3_reset)
 * once its rows are read, so no read transaction stays open and blocks the
 * WAL checkpoint. NULL (logged) if sql does not compile or the cache of
 * STORE_MAX_STMTS statements is full.
 */
sqlite3_stmt	*store_stmt(struct store *, const char *sql);
/* Reset stmt and clear its bindings. NULL is a no-op. */
void		 store_stmt_done(sqlite3_stmt *stmt);

/*
 * Step stmt, which returns no rows, and release it (store_stmt_done).
 * 0, or -1 logged as "store: <what>: <SQLite's message>".
 */
int		 store_step_done(struct store *, sqlite3_stmt *stmt, const char *what);
/* Log a failed bind of stmt as "store: <what>: bind: ..." and release it. */
void		 store_bind_fail(struct store *, sqlite3_stmt *stmt, const char *what);
/*
 * Run sql (no parameters), which must give exactly one row, and read its
 * first two columns as integers into *a and *b. 0, or -1 (logged with
 * what) when it fails or gives no row.
 */
int		 store_row_two(struct store *, const char *sql, int64_t *a,
		    int64_t *b, const char *what);

/*
 * Bind a tag value as the tag index keeps it (store/tags.c): 64 lowercase
 * hex digits as their 32 bytes, anything else as text. A SQLite result
 * code.
 */
int		 store_tag_value_bind(sqlite3_stmt *stmt, int idx,
		    const char *v, size_t len);

#endif
