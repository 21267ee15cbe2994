/*
 * commands.c — the command table and its dispatcher. Each command is a
 * small handler that reads the app's parts and answers JSON; handlers never
 * write SQL themselves (they call the store's functions) and never block.
 * Later subsystems add their commands to the table below.
 */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "store/config_store.h"
#include "store/store.h"
#include "ui/cmd_box.h"
#include "ui/cmd_jobs.h"
#include "ui/cmd_data.h"
#include "ui/cmd_sync.h"
#include "ui/cmd_uplink.h"
#include "ui/commands.h"
#include "ui/reply.h"
#include "ui/status.h"

static const char *
arg_string(const cJSON *args, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Whether command name c is in group: its first word is group. */
static bool
in_group(const char *c, const char *group)
{
	size_t	len = strlen(group);

	return strncmp(c, group, len) == 0 && c[len] == ' ';
}

cJSON *
commands_help(const char *group)
{
	const struct command	*c;
	cJSON			*r = cJSON_CreateObject(), *list;

	list = cJSON_AddArrayToObject(r, "commands");
	for (c = commands_table(); c->name != NULL; c++) {
		cJSON *e;

		if (group != NULL && !in_group(c->name, group))
			continue;
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", c->name);
		cJSON_AddStringToObject(e, "params", c->params);
		cJSON_AddStringToObject(e, "help", c->help);
		cJSON_AddBoolToObject(e, "mutating", c->flags & CMD_MUTATING);
		cJSON_AddBoolToObject(e, "post", commands_takes_body(c));
		cJSON_AddBoolToObject(e, "named", c->flags & CMD_NAMED);
		cJSON_AddBoolToObject(e, "console_only",
		    c->flags & CMD_CONSOLE_ONLY);
		cJSON_AddBoolToObject(e, "web", commands_refusal(c,
		    CMD_FROM_WEB) == NULL);
		cJSON_AddItemToArray(list, e);
	}
	return r;
}

bool
commands_is_group(const char *word)
{
	const struct command	*c;

	for (c = commands_table(); c->name != NULL; c++)
		if (in_group(c->name, word))
			return true;
	return false;
}

static cJSON *
cmd_help(struct app *app, const cJSON *args, enum cmd_origin from)
{
	return commands_help(NULL);
}

static cJSON *
cmd_status(struct app *app, const cJSON *args, enum cmd_origin from)
{
	return status_json(app);
}

static cJSON *
cmd_key(struct app *app, const cJSON *args, enum cmd_origin from)
{
	cJSON	*r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "npub", app->npub);
	return r;
}

static cJSON *
config_entry(const struct app *app, const struct cfg_def *d)
{
	cJSON		*e = cJSON_CreateObject();
	char		 shown[CONFIG_MAX_VALUE + 1], file[512];
	const char	*pin = commands_pinned_by(app, d->name, file, sizeof(file));

	cJSON_AddStringToObject(e, "key", d->name);
	cJSON_AddStringToObject(e, "value",
	    config_display(app->cfg, d->name, shown, sizeof(shown)));
	cJSON_AddStringToObject(e, "default", d->flags & CFG_SECRET ? "" :
	    d->def);
	cJSON_AddStringToObject(e, "source",
	    config_source_name(config_source(app->cfg, d->name)));
	if (pin != NULL)
		cJSON_AddStringToObject(e, "pinned_by", pin);
	cJSON_AddStringToObject(e, "unit", d->unit != NULL ? d->unit : "");
	if (d->choices != NULL)
		cJSON_AddStringToObject(e, "choices", d->choices);
	cJSON_AddBoolToObject(e, "runtime", d->flags & CFG_RUNTIME);
	if (d->flags & CFG_LOCAL)
		cJSON_AddBoolToObject(e, "console_only", true);
	cJSON_AddStringToObject(e, "help", d->help);
	return e;
}

static cJSON *
cmd_config_list(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const struct cfg_def	*d;
	cJSON			*r = cJSON_CreateObject(), *list;

	list = cJSON_AddArrayToObject(r, "config");
	for (d = config_table(); d->name != NULL; d++)
		cJSON_AddItemToArray(list, config_entry(app, d));
	return r;
}

