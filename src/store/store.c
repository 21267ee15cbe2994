/*
 * store.c — opens the local SQLite database, decides whether it is ours,
 * migrates it, and hands out transactions and cached prepared statements.
 *
 * It owns the sqlite3 connection and every statement compiled through
 * store_stmt(). It never writes a file it has not first identified as a
 * cachebox database (or an empty one): identification only reads the
 * header, and nothing that could change the file (journal_mode, a
 * migration, a checkpoint on close) runs before it has passed.
 *
 * Migrations are the files sql/sqlite/NNN_name.sql compiled into the binary
 * (core/embed.h), numbered contiguously from 001. PRAGMA user_version holds
 * the number of the last one applied; each is applied in its own
 * BEGIN IMMEDIATE transaction together with the new user_version, so a power
 * cut leaves the database at the previous version, never half-way.
 */
#include <sys/stat.h>
#include <fcntl.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/embed.h"
#include "core/errf.h"
#include "core/limits.h"
#include "core/log.h"
#include "store/store.h"
#include "store/store_sql.h"

/* Open addressing with at most half the slots used keeps probes short. */
#define STORE_STMT_SLOTS	(2 * STORE_MAX_STMTS)
_Static_assert((STORE_STMT_SLOTS & (STORE_STMT_SLOTS - 1)) == 0,
    "statement slots must be a power of two");

struct store_stmt_slot {
	char		*sql;		/* NULL: slot free */
	uint32_t	 hash;
	sqlite3_stmt	*stmt;
};

struct store {
	sqlite3			*db;
	char			 path[STORE_MAX_PATH];
	int			 depth;		/* transaction nesting */
	int64_t			 inbox_seq_begun; /* see store_inbox_committed */
	bool			 reading;	/* a read section is open (depth 0) */
	/* event_totals changes not yet written, per transaction level */
	int64_t			 tot_count[STORE_MAX_TX_DEPTH];
	int64_t			 tot_bytes[STORE_MAX_TX_DEPTH];
	size_t			 nstmts;
	struct store_stmt_slot	 slots[STORE_STMT_SLOTS];
	struct log_rl		 rl_aborted;	/* rolled back under us */
	unsigned		 corrupt_base;	/* store_corrupt_seen at open */
	int			 damaged;	/* corruption seen: no writes */
	int			 readonly;	/* store_open_readonly */
	bool			 random_reads;	/* read-ahead off: store_advise_random */
	struct store_cache	 caches[STORE_CACHES];	/* store_cache_slot */
	struct store_cursor_cache cursor_cache;	/* store/cursors.c */
	store_removed_fn	 removed_fn;	/* store_on_removed */
	void			*removed_arg;
};

/*
 * SQLite reports every corruption it detects through its error log, from
 * whatever statement met it (a read deep inside a query as well). The log
 * callback only counts; each store compares the count with the one it
 * opened at. A process holds one store, so a count for the process is
 * enough (tests that open several close each before the next).
 */
static unsigned	store_corrupt_seen;

