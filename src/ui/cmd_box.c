/*
 * cmd_box.c — relays, roots, log level and admin-token commands.
 *
 * The box's relays and roots are configuration lists (relays.bootstrap,
 * follow.roots): a change is validated like `config set`, stored in the
 * database so it survives a restart, and applied to the running
 * configuration, where the planners read it. A relay given a role other
 * than bootstrap joins the running pool with that role (which records it
 * in the relays table) but stays out of relays.bootstrap. These handlers
 * never block, never write SQL themselves and never show the admin token.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/secret.h"
#include "nostr/nip19.h"
#include "relay/pool.h"
#include "store/config_store.h"
#include "store/names.h"
#include "store/relays.h"
#include "store/store.h"
#include "store/withdrawn.h"
#include "ui/cmd_box.h"
#include "ui/commands.h"
#include "ui/firstrun.h"
#include "ui/reply.h"
#include "ui/status.h"

#define RELAYS_KEY	"relays.bootstrap"
#define ROOTS_KEY	"follow.roots"
/* What an HTTP bearer token may be made of (RFC 6750 b64token, less '='). */

typedef int	(*same_fn)(const char *, const char *);

static const char *
arg_str(const cJSON *args, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int
same_url(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* Two spellings (npub or hex) of the same public key. */
static int
same_key(const char *a, const char *b)
{
	uint8_t	ka[32], kb[32];

	if (nip19_pubkey_parse(a, ka) == -1 || nip19_pubkey_parse(b, kb) == -1)
		return strcmp(a, b) == 0;
	return memcmp(ka, kb, sizeof(ka)) == 0;
}

/*
 * Call fn on each item of a comma-separated list (spaces around items are
 * dropped, empty items skipped) until it returns non-zero; that value is
 * returned, or 0.
 */
static int
list_each(const char *list, int (*fn)(const char *, void *), void *arg)
{
	char	item[CONFIG_MAX_VALUE + 1];
	size_t	len;
	int	rc;

	while (*list != '\0') {
		list += strspn(list, " \t,");
		len = strcspn(list, ",");
		while (len > 0 && (list[len - 1] == ' ' || list[len - 1] == '\t'))
			len--;
		if (len > 0 && len < sizeof(item)) {
			memcpy(item, list, len);
			item[len] = '\0';
			if ((rc = fn(item, arg)) != 0)
				return rc;
		}
		list += strcspn(list, ",");
	}
	return 0;
}

struct list_edit {
	const char	*item;
	same_fn		 same;
	struct buf	 out;		/* the list without item */
	int		 found;
};

static int
edit_one(const char *item, void *arg)
{
	struct list_edit	*e = arg;

	if (e->same(item, e->item)) {
		e->found = 1;
		return 0;
	}
	if ((e->out.len > 0 && buf_putc(&e->out, ',') == -1) ||
	    buf_puts(&e->out, item) == -1)
		return -1;
	return 0;
}

/* The answer after a list changed: the key, its value and a note if due. */
static cJSON *
list_answer(struct app *app, const char *key, const char *what)
{
	cJSON	*r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "done", what);
	cJSON_AddStringToObject(r, "key", key);
	cJSON_AddStringToObject(r, "value", config_get(app->cfg, key));
	return r;
}

/*
 * Add item to (add = 1) or remove it from (add = 0) the list key.
 * NULL on success, or a new error object.
 */
static cJSON *
list_change(struct app *app, const char *key, const char *item, same_fn same,
    int add, enum cmd_origin from)
{
	struct list_edit	 e = { item, same, { 0 }, 0 };
	cJSON			*r = NULL;

	if ((r = commands_refuse_pinned(app, key)) != NULL)
		return r;
	buf_init(&e.out, CONFIG_MAX_VALUE);
	if (list_each(config_get(app->cfg, key), edit_one, &e) != 0 ||
	    (add && ((e.out.len > 0 && buf_putc(&e.out, ',') == -1) ||
	    buf_puts(&e.out, item) == -1)))
		r = commands_error("%s: the list would be longer than %d bytes",
		    key, CONFIG_MAX_VALUE);
	else if (add && e.found)
		r = commands_error("%s is already in %s", item, key);
	else if (!add && !e.found)
		r = commands_error("%s is not in %s", item, key);
	else
		r = commands_config_store(app, key, buf_cstr(&e.out), from);
	buf_free(&e.out);
	return r;
}

static int
list_contains(const char *list, const char *item, same_fn same)
{
	struct list_edit	e = { item, same, { 0 }, 0 };

	buf_init(&e.out, CONFIG_MAX_VALUE);
	list_each(list, edit_one, &e);
	buf_free(&e.out);
	return e.found;
}

/* ---- relays ---------------------------------------------------------- */

static int
role_valid(const char *role)
{
	return strcmp(role, "bootstrap") == 0 || strcmp(role, "outbox") == 0 ||
	    strcmp(role, "custom") == 0;
}

struct table_rows {
	struct app	*app;
	cJSON		*list;
};

/* One row of the relays table, and whether the configuration names it. */
static void
add_table_row(const struct store_relay_row *row, void *arg)
{
	struct table_rows	*t = arg;
	cJSON			*r = status_relay_row(row);

	if (r == NULL)
		return;
	cJSON_AddStringToObject(r, "last_error",
	    row->last_error ? row->last_error : "");
	cJSON_AddBoolToObject(r, "configured", list_contains(
	    config_get(t->app->cfg, RELAYS_KEY), row->url, same_url));
	cJSON_AddItemToArray(t->list, r);
}

/* The relays table's rows. 0, or -1 when it could not be read whole. */
static int
add_table_rows(struct app *app, cJSON *list)
{
	struct table_rows	t = { app, list };

	return store_relays_each(app->store, add_table_row, &t);
}

static int
known_url(const cJSON *list, const char *url)
{
	const cJSON	*r;
	const char	*u;

	cJSON_ArrayForEach(r, list) {
		u = cJSON_GetStringValue(cJSON_GetObjectItem(r, "url"));
		if (u != NULL && strcmp(u, url) == 0)
			return 1;
	}
	return 0;
}

static int
add_configured_row(const char *url, void *arg)
{
	cJSON	*list = arg, *r;

	if (known_url(list, url))
		return 0;
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "url", url);
	cJSON_AddStringToObject(r, "role", "bootstrap");
	cJSON_AddStringToObject(r, "state", "configured");
	cJSON_AddNumberToObject(r, "events", 0);
	cJSON_AddStringToObject(r, "last_error", "");
	cJSON_AddBoolToObject(r, "configured", 1);
	cJSON_AddItemToArray(list, r);
	return 0;
}

