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
/*
 * Open DIR/cachebox.db for reading only, beside a running daemon (WAL:
 * readers never block the writer): the same identification as
 * store_open, no pragma, no migration, nothing written (query_only, no
 * checkpoint on close). The database must be at this binary's newest
 * version. 0 with *out set, or -1 with a one-line message in err.
 */
int		 store_open_readonly(struct store **out, const char *dir,
		    char *err, size_t errlen);
/* Finalize every cached statement and close the database. NULL is a no-op. */
void		 store_close(struct store *);

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

/*
 * Be told of every event row that leaves (a rule, retention), from inside
 * the write, with its id; one listener (ingest, which keeps recent ids).
 * fn must not write the store.
 */
typedef void	(*store_removed_fn)(void *arg, const uint8_t id[32]);
void		 store_on_removed(struct store *, store_removed_fn, void *arg);

/* Whether read-ahead is off on the database's descriptor (store.c). */
bool		 store_random_reads(const struct store *);

/*
 * Bytes of pages this connection wrote to the database or its WAL since
 * it opened (SQLite's dirty-page writes times the page size; a WAL
 * checkpoint's copies into the database are not in it), 0 if unknown.
 */
int64_t		 store_pages_written_bytes(struct store *);

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
 * A read section: the reads until store_read_end share one read
 * transaction (one snapshot, one WAL lock) instead of each statement
 * opening its own. Opened only outside any transaction (inside one the
 * reads share it already): true when this call opened it, and
 * store_read_end then ends it (pass what begin returned). Nothing may
 * write or begin a transaction inside it (store_begin refuses), and it
 * never outlives the turn of the loop that opened it, so a checkpoint
 * is never held back by it.
 */
bool		 store_read_begin(struct store *);
void		 store_read_end(struct store *, bool opened);

/*
 * Run sql (one or more statements, no rows expected) outside the statement
 * cache, for rare maintenance. 0, or -1 (logged).
 */
int		 store_exec(struct store *, const char *sql);

#endif
