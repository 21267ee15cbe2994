/*
 * checkpoint.c — the daemon's WAL checkpoint (checkpoint.h): handed to the
 * checkpoint process when it runs, else in three steps in the loop. It
 * owns the snapshot connection, the checkpointing connection, the step,
 * the process's handle and the import's hold; what a checkpoint copies,
 * and when the WAL restarts, stay SQLite's.
 */
#define _GNU_SOURCE	/* sync_file_range */

#include <sys/stat.h>

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "store/checkpoint.h"
#include "store/ckpt_proc.h"
#include "store/store.h"
#include "store/store_sql.h"

enum ckpt_phase {
	CKPT_IDLE,	/* waiting for the WAL to reach the limit */
	CKPT_SEATED,	/* step 1 done: the snapshot holds the WAL's end */
	CKPT_COPIED,	/* step 2 done: the rest and the sync are due */
};

struct store_ckpt {
	struct loop		*loop;
	struct store		*st;
	sqlite3			*snap;		/* holds the snapshot of step 1 */
	sqlite3			*ck;		/* runs the checkpoints */
	int			 pages;
	int			 catch_up;	/* frames past which the hook copies all */
	int			 frames;	/* WAL frames at the last commit */
	int			 mark;		/* frames at the snapshot */
	bool			 committed;	/* since the last hook */
	enum ckpt_phase		 phase;
	uint64_t		 since_ms;	/* the phase's start */
	int			 wal_fd, db_fd;	/* -1: not found */
	bool			 db_out;	/* step 2's pages asked out */
	bool			 use_proc;	/* copies by the checkpoint process */
	struct ckpt_proc	*proc;		/* NULL: not running */
	bool			 asked;		/* a request in flight */
	int			 last_log;	/* WAL frames its last copy saw */
	uint64_t		 answered_ms;	/* its last reply */
	uint64_t		 restart_ms;	/* the next start, when down */
	bool			 hold;		/* writers asked to wait */
	uint64_t		 hold_ms;	/* since */
	int64_t			 proc_bytes;	/* written by the ones gone */
	struct store_ckpt_stats	 stats;
	struct log_rl		 rl;
};

/*
 * The descriptor behind one of a connection's files, when SQLite's unix
 * VFS keeps it where store.c's read-ahead advice finds it and it is the
 * file at path (else -1: nothing is asked of the kernel early).
 */
