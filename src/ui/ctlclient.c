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

#include "core/buf.h"
#include "core/limits.h"
#include "ui/commands.h"
#include "ui/ctlclient.h"
#include "ui/ctlsock.h"
#include "ui/render.h"

#define CTL_EXIT_FAIL	1
#define CTL_EXIT_USAGE	2

static int
print_reply(const char *name, const cJSON *reply, int json)
{
	const cJSON	*err = cJSON_GetObjectItemCaseSensitive(reply, "error");
	char		*text;

	if (json) {
		if ((text = cJSON_Print(reply)) == NULL)
			return CTL_EXIT_FAIL;
		printf("%s\n", text);
		free(text);
	} else if (commands_is_error(reply))
		fprintf(stderr, "cacheboxctl: %s\n", err->valuestring);
	else {
		struct buf	out;
		int		full;

		buf_init(&out, RENDER_MAX_BYTES);
		full = render_answer(&out, name, reply, "\n");
		fputs(buf_cstr(&out), stdout);
		buf_free(&out);
		if (full == -1) {
			fprintf(stderr, "cacheboxctl: answer too long to show; "
			    "use --json\n");
			return CTL_EXIT_FAIL;
		}
	}
	return commands_is_error(reply) ? CTL_EXIT_FAIL : 0;
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
	if ((c = commands_match(argc, argv, &used)) == NULL) {
		fprintf(stderr, "cacheboxctl: unknown command '%s' (try "
		    "'cacheboxctl help')\n", argc > 0 ? argv[0] : "");
		return CTL_EXIT_USAGE;
	}
	if ((args = commands_build_args(c, argc - used, argv + used, err,
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
	rc = print_reply(c->name, reply, json);
	cJSON_Delete(reply);
	return rc;
}
