/*
 * render.c — turns a command's JSON answer into lines for a person.
 * Objects become "name: value" lines, nested ones indented two spaces a
 * level; an array of objects is numbered "[0]", "[1]", ...; an empty array
 * reads "(none)"; booleans read yes/no and null "-". A number is shown in
 * the unit its member's name says (render_units below): Unix times as
 * UTC dates, byte counts in B/KiB/MiB/GiB, seconds as a duration. Some
 * answers have a form of their own: help, follows, config list and relays
 * list here, status, jobs list, jobs show and recovery in render_sum.c.
 * It only formats: it never decides what a command answers, and the JSON
 * form (--json) is never touched here.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "ui/render.h"
#include "ui/render_int.h"

static int	render_value(struct buf *, const cJSON *, int, const char *);

enum render_unit {
	UNIT_NONE,
	UNIT_TIME,		/* Unix seconds (wall clock) */
	UNIT_BYTES,
	UNIT_SECONDS,		/* a duration */
	UNIT_MS,		/* a duration */
};

enum render_match { MATCH_EXACT, MATCH_PREFIX, MATCH_SUFFIX };

/* The unit of a number, by its member's name: the commands' naming habit. */
static const struct render_unit_rule {
	const char		*name;
	enum render_match	 match;
	enum render_unit	 unit;
} render_units[] = {
	{ "since",		MATCH_EXACT,	UNIT_TIME },
	{ "until",		MATCH_EXACT,	UNIT_TIME },
	{ "gap_since",		MATCH_EXACT,	UNIT_TIME },
	{ "next_attempt",	MATCH_EXACT,	UNIT_TIME },
	{ "_at",		MATCH_SUFFIX,	UNIT_TIME },
	{ "bytes",		MATCH_EXACT,	UNIT_BYTES },
	{ "bytes_",		MATCH_PREFIX,	UNIT_BYTES },
	{ "_bytes",		MATCH_SUFFIX,	UNIT_BYTES },
	{ "_s",			MATCH_SUFFIX,	UNIT_SECONDS },
	{ "_ms",		MATCH_SUFFIX,	UNIT_MS },
};

static enum render_unit
unit_of(const char *name)
{
	size_t	i, nl, rl;

	if (name == NULL)
		return UNIT_NONE;
	nl = strlen(name);
	for (i = 0; i < sizeof(render_units) / sizeof(render_units[0]); i++) {
		const struct render_unit_rule *r = &render_units[i];

		rl = strlen(r->name);
		if ((r->match == MATCH_EXACT && strcmp(name, r->name) == 0) ||
		    (r->match == MATCH_PREFIX && nl > rl &&
		    strncmp(name, r->name, rl) == 0) ||
		    (r->match == MATCH_SUFFIX && nl > rl &&
		    strcmp(name + nl - rl, r->name) == 0))
			return r->unit;
	}
	return UNIT_NONE;
}

static int
render_number(struct buf *out, const char *name, double d)
{
	long long	n = (long long)d;

	if (!json_is_integer(d))
		return buf_printf(out, "%g", d);
	switch (unit_of(name)) {
	case UNIT_TIME:
		return render_time(out, n);
	case UNIT_BYTES:
		return render_bytes(out, n);
	case UNIT_SECONDS:
		return render_duration(out, n);
	case UNIT_MS:
		return buf_printf(out, "%lld ms", n);
	case UNIT_NONE:
		break;
	}
	return buf_printf(out, "%lld", n);
}

/* One scalar; name is its member's name (NULL in an array of scalars). */
static int
render_scalar(struct buf *out, const char *name, const cJSON *v)
{
	if (cJSON_IsString(v))
		return buf_puts(out, v->valuestring);
	if (cJSON_IsBool(v))
		return buf_puts(out, cJSON_IsTrue(v) ? "yes" : "no");
	if (cJSON_IsNumber(v))
		return render_number(out, name, v->valuedouble);
	return buf_puts(out, "-");
}