/* The running pool's relays, as the status shows them. */
static void
add_pool_rows(struct app *app, cJSON *list)
{
	struct pool_relay_info	 info;
	size_t			 i, n = pool_relay_count(app->pool);
	cJSON			*r;

	for (i = 0; i < n; i++) {
		if (pool_relay_info(app->pool, i, &info) == -1 ||
		    (r = status_relay_info(&info)) == NULL)
			continue;
		status_relay_sync(app, &info, r);
		cJSON_AddBoolToObject(r, "configured", list_contains(
		    config_get(app->cfg, RELAYS_KEY), info.url, same_url));
		cJSON_AddItemToArray(list, r);
	}
}

cJSON *
cmd_relays_list(struct app *app, const cJSON *args, enum cmd_origin from)
{
	cJSON	*r = cJSON_CreateObject(), *list;

	list = cJSON_AddArrayToObject(r, "relays");
	if (app->pool != NULL)
		add_pool_rows(app, list);
	else if (add_table_rows(app, list) == -1) {
		cJSON_Delete(r);
		return commands_error("relays: cannot read the relays table "
		    "(the log says why)");
	}
	list_each(config_get(app->cfg, RELAYS_KEY), add_configured_row, list);
	return r;
}

static enum relay_role
role_enum(const char *role)
{
	if (strcmp(role, "outbox") == 0)
		return RELAY_ROLE_OUTBOX;
	if (strcmp(role, "custom") == 0)
		return RELAY_ROLE_CUSTOM;
	return RELAY_ROLE_BOOTSTRAP;
}

/*
 * Give url its role: in the running pool (which connects at once and
 * records the role in the relays table), or straight in the table when no
 * pool runs.
 */
