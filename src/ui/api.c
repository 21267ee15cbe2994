/*
 * api.c — the meaning of the web API (paths, arguments, the bearer token,
 * Prometheus text), without any transport. Everything a request carries is
 * peer input: lengths are bounded by the caller (HTTP_API_MAX_BODY_BYTES)
 * and every JSON value is type-checked before a command sees it. Nothing
 * here runs a command or keeps state.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/embed.h"
#include "core/secret.h"
#include "ui/api.h"
#include "ui/commands.h"

#define API_MAX_PATH		256	/* bytes of a command path after /api/ */
#define METRIC_PREFIX		"cachebox"
#define METRIC_MAX_NAME		128	/* bytes of a metric name */
#define METRIC_MAX_PATH		(METRIC_MAX_NAME + 16)	/* bytes of a status path shown in HELP */
#define METRIC_MAX_FIELDS	32	/* distinct fields of a row array */

const struct command *
api_command_for_path(const char *path)
{
	char	name[API_MAX_PATH];
	size_t	len, i;

	if (strncmp(path, API_PREFIX, strlen(API_PREFIX)) != 0)
		return NULL;
	path += strlen(API_PREFIX);
	if ((len = strlen(path)) == 0 || len >= sizeof(name) ||
	    path[0] == '/' || path[len - 1] == '/' || strstr(path, "//") ||
	    strchr(path, ' '))
		return NULL;
	for (i = 0; i <= len; i++)
		name[i] = path[i] == '/' ? ' ' : path[i];
	return commands_find(name);
}

const struct embed_file *
api_asset_for_path(const char *path)
{
	const struct embed_file	*f;

	if (strcmp(path, "/") == 0)
		path = "/index.html";
	if (path[0] != '/' || strchr(path + 1, '/') != NULL)
		return NULL;
	for (f = ui_www_files; f->name != NULL; f++)
		if (strcmp(f->name, path + 1) == 0)
			return f;
	return NULL;
}

const char *
api_content_type(const char *name)
{
	static const struct { const char *ext, *type; } types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".ico", "image/x-icon" },
		{ ".json", "application/json" },
	};
	const char	*dot = strrchr(name, '.');
	size_t		 i;

	for (i = 0; dot != NULL && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return "application/octet-stream";
}

/* ---- arguments ------------------------------------------------------- */

static int
param_index(const struct command_param *p, int n, const char *name)
{
	int	i;

	for (i = 0; i < n; i++)
		if (strcmp(p[i].name, name) == 0)
			return i;
	return -1;
}

/* The text of a string, number or boolean argument into out; -1 otherwise. */
static int
arg_text(const cJSON *v, char *out, size_t outlen, const char **text)
{
	if (cJSON_IsString(v))
		*text = v->valuestring;
	else if (cJSON_IsBool(v))
		*text = cJSON_IsTrue(v) ? "true" : "false";
	else if (cJSON_IsNumber(v)) {
		if (json_is_integer(v->valuedouble))
			snprintf(out, outlen, "%lld", (long long)v->valuedouble);
		else
			snprintf(out, outlen, "%.17g", v->valuedouble);
		*text = out;
	} else
		return -1;
	return 0;
}