static int
render_item(struct buf *out, const cJSON *item, int depth, const char *nl)
{
	if (buf_printf(out, "%*s%s:", depth * 2, "",
	    item->string ? item->string : "-") == -1)
		return -1;
	if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
		if (buf_puts(out, nl) == -1)
			return -1;
		return render_value(out, item, depth + 1, nl);
	}
	if (buf_putc(out, ' ') == -1 ||
	    render_scalar(out, item->string, item) == -1)
		return -1;
	return buf_puts(out, nl);
}

static int
render_array(struct buf *out, const cJSON *v, int depth, const char *nl)
{
	const cJSON	*item;
	int		 n = 0, rc = 0;

	cJSON_ArrayForEach(item, v) {
		if (cJSON_IsObject(item) || cJSON_IsArray(item))
			rc = buf_printf(out, "%*s[%d]%s", depth * 2, "", n,
			    nl) == -1 ? -1 : render_value(out, item,
			    depth + 1, nl);
		else
			rc = buf_printf(out, "%*s", depth * 2, "") == -1 ||
			    render_scalar(out, v->string, item) == -1 ||
			    buf_puts(out, nl) == -1 ? -1 : 0;
		if (rc == -1)
			return -1;
		n++;
	}
	if (n == 0)
		return buf_printf(out, "%*s(none)%s", depth * 2, "", nl);
	return 0;
}

static int
render_value(struct buf *out, const cJSON *v, int depth, const char *nl)
{
	const cJSON	*item;

	if (cJSON_IsArray(v))
		return render_array(out, v, depth, nl);
	if (!cJSON_IsObject(v)) {
		if (render_scalar(out, v->string, v) == -1)
			return -1;
		return buf_puts(out, nl);
	}
	cJSON_ArrayForEach(item, v)
		if (render_item(out, item, depth, nl) == -1)
			return -1;
	return 0;
}

int
render_human(struct buf *out, const cJSON *v, const char *nl)
{
	return render_value(out, v, 0, nl);
}

/*
 * One "name params  help" line per command of a help answer; a command
 * that takes name=value words shows "name=value..." and lists its
 * parameters on an indented line of their own; a console-only command is
 * marked so (cacheboxctl and the web refuse it).
 */
static int
render_help(struct buf *out, const cJSON *v, const char *nl)
{
	const cJSON	*c;
	char		 usage[128];
	const char	*name, *params, *help;
	bool		 named, local;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(v, "commands")) {
		name = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
		params = cJSON_GetStringValue(cJSON_GetObjectItem(c, "params"));
		help = cJSON_GetStringValue(cJSON_GetObjectItem(c, "help"));
		if (name == NULL || params == NULL || help == NULL)
			continue;
		named = cJSON_IsTrue(cJSON_GetObjectItem(c, "named"));
		local = cJSON_IsTrue(cJSON_GetObjectItem(c, "console_only"));
		snprintf(usage, sizeof(usage), "%s%s%s", name,
		    *params ? " " : "", named ? "name=value..." : params);
		if (buf_printf(out, "  %-28s %s%s%s", usage,
		    local ? "[console only] " : "", help, nl) == -1 ||
		    (named && buf_printf(out, "  %-28s names: %s%s", "",
		    params, nl) == -1))
			return -1;
	}
	return 0;
}

/*
 * config list, one line per key: key (padded), value (or "(empty)"), and
 * where it comes from unless it is the default; a pinned key says by what.
 */
static int
render_config_list(struct buf *out, const cJSON *v, const char *nl)
{
	const cJSON	*e, *list = cJSON_GetObjectItem(v, "config");
	int		 w = 0, n;

	cJSON_ArrayForEach(e, list)
		if ((n = (int)strlen(render_str(e, "key"))) > w)
			w = n;
	cJSON_ArrayForEach(e, list) {
		const char	*val = render_str(e, "value");
		const char	*src = render_str(e, "source");
		const char	*pin = render_str(e, "pinned_by");
		const char	*unit = render_str(e, "unit");

		if (buf_printf(out, "%-*s  %s%s%s", w, render_str(e, "key"),
		    *val ? val : "(empty)", *val && *unit ? " " : "",
		    *val ? unit : "") == -1)
			return -1;
		if (*pin && buf_printf(out, "  (pinned by %s)", pin) == -1)
			return -1;
		if (!*pin && *src && strcmp(src, "default") != 0 &&
		    buf_printf(out, "  (%s)", src) == -1)
			return -1;
		if (buf_puts(out, nl) == -1)
			return -1;
	}
	return 0;
}