static cJSON *
record_role(struct app *app, const char *url, const char *role)
{
	if (app->pool != NULL) {
		if (pool_relay_add(app->pool, url, role_enum(role)) == NULL)
			return commands_error("%s: the relay pool refused it", url);
		return NULL;
	}
	if (store_relay_upsert(app->store, url, role, clock_wall_s()) == -1)
		return commands_error("%s: could not record the role", url);
	return NULL;
}

static cJSON *
check_url(const char *url)
{
	char	err[512];

	if (url == NULL)
		return commands_error("missing \"url\"");
	if (strchr(url, ',') != NULL ||
	    config_validate(RELAYS_KEY, url, err, sizeof(err)) == -1)
		return commands_error("'%s' is not a ws:// or wss:// URL", url);
	return NULL;
}

cJSON *
cmd_relays_add(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const char	*url = arg_str(args, "url");
	const char	*role = arg_str(args, "role");
	cJSON		*e;

	if (role == NULL || *role == '\0')
		role = "bootstrap";
	if ((e = check_url(url)) != NULL)
		return e;
	if (!role_valid(role))
		return commands_error("role must be bootstrap, outbox or custom");
	if (strcmp(role, "bootstrap") == 0 &&
	    (e = list_change(app, RELAYS_KEY, url, same_url, 1, from)) != NULL)
		return e;
	if ((e = record_role(app, url, role)) != NULL)
		return e;
	return list_answer(app, RELAYS_KEY, "added");
}

cJSON *
cmd_relays_remove(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const char	*url = arg_str(args, "url");
	cJSON		*e;

	if (url == NULL)
		return commands_error("missing \"url\"");
	if ((e = list_change(app, RELAYS_KEY, url, same_url, 0, from)) != NULL)
		return e;
	/* Off the list is not enough: what is open there ends now. */
	if (app->pool != NULL)
		pool_relay_retire(app->pool, url, "relay removed from "
		    RELAYS_KEY);
	return list_answer(app, RELAYS_KEY, "removed");
}

/*
 * A bootstrap relay is one listed in relays.bootstrap, so moving a relay
 * into or out of that role edits the list; the role is recorded either way.
 */
cJSON *
cmd_relays_role(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const char	*url = arg_str(args, "url");
	const char	*role = arg_str(args, "role");
	int		 listed;
	cJSON		*e;

	if ((e = check_url(url)) != NULL)
		return e;
	if (role == NULL || !role_valid(role))
		return commands_error("role must be bootstrap, outbox or custom");
	listed = list_contains(config_get(app->cfg, RELAYS_KEY), url, same_url);
	if (strcmp(role, "bootstrap") == 0 && !listed)
		e = list_change(app, RELAYS_KEY, url, same_url, 1, from);
	else if (strcmp(role, "bootstrap") != 0 && listed)
		e = list_change(app, RELAYS_KEY, url, same_url, 0, from);
	if (e != NULL || (e = record_role(app, url, role)) != NULL)
		return e;
	return list_answer(app, RELAYS_KEY, role);
}

/* ---- roots ----------------------------------------------------------- */

struct root_rows {
	struct app	*app;
	cJSON		*list;
};

static int
add_root_row(const char *item, void *arg)
{
	struct root_rows	*t = arg;
	cJSON			*r;
	uint8_t			 pk[32];
	char			 hex[65], npub[NIP19_KEY_CHARS + 1];
	char			 name[STORE_NAME_MAX_BYTES + 1];

	r = cJSON_CreateObject();
	if (nip19_pubkey_parse(item, pk) == 0 &&
	    hex_encode(pk, sizeof(pk), hex, sizeof(hex)) == 0 &&
	    nip19_encode32(NIP19_NPUB, pk, npub, sizeof(npub)) == NIP19_OK) {
		cJSON_AddStringToObject(r, "npub", npub);
		cJSON_AddStringToObject(r, "hex", hex);
		if (store_profile_name(t->app->store, pk, name,
		    sizeof(name)) == 1)
			cJSON_AddStringToObject(r, "name", name);
		else
			cJSON_AddNullToObject(r, "name");
	} else
		cJSON_AddStringToObject(r, "invalid", item);
	cJSON_AddItemToArray(t->list, r);
	return 0;
}

cJSON *
cmd_roots_list(struct app *app, const cJSON *args, enum cmd_origin from)
{
	struct root_rows	 t = { app, NULL };
	cJSON			*r = cJSON_CreateObject();

	t.list = cJSON_AddArrayToObject(r, "roots");
	list_each(config_get(app->cfg, ROOTS_KEY), add_root_row, &t);
	return r;
}