static void
store_sqlite_log(void *arg, int code, const char *msg)
{
	if ((code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB)
		store_corrupt_seen++;
}

/* Install the log callback once, before SQLite initializes itself. */
static void
store_sqlite_setup(void)
{
	static int	done;

	if (done)
		return;
	done = 1;
	(void)sqlite3_config(SQLITE_CONFIG_LOG, store_sqlite_log, NULL);
}

/*
 * True once SQLite has met corruption in this store: say so once, loudly,
 * and refuse every write from then on (a write into a damaged b-tree can
 * spread the damage); reads go on, so the status keeps answering.
 */
static int
store_check_damage(struct store *st)
{
	if (st->damaged || store_corrupt_seen == st->corrupt_base)
		return st->damaged;
	st->damaged = 1;
	log_err("store: %s is damaged (SQLite found corruption); cacheboxd "
	    "writes nothing more to it. Stop the daemon and restore a backup "
	    "or move the file away; the status page stays up", st->path);
	return 1;
}

bool
store_damaged(struct store *st)
{
	return store_check_damage(st);
}

/*
 * Migration file names: digits, '_', a name, ".sql". Returns the number,
 * or -1 for a name that does not follow the pattern.
 */
static int
migration_number(const char *name)
{
	const char	*p;
	size_t		 len;
	long		 n = 0;

	for (p = name; *p >= '0' && *p <= '9'; p++) {
		n = n * 10 + (*p - '0');
		if (n > 999999)
			return -1;
	}
	if (p == name || *p != '_')
		return -1;
	len = strlen(p);
	if (len < 5 || strcmp(p + len - 4, ".sql") != 0)
		return -1;
	return (int)n;
}

/*
 * Check the embedded table: numbered 1, 2, 3, ... in order, each file
 * NUL-terminated with no NUL inside. Returns the newest number, or -1 with
 * err set.
 */
static int
migrations_check(char *err, size_t errlen)
{
	const struct embed_file	*f;
	int			 want = 1;

	for (f = store_migration_files; f->name != NULL; f++, want++) {
		if (migration_number(f->name) != want) {
			errf(err, errlen, "embedded migration %s: expected "
			    "number %03d (migrations are numbered from 001 "
			    "without gaps)", f->name, want);
			return -1;
		}
		if (strlen((const char *)f->data) != f->len) {
			errf(err, errlen, "embedded migration %s holds a "
			    "NUL byte", f->name);
			return -1;
		}
	}
	return want - 1;
}

int
store_schema_latest(void)
{
	int	n;

	n = migrations_check(NULL, 0);
	return n < 0 ? 0 : n;
}

/* The state directory must exist, be a directory and be writable. */
static int
store_check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat	sb;

	if (dir == NULL || *dir == '\0') {
		errf(err, errlen, "no state directory given");
		return -1;
	}
	if (stat(dir, &sb) == -1) {
		errf(err, errlen, "state directory %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		errf(err, errlen, "state directory %s: not a directory",
		    dir);
		return -1;
	}
	if (access(dir, W_OK | X_OK) == -1) {
		errf(err, errlen, "state directory %s is not writable: %s",
		    dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* An existing database file must be a regular file we may read and write. */
static int
store_check_file(const char *path, char *err, size_t errlen)
{
	struct stat	sb;

	if (stat(path, &sb) == -1) {
		if (errno == ENOENT)
			return 0;
		errf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		errf(err, errlen, "%s is not a regular file", path);
		return -1;
	}
	if (access(path, R_OK | W_OK) == -1) {
		errf(err, errlen, "%s is not writable: %s", path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* Run "PRAGMA name" or any one-integer query. Returns a SQLite code. */
static int
store_query_int(sqlite3 *db, const char *sql, int64_t *out)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(stmt, 0);
		rc = SQLITE_OK;
	} else if (rc == SQLITE_DONE)
		rc = SQLITE_ERROR;	/* a query of one row gave none */
	sqlite3_finalize(stmt);
	return rc;
}

/* A message for a failed identification query. */
static void
store_read_error(sqlite3 *db, const char *path, int rc, char *err,
    size_t errlen)
{
	switch (rc & 0xff) {
	case SQLITE_NOTADB:
		errf(err, errlen, "%s is not a cachebox database (file is "
		    "not a SQLite database)", path);
		break;
	case SQLITE_CORRUPT:
		errf(err, errlen, "%s is damaged (%s); refusing to touch "
		    "it", path, sqlite3_errmsg(db));
		break;
	default:
		errf(err, errlen, "cannot read %s: %s", path,
		    sqlite3_errmsg(db));
		break;
	}
}

/*
 * Decide from the header alone whether the file is ours. Sets *version to
 * its user_version. 0, or -1 with err set; nothing is written either way.
 */
static int
store_identify(sqlite3 *db, const char *path, int latest, int *version,
    char *err, size_t errlen)
{
	int64_t	appid = 0, uv = 0, nobj = 0;
	int	rc;

	if ((rc = store_query_int(db, "PRAGMA application_id", &appid)) != 0 ||
	    (rc = store_query_int(db, "PRAGMA user_version", &uv)) != 0 ||
	    (rc = store_query_int(db, "SELECT count(*) FROM sqlite_master",
	    &nobj)) != 0) {
		store_read_error(db, path, rc, err, errlen);
		return -1;
	}
	if (appid != 0 && appid != STORE_APPLICATION_ID) {
		errf(err, errlen, "%s is not a cachebox database "
		    "(application_id 0x%08x belongs to another program); "
		    "refusing to touch it", path, (unsigned)appid);
		return -1;
	}
	if (appid == 0 && (uv != 0 || nobj != 0)) {
		errf(err, errlen, "%s is not a cachebox database (it holds "
		    "another program's tables); refusing to touch it", path);
		return -1;
	}
	if (uv < 0) {
		errf(err, errlen, "%s has an invalid database version %lld;"
		    " refusing to touch it", path, (long long)uv);
		return -1;
	}
	if (uv > latest) {
		errf(err, errlen, "database version %lld is newer than this "
		    "cacheboxd supports (%d); refusing to touch it",
		    (long long)uv, latest);
		return -1;
	}
	*version = (int)uv;
	return 0;
}

/* Run sql, which must succeed; err gets "what: message" otherwise. */
static int
store_exec_err(sqlite3 *db, const char *sql, const char *what, char *err,
    size_t errlen)
{
	char	*msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		errf(err, errlen, "%s: %s", what,
		    msg != NULL ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/*
 * Connection settings. WAL with synchronous=NORMAL is what makes a power
 * cut lose at most the last commits and never corrupt the file; in the
 * rollback journal NORMAL is not safe, so a file system that refuses WAL
 * refuses the store.
 */
static int
store_pragmas(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	char		 sql[256];
	sqlite3_stmt	*stmt;
	int		 wal = 0;

	/* page_size only takes on a new file; a WAL database keeps its own. */
	snprintf(sql, sizeof(sql), "PRAGMA page_size = %d; "
	    "PRAGMA foreign_keys = ON; "
	    "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -%d; "
	    "PRAGMA journal_size_limit = %d; PRAGMA wal_autocheckpoint = %d;",
	    STORE_PAGE_BYTES, STORE_CACHE_KIB, STORE_WAL_LIMIT_BYTES,
	    STORE_WAL_CHECKPOINT_PAGES);
	if (store_exec_err(db, sql, path, err, errlen) == -1)
		return -1;
	if (sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &stmt,
	    NULL) != SQLITE_OK) {
		errf(err, errlen, "%s: journal_mode: %s", path,
		    sqlite3_errmsg(db));
		return -1;
	}
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		const unsigned char *mode = sqlite3_column_text(stmt, 0);

		wal = mode != NULL && strcmp((const char *)mode, "wal") == 0;
	}
	sqlite3_finalize(stmt);
	if (!wal) {
		errf(err, errlen, "%s: cannot switch to WAL journal mode "
		    "(%s)", path, sqlite3_errmsg(db));
		return -1;
	}
	return store_exec_err(db, "PRAGMA synchronous = NORMAL", path, err,
	    errlen);
}

/*
 * A migration may rebuild a table that others reference (SQLite cannot
 * alter a constraint in place), which only works with foreign keys off;
 * so they are off while migrations run, and each migration must leave
 * PRAGMA foreign_key_check empty before it may commit. 0, or -1 with err.
 */
static int
store_fk_check(sqlite3 *db, const char *what, char *err, size_t errlen)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &stmt,
	    NULL) != SQLITE_OK) {
		errf(err, errlen, "%s: %s", what, sqlite3_errmsg(db));
		return -1;
	}
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		errf(err, errlen, "%s: leaves a row of %s without the "
		    "row it references", what, sqlite3_column_text(stmt, 0));
	else if (rc != SQLITE_DONE)
		errf(err, errlen, "%s: %s", what, sqlite3_errmsg(db));
	sqlite3_finalize(stmt);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Apply migration f as version v in one transaction; rolled back on error. */
static int
store_migrate_one(sqlite3 *db, const struct embed_file *f, int v, char *err,
    size_t errlen)
{
	char	sql[128], what[128];

	snprintf(what, sizeof(what), "migration %s", f->name);
	if (store_exec_err(db, "BEGIN IMMEDIATE", what, err, errlen) == -1)
		return -1;
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d; "
	    "PRAGMA application_id = %d;", v, STORE_APPLICATION_ID);
	if (store_exec_err(db, (const char *)f->data, what, err, errlen) == -1 ||
	    store_fk_check(db, what, err, errlen) == -1 ||
	    store_exec_err(db, sql, what, err, errlen) == -1 ||
	    store_exec_err(db, "COMMIT", what, err, errlen) == -1) {
		if (!sqlite3_get_autocommit(db))
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	log_info("store: applied migration %s (schema version %d)", f->name, v);
	return 0;
}

/*
 * Bring the schema from version `from` up to the newest one. A migration
 * that builds an index sorts every row of the store: its sorter spills to
 * a temporary file (temp_store FILE; the service's private /var/tmp), so
 * the memory it takes does not grow with the store (in memory it was
 * 85 MiB for a million events).
 */
static int
store_migrate(sqlite3 *db, int from, char *err, size_t errlen)
{
	const struct embed_file	*f;
	int			 v = 0, rc = 0;

	if (store_exec_err(db, "PRAGMA foreign_keys = OFF; "
	    "PRAGMA temp_store = FILE", "migrations", err, errlen) == -1)
		return -1;
	for (f = store_migration_files; f->name != NULL && rc == 0; f++) {
		v++;
		if (v > from && from > 0)
			log_info("store: applying migration %s (a large store "
			    "may take minutes)", f->name);
		if (v > from)
			rc = store_migrate_one(db, f, v, err, errlen);
	}
	if (store_exec_err(db, "PRAGMA foreign_keys = ON; "
	    "PRAGMA temp_store = MEMORY", "migrations", rc == 0 ? err : NULL,
	    errlen) == -1)
		rc = -1;
	return rc;
}

/* Close a connection we refuse, without checkpointing into the file. */
static void
store_close_refused(sqlite3 *db)
{
	if (db == NULL)
		return;
	sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_close(db);
}

/*
 * No read-ahead on the database's descriptor. SQLite reads a page at a
 * time, at random but for scans; read-ahead turns a scan into large folios
 * in the page cache, and a kernel that keeps them whole (ext4 on Linux
 * 6.x) then dirties, and writes back, a whole folio for each 4 KiB page a
 * checkpoint writes into one. tests/bench/scale.sh 100000 100, five runs
 * each: 24-27 KB written per drained event with the advice, 28-70 KB
 * without (1,000 random page writes into a file read sequentially before:
 * 58.8 MB of write-back, 4.0 MB after random reads).
 *
 * SQLite does not hand out its descriptor: the unix VFS keeps it after
 * three pointers at the head of its file object, and what is found there
 * is used only when it is the database file itself (test_store checks that
 * it is found).
 */
static void
store_advise_random(struct store *st)
{
	struct unix_file_head {
		const void	*methods, *vfs, *inode;
		int		 fd;
	}			*head;
	sqlite3_file		*f = NULL;
	sqlite3_vfs		*vfs = sqlite3_vfs_find(NULL);
	struct stat		 a, b;

	if (vfs == NULL || strcmp(vfs->zName, "unix") != 0 ||
	    sqlite3_file_control(st->db, "main", SQLITE_FCNTL_FILE_POINTER,
	    &f) != SQLITE_OK || f == NULL || f->pMethods == NULL)
		return;
	head = (struct unix_file_head *)(void *)f;
	if (head->fd < 0 || fstat(head->fd, &a) == -1 ||
	    stat(st->path, &b) == -1 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		log_info("store: read-ahead left on (descriptor not found)");
		return;
	}
	st->random_reads = posix_fadvise(head->fd, 0, 0,
	    POSIX_FADV_RANDOM) == 0;
}

bool
store_random_reads(const struct store *st)
{
	return st->random_reads;
}

int64_t
store_pages_written_bytes(struct store *st)
{
	int		 cur = 0, hi = 0;
	sqlite3_stmt	*stmt;
	int64_t		 page = 0;

	if (st->db == NULL || sqlite3_db_status(st->db,
	    SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 0) != SQLITE_OK)
		return 0;
	if (sqlite3_prepare_v2(st->db, "PRAGMA page_size", -1, &stmt,
	    NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(stmt) == SQLITE_ROW)
		page = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return (int64_t)cur * page;
}

/* Open and identify; *db is left NULL on failure. */
static int
store_connect(struct store *st, int latest, char *err, size_t errlen)
{
	int	version, rc;

	rc = sqlite3_open_v2(st->path, &st->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		errf(err, errlen, "cannot open %s: %s", st->path,
		    st->db != NULL ? sqlite3_errmsg(st->db) :
		    sqlite3_errstr(rc));
		goto fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	/*
	 * Wait out another connection's lock from the first read on: the
	 * header read below otherwise fails at once while the daemon, or a
	 * second writer, restarts its WAL.
	 */
	if (sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS) != SQLITE_OK) {
		errf(err, errlen, "%s: busy_timeout: %s", st->path,
		    sqlite3_errmsg(st->db));
		goto fail;
	}
	if (store_identify(st->db, st->path, latest, &version, err,
	    errlen) == -1)
		goto fail;
	if (store_pragmas(st->db, st->path, err, errlen) == -1 ||
	    store_migrate(st->db, version, err, errlen) == -1) {
		sqlite3_close(st->db);
		st->db = NULL;
		return -1;
	}
	store_advise_random(st);
	return 0;
fail:
	store_close_refused(st->db);
	st->db = NULL;
	return -1;
}

int
store_open(struct store **out, const char *dir, char *err, size_t errlen)
{
	struct store	*st;
	int		 latest, n;

	*out = NULL;
	store_sqlite_setup();
	if ((latest = migrations_check(err, errlen)) == -1)
		return -1;
	if (store_check_dir(dir, err, errlen) == -1)
		return -1;
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	n = snprintf(st->path, sizeof(st->path), "%s/%s", dir, STORE_DB_NAME);
	if (n < 0 || (size_t)n >= sizeof(st->path)) {
		errf(err, errlen, "state directory path too long");
		free(st);
		return -1;
	}
	st->corrupt_base = store_corrupt_seen;
	if (store_check_file(st->path, err, errlen) == -1 ||
	    store_connect(st, latest, err, errlen) == -1) {
		free(st);
		return -1;
	}
	*out = st;
	return 0;
}

int
store_open_readonly(struct store **out, const char *dir, char *err,
    size_t errlen)
{
	struct store	*st;
	struct stat	 sb;
	int		 latest, version, n;

	*out = NULL;
	store_sqlite_setup();
	if ((latest = migrations_check(err, errlen)) == -1)
		return -1;
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	n = snprintf(st->path, sizeof(st->path), "%s/%s", dir, STORE_DB_NAME);
	if (n < 0 || (size_t)n >= sizeof(st->path) || stat(st->path,
	    &sb) == -1 || !S_ISREG(sb.st_mode)) {
		errf(err, errlen, "%s: no database there", st->path);
		free(st);
		return -1;
	}
	st->corrupt_base = store_corrupt_seen;
	st->readonly = 1;
	/*
	 * Read-write without create, then query_only: a WAL database needs
	 * its -shm (and a -wal) to be read at all, which a read-only open may
	 * not create while no daemon runs. Nothing else is ever written, and
	 * closing does not checkpoint.
	 */
	if (sqlite3_open_v2(st->path, &st->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS) != SQLITE_OK ||
	    store_identify(st->db, st->path, latest, &version, err,
	    errlen) == -1)
		goto fail;
	if (version != latest) {
		errf(err, errlen, "%s is at database version %d, this "
		    "program reads version %d: start cacheboxd once to migrate "
		    "it", st->path, version, latest);
		goto fail;
	}
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	if (store_exec_err(st->db, "PRAGMA query_only = 1", st->path, err,
	    errlen) == -1)
		goto fail;
	*out = st;
	return 0;
fail:
	if (err[0] == '\0')
		errf(err, errlen, "cannot open %s: %s", st->path,
		    st->db != NULL ? sqlite3_errmsg(st->db) : "out of memory");
	store_close_refused(st->db);
	free(st);
	return -1;
}

void
store_close(struct store *st)
{
	size_t	i;

	if (st == NULL)
		return;
	if (st->depth > 0) {
		log_warnx("store: closing inside a transaction; rolling back");
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	}
	for (i = 0; i < STORE_STMT_SLOTS; i++) {
		if (st->slots[i].sql == NULL)
			continue;
		sqlite3_finalize(st->slots[i].stmt);
		free(st->slots[i].sql);
	}
	/* A checkpoint writes into the file: not into a damaged one. */
	if (store_check_damage(st))
		sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
		    NULL);
	if (sqlite3_close(st->db) != SQLITE_OK)
		log_warnx("store: close %s: %s", st->path,
		    sqlite3_errmsg(st->db));
	for (i = 0; i < STORE_CACHES; i++)
		if (st->caches[i].data != NULL && st->caches[i].free != NULL)
			st->caches[i].free(st->caches[i].data);
	free(st);
}

/* The meta keys of the pass name: NAME_next and NAME_end. */
static int
fill_keys(const char *name, char next[64], char end[64])
{
	return snprintf(next, 64, "%s_next", name) >= 64 ||
	    snprintf(end, 64, "%s_end", name) >= 64 ? -1 : 0;
}

int
store_fill_pos(struct store *st, const char *name, int64_t *next,
    int64_t *end)
{
	sqlite3_stmt	*stmt;
	char		 kn[64], ke[64];
	int		 rc, ret = 0;

	if (fill_keys(name, kn, ke) == -1 || (stmt = store_stmt(st, "SELECT "
	    "(SELECT value FROM meta WHERE key = ?1), (SELECT value FROM meta "
	    "WHERE key = ?2)")) == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 1, kn, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(stmt, 2, ke, -1, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, name);
		return -1;
	}
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) ==
	    SQLITE_INTEGER && sqlite3_column_type(stmt, 1) == SQLITE_INTEGER) {
		*next = sqlite3_column_int64(stmt, 0);
		*end = sqlite3_column_int64(stmt, 1);
		ret = 1;
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW) {
		log_warnx("store: %s: %s", name, sqlite3_errmsg(st->db));
		return -1;
	}
	return ret;
}

