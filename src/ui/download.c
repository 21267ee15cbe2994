/*
 * download.c — the status page's backup download (download.h). It owns
 * the one copy made for it (a file of the state directory whose name it
 * chooses, never the request), its ticket and the timer that removes a
 * copy nobody fetched. It never copies itself: the online backup does,
 * in steps on the loop (sync/backup.c), and tells it when a copy ends.
 * It never serves bytes either: it hands the web server a descriptor of
 * the finished file, already unlinked, so a response cut short or a
 * crash leaves no copy of the store behind but the one a restart removes.
 */
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "sync/backup.h"
#include "ui/download.h"

enum download_state {
	DL_NONE,
	DL_COPYING,		/* the backup writes the file */
	DL_READY,		/* the file waits for its ticket */
	DL_SERVING,		/* taken: a response sends it */
};

struct download {
	struct loop		*loop;
	struct backup		*backup;
	enum download_state	 state;
	uint64_t		 timer;		/* removes a copy not fetched */
	int64_t			 done_at;	/* wall clock, for its name */
	char			 ticket[DOWNLOAD_TICKET_HEX + 1];
	char			 path[PATH_MAX];
};

static void
forget(struct download *d, enum download_state next)
{
	explicit_bzero(d->ticket, sizeof(d->ticket));
	loop_timer_clear(d->loop, &d->timer);
	d->state = next;
}

/* A copy nobody fetched in time is removed. */
static void
expire(struct loop *l, void *arg)
{
	struct download	*d = arg;

	d->timer = 0;
	if (d->state != DL_READY)
		return;
	unlink(d->path);
	forget(d, DL_NONE);
	log_info("backup download: the copy was not fetched within %d min; "
	    "removed", BACKUP_DOWNLOAD_TTL_MS / 60000);
}

/* backup_on_end: our copy is ready to fetch, or gone. */
static void
on_end(void *arg, const char *file, bool ok)
{
	struct download	*d = arg;

	if (d->state != DL_COPYING || strcmp(file, d->path) != 0)
		return;
	if (!ok) {
		forget(d, DL_NONE);
		return;
	}
	d->state = DL_READY;
	d->done_at = clock_wall_s();
	d->timer = loop_timer_add(d->loop, BACKUP_DOWNLOAD_TTL_MS, expire, d);
}

struct download *
download_new(struct loop *loop, struct backup *b, const char *state_dir)
{
	struct download	*d;
	char		 real[PATH_MAX], tmp[PATH_MAX + 8];

	if (realpath(state_dir, real) == NULL ||
	    (d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->loop = loop;
	d->backup = b;
	if (snprintf(d->path, sizeof(d->path), "%s/%s", real, DOWNLOAD_FILE) >=
	    (int)sizeof(d->path)) {
		free(d);
		return NULL;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", d->path);
	unlink(d->path);	/* left by a run that stopped before its fetch */
	unlink(tmp);
	backup_on_end(b, on_end, d);
	return d;
}

void
download_free(struct download *d)
{
	if (d == NULL)
		return;
	if (d->state == DL_READY)
		unlink(d->path);
	forget(d, DL_NONE);
	backup_on_end(d->backup, NULL, NULL);
	free(d);
}

int
download_start(struct download *d, char *ticket, size_t len,
    const char **file, char *err, size_t errlen)
{
	uint8_t	rnd[BACKUP_DOWNLOAD_TICKET_BYTES];

	if (d->state == DL_SERVING) {
		snprintf(err, errlen, "a download is being sent: try again when "
		    "it ends");
		return -1;
	}
	if (backup_state(d->backup, NULL) == BACKUP_RUNNING) {
		snprintf(err, errlen, "a backup is running (backup status)");
		return -1;
	}
	if (d->state == DL_READY)
		unlink(d->path);	/* replaced: its ticket ends here */
	forget(d, DL_NONE);
	if (len < DOWNLOAD_TICKET_HEX + 1 ||
	    getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd) ||
	    hex_encode(rnd, sizeof(rnd), d->ticket, sizeof(d->ticket)) == -1) {
		snprintf(err, errlen, "no random bytes for a ticket");
		return -1;
	}
	explicit_bzero(rnd, sizeof(rnd));
	if (backup_start(d->backup, d->path, err, errlen) == -1) {
		forget(d, DL_NONE);
		return -1;
	}
	d->state = DL_COPYING;
	snprintf(ticket, len, "%s", d->ticket);
	*file = d->path;
	return 0;
}

/* Whether t is the ticket, compared in constant time. */
static bool
ticket_ok(const struct download *d, const char *t)
{
	unsigned char	diff = 0;
	size_t		i;

	if (t == NULL || strlen(t) != DOWNLOAD_TICKET_HEX)
		return false;
	for (i = 0; i < DOWNLOAD_TICKET_HEX; i++)
		diff |= (unsigned char)(t[i] ^ d->ticket[i]);
	return diff == 0;
}

/* "cachebox-backup-20240101-120000.db", from when the copy was done. */
static void
file_name(const struct download *d, char *name, size_t len)
{
	struct tm	tm;
	time_t		t = (time_t)d->done_at;
	char		when[32];

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm) == 0)
		snprintf(when, sizeof(when), "%lld", (long long)d->done_at);
	snprintf(name, len, "cachebox-backup-%s.db", when);
}

int
download_take(struct download *d, const char *ticket, int *fd,
    uint64_t *size, char *name, size_t namelen, char *err, size_t errlen)
{
	struct stat	sb;

	if (d == NULL || d->state == DL_NONE || d->state == DL_SERVING ||
	    !ticket_ok(d, ticket)) {
		snprintf(err, errlen, "no such download: the ticket is wrong, "
		    "used or expired (ask for a new one with backup download)");
		return -1;
	}
	if (d->state == DL_COPYING) {
		snprintf(err, errlen, "the copy is not finished yet (backup "
		    "status)");
		return 0;
	}
	if ((*fd = open(d->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1 ||
	    fstat(*fd, &sb) == -1) {
		snprintf(err, errlen, "the copy cannot be read: %s",
		    strerror(errno));
		if (*fd != -1)
			close(*fd);
		unlink(d->path);
		forget(d, DL_NONE);
		return -1;
	}
	unlink(d->path);	/* the descriptor keeps it until the response ends */
	*size = (uint64_t)sb.st_size;
	file_name(d, name, namelen);
	forget(d, DL_SERVING);
	log_info("backup download: sending %s (%llu bytes)", name,
	    (unsigned long long)*size);
	return 1;
}

void
download_served(struct download *d)
{
	if (d != NULL && d->state == DL_SERVING)
		d->state = DL_NONE;
}