static int
file_fd(sqlite3 *db, int op, const char *path)
{
	struct unix_file_head {
		const void	*methods, *vfs, *inode;
		int		 fd;
	}		*head;
	sqlite3_file	*f = NULL;
	sqlite3_vfs	*vfs = sqlite3_vfs_find(NULL);
	struct stat	 a, b;

	if (vfs == NULL || strcmp(vfs->zName, "unix") != 0 ||
	    sqlite3_file_control(db, "main", op, &f) != SQLITE_OK ||
	    f == NULL || f->pMethods == NULL)
		return -1;
	head = (struct unix_file_head *)(void *)f;
	if (head->fd < 0 || fstat(head->fd, &a) == -1 || stat(path, &b) == -1 ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return -1;
	return head->fd;
}

/* Start writing fd's dirty pages out; never waits for them. */
static void
write_out(int fd)
{
#ifdef SYNC_FILE_RANGE_WRITE
	if (fd >= 0)
		(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
	(void)fd;
#endif
}

/*
 * The whole WAL copied and synced at once by the store's own connection,
 * from the WAL hook: the steps in flight are dropped. Not while the
 * checkpoint process holds the copy (the call would find it busy).
 */
static void
ckpt_catch_up(struct store_ckpt *ck, sqlite3 *db)
{
	int	log = 0, done = 0, rc;

	if (ck->phase == CKPT_SEATED)
		sqlite3_exec(ck->snap, "COMMIT", NULL, NULL, NULL);
	ck->phase = CKPT_IDLE;
	rc = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE,
	    &log, &done);
	if ((rc != SQLITE_OK && rc != SQLITE_BUSY) || log < 0) {
		ck->stats.failures++;
		log_rl(&ck->rl, LOG_LEVEL_WARN, "store: checkpoint: %s",
		    sqlite3_errmsg(db));
		return;
	}
	ck->stats.catch_ups++;
	ck->stats.copied = done;
	ck->stats.left = log > done ? log - done : 0;
	if (ck->stats.left == 0) {
		ck->stats.completions++;
		ck->frames = 0;
		ck->last_log = 0;
	}
}

/*
 * A commit with the checkpoint process up. The WAL restarts only when a
 * transaction begins on a WAL copied whole, and under an import's steady
 * batches the process's copies always end inside a transaction, the next
 * one open already: the WAL passed a GB in 200,000 events. Once a copy
 * has taken the WAL up to a commit past the limit, writers that can wait
 * (an import) are asked to hold until the process has copied what the
 * commits since added (store_ckpt_holding); the next transaction then
 * restarts the WAL. That comes first even past the catch-up mark: after
 * a restart the process's first copies reach the last commit only while
 * the next batch is open, and the batch after that passed the mark. Writers
 * that do not hold (a drain) could still leave it no gap: past the mark,
 * with a hold already asked or no whole copy to hold on, the process is
 * asked no more and the first commit after its last reply copies what is
 * left, in the loop.
 */
static void
proc_committed(struct store_ckpt *ck)
{
	if (!ck->hold && ck->frames >= ck->pages && ck->last_log > 0 &&
	    ck->stats.left == 0) {
		ck->hold = true;
		ck->hold_ms = loop_now_ms(ck->loop);
		return;
	}
	if (ck->frames >= ck->catch_up && !ck->asked)
		ckpt_catch_up(ck, store_db(ck->st));
}

/* After every commit of the store's connection (SQLite's WAL hook). */
static int
ckpt_wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct store_ckpt	*ck = arg;
	char			 wal[STORE_MAX_PATH + 8];

	(void)name;
	if (frames < ck->frames) {
		ck->last_log = 0;	/* the WAL restarted */
		ck->hold = false;
	}
	ck->frames = frames;
	ck->committed = true;
	if (ck->wal_fd == -1) {
		snprintf(wal, sizeof(wal), "%s-wal", store_path(ck->st));
		ck->wal_fd = file_fd(db, SQLITE_FCNTL_JOURNAL_POINTER, wal);
		if (ck->wal_fd == -1)
			ck->wal_fd = -2;	/* not found: do not look again */
	}
	write_out(ck->wal_fd);
	/*
	 * The WAL restarts from its start only when a transaction begins on
	 * a WAL copied whole, and under a steady stream of commits (an
	 * import) the steps never see one between two batches: the WAL grew
	 * without end (371 MB for 100,000 imported events). Past the
	 * catch-up mark (STORE_WAL_CATCH_UP_TIMES the limit) the whole WAL is
	 * copied here, right after the commit and before the next
	 * transaction, as SQLite's own checkpoint does: one long turn, the
	 * WAL bounded.
	 */
	if (ck->proc != NULL)
		proc_committed(ck);
	else if (frames >= ck->catch_up)
		ckpt_catch_up(ck, db);
	return SQLITE_OK;
}

/* The checkpoint process is gone: its socket closed, it reaped. */
static void
proc_down(struct store_ckpt *ck, uint64_t now_ms)
{
	loop_fd_del(ck->loop, ckpt_proc_fd(ck->proc));
	ckpt_proc_stop(ck->proc);
	ck->proc = NULL;
	ck->asked = false;
	ck->hold = false;
	ck->proc_bytes = ck->stats.proc_write_bytes;
	ck->stats.proc_deaths++;
	ck->restart_ms = now_ms + STORE_CKPT_PROC_RESTART_MS;
	log_rl(&ck->rl, LOG_LEVEL_WARN, "store: the checkpoint process is "
	    "gone; another starts in %d ms", STORE_CKPT_PROC_RESTART_MS);
}

/* One reply of the checkpoint process, as ckpt_run's own result. */
static void
proc_reply(struct store_ckpt *ck, const struct ckpt_proc_reply *r,
    uint64_t now_ms)
{
	ck->asked = false;
	ck->answered_ms = now_ms;
	if (r->write_bytes >= 0)
		ck->stats.proc_write_bytes = ck->proc_bytes + r->write_bytes;
	if ((r->rc != SQLITE_OK && r->rc != SQLITE_BUSY) || r->log < 0) {
		ck->stats.failures++;
		log_rl(&ck->rl, LOG_LEVEL_WARN, "store: checkpoint process: "
		    "%s", sqlite3_errstr(r->rc));
		return;
	}
	ck->last_log = r->log;
	ck->stats.copied = r->done;
	ck->stats.left = r->log > r->done ? r->log - r->done : 0;
	if (ck->stats.left == 0)
		ck->stats.completions++;
	else
		ck->stats.copies++;
	if (ck->hold && ck->stats.left == 0 && r->log >= ck->frames)
		ck->hold = false;	/* copied whole: the next one restarts */
}

static void
proc_readable(struct loop *loop, int fd, short revents, void *arg)
{
	struct store_ckpt	*ck = arg;
	struct ckpt_proc_reply	 r;
	int			 got;

	(void)fd;
	(void)revents;
	while ((got = ckpt_proc_read(ck->proc, &r)) == 1)
		proc_reply(ck, &r, loop_now_ms(loop));
	if (got == -1)
		proc_down(ck, loop_now_ms(loop));
}

