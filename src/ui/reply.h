/*
 * reply.h — what every command handler answers with besides its own
 * result (reply.c): a refusal ({"error": ...}) and the test for one, what
 * pins a configuration key, and storing a key at run time for a caller on
 * a surface. The names keep the commands_ prefix: they are part of the
 * command table's contract with its surfaces (commands.h).
 */
#ifndef CACHEBOX_UI_REPLY_H
#define CACHEBOX_UI_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "ui/commands.h"

struct app;

/*
 * What pins key, when its value comes from --set or the -c file: a phrase
 * ("--set on the command line", "the -c file PATH", the latter written
 * into buf), or NULL when a run-time change would take effect.
 */
const char		*commands_pinned_by(const struct app *, const char *key,
			    char *buf, size_t len);
/* NULL when key is not pinned, else a new {"error": ...} saying by what. */
cJSON			*commands_refuse_pinned(const struct app *,
			    const char *key);
/*
 * Set key to value at run time for a caller on surface from: refused for
 * a key pinned by --set or -c (commands_pinned_by), for a console-only
 * key from elsewhere, normalized (a token hashed), stored
 * with its origin, set in the running configuration and applied. NULL
 * when done, else a new {"error": ...} object the caller owns.
 */
cJSON			*commands_config_store(struct app *, const char *key,
			    const char *value, enum cmd_origin from);
/*
 * Whether reply is a refusal: an object whose only member is "error", a
 * string. Every surface decides with this (HTTP 400, cacheboxctl's exit
 * status, the console's "error:" line).
 */
bool			 commands_is_error(const cJSON *reply);
/* A new {"error": msg} object. */
cJSON			*commands_error(const char *fmt, ...)
			    __attribute__((format(printf, 1, 2)));

#endif
