/*
 * reply.c — what every command handler answers with besides its own
 * result (reply.h): a refusal ({"error": ...}), the test for one, what
 * pins a key, and storing a key at run time for a caller on a surface.
 * The handlers (cmd_*.c, firstrun.c through its sink) call down into
 * here; nothing here calls the command table or a handler, so the table
 * in commands.c is the only file that knows them all.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "store/config_store.h"
#include "store/store.h"
#include "ui/commands.h"
#include "ui/firstrun.h"
#include "ui/reply.h"

cJSON *
commands_error(const char *fmt, ...)
{
	char	 msg[512];
	va_list	 ap;
	cJSON	*r;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((r = cJSON_CreateObject()) != NULL)
		cJSON_AddStringToObject(r, "error", msg);
	return r;
}

bool
commands_is_error(const cJSON *reply)
{
	const cJSON	*err = cJSON_GetObjectItemCaseSensitive(reply, "error");

	return cJSON_IsString(err) && reply->child == err && err->next == NULL;
}

const char *
commands_pinned_by(const struct app *app, const char *key, char *buf,
    size_t len)
{
	switch (config_source(app->cfg, key)) {
	case CFG_SRC_CLI:
		return "--set on the command line";
	case CFG_SRC_FILE:
		snprintf(buf, len, "the -c file %s", app->config_file != NULL ?
		    app->config_file : "");
		return buf;
	default:
		return NULL;
	}
}

cJSON *
commands_refuse_pinned(const struct app *app, const char *key)
{
	char		 file[512];
	const char	*pin = commands_pinned_by(app, key, file, sizeof(file));

	if (pin == NULL)
		return NULL;
	return commands_error("%s is pinned by %s: change it there (a value "
	    "set here would not take effect)", key, pin);
}

cJSON *
commands_config_store(struct app *app, const char *key, const char *value,
    enum cmd_origin from)
{
	const struct cfg_def	*d;
	char			 norm[CONFIG_MAX_VALUE + 1], err[512];
	char			 what[64];
	cJSON			*r;

	if ((d = config_lookup(key)) == NULL)
		return commands_error("unknown key '%s'", key);
	if ((r = commands_refuse_pinned(app, key)) != NULL)
		return r;
	if ((d->flags & CFG_LOCAL) && from != CMD_FROM_CONSOLE)
		return commands_error("%s names a file or device the daemon "
		    "opens: set it on the serial console, in the -c file or "
		    "with --set", key);
	if (config_normalize(key, value, norm, sizeof(norm), err,
	    sizeof(err)) == -1)
		return commands_error("%s", err);
	if (from != CMD_FROM_CONSOLE &&
	    config_value_local(key, norm, what, sizeof(what)))
		return commands_error("%s: the parameter '%s' can make the "
		    "daemon open a file or socket path: a URL with it is set "
		    "only on the serial console, in the -c file or with --set",
		    key, what);
	if (store_config_put(app->store, key, norm,
	    from == CMD_FROM_CONSOLE) == -1)
		return commands_error("%s: could not store the value%s", key,
		    store_damaged(app->store) ? ": the database is damaged "
		    "(see the log)" : "");
	if (config_set(app->cfg, key, norm, CFG_SRC_DB, err,
	    sizeof(err)) == -1)
		return commands_error("%s", err);
	log_info("config: %s set at run time from the %s", key,
	    from == CMD_FROM_CONSOLE ? "console" : from == CMD_FROM_CTL ?
	    "control socket" : "web");
	if (d->flags & CFG_RUNTIME)
		app_config_changed(app, key);
	if (strcmp(key, CONFIG_ADMIN_TOKEN) == 0)
		firstrun_token_changed(app->firstrun);
	return NULL;
}
