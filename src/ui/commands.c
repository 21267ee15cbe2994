/*
 * commands.c — the command table and its dispatcher. Each command is a
 * small handler that reads the app's parts and answers JSON; handlers never
 * write SQL themselves (they call the store's functions) and never block.
 * Later subsystems add their commands to the table below.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "store/config_store.h"
#include "ui/commands.h"
#include "ui/status.h"

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

static const char *
arg_string(const cJSON *args, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static cJSON *
cmd_help(struct app *app, const cJSON *args)
{
	const struct command	*c;
	cJSON			*r = cJSON_CreateObject(), *list;

	list = cJSON_AddArrayToObject(r, "commands");
	for (c = commands_table(); c->name != NULL; c++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "name", c->name);
		cJSON_AddStringToObject(e, "params", c->params);
		cJSON_AddStringToObject(e, "help", c->help);
		cJSON_AddBoolToObject(e, "mutating", c->mutating);
		cJSON_AddItemToArray(list, e);
	}
	return r;
}

static cJSON *
cmd_status(struct app *app, const cJSON *args)
{
	return status_json(app);
}

static cJSON *
cmd_key(struct app *app, const cJSON *args)
{
	cJSON	*r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "npub", app->npub);
	return r;
}

static cJSON *
config_entry(const struct app *app, const struct cfg_def *d)
{
	cJSON	*e = cJSON_CreateObject();
	char	 shown[CONFIG_MAX_VALUE + 1];

	cJSON_AddStringToObject(e, "key", d->name);
	cJSON_AddStringToObject(e, "value",
	    config_display(app->cfg, d->name, shown, sizeof(shown)));
	cJSON_AddStringToObject(e, "default", d->secret ? "" : d->def);
	cJSON_AddStringToObject(e, "source",
	    config_source_name(config_source(app->cfg, d->name)));
	cJSON_AddStringToObject(e, "unit", d->unit);
	cJSON_AddBoolToObject(e, "runtime", d->runtime);
	cJSON_AddStringToObject(e, "help", d->help);
	return e;
}

static cJSON *
cmd_config_list(struct app *app, const cJSON *args)
{
	const struct cfg_def	*d;
	cJSON			*r = cJSON_CreateObject(), *list;

	list = cJSON_AddArrayToObject(r, "config");
	for (d = config_table(); d->name != NULL; d++)
		cJSON_AddItemToArray(list, config_entry(app, d));
	return r;
}

static cJSON *
cmd_config_get(struct app *app, const cJSON *args)
{
	const char		*key = arg_string(args, "key");
	const struct cfg_def	*d;

	if (key == NULL)
		return commands_error("config get: missing \"key\"");
	if ((d = config_lookup(key)) == NULL)
		return commands_error("unknown key '%s'", key);
	return config_entry(app, d);
}

/*
 * Set a key at run time: validated, stored in the database (so it survives
 * a restart) and applied. A key whose value comes from -c or --set keeps
 * that value, as the precedence says; the answer tells so.
 */
static cJSON *
cmd_config_set(struct app *app, const cJSON *args)
{
	const char		*key = arg_string(args, "key");
	const char		*value = arg_string(args, "value");
	const struct cfg_def	*d;
	char			 err[512];

	if (key == NULL || value == NULL)
		return commands_error("config set: needs \"key\" and \"value\"");
	if ((d = config_lookup(key)) == NULL)
		return commands_error("unknown key '%s'", key);
	if (config_validate(key, value, err, sizeof(err)) == -1)
		return commands_error("%s", err);
	if (store_config_put(app->store, key, value) == -1)
		return commands_error("%s: could not store the value", key);
	config_set(app->cfg, key, value, CFG_SRC_DB, err, sizeof(err));
	log_info("config: %s set at run time", key);
	if (config_source(app->cfg, key) > CFG_SRC_DB) {
		cJSON *r = config_entry(app, d);

		cJSON_AddStringToObject(r, "note", "stored, but a -c file or "
		    "--set value takes precedence until it is removed there");
		return r;
	}
	if (!d->runtime) {
		cJSON *r = config_entry(app, d);

		cJSON_AddStringToObject(r, "note", "stored; takes effect after "
		    "a restart");
		return r;
	}
	return config_entry(app, d);
}

static const struct command command_table[] = {
	{ "help", "", "list the commands", false, cmd_help },
	{ "status", "", "the status document (same as GET /api/status)",
	    false, cmd_status },
	{ "key", "", "show the box's public key (npub)", false, cmd_key },
	{ "config list", "", "every configuration key with its value and "
	    "source", false, cmd_config_list },
	{ "config get", "key", "one configuration key", false,
	    cmd_config_get },
	{ "config set", "key value", "validate, store and apply a "
	    "key", true, cmd_config_set },
	{ NULL, NULL, NULL, false, NULL },
};

const struct command *
commands_table(void)
{
	return command_table;
}

const struct command *
commands_find(const char *name)
{
	const struct command *c;

	for (c = command_table; c->name != NULL; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

cJSON *
commands_run(struct app *app, const char *name, const cJSON *args)
{
	const struct command	*c;
	cJSON			*r;

	if ((c = commands_find(name)) == NULL)
		return commands_error("unknown command '%s' (try 'help')", name);
	if (args != NULL && !cJSON_IsObject(args))
		return commands_error("%s: arguments must be a JSON object", name);
	r = c->run(app, args);
	return r != NULL ? r : commands_error("%s: out of memory", name);
}

cJSON *
commands_ctl_handler(const char *cmd, const cJSON *args, void *arg)
{
	return commands_run(arg, cmd, args);
}