/*
 * relays list, one line per relay: URL (padded), role, state and what its
 * health says, events received, and the last error when there is one.
 */
static int
render_relays_list(struct buf *out, const cJSON *v, const char *nl)
{
	const cJSON	*r, *list = cJSON_GetObjectItem(v, "relays");
	int		 w = 0, n = cJSON_GetArraySize(list);

	if (buf_printf(out, "%d relay%s%s", n, n == 1 ? "" : "s", nl) == -1)
		return -1;
	cJSON_ArrayForEach(r, list)
		if ((n = (int)strlen(render_str(r, "url"))) > w)
			w = n;
	cJSON_ArrayForEach(r, list) {
		const cJSON	*ev = cJSON_GetObjectItem(r, "events");
		const char	*health = render_str(r, "health");
		const char	*err = render_str(r, "last_error");

		if (buf_printf(out, "%-*s  %-9s  %-10s  %s%sevents %.0f%s%s%s",
		    w, render_str(r, "url"), render_str(r, "role"),
		    render_str(r, "state"), health, *health ? "  " : "",
		    cJSON_IsNumber(ev) ? ev->valuedouble : 0,
		    *err ? "  last error: " : "", err, nl) == -1)
			return -1;
	}
	return 0;
}

/*
 * follows, one line per author: npub, state, relays complete of those
 * known, events stored, root/stale, the reason when no relay is known.
 * A count by state comes first; a page of a longer list says how many of
 * how many it shows ("3 of 30 followed authors shown (1-3), of them 3
 * complete, ...").
 */
static int
render_follows(struct buf *out, const cJSON *v, const char *nl)
{
	const cJSON	*a, *list = cJSON_GetObjectItem(v, "follows");
	const cJSON	*total, *offset;
	int		 n = 0, complete = 0, draining = 0, incomplete = 0;
	const char	*st;

	cJSON_ArrayForEach(a, list) {
		st = render_str(a, "state");
		n++;
		complete += strcmp(st, "complete") == 0;
		draining += strcmp(st, "draining") == 0;
		incomplete += strcmp(st, "incomplete") == 0;
	}
	total = cJSON_GetObjectItem(v, "total");
	offset = cJSON_GetObjectItem(v, "offset");
	if (cJSON_IsNumber(total) && total->valuedouble > n &&
	    cJSON_IsNumber(offset) && n > 0) {
		if (buf_printf(out, "%d of %.0f %sauthors shown (%.0f-%.0f), "
		    "of them ", n, total->valuedouble, cJSON_IsString(
		    cJSON_GetObjectItem(v, "q")) ? "matching " : "followed ",
		    offset->valuedouble + 1, offset->valuedouble + n) == -1)
			return -1;
	} else if (buf_printf(out, "%d author%s: ", n, n == 1 ? "" : "s") == -1)
		return -1;
	if (buf_printf(out, "%d complete, %d draining, %d incomplete "
	    "(follows --relays: each relay)%s", complete, draining, incomplete,
	    nl) == -1)
		return -1;
	cJSON_ArrayForEach(a, list) {
		const cJSON	*r = cJSON_GetObjectItem(a, "relays_complete");
		const cJSON	*ev = cJSON_GetObjectItem(a, "events_stored");

		if (buf_printf(out, "%s  %-10s  relays %d/%d  events %.0f%s%s"
		    "%s%s%s", render_str(a, "npub"), render_str(a, "state"),
		    cJSON_IsNumber(r) ? r->valueint : 0,
		    cJSON_GetArraySize(cJSON_GetObjectItem(a, "relays")),
		    cJSON_IsNumber(ev) ? ev->valuedouble : 0,
		    cJSON_IsTrue(cJSON_GetObjectItem(a, "is_root")) ?
		    "  root" : "",
		    cJSON_IsTrue(cJSON_GetObjectItem(a, "stale")) ?
		    "  stale" : "", *render_str(a, "reason") ? "  " : "",
		    render_str(a, "reason"), nl) == -1)
			return -1;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItem(v, "truncated")))
		return buf_printf(out, "(relay rows cut short: see --json)%s",
		    nl);
	return 0;
}

