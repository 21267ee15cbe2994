/*
 * render.c — turns a command's JSON answer into lines for a person.
 * Objects become "name: value" lines, nested ones indented two spaces a
 * level; an array of objects is numbered "[0]", "[1]", ...; an empty array
 * reads "(none)"; booleans read yes/no and null "-". It only formats: it
 * never decides what a command shows.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "ui/render.h"

static int	render_value(struct buf *, const cJSON *, int, const char *);

static int
render_scalar(struct buf *out, const cJSON *v)
{
	if (cJSON_IsString(v))
		return buf_puts(out, v->valuestring);
	if (cJSON_IsBool(v))
		return buf_puts(out, cJSON_IsTrue(v) ? "yes" : "no");
	if (cJSON_IsNumber(v)) {
		if (json_is_integer(v->valuedouble))
			return buf_printf(out, "%lld",
			    (long long)v->valuedouble);
		return buf_printf(out, "%g", v->valuedouble);
	}
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
	if (buf_putc(out, ' ') == -1 || render_scalar(out, item) == -1)
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
			    render_scalar(out, item) == -1 ||
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
		if (render_scalar(out, v) == -1)
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
 * parameters on an indented line of their own.
 */
static int
render_help(struct buf *out, const cJSON *v, const char *nl)
{
	const cJSON	*c;
	char		 usage[128];
	const char	*name, *params, *help;
	bool		 named;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(v, "commands")) {
		name = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
		params = cJSON_GetStringValue(cJSON_GetObjectItem(c, "params"));
		help = cJSON_GetStringValue(cJSON_GetObjectItem(c, "help"));
		if (name == NULL || params == NULL || help == NULL)
			continue;
		named = cJSON_IsTrue(cJSON_GetObjectItem(c, "named"));
		snprintf(usage, sizeof(usage), "%s%s%s", name,
		    *params ? " " : "", named ? "name=value..." : params);
		if (buf_printf(out, "  %-28s %s%s", usage, help, nl) == -1 ||
		    (named && buf_printf(out, "  %-28s names: %s%s", "",
		    params, nl) == -1))
			return -1;
	}
	return 0;
}

int
render_answer(struct buf *out, const char *name, const cJSON *v,
    const char *nl)
{
	if (strcmp(name, "help") == 0 &&
	    cJSON_IsArray(cJSON_GetObjectItem(v, "commands")))
		return render_help(out, v, nl);
	return render_human(out, v, nl);
}
