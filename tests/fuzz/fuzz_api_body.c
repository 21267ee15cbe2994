/*
 * fuzz_api_body.c — what a web client reaches before any command runs:
 * a POST body (the first byte picks which command's parameters it is
 * checked against, the rest is the body, not NUL-terminated), the request
 * path, and the Authorization header. Whatever api_body_args accepts must
 * be an object of strings holding every required parameter and nothing
 * else; the metrics of any object that parses must fit their own bound.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "ui/api.h"
#include "ui/commands.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const struct command *
pick(uint8_t b)
{
	const struct command	*t = commands_table();
	size_t			 n = 0;

	while (t[n].name != NULL)
		n++;
	return &t[b % n];
}

/* Every member a string named by a parameter; every required one present. */
static void
check_args(const struct command *c, const cJSON *args)
{
	struct command_param	 p[COMMAND_MAX_PARAMS];
	const cJSON		*v;
	int			 n, i, found;

	n = commands_params(c, p, COMMAND_MAX_PARAMS);
	if (!cJSON_IsObject(args))
		abort();
	cJSON_ArrayForEach(v, args) {
		if (!cJSON_IsString(v) || v->string == NULL)
			abort();
		for (i = 0, found = 0; i < n; i++)
			found |= strcmp(p[i].name, v->string) == 0;
		if (!found)
			abort();
	}
	for (i = 0; i < n; i++)
		if (!p[i].optional && cJSON_GetObjectItem(args, p[i].name) == NULL)
			abort();
}

static void
fuzz_text(const uint8_t *data, size_t size)
{
	char	*s = malloc(size + 1);

	if (s == NULL)
		return;
	memcpy(s, data, size);
	s[size] = '\0';
	(void)api_command_for_path(s);
	(void)api_asset_for_path(s);
	(void)api_auth_check("fuzz-token-0123456789", s);
	free(s);
}

static void
fuzz_metrics(const uint8_t *data, size_t size)
{
	struct buf	 out;
	cJSON		*doc = cJSON_ParseWithLength((const char *)data, size);

	if (doc == NULL)
		return;
	buf_init(&out, 64 * 1024);
	if (api_metrics(doc, &out) == 0 && out.len > out.max)
		abort();
	buf_free(&out);
	cJSON_Delete(doc);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct command	*c;
	char			 err[512];
	cJSON			*args;

	if (size == 0)
		return 0;
	c = pick(data[0]);
	/* a copy of exactly size - 1 bytes, so a read past the end is caught */
	uint8_t *copy = malloc(size - 1 ? size - 1 : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data + 1, size - 1);
	args = api_body_args(c, (const char *)copy, size - 1, err, sizeof(err));
	if (args != NULL)
		check_args(c, args);
	else if (err[0] == '\0')
		abort();	/* a refusal always says why */
	cJSON_Delete(args);
	free(copy);
	fuzz_text(data + 1, size - 1);
	fuzz_metrics(data + 1, size - 1);
	return 0;
}
