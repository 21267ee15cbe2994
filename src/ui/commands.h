/*
 * commands.h — the one command table. The serial console, cacheboxctl (over
 * the control socket) and the web API all run commands through it, so a
 * command means the same on every surface. A command takes JSON arguments
 * and answers a JSON object; an error is {"error": "..."}.
 */
#ifndef CACHEBOX_UI_COMMANDS_H
#define CACHEBOX_UI_COMMANDS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

struct app;

struct command {
	const char	*name;		/* "status", "config get", ... */
	const char	*params;	/* argument names in positional order, space-separated */
	const char	*help;		/* one line */
	bool		 mutating;	/* needs the admin token on the web */
	cJSON		*(*run)(struct app *, const cJSON *args);
	bool		 console_only;	/* refused on the control socket and the web */
};

/* One parameter of a command, from its params string ("key [role]"). */
struct command_param {
	char	name[32];
	bool	optional;	/* written "[name]" */
};
#define COMMAND_MAX_PARAMS	8
#define COMMAND_MAX_WORDS	4	/* words in a command name */

/* The table, terminated by an entry with name == NULL. */
const struct command	*commands_table(void);
/* The command named name, or NULL. */
const struct command	*commands_find(const char *name);
/*
 * Run command name with args (may be NULL). Returns a new object the
 * caller owns: the command's answer or {"error": "..."}.
 */
cJSON			*commands_run(struct app *, const char *name,
			    const cJSON *args);
/* ctlsock_handler for the control socket; arg is the struct app. */
cJSON			*commands_ctl_handler(const char *cmd, const cJSON *args,
			    void *arg);
/*
 * The parameters of c in order, at most max, into out. Returns how many.
 */
int			 commands_params(const struct command *c,
			    struct command_param *out, int max);
/*
 * The command whose name is the longest run of leading words of argv
 * (e.g. "config", "set", "k", "v" gives "config set"); *used gets how
 * many words the name took. NULL if none matches.
 */
const struct command	*commands_match(int argc, char *const *argv,
			    int *used);
/*
 * Map words onto c's parameters in order: a new JSON object owned by the
 * caller, or NULL with a message in err (a missing or an extra word).
 */
cJSON			*commands_build_args(const struct command *c, int argc,
			    char *const *argv, char *err, size_t errlen);
/* A new {"error": msg} object. */
cJSON			*commands_error(const char *fmt, ...)
			    __attribute__((format(printf, 1, 2)));

#endif