static cJSON *
cmd_config_get(struct app *app, const cJSON *args, enum cmd_origin from)
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
 * a restart) and applied. A key pinned by -c or --set is refused
 * (commands_config_store): a stored value would not take effect.
 */
static cJSON *
cmd_config_set(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const char		*key = arg_string(args, "key");
	const char		*value = arg_string(args, "value");
	const struct cfg_def	*d;
	cJSON			*r;

	if (key == NULL || value == NULL)
		return commands_error("config set: needs \"key\" and \"value\"");
	if ((d = config_lookup(key)) == NULL)
		return commands_error("unknown key '%s'", key);
	if (d->flags & CFG_SECRET)
		return commands_error("%s is set with 'admin-token set' on the "
		    "console", key);
	if ((r = commands_config_store(app, key, value, from)) != NULL)
		return r;
	r = config_entry(app, d);
	if (!(d->flags & CFG_RUNTIME))
		cJSON_AddStringToObject(r, "note", "stored; takes effect after "
		    "a restart");
	return r;
}

#define MUT	CMD_MUTATING

static const struct command command_table[] = {
	{ .name = "help", .params = "", .help = "list the commands",
	  .run = cmd_help },
	{ .name = "status", .params = "", .help = "the status document (same "
	  "as GET /api/status)", .run = cmd_status },
	{ .name = "key", .params = "", .help = "show the box's public key "
	  "(npub)", .run = cmd_key },
	{ .name = "config list", .params = "", .help = "every configuration "
	  "key with its value and source", .run = cmd_config_list },
	{ .name = "config get", .params = "key", .help = "one configuration "
	  "key", .run = cmd_config_get },
	{ .name = "config set", .params = "key value", .help = "validate, "
	  "store and apply a key", .flags = MUT, .run = cmd_config_set },
	{ .name = "relays list", .params = "", .help = "relays configured and "
	  "known, with role, state and events", .run = cmd_relays_list },
	{ .name = "relays add", .params = "url [role]", .help = "add a relay "
	  "(role bootstrap, outbox or custom; default bootstrap)",
	  .flags = MUT, .run = cmd_relays_add },
	{ .name = "relays remove", .params = "url", .help = "stop using a "
	  "configured relay", .flags = MUT, .run = cmd_relays_remove },
	{ .name = "relays role", .params = "url role", .help = "change the "
	  "role of a relay", .flags = MUT, .run = cmd_relays_role },
	{ .name = "roots list", .params = "", .help = "the follow roots (npub "
	  "and hex)", .run = cmd_roots_list },
	{ .name = "roots add", .params = "key", .help = "add a follow root "
	  "(npub or hex)", .flags = MUT, .run = cmd_roots_add },
	{ .name = "roots remove", .params = "key", .help = "remove a follow "
	  "root", .flags = MUT, .run = cmd_roots_remove },
	{ .name = "roots history", .params = "[key] [kind]", .help = "earlier "
	  "versions of the roots' profiles, follow lists and relay lists, "
	  "kept aside", .run = cmd_roots_history },
	{ .name = "log level", .params = "[level]", .help = "show the log "
	  "level, or set it (error, warn, info, debug)", .flags = MUT,
	  .run = cmd_log_level },
	{ .name = "admin-token set", .params = "token", .help = "set the admin "
	  "password that changes on the status page and the web API need",
	  .flags = MUT | CMD_CONSOLE_ONLY, .run = cmd_admin_token_set },
	{ .name = "setup", .params = "", .help = "first run: whether the admin "
	  "password still needs setting and how long the setup code lasts (the "
	  "code is shown only at the box; asking makes one when none is valid)",
	  .run = cmd_setup },
	{ .name = "setup code", .params = "", .help = "show the first-run "
	  "setup code (a new one if none is valid), typed on the status page "
	  "with a new admin password",
	  .flags = MUT | CMD_CONSOLE_ONLY, .run = cmd_setup_code },
	{ .name = "uplink status", .params = "", .help = "the uplink: target, "
	  "driver, state, last error, forward rate, inbox totals",
	  .run = cmd_uplink_status },
	{ .name = "uplink deadletter", .params = "", .help = "events the "
	  "uplink's peer refused, with its reasons",
	  .run = cmd_uplink_deadletter },
	{ .name = "uplink retry", .params = "[seq]", .help = "send dead "
	  "letters again (one seq, or all)", .flags = MUT,
	  .run = cmd_uplink_retry },
	{ .name = "follows", .params = "[author] [q] [offset] [limit]",
	  .help = "followed authors with their profile name and drain "
	  "progress on every relay, a page at a time (q: a name, npub or hex "
	  "prefix to search)", .run = cmd_follows },
	{ .name = "backfill reset", .params = "[author]", .help = "drain one "
	  "author's history (or everyone's) again from the newest event",
	  .flags = MUT, .run = cmd_backfill_reset },
	{ .name = "ingest minutes", .params = "[minutes]", .help = "events "
	  "stored per minute over the last hours (oldest first, the running "
	  "minute last) and the rate now", .run = cmd_ingest_minutes },
	{ .name = "ingest history", .params = "[hours]", .help = "events "
	  "stored per 10 minutes over the last hours (up to 168), kept across "
	  "restarts (oldest first, the running bucket last)",
	  .run = cmd_ingest_history },
	{ .name = "recovery", .params = "", .help = "ids relays reported and "
	  "did not deliver, per relay: pending, next attempt, expired, health",
	  .run = cmd_recovery },
	{ .name = "jobs new", .params = CMD_JOBS_NEW_PARAMS, .help = "plan a "
	  "custom backfill job (any NIP-01 filter, batched, drained to the "
	  "end); arguments as name=value", .flags = MUT | CMD_NAMED,
	  .run = cmd_jobs_new },
	{ .name = "jobs dry-run", .params = CMD_JOBS_NEW_PARAMS, .help = "what "
	  "jobs new would do with these arguments, sending nothing",
	  .flags = CMD_POST | CMD_NAMED, .run = cmd_jobs_dry_run },
	{ .name = "jobs list", .params = "", .help = "custom jobs, newest "
	  "first, with status and progress", .run = cmd_jobs_list },
	{ .name = "jobs show", .params = "job", .help = "one job with its "
	  "unfinished batches and their reasons", .run = cmd_jobs_show },
	{ .name = "jobs cancel", .params = "job", .help = "stop a job (and its "
	  "schedule) before its next page", .flags = MUT,
	  .run = cmd_jobs_cancel },
	{ .name = "jobs retry", .params = "job", .help = "run a job's failed "
	  "and cancelled batches again", .flags = MUT, .run = cmd_jobs_retry },
	{ .name = "jobs delete", .params = "job", .help = "delete a job that "
	  "is not running", .flags = MUT, .run = cmd_jobs_delete },
	{ .name = "jobs presets", .params = "", .help = "the presets jobs new "
	  "and dry-run take (preset=NAME)", .run = cmd_jobs_presets },
	{ .name = "clients", .params = "", .help = "clients of the box's own "
	  "relay: address, age, subscriptions, events and bytes sent, queue",
	  .run = cmd_clients },
	{ .name = "import", .params = "events", .help = "store events given "
	  "one JSON object per line, each verified through ingest; counts "
	  "stored, duplicate and invalid (cacheboxctl import FILE streams a "
	  "file of any size)", .flags = MUT, .run = cmd_import },
	{ .name = "backup", .params = "file", .help = "copy the database to "
	  "an absolute path while the daemon runs (online backup, in steps); "
	  "not over the web", .flags = MUT | CMD_NOT_WEB, .run = cmd_backup },
	{ .name = "backup status", .params = "", .help = "the last backup: "
	  "running, done or failed, pages copied", .run = cmd_backup_status },
	{ .name = "backup download", .params = "", .help = "copy the database "
	  "for the status page's Download backup: answers the path that "
	  "fetches the copy once, when it is done", .flags = MUT,
	  .run = cmd_backup_download },
	{ .name = NULL },
};

