/*
 * firstrun.h — the first run: while no admin token is set, a one-time
 * setup code (core/setup_code.h) proves that whoever types it on the
 * status page is at the box, and lets them choose the admin token there.
 *
 * The code is shown only at the box: on the serial console, in the log
 * (the journal on a board) and in DIR/setup-code.issue, a file for the
 * login screen (0600, so root and the daemon's user alone read it; the
 * board's getty shows it through an /etc/issue.d link). Never over the
 * web, never in the status. It expires after SETUP_CODE_TTL_MS and after
 * use; a new one is made when the page (GET /api/setup) or the console
 * (setup code) asks while none is valid. Once a token is set, setup is
 * over and POST /api/setup refuses.
 *
 *	GET  /api/setup		{"needed", "expires_in_s", "locked_s"} (command "setup")
 *	POST /api/setup		{"code": ..., "token": ...}, no bearer token (http.c)
 */
#ifndef CACHEBOX_UI_FIRSTRUN_H
#define CACHEBOX_UI_FIRSTRUN_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "ui/commands.h"

struct app;
struct firstrun;

#define FIRSTRUN_API_PATH	"/api/setup"
#define FIRSTRUN_ISSUE_FILE	"setup-code.issue"

enum firstrun_result {
	FIRSTRUN_DONE = 0,	/* the admin token is set */
	FIRSTRUN_CLOSED,	/* a token was set already: setup is over */
	FIRSTRUN_BAD_TOKEN,	/* the new token breaks the token rule */
	FIRSTRUN_WRONG,		/* not the code (counted) */
	FIRSTRUN_NO_CODE,	/* none valid; a new one is shown at the box */
	FIRSTRUN_LOCKED,	/* too many wrong codes lately, from anyone */
	FIRSTRUN_FAILED,	/* the token could not be stored */
};

/*
 * Start the first run for app (after the status page and the console are
 * up): when no admin token is set, make a code and show it. A token set
 * in the -c file or with --set, even an empty one, is the owner's choice:
 * then there is no setup. NULL only when out of memory.
 */
struct firstrun		*firstrun_start(struct app *);
/* Stop; a code still valid dies here (its file is emptied). NULL is fine. */
void			 firstrun_free(struct firstrun *);
/*
 * admin.token may have changed (stored at run time, or a reload): a token
 * now set voids the code; none set any more makes one. NULL is fine.
 */
void			 firstrun_token_changed(struct firstrun *);
/*
 * Set the admin token to token when code is the valid setup code, for a
 * caller on the web. Returns what happened, with a message for a person
 * in msg (never the code or the token) and, for FIRSTRUN_LOCKED, the
 * seconds to wait in *wait_s. fr NULL answers FIRSTRUN_CLOSED.
 */
enum firstrun_result	 firstrun_redeem(struct firstrun *, const char *code,
			    const char *token, char *msg, size_t msglen,
			    unsigned *wait_s);

/*
 * The lines ("\n"-ended) the console shows about the setup code while one
 * is valid, for its greeting, into out. Their length, or 0 (out "") when
 * there is no code or fr is NULL.
 */
size_t			 firstrun_console_text(const struct firstrun *,
			    char *out, size_t outlen);

/* Commands (commands.c's table): "setup" and the console's "setup code". */
cJSON	*cmd_setup(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_setup_code(struct app *, const cJSON *args, enum cmd_origin);

#endif
