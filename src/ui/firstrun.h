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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/setup_code.h"

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
 * Where the first run shows and stores what it has, given by whoever
 * starts it (main.c), so it calls no surface itself. notice: show text at
 * the box's console (a no-op while none is open). page_port: the status
 * page's port, for the login screen. store_token: store admin.token for a
 * caller on the web, NULL when done or a new {"error": ...} it frees.
 */
struct firstrun_sinks {
	void		 (*notice)(void *arg, const char *text);
	unsigned	 (*page_port)(void *arg);
	cJSON		*(*store_token)(void *arg, const char *token);
	void		  *arg;
};

/*
 * Start the first run for app (after the status page is up): when no
 * admin token is set, make a code and show it. A token set in the -c
 * file or with --set, even an empty one, is the owner's choice: then
 * there is no setup. NULL only when out of memory.
 */
struct firstrun		*firstrun_start(struct app *,
			    const struct firstrun_sinks *);
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

/*
 * What the "setup" commands (cmd_box.c) read. firstrun_open: setup is
 * open (no token set, and one may be set at run time). firstrun_code_ready:
 * a valid code, made (and shown at the box) if none is. firstrun_code:
 * the valid code, its seconds left and the seconds wrong codes are not
 * compared; only after firstrun_code_ready said true.
 */
struct firstrun_code {
	char		text[SETUP_CODE_TEXT_MAX];
	uint64_t	left_s, locked_s;
};
bool			 firstrun_open(const struct firstrun *);
bool			 firstrun_code_ready(struct firstrun *);
void			 firstrun_code(const struct firstrun *,
			    struct firstrun_code *);

#endif
