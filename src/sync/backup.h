/*
 * backup.h — `cacheboxctl backup FILE`, on the loop: one online backup of
 * the store at a time (store/backup.h), a step of BACKUP_STEP_PAGES pages
 * every BACKUP_STEP_GAP_MS, each taken at the top of a round after
 * ingest's commit, so the drain and the relay endpoint keep running while
 * it copies.
 */
#ifndef CACHEBOX_SYNC_BACKUP_H
#define CACHEBOX_SYNC_BACKUP_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

struct loop;
struct store;
struct backup;

/* Where the last copy is (backup_state). */
enum backup_state {
	BACKUP_IDLE,		/* none since start */
	BACKUP_RUNNING,
	BACKUP_DONE,		/* written, synced and renamed into place */
	BACKUP_FAILED,		/* its temporary file removed */
};

/* NULL on allocation failure. */
struct backup	*backup_new(struct loop *, struct store *);
/* Stop any copy in progress (its temporary file is removed) and free. */
void		 backup_free(struct backup *);
/*
 * Begin copying the store to path (absolute). 0, or -1 with a reason in
 * err: a copy is already running, or the file cannot be made.
 */
int		 backup_start(struct backup *, const char *path, char *err,
		    size_t errlen);
/*
 * The last copy's state, and its file (absolute; "" before the first)
 * into *file when file is not NULL: owned by b, valid until the next
 * backup_start.
 */
enum backup_state backup_state(const struct backup *, const char **file);
/*
 * Call fn(arg, file, ok) each time a copy ends, done (ok) or failed,
 * after its file is in place or removed; one listener (fn NULL: none).
 */
void		 backup_on_end(struct backup *, void (*fn)(void *,
		    const char *, bool), void *arg);
/*
 * The last copy's state: {"state": "idle" | "running" | "done" | "failed",
 * "file", "pages_done", "pages_total", "error"}. A new object the caller
 * owns.
 */
cJSON		*backup_status_json(const struct backup *);

#endif