static int
proc_start(struct store_ckpt *ck)
{
	if ((ck->proc = ckpt_proc_start(store_path(ck->st))) == NULL)
		return -1;
	if (loop_fd_add(ck->loop, ckpt_proc_fd(ck->proc), POLLIN,
	    proc_readable, ck) == -1) {
		ckpt_proc_stop(ck->proc);
		ck->proc = NULL;
		return -1;
	}
	/* The loop's own steps in flight are dropped: the process copies. */
	if (ck->phase == CKPT_SEATED)
		sqlite3_exec(ck->snap, "COMMIT", NULL, NULL, NULL);
	ck->phase = CKPT_IDLE;
	ck->stats.proc_starts++;
	return 0;
}

/*
 * A turn with the checkpoint process up: a request once the WAL is past
 * the limit, again at once while commits grow it past what the last copy
 * saw (short of the catch-up mark: proc_committed's), and
 * STORE_CKPT_SETTLE_MS after one a reader held back. A hold ends after
 * STORE_CKPT_HOLD_MS whatever the process did.
 */
static void
proc_turn(struct store_ckpt *ck, uint64_t now_ms)
{
	if (ck->hold && now_ms - ck->hold_ms >= STORE_CKPT_HOLD_MS) {
		ck->hold = false;
		ck->stats.hold_timeouts++;
	}
	if (ck->asked || ck->frames < ck->pages || store_damaged(ck->st))
		return;
	/*
	 * Past the catch-up mark the next commit copies the rest itself;
	 * unless writers hold, and no commit comes until the process copied.
	 */
	if (ck->frames >= ck->catch_up && !ck->hold)
		return;
	if (ck->frames <= ck->last_log && (ck->stats.left == 0 ||
	    now_ms - ck->answered_ms < STORE_CKPT_SETTLE_MS))
		return;
	if (ckpt_proc_ask(ck->proc) == -1) {
		proc_down(ck, now_ms);
		return;
	}
	ck->asked = true;
}

static void
ckpt_hook(struct loop *loop, void *arg)
{
	struct store_ckpt	*ck = arg;
	uint64_t		 now = loop_now_ms(loop);

	if (ck->use_proc && ck->proc == NULL && now >= ck->restart_ms &&
	    proc_start(ck) == -1)
		ck->restart_ms = now + STORE_CKPT_PROC_RESTART_MS;
	if (ck->proc != NULL) {
		proc_turn(ck, now);
		return;
	}
	if (ck->committed) {
		ck->committed = false;	/* that turn had its commit */
		return;
	}
	store_ckpt_step(ck, now);
}

