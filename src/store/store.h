/*
 * store.h — the local SQLite store: opening DIR/cachebox.db, refusing files
 * that are not ours, migrating the schema, transactions and a cache of
 * prepared statements. The per-table families (events, inbox, cursors, ...)
 * live in their own files under src/store/ and use the handle from store_db().
 *
 * A file this module refuses is never written: it is checked before any
 * pragma or migration touches it. Accepted are (a) an empty or new file,
 * (b) a database whose application_id is cachebox's. Refused are anything
 * SQLite cannot read as a database, a database of another program
 * (a foreign application_id, or application_id 0 with a user_version or
 * tables of its own), and a cachebox database whose user_version is newer
 * than the newest migration compiled into this binary.
 *
 * Every function runs synchronously on the loop thread; callers keep
 * transactions short (one per ingested batch, never one per event).
 */
#ifndef CACHEBOX_STORE_STORE_H
#define CACHEBOX_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* File name of the database inside the state directory. */
#define STORE_DB_NAME		"cachebox.db"
/* PRAGMA application_id of a cachebox database: "CBOX". */
#define STORE_APPLICATION_ID	0x43424f58

struct store;

/*
 * Open (creating if absent) DIR/cachebox.db, check it is ours, set the
 * pragmas (WAL, synchronous=NORMAL, busy timeout, bounded cache, foreign
 * keys, temp store in memory) and apply every migration it lacks, each in
 * its own transaction. 0 with *out set (free with store_close), or -1 with
 * a one-line message in err and *out NULL.
 */
int		 store_open(struct store **out, const char *dir, char *err,
		    size_t errlen);
/* Finalize every cached statement and close the database. NULL is a no-op. */
void		 store_close(struct store *);

/* The connection, owned by the store; valid until store_close. */
sqlite3		*store_db(struct store *);
/*
 * True once SQLite has reported corruption in this database (in any
 * statement, read or write): from then on the store refuses every write
 * and says so once in the log; reads still run.
 */
bool		 store_damaged(struct store *);

/* Full path of the database file, owned by the store. */
const char	*store_path(const struct store *);

/*
 * Resize the page cache to kib KiB (store.cache_kib; store_open starts with
 * STORE_CACHE_KIB). 0, or -1 (logged) for kib < 1 or a SQLite error.
 */
int		 store_set_cache_kib(struct store *, int64_t kib);

/* PRAGMA user_version of the open database, or -1 on error. */
int		 store_schema_version(struct store *);
/* Newest migration compiled into this binary (0 if the table is broken). */
int		 store_schema_latest(void);

/*
 * Transactions nest, at most STORE_MAX_TX_DEPTH levels. The outermost
 * store_begin runs BEGIN IMMEDIATE (the write lock is taken up front, so
 * a later write cannot fail with BUSY half-way); inner ones set a
 * savepoint. store_commit and store_rollback end the innermost level:
 * rollback of an inner level undoes only that level. Each returns 0, or
 * -1 (logged) on a SQLite error; a failed commit of the outermost level
 * rolls the whole transaction back.
 */
int		 store_begin(struct store *);
int		 store_commit(struct store *);
int		 store_rollback(struct store *);
/* Nesting depth: 0 outside any transaction. */
int		 store_tx_depth(const struct store *);

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
 * Run sql (one or more statements, no rows expected) outside the statement
 * cache, for rare maintenance. 0, or -1 (logged).
 */
int		 store_exec(struct store *, const char *sql);

#endif