#undef MUT

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

/* The parameter a "name=value" word names (-1: none); *value after '='. */
static int
named_param(const struct command_param *p, int n, const char *word,
    const char **value)
{
	const char	*eq = strchr(word, '=');
	int		 i;

	for (i = 0; eq != NULL && i < n; i++)
		if (strlen(p[i].name) == (size_t)(eq - word) &&
		    strncmp(p[i].name, word, (size_t)(eq - word)) == 0) {
			*value = eq + 1;
			return i;
		}
	return -1;
}

/*
 * Edits (insert, delete, substitute, swap two neighbours) from a[0..m) to
 * b; more than COMMAND_NEAR_EDITS for a name too long to be a parameter's
 * or a command's word.
 */
static int
name_distance(const char *a, size_t m, const char *b)
{
	int	 d[3][COMMAND_MAX_PARAM_NAME + 1], best;
	size_t	 i, j, n = strlen(b);

	if (m > COMMAND_MAX_PARAM_NAME || n > COMMAND_MAX_PARAM_NAME)
		return COMMAND_NEAR_EDITS + 1;
	for (j = 0; j <= n; j++)
		d[0][j] = (int)j;
	for (i = 1; i <= m; i++) {
		int	*r = d[i % 3], *p = d[(i - 1) % 3], *q = d[(i + 1) % 3];

		r[0] = (int)i;
		for (j = 1; j <= n; j++) {
			best = p[j - 1] + (a[i - 1] != b[j - 1]);
			if (p[j] + 1 < best)
				best = p[j] + 1;
			if (r[j - 1] + 1 < best)
				best = r[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && q[j - 2] + 1 < best)
				best = q[j - 2] + 1;
			r[j] = best;
		}
	}
	return d[m % 3][n];
}