int
store_fill_save(struct store *st, const char *name, int64_t next,
    int64_t end)
{
	sqlite3_stmt	*stmt;
	char		 kn[64], ke[64];

	int		 rc;

	if (fill_keys(name, kn, ke) == -1)
		return -1;
	if (next > end) {
		if ((stmt = store_stmt(st, "DELETE FROM meta WHERE key IN "
		    "(?1, ?2)")) == NULL)
			return -1;
		rc = sqlite3_bind_text(stmt, 2, ke, -1, SQLITE_STATIC);
	} else {
		if ((stmt = store_stmt(st, "UPDATE meta SET value = ?2 WHERE "
		    "key = ?1")) == NULL)
			return -1;
		rc = sqlite3_bind_int64(stmt, 2, next);
	}
	if (rc != SQLITE_OK || sqlite3_bind_text(stmt, 1, kn, -1,
	    SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, name);
		return -1;
	}
	return store_step_done(st, stmt, name);
}

void
store_on_removed(struct store *st, store_removed_fn fn, void *arg)
{
	st->removed_fn = fn;
	st->removed_arg = arg;
}

void
store_removed(struct store *st, const uint8_t id[32])
{
	if (st->removed_fn != NULL)
		st->removed_fn(st->removed_arg, id);
}

struct store_cache *
store_cache_slot(struct store *st, enum store_cache_id id)
{
	return &st->caches[id];
}