static sqlite3 *
ckpt_open(const char *path, int flags)
{
	sqlite3	*db = NULL;

	if (sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		log_warnx("store: checkpoint connection to %s: %s", path,
		    db != NULL ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	/* Only the store's own connection checkpoints at its close. */
	sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	/* A first read: a connection knows the WAL only once it has read. */
	if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", NULL, NULL,
	    NULL) != SQLITE_OK) {
		log_warnx("store: checkpoint connection to %s: %s", path,
		    sqlite3_errmsg(db));
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

struct store_ckpt *
store_ckpt_new(struct loop *loop, struct store *st, int pages)
{
	struct store_ckpt	*ck;
	const char		*path = store_path(st);

	if ((ck = calloc(1, sizeof(*ck))) == NULL)
		return NULL;
	ck->loop = loop;
	ck->st = st;
	ck->pages = pages > 0 ? pages : STORE_WAL_CHECKPOINT_PAGES;
	ck->catch_up = STORE_WAL_CATCH_UP_TIMES * ck->pages;
	ck->wal_fd = -1;
	ck->snap = ckpt_open(path, SQLITE_OPEN_READONLY);
	ck->ck = ckpt_open(path, SQLITE_OPEN_READWRITE);
	if (ck->snap == NULL || ck->ck == NULL ||
	    (loop != NULL && loop_hook_add(loop, ckpt_hook, ck) == -1)) {
		sqlite3_close(ck->snap);
		sqlite3_close(ck->ck);
		free(ck);
		return NULL;
	}
	ck->db_fd = file_fd(ck->ck, SQLITE_FCNTL_FILE_POINTER, path);
	/* Replaces the automatic checkpoint (itself a WAL hook). */
	sqlite3_wal_hook(store_db(st), ckpt_wal_hook, ck);
	return ck;
}

void
store_ckpt_free(struct store_ckpt *ck)
{
	if (ck == NULL)
		return;
	if (ck->loop != NULL)
		loop_hook_del(ck->loop, ckpt_hook, ck);
	if (ck->proc != NULL) {
		loop_fd_del(ck->loop, ckpt_proc_fd(ck->proc));
		ckpt_proc_stop(ck->proc);
	}
	sqlite3_wal_autocheckpoint(store_db(ck->st), STORE_WAL_CHECKPOINT_PAGES);
	if (ck->phase == CKPT_SEATED)
		sqlite3_exec(ck->snap, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(ck->snap);
	sqlite3_close(ck->ck);
	free(ck);
}

/* A passive checkpoint; the frames it left in the WAL not copied, or -1. */
static int
ckpt_run(struct store_ckpt *ck)
{
	int	log = 0, done = 0, rc;

	rc = sqlite3_wal_checkpoint_v2(ck->ck, "main",
	    SQLITE_CHECKPOINT_PASSIVE, &log, &done);
	if ((rc != SQLITE_OK && rc != SQLITE_BUSY) || log < 0) {
		ck->stats.failures++;
		log_rl(&ck->rl, LOG_LEVEL_WARN, "store: checkpoint: %s",
		    sqlite3_errmsg(ck->ck));
		return -1;
	}
	ck->stats.copied = done;
	ck->stats.left = log > done ? log - done : 0;
	return ck->stats.left;
}

/* Step 1: a snapshot at the WAL's end. */
static void
ckpt_seat(struct store_ckpt *ck, uint64_t now_ms)
{
	if (sqlite3_exec(ck->snap, "BEGIN; SELECT count(*) FROM sqlite_schema",
	    NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_exec(ck->snap, "ROLLBACK", NULL, NULL, NULL);
		ck->stats.failures++;
		ck->since_ms = now_ms;	/* step 3 alone, after the settle */
		ck->db_out = true;
		ck->phase = CKPT_COPIED;
		return;
	}
	ck->mark = ck->frames;
	ck->since_ms = now_ms;
	ck->phase = CKPT_SEATED;
}

/* Step 3: the rest and the database's sync. */
static void
ckpt_complete(struct store_ckpt *ck)
{
	int	left = ckpt_run(ck);

	ck->phase = CKPT_IDLE;
	if (left == 0) {
		ck->stats.completions++;
		ck->frames = 0;		/* the next commit restarts the WAL */
	}
}

void
store_ckpt_step(struct store_ckpt *ck, uint64_t now_ms)
{
	if (store_damaged(ck->st))
		return;		/* a checkpoint writes into the file */
	switch (ck->phase) {
	case CKPT_IDLE:
		if (ck->frames >= ck->pages && now_ms - ck->since_ms >=
		    STORE_CKPT_SETTLE_MS)
			ckpt_seat(ck, now_ms);
		break;
	case CKPT_SEATED:
		if (ck->frames <= ck->mark) {
			/* Nothing written since: the whole WAL at once. */
			if (now_ms - ck->since_ms < STORE_CKPT_SETTLE_MS)
				break;
			sqlite3_exec(ck->snap, "COMMIT", NULL, NULL, NULL);
			ck->since_ms = now_ms;
			ckpt_complete(ck);
			break;
		}
		/* Step 2: up to the snapshot, no database sync. */
		(void)ckpt_run(ck);
		sqlite3_exec(ck->snap, "COMMIT", NULL, NULL, NULL);
		ck->db_out = false;
		ck->stats.copies++;
		ck->since_ms = now_ms;
		ck->phase = CKPT_COPIED;
		break;
	case CKPT_COPIED:
		if (!ck->db_out) {
			/* A turn of its own: queueing the writes takes a while. */
			write_out(ck->db_fd);
			ck->db_out = true;
			break;
		}
		if (now_ms - ck->since_ms < STORE_CKPT_SETTLE_MS)
			break;
		ck->since_ms = now_ms;
		ckpt_complete(ck);
		break;
	}
}

int
store_ckpt_use_process(struct store_ckpt *ck)
{
	if (ck->loop == NULL || proc_start(ck) == -1)
		return -1;
	ck->use_proc = true;
	return 0;
}

bool
store_ckpt_holding(const struct store_ckpt *ck)
{
	return ck != NULL && ck->hold;
}

pid_t
store_ckpt_process_pid(const struct store_ckpt *ck)
{
	return ck->proc != NULL ? ckpt_proc_pid(ck->proc) : 0;
}

void
store_ckpt_set_catch_up(struct store_ckpt *ck, int frames)
{
	ck->catch_up = frames;
}

int
store_ckpt_frames(const struct store_ckpt *ck)
{
	return ck->frames;
}

int
store_ckpt_phase(const struct store_ckpt *ck)
{
	return (int)ck->phase;
}

const struct store_ckpt_stats *
store_ckpt_stats(const struct store_ckpt *ck)
{
	return &ck->stats;
}
