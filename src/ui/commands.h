/*
 * commands.h — the one command table. The serial console, cacheboxctl (over
 * the control socket) and the web API all run commands through it, so a
 * command means the same on every surface. A command takes JSON arguments
 * and answers a JSON object; a refusal is {"error": "..."} and nothing
 * else (an answer may carry an "error" member of its own beside others,
 * such as a job's last error: commands_is_error tells them apart).
 */
#ifndef CACHEBOX_UI_COMMANDS_H
#define CACHEBOX_UI_COMMANDS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "core/limits.h"

struct app;

/*
 * Which surface a command came from. Trust, from the top
 * (ARCHITECTURE.md §9):
 * the console (physical access), then the control socket (a local user
 * allowed into the state directory) and the web with the admin token.
 */
enum cmd_origin {
	CMD_FROM_CONSOLE,
	CMD_FROM_CTL,
	CMD_FROM_WEB,
};

/* What a command needs, in command.flags. */
enum cmd_flag {
	CMD_MUTATING = 1 << 0,		/* changes something: POST + token on the web */
	CMD_CONSOLE_ONLY = 1 << 1,	/* refused on the control socket and the web */
	CMD_POST = 1 << 2,		/* changes nothing, but is POST + token on
					 * the web: its arguments may not fit a
					 * query string, or it costs the store
					 * work a stranger should not cause */
	CMD_NAMED = 1 << 3,		/* console and cacheboxctl take only
					 * name=value words (too many optional
					 * parameters for positions: a mistyped
					 * name must not become a value) */
	CMD_NOT_WEB = 1 << 4,		/* names a file the daemon writes: refused on the web */
};

struct command {
	const char	*name;		/* "status", "config get", ... */
	const char	*params;	/* argument names in positional order, space-separated */
	const char	*help;		/* one line */
	unsigned	 flags;		/* enum cmd_flag */
	cJSON		*(*run)(struct app *, const cJSON *args, enum cmd_origin);
};

/* One parameter of a command, from its params string ("key [role]"). */
struct command_param {
	char	name[COMMAND_MAX_PARAM_NAME + 1];
	bool	optional;	/* written "[name]" */
};

/* The table, terminated by an entry with name == NULL. */
const struct command	*commands_table(void);
/* The command named name, or NULL. */
const struct command	*commands_find(const char *name);
/*
 * Run command name with args (may be NULL) for a caller on surface from.
 * A console-only command from elsewhere is refused here, whatever the
 * surface checked before. Returns a new object the caller owns: the
 * command's answer or {"error": "..."}.
 */
cJSON			*commands_run(struct app *, const char *name,
			    const cJSON *args, enum cmd_origin from);
/*
 * The help answer: every command (group NULL), or those whose first word
 * is group, each with its name, params, help and flags. A new object the
 * caller owns.
 */
cJSON			*commands_help(const char *group);
/* Whether word is the first word of commands of more than one word ("jobs"). */
bool			 commands_is_group(const char *word);
/* Whether the web takes c by POST with the admin token (mutating or CMD_POST). */
bool			 commands_takes_body(const struct command *c);
/* NULL if c may run for a caller on surface from, else why not (static). */
const char		*commands_refusal(const struct command *c,
			    enum cmd_origin from);
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
 * The command argv most likely meant when commands_match found none: the
 * one whose words are nearest argv's first words, within
 * COMMAND_NEAR_EDITS edits in all (one for a name of four letters or
 * fewer), the first in the table among equals; NULL when none is near
 * ("stauts" gives "status", "jobs lsit" "jobs list").
 */
const struct command	*commands_near(int argc, char *const *argv);
/*
 * "unknown command 'jobs lsit': did you mean 'jobs list'?" for argv that
 * matches no command: the words typed (as many as the command meant has,
 * else the group and the next word, else the first) and the command
 * meant when one is near. Written into buf and returned.
 */
const char		*commands_unknown(int argc, char *const *argv,
			    char *buf, size_t len);
/*
 * Map words onto c's parameters (the console's and cacheboxctl's form of
 * the arguments the web API takes as a JSON object): a word
 * "name=value" whose name is one of c's parameters binds that one; the
 * other words fill the parameters not named, in order. So `jobs new
 * preset=relay-lists batch_size=50` and `config set log.level debug`
 * both work; a CMD_NAMED command refuses a word that names none of its
 * parameters. A new JSON object owned by the caller, or NULL with a
 * message in err (a missing, repeated, unknown or extra argument).
 */
cJSON			*commands_build_args(const struct command *c, int argc,
			    char *const *argv, char *err, size_t errlen);

#endif
