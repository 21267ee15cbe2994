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
#include "ui/cmd_box.h"
#include "ui/cmd_sync.h"
#include "ui/cmd_uplink.h"
#include "ui/apply.h"
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
		cJSON_AddBoolToObject(e, "console_only", c->console_only);
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
	if (d->secret)
		return commands_error("%s is set with 'admin-token set' on the "
		    "console", key);
	if (config_validate(key, value, err, sizeof(err)) == -1)
		return commands_error("%s", err);
	if (store_config_put(app->store, key, value) == -1)
		return commands_error("%s: could not store the value", key);
	config_set(app->cfg, key, value, CFG_SRC_DB, err, sizeof(err));
	log_info("config: %s set at run time", key);
	if (d->runtime)
		app_config_changed(app, key);
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
	{ "help", "", "list the commands", false, cmd_help, false },
	{ "status", "", "the status document (same as GET /api/status)",
	    false, cmd_status, false },
	{ "key", "", "show the box's public key (npub)", false, cmd_key, false },
	{ "config list", "", "every configuration key with its value and "
	    "source", false, cmd_config_list, false },
	{ "config get", "key", "one configuration key", false,
	    cmd_config_get, false },
	{ "config set", "key value", "validate, store and apply a "
	    "key", true, cmd_config_set, false },
	{ "relays list", "", "relays configured and known, with role, state "
	    "and events", false, cmd_relays_list, false },
	{ "relays add", "url [role]", "add a relay (role bootstrap, outbox or "
	    "custom; default bootstrap)", true, cmd_relays_add, false },
	{ "relays remove", "url", "stop using a configured relay", true,
	    cmd_relays_remove, false },
	{ "relays role", "url role", "change the role of a relay", true,
	    cmd_relays_role, false },
	{ "roots list", "", "the follow roots (npub and hex)", false,
	    cmd_roots_list, false },
	{ "roots add", "key", "add a follow root (npub or hex)", true,
	    cmd_roots_add, false },
	{ "roots remove", "key", "remove a follow root", true,
	    cmd_roots_remove, false },
	{ "log level", "[level]", "show the log level, or set it (error, warn, "
	    "info, debug)", true, cmd_log_level, false },
	{ "admin-token set", "token", "set the bearer token of the web API's "
	    "mutating calls (console only)", true, cmd_admin_token_set, true },
	{ "uplink status", "", "the uplink: target, driver, state, last error, "
	    "forward rate, inbox totals", false, cmd_uplink_status, false },
	{ "uplink deadletter", "", "events the uplink's peer refused, with its "
	    "reasons", false, cmd_uplink_deadletter, false },
	{ "uplink retry", "[seq]", "send dead letters again (one seq, or all)",
	    true, cmd_uplink_retry, false },
	{ "follows", "[author]", "followed authors with their drain progress "
	    "on every relay", false, cmd_follows, false },
	{ "backfill reset", "[author]", "drain one author's history (or "
	    "everyone's) again from the newest event", true,
	    cmd_backfill_reset, false },
	{ NULL, NULL, NULL, false, NULL, false },
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

int
commands_params(const struct command *c, struct command_param *out, int max)
{
	const char	*p = c->params;
	int		 n = 0;
	size_t		 len;

	while (n < max && *(p += strspn(p, " ")) != '\0') {
		len = strcspn(p, " ");
		out[n].optional = p[0] == '[';
		if (out[n].optional)
			snprintf(out[n].name, sizeof(out[n].name), "%.*s",
			    (int)(len > 2 ? len - 2 : 0), p + 1);
		else
			snprintf(out[n].name, sizeof(out[n].name), "%.*s",
			    (int)len, p);
		p += len;
		n++;
	}
	return n;
}

const struct command *
commands_match(int argc, char *const *argv, int *used)
{
	const struct command	*c, *best = NULL;
	char			 name[256] = "";
	size_t			 len = 0, wlen;
	int			 i;

	for (i = 0; i < argc && i < COMMAND_MAX_WORDS; i++) {
		wlen = strlen(argv[i]);
		if (len + wlen + 2 > sizeof(name))
			break;
		if (i > 0)
			name[len++] = ' ';
		memcpy(name + len, argv[i], wlen + 1);
		len += wlen;
		if ((c = commands_find(name)) != NULL) {
			best = c;
			*used = i + 1;
		}
	}
	return best;
}

cJSON *
commands_build_args(const struct command *c, int argc, char *const *argv,
    char *err, size_t errlen)
{
	struct command_param	 p[COMMAND_MAX_PARAMS];
	cJSON			*args;
	int			 i, n;

	n = commands_params(c, p, COMMAND_MAX_PARAMS);
	if ((args = cJSON_CreateObject()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (i < argc) {
			if (cJSON_AddStringToObject(args, p[i].name,
			    argv[i]) == NULL) {
				snprintf(err, errlen, "out of memory");
				goto bad;
			}
		} else if (!p[i].optional) {
			snprintf(err, errlen, "%s: missing %s", c->name,
			    p[i].name);
			goto bad;
		}
	}
	if (argc > n) {
		snprintf(err, errlen, "%s: unexpected argument '%s'", c->name,
		    argv[n]);
		goto bad;
	}
	return args;
bad:
	cJSON_Delete(args);
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
	const struct command *c = commands_find(cmd);

	if (c != NULL && c->console_only)
		return commands_error("'%s' is only available on the serial "
		    "console", cmd);
	return commands_run(arg, cmd, args);
}