static int
add_checked(const struct command *c, const struct command_param *p, int n,
    cJSON *args, const cJSON *v, char *err, size_t errlen)
{
	char		 num[64];
	const char	*text;

	if (v->string == NULL || param_index(p, n, v->string) == -1) {
		snprintf(err, errlen, "%s: unknown argument '%.64s' (takes: %s)",
		    c->name, v->string ? v->string : "", c->params[0] ?
		    c->params : "no arguments");
		return -1;
	}
	if (cJSON_GetObjectItemCaseSensitive(args, v->string) != NULL) {
		snprintf(err, errlen, "%s: argument '%s' given twice", c->name,
		    v->string);
		return -1;
	}
	if (arg_text(v, num, sizeof(num), &text) == -1) {
		snprintf(err, errlen, "%s: argument '%s' must be a string",
		    c->name, v->string);
		return -1;
	}
	if (cJSON_AddStringToObject(args, v->string, text) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

cJSON *
api_args_check(const struct command *c, const cJSON *given, char *err,
    size_t errlen)
{
	struct command_param	 p[COMMAND_MAX_PARAMS];
	const cJSON		*v;
	cJSON			*args;
	int			 i, n = commands_params(c, p, COMMAND_MAX_PARAMS);

	if (!cJSON_IsObject(given)) {
		snprintf(err, errlen, "the body must be a JSON object");
		return NULL;
	}
	if ((args = cJSON_CreateObject()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	cJSON_ArrayForEach(v, given)
		if (add_checked(c, p, n, args, v, err, errlen) == -1)
			goto bad;
	for (i = 0; i < n; i++)
		if (!p[i].optional &&
		    cJSON_GetObjectItemCaseSensitive(args, p[i].name) == NULL) {
			snprintf(err, errlen, "%s: missing \"%s\"", c->name,
			    p[i].name);
			goto bad;
		}
	return args;
bad:
	cJSON_Delete(args);
	return NULL;
}

static int
all_space(const char *p, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if (strchr(" \t\r\n", p[i]) == NULL || p[i] == '\0')
			return 0;
	return 1;
}

cJSON *
api_body_args(const struct command *c, const char *body, size_t len,
    char *err, size_t errlen)
{
	const char	*end = NULL;
	cJSON		*v, *args;

	if (all_space(body, len)) {
		v = cJSON_CreateObject();
		args = v ? api_args_check(c, v, err, errlen) : NULL;
		cJSON_Delete(v);
		return args;
	}
	v = cJSON_ParseWithLengthOpts(body, len, &end, 0);
	if (v == NULL || end == NULL || end < body ||
	    !all_space(end, len - (size_t)(end - body))) {
		snprintf(err, errlen, "malformed JSON body%s", v == NULL ?
		    "" : ": text after the object");
		cJSON_Delete(v);
		return NULL;
	}
	args = api_args_check(c, v, err, errlen);
	cJSON_Delete(v);
	return args;
}

/* ---- the bearer token -------------------------------------------------- */

enum api_auth
api_auth_check(const char *token, const char *header)
{
	size_t	len;

	if (token == NULL || *token == '\0')
		return API_AUTH_NO_TOKEN;
	if (header == NULL || strncasecmp(header, "Bearer ", 7) != 0)
		return API_AUTH_MISSING;
	header += 7;
	header += strspn(header, " ");
	len = strlen(header);
	while (len > 0 && header[len - 1] == ' ')
		len--;
	if (len == 0)
		return API_AUTH_MISSING;
	return secret_verify(token, header, len) ? API_AUTH_OK :
	    API_AUTH_WRONG;
}

/* ---- Prometheus text --------------------------------------------------- */

/* Help lines for the fields DESIGN.md promises; others get a generic one. */
static const struct { const char *name, *help; } metric_help[] = {
	{ "cachebox_uptime_seconds", "Seconds since cacheboxd started." },
	{ "cachebox_rss_bytes", "Resident memory of cacheboxd in bytes." },
	{ "cachebox_idle", "1 when there is no work left." },
	{ "cachebox_backfill_authors_total", "Followed authors." },
	{ "cachebox_backfill_authors_complete",
	    "Authors whose history is complete on every relay." },
	{ "cachebox_backfill_authors_incomplete",
	    "Authors recorded incomplete on some relay." },
	{ "cachebox_store_events", "Events in the local store." },
	{ "cachebox_inbox_pending", "Events waiting to go to the uplink." },
	{ "cachebox_inbox_forwarded", "Events the uplink accepted." },
	{ "cachebox_inbox_rejected", "Events the uplink refused (dead letters)." },
	{ "cachebox_ingest_received", "Events relays sent since start." },
	{ "cachebox_ingest_stored", "Of those, new events stored." },
	{ "cachebox_ingest_duplicates",
	    "Of those, events already stored (no signature check)." },
	{ "cachebox_ingest_invalid",
	    "Of those, dropped: malformed, bad id or bad signature." },
	{ "cachebox_ingest_too_large",
	    "Of those, dropped: over limits.max_event_bytes." },
	{ "cachebox_ingest_unrequested",
	    "Of those, dropped: no filter of the subscription matched." },
	{ "cachebox_ingest_errors", "Of those, not stored: store failure." },
	{ "cachebox_ingest_lost_batches",
	    "Batches whose commit failed (their events are asked again)." },
	{ "cachebox_relay_events", "Events received from a relay." },
	{ "cachebox_relay_invalid",
	    "Invalid events and frames received from a relay." },
	{ "cachebox_relay_cut_invalid",
	    "Connections to a relay cut because its input was mostly invalid." },
	{ "cachebox_relay_state", "1 for the relay's current connection state." },
	{ "cachebox_relay_endpoint_clients",
	    "Clients connected to the box's own relay." },
	{ "cachebox_relay_endpoint_subscriptions",
	    "Subscriptions those clients hold open." },
	{ "cachebox_relay_endpoint_reqs", "REQ messages served since start." },
	{ "cachebox_relay_endpoint_events_sent",
	    "EVENT messages sent to the relay's clients since start." },
	{ "cachebox_relay_endpoint_bytes_out",
	    "Bytes written to the relay's clients since start." },
	{ "cachebox_relay_endpoint_writes_refused",
	    "EVENTs from the relay's clients refused since start." },
	{ "cachebox_relay_endpoint_cut_slow",
	    "Relay clients cut off for not reading what they asked for." },
};

static const char *
help_for(const char *name)
{
	size_t	i;

	for (i = 0; i < sizeof(metric_help) / sizeof(metric_help[0]); i++)
		if (strcmp(metric_help[i].name, name) == 0)
			return metric_help[i].help;
	return NULL;
}

/* prefix "_" field, with every character outside [A-Za-z0-9_] made '_'. */
static void
metric_name(char *out, size_t outlen, const char *prefix, const char *field)
{
	size_t	i, n;

	snprintf(out, outlen, "%s_%s", prefix, field);
	n = strlen(out);
	if (n > 2 && strcmp(out + n - 2, "_s") == 0 && n + 6 < outlen)
		strcpy(out + n - 2, "_seconds");
	for (i = 0; out[i] != '\0'; i++)
		if (!((out[i] >= 'a' && out[i] <= 'z') ||
		    (out[i] >= 'A' && out[i] <= 'Z') ||
		    (out[i] >= '0' && out[i] <= '9') || out[i] == '_'))
			out[i] = '_';
}

static int
metric_head(struct buf *out, const char *name, const char *path)
{
	const char	*help = help_for(name);

	if (help != NULL && buf_printf(out, "# HELP %s %s\n", name, help) == -1)
		return -1;
	if (help == NULL && buf_printf(out, "# HELP %s Status field %s.\n",
	    name, path) == -1)
		return -1;
	return buf_printf(out, "# TYPE %s gauge\n", name);
}

static int
metric_value(struct buf *out, const cJSON *v)
{
	if (cJSON_IsBool(v))
		return buf_puts(out, cJSON_IsTrue(v) ? " 1\n" : " 0\n");
	if (json_is_integer(v->valuedouble))
		return buf_printf(out, " %lld\n", (long long)v->valuedouble);
	return buf_printf(out, " %.17g\n", v->valuedouble);
}

/* A label value with \, " and newline escaped. */
static int
label_value(struct buf *out, const char *s)
{
	for (; *s != '\0'; s++) {
		if ((*s == '\\' || *s == '"') && buf_putc(out, '\\') == -1)
			return -1;
		if (*s == '\n') {
			if (buf_puts(out, "\\n") == -1)
				return -1;
		} else if (buf_putc(out, *s) == -1)
			return -1;
	}
	return 0;
}

/* {url="...",role="..."} of a row, plus one extra label if given. */
static int
row_labels(struct buf *out, const cJSON *row, const char *xname,
    const char *xval)
{
	static const char *const keys[] = { "url", "role", "name", "kind" };
	const char	*v, *sep = "{";
	size_t		 i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = cJSON_GetStringValue(cJSON_GetObjectItem(row, keys[i]));
		if (v == NULL)
			continue;
		if (buf_printf(out, "%s%s=\"", sep, keys[i]) == -1 ||
		    label_value(out, v) == -1 || buf_putc(out, '"') == -1)
			return -1;
		sep = ",";
	}
	if (xname != NULL && (buf_printf(out, "%s%s=\"", sep, xname) == -1 ||
	    label_value(out, xval) == -1 || buf_putc(out, '"') == -1))
		return -1;
	if (strcmp(sep, "{") == 0 && xname == NULL)
		return 0;
	return buf_putc(out, '}');
}

/* Every row's value of one field, as one metric. */
static int
rows_field(struct buf *out, const char *prefix, const char *path,
    const cJSON *rows, const char *field)
{
	const cJSON	*row, *v;
	char		 name[METRIC_MAX_NAME], sub[METRIC_MAX_PATH];
	int		 state = strcmp(field, "state") == 0;

	metric_name(name, sizeof(name), prefix, field);
	snprintf(sub, sizeof(sub), "%s[].%s", path, field);
	if (metric_head(out, name, sub) == -1)
		return -1;
	cJSON_ArrayForEach(row, rows) {
		v = cJSON_GetObjectItemCaseSensitive(row, field);
		if (state && cJSON_IsString(v)) {
			if (buf_puts(out, name) == -1 ||
			    row_labels(out, row, "state", v->valuestring) == -1 ||
			    buf_puts(out, " 1\n") == -1)
				return -1;
		} else if (!state && (cJSON_IsNumber(v) || cJSON_IsBool(v))) {
			if (buf_puts(out, name) == -1 ||
			    row_labels(out, row, NULL, NULL) == -1 ||
			    metric_value(out, v) == -1)
				return -1;
		}
	}
	return 0;
}

static int
field_wanted(const cJSON *v)
{
	return cJSON_IsNumber(v) || cJSON_IsBool(v) ||
	    (cJSON_IsString(v) && strcmp(v->string, "state") == 0);
}

/*
 * An array of objects: the row prefix is the array's name without its
 * plural s (relays -> cachebox_relay_...), one metric per field.
 */
static int
metrics_rows(struct buf *out, const char *prefix, const char *path,
    const cJSON *rows)
{
	const char	*seen[METRIC_MAX_FIELDS];
	const cJSON	*row, *v;
	char		 rp[METRIC_MAX_NAME];
	size_t		 nseen = 0, i, n;

	snprintf(rp, sizeof(rp), "%s", prefix);
	if ((n = strlen(rp)) > 1 && rp[n - 1] == 's')
		rp[n - 1] = '\0';
	cJSON_ArrayForEach(row, rows) {
		cJSON_ArrayForEach(v, row) {
			if (v->string == NULL || !field_wanted(v))
				continue;
			for (i = 0; i < nseen; i++)
				if (strcmp(seen[i], v->string) == 0)
					break;
			if (i < nseen || nseen == METRIC_MAX_FIELDS)
				continue;
			seen[nseen++] = v->string;
			if (rows_field(out, rp, path, rows, v->string) == -1)
				return -1;
		}
	}
	return 0;
}

static int
metrics_object(struct buf *out, const char *prefix, const char *path,
    const cJSON *obj)
{
	const cJSON	*v;
	char		 name[METRIC_MAX_NAME], sub[METRIC_MAX_NAME];

	cJSON_ArrayForEach(v, obj) {
		if (v->string == NULL)
			continue;
		metric_name(name, sizeof(name), prefix, v->string);
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "",
		    v->string);
		if (cJSON_IsNumber(v) || cJSON_IsBool(v)) {
			if (metric_head(out, name, sub) == -1 ||
			    buf_puts(out, name) == -1 || metric_value(out, v) == -1)
				return -1;
		} else if (cJSON_IsString(v) && strcmp(v->string, "state") == 0) {
			if (metric_head(out, name, sub) == -1 ||
			    buf_printf(out, "%s{state=\"", name) == -1 ||
			    label_value(out, v->valuestring) == -1 ||
			    buf_puts(out, "\"} 1\n") == -1)
				return -1;
		} else if (cJSON_IsObject(v)) {
			if (metrics_object(out, name, sub, v) == -1)
				return -1;
		} else if (cJSON_IsArray(v) && cJSON_IsObject(v->child)) {
			if (metrics_rows(out, name, sub, v) == -1)
				return -1;
		}
	}
	return 0;
}

int
api_metrics(const cJSON *status, struct buf *out)
{
	const char	*version;

	version = cJSON_GetStringValue(cJSON_GetObjectItem(status, "version"));
	if (buf_puts(out, "# HELP cachebox_info Version of cacheboxd.\n"
	    "# TYPE cachebox_info gauge\ncachebox_info{version=\"") == -1 ||
	    label_value(out, version ? version : "") == -1 ||
	    buf_puts(out, "\"} 1\n") == -1)
		return -1;
	return metrics_object(out, METRIC_PREFIX, "", status);
}
