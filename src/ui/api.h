/*
 * api.h — what the web API means, apart from how HTTP carries it: which
 * path names which command, how a JSON body or a query string becomes a
 * command's arguments, how the bearer token is checked, and how the status
 * document reads as Prometheus text. http.c does the transport; everything
 * here is plain functions on strings and cJSON, so it can be unit-tested
 * and fuzzed without a socket.
 */
#ifndef CACHEBOX_UI_API_H
#define CACHEBOX_UI_API_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct buf;
struct command;
struct embed_file;

#define API_PREFIX	"/api/"

enum api_auth {
	API_AUTH_OK = 0,
	API_AUTH_NO_TOKEN,	/* no admin.token configured: nothing may mutate */
	API_AUTH_MISSING,	/* no "Authorization: Bearer ..." header */
	API_AUTH_WRONG,		/* a token, not the right one */
};

/*
 * The command a path names: "/api/config/set" is "config set". NULL for a
 * path outside /api/ or naming no command.
 */
const struct command	*api_command_for_path(const char *path);

/*
 * The embedded asset a path names ("/" is index.html), or NULL.
 */
const struct embed_file	*api_asset_for_path(const char *path);

/* The Content-Type for an asset name, by its extension. Static. */
const char		*api_content_type(const char *name);

/*
 * Check an argument object (from a body or a query string) against c's
 * parameters: every member must be a parameter, given once, a string, a
 * number or a boolean (numbers and booleans become their text), and every
 * required parameter must be there. Returns a new object of string values
 * owned by the caller, or NULL with a message in err.
 */
cJSON			*api_args_check(const struct command *c,
			    const cJSON *given, char *err, size_t errlen);

/*
 * Parse the POST body (len bytes, need not be NUL-terminated) for c: an
 * empty body means no arguments; otherwise one JSON object and nothing but
 * white space after it. Returns the checked arguments (see
 * api_args_check) owned by the caller, or NULL with a message in err.
 */
cJSON			*api_body_args(const struct command *c, const char *body,
			    size_t len, char *err, size_t errlen);

/*
 * Check an Authorization header value (NULL if absent) against the
 * configured token's stored hash (NULL or "" if none): the presented
 * token is hashed with the stored salt and the hashes are compared in the
 * same time wherever they differ (core/secret.h).
 */
enum api_auth		 api_auth_check(const char *stored, const char *header);

/*
 * Append the Prometheus text exposition of a status document to out. Each
 * number, boolean and state string is named, typed (counter or gauge) and
 * described by api.c's table of status fields; rows of an array (relays)
 * carry url/role labels, a state string is a series of 1 labelled with the
 * state. A field the table does not know comes out as a gauge whose HELP
 * says it is not described. 0, or -1 when out is full.
 */
int			 api_metrics(const cJSON *status, struct buf *out);

#endif
