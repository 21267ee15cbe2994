/*
 * backup.h — a consistent copy of the open store into another file with
 * SQLite's online backup API, in steps, while the daemon keeps writing:
 * writes made through the store's own connection between steps are
 * carried into the copy by SQLite, so the finished copy holds every
 * transaction committed before it finished (and so every one committed
 * before it began).
 *
 * The copy is written to PATH.tmp and renamed to PATH only once it is
 * complete and on disk (fsync of the file and its directory): an
 * interrupted backup never leaves a half file under the final name.
 */
#ifndef CACHEBOX_STORE_BACKUP_H
#define CACHEBOX_STORE_BACKUP_H

#include <stddef.h>

struct store;
struct store_backup;

/*
 * Start a copy of st into path (which may exist: it is replaced at the
 * end). NULL with a one-line reason in err.
 */
struct store_backup *store_backup_start(struct store *st, const char *path,
		    char *err, size_t errlen);
/*
 * Copy up to pages more pages. 1 when more remain, 0 when the copy is
 * complete and renamed into place, 2 when it must wait (a transaction of
 * the store's connection is open: try again later), -1 on failure (the
 * reason in store_backup_error; the temporary file is removed).
 */
int		 store_backup_step(struct store_backup *, int pages);
/* Pages copied so far and in all (for a progress line). */
void		 store_backup_progress(const struct store_backup *, int *done,
		    int *total);
const char	*store_backup_error(const struct store_backup *);
/* Release; an unfinished copy's temporary file is removed. NULL is fine. */
void		 store_backup_free(struct store_backup *);

#endif
