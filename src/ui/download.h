/*
 * download.h — "Download backup" on the status page: one consistent copy
 * of the database at a time, made by the online backup (sync/backup.h)
 * into a file of the state directory the daemon names itself, then handed
 * once to whoever holds the random ticket the admin's `backup download`
 * answered. The web server streams the file from its descriptor; the
 * file is unlinked as it is handed over, so nothing is left behind when
 * the response ends, and a copy nobody fetched is removed after
 * BACKUP_DOWNLOAD_TTL_MS.
 *
 *	backup download		the command (cmd_data.c): download_start
 *	GET DOWNLOAD_API_PATH?ticket=T	the file (http.c): download_take,
 *				then download_served when the response ends
 */
#ifndef CACHEBOX_UI_DOWNLOAD_H
#define CACHEBOX_UI_DOWNLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

#define DOWNLOAD_API_PATH	"/api/backup/file"
#define DOWNLOAD_FILE		"backup-download.db"	/* in the state directory */
#define DOWNLOAD_TICKET_HEX	(2 * BACKUP_DOWNLOAD_TICKET_BYTES)

struct loop;
struct backup;
struct download;

/*
 * The download of state_dir's store through backup (which it tells of its
 * ends: backup_on_end). A copy left by an earlier run is removed. NULL on
 * failure (out of memory, a state directory without an absolute path).
 */
struct download	*download_new(struct loop *, struct backup *,
		    const char *state_dir);
/* Remove a copy still waiting and free d (NULL is fine). */
void		 download_free(struct download *d);
/*
 * Begin a copy for download. A copy still waiting for its fetch is
 * replaced (its ticket no longer works). 0 with the ticket (hex, NUL
 * ended, len at least DOWNLOAD_TICKET_HEX + 1) and the file the backup
 * writes (owned by d) in *file; -1 with why in err: a backup is running,
 * a download is being sent, or the copy cannot begin.
 */
int		 download_start(struct download *d, char *ticket, size_t len,
		    const char **file, char *err, size_t errlen);
/*
 * Hand the finished copy to the holder of ticket, once: 1 with an open
 * descriptor of it (the caller owns and closes it; the file is already
 * unlinked), its size and the name a browser saves it under
 * ("cachebox-backup-20240101-120000.db", UTC); 0 when the copy is not
 * finished yet; -1 with why in err for any other ticket (none, wrong,
 * used, expired; compared in constant time). d may be NULL (-1).
 */
int		 download_take(struct download *d, const char *ticket,
		    int *fd, uint64_t *size, char *name, size_t namelen,
		    char *err, size_t errlen);
/* The response of a taken copy ended: another download may begin. */
void		 download_served(struct download *d);

#endif
