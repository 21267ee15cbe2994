/*
 * backup.c — the loop's side of an online backup (backup.h). It owns the
 * one copy in progress and its deadline; it steps only from the top of a
 * round (a hook registered after ingest's, so the batch ingest may just
 * have committed is not in the way) or from its own timer when the loop is
 * otherwise idle, and only when no transaction is open.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "store/backup.h"
#include "sync/backup.h"

struct backup {
	struct loop		*loop;
	struct store		*st;
	struct store_backup	*job;
	enum backup_state	 state;
	uint64_t		 due_ms;	/* next step, monotonic */
	uint64_t		 timer;
	int			 done, total;
	char			 file[4096];
	char			 error[256];
	void			(*on_end)(void *, const char *, bool);
	void			*on_end_arg;
};

static const char *const state_names[] = {
	"idle", "running", "done", "failed"
};

static void	backup_wake(struct loop *, void *);

/* One step if it is due; schedule the next. */
static void
backup_step(struct backup *b)
{
	int	rc;

	if (b->state != BACKUP_RUNNING || loop_now_ms(b->loop) < b->due_ms)
		return;
	rc = store_backup_step(b->job, BACKUP_STEP_PAGES);
	store_backup_progress(b->job, &b->done, &b->total);
	if (rc == 0 || rc == -1) {
		b->state = rc == 0 ? BACKUP_DONE : BACKUP_FAILED;
		snprintf(b->error, sizeof(b->error), "%s",
		    store_backup_error(b->job));
		store_backup_free(b->job);
		b->job = NULL;
		loop_timer_clear(b->loop, &b->timer);
		if (rc == 0)
			log_info("backup: %s written (%d pages)", b->file,
			    b->total);
		else
			log_warnx("backup: %s failed: %s", b->file, b->error);
		if (b->on_end != NULL)
			b->on_end(b->on_end_arg, b->file, rc == 0);
		return;
	}
	b->due_ms = loop_now_ms(b->loop) + (rc == 2 ? BACKUP_BUSY_RETRY_MS :
	    BACKUP_STEP_GAP_MS);
	loop_timer_clear(b->loop, &b->timer);
	b->timer = loop_timer_add(b->loop, b->due_ms - loop_now_ms(b->loop),
	    backup_wake, b);
}

static void
backup_hook(struct loop *l, void *arg)
{
	backup_step(arg);
}

static void
backup_wake(struct loop *l, void *arg)
{
	struct backup	*b = arg;

	b->timer = 0;
	backup_step(b);
}

struct backup *
backup_new(struct loop *loop, struct store *st)
{
	struct backup	*b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	b->loop = loop;
	b->st = st;
	if (loop_hook_add(loop, backup_hook, b) == -1) {
		free(b);
		return NULL;
	}
	return b;
}

void
backup_free(struct backup *b)
{
	if (b == NULL)
		return;
	loop_hook_del(b->loop, backup_hook, b);
	loop_timer_clear(b->loop, &b->timer);
	store_backup_free(b->job);
	free(b);
}

int
backup_start(struct backup *b, const char *path, char *err, size_t errlen)
{
	if (b->state == BACKUP_RUNNING) {
		snprintf(err, errlen, "a backup to %s is running", b->file);
		return -1;
	}
	if (path[0] != '/') {
		snprintf(err, errlen, "the backup file must be an absolute path");
		return -1;
	}
	if ((b->job = store_backup_start(b->st, path, err, errlen)) == NULL)
		return -1;
	snprintf(b->file, sizeof(b->file), "%s", path);
	b->state = BACKUP_RUNNING;
	b->error[0] = '\0';
	b->done = b->total = 0;
	b->due_ms = loop_now_ms(b->loop);
	b->timer = loop_timer_add(b->loop, 0, backup_wake, b);
	log_info("backup: copying the store to %s", path);
	return 0;
}

enum backup_state
backup_state(const struct backup *b, const char **file)
{
	if (file != NULL)
		*file = b->file;
	return b->state;
}

void
backup_on_end(struct backup *b, void (*fn)(void *, const char *, bool),
    void *arg)
{
	b->on_end = fn;
	b->on_end_arg = arg;
}

cJSON *
backup_status_json(const struct backup *b)
{
	cJSON	*o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "state", state_names[b->state]);
	cJSON_AddStringToObject(o, "file", b->file);
	cJSON_AddNumberToObject(o, "pages_done", b->done);
	cJSON_AddNumberToObject(o, "pages_total", b->total);
	if (b->error[0] != '\0')
		cJSON_AddStringToObject(o, "error", b->error);
	return o;
}
