/*
 * backup.c — the online backup of the store (backup.h). It owns the
 * destination connection and its temporary file. It never steps while
 * the store's connection has a transaction open (a copy taken there could
 * hold a batch that later rolls back; SQLite refuses it anyway), and never
 * renames an unfinished or unsynced copy into place.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "store/backup.h"
#include "store/store.h"
#include "store/store_sql.h"

struct store_backup {
	struct store	*st;
	sqlite3		*dst;
	sqlite3_backup	*b;
	char		 path[PATH_MAX];
	char		 tmp[PATH_MAX + 8];
	int		 done, total;
	char		 error[256];
};

/* fsync path (a file or a directory). 0 or -1. */
static int
sync_path(const char *path, int dir)
{
	int	fd, rc;

	if ((fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDWR) |
	    O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

static int
backup_fail(struct store_backup *bk, const char *what, const char *why)
{
	snprintf(bk->error, sizeof(bk->error), "%.128s: %.120s", what, why);
	if (bk->b != NULL)
		sqlite3_backup_finish(bk->b);
	bk->b = NULL;
	if (bk->dst != NULL)
		sqlite3_close(bk->dst);
	bk->dst = NULL;
	unlink(bk->tmp);
	return -1;
}

struct store_backup *
store_backup_start(struct store *st, const char *path, char *err,
    size_t errlen)
{
	struct store_backup	*bk;

	if ((bk = calloc(1, sizeof(*bk))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	bk->st = st;
	if (snprintf(bk->path, sizeof(bk->path), "%s", path) >=
	    (int)sizeof(bk->path)) {
		snprintf(err, errlen, "path too long");
		free(bk);
		return NULL;
	}
	snprintf(bk->tmp, sizeof(bk->tmp), "%s.tmp", path);
	unlink(bk->tmp);
	if (sqlite3_open_v2(bk->tmp, &bk->dst, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    (bk->b = sqlite3_backup_init(bk->dst, "main", store_db(st),
	    "main")) == NULL) {
		snprintf(err, errlen, "%s: %s", bk->tmp, bk->dst != NULL ?
		    sqlite3_errmsg(bk->dst) : "cannot open");
		if (bk->dst != NULL)
			sqlite3_close(bk->dst);
		unlink(bk->tmp);
		free(bk);
		return NULL;
	}
	return bk;
}

/* The copy is complete: close it, make it durable, give it its name. */
static int
backup_finish(struct store_backup *bk)
{
	char	dir[PATH_MAX];
	int	rc;

	rc = sqlite3_backup_finish(bk->b);
	bk->b = NULL;
	if (rc != SQLITE_OK)
		return backup_fail(bk, "finish", sqlite3_errmsg(bk->dst));
	if (sqlite3_close(bk->dst) != SQLITE_OK)
		return backup_fail(bk, "close", "cannot close the copy");
	bk->dst = NULL;
	snprintf(dir, sizeof(dir), "%s", bk->path);
	if (sync_path(bk->tmp, 0) == -1 || rename(bk->tmp, bk->path) == -1 ||
	    sync_path(dirname(dir), 1) == -1)
		return backup_fail(bk, bk->path, strerror(errno));
	return 0;
}

int
store_backup_step(struct store_backup *bk, int pages)
{
	int	rc;

	if (bk->b == NULL)
		return bk->error[0] != '\0' ? -1 : 0;
	if (store_tx_depth(bk->st) > 0)
		return 2;
	rc = sqlite3_backup_step(bk->b, pages);
	bk->total = sqlite3_backup_pagecount(bk->b);
	bk->done = bk->total - sqlite3_backup_remaining(bk->b);
	switch (rc) {
	case SQLITE_OK:
		return 1;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return 2;
	case SQLITE_DONE:
		return backup_finish(bk);
	default:
		return backup_fail(bk, "step", sqlite3_errstr(rc));
	}
}

void
store_backup_progress(const struct store_backup *bk, int *done, int *total)
{
	*done = bk->done;
	*total = bk->total;
}

const char *
store_backup_error(const struct store_backup *bk)
{
	return bk->error;
}

void
store_backup_free(struct store_backup *bk)
{
	if (bk == NULL)
		return;
	if (bk->b != NULL)
		sqlite3_backup_finish(bk->b);
	if (bk->dst != NULL) {
		sqlite3_close(bk->dst);
		unlink(bk->tmp);
	}
	free(bk);
}
