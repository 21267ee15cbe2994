/*
 * cmd_data.c — relay clients, import and backup commands (cmd_data.h).
 * Handlers never block: an import runs its lines through ingest as they
 * come (the streaming form reads them as cacheboxctl sends them), and a
 * backup only starts here and runs in steps on the loop (sync/backup.c),
 * its progress read with `backup status`.
 */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "core/limits.h"
#include "serve/serve.h"
#include "store/checkpoint.h"
#include "sync/backup.h"
#include "sync/import.h"
#include "sync/ingest.h"
#include "ui/cmd_data.h"
#include "ui/commands.h"
#include "ui/ctlsock.h"
#include "ui/download.h"
#include "ui/reply.h"

static const char *
arg_str(const cJSON *args, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

cJSON *
cmd_clients(struct app *app, const cJSON *args, enum cmd_origin from)
{
	cJSON	*r;

	if (app->serve == NULL)
		return commands_error("the relay endpoint is off (relay.listen "
		    "is empty or its port was busy)");
	if ((r = cJSON_CreateObject()) != NULL)
		cJSON_AddItemToObject(r, "clients", serve_clients_json(
		    app->serve));
	return r;
}

cJSON *
cmd_import(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const char		*text = arg_str(args, "events"), *nl;
	struct import_run	*run;

	if (text == NULL)
		return commands_error("import: needs \"events\", one JSON event "
		    "per line");
	if ((run = import_begin(app->ingest)) == NULL)
		return NULL;
	while (*text != '\0') {
		nl = strchr(text, '\n');
		import_line(run, text, nl != NULL ? (size_t)(nl - text) :
		    strlen(text));
		text = nl != NULL ? nl + 1 : text + strlen(text);
	}
	return import_end(run);
}

cJSON *
cmd_backup(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const char	*file = arg_str(args, "file");
	char		 err[512];

	if (file == NULL)
		return commands_error("backup: needs \"file\"");
	if (app->backup == NULL || backup_start(app->backup, file, err,
	    sizeof(err)) == -1)
		return commands_error("backup: %s", app->backup == NULL ?
		    "unavailable" : err);
	return backup_status_json(app->backup);
}

cJSON *
cmd_backup_download(struct app *app, const cJSON *args, enum cmd_origin from)
{
	char		 ticket[DOWNLOAD_TICKET_HEX + 1], err[512];
	char		 path[sizeof(DOWNLOAD_API_PATH) + DOWNLOAD_TICKET_HEX + 16];
	const char	*file;
	cJSON		*r;

	if (app->download == NULL || app->backup == NULL)
		return commands_error("backup download: unavailable");
	if (download_start(app->download, ticket, sizeof(ticket), &file, err,
	    sizeof(err)) == -1)
		return commands_error("backup download: %s", err);
	snprintf(path, sizeof(path), "%s?ticket=%s", DOWNLOAD_API_PATH, ticket);
	explicit_bzero(ticket, sizeof(ticket));
	if ((r = backup_status_json(app->backup)) != NULL)
		cJSON_AddStringToObject(r, "download", path);
	explicit_bzero(path, sizeof(path));
	return r;
}

cJSON *
cmd_backup_status(struct app *app, const cJSON *args, enum cmd_origin from)
{
	if (app->backup == NULL)
		return commands_error("backup: unavailable");
	return backup_status_json(app->backup);
}

/* ---- the streaming import ------------------------------------------------ */

static void *
stream_begin(const char *cmd, const cJSON *args, void *arg, char *err,
    size_t errlen)
{
	struct app		*app = arg;
	struct import_run	*run;

	if (strcmp(cmd, "import") != 0) {
		snprintf(err, errlen, "'%s' does not take a stream", cmd);
		return NULL;
	}
	if ((run = import_begin(app->ingest)) == NULL)
		snprintf(err, errlen, "out of memory");
	return run;
}

static void
stream_line(void *session, const char *text, size_t len)
{
	if (text == NULL)
		import_line_too_long(session);
	else
		import_line(session, text, len);
}

static cJSON *
stream_end(void *session)
{
	return import_end(session);
}

/*
 * An import waits while the relay's clients have not taken what it sent,
 * and while the checkpoint process copies the WAL's last commits so that
 * the WAL restarts: its open batch is committed first, so that no
 * transaction is open meanwhile.
 */
static bool
stream_busy(void *arg)
{
	struct app	*app = arg;

	if (store_ckpt_holding(app->ckpt)) {
		if (ingest_tx_open(app->ingest))
			(void)ingest_flush(app->ingest);
		return true;
	}
	return serve_backlogged(app->serve);
}

void
cmd_data_stream_ops(struct app *app, struct ctlsock_stream *ops)
{
	ops->max_line = IMPORT_MAX_LINE_BYTES;
	ops->begin = stream_begin;
	ops->line = stream_line;
	ops->end = stream_end;
	ops->busy = stream_busy;
	ops->arg = app;
}