unsigned
render_take_flags(int *argc, char **argv)
{
	static const struct {
		const char	*word;
		unsigned	 flag;
	} words[] = {
		{ "--json", RENDER_JSON },
		{ "--relays", RENDER_RELAYS },
	};
	unsigned	flags = 0;
	size_t		k;
	int		i, n = 0, taken;

	for (i = 0; i < *argc; i++) {
		for (taken = 0, k = 0; k < sizeof(words) / sizeof(words[0]);
		    k++)
			if (strcmp(argv[i], words[k].word) == 0) {
				flags |= words[k].flag;
				taken = 1;
			}
		if (!taken)
			argv[n++] = argv[i];
	}
	*argc = n;
	return flags;
}

const char *
render_flags_check(const char *name, const cJSON *args, unsigned *flags)
{
	bool	follows = strcmp(name, "follows") == 0;

	if ((*flags & RENDER_RELAYS) && !follows)
		return "--relays is an option of follows only";
	if (follows && cJSON_GetObjectItem(args, "author") != NULL)
		*flags |= RENDER_RELAYS;	/* one author: its relays */
	return NULL;
}

int
render_json(struct buf *out, const cJSON *v, const char *nl)
{
	char		*text, *p, *line;
	int		 rc = 0;

	if ((text = cJSON_Print(v)) == NULL)
		return -1;
	for (line = text; rc == 0 && line != NULL; line = p) {
		if ((p = strchr(line, '\n')) != NULL)
			*p++ = '\0';
		rc = buf_puts(out, line) == -1 || buf_puts(out, nl) == -1 ?
		    -1 : 0;
	}
	free(text);
	return rc;
}

int
render_answer(struct buf *out, const char *name, const cJSON *v,
    unsigned flags, const char *nl)
{
	if (flags & RENDER_JSON)
		return render_json(out, v, nl);
	if (strcmp(name, "help") == 0 &&
	    cJSON_IsArray(cJSON_GetObjectItem(v, "commands")))
		return render_help(out, v, nl);
	if (strcmp(name, "follows") == 0 && !(flags & RENDER_RELAYS) &&
	    cJSON_IsArray(cJSON_GetObjectItem(v, "follows")))
		return render_follows(out, v, nl);
	if (strcmp(name, "config list") == 0 &&
	    cJSON_IsArray(cJSON_GetObjectItem(v, "config")))
		return render_config_list(out, v, nl);
	if (strcmp(name, "relays list") == 0 &&
	    cJSON_IsArray(cJSON_GetObjectItem(v, "relays")))
		return render_relays_list(out, v, nl);
	if (strcmp(name, "status") == 0 &&
	    cJSON_IsObject(cJSON_GetObjectItem(v, "backfill")))
		return render_status(out, v, nl);
	if (strcmp(name, "jobs list") == 0 &&
	    cJSON_IsArray(cJSON_GetObjectItem(v, "jobs")))
		return render_jobs_list(out, v, nl);
	if (strcmp(name, "jobs show") == 0 &&
	    cJSON_IsObject(cJSON_GetObjectItem(v, "batch_counts")))
		return render_jobs_show(out, v, nl);
	if (strcmp(name, "recovery") == 0 &&
	    cJSON_IsArray(cJSON_GetObjectItem(v, "recovery")))
		return render_recovery(out, v, nl);
	return render_human(out, v, nl);
}
