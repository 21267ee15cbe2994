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
};

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
/* A new {"error": msg} object. */
cJSON			*commands_error(const char *fmt, ...)
			    __attribute__((format(printf, 1, 2)));

#endif