struct store_cursor_cache *
store_cursor_cache(struct store *st)
{
	return &st->cursor_cache;
}

sqlite3 *
store_db(struct store *st)
{
	return st->db;
}

const char *
store_path(const struct store *st)
{
	return st->path;
}

int
store_schema_version(struct store *st)
{
	int64_t	v = 0;

	if (store_query_int(st->db, "PRAGMA user_version", &v) != SQLITE_OK) {
		log_warnx("store: user_version: %s", sqlite3_errmsg(st->db));
		return -1;
	}
	return (int)v;
}

int
store_set_cache_kib(struct store *st, int64_t kib)
{
	char	sql[64];

	if (kib < 1 || kib > INT32_MAX) {
		log_warnx("store: cache of %lld KiB refused", (long long)kib);
		return -1;
	}
	snprintf(sql, sizeof(sql), "PRAGMA cache_size = -%lld", (long long)kib);
	return store_exec(st, sql);
}

int
store_exec(struct store *st, const char *sql)
{
	char	*msg = NULL;

	if (store_check_damage(st) && strncmp(sql, "ROLLBACK", 8) != 0)
		return -1;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		log_warnx("store: %s: %s", sql,
		    msg != NULL ? msg : sqlite3_errmsg(st->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int
store_tx_depth(const struct store *st)
{
	return st->depth;
}

/*
 * The last inbox seq handed out, read as the outermost transaction begins:
 * the daemon is the store's only writer, so every row up to it is
 * committed. 0 before the inbox exists (a migration's transaction) or
 * when the read fails: nothing is taken from the inbox in that
 * transaction, which only delays forwarding to the next one.
 */
static int64_t
store_inbox_seq_now(struct store *st)
{
	sqlite3_stmt	*s;
	int64_t		 v = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT seq FROM sqlite_sequence "
	    "WHERE name = 'inbox'", -1, &s, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

int
store_begin(struct store *st)
{
	char	sql[32];

	if (st->depth == STORE_MAX_TX_DEPTH) {
		log_warnx("store: transactions nested over %d levels",
		    STORE_MAX_TX_DEPTH);
		return -1;
	}
	if (st->reading) {
		log_warnx("store: a write inside a read section");
		return -1;
	}
	if (st->depth == 0)
		snprintf(sql, sizeof(sql), "BEGIN IMMEDIATE");
	else
		snprintf(sql, sizeof(sql), "SAVEPOINT sp%d", st->depth);
	if (store_exec(st, sql) == -1)
		return -1;
	if (st->depth == 0)
		st->inbox_seq_begun = store_inbox_seq_now(st);
	st->tot_count[st->depth] = st->tot_bytes[st->depth] = 0;
	st->depth++;
	return 0;
}

int64_t
store_inbox_committed(const struct store *st)
{
	return st->depth > 0 ? st->inbox_seq_begun : INT64_MAX;
}

bool
store_read_begin(struct store *st)
{
	if (st->depth > 0 || st->reading || !sqlite3_get_autocommit(st->db))
		return false;
	if (store_exec(st, "BEGIN") == -1)
		return false;
	st->reading = true;
	return true;
}

void
store_read_end(struct store *st, bool opened)
{
	if (!opened || !st->reading)
		return;
	st->reading = false;
	if (store_exec(st, "COMMIT") == -1 && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

/*
 * Write the event_totals changes of the outermost level into the
 * transaction, just before its COMMIT. Nothing is written when SQLite has
 * already rolled the transaction back (the COMMIT then fails): outside a
 * transaction the UPDATE would count rows that are gone. 0 or -1.
 */
static int
store_totals_write(struct store *st)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (st->tot_count[0] == 0 && st->tot_bytes[0] == 0)
		return 0;
	if (sqlite3_get_autocommit(st->db))
		return 0;
	stmt = store_stmt(st, "UPDATE event_totals SET count = count + ?1, "
	    "bytes = bytes + ?2 WHERE id = 1");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_bind_int64(stmt, 1, st->tot_count[0]);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 2, st->tot_bytes[0]);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(stmt);
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE || sqlite3_changes(st->db) != 1) {
		log_warnx("store: event totals: %s", rc != SQLITE_DONE ?
		    sqlite3_errmsg(st->db) : "no row in event_totals");
		return -1;
	}
	return 0;
}

int
store_commit(struct store *st)
{
	char	sql[32];
	int	rc;

	if (st->depth == 0) {
		log_warnx("store: commit outside a transaction");
		return -1;
	}
	st->depth--;
	if (st->depth > 0) {
		snprintf(sql, sizeof(sql), "RELEASE sp%d", st->depth);
		rc = store_exec(st, sql);
		/* The level's changes now belong to the one around it. */
		st->tot_count[st->depth - 1] += st->tot_count[st->depth];
		st->tot_bytes[st->depth - 1] += st->tot_bytes[st->depth];
		return rc;
	}
	rc = store_totals_write(st);
	st->tot_count[0] = st->tot_bytes[0] = 0;
	if (rc == 0)
		rc = store_exec(st, "COMMIT");
	if (rc == -1 && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int
store_rollback(struct store *st)
{
	char	sql[64];

	if (st->depth == 0) {
		log_warnx("store: rollback outside a transaction");
		return -1;
	}
	st->depth--;
	st->tot_count[st->depth] = st->tot_bytes[st->depth] = 0;
	st->cursor_cache.valid = 0;	/* it may have seen what is undone */
	/* SQLite may already have rolled everything back (IOERR, FULL). */
	if (sqlite3_get_autocommit(st->db))
		return 0;
	if (st->depth == 0)
		return store_exec(st, "ROLLBACK");
	snprintf(sql, sizeof(sql), "ROLLBACK TO sp%d; RELEASE sp%d",
	    st->depth, st->depth);
	return store_exec(st, sql);
}

int
store_totals_add(struct store *st, int64_t count, int64_t bytes)
{
	if (st->depth == 0) {
		log_warnx("store: event totals changed outside a transaction");
		return -1;
	}
	st->tot_count[st->depth - 1] += count;
	st->tot_bytes[st->depth - 1] += bytes;
	return 0;
}

void
store_totals_pending(const struct store *st, int64_t *count, int64_t *bytes)
{
	int	i;

	*count = *bytes = 0;
	for (i = 0; i < st->depth; i++) {
		*count += st->tot_count[i];
		*bytes += st->tot_bytes[i];
	}
}

/* A statement that only reads (SELECT, WITH ... SELECT, PRAGMA reads). */
static int
store_sql_reads(const char *sql)
{
	sql += strspn(sql, " \t\n");
	return strncasecmp(sql, "SELECT", 6) == 0 ||
	    strncasecmp(sql, "WITH", 4) == 0;
}

/* FNV-1a over the SQL text. */
static uint32_t
store_hash(const char *s)
{
	uint32_t	h = 2166136261u;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

/* The slot holding sql, or the free slot where it belongs. */
static struct store_stmt_slot *
store_slot(struct store *st, const char *sql, uint32_t h)
{
	struct store_stmt_slot	*s;
	size_t			 i;

	i = h & (STORE_STMT_SLOTS - 1);
	for (;;) {
		s = &st->slots[i];
		if (s->sql == NULL ||
		    (s->hash == h && strcmp(s->sql, sql) == 0))
			return s;
		i = (i + 1) & (STORE_STMT_SLOTS - 1);
	}
}

sqlite3_stmt *
store_stmt(struct store *st, const char *sql)
{
	struct store_stmt_slot	*s;
	sqlite3_stmt		*stmt;
	uint32_t		 h;

	/*
	 * SQLite rolls a whole transaction back by itself on some errors
	 * (SQLITE_FULL, IOERR, ...). Until its owner ends the level, no
	 * statement may run: it would autocommit on its own, outside the
	 * batch it belongs to (a cursor without its page, rows without their
	 * totals). The owner's COMMIT then fails and its rows count as lost.
	 */
	if (store_check_damage(st) && !store_sql_reads(sql))
		return NULL;
	if (st->depth > 0 && sqlite3_get_autocommit(st->db)) {
		log_rl(&st->rl_aborted, LOG_LEVEL_WARN, "store: SQLite rolled "
		    "the open transaction back (disk full or I/O error?); "
		    "nothing runs until it ends");
		return NULL;
	}
	h = store_hash(sql);
	s = store_slot(st, sql, h);
	if (s->sql != NULL) {
		sqlite3_reset(s->stmt);
		sqlite3_clear_bindings(s->stmt);
		return s->stmt;
	}
	if (st->nstmts >= STORE_MAX_STMTS) {
		log_warnx("store: more than %d cached statements", STORE_MAX_STMTS);
		return NULL;
	}
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    &stmt, NULL) != SQLITE_OK) {
		log_warnx("store: prepare \"%s\": %s", sql,
		    sqlite3_errmsg(st->db));
		return NULL;
	}
	if ((s->sql = strdup(sql)) == NULL) {
		log_warn("store: strdup");
		sqlite3_finalize(stmt);
		return NULL;
	}
	s->hash = h;
	s->stmt = stmt;
	st->nstmts++;
	return stmt;
}

void
store_stmt_done(sqlite3_stmt *stmt)
{
	if (stmt == NULL)
		return;
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
}

int
store_step_done(struct store *st, sqlite3_stmt *stmt, const char *what)
{
	int	rc;

	rc = sqlite3_step(stmt);
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: %s: %s", what, sqlite3_errmsg(st->db));
		return -1;
	}
	return 0;
}

void
store_bind_fail(struct store *st, sqlite3_stmt *stmt, const char *what)
{
	log_warnx("store: %s: bind: %s", what, sqlite3_errmsg(st->db));
	store_stmt_done(stmt);
}

int
store_row_two(struct store *st, const char *sql, int64_t *a, int64_t *b,
    const char *what)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if ((stmt = store_stmt(st, sql)) == NULL)
		return -1;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*a = sqlite3_column_int64(stmt, 0);
		*b = sqlite3_column_int64(stmt, 1);
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW) {
		log_warnx("store: %s: %s", what, sqlite3_errmsg(st->db));
		return -1;
	}
	return 0;
}