/*
 * The parameter a mistyped name=value word most likely meant (within
 * COMMAND_NEAR_EDITS edits, the nearest first), or -1: "kind=3" for
 * "kinds".
 */
static int
near_param(const struct command_param *p, int n, const char *word)
{
	const char	*eq = strchr(word, '=');
	int		 i, d, best = -1, bestd = COMMAND_NEAR_EDITS + 1;

	for (i = 0; eq != NULL && eq > word && i < n; i++)
		if ((d = name_distance(word, (size_t)(eq - word),
		    p[i].name)) < bestd) {
			bestd = d;
			best = i;
		}
	return best;
}

/*
 * Edits from the first words of argv to command name c, word by word, or
 * more than COMMAND_NEAR_EDITS when argv has fewer words than c's name.
 */
static int
words_distance(const char *c, int argc, char *const *argv)
{
	size_t	len;
	int	i, d = 0;

	for (i = 0; *c != '\0'; i++) {
		if (i >= argc)
			return COMMAND_NEAR_EDITS + 1;
		len = strcspn(c, " ");
		d += name_distance(c, len, argv[i]);
		c += len + (c[len] == ' ');
	}
	return d;
}

const struct command *
commands_near(int argc, char *const *argv)
{
	const struct command	*c, *best = NULL;
	int			 d, bestd = COMMAND_NEAR_EDITS + 1;

	for (c = command_table; c->name != NULL; c++) {
		d = words_distance(c->name, argc, argv);
		/* a short name is near only one edit away: "key" is not "log" */
		if (strlen(c->name) <= 4 && d > 1)
			continue;
		if (d > 0 && d < bestd) {
			bestd = d;
			best = c;
		}
	}
	return best;
}

const char *
commands_unknown(int argc, char *const *argv, char *buf, size_t len)
{
	const struct command	*near = commands_near(argc, argv);
	const char		*p;
	size_t			 n = 0;
	int			 i, words = 1;

	if (near != NULL)
		for (p = near->name; *p != '\0'; p++)
			words += *p == ' ';
	else if (argc > 1 && commands_is_group(argv[0]))
		words = 2;
	n = (size_t)snprintf(buf, len, "unknown command '");
	for (i = 0; i < words && i < argc && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%.64s", i ? " " : "",
		    argv[i]);
	if (n < len)
		snprintf(buf + n, len - n, "'%s%s%s", near != NULL ? ": did you "
		    "mean '" : "", near != NULL ? near->name : "", near != NULL ?
		    "'?" : "");
	return buf;
}