/* Name the root pk in answer r: its npub and profile name (or null). */
static cJSON *
root_answer(struct app *app, const uint8_t pk[32], cJSON *r)
{
	char	npub[NIP19_KEY_CHARS + 1], name[STORE_NAME_MAX_BYTES + 1];

	if (r == NULL)
		return NULL;
	if (nip19_encode32(NIP19_NPUB, pk, npub, sizeof(npub)) == NIP19_OK)
		cJSON_AddStringToObject(r, "npub", npub);
	if (store_profile_name(app->store, pk, name, sizeof(name)) == 1)
		cJSON_AddStringToObject(r, "name", name);
	else
		cJSON_AddNullToObject(r, "name");
	return r;
}

cJSON *
cmd_roots_add(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const char	*key = arg_str(args, "key");
	uint8_t		 pk[32];
	cJSON		*e;

	if (key == NULL || nip19_pubkey_parse(key, pk) == -1)
		return commands_error("'%s' is not an npub or a 64-hex public "
		    "key", key ? key : "");
	if ((e = list_change(app, ROOTS_KEY, key, same_key, 1, from)) != NULL)
		return e;
	return root_answer(app, pk, list_answer(app, ROOTS_KEY, "added"));
}

cJSON *
cmd_roots_remove(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const char	*key = arg_str(args, "key");
	cJSON		*e;

	if (key == NULL)
		return commands_error("missing \"key\"");
	if ((e = list_change(app, ROOTS_KEY, key, same_key, 0, from)) != NULL)
		return e;
	return list_answer(app, ROOTS_KEY, "removed");
}

/* ---- the roots' versions kept aside --------------------------------- */

/* A line a person reads for a kept version: what it held. */
static void
version_summary(uint32_t kind, const char *json, size_t len, char *out,
    size_t outlen)
{
	cJSON		*obj = cJSON_ParseWithLength(json, len), *t, *content;
	const cJSON	*tags, *k;
	const char	*want = kind == 3 ? "p" : "r";
	int		 n = 0;

	snprintf(out, outlen, "?");
	if (obj == NULL)
		return;
	tags = cJSON_GetObjectItemCaseSensitive(obj, "tags");
	if (kind == 0) {
		content = cJSON_Parse(cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(obj, "content")));
		t = cJSON_GetObjectItemCaseSensitive(content, "name");
		snprintf(out, outlen, "name %s", cJSON_IsString(t) ?
		    t->valuestring : "(none)");
		cJSON_Delete(content);
	} else {
		cJSON_ArrayForEach(t, tags)
			if ((k = t->child) != NULL && cJSON_IsString(k) &&
			    strcmp(k->valuestring, want) == 0)
				n++;
		snprintf(out, outlen, "%d %s", n, kind == 3 ? "follows" :
		    "relays");
	}
	cJSON_Delete(obj);
}

struct history_rows {
	cJSON	*list;
};

static int
add_version(void *arg, const uint8_t pubkey[32], uint32_t kind,
    int64_t created_at, const char *json, size_t len)
{
	struct history_rows	*h = arg;
	char			 npub[NIP19_KEY_CHARS + 1], what[96];
	cJSON			*r = cJSON_CreateObject();

	if (r == NULL)
		return 1;
	if (nip19_encode32(NIP19_NPUB, pubkey, npub, sizeof(npub)) == NIP19_OK)
		cJSON_AddStringToObject(r, "npub", npub);
	cJSON_AddNumberToObject(r, "kind", kind);
	cJSON_AddNumberToObject(r, "created_at", (double)created_at);
	version_summary(kind, json, len, what, sizeof(what));
	cJSON_AddStringToObject(r, "summary", what);
	cJSON_AddItemToObject(r, "event", cJSON_ParseWithLength(json, len));
	cJSON_AddItemToArray(h->list, r);
	return 0;
}

