/*
 * ctlclient.c — cacheboxctl's side of a daemon command: turn the words of
 * the command line into a command name and JSON arguments (by the command
 * table, so the names are the daemon's own), send them over the control
 * socket and print the answer, for people by default or as JSON.
 * It runs in cacheboxctl only and may block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/commands.h"
#include "ui/ctlclient.h"
#include "ui/ctlsock.h"

#define CTL_EXIT_FAIL	1
#define CTL_EXIT_USAGE	2

/*
 * The command whose name is the longest run of leading words; *used gets
 * how many words the name took. NULL if none matches.
 */
static const struct command *
match_command(int argc, char **argv, int *used)
{
	const struct command	*c, *best = NULL;
	char			 name[256] = "";
	int			 i;

	for (i = 0; i < argc && i < 4; i++) {
		if (i > 0 && strlen(name) + 1 < sizeof(name))
			strcat(name, " ");
		if (strlen(name) + strlen(argv[i]) >= sizeof(name))
			break;
		strcat(name, argv[i]);
		if ((c = commands_find(name)) != NULL) {
			best = c;
			*used = i + 1;
		}
	}
	return best;
}

/* Map the remaining words onto the command's parameter names, in order. */
static cJSON *
build_args(const struct command *c, int argc, char **argv, char *err,
    size_t errlen)
{
	cJSON		*args = cJSON_CreateObject();
	char		 params[256], *p, *save = NULL;
	int		 i = 0;

	snprintf(params, sizeof(params), "%s", c->params);
	for (p = strtok_r(params, " ", &save); p != NULL;
	    p = strtok_r(NULL, " ", &save)) {
		int optional = p[0] == '[';

		if (optional)
			p[strcspn(p + 1, "]") + 1] = '\0', p++;
		if (i < argc)
			cJSON_AddStringToObject(args, p, argv[i++]);
		else if (!optional) {
			snprintf(err, errlen, "%s: missing %s", c->name, p);
			cJSON_Delete(args);
			return NULL;
		}
	}
	if (i < argc) {
		snprintf(err, errlen, "%s: unexpected argument '%s'", c->name,
		    argv[i]);
		cJSON_Delete(args);
		return NULL;
	}
	return args;
}

static void	print_human(const cJSON *v, int depth);

static void
print_scalar(const cJSON *v)
{
	if (cJSON_IsString(v))
		printf("%s", v->valuestring);
	else if (cJSON_IsBool(v))
		printf("%s", cJSON_IsTrue(v) ? "yes" : "no");
	else if (cJSON_IsNull(v))
		printf("-");
	else if (cJSON_IsNumber(v))
		printf("%.0f", v->valuedouble);
}

static void
print_item(const cJSON *item, int depth)
{
	printf("%*s%s:", depth * 2, "", item->string ? item->string : "-");
	if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
		printf("\n");
		print_human(item, depth + 1);
	} else {
		printf(" ");
		print_scalar(item);
		printf("\n");
	}
}

/* An indented "name: value" rendering of an answer. */
static void
print_human(const cJSON *v, int depth)
{
	const cJSON	*item;
	int		 n = 0;

	if (cJSON_IsArray(v)) {
		cJSON_ArrayForEach(item, v) {
			if (cJSON_IsObject(item)) {
				printf("%*s[%d]\n", depth * 2, "", n);
				print_human(item, depth + 1);
			} else {
				printf("%*s", depth * 2, "");
				print_scalar(item);
				printf("\n");
			}
			n++;
		}
		if (n == 0)
			printf("%*s(none)\n", depth * 2, "");
		return;
	}
	cJSON_ArrayForEach(item, v)
		print_item(item, depth);
}

static int
print_reply(const cJSON *reply, int json)
{
	const cJSON	*err = cJSON_GetObjectItemCaseSensitive(reply, "error");
	char		*text;

	if (json) {
		if ((text = cJSON_Print(reply)) == NULL)
			return CTL_EXIT_FAIL;
		printf("%s\n", text);
		free(text);
	} else if (cJSON_IsString(err))
		fprintf(stderr, "cacheboxctl: %s\n", err->valuestring);
	else
		print_human(reply, 0);
	return cJSON_IsString(err) ? CTL_EXIT_FAIL : 0;
}

/* Remove every "--json" word from argv; 1 if there was one. */
static int
take_json_flag(int *argc, char **argv)
{
	int	i, n = 0, found = 0;

	for (i = 0; i < *argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			found = 1;
		else
			argv[n++] = argv[i];
	}
	*argc = n;
	return found;
}

int
ctlclient_run(const char *dir, int argc, char **argv)
{
	const struct command	*c;
	cJSON			*args, *reply;
	char			 path[256], err[512];
	int			 used = 0, rc, json;

	json = take_json_flag(&argc, argv);
	if ((c = match_command(argc, argv, &used)) == NULL) {
		fprintf(stderr, "cacheboxctl: unknown command '%s' (try "
		    "'cacheboxctl help')\n", argc > 0 ? argv[0] : "");
		return CTL_EXIT_USAGE;
	}
	if ((args = build_args(c, argc - used, argv + used, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "cacheboxctl: %s\n", err);
		return CTL_EXIT_USAGE;
	}
	if (ctlsock_path(dir, path, sizeof(path)) == -1) {
		fprintf(stderr, "cacheboxctl: state directory path too long\n");
		cJSON_Delete(args);
		return CTL_EXIT_USAGE;
	}
	reply = ctlsock_call(path, c->name, args, err, sizeof(err));
	cJSON_Delete(args);
	if (reply == NULL) {
		fprintf(stderr, "cacheboxctl: %s\n", err);
		return CTL_EXIT_FAIL;
	}
	rc = print_reply(reply, json);
	cJSON_Delete(reply);
	return rc;
}
