/*
 * cmd_uplink.c — `uplink status`, `uplink deadletter`, `uplink retry`.
 * They read and change the inbox through store/inbox.h and the running
 * uplink; they never write SQL themselves and never show the uplink's
 * password (the URL is shown masked, as config_display does).
 */
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "core/hex.h"
#include "core/json.h"
#include "core/limits.h"
#include "store/inbox.h"
#include "ui/cmd_uplink.h"
#include "ui/commands.h"
#include "ui/reply.h"
#include "uplink/uplink.h"

cJSON *
cmd_uplink_status(struct app *app, const cJSON *args, enum cmd_origin from)
{
	cJSON	*r = cJSON_CreateObject();

	if (r != NULL)
		uplink_status_json(app->uplink, app->store, r);
	return r;
}

static int
dead_add(const struct inbox_dead *d, void *arg)
{
	cJSON	*list = arg, *e;
	char	 id[65];

	if ((e = cJSON_CreateObject()) == NULL)
		return 1;
	(void)hex_encode(d->id, 32, id, sizeof(id));
	cJSON_AddNumberToObject(e, "seq", (double)d->seq);
	cJSON_AddStringToObject(e, "id", id);
	cJSON_AddNumberToObject(e, "kind", (double)d->kind);
	cJSON_AddStringToObject(e, "reason", d->reason);
	cJSON_AddNumberToObject(e, "attempts", (double)d->attempts);
	cJSON_AddNumberToObject(e, "last_attempt_at",
	    (double)d->last_attempt_at);
	cJSON_AddNumberToObject(e, "enqueued_at", (double)d->enqueued_at);
	cJSON_AddItemToArray(list, e);
	return 0;
}

cJSON *
cmd_uplink_deadletter(struct app *app, const cJSON *args, enum cmd_origin from)
{
	struct inbox_counts	 c;
	cJSON			*r = cJSON_CreateObject(), *list;

	if (r == NULL || (list = cJSON_AddArrayToObject(r, "dead")) == NULL ||
	    store_inbox_dead_list(app->store, UPLINK_DEADLETTER_LIST_MAX,
	    dead_add, list) == -1 || store_inbox_counts(app->store, &c) == -1) {
		cJSON_Delete(r);
		return commands_error("uplink deadletter: store error");
	}
	cJSON_AddNumberToObject(r, "total", (double)c.dead);
	return r;
}

/* The optional "seq" argument: a number or a decimal string. -1 if bad. */
static int64_t
arg_seq(const cJSON *args)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(args, "seq");
	char		*end;
	long long	 n;
	int64_t		 seq;

	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (cJSON_IsNumber(v))
		return json_int(v, 0, INT64_MAX, &seq) == 0 ? seq : -1;
	if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
		return -1;
	n = strtoll(v->valuestring, &end, 10);
	return *end == '\0' && n >= 0 ? (int64_t)n : -1;
}

cJSON *
cmd_uplink_retry(struct app *app, const cJSON *args, enum cmd_origin from)
{
	int64_t	 seq = arg_seq(args), n;
	cJSON	*r;

	if (seq < 0)
		return commands_error("uplink retry: seq must be a "
		    "non-negative integer (0 or none: every dead letter)");
	n = app->uplink != NULL ? uplink_retry(app->uplink, seq) :
	    store_inbox_retry(app->store, seq);
	if (n < 0)
		return commands_error("uplink retry: store error");
	if (seq > 0 && n == 0)
		return commands_error("uplink retry: no dead letter with seq "
		    "%lld", (long long)seq);
	if ((r = cJSON_CreateObject()) != NULL)
		cJSON_AddNumberToObject(r, "retried", (double)n);
	return r;
}
