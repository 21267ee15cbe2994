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
#include "ui/reply.h"

#define CTL_EXIT_FAIL	1
#define CTL_EXIT_USAGE	2

static int
print_reply(const char *name, const cJSON *reply, unsigned flags)
{
	const cJSON	*err = cJSON_GetObjectItemCaseSensitive(reply, "error");
	char		*text;

	if (flags & RENDER_JSON) {
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
		full = render_answer(&out, name, reply, flags, "\n");
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

/*
 * No command matches argv: a group's name alone lists the group (as the
 * console does), anything else is a usage error that names the command
 * meant when one is near (commands_near) and says where to look.
 */
static int
unknown_command(int argc, char **argv, unsigned flags)
{
	int	group = argc > 0 && commands_is_group(argv[0]);
	int	rc;
	char	msg[320];

	if (group && argc == 1) {
		cJSON *help = commands_help(argv[0]);

		rc = help != NULL ? print_reply("help", help, flags) :
		    CTL_EXIT_FAIL;
		cJSON_Delete(help);
		return rc;
	}
	fprintf(stderr, "cacheboxctl: %s (try 'cacheboxctl %.64s')\n",
	    commands_unknown(argc, argv, msg, sizeof(msg)), group ? argv[0] :
	    "help");
	return CTL_EXIT_USAGE;
}

int
ctlclient_run(const char *dir, int argc, char **argv, unsigned flags)
{
	const struct command	*c;
	const char		*why;
	cJSON			*args, *reply;
	char			 path[256], err[512];
	int			 used = 0, rc;

	flags |= render_take_flags(&argc, argv);
	if ((c = commands_match(argc, argv, &used)) == NULL)
		return unknown_command(argc, argv, flags);
	if ((args = commands_build_args(c, argc - used, argv + used, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "cacheboxctl: %s\n", err);
		return CTL_EXIT_USAGE;
	}
	if ((why = render_flags_check(c->name, args, &flags)) != NULL) {
		fprintf(stderr, "cacheboxctl: %s\n", why);
		cJSON_Delete(args);
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
	rc = print_reply(c->name, reply, flags);
	cJSON_Delete(reply);
	return rc;
}