cJSON *
cmd_roots_history(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const char		*key = arg_str(args, "key");
	const char		*kind = arg_str(args, "kind");
	struct history_rows	 h;
	uint8_t			 pk[32];
	long			 k = -1;
	char			*end;
	cJSON			*r;

	(void)from;
	if (key != NULL && *key != '\0' && nip19_pubkey_parse(key, pk) == -1)
		return commands_error("'%s' is not an npub or a 64-hex public "
		    "key", key);
	if (kind != NULL && *kind != '\0' && ((k = strtol(kind, &end, 10)) < 0 ||
	    *end != '\0' || (k != 0 && k != 3 && k != 10002)))
		return commands_error("kind: '%s': the versions kept aside are "
		    "of kinds 0, 3 and 10002", kind);
	if ((r = cJSON_CreateObject()) == NULL ||
	    (h.list = cJSON_AddArrayToObject(r, "versions")) == NULL) {
		cJSON_Delete(r);
		return commands_error("out of memory");
	}
	if (store_roots_history_list(app->store, key != NULL && *key != '\0' ?
	    pk : NULL, k, ROOTS_HISTORY_LIST_MAX, add_version, &h) == -1) {
		cJSON_Delete(r);
		return commands_error("the store could not list the versions "
		    "kept aside");
	}
	return r;
}

/* ---- log level, admin token ------------------------------------------ */

cJSON *
cmd_log_level(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const char	*level = arg_str(args, "level");
	enum log_level	 lvl;
	cJSON		*r, *e;

	if (level != NULL && *level != '\0') {
		if (log_level_parse(level, &lvl) == -1)
			return commands_error("unknown level '%s' (error, warn, "
			    "info, debug)", level);
		if ((e = commands_config_store(app, "log.level", level,
		    from)) != NULL)
			return e;
		log_set_level(lvl);
	}
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "level", log_level_name(log_get_level()));
	return r;
}

/*
 * Only the console reaches this (console_only in the table): physical
 * access to the box is what entitles someone to set the token.
 */
cJSON *
cmd_admin_token_set(struct app *app, const cJSON *args, enum cmd_origin from)
{
	const char	*token = arg_str(args, "token");
	cJSON		*r, *e;

	char		 err[256];

	if (token == NULL)
		return commands_error("admin-token set: missing token");
	if (secret_token_check(token, err, sizeof(err)) == -1)
		return commands_error("%s", err);
	if ((e = commands_config_store(app, CONFIG_ADMIN_TOKEN, token, from)) != NULL)
		return e;
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, CONFIG_ADMIN_TOKEN, "set");
	return r;
}

/* ---- setup ---------------------------------------------------------------- */

/*
 * "setup": whether setup is open, how long the code has left and how long
 * wrong codes are not compared. Asking while none is valid makes one
 * (shown at the box, never here).
 */
cJSON *
cmd_setup(struct app *app, const cJSON *args, enum cmd_origin from)
{
	struct firstrun_code	 code;
	cJSON			*r = cJSON_CreateObject();
	bool			 ready = firstrun_code_ready(app->firstrun);

	if (r == NULL)
		return NULL;
	cJSON_AddBoolToObject(r, "needed", ready);
	if (!ready)
		return r;
	firstrun_code(app->firstrun, &code);
	cJSON_AddNumberToObject(r, "expires_in_s", (double)code.left_s);
	cJSON_AddNumberToObject(r, "locked_s", (double)code.locked_s);
	cJSON_AddStringToObject(r, "code_shown", "the box's console, its login "
	    "screen and its log");
	return r;
}

/* "setup code", console only: the code itself, made if none is valid. */
cJSON *
cmd_setup_code(struct app *app, const cJSON *args, enum cmd_origin from)
{
	struct firstrun		*fr = app->firstrun;
	struct firstrun_code	 code;
	cJSON			*r;

	if (fr == NULL)
		return commands_error("there is no status page (http.listen "
		    "is empty): set the admin password here with admin-token "
		    "set");
	if (!firstrun_open(fr))
		return commands_error("an admin password is set already: setup "
		    "is over (admin-token set changes it)");
	if (!firstrun_code_ready(fr))
		return commands_error("no setup code: no random bytes (see the "
		    "log)");
	if ((r = cJSON_CreateObject()) == NULL)
		return NULL;
	firstrun_code(fr, &code);
	cJSON_AddStringToObject(r, "code", code.text);
	cJSON_AddNumberToObject(r, "expires_in_s", (double)code.left_s);
	cJSON_AddStringToObject(r, "use", "type it with a new admin password "
	    "on the status page");
	return r;
}