static int
add_arg(cJSON *args, const char *name, const char *value, char *err,
    size_t errlen)
{
	if (cJSON_AddStringToObject(args, name, value) != NULL)
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}

cJSON *
commands_build_args(const struct command *c, int argc, char *const *argv,
    char *err, size_t errlen)
{
	struct command_param	 p[COMMAND_MAX_PARAMS];
	const char		*value;
	cJSON			*args;
	int			 i, k, n, next = 0;

	n = commands_params(c, p, COMMAND_MAX_PARAMS);
	if ((args = cJSON_CreateObject()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (i = 0; i < argc; i++) {
		if ((k = named_param(p, n, argv[i], &value)) == -1)
			continue;
		if (cJSON_GetObjectItemCaseSensitive(args, p[k].name) != NULL) {
			snprintf(err, errlen, "%s: %s given twice", c->name,
			    p[k].name);
			goto bad;
		}
		if (add_arg(args, p[k].name, value, err, errlen) == -1)
			goto bad;
	}
	for (i = 0; i < argc; i++) {
		if (named_param(p, n, argv[i], &value) != -1)
			continue;
		/* Only where every word is name=value: a positional value
		 * may hold '=' (a libpq connection string). */
		if ((c->flags & CMD_NAMED) &&
		    (k = near_param(p, n, argv[i])) != -1) {
			snprintf(err, errlen, "%s: no parameter '%.*s': did "
			    "you mean %s=%.64s? (one of: %s)", c->name,
			    (int)(strchr(argv[i], '=') - argv[i]), argv[i],
			    p[k].name, strchr(argv[i], '=') + 1, c->params);
			goto bad;
		}
		if (c->flags & CMD_NAMED) {
			snprintf(err, errlen, "%s: '%.64s' is not name=value "
			    "with one of: %s", c->name, argv[i], c->params);
			goto bad;
		}
		while (next < n && cJSON_GetObjectItemCaseSensitive(args,
		    p[next].name) != NULL)
			next++;
		if (next >= n) {
			snprintf(err, errlen, "%s: unexpected argument '%.64s'",
			    c->name, argv[i]);
			goto bad;
		}
		if (add_arg(args, p[next].name, argv[i], err, errlen) == -1)
			goto bad;
	}
	for (i = 0; i < n; i++)
		if (!p[i].optional &&
		    cJSON_GetObjectItemCaseSensitive(args, p[i].name) == NULL) {
			snprintf(err, errlen, "%s: missing %s", c->name,
			    p[i].name);
			goto bad;
		}
	return args;
bad:
	cJSON_Delete(args);
	return NULL;
}

bool
commands_takes_body(const struct command *c)
{
	return (c->flags & (CMD_MUTATING | CMD_POST)) != 0;
}

const char *
commands_refusal(const struct command *c, enum cmd_origin from)
{
	if ((c->flags & CMD_CONSOLE_ONLY) && from != CMD_FROM_CONSOLE)
		return "is only available on the serial console";
	if ((c->flags & CMD_NOT_WEB) && from == CMD_FROM_WEB)
		return "names a file the daemon writes: use the console or "
		    "cacheboxctl";
	return NULL;
}

cJSON *
commands_run(struct app *app, const char *name, const cJSON *args,
    enum cmd_origin from)
{
	const struct command	*c;
	const char		*why;
	cJSON			*r;

	if ((c = commands_find(name)) == NULL)
		return commands_error("unknown command '%s' (try 'help')", name);
	if ((why = commands_refusal(c, from)) != NULL)
		return commands_error("'%s' %s", name, why);
	if (args != NULL && !cJSON_IsObject(args))
		return commands_error("%s: arguments must be a JSON object", name);
	r = c->run(app, args, from);
	return r != NULL ? r : commands_error("%s: out of memory", name);
}

cJSON *
commands_ctl_handler(const char *cmd, const cJSON *args, void *arg)
{
	return commands_run(arg, cmd, args, CMD_FROM_CTL);
}
